/* autograd/gradcheck.c - finite-difference checking of derivative formulas. */
#include "../core/internal.h"
#include "autograd.h"
#include "gradcheck.h"

CT__GLUE_BEGIN

ct_gradcheck_opts ct_gradcheck_defaults(void)
{
    ct_gradcheck_opts o;
    o.eps = 1e-6;
    o.atol = 1e-5;
    o.rtol = 1e-3;
    return o;
}

/* Address of the j-th element (row-major order) of t. */
static char *ct__nth_ptr(const ct_tensor *t, int64_t j)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        off += (j % t->sizes[d]) * t->strides[d];
        j /= t->sizes[d];
    }
    return ct__data(t) + (size_t)off * ct_dtype_size(t->dtype);
}

/* f(inputs) flattened into out[m] (float64); false on error. */
static bool ct__gc_eval(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                        double *out, int64_t m)
{
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *y = fn(inputs, n, user);
    bool ok = y && ct_numel(y) == m;
    for (int64_t k = 0; ok && k < m; k++) {
        out[k] = ct__load_f64(ct__nth_ptr(y, k), y->dtype);
    }
    ct_no_grad_end();
    ct_scope_end();
    return ok;
}

/* Analytical row k of the Jacobian of input i: d y[k] / d x_i, into row[numel(x_i)]. */
static bool ct__gc_row(ct_tensor *y, ct_tensor *x, int64_t k, double *row)
{
    ct_scope_begin();
    ct_tensor *go = ct_zeros(y->sizes, y->ndim, y->dtype);
    bool ok = go != NULL;
    if (ok) {
        ct__store_f64(ct__nth_ptr(go, k), go->dtype, 1.0);
    }
    const ct_tensor *gos[1] = {go};
    ct_tensor *g = NULL;
    ok = ok && ct_autograd_grad(&y, 1, &x, 1, gos, true, false, true, &g) == CT_OK;
    int64_t nx = ct_numel(x);
    for (int64_t j = 0; ok && j < nx; j++) {
        row[j] = g ? ct__load_f64(ct__nth_ptr(g, j), g->dtype) : 0.0;
    }
    ct_scope_end();
    return ok;
}

static bool ct__gc_input(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                         int i, ct_tensor *y, const ct_gradcheck_opts *o)
{
    ct_tensor *x = inputs[i];
    int64_t m = ct_numel(y), nx = ct_numel(x);
    double *ana = (double *)ct__malloc(sizeof(double) * (size_t)(m * nx + 2 * m + 1));
    if (!ana) {
        ct__fail(CT_ERR_OOM, "ct_gradcheck", "out of memory");
        return false;
    }
    double *fp = ana + m * nx, *fm = fp + m;
    bool ok = true;
    for (int64_t k = 0; ok && k < m; k++) {
        ok = ct__gc_row(y, x, k, ana + k * nx);
    }
    for (int64_t j = 0; ok && j < nx; j++) {
        char *p = ct__nth_ptr(x, j);
        double v = ct__load_f64(p, x->dtype);
        ct__store_f64(p, x->dtype, v + o->eps);
        ok = ct__gc_eval(fn, inputs, n, user, fp, m);
        ct__store_f64(p, x->dtype, v - o->eps);
        ok = ok && ct__gc_eval(fn, inputs, n, user, fm, m);
        ct__store_f64(p, x->dtype, v);
        for (int64_t k = 0; ok && k < m; k++) {
            double num = (fp[k] - fm[k]) / (2 * o->eps), a = ana[k * nx + j];
            if (!(fabs(a - num) <= o->atol + o->rtol * fabs(num))) {
                ct__fail(CT_ERR_AUTOGRAD, "ct_gradcheck", "Jacobian mismatch for output 0 with "
                         "respect to input %d, numerical:%.10g analytical:%.10g at (output %lld, "
                         "input %lld)", i, num, a, (long long)k, (long long)j);
                ok = false;
            }
        }
    }
    ct__free(ana);
    return ok;
}

bool ct_gradcheck(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                  const ct_gradcheck_opts *opts)
{
    const char *op = "ct_gradcheck";
    if ((!fn && ct__null(op, NULL)) || ct__null(op, inputs)) {
        return false;
    }
    ct_gradcheck_opts o = opts ? *opts : ct_gradcheck_defaults();
    for (int i = 0; i < n; i++) {
        if (ct__null(op, inputs[i])) {
            return false;
        }
    }
    ct_scope_begin();
    ct_tensor *y = fn(inputs, n, user);
    bool ok = y != NULL && !ct_error();
    if (ok && !ct_requires_grad(y)) {
        ct__fail(CT_ERR_AUTOGRAD, op, "the output does not require grad: no input requires grad "
                 "or the function is not differentiable");
        ok = false;
    }
    for (int i = 0; ok && i < n; i++) {
        if (ct_requires_grad(inputs[i])) {
            ok = ct__gc_input(fn, inputs, n, user, i, y, &o);
        }
    }
    ct_scope_end();
    return ok;
}
CT__GLUE_END
