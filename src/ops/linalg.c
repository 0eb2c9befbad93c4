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

/* Both operands of one float dtype. */
static bool ct__check_mat(const char *op, const ct_tensor *a, const ct_tensor *b)
{
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

/* The number of elements of the broadcast batch dims (all but the last two) of a and b. */
static double ct__batch_numel(const ct_tensor *a, const ct_tensor *b)
{
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
    double n = 1;
    for (int k = 0; k < (na > nb ? na : nb); k++) {
        int64_t sa = k < na ? a->sizes[na - 1 - k] : 1, sb = k < nb ? b->sizes[nb - 1 - k] : 1;
        n *= (double)(sa > sb ? sa : sb);
    }
    return n;
}

/* 2 M N K for a (.., M, K) @ b (.., K, N), times the broadcast batch; a 1-D a is (1, K), a
   1-D b (K, 1). The GEMM ops' floating point operations (the profiler's with_flops). */
static double ct__gemm_flops(const ct_tensor *a, const ct_tensor *b)
{
    double M = a->ndim >= 2 ? (double)a->sizes[a->ndim - 2] : 1;
    double K = a->ndim >= 1 ? (double)a->sizes[a->ndim - 1] : 1;
    double N = b->ndim >= 2 ? (double)b->sizes[b->ndim - 1] : 1;
    return 2 * M * N * K * ct__batch_numel(a, b);
}

static double ct__flops_01(const ct_op_call *c)
{
    return ct__gemm_flops(c->inputs[0], c->inputs[1]);
}

static double ct__flops_12(const ct_op_call *c)
{
    return ct__gemm_flops(c->inputs[1], c->inputs[2]);
}

/* x (*, in) @ W^T: 2 N out in, N the rows of x */
static double ct__linear_flops(const ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    double rows = 1;
    for (int k = 0; k + 1 < x->ndim; k++) {
        rows *= (double)x->sizes[k];
    }
    return 2 * rows * (double)w->sizes[0] * (double)w->sizes[1];
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

/* Saves A where dB is needed and B where dA is (inputs k and k + 1 of the call). */
static void ct__save_operands(ct_node *n, const ct_op_call *c, int k)
{
    ct__save(n, ct__needs_grad(n, k + 1) ? c->inputs[k] : NULL);
    ct__save(n, ct__needs_grad(n, k) ? c->inputs[k + 1] : NULL);
}

static void ct__mm_record(ct_node *n, const ct_op_call *c)
{
    ct__save_operands(n, c, 0);
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

static bool ct__mm_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b) || !ct__check_mm_shapes(c->fn, a, b)) {
        return false;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]};
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 2, a->dtype) != NULL;
}

static ct_status ct__mm_kernel(ct_op_call *c)
{
    ct__gemm(c->inputs[0], c->inputs[1], c->outputs[0], 1.0, 0.0);
    return CT_OK;
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

static void ct__addmm_record(ct_node *n, const ct_op_call *c)
{
    n->f[0] = c->attrs[0].f;
    n->f[1] = c->attrs[1].f;
    ct__save_operands(n, c, 1);
}

/* Inputs: input, mat1, mat2; attributes: beta, alpha. input broadcasts to (n, p). */
static bool ct__addmm_meta(ct_op_call *c)
{
    const ct_tensor *input = c->inputs[0], *a = c->inputs[1], *b = c->inputs[2];
    if (!ct__check_mat(c->fn, a, b) || !ct__check_mm_shapes(c->fn, a, b) ||
        !ct__check_mat(c->fn, input, a)) {
        return false;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]}, bs[CT_MAX_DIMS];
    int bn = 0;
    if (input->ndim > 2 ||
        !ct__broadcast_shapes(c->fn, input->sizes, input->ndim, shape, 2, bs, &bn) ||
        bs[0] != shape[0] || bs[1] != shape[1]) {
        char x[160];
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "The expanded size of the tensor must match: input %s cannot "
                 "broadcast to [%lld, %lld]",
                 ct__shape_str(input->sizes, input->ndim, x, sizeof x), (long long)shape[0],
                 (long long)shape[1]);
        return false;
    }
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 2, a->dtype) != NULL;
}

static ct_status ct__addmm_kernel(ct_op_call *c)
{
    double beta = c->attrs[0].f, alpha = c->attrs[1].f;
    ct_tensor *out = c->outputs[0];
    if (beta != 0) { /* C = input (broadcast), then C = alpha*A@B + beta*C */
        ct__copy_kernel(out, c->inputs[0]);
    }
    ct__gemm(c->inputs[1], c->inputs[2], out, alpha, beta);
    return CT_OK;
}

/* Linear on x (*, in) seen as x2 (N, in), g as g2 (N, out): dX = g2 @ W, dW = g2^T @ x2
   (contiguous like W), db = sum(g2, 0). */
static void ct__linear_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *x = ct__saved(n, 0), *w = ct__saved(n, 1);
    const ct__edge *e = &n->next[0];
    if (n->i[0]) { /* fused ReLU: mask g by the saved output first */
        g = ct__threshold_backward(g, ct__saved(n, 2));
        if (!g) {
            return;
        }
    }
    if (e->ndim != 2) { /* (*, in) as rows */
        int64_t rows[2] = {ct__numel(e->sizes, e->ndim - 1), g->sizes[g->ndim - 1]};
        g = ct_reshape(g, rows, 2);
        rows[1] = e->sizes[e->ndim - 1];
        x = x ? ct_reshape(x, rows, 2) : NULL;
    }
    if (ct__needs_grad(n, 0)) {
        ct_tensor *dx = ct_mm(g, w);
        gi[0] = e->ndim != 2 ? ct_reshape(dx, e->sizes, e->ndim) : dx;
    }
    if (ct__needs_grad(n, 1)) {
        gi[1] = ct_mm(ct_t(g), x);
    }
    if (n->n_next > 2 && ct__needs_grad(n, 2)) {
        gi[2] = ct_sum_dim(g, 0, false);
    }
}

/* Saves x where dW is needed, W where dX is, and the output of the fused ReLU. */
static void ct__linear_record(ct_node *n, const ct_op_call *c)
{
    n->i[0] = c->op->variant;
    ct__save_operands(n, c, 0);
    if (c->op->variant) {
        ct__save_output(n, c->outputs[0]);
    }
}

/* Inputs: input (*, in), weight (out, in), bias (out) or absent; output (*, out). */
static bool ct__linear_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    const ct_tensor *bias = c->n_inputs > 2 ? c->inputs[2] : NULL;
    if (!ct__check_mat(c->fn, x, w) || (bias && !ct__check_mat(c->fn, x, bias))) {
        return false;
    }
    if (w->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "weight must be 2-D (out_features, in_features), got "
                 "%d-D", w->ndim);
        return false;
    }
    if (x->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "both arguments to linear need to be at least 1D, but "
                 "they are 0D and 2D");
        return false;
    }
    if (x->sizes[x->ndim - 1] != w->sizes[1]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)ct__numel(x->sizes, x->ndim - 1), (long long)x->sizes[x->ndim - 1],
                 (long long)w->sizes[1], (long long)w->sizes[0]);
        return false;
    }
    if (bias && (bias->ndim > 1 || (bias->ndim == 1 && bias->sizes[0] != w->sizes[0]))) {
        char buf[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "bias must have shape [%lld], got %s",
                 (long long)w->sizes[0], ct__shape_str(bias->sizes, bias->ndim, buf, sizeof buf));
        return false;
    }
    int64_t out[CT_MAX_DIMS];
    memcpy(out, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    out[x->ndim - 1] = w->sizes[0];
    c->dtype = x->dtype;
    return ct__op_output(c, out, x->ndim, x->dtype) != NULL;
}

/* y (N, out) = x (N, in) @ W^T + b: one GEMM reading W transposed through its strides; the
   fused ReLU runs while the output is still in cache. */
static bool ct__linear_2d(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias,
                          ct_tensor *y, bool relu)
{
    ct_tensor *wt = ct__tensor_over(w->storage, w->dtype, w->sizes, w->strides, 2, w->offset);
    if (!wt) {
        return false;
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
    if (relu) {
        ct__relu_inplace_kernel(y);
    }
    return true;
}

/* x (*, in) runs as rows (N, in): a reshape of x (a view where its strides allow, as
   ct_reshape), and the output (contiguous) as (N, out). */
static ct_status ct__linear_kernel(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0], *w = c->inputs[1];
    const ct_tensor *bias = c->n_inputs > 2 ? c->inputs[2] : NULL;
    ct_tensor *y = c->outputs[0];
    bool relu = c->op->variant != 0;
    if (x->ndim == 2) {
        return ct__linear_2d(x, w, bias, y, relu) ? CT_OK : ct_error_code();
    }
    int64_t rows[2] = {ct__numel(x->sizes, x->ndim - 1), x->sizes[x->ndim - 1]};
    int64_t ys[2] = {rows[0], w->sizes[0]}, yst[2] = {w->sizes[0], 1};
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *x2 = ct_reshape(x, rows, 2);
    ct_no_grad_end();
    ct_tensor *y2 = x2 ? ct__tensor_over(y->storage, y->dtype, ys, yst, 2, y->offset) : NULL;
    bool ok = y2 && ct__linear_2d(x2, w, bias, y2, relu);
    ct__release(y2);
    ct_scope_end();
    return ok ? CT_OK : ct_error_code();
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

static bool ct__bmm_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b)) {
        return false;
    }
    if (a->ndim != 3 || b->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "batch%d must be a 3D tensor", a->ndim != 3 ? 1 : 2);
        return false;
    }
    if (b->sizes[0] != a->sizes[0] || b->sizes[1] != a->sizes[2]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "Expected size for first two dimensions of batch2 tensor to "
                 "be: [%lld, %lld] but got: [%lld, %lld].",
                 (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return false;
    }
    int64_t shape[3] = {a->sizes[0], a->sizes[1], b->sizes[2]};
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 3, a->dtype) != NULL;
}

static ct_status ct__bmm_kernel(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct_tensor *out = c->outputs[0];
    for (int64_t i = 0; i < out->sizes[0]; i++) {
        ct_tensor *ai = ct__mat_at(a, i), *bi = ct__mat_at(b, i), *ci = ct__mat_at(out, i);
        if (ai && bi && ci) {
            ct__gemm(ai, bi, ci, 1.0, 0.0);
        }
        ct__release(ai);
        ct__release(bi);
        ct__release(ci);
    }
    return CT_OK;
}

/* ---- dot, mv, matmul (composite: built on mm and bmm) ----------------------------------- */
static bool ct__dot_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b)) {
        return false;
    }
    if (a->ndim != 1 || b->ndim != 1) {
        ct__fail(CT_ERR_SHAPE, c->fn, "1D tensors expected, but got %dD and %dD tensors",
                 a->ndim, b->ndim);
        return false;
    }
    if (a->sizes[0] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "inconsistent tensor size, expected tensor [%lld] and src "
                 "[%lld] to have the same number of elements, but got %lld and %lld elements "
                 "respectively",
                 (long long)a->sizes[0], (long long)b->sizes[0], (long long)a->sizes[0],
                 (long long)b->sizes[0]);
        return false;
    }
    c->dtype = a->dtype;
    return true;
}

static ct_status ct__dot_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(
        c, ct_reshape(ct_mm(ct_unsqueeze(c->inputs[0], 0), ct_unsqueeze(c->inputs[1], 1)), NULL,
                      0));
}

static bool ct__mv_meta(ct_op_call *c)
{
    const ct_tensor *m = c->inputs[0], *v = c->inputs[1];
    if (!ct__check_mat(c->fn, m, v)) {
        return false;
    }
    if (m->ndim != 2 || v->ndim != 1 || m->sizes[1] != v->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                 (long long)(m->ndim ? m->sizes[0] : 0), (long long)(m->ndim ? m->sizes[0] : 0),
                 (long long)(m->ndim > 1 ? m->sizes[1] : 0),
                 (long long)(v->ndim ? v->sizes[0] : 0));
        return false;
    }
    c->dtype = m->dtype;
    return true;
}

static ct_status ct__mv_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(
        c, ct_squeeze_dim(ct_mm(c->inputs[0], ct_unsqueeze(c->inputs[1], 1)), 1));
}

/* batched matmul with broadcast batch dims: a (..., n, m) @ b (..., m, p), in the current
   scope */
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
    ct_tensor *r = ct_bmm(ct_reshape(ct_expand(a, ea, nb + 2), sa, 3),
                          ct_reshape(ct_expand(b, eb, nb + 2), sb, 3));
    return ct_reshape(r, out, nb + 2);
}

static bool ct__matmul_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b)) {
        return false;
    }
    if (a->ndim == 0 || b->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn,
                 "both arguments to matmul need to be at least 1D, but they are "
                 "%dD and %dD",
                 a->ndim, b->ndim);
        return false;
    }
    c->dtype = a->dtype;
    return true;
}

/* (*, m) @ (m, p) with a of 1 or 3+ dims: the batch folded into rows, one mm (in the current
   scope); a 1-D a's row is dropped again */
static ct_tensor *ct__matmul_rows(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (a->sizes[a->ndim - 1] != b->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, op,
                 "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and "
                 "%lldx%lld)",
                 (long long)ct__numel(a->sizes, a->ndim - 1),
                 (long long)a->sizes[a->ndim - 1], (long long)b->sizes[0],
                 (long long)b->sizes[1]);
        return NULL;
    }
    if (a->ndim == 1) {
        return ct_squeeze_dim(ct_mm(ct_unsqueeze(a, 0), b), 0);
    }
    int64_t rows[2] = {-1, a->sizes[a->ndim - 1]}, out[CT_MAX_DIMS];
    memcpy(out, a->sizes, sizeof(int64_t) * (size_t)a->ndim);
    out[a->ndim - 1] = b->sizes[1];
    return ct_reshape(ct_mm(ct_reshape(a, rows, 2), b), out, a->ndim);
}

static ct_status ct__matmul_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct_scope_begin();
    ct_tensor *r = NULL;
    if (a->ndim == 1 && b->ndim == 1) {
        r = ct_dot(a, b);
    } else if (a->ndim >= 2 && b->ndim == 1) { /* fold the batch into rows: one mv */
        int64_t rows[2] = {-1, a->sizes[a->ndim - 1]};
        r = ct_mv(ct_reshape(a, rows, 2), b);
        r = r ? ct_reshape(r, a->sizes, a->ndim - 1) : NULL;
    } else if (a->ndim == 2 && b->ndim == 2) {
        r = ct_mm(a, b);
    } else if (b->ndim == 2) { /* fold the batch into rows: one big GEMM */
        r = ct__matmul_rows(c->fn, a, b);
    } else { /* promote 1-D operands to matrices, multiply batched, drop the added dims */
        const ct_tensor *a2 = a->ndim == 1 ? ct_unsqueeze(a, 0) : a;
        const ct_tensor *b2 = b->ndim == 1 ? ct_unsqueeze(b, 1) : b;
        r = ct__matmul_batched(c->fn, a2, b2);
        if (r && b->ndim == 1) {
            r = ct_squeeze_dim(r, -1);
        }
        if (r && a->ndim == 1) {
            r = ct_squeeze_dim(r, -2);
        }
    }
    return ct__composite_end(c, r);
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* The GEMM kernels (mm, addmm, linear, bmm) and the composites built on them (dot, mv,
   matmul, as PyTorch's CompositeImplicit ops call mm/bmm). Every one reports its floating
   point operations, 2 M N K (times the batch), to the profiler; a composite's nested mm
   reports its own too, as in torch.profiler. linear on (*, in) is one op with one node
   (PyTorch's name for it, AddmmBackward0); ctorch::linear_relu is ctorch's own fused
   Linear+ReLU (nn.Sequential runs it for a Linear followed by a ReLU). */
#define CT__GEMM_OP(SYM, NAME, SCHEMA, API, VAR, OPT, META, K, COMP, NODE, BW, SAVE, RECORD,    \
                    FLOPS)                                                                      \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VAR,  \
                                       OPT, NULL, META, K, COMP, NODE, BW, SAVE, RECORD, FLOPS};
CT__GEMM_OP(mm, "aten::mm", "mm(Tensor self, Tensor mat2) -> Tensor", "ct_mm", 0, 0u,
            ct__mm_meta, CT__K_FLOAT(ct__mm_kernel), NULL, "MmBackward0", ct__mm_backward, 0u,
            ct__mm_record, ct__flops_01)
CT__GEMM_OP(addmm, "aten::addmm", "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar "
            "beta=1, Scalar alpha=1) -> Tensor", "ct_addmm", 0, 0u, ct__addmm_meta,
            CT__K_FLOAT(ct__addmm_kernel), NULL, "AddmmBackward0", ct__addmm_backward, 0u,
            ct__addmm_record, ct__flops_12)
CT__GEMM_OP(linear, "aten::linear", "linear(Tensor input, Tensor weight, Tensor? bias=None) -> "
            "Tensor", "ct_linear", 0, 1u << 2, ct__linear_meta, CT__K_FLOAT(ct__linear_kernel),
            NULL, "AddmmBackward0", ct__linear_backward, 0u, ct__linear_record,
            ct__linear_flops)
CT__GEMM_OP(linear_relu, "ctorch::linear_relu", "linear_relu(Tensor input, Tensor weight, Tensor? "
            "bias=None) -> Tensor", "ct_module_forward (Sequential: Linear, ReLU)", 1, 1u << 2,
            ct__linear_meta, CT__K_FLOAT(ct__linear_kernel), NULL, "LinearReluBackward",
            ct__linear_backward, 0u, ct__linear_record, ct__linear_flops)
CT__GEMM_OP(bmm, "aten::bmm", "bmm(Tensor self, Tensor mat2) -> Tensor", "ct_bmm", 0, 0u,
            ct__bmm_meta, CT__K_FLOAT(ct__bmm_kernel), NULL, "BmmBackward0", ct__bmm_backward,
            (1u << 0) | (1u << 1), NULL, ct__flops_01)
CT__GEMM_OP(dot, "aten::dot", "dot(Tensor self, Tensor tensor) -> Tensor", "ct_dot", 0, 0u,
            ct__dot_meta, CT__K_NONE, ct__dot_composite, NULL, NULL, 0u, NULL, ct__flops_01)
CT__GEMM_OP(mv, "aten::mv", "mv(Tensor self, Tensor vec) -> Tensor", "ct_mv", 0, 0u,
            ct__mv_meta, CT__K_NONE, ct__mv_composite, NULL, NULL, 0u, NULL, ct__flops_01)
CT__GEMM_OP(matmul, "aten::matmul", "matmul(Tensor self, Tensor other) -> Tensor", "ct_matmul",
            0, 0u, ct__matmul_meta, CT__K_NONE, ct__matmul_composite, NULL, NULL, 0u, NULL,
            ct__flops_01)
#undef CT__GEMM_OP

/* ---- public functions ---------------------------------------------------------------------- */
static ct_tensor *ct__call_gemm(const ct_op *op, const char *fn, const ct_tensor *const *in,
                                int n)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    return ct__dispatch(&c);
}

ct_tensor *ct_mm(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_mm, "ct_mm", in, 2);
}

ct_tensor *ct_addmm(const ct_tensor *input, const ct_tensor *a, const ct_tensor *b, double beta,
                    double alpha)
{
    const ct_tensor *in[3] = {input, a, b};
    ct_op_call c;
    ct__call_init(&c, &ct__op_addmm, "ct_addmm", in, 3);
    ct__call_f(&c, beta);
    ct__call_f(&c, alpha);
    return ct__dispatch(&c);
}

ct_tensor *ct_linear(const ct_tensor *x, const ct_tensor *w, const ct_tensor *bias)
{
    const ct_tensor *in[3] = {x, w, bias};
    return ct__call_gemm(&ct__op_linear, "ct_linear", in, bias ? 3 : 2);
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
    const ct_tensor *in[3] = {x, w, bias};
    return ct__call_gemm(&ct__op_linear_relu, op, in, bias ? 3 : 2);
}

ct_tensor *ct_bmm(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_bmm, "ct_bmm", in, 2);
}

ct_tensor *ct_dot(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_dot, "ct_dot", in, 2);
}

ct_tensor *ct_mv(const ct_tensor *m, const ct_tensor *v)
{
    const ct_tensor *in[2] = {m, v};
    return ct__call_gemm(&ct__op_mv, "ct_mv", in, 2);
}

ct_tensor *ct_matmul(const ct_tensor *a, const ct_tensor *b)
{
    const ct_tensor *in[2] = {a, b};
    return ct__call_gemm(&ct__op_matmul, "ct_matmul", in, 2);
}
