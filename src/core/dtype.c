/* core/dtype.c - dtype tables and the promotion lattice. */
#include "internal.h"

static ct_dtype ct__dtype_default = CT_FLOAT32;

ct_device ct_device_cpu(void)
{
    ct_device d;
    d.type = CT_CPU;
    d.index = 0;
    return d;
}

bool ct__dtype_valid(ct_dtype d) { return d > CT_DTYPE_DEFAULT && d < CT_DTYPE_COUNT; }

const char *ct_dtype_name(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "default", "bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64",
    };
    return (d >= 0 && d < CT_DTYPE_COUNT) ? names[d] : "invalid";
}

size_t ct_dtype_size(ct_dtype d)
{
    static const size_t sizes[CT_DTYPE_COUNT] = {0, 1, 1, 1, 2, 4, 8, 4, 8};
    return ct__dtype_valid(d) ? sizes[d] : 0;
}

bool ct_dtype_is_floating_point(ct_dtype d) { return d == CT_FLOAT32 || d == CT_FLOAT64; }

bool ct_dtype_is_signed(ct_dtype d) { return ct__dtype_valid(d) && d != CT_BOOL && d != CT_UINT8; }

/* 0 bool, 1 integral, 2 floating */
int ct__dtype_category(ct_dtype d)
{
    return d == CT_BOOL ? 0 : ct_dtype_is_floating_point(d) ? 2 : 1;
}

ct_dtype ct_promote_types(ct_dtype a, ct_dtype b)
{
    a = ct__dtype_resolve(a);
    b = ct__dtype_resolve(b);
    if (a == b) {
        return a;
    }
    if (a == CT_BOOL) {
        return b;
    }
    if (b == CT_BOOL) {
        return a;
    }
    int ca = ct__dtype_category(a), cb = ct__dtype_category(b);
    if (ca != cb) {
        return ca > cb ? a : b;
    }
    if ((a == CT_UINT8 && b == CT_INT8) || (a == CT_INT8 && b == CT_UINT8)) {
        return CT_INT16;
    }
    return a > b ? a : b; /* enum order is size order within a category */
}

bool ct_can_cast(ct_dtype from, ct_dtype to)
{
    from = ct__dtype_resolve(from);
    to = ct__dtype_resolve(to);
    return ct__dtype_category(from) <= ct__dtype_category(to);
}

ct_status ct_set_default_dtype(ct_dtype d)
{
    if (!ct_dtype_is_floating_point(d)) {
        return ct__fail(CT_ERR_DTYPE, "ct_set_default_dtype",
                        "only floating-point types are supported as the default type, got %s",
                        ct_dtype_name(d));
    }
    ct__dtype_default = d;
    return CT_OK;
}

ct_dtype ct_get_default_dtype(void) { return ct__dtype_default; }

ct_dtype ct__dtype_resolve(ct_dtype d) { return d == CT_DTYPE_DEFAULT ? ct__dtype_default : d; }

const char *ct__dtype_title(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "Undefined", "Bool", "Byte", "Char", "Short", "Int", "Long", "Float", "Double",
    };
    return ct__dtype_valid(d) ? names[d] : "Undefined";
}
