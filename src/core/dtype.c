/* core/dtype.c - dtype tables and the promotion lattice. */
#include "internal.h"

#include <stdio.h>

static ct_dtype ct__dtype_default = CT_FLOAT32;

ct_device ct_device_cpu(void)
{
    ct_device d;
    d.type = CT_CPU;
    d.index = 0;
    return d;
}

ct_device ct_make_device(ct_device_type type, int index)
{
    ct_device d;
    d.type = type;
    d.index = type == CT_CPU || index < 0 ? 0 : index;
    return d;
}

const char *ct__device_str(ct_device d, char *buf, size_t n)
{
    static const char *const names[CT_DEVICE_TYPE_COUNT] = {"cpu", "cuda", "privateuseone"};
    const char *name = (int)d.type >= 0 && d.type < CT_DEVICE_TYPE_COUNT ? names[d.type] : "?";
    if (d.type == CT_CPU) {
        snprintf(buf, n, "%s", name);
    } else {
        snprintf(buf, n, "%s:%d", name, d.index);
    }
    return buf;
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
    if (!ct__check_dtype_arg("ct_promote_types", a) ||
        !ct__check_dtype_arg("ct_promote_types", b)) {
        return CT_DTYPE_DEFAULT;
    }
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
    if (!ct__check_dtype_arg("ct_can_cast", from) || !ct__check_dtype_arg("ct_can_cast", to)) {
        return false;
    }
    from = ct__dtype_resolve(from);
    to = ct__dtype_resolve(to);
    return ct__dtype_category(from) <= ct__dtype_category(to);
}

ct_status ct_set_default_dtype(ct_dtype d)
{
    if (!ct__check_dtype_arg("ct_set_default_dtype", d)) {
        return CT_ERR_VALUE;
    }
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

bool ct__check_enum(const char *op, const char *what, int value, int count)
{
    if (value >= 0 && value < count) {
        return true;
    }
    ct__fail(CT_ERR_VALUE, op, "%d is not a valid value for %s", value, what);
    return false;
}

bool ct__check_dtype_arg(const char *op, ct_dtype d)
{
    return ct__check_enum(op, "dtype", (int)d, CT_DTYPE_COUNT);
}

bool ct__scalar_fits(double v, ct_dtype d)
{
    /* [lowest, max + 1) of each integer type; max + 1 is a power of two, exact in double */
    static const double lo[CT_DTYPE_COUNT] = {0, 0, 0, -128.0, -32768.0, -2147483648.0,
                                              -9223372036854775808.0, 0, 0};
    static const double hi[CT_DTYPE_COUNT] = {0, 0, 256.0, 128.0, 32768.0, 2147483648.0,
                                              9223372036854775808.0, 0, 0};
    d = ct__dtype_resolve(d);
    switch (d) {
    case CT_BOOL:
    case CT_FLOAT64: return true;
    case CT_FLOAT32: return !(fabs(v) > 3.4028234663852886e38) || isinf(v);
    case CT_UINT8:
    case CT_INT8:
    case CT_INT16:
    case CT_INT32:
    case CT_INT64: return v >= lo[d] && v < hi[d];
    default: return false;
    }
}

bool ct__check_scalar(const char *op, double v, ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "", "bool", "uint8_t", "int8_t", "int16_t", "int", "int64_t", "float", "double",
    };
    if (ct__scalar_fits(v, d)) {
        return true;
    }
    d = ct__dtype_resolve(d);
    ct__fail(CT_ERR_VALUE, op, "value cannot be converted to type %s without overflow",
             ct__dtype_valid(d) ? names[d] : "invalid");
    return false;
}
