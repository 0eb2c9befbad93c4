/* ops/registry.c - the table of every op descriptor (ct_op_registry). An op is added to the
 * list of its part below; the registry test checks that each one is reached by its public
 * function (tests/test_dispatch.c). */
#include "../core/internal.h"

static const ct_op *const ct__registry[] = {
    /* ops/pointwise.c */
    NULL,
};

const ct_op *const *ct_op_registry(int *n)
{
    if (n) {
        *n = (int)(sizeof ct__registry / sizeof ct__registry[0]) - 1;
    }
    return ct__registry;
}

/* Whether s is name, or name followed by "." and the schema's overload name. */
static bool ct__op_matches(const ct_op *op, const char *s)
{
    size_t n = strlen(op->name);
    if (strncmp(op->name, s, n) != 0) {
        return false;
    }
    if (s[n] == '\0') {
        return true;
    }
    const char *dot = strchr(op->schema, '.'), *paren = strchr(op->schema, '(');
    if (s[n] != '.' || !dot || !paren || dot > paren) {
        return false;
    }
    size_t m = (size_t)(paren - dot - 1);
    return strncmp(s + n + 1, dot + 1, m) == 0 && s[n + 1 + m] == '\0';
}

const ct_op *ct_op_find(const char *name)
{
    if (ct__null("ct_op_find", (const void *)name)) {
        return NULL;
    }
    int n = 0;
    const ct_op *const *ops = ct_op_registry(&n);
    for (int k = 0; k < n; k++) {
        if (ct__op_matches(ops[k], name)) {
            return ops[k];
        }
    }
    return NULL;
}
