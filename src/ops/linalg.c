/* ops/linalg.c - mm, bmm, addmm, matmul, mv, dot, linear and their derivatives.
 *
 * Legend: A (M, K) @ B (K, N) = C (M, N); batch b. Operands are passed to the GEMM with their
 * strides, so transposed views cost no copy (packing reads them directly).
 */
#include "../core/internal.h"
#include "linalg.h"
#include "pointwise.h"
#include "reduce.h"
#include "view.h"
#include "../autograd/autograd.h"

#ifdef CTORCH_OPENBLAS
#include <cblas.h>
#endif

#ifdef CTORCH_OPENBLAS
/* The leading dimension of a 2-D operand for cblas (transposed when its rows are not unit
   stride); false when neither dim has unit stride. */
static bool ct__blas_ld(const ct_tensor *t, bool trans, int64_t *ld)
{
    int64_t rows = trans ? t->sizes[1] : t->sizes[0], cols = trans ? t->sizes[0] : t->sizes[1];
    int64_t unit = trans ? t->strides[0] : t->strides[1];
    int64_t lead = trans ? t->strides[1] : t->strides[0];
    if (unit != 1 && cols > 1) {
        return false;
    }
    *ld = (rows <= 1 || lead < cols) ? (cols > 1 ? cols : 1) : lead;
    return lead >= cols || rows <= 1;
}
#endif

/* C (M, N) = alpha * A @ B + beta * C for 2-D strided views of one float dtype. */
static void ct__gemm(const ct_tensor *a, const ct_tensor *b, ct_tensor *c, double alpha,
                     double beta)
{
    int64_t M = c->sizes[0], N = c->sizes[1], K = a->sizes[1];
#ifdef CTORCH_OPENBLAS
    /* cblas (row-major) needs a unit stride in one dim of each operand */
    int64_t lda, ldb;
    bool ta = a->strides[1] != 1, tb = b->strides[1] != 1;
    bool ok = c->strides[1] == 1 && c->strides[0] >= N && M > 0 && N > 0 &&
              ct__blas_ld(a, ta, &lda) && ct__blas_ld(b, tb, &ldb);
    if (ok) {
        CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans, ob = tb ? CblasTrans : CblasNoTrans;
        if (c->dtype == CT_FLOAT32) {
            cblas_sgemm(CblasRowMajor, oa, ob, (int)M, (int)N, (int)K, (float)alpha,
                        (const float *)ct__data(a), (int)lda, (const float *)ct__data(b), (int)ldb,
                        (float)beta, (float *)ct__data(c), (int)c->strides[0]);
        } else {
            cblas_dgemm(CblasRowMajor, oa, ob, (int)M, (int)N, (int)K, alpha,
                        (const double *)ct__data(a), (int)lda, (const double *)ct__data(b),
                        (int)ldb, beta, (double *)ct__data(c), (int)c->strides[0]);
        }
        return;
    }
#endif
    if (c->dtype == CT_FLOAT32) {
        ct__gemm_f32(M, N, K, (float)alpha, (const float *)ct__data(a), a->strides[0],
                     a->strides[1], (const float *)ct__data(b), b->strides[0], b->strides[1],
                     (float)beta, (float *)ct__data(c), c->strides[0], c->strides[1]);
    } else {
        ct__gemm_f64(M, N, K, alpha, (const double *)ct__data(a), a->strides[0], a->strides[1],
                     (const double *)ct__data(b), b->strides[0], b->strides[1], beta,
                     (double *)ct__data(c), c->strides[0], c->strides[1]);
    }
}

static const char *ct__blas_dtype_name(ct_dtype d)
{
    return d == CT_FLOAT32 ? "float" : d == CT_FLOAT64 ? "double" : ct_dtype_name(d);
}

static bool ct__check_mat(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (ct__null(op, a) || ct__null(op, b) || !ct__check_cpu(op, a) || !ct__check_cpu(op, b)) {
        return false;
    }
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, op, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                 ct__blas_dtype_name(a->dtype), ct__blas_dtype_name(b->dtype));
        return false;
    }
    if (!ct_dtype_is_floating_point(a->dtype)) {
        ct__fail(CT_ERR_DTYPE, op, "\"addmm_impl_cpu_\" not implemented for '%s'",
                 ct_dtype_name(a->dtype));
        return false;
    }
    return true;
}

/* A 2-D view of t[b] for a 3-D t (unscoped, no autograd). */
static ct_tensor *ct__mat_at(const ct_tensor *t, int64_t b)
{
    return ct__tensor_over(t->storage, t->dtype, t->sizes + 1, t->strides + 1, 2,
                           t->offset + b * t->strides[0]);
}

/* ---- mm ------------------------------------------------------------------------------ */
static void ct__mm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) { /* dA = g @ B^T */
        gi[0] = ct_mm(g, ct_t(b));
    }
    if (ct__needs_grad(n, 1)) { /* dB = A^T @ g */
        gi[1] = ct_mm(ct_t(a), g);
    }
}

/* mm forward into a new unscoped tensor (no autograd). */
static ct_tensor *ct__mm_raw(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    int64_t shape[2] = {a->sizes[0], b->sizes[1]};
    ct_tensor *c = ct__tensor_new(op, shape, 2, a->dtype);
    if (c) {
        ct__gemm(a, b, c, 1.0, 0.0);
    }
    return c;
}

static bool ct__check_mm_shapes(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (a->ndim != 2 || b->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, op, "%s must be a matrix", a->ndim != 2 ? "self" : "mat2");
        return false;
    }
    if (a->sizes[1] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return false;
    }
    return true;
}

ct_tensor *ct_mm(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_mm";
    if (!ct__check_mat(op, a, b) || !ct__check_mm_shapes(op, a, b)) {
        return NULL;
    }
    ct_tensor *c = ct__mm_raw(op, a, b);
    if (!c) {
        return NULL;
    }
    const ct_tensor *ins[2] = {a, b};
    ct_node *n = ct__node_new("MmBackward0", ct__mm_backward, ins, 2);
    if (n) {
        ct__save(n, ct__needs_grad(n, 1) ? a : NULL);
        ct__save(n, ct__needs_grad(n, 0) ? b : NULL);
    }
    c = ct__set_history(c, n);
    return ct__scoped(c);
}

/* ---- addmm and linear ----------------------------------------------------------------- */
static void ct__addmm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    double beta = n->f[0], alpha = n->f[1];
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) { /* the engine sums to input's shape */
        gi[0] = beta == 1.0 ? (ct_tensor *)(uintptr_t)g : ct_mul_scalar(g, beta);
    }
    if (ct__needs_grad(n, 1)) {
        ct_tensor *d = ct_mm(g, ct_t(b));
        gi[1] = alpha == 1.0 ? d : ct_mul_scalar(d, alpha);
    }
    if (ct__needs_grad(n, 2)) {
        ct_tensor *d = ct_mm(ct_t(a), g);
        gi[2] = alpha == 1.0 ? d : ct_mul_scalar(d, alpha);
    }
}

ct_tensor *ct_addmm(const ct_tensor *input, const ct_tensor *a, const ct_tensor *b, double beta,
                    double alpha)
{
    const char *op = "ct_addmm";
    if (!ct__check_mat(op, a, b) || !ct__check_mm_shapes(op, a, b) ||
        !ct__check_mat(op, input, a)) {
        return NULL;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]}, bs[CT_MAX_DIMS];
    int bn = 0;
    if (input->ndim > 2 ||
        !ct__broadcast_shapes(op, input->sizes, input->ndim, shape, 2, bs, &bn) ||
        bs[0] != shape[0] || bs[1] != shape[1]) {
        char x[160];
        ct__fail(CT_ERR_SHAPE, op,
                 "The expanded size of the tensor must match: input %s cannot "
                 "broadcast to [%lld, %lld]",
                 ct__shape_str(input->sizes, input->ndim, x, sizeof x), (long long)shape[0],
                 (long long)shape[1]);
        return NULL;
    }
    ct_tensor *c = ct__tensor_new(op, shape, 2, a->dtype);
    if (!c) {
        return NULL;
    }
    if (beta != 0) { /* C = input (broadcast), then C = alpha*A@B + beta*C */
        ct__copy_kernel(c, input);
    }
    ct__gemm(a, b, c, alpha, beta);
    const ct_tensor *ins[3] = {input, a, b};
    ct_node *n = ct__node_new("AddmmBackward0", ct__addmm_backward, ins, 3);
    if (n) {
        n->f[0] = beta;
        n->f[1] = alpha;
        ct__save(n, ct__needs_grad(n, 2) ? a : NULL);
        ct__save(n, ct__needs_grad(n, 1) ? b : NULL);
    }
    c = ct__set_history(c, n);
    return ct__scoped(c);
}

/* Linear on 2-D x (N, in): dX = g @ W, dW = g^T @ x (contiguous like W), db = sum(g, 0). */
static void ct__linear_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *w = ct__saved(n, 1);
    if (n->i[0]) { /* fused ReLU: mask g by the saved output first */
        g = ct__threshold_backward(g, ct__saved(n, 2));
        if (!g) {
            return;
        }
    }
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_mm(g, w);
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mm(ct_t(g), x);
    }
    if (n->n_next > 2 && ct__needs_grad(n, 2)) {
        gi[2] = ct_sum_dim(g, 0, false);
    }
}

/* y (N, out) = x (N, in) @ W^T + b: one GEMM reading W transposed through its strides. */
static ct_tensor *ct__linear_2d(const char *op, const ct_tensor *x, const ct_tensor *w,
                                const ct_tensor *bias, bool relu)
{
    if (x->sizes[1] != w->sizes[1]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)x->sizes[0], (long long)x->sizes[1], (long long)w->sizes[1],
                 (long long)w->sizes[0]);
        return NULL;
    }
    if (bias && (bias->ndim > 1 || (bias->ndim == 1 && bias->sizes[0] != w->sizes[0]))) {
        char buf[160];
        ct__fail(CT_ERR_SHAPE, op, "bias must have shape [%lld], got %s", (long long)w->sizes[0],
                 ct__shape_str(bias->sizes, bias->ndim, buf, sizeof buf));
        return NULL;
    }
    int64_t shape[2] = {x->sizes[0], w->sizes[0]};
    ct_tensor *y = ct__tensor_new(op, shape, 2, x->dtype);
    ct_tensor *wt =
        y ? ct__tensor_over(w->storage, w->dtype, w->sizes, w->strides, 2, w->offset) : NULL;
    if (!wt) {
        ct__release(y);
        return NULL;
    }
    wt->sizes[0] = w->sizes[1]; /* W^T as a (in, out) view */
    wt->sizes[1] = w->sizes[0];
    wt->strides[0] = w->strides[1];
    wt->strides[1] = w->strides[0];
    if (bias) {
        ct__copy_kernel(y, bias);
    }
    ct__gemm(x, wt, y, 1.0, bias ? 1.0 : 0.0);
    ct__release(wt);
    if (relu) { /* while the output is still in cache */
        ct__relu_inplace_kernel(y);
    }
    const ct_tensor *ins[3] = {x, w, bias};
    ct_node *n = ct__node_new(relu ? "LinearReluBackward" : "AddmmBackward0", ct__linear_backward,
                              ins, bias ? 3 : 2);
    if (n) {
        n->i[0] = relu;
        ct__save(n, ct__needs_grad(n, 1) ? x : NULL);
        ct__save(n, ct__needs_grad(n, 0) ? w : NULL);
        if (relu) {
            ct__save_output(n, y);
        }
    }
    y = ct__set_history(y, n);
    return ct__scoped(y);
}

ct_tensor *ct_linear(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias)
{
    const char *op = "ct_linear";
    if (!ct__check_mat(op, x, w) || (bias && !ct__check_mat(op, x, bias))) {
        return NULL;
    }
    if (w->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, op, "weight must be 2-D (out_features, in_features), got %d-D",
                 w->ndim);
        return NULL;
    }
    if (x->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op,
                 "both arguments to linear need to be at least 1D, but they are "
                 "0D and 2D");
        return NULL;
    }
    if (x->ndim == 2) {
        return ct__linear_2d(op, x, w, bias, false);
    }
    /* (*, in) -> (N, in), one GEMM, -> (*, out) */
    int64_t rows[2] = {-1, x->sizes[x->ndim - 1]}, out[CT_MAX_DIMS];
    memcpy(out, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    out[x->ndim - 1] = w->sizes[0];
    ct_scope_begin();
    ct_tensor *x2 = ct_reshape(x, rows, 2);
    ct_tensor *y = x2 ? ct__linear_2d(op, x2, w, bias, false) : NULL;
    ct_tensor *r = ct_keep(ct_reshape(y, out, x->ndim));
    ct_scope_end();
    return r;
}

ct_tensor *ct__linear_relu(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias)
{
    const char *op = "ct_linear";
    if (!x || !w || x->ndim != 2 || w->ndim != 2 || !ct__check_mat(op, x, w) ||
        (bias && !ct__check_mat(op, x, bias))) {
        ct_scope_begin(); /* the general path (and its errors) */
        ct_tensor *r = ct_keep(ct_relu(ct_linear(x, w, bias)));
        ct_scope_end();
        return r;
    }
    return ct__linear_2d(op, x, w, bias, true);
}

/* ---- bmm ------------------------------------------------------------------------------ */
static void ct__bmm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0), *b = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct_bmm(g, ct_transpose(b, 1, 2));
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_bmm(ct_transpose(a, 1, 2), g);
    }
}

ct_tensor *ct_bmm(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_bmm";
    if (!ct__check_mat(op, a, b)) {
        return NULL;
    }
    if (a->ndim != 3 || b->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, op, "batch%d must be a 3D tensor", a->ndim != 3 ? 1 : 2);
        return NULL;
    }
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%lld, %lld] but got: [%lld, %lld].",
                 (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return NULL;
    }
    int64_t shape[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    ct_tensor *c = ct__tensor_new(op, shape, 3, a->dtype);
    if (!c) {
        return NULL;
    }
    for (int64_t i = 0; i < shape[0]; i++) {
        ct_tensor *ai = ct__mat_at(a, i), *bi = ct__mat_at(b, i), *ci = ct__mat_at(c, i);
        if (ai && bi && ci) {
            ct__gemm(ai, bi, ci, 1.0, 0.0);
        }
        ct__release(ai);
        ct__release(bi);
        ct__release(ci);
    }
    const ct_tensor *ins[2] = {a, b};
    ct_node *n = ct__node_new("BmmBackward0", ct__bmm_backward, ins, 2);
    if (n) {
        ct__save(n, a);
        ct__save(n, b);
    }
    c = ct__set_history(c, n);
    return ct__scoped(c);
}

/* ---- dot, mv, matmul ---------------------------------------------------------------- */
ct_tensor *ct_dot(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_dot";
    if (!ct__check_mat(op, a, b)) {
        return NULL;
    }
    if (a->ndim != 1 || b->ndim != 1) {
        ct__fail(CT_ERR_SHAPE, op, "1D tensors expected, but got %dD and %dD tensors", a->ndim,
                 b->ndim);
        return NULL;
    }
    if (a->sizes[0] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "inconsistent tensor size, expected tensor [%lld] and src "
                 "[%lld] to have the same number of elements, but got %lld and %lld elements "
                 "respectively",
                 (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0],
                 (long long)b->sizes[0]);
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct_reshape(ct_mm(ct_unsqueeze(a, 0), ct_unsqueeze(b, 1)), NULL, 0));
    ct_scope_end();
    return r;
}

ct_tensor *ct_mv(const ct_tensor *m, const ct_tensor *v)
{
    const char *op = "ct_mv";
    if (!ct__check_mat(op, m, v)) {
        return NULL;
    }
    if (m->ndim != 2 || v->ndim != 1 || m->sizes[1] != v->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                 (long long)(m->ndim ? m->sizes[0] : 0), (long long)(m->ndim ? m->sizes[0] : 0),
                 (long long)(m->ndim > 1 ? m->sizes[1] : 0),
                 (long long)(v->ndim ? v->sizes[0] : 0));
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *r = ct_keep(ct_squeeze_dim(ct_mm(m, ct_unsqueeze(v, 1)), 1));
    ct_scope_end();
    return r;
}

/* batched matmul with broadcast batch dims: a (..., n, m) @ b (..., m, p) */
static ct_tensor *ct__matmul_batched(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    int64_t batch[CT_MAX_DIMS];
    int nb = 0;
    if (!ct__broadcast_shapes(op, a->sizes, a->ndim - 2, b->sizes, b->ndim - 2, batch, &nb)) {
        return NULL;
    }
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 2]) {
        char x[160], y[160];
        ct__fail(CT_ERR_SHAPE, op,
                 "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%s, %lld] but got: [%s, %lld].",
                 ct__shape_str(batch, nb, x, sizeof x), (long long)a->sizes[a->ndim - 1],
                 ct__shape_str(batch, nb, y, sizeof y), (long long)b->sizes[b->ndim - 2]);
        return NULL;
    }
    int64_t B = ct__numel(batch, nb);
    int64_t ea[CT_MAX_DIMS], eb[CT_MAX_DIMS], sa[3], sb[3];
    memcpy(ea, batch, sizeof(int64_t) * (size_t)nb);
    memcpy(eb, batch, sizeof(int64_t) * (size_t)nb);
    ea[nb] = a->sizes[a->ndim - 2];
    ea[nb + 1] = a->sizes[a->ndim - 1];
    eb[nb] = b->sizes[b->ndim - 2];
    eb[nb + 1] = b->sizes[b->ndim - 1];
    sa[0] = B;
    sa[1] = ea[nb];
    sa[2] = ea[nb + 1];
    sb[0] = B;
    sb[1] = eb[nb];
    sb[2] = eb[nb + 1];
    int64_t out[CT_MAX_DIMS];
    memcpy(out, batch, sizeof(int64_t) * (size_t)nb);
    out[nb] = ea[nb];
    out[nb + 1] = eb[nb + 1];
    ct_scope_begin();
    ct_tensor *r = ct_bmm(ct_reshape(ct_expand(a, ea, nb + 2), sa, 3),
                          ct_reshape(ct_expand(b, eb, nb + 2), sb, 3));
    r = ct_keep(ct_reshape(r, out, nb + 2));
    ct_scope_end();
    return r;
}

ct_tensor *ct_matmul(const ct_tensor *a, const ct_tensor *b)
{
    const char *op = "ct_matmul";
    if (!ct__check_mat(op, a, b)) {
        return NULL;
    }
    if (a->ndim == 0 || b->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op,
                 "both arguments to matmul need to be at least 1D, but they are "
                 "%dD and %dD",
                 a->ndim, b->ndim);
        return NULL;
    }
    if (a->ndim == 1 && b->ndim == 1) {
        return ct_dot(a, b);
    }
    if (a->ndim >= 2 && b->ndim == 1) { /* fold the batch into rows: one mv */
        int64_t rows[2] = {-1, a->sizes[a->ndim - 1]};
        ct_scope_begin();
        ct_tensor *r = ct_mv(ct_reshape(a, rows, 2), b);
        r = ct_keep(r ? ct_reshape(r, a->sizes, a->ndim - 1) : NULL);
        ct_scope_end();
        return r;
    }
    if (a->ndim == 1 && b->ndim == 2) {
        if (a->sizes[0] != b->sizes[0]) {
            ct__fail(CT_ERR_SHAPE, op,
                     "mat1 and mat2 shapes cannot be multiplied (1x%lld and "
                     "%lldx%lld)",
                     (long long)a->sizes[0], (long long)b->sizes[0], (long long)b->sizes[1]);
            return NULL;
        }
        ct_scope_begin();
        ct_tensor *r = ct_keep(ct_squeeze_dim(ct_mm(ct_unsqueeze(a, 0), b), 0));
        ct_scope_end();
        return r;
    }
    if (a->ndim == 2 && b->ndim == 2) {
        return ct_mm(a, b);
    }
    if (b->ndim == 2 && a->ndim > 2) { /* fold the batch into rows: one big GEMM */
        if (a->sizes[a->ndim - 1] != b->sizes[0]) {
            ct__fail(CT_ERR_SHAPE, op,
                     "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                     "%lldx%lld)",
                     (long long)(ct_numel(a) / a->sizes[a->ndim - 1]),
                     (long long)a->sizes[a->ndim - 1], (long long)b->sizes[0],
                     (long long)b->sizes[1]);
            return NULL;
        }
        int64_t rows[2] = {-1, a->sizes[a->ndim - 1]}, out[CT_MAX_DIMS];
        memcpy(out, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
        out[a->ndim - 1] = b->sizes[1];
        ct_scope_begin();
        ct_tensor *r = ct_keep(ct_reshape(ct_mm(ct_reshape(a, rows, 2), b), out, a->ndim));
        ct_scope_end();
        return r;
    }
    /* promote 1-D operands to matrices, multiply batched, drop the added dims */
    ct_scope_begin();
    const ct_tensor *a2 = a->ndim == 1 ? ct_unsqueeze(a, 0) : a;
    const ct_tensor *b2 = b->ndim == 1 ? ct_unsqueeze(b, 1) : b;
    ct_tensor *r = ct__matmul_batched(op, a2, b2);
    if (r && b->ndim == 1) {
        r = ct_squeeze_dim(r, -1);
    }
    if (r && a->ndim == 1) {
        r = ct_squeeze_dim(r, -2);
    }
    ct_keep(r);
    ct_scope_end();
    return r;
}
