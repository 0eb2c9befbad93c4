/* nn/clip_grad.c - torch.nn.utils' clip_grad_norm_, clip_grad_value_, get_total_norm,
 * clip_grads_with_norm_, parameters_to_vector and vector_to_parameters, as compositions of
 * the dispatched ops in torch.nn.utils' own order (PyTorch's CPU path: one
 * linalg.vector_norm per tensor, then the norm of their stack; grads scaled by mul_ with a
 * 0-dim coefficient), so the results match PyTorch's and the profiler shows the same ops.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../autograd/autograd.h"
#include "../ops/pointwise.h"
#include "../ops/reduce.h"
#include "../ops/view.h"
#include "../optim/optim.h"
#include "../optim/optim_internal.h"
#include "clip_grad.h"

CT__GLUE_BEGIN

/* Checks an array of n tensors: n >= 0, the array non-NULL when n > 0, no NULL element. */
static bool ct__clip_check(const char *op, const ct_tensor *const *ts, int64_t n)
{
    if (n < 0 || n > INT32_MAX) {
        ct__fail(CT_ERR_VALUE, op, "expected 0 <= n <= %d tensors, got %lld", INT32_MAX,
                 (long long)n);
        return false;
    }
    if (n > 0 && ct__null(op, (const void *)ts)) {
        return false;
    }
    for (int64_t i = 0; i < n; i++) {
        if (ct__null(op, ts[i])) {
            return false;
        }
    }
    return true;
}

/* The total norm of the n tensors (see ct_get_total_norm), owned by the current scope. */
static ct_tensor *ct__clip_total_norm(const char *op, const ct_tensor *const *ts, int64_t n,
                                      double norm_type, bool error_if_nonfinite)
{
    if (n == 0) {
        return ct_scalar_tensor(0.0, CT_FLOAT32);
    }
    const ct_tensor **norms = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!norms) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_scope_begin();
    for (int64_t i = 0; i < n; i++) {
        norms[i] = ct_linalg_vector_norm(ts[i], norm_type, NULL, 0, false);
    }
    ct_tensor *total = ct_keep(ct_linalg_vector_norm(ct_stack(norms, (int)n, 0), norm_type,
                                                     NULL, 0, false));
    ct_scope_end();
    ct__free((void *)norms);
    if (total && error_if_nonfinite && !isfinite(ct_item(total))) {
        char num[64];
        ct__fail(CT_ERR_VALUE, op, "The total norm of order %s for gradients from "
                 "`parameters` is non-finite, so it cannot be clipped. To disable this error "
                 "and scale the gradients by the non-finite norm anyway, set "
                 "`error_if_nonfinite=False`", ct__optim_repr(norm_type, num, sizeof num));
        return NULL;
    }
    return total;
}

ct_tensor *ct_get_total_norm(const ct_tensor *const *tensors, int64_t n, double norm_type,
                             bool error_if_nonfinite)
{
    const char *op = "ct_get_total_norm";
    if (!ct__clip_check(op, tensors, n)) {
        return NULL;
    }
    return ct__clip_total_norm(op, tensors, n, norm_type, error_if_nonfinite);
}

/* grads[k] = the .grad of each parameter that has one; returns k, or -1 after an error
   (*grads is then NULL; free it with ct__free). */
static int64_t ct__clip_grads(const char *op, ct_tensor *const *params, int64_t n,
                              ct_tensor ***grads)
{
    *grads = NULL;
    if (!ct__clip_check(op, (const ct_tensor *const *)params, n)) {
        return -1;
    }
    *grads = (ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)(n > 0 ? n : 1));
    if (!*grads) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return -1;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        ct_tensor *g = ct_grad(params[i]);
        if (g) {
            (*grads)[k++] = g;
        }
    }
    return k;
}

/* Multiplies each of the k grads in place by clamp(max_norm / (total + 1e-6), max=1.0). */
static ct_status ct__clip_scale(ct_tensor *const *grads, int64_t k, double max_norm,
                               const ct_tensor *total)
{
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *coef = ct_clamp(ct_mul_scalar(ct_reciprocal(ct_add_scalar(total, 1e-6)),
                                             max_norm), -INFINITY, 1.0);
    for (int64_t i = 0; coef && i < k; i++) {
        ct_mul_(grads[i], coef);
    }
    ct_no_grad_end();
    ct_scope_end();
    return ct_error_code();
}

ct_status ct_clip_grads_with_norm_(ct_tensor *const *params, int64_t n, double max_norm,
                                   const ct_tensor *total_norm)
{
    const char *op = "ct_clip_grads_with_norm_";
    if (ct__null(op, total_norm)) {
        return ct_error_code();
    }
    ct_tensor **grads = NULL;
    int64_t k = ct__clip_grads(op, params, n, &grads);
    ct_status st = k > 0 ? ct__clip_scale(grads, k, max_norm, total_norm) : ct_error_code();
    ct__free(grads);
    return st;
}

ct_tensor *ct_clip_grad_norm_(ct_tensor *const *params, int64_t n, double max_norm,
                              double norm_type, bool error_if_nonfinite)
{
    const char *op = "ct_clip_grad_norm_";
    ct_tensor **grads = NULL;
    int64_t k = ct__clip_grads(op, params, n, &grads);
    ct_tensor *total = NULL;
    if (k >= 0) {
        total = ct__clip_total_norm(op, (const ct_tensor *const *)grads, k, norm_type,
                                    error_if_nonfinite);
    }
    if (total && k > 0 && ct__clip_scale(grads, k, max_norm, total) != CT_OK) {
        total = NULL;
    }
    ct__free(grads);
    return total;
}

ct_status ct_clip_grad_value_(ct_tensor *const *params, int64_t n, double clip_value)
{
    const char *op = "ct_clip_grad_value_";
    ct_tensor **grads = NULL;
    int64_t k = ct__clip_grads(op, params, n, &grads);
    ct_no_grad_begin();
    for (int64_t i = 0; i < k; i++) {
        ct_clamp_(grads[i], -clip_value, clip_value);
    }
    ct_no_grad_end();
    ct__free(grads);
    return ct_error_code();
}

ct_tensor *ct_parameters_to_vector(ct_tensor *const *params, int64_t n)
{
    const char *op = "ct_parameters_to_vector";
    if (!ct__clip_check(op, (const ct_tensor *const *)params, n)) {
        return NULL;
    }
    const ct_tensor **flat = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) *
                                                            (size_t)(n > 0 ? n : 1));
    if (!flat) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_scope_begin();
    for (int64_t i = 0; i < n; i++) {
        flat[i] = ct_flatten(params[i], 0, -1);
    }
    ct_tensor *r = ct_keep(ct_cat(flat, (int)n, 0));
    ct_scope_end();
    ct__free((void *)flat);
    return r;
}

ct_status ct_vector_to_parameters(const ct_tensor *vec, ct_tensor *const *params, int64_t n)
{
    const char *op = "ct_vector_to_parameters";
    if (ct__null(op, vec) || !ct__clip_check(op, (const ct_tensor *const *)params, n)) {
        return ct_error_code();
    }
    int64_t need = 0;
    for (int64_t i = 0; i < n; i++) {
        need += ct_numel(params[i]);
    }
    if (vec->ndim != 1) {
        return ct__fail(CT_ERR_SHAPE, op, "vector_to_parameters: expected a 1-D vec, got %d "
                        "dims", vec->ndim);
    }
    if (ct_numel(vec) < need) {
        return ct__fail(CT_ERR_SHAPE, op, "vector_to_parameters: vec has %lld elements, the "
                        "parameters need %lld", (long long)ct_numel(vec), (long long)need);
    }
    ct_scope_begin();
    ct_no_grad_begin();
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        ct_tensor *p = params[i];
        int64_t m = ct_numel(p);
        ct_copy_(p, ct_reshape(ct_narrow(vec, 0, off, m), p->sizes, p->ndim));
        off += m;
    }
    ct_no_grad_end();
    ct_scope_end();
    return ct_error_code();
}
CT__GLUE_END
