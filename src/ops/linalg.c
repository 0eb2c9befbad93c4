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

/* The integer GEMM: int64 in place; a narrower dtype through int64 copies of A, B and C (its
   sums of products wrap modulo 2^bits either way, as PyTorch's in the dtype itself), the
   result narrowed into C. */
static bool ct__gemm_integer(const char *op, const ct_tensor *a, const ct_tensor *b, ct_tensor *c,
                             int64_t alpha, int64_t beta)
{
    int64_t M = c->sizes[0], N = c->sizes[1], K = a->sizes[1];
    if (c->dtype == CT_INT64) {
        return ct__gemm_int(op, CT_INT64, M, N, K, alpha, ct__data(a), a->strides[0],
                            a->strides[1], ct__data(b), b->strides[0], b->strides[1], beta,
                            ct__data(c), c->strides[0]);
    }
    ct_tensor *w[3] = {ct__tensor_new(op, a->sizes, 2, CT_INT64),
                       ct__tensor_new(op, b->sizes, 2, CT_INT64),
                       ct__tensor_new(op, c->sizes, 2, CT_INT64)};
    bool ok = w[0] && w[1] && w[2];
    if (ok) {
        ct__copy_kernel(w[0], a);
        ct__copy_kernel(w[1], b);
        if (beta != 0) {
            ct__copy_kernel(w[2], c);
        }
        ok = ct__gemm_integer(op, w[0], w[1], w[2], alpha, beta);
    }
    if (ok) {
        ct__copy_kernel(c, w[2]);
    }
    for (int k = 0; k < 3; k++) {
        ct__release(w[k]);
    }
    return ok;
}

/* C (M, N) = alpha * A @ B + beta * C for 2-D strided views of one dtype (C's columns
   contiguous for an integer dtype, whose alpha and beta meta checked and truncates here, as
   PyTorch's Scalar::to). false: the error recorded for op. */
static bool ct__gemm(const char *op, const ct_tensor *a, const ct_tensor *b, ct_tensor *c,
                     double alpha, double beta)
{
    int64_t M = c->sizes[0], N = c->sizes[1], K = a->sizes[1];
    if (!ct_dtype_is_floating_point(c->dtype)) {
        return ct__gemm_integer(op, a, b, c, (int64_t)alpha, (int64_t)beta);
    }
    if (ct__is_half(c->dtype)) {
        return ct__gemm_lowp(op, c->dtype, M, N, K, (float)alpha, ct__data(a), a->strides[0],
                             a->strides[1], ct__data(b), b->strides[0], b->strides[1],
                             (float)beta, ct__data(c), c->dtype, c->strides[0], c->strides[1]);
    }
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
        return true;
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
    return true;
}

/* The C++ name of a dtype's element type, as PyTorch's "same dtype" messages print it. */
static const char *ct__blas_dtype_name(ct_dtype d)
{
    static const char *const names[CT_DTYPE_COUNT] = {
        "", "bool", "unsigned char", "signed char", "short int", "int", "long int", "float",
        "double", "c10::Half", "c10::BFloat16"};
    return names[d];
}

/* d is not bool (PyTorch's CPU products take every other dtype): "\"kernel\" not implemented
   for 'Bool'", kernel the name of PyTorch's kernel that rejects it ("addmm_impl_cpu_"). */
static bool ct__check_not_bool(const char *op, ct_dtype d, const char *kernel)
{
    if (d == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, op, "\"%s\" not implemented for 'Bool'", kernel);
        return false;
    }
    return true;
}

/* Both operands of one dtype other than bool (kernel: as ct__check_not_bool). */
static bool ct__check_mat(const char *op, const ct_tensor *a, const ct_tensor *b,
                          const char *kernel)
{
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, op, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                 ct__blas_dtype_name(a->dtype), ct__blas_dtype_name(b->dtype));
        return false;
    }
    return ct__check_not_bool(op, a->dtype, kernel);
}

/* PyTorch's Scalar::to<T> of beta and alpha (attributes 0 and 1) for an integer result dtype
   d: truncated toward zero (the kernel does), in T's range, except that an integral value (a
   Python int) may be negative for uint8 (-255 .. 255, wrapping). "value cannot be converted
   to type int8_t without overflow". */
static bool ct__check_int_scalars(const ct_op_call *c, ct_dtype d)
{
    static const char *const names[5] = {"uint8_t", "int8_t", "int16_t", "int", "int64_t"};
    static const double lo[5] = {0.0, -128.0, -32768.0, -2147483648.0, -9223372036854775808.0};
    static const double hi[5] = {256.0, 128.0, 32768.0, 2147483648.0, 9223372036854775808.0};
    if (d < CT_UINT8 || d > CT_INT64) {
        return true;
    }
    int k = (int)d - (int)CT_UINT8;
    for (int s = 0; s < 2; s++) {
        double v = c->attrs[s].f;
        double low = d == CT_UINT8 && v == floor(v) ? -255.0 : lo[k];
        if (!(v >= low && v < hi[k])) { /* NaN fails too */
            ct__fail(CT_ERR_VALUE, c->fn, "value cannot be converted to type %s without "
                     "overflow", names[k]);
            return false;
        }
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

CT__GLUE_BEGIN
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
    if (!ct__check_mat(c->fn, a, b, "addmm_impl_cpu_") || !ct__check_mm_shapes(c->fn, a, b)) {
        return false;
    }
    int64_t shape[2] = {a->sizes[0], b->sizes[1]};
    c->dtype = a->dtype;
    return ct__op_output(c, shape, 2, a->dtype) != NULL;
}
CT__GLUE_END

static ct_status ct__mm_kernel(ct_op_call *c)
{
    return ct__gemm(c->fn, c->inputs[0], c->inputs[1], c->outputs[0], 1.0, 0.0) ? CT_OK
                                                                                : ct_error_code();
}

CT__GLUE_BEGIN
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
    if (!ct__check_mat(c->fn, a, b, "addmm_impl_cpu_") || !ct__check_mm_shapes(c->fn, a, b) ||
        !ct__check_mat(c->fn, input, a, "addmm_impl_cpu_") || !ct__check_int_scalars(c, a->dtype)) {
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
CT__GLUE_END

static ct_status ct__addmm_kernel(ct_op_call *c)
{
    double beta = c->attrs[0].f, alpha = c->attrs[1].f;
    ct_tensor *out = c->outputs[0];
    if (beta != 0) { /* C = input (broadcast), then C = alpha*A@B + beta*C */
        ct__copy_kernel(out, c->inputs[0]);
    }
    return ct__gemm(c->fn, c->inputs[1], c->inputs[2], out, alpha, beta) ? CT_OK
                                                                         : ct_error_code();
}

CT__GLUE_BEGIN
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
    if (!ct__check_mat(c->fn, x, w, "addmm_impl_cpu_") ||
        (bias && !ct__check_mat(c->fn, x, bias, "addmm_impl_cpu_"))) {
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
CT__GLUE_END

/* y (N, out) = b broadcast over the rows: a row copy where y's rows and b are contiguous
   (the iterator's broadcast copy cost 3% of a GPT training step), else ct__copy_kernel. */
static void ct__linear_bias_rows(ct_tensor *y, const ct_tensor *bias)
{
    int64_t rows = y->sizes[0], n = y->sizes[1];
    size_t bytes = ct_dtype_size(y->dtype) * (size_t)n;
    if (bias->ndim != 1 || bias->dtype != y->dtype || (n > 1 && bias->strides[0] != 1) ||
        (n > 1 && y->strides[1] != 1)) {
        ct__copy_kernel(y, bias);
        return;
    }
    const char *b = ct__data(bias);
    char *d = ct__data(y);
    int64_t step = y->strides[0] * (int64_t)ct_dtype_size(y->dtype);
    for (int64_t i = 0; i < rows; i++) {
        memcpy(d + i * step, b, bytes);
    }
}

/* y (N, out) = x (N, in) @ W^T + b: one GEMM reading W transposed through its strides; the
   fused ReLU runs while the output is still in cache. */
static bool ct__linear_2d(const char *op, const ct_tensor *x, const ct_tensor *w,
                          const ct_tensor *bias, ct_tensor *y, bool relu)
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
        ct__linear_bias_rows(y, bias);
    }
    bool ok = ct__gemm(op, x, wt, y, 1.0, bias ? 1.0 : 0.0);
    ct__release(wt);
    if (ok && relu) {
        ct__relu_inplace_kernel(y);
    }
    return ok;
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
        return ct__linear_2d(c->fn, x, w, bias, y, relu) ? CT_OK : ct_error_code();
    }
    int64_t rows[2] = {ct__numel(x->sizes, x->ndim - 1), x->sizes[x->ndim - 1]};
    int64_t ys[2] = {rows[0], w->sizes[0]}, yst[2] = {w->sizes[0], 1};
    ct_scope_begin();
    ct_no_grad_begin();
    ct_tensor *x2 = ct_reshape(x, rows, 2);
    ct_no_grad_end();
    ct_tensor *y2 = x2 ? ct__tensor_over(y->storage, y->dtype, ys, yst, 2, y->offset) : NULL;
    bool ok = y2 && ct__linear_2d(c->fn, x2, w, bias, y2, relu);
    ct__release(y2);
    ct_scope_end();
    return ok ? CT_OK : ct_error_code();
}

CT__GLUE_BEGIN
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
    if (!ct__check_mat(c->fn, a, b, "bmm")) {
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
CT__GLUE_END

static ct_status ct__bmm_kernel(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct_tensor *out = c->outputs[0];
    bool ok = true;
    for (int64_t i = 0; ok && i < out->sizes[0]; i++) {
        ct_tensor *ai = ct__mat_at(a, i), *bi = ct__mat_at(b, i), *ci = ct__mat_at(out, i);
        ok = ai && bi && ci && ct__gemm(c->fn, ai, bi, ci, 1.0, 0.0);
        ct__release(ai);
        ct__release(bi);
        ct__release(ci);
    }
    return ok ? CT_OK : ct_error_code();
}

CT__GLUE_BEGIN
/* ---- dot, mv, matmul (composite: built on mm and bmm) ----------------------------------- */
static bool ct__dot_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (!ct__check_mat(c->fn, a, b, "dot")) {
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
    if (!ct__check_mat(c->fn, m, v, "addmv_impl_cpu")) {
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
    if (!ct__check_mat(c->fn, a, b, a->ndim == 1 && b->ndim == 1 ? "dot" : "addmm_impl_cpu_")) {
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
/* Kernel tables of the GEMM kernels: every numeric dtype, float16 and bfloat16 included
   (ops/gemm_lowp.c). */
#define CT__K_GEMM(K) {NULL, NULL, K, K, K, K, K, K, K, K, K}
#define CT__GEMM_OP(SYM, NAME, SCHEMA, API, VAR, OPT, META, K, COMP, NODE, BW, SAVE, RECORD,    \
                    FLOPS)                                                                      \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VAR,  \
                                       OPT, NULL, META, K, COMP, NODE, CT__BACKWARD(BW), SAVE, \
                                       RECORD, FLOPS};
CT__GEMM_OP(mm, "aten::mm", "mm(Tensor self, Tensor mat2) -> Tensor", "ct_mm", 0, 0u,
            ct__mm_meta, CT__K_GEMM(ct__mm_kernel), NULL, "MmBackward0", ct__mm_backward, 0u,
            ct__mm_record, ct__flops_01)
CT__GEMM_OP(addmm, "aten::addmm", "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar "
            "beta=1, Scalar alpha=1) -> Tensor", "ct_addmm", 0, 0u, ct__addmm_meta,
            CT__K_GEMM(ct__addmm_kernel), NULL, "AddmmBackward0", ct__addmm_backward, 0u,
            ct__addmm_record, ct__flops_12)
CT__GEMM_OP(linear, "aten::linear", "linear(Tensor input, Tensor weight, Tensor? bias=None) -> "
            "Tensor", "ct_linear", 0, 1u << 2, ct__linear_meta, CT__K_GEMM(ct__linear_kernel),
            NULL, "AddmmBackward0", ct__linear_backward, 0u, ct__linear_record,
            ct__linear_flops)
CT__GEMM_OP(linear_relu, "ctorch::linear_relu", "linear_relu(Tensor input, Tensor weight, Tensor? "
            "bias=None) -> Tensor", "ct_module_forward (Sequential: Linear, ReLU)", 1, 1u << 2,
            ct__linear_meta, CT__K_FLOAT(ct__linear_kernel), NULL, "LinearReluBackward",
            ct__linear_backward, 0u, ct__linear_record, ct__linear_flops)
CT__GEMM_OP(bmm, "aten::bmm", "bmm(Tensor self, Tensor mat2) -> Tensor", "ct_bmm", 0, 0u,
            ct__bmm_meta, CT__K_GEMM(ct__bmm_kernel), NULL, "BmmBackward0", ct__bmm_backward,
            (1u << 0) | (1u << 1), NULL, ct__flops_01)
CT__GEMM_OP(dot, "aten::dot", "dot(Tensor self, Tensor tensor) -> Tensor", "ct_dot", 0, 0u,
            ct__dot_meta, CT__K_NONE, ct__dot_composite, NULL, NULL, 0u, NULL, ct__flops_01)
CT__GEMM_OP(mv, "aten::mv", "mv(Tensor self, Tensor vec) -> Tensor", "ct_mv", 0, 0u,
            ct__mv_meta, CT__K_NONE, ct__mv_composite, NULL, NULL, 0u, NULL, ct__flops_01)
CT__GEMM_OP(matmul, "aten::matmul", "matmul(Tensor self, Tensor other) -> Tensor", "ct_matmul",
            0, 0u, ct__matmul_meta, CT__K_NONE, ct__matmul_composite, NULL, NULL, 0u, NULL,
            ct__flops_01)
#undef CT__GEMM_OP
#undef CT__K_GEMM

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
    if (!x || !w || x->ndim != 2 || w->ndim != 2 || !ct_dtype_is_floating_point(x->dtype) ||
        !ct__check_mat(op, x, w, "addmm_impl_cpu_") ||
        (bias && !ct__check_mat(op, x, bias, "addmm_impl_cpu_"))) {
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

/* ==== issue 7, linalg T2 ====================================================================
 * Kernels for the products with accumulation (baddbmm, addbmm, addmv: the GEMM with beta and
 * alpha), composites for the rest (as PyTorch's CompositeImplicitAutograd ops, built on mm,
 * bmm, matmul and pointwise ops), matrix_exp with its own derivative. */

/* PyTorch's name of a dtype in messages of its type checks: "Float", "Double". */
static const char *ct__title(const ct_tensor *t)
{
    return ct__dtype_title(t->dtype);
}


/* input broadcasts to shape (nd dims), or PyTorch's expand error. */
static bool ct__check_expand(const char *op, const ct_tensor *t, const int64_t *shape, int nd)
{
    char x[160], y[160];
    if (t->ndim > nd) {
        ct__fail(CT_ERR_SHAPE, op, "expand: the number of sizes provided (%d) must be greater "
                 "or equal to the number of dimensions in the tensor (%d)", nd, t->ndim);
        return false;
    }
    for (int d = nd - 1, k = t->ndim - 1; k >= 0; d--, k--) {
        if (t->sizes[k] != 1 && t->sizes[k] != shape[d]) {
            ct__fail(CT_ERR_SHAPE, op, "The expanded size of the tensor (%lld) must match the "
                     "existing size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                     "Tensor sizes: %s", (long long)shape[d], (long long)t->sizes[k], d,
                     ct__shape_str(shape, nd, x, sizeof x),
                     ct__shape_str(t->sizes, t->ndim, y, sizeof y));
            return false;
        }
    }
    return true;
}

/* ---- baddbmm, addbmm, addmv: GEMM with beta * input ----------------------------------- */
enum { CT__ADD_BADDBMM, CT__ADD_ADDBMM, CT__ADD_ADDMV };

/* d * s, or d itself for s == 1 */
static ct_tensor *ct__scaled(const ct_tensor *d, double s)
{
    return s == 1.0 ? (ct_tensor *)(uintptr_t)d : ct_mul_scalar(d, s);
}

/* Inputs input, m1, m2 (saved: m1 in slot 0 where dm2 is needed, m2 in slot 1 where dm1 is);
   f[0] beta, f[1] alpha, i[0] the variant. PyTorch: self: grad * beta; baddbmm: grad @ m2^T
   and m1^T @ grad times alpha; addbmm: the same with grad expanded over the batch; addmv:
   outer(grad, vec) and mat^T @ grad. */
static void ct__addgemm_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    double beta = n->f[0], alpha = n->f[1];
    const ct_tensor *m1 = ct__saved(n, 0), *m2 = ct__saved(n, 1);
    if (ct__needs_grad(n, 0)) {
        gi[0] = ct__scaled(g, beta);
    }
    const ct_tensor *gb = g;
    if (n->i[0] == CT__ADD_ADDBMM && (ct__needs_grad(n, 1) || ct__needs_grad(n, 2))) {
        const ct_tensor *any = m1 ? m1 : m2;
        int64_t s[3] = {any->sizes[0], g->sizes[0], g->sizes[1]};
        gb = ct_expand(ct_unsqueeze(g, 0), s, 3);
    }
    if (ct__needs_grad(n, 1)) {
        ct_tensor *d = n->i[0] == CT__ADD_ADDMV ? ct_outer(g, m2) : ct_bmm(gb, ct_mt(m2));
        gi[1] = ct__scaled(d, alpha);
    }
    if (ct__needs_grad(n, 2)) {
        ct_tensor *d = n->i[0] == CT__ADD_ADDMV ? ct_mv(ct_t(m1), g) : ct_bmm(ct_mt(m1), gb);
        gi[2] = ct__scaled(d, alpha);
    }
}

static void ct__addgemm_record(ct_node *n, const ct_op_call *c)
{
    n->f[0] = c->attrs[0].f;
    n->f[1] = c->attrs[1].f;
    n->i[0] = c->op->variant;
    ct__save_operands(n, c, 1);
}

/* Meta of baddbmm: input, batch1 (b, n, m), batch2 (b, m, p) -> (b, n, p). */
static bool ct__baddbmm_meta(ct_op_call *c)
{
    const ct_tensor *in = c->inputs[0], *b1 = c->inputs[1], *b2 = c->inputs[2];
    if (b1->ndim != 3 || b2->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "batch%d must be a 3D tensor", b1->ndim != 3 ? 1 : 2);
        return false;
    }
    if (in->dtype != b1->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "Input dtypes must be the same, got: input %s, batch1: %s, "
                 "batch2: %s", ct__blas_dtype_name(in->dtype), ct__blas_dtype_name(b1->dtype),
                 ct__blas_dtype_name(b2->dtype));
        return false;
    }
    if (b1->dtype != b2->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "expected scalar type %s but found %s", ct__title(b1),
                 ct__title(b2));
        return false;
    }
    if (b2->sizes[0] != b1->sizes[0] || b2->sizes[1] != b1->sizes[2]) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Expected size for first two dimensions of batch2 tensor "
                 "to be: [%lld, %lld] but got: [%lld, %lld].", (long long)b1->sizes[0],
                 (long long)b1->sizes[2], (long long)b2->sizes[0], (long long)b2->sizes[1]);
        return false;
    }
    int64_t shape[3] = {b1->sizes[0], b1->sizes[1], b2->sizes[2]};
    if (!ct__check_expand(c->fn, in, shape, 3) ||
        !ct__check_not_bool(c->fn, in->dtype, "baddbmm") || !ct__check_int_scalars(c, in->dtype)) {
        return false;
    }
    c->dtype = b1->dtype;
    return ct__op_output(c, shape, 3, b1->dtype) != NULL;
}

/* Meta of addbmm: input, batch1 (b, n, m), batch2 (b, m, p) -> (n, p). */
static bool ct__addbmm_meta(ct_op_call *c)
{
    const ct_tensor *in = c->inputs[0], *b1 = c->inputs[1], *b2 = c->inputs[2];
    if (b1->ndim != 3 || b2->ndim != 3) {
        ct__fail(CT_ERR_SHAPE, c->fn, "batch%d must be a 3D tensor", b1->ndim != 3 ? 1 : 2);
        return false;
    }
    int64_t shape[2] = {b1->sizes[1], b2->sizes[2]};
    if (!ct__check_expand(c->fn, in, shape, 2)) {
        return false;
    }
    if (b1->sizes[0] != b2->sizes[0]) {
        ct__fail(CT_ERR_SHAPE, c->fn, "batch1 and batch2 must have same number of batches, got "
                 "%lld and %lld", (long long)b1->sizes[0], (long long)b2->sizes[0]);
        return false;
    }
    if (b1->sizes[2] != b2->sizes[1]) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Incompatible matrix sizes for bmm (%lldx%lld and "
                 "%lldx%lld)", (long long)b1->sizes[1], (long long)b1->sizes[2],
                 (long long)b2->sizes[1], (long long)b2->sizes[2]);
        return false;
    }
    if (in->dtype != b2->dtype || b1->dtype != b2->dtype) {
        bool self = in->dtype != b2->dtype;
        ct__fail(CT_ERR_DTYPE, c->fn, "%s and mat2 must have the same dtype, but got %s and %s",
                 self ? "self" : "mat1", ct__title(self ? in : b1), ct__title(b2));
        return false;
    }
    if (!ct__check_not_bool(c->fn, in->dtype, "addmm_impl_cpu_") ||
        !ct__check_int_scalars(c, in->dtype)) {
        return false;
    }
    c->dtype = b1->dtype;
    return ct__op_output(c, shape, 2, b1->dtype) != NULL;
}

/* Meta of addmv: input (n), (1) or 0-D, mat (n, m), vec (m) -> (n). */
static bool ct__addmv_meta(ct_op_call *c)
{
    const ct_tensor *in = c->inputs[0], *m = c->inputs[1], *v = c->inputs[2];
    if (m->ndim != 2 || v->ndim != 1 || in->ndim > 1) {
        ct__fail(CT_ERR_SHAPE, c->fn, "vector + matrix @ vector expected, got %d, %d, %d",
                 in->ndim, m->ndim, v->ndim);
        return false;
    }
    int64_t numel = in->ndim ? in->sizes[0] : 1;
    if (m->sizes[1] != v->sizes[0] || (m->sizes[0] != numel && numel != 1)) {
        ct__fail(CT_ERR_SHAPE, c->fn, "size mismatch, got input (%lld), mat (%lldx%lld), vec "
                 "(%lld)", (long long)numel, (long long)m->sizes[0], (long long)m->sizes[1],
                 (long long)v->sizes[0]);
        return false;
    }
    if (in->dtype != m->dtype || m->dtype != v->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "addmv input tensors must have the same dtype, but got "
                 "%s, %s, and %s", ct__title(in), ct__title(m), ct__title(v));
        return false;
    }
    if (!ct__check_not_bool(c->fn, in->dtype, "addmv_impl_cpu") ||
        !ct__check_int_scalars(c, in->dtype)) {
        return false;
    }
    c->dtype = m->dtype;
    return ct__op_output(c, m->sizes, 1, m->dtype) != NULL;
}

/* A 2-D (rows, cols) view of t's data with strides (rs, cs) (unscoped, no autograd). */
static ct_tensor *ct__mat_view(const ct_tensor *t, int64_t rows, int64_t cols, int64_t rs,
                               int64_t cs)
{
    int64_t s[2] = {rows, cols}, st[2] = {rs, cs};
    return ct__tensor_over(t->storage, t->dtype, s, st, 2, t->offset);
}

/* out (b, n, p) or (n, p) = beta * input (broadcast) + alpha * products, by variant:
   baddbmm out[b] = .. + A[b] @ B[b]; addbmm out = .. + sum_b A[b] @ B[b] (one GEMM per batch,
   beta only on the first; b == 0 scales); addmv out (n) as (n, 1) = .. + mat @ vec (m, 1). */
static ct_status ct__addgemm_kernel(ct_op_call *c)
{
    double beta = c->attrs[0].f, alpha = c->attrs[1].f;
    const ct_tensor *a = c->inputs[1], *b = c->inputs[2];
    ct_tensor *out = c->outputs[0];
    if (beta != 0) {
        ct__copy_kernel(out, c->inputs[0]);
    }
    if (c->op->variant == CT__ADD_ADDMV) {
        ct_tensor *v = ct__mat_view(b, b->sizes[0], 1, b->strides[0], 1);
        ct_tensor *o = ct__mat_view(out, out->sizes[0], 1, 1, 1);
        bool ok = v && o && ct__gemm(c->fn, a, v, o, alpha, beta);
        ct__release(v);
        ct__release(o);
        return ok ? CT_OK : ct_error_code();
    }
    int64_t nb = a->sizes[0];
    bool sum = c->op->variant == CT__ADD_ADDBMM;
    if (sum && nb == 0) { /* no product: beta * input */
        ct_tensor *e = ct__mat_view(a, out->sizes[0], 0, 0, 1);
        ct_tensor *f = ct__mat_view(b, 0, out->sizes[1], 1, 1);
        bool ok = e && f && ct__gemm(c->fn, e, f, out, alpha, beta);
        ct__release(e);
        ct__release(f);
        return ok ? CT_OK : ct_error_code();
    }
    bool ok = true;
    for (int64_t i = 0; ok && i < nb; i++) {
        ct_tensor *ai = ct__mat_at(a, i), *bi = ct__mat_at(b, i);
        ct_tensor *ci = sum ? out : ct__mat_at(out, i);
        ok = ai && bi && ci && ct__gemm(c->fn, ai, bi, ci, alpha, sum && i > 0 ? 1.0 : beta);
        ct__release(ai);
        ct__release(bi);
        if (!sum) {
            ct__release(ci);
        }
    }
    return ok ? CT_OK : ct_error_code();
}

/* ---- addr, outer, inner, vdot ------------------------------------------------------------ */
static bool ct__check_1d(const char *op, const char *fn, const ct_tensor *t, const char *arg)
{
    if (t->ndim != 1) {
        ct__fail(CT_ERR_SHAPE, op, "%s: Expected 1-D argument %s, but got %d-D", fn, arg,
                 t->ndim);
        return false;
    }
    return true;
}

static bool ct__outer_meta(ct_op_call *c)
{
    return ct__check_1d(c->fn, "outer", c->inputs[0], "self") &&
           ct__check_1d(c->fn, "outer", c->inputs[1], "vec2");
}

/* input (n) as a column times vec2 (m): (n, m), in the current scope */
static ct_tensor *ct__outer(const ct_tensor *a, const ct_tensor *b)
{
    int64_t col[2] = {a->sizes[0], 1};
    return ct_mul(ct_reshape(a, col, 2), b);
}

static ct_status ct__outer_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct__outer(c->inputs[0], c->inputs[1]));
}

/* Inputs input, vec1, vec2; attributes beta, alpha. The dtype promotes over the three (input
   expanded to 2-D counts as a dimensioned operand, as in PyTorch's iterator). */
static bool ct__addr_meta(ct_op_call *c)
{
    const ct_tensor *in = c->inputs[0], *v1 = c->inputs[1], *v2 = c->inputs[2];
    if (!ct__check_1d(c->fn, "addr", v1, "vec1") || !ct__check_1d(c->fn, "addr", v2, "vec2")) {
        return false;
    }
    int64_t shape[2] = {v1->sizes[0], v2->sizes[0]};
    if (!ct__check_expand(c->fn, in, shape, 2)) {
        return false;
    }
    ct_dtype d = ct_promote_types(ct_promote_types(in->dtype, v1->dtype), v2->dtype);
    const char *names[2] = {"beta", "alpha"};
    for (int k = 0; k < 2 && !ct_dtype_is_floating_point(d); k++) {
        double s = c->attrs[k].f;
        if (s != floor(s)) {
            ct__fail(CT_ERR_VALUE, c->fn, "For integral input tensors, argument %s must not be "
                     "a floating point number.", names[k]);
            return false;
        }
    }
    c->dtype = d;
    return true;
}

/* t * s keeping t's dtype category: an integer s multiplies an integer t as a 0-D int64
   tensor (a double would promote it to float). */
static ct_tensor *ct__times(const ct_tensor *t, double s)
{
    if (ct_dtype_is_floating_point(t->dtype)) {
        return ct__scaled(t, s);
    }
    return s == 1.0 ? (ct_tensor *)(uintptr_t)t : ct_mul(t, ct_scalar_tensor(s, CT_INT64));
}

/* beta * input + alpha * outer(vec1, vec2); bool: (beta && input) || (alpha && outer). */
static ct_status ct__addr_composite(ct_op_call *c)
{
    double beta = c->attrs[0].f, alpha = c->attrs[1].f;
    const ct_tensor *v1 = c->inputs[1], *v2 = c->inputs[2];
    int64_t shape[2] = {v1->sizes[0], v2->sizes[0]};
    ct_scope_begin();
    ct_tensor *self = ct_expand(c->inputs[0], shape, 2), *prod = ct__outer(v1, v2), *r;
    if (c->dtype == CT_BOOL) {
        ct_tensor *p = alpha != 0 ? prod : ct_zeros(shape, 2, CT_BOOL);
        r = beta != 0 ? ct_logical_or(self, p) : ct_to_dtype(p, CT_BOOL);
    } else if (beta == 0) { /* input's values ignored, its dtype kept */
        r = ct_to_dtype(ct__times(prod, alpha), c->dtype);
    } else {
        r = ct_add(ct__times(self, beta), ct__times(prod, alpha));
    }
    return ct__composite_end(c, r);
}

static bool ct__same_dtype(const char *op, const ct_tensor *a, const ct_tensor *b)
{
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, op, "both inputs should have same dtype");
        return false;
    }
    return true;
}

static bool ct__inner_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (a->ndim == 0 || b->ndim == 0) {
        return true;
    }
    if (a->sizes[a->ndim - 1] != b->sizes[b->ndim - 1]) {
        char x[160], y[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "inner() the last dimension must match on both input "
                 "tensors but got shapes %s and %s", ct__shape_str(a->sizes, a->ndim, x, sizeof x),
                 ct__shape_str(b->sizes, b->ndim, y, sizeof y));
        return false;
    }
    return ct__same_dtype(c->fn, a, b) && ct__check_not_bool(c->fn, a->dtype, "addmm_impl_cpu_");
}

static ct_status ct__inner_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    const int64_t last = -1;
    ct_scope_begin();
    ct_tensor *r = a->ndim == 0 || b->ndim == 0 ? ct_mul(a, b)
                                                : ct_tensordot(a, b, &last, 1, &last, 1);
    return ct__composite_end(c, r);
}

static bool ct__vdot_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (a->ndim != 1 || b->ndim != 1) {
        ct__fail(CT_ERR_SHAPE, c->fn, "1D tensors expected, but got %dD and %dD tensors",
                 a->ndim, b->ndim);
        return false;
    }
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "dot : expected both vectors to have same dtype, but "
                 "found %s and %s", ct__title(a), ct__title(b));
        return false;
    }
    /* ct_dot checks the sizes in the same words */
    return ct__check_not_bool(c->fn, a->dtype, "dot");
}

static ct_status ct__vdot_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct_dot(c->inputs[0], c->inputs[1]));
}

/* ---- tensordot, kron, trace, cross ---------------------------------------------------------- */
/* torch.diagonal(t, 0, d1, d2): the dims d1 != d2 dropped, their diagonal appended last; a
   slice of the two dims flattened (a view where reshape allows), in the current scope. */
static ct_tensor *ct__diagonal(const ct_tensor *t, int d1, int d2)
{
    int64_t perm[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d != d1 && d != d2) {
            shape[k] = t->sizes[d];
            perm[k++] = d;
        }
    }
    int64_t n1 = t->sizes[d1], n2 = t->sizes[d2], len = n1 < n2 ? n1 : n2;
    perm[k] = d1;
    perm[k + 1] = d2;
    shape[k] = n1 * n2;
    ct_tensor *flat = ct_reshape(ct_permute(t, perm, t->ndim), shape, k + 1);
    return ct_slice(flat, k, 0, len * (n2 + 1), n2 + 1);
}

/* Wraps n dims of t into w and checks each appears once. */
static bool ct__wrap_dims(const char *op, const int64_t *dims, int n, int ndim, int *w)
{
    for (int k = 0; k < n; k++) {
        w[k] = ct__wrap_dim(op, dims[k], ndim);
        if (w[k] < 0) {
            return false;
        }
        for (int j = 0; j < k; j++) {
            if (w[j] == w[k]) {
                ct__fail(CT_ERR_SHAPE, op, "dim %d appears multiple times in the list of dims",
                         w[k]);
                return false;
            }
        }
    }
    return true;
}

/* The call's state: the contracted dims of both operands, wrapped by meta (a list longer
   than the operand's dims repeats one by the time it has ndim + 1 entries). */
typedef struct ct__tensordot_state {
    int wa[CT_MAX_DIMS + 1], wb[CT_MAX_DIMS + 1];
} ct__tensordot_state;

/* Inputs a, b; attributes dims_a, dims_b (int[]). */
static bool ct__tensordot_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    ct__tensordot_state *s = (ct__tensordot_state *)c->state;
    int n = (int)c->attrs[0].i;
    if (c->attrs[0].i != c->attrs[1].i) {
        ct__fail(CT_ERR_VALUE, c->fn, "both dimension lists should have same length");
        return false;
    }
    if (!ct__same_dtype(c->fn, a, b) || !ct__check_not_bool(c->fn, a->dtype, "addmm_impl_cpu_") ||
        !ct__wrap_dims(c->fn, c->attrs[0].ints, n, a->ndim, s->wa) ||
        !ct__wrap_dims(c->fn, c->attrs[1].ints, n, b->ndim, s->wb)) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        int64_t sa = a->sizes[s->wa[k]], sb = b->sizes[s->wb[k]];
        if (sa != sb && sa != 1 && sb != 1) {
            ct__fail(CT_ERR_SHAPE, c->fn, "contracted dimensions need to match, but first has "
                     "size %lld in dim %d and second has size %lld in dim %d", (long long)sa,
                     s->wa[k], (long long)sb, s->wb[k]);
            return false;
        }
    }
    c->dtype = a->dtype;
    return true;
}

/* a permuted to (free, contracted) as (P, S) @ b permuted to (contracted, free) as (S, Q);
   a contracted dim of size 1 facing a larger one sums the other operand over it first. */
static ct_status ct__tensordot_composite(ct_op_call *c)
{
    const ct__tensordot_state *s = (const ct__tensordot_state *)c->state;
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    int n = (int)c->attrs[0].i;
    int64_t pa[CT_MAX_DIMS], pb[CT_MAX_DIMS], out[CT_MAX_DIMS], rows[2] = {1, 1}, cols[2];
    bool in_a[CT_MAX_DIMS] = {false}, in_b[CT_MAX_DIMS] = {false};
    int no = 0, fa = 0;
    ct_scope_begin();
    for (int k = 0; k < n; k++) {
        int64_t da = s->wa[k], db = s->wb[k];
        if (a->sizes[da] == 1 && b->sizes[db] != 1) {
            b = ct_sum_dims(b, &db, 1, true);
        } else if (b->sizes[db] == 1 && a->sizes[da] != 1) {
            a = ct_sum_dims(a, &da, 1, true);
        }
        if (!a || !b) {
            return ct__composite_end(c, NULL);
        }
        in_a[da] = in_b[db] = true;
        rows[1] *= a->sizes[da];
    }
    for (int d = 0; d < a->ndim; d++) {
        if (!in_a[d]) {
            pa[fa++] = d;
            rows[0] *= a->sizes[d];
            out[no++] = a->sizes[d];
        }
    }
    for (int k = 0; k < n; k++) {
        pa[fa + k] = s->wa[k];
        pb[k] = s->wb[k];
    }
    cols[0] = rows[1];
    cols[1] = 1;
    for (int d = 0, fb = n; d < b->ndim; d++) {
        if (!in_b[d]) {
            pb[fb++] = d;
            cols[1] *= b->sizes[d];
            out[no++] = b->sizes[d];
        }
    }
    ct_tensor *ma = ct_reshape(ct_permute(a, pa, a->ndim), rows, 2);
    ct_tensor *mb = ct_reshape(ct_permute(b, pb, b->ndim), cols, 2);
    return ct__composite_end(c, ct_reshape(ct_mm(ma, mb), out, no));
}

static bool ct__kron_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (2 * (a->ndim > b->ndim ? a->ndim : b->ndim) > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "kron: ctorch takes operands of at most %d dimensions, "
                 "got %d and %d", CT_MAX_DIMS / 2, a->ndim, b->ndim);
        return false;
    }
    return true;
}

/* a as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...), read as (a0*b0, a1*b1, ...); the
   shorter operand padded with leading 1s. */
static ct_status ct__kron_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int64_t sa[CT_MAX_DIMS], sb[CT_MAX_DIMS], out[CT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        int ka = d - (nd - a->ndim), kb = d - (nd - b->ndim);
        int64_t x = ka >= 0 ? a->sizes[ka] : 1, y = kb >= 0 ? b->sizes[kb] : 1;
        sa[2 * d] = x;
        sa[2 * d + 1] = 1;
        sb[2 * d] = 1;
        sb[2 * d + 1] = y;
        out[d] = x * y;
    }
    ct_scope_begin();
    ct_tensor *p = ct_mul(ct_reshape(a, sa, 2 * nd), ct_reshape(b, sb, 2 * nd));
    return ct__composite_end(c, ct_reshape(p, out, nd));
}

static bool ct__trace_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "trace: expected a matrix, but got tensor with dim %d",
                 t->ndim);
        return false;
    }
    if (t->dtype == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"trace\" not implemented for 'Bool'");
        return false;
    }
    return true;
}

static ct_status ct__trace_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct_sum(ct__diagonal(c->inputs[0], 0, 1)));
}

/* cross (torch.cross, dim optional: attribute 0 set with i = 1 in attribute 1) checks the
   operands, picks the default dim and calls linalg_cross (attribute 0: dim). */
static bool ct__cross_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    if (a->ndim != b->ndim) {
        ct__fail(CT_ERR_SHAPE, c->fn, "linalg.cross: inputs must have the same number of "
                 "dimensions.");
        return false;
    }
    if (a->dtype != b->dtype) {
        ct__fail(CT_ERR_DTYPE, c->fn, "expected scalar type %s but found %s", ct__title(a),
                 ct__title(b));
        return false;
    }
    if (c->op->variant == 1 || c->attrs[1].i) { /* linalg_cross, or cross with a dim */
        int64_t dim = c->attrs[0].i;
        int d = ct__wrap_dim(c->fn, dim, a->ndim);
        if (d < 0) {
            return false;
        }
        if (a->sizes[d] != 3 || b->sizes[d] != 3) {
            ct__fail(CT_ERR_SHAPE, c->fn, "linalg.cross: inputs dimension %lld must have length "
                     "3. Got %lld and %lld", (long long)dim, (long long)a->sizes[d],
                     (long long)b->sizes[d]);
            return false;
        }
        int64_t shape[CT_MAX_DIMS];
        int n = 0;
        return ct__broadcast_shapes(c->fn, a->sizes, a->ndim, b->sizes, b->ndim, shape, &n);
    }
    for (int d = 0; d < a->ndim; d++) {
        if (a->sizes[d] == 3) {
            c->attrs[0].i = d;
            c->attrs[1].i = 1;
            return true;
        }
    }
    ct__fail(CT_ERR_SHAPE, c->fn, "no dimension of size 3 in input");
    return false;
}

static ct_tensor *ct__linalg_cross(const char *fn, const ct_tensor *a, const ct_tensor *b,
                                   int64_t dim);

static ct_status ct__cross_composite(ct_op_call *c)
{
    ct_scope_begin();
    return ct__composite_end(c, ct__linalg_cross(c->fn, c->inputs[0], c->inputs[1],
                                                 c->attrs[0].i));
}

/* (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0) stacked along dim (broadcast operands). */
static ct_status ct__linalg_cross_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    int64_t dim = ct__wrap_dim(c->fn, c->attrs[0].i, a->ndim);
    ct_scope_begin();
    const ct_tensor *part[3];
    for (int k = 0; k < 3; k++) {
        int i = (k + 1) % 3, j = (k + 2) % 3;
        part[k] = ct_sub(ct_mul(ct_select(a, dim, i), ct_select(b, dim, j)),
                         ct_mul(ct_select(a, dim, j), ct_select(b, dim, i)));
    }
    return ct__composite_end(c, ct_stack(part, 3, dim));
}

/* ---- multi_dot ------------------------------------------------------------------------------ */
static bool ct__multi_dot_meta(ct_op_call *c)
{
    const ct_tensor *const *t = c->inputs;
    int n = c->n_inputs;
    if (n < 2) {
        ct__fail(CT_ERR_VALUE, c->fn, "multi_dot(): expected at least 2 tensors but got %d", n);
        return false;
    }
    for (int k = 0; k < n; k++) {
        bool end = k == 0 || k == n - 1;
        if (t[k]->ndim != 2 && !(end && t[k]->ndim == 1)) {
            if (end) {
                ct__fail(CT_ERR_SHAPE, c->fn, "multi_dot(): the %s tensor must be 1D or 2D but "
                         "got %dD", k ? "last" : "first", t[k]->ndim);
            } else {
                ct__fail(CT_ERR_SHAPE, c->fn, "multi_dot(): tensor %d must be 2D but got %dD", k,
                         t[k]->ndim);
            }
            return false;
        }
    }
    for (int k = 1; k < n; k++) {
        if (t[k]->dtype != t[0]->dtype) {
            ct__fail(CT_ERR_DTYPE, c->fn, "multi_dot(): all tensors must have be the same dtype "
                     "but tensor 0 is %s and tensor %d %s", ct__blas_dtype_name(t[0]->dtype), k,
                     ct__blas_dtype_name(t[k]->dtype));
            return false;
        }
        if (!ct__check_not_bool(c->fn, t[k]->dtype, "addmm_impl_cpu_")) {
            return false;
        }
        const ct_tensor *p = t[k - 1];
        if (p->sizes[p->ndim - 1] != t[k]->sizes[0]) {
            char x[160], y[160];
            ct__fail(CT_ERR_SHAPE, c->fn, "multi_dot(): tensors %d and %d with shapes %s and %s "
                     "cannot be multiplied", k - 1, k, ct__shape_str(p->sizes, p->ndim, x, 160),
                     ct__shape_str(t[k]->sizes, t[k]->ndim, y, 160));
            return false;
        }
    }
    c->dtype = t[0]->dtype;
    return true;
}

/* The product of m[i..j] in the order split[] gives (split[i * n + j]: the last matrix of the
   left part), in the current scope. */
static ct_tensor *ct__chain(const ct_tensor *const *m, const int64_t *split, int64_t n, int64_t i,
                            int64_t j)
{
    if (i == j) {
        return (ct_tensor *)(uintptr_t)m[i];
    }
    int64_t k = split[i * n + j];
    return ct_mm(ct__chain(m, split, n, i, k), ct__chain(m, split, n, k + 1, j));
}

/* PyTorch's matrix_chain_order (CLRS 15.2): cost[i][j] the fewest scalar products for
   m[i..j], split[i][j] where to split; ties keep the first split. */
static ct_tensor *ct__chain_optimal(const ct_tensor *const *m, int64_t n)
{
    int64_t *cost = (int64_t *)ct__calloc(sizeof(int64_t) * (size_t)(2 * n * n + n + 1));
    if (!cost) {
        ct__fail(CT_ERR_OOM, "ct_linalg_multi_dot", "out of memory");
        return NULL;
    }
    int64_t *split = cost + n * n, *p = split + n * n;
    for (int64_t i = 0; i < n; i++) {
        p[i] = m[i]->sizes[0];
    }
    p[n] = m[n - 1]->sizes[1];
    for (int64_t l = 1; l < n; l++) {
        for (int64_t i = 0; i + l < n; i++) {
            int64_t j = i + l;
            cost[i * n + j] = INT64_MAX;
            for (int64_t k = i; k < j; k++) {
                int64_t q = cost[i * n + k] + cost[(k + 1) * n + j] + p[i] * p[k + 1] * p[j + 1];
                if (q < cost[i * n + j]) {
                    cost[i * n + j] = q;
                    split[i * n + j] = k;
                }
            }
        }
    }
    ct_tensor *r = ct__chain(m, split, n, 0, n - 1);
    ct__free(cost);
    return r;
}

/* 1-D ends as a row (1, k) and a column (k, 1); two matrices: mm; three: the cheaper of
   (AB)C and A(BC) (cost_1 = a c (b + d) against cost_2 = b d (a + c)); more: the optimal
   chain. The output drops the dims of 1-D ends. */
static ct_status ct__linalg_multi_dot_composite(ct_op_call *c)
{
    int n = c->n_inputs;
    const ct_tensor *first = c->inputs[0], *last = c->inputs[n - 1];
    int64_t out[2];
    int no = 0;
    ct_scope_begin();
    const ct_tensor **m = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!m) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        return ct__composite_end(c, NULL);
    }
    memcpy(m, c->inputs, sizeof(ct_tensor *) * (size_t)n);
    if (first->ndim == 1) {
        m[0] = ct_unsqueeze(first, 0);
    } else {
        out[no++] = first->sizes[0];
    }
    if (last->ndim == 1) {
        m[n - 1] = ct_unsqueeze(last, 1);
    } else {
        out[no++] = last->sizes[1];
    }
    ct_tensor *r;
    if (n == 2) {
        r = ct_mm(m[0], m[1]);
    } else if (n == 3) {
        int64_t a = m[0]->sizes[0], b = m[1]->sizes[0], cc = m[2]->sizes[0], d = m[2]->sizes[1];
        r = a * cc * (b + d) > b * d * (a + cc) ? ct_mm(m[0], ct_mm(m[1], m[2]))
                                               : ct_mm(ct_mm(m[0], m[1]), m[2]);
    } else {
        r = ct__chain_optimal(m, n);
    }
    ct__free((void *)m);
    return ct__composite_end(c, ct_reshape(r, out, no));
}

/* ---- matrix_power, matrix_exp ------------------------------------------------------------- */
/* PyTorch's squareCheckInputs for op ("linalg.matrix_power"). */
static bool ct__check_square(const char *fn, const char *op, const ct_tensor *a)
{
    if (a->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, fn, "%s: The input tensor A must have at least 2 dimensions.", op);
        return false;
    }
    int64_t r = a->sizes[a->ndim - 2], k = a->sizes[a->ndim - 1];
    if (r != k) {
        ct__fail(CT_ERR_SHAPE, fn, "%s: A must be batches of square matrices, but they are %lld "
                 "by %lld matrices", op, (long long)r, (long long)k);
        return false;
    }
    return true;
}

/* Attribute 0: n. */
static bool ct__matrix_power_meta(ct_op_call *c)
{
    if (!ct__check_square(c->fn, "linalg.matrix_power", c->inputs[0])) {
        return false;
    }
    if (c->attrs[0].i >= 2 &&
        !ct__check_not_bool(c->fn, c->inputs[0]->dtype, "addmm_impl_cpu_")) {
        return false;
    }
    c->dtype = c->inputs[0]->dtype;
    return true;
}

/* PyTorch's linalg_matrix_power_impl: a negative n the same on linalg.inv(A) with -n; 0 the
   identity (copied into a clone, so the result is in the graph), 1 a clone, 2 and 3 products,
   then binary powers from the lowest bit. */
static ct_status ct__linalg_matrix_power_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    int64_t n = c->attrs[0].i, m = a->sizes[a->ndim - 1];
    ct_scope_begin();
    ct_tensor *r = NULL;
    if (n < 0) {
        a = ct_linalg_inv(a);
        n = -n;
        if (!a) {
            return ct__composite_end(c, NULL);
        }
    }
    if (n <= 1) { /* a contiguous copy (a fresh tensor: copy_ writes into it) */
        r = ct_clone(a);
        r = r && !ct_is_contiguous(r) ? ct_contiguous(r) : r;
        r = n == 0 ? ct_copy_(r, ct_eye(m, m, a->dtype)) : r;
    } else if (n <= 3) {
        r = ct_matmul(a, a);
        r = n == 3 ? ct_matmul(r, a) : r;
    } else {
        const ct_tensor *z = NULL;
        while (n > 0) {
            int64_t bit = n % 2;
            n /= 2;
            z = z ? ct_matmul(z, z) : a;
            if (bit) {
                r = r ? ct_matmul(r, z) : (ct_tensor *)(uintptr_t)z;
            }
        }
    }
    return ct__composite_end(c, r);
}

static bool ct__matrix_exp_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    if (!ct__check_square(c->fn, "linalg.matrix_exp", a)) {
        return false;
    }
    if (!ct_dtype_is_floating_point(a->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "linalg.matrix_exp: Expected a floating point or complex "
                 "tensor as input. Got %s", ct__title(a));
        return false;
    }
    c->dtype = a->dtype;
    return true;
}

/* sum_j k[j] * x[j] over n terms, accumulated in order (PyTorch's
   _compute_linear_combination); x[j] broadcast (the identity is (m, m)). */
static ct_tensor *ct__lincomb(const ct_tensor *const *x, const double *k, int n)
{
    ct_tensor *r = ct_mul_scalar(x[0], k[0]);
    for (int j = 1; j < n; j++) {
        r = ct_add(r, ct_mul_scalar(x[j], k[j]));
    }
    return r;
}

/* pw = {I, A, A^2, A^3, A^6}, the first n (PyTorch's _fill_matrix_powers). */
static void ct__matrix_powers(const ct_tensor *a, const ct_tensor **pw, int n)
{
    pw[0] = ct_eye(a->sizes[1], a->sizes[1], a->dtype);
    pw[1] = a;
    pw[2] = n > 2 ? ct_matmul(a, a) : NULL;
    if (n > 3) {
        pw[3] = ct_matmul(pw[1], pw[2]);
    }
    if (n > 4) {
        pw[4] = ct_matmul(pw[3], pw[3]);
    }
}

/* The Taylor-type polynomials T_deg(A) of PyTorch's mexp (Bader, Blanes, Casas 2019) for a
   (b, m, m), deg 1, 2, 4, 8, 12 or 18 (index 0..5). */
static ct_tensor *ct__mexp_poly(const ct_tensor *a, int deg)
{
    static const double t12[4][4] = {
        {9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740},
        {5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
         0.01108844528519167989},
        {0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
         0.00610700528898058230},
        {-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
         -0.00675951846863086359}};
    static const double t18[5][5] = {
        {0., -1.00365581030144618291e-01, -8.02924648241156932449e-03,
         -8.92138498045729985177e-04, 0.},
        {0., 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
         -6.37898194594723280150e-04},
        {-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
         -6.98210122488052056106e-03, 3.34975017086070470649e-05},
        {-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
         2.95552570429315521194e-02, -1.39180257516060693404e-05},
        {0., 0., -9.23364619367118555360e-02, -1.69364939002081722752e-02,
         -1.40086798182036094347e-05}};
    const ct_tensor *pw[5];
    static const int npw[6] = {2, 3, 3, 3, 4, 5};
    ct__matrix_powers(a, pw, npw[deg]);
    if (deg <= 1) { /* I + A (+ A^2 / 2) */
        ct_tensor *r = ct_add(pw[0], a);
        return deg ? ct_add(r, ct_div_scalar(pw[2], 2.0)) : r;
    }
    if (deg == 2) { /* I + A + A^2 (I / 2 + A / 6 + A^2 / 24) */
        const double k[3] = {1 / 2.0, 1 / 6.0, 1 / 24.0}, one[4] = {1.0, 1.0, 0.0, 1.0};
        const ct_tensor *all[4] = {pw[0], pw[1], pw[2], ct_matmul(pw[2], ct__lincomb(pw, k, 3))};
        return ct__lincomb(all, one, 4);
    }
    if (deg == 3) {
        const double sqrt_177 = 0.1330413469565007072504e+2, x3 = 2. / 3.;
        const double x1 = x3 * ((1. + sqrt_177) / 88.), x2 = x3 * ((1. + sqrt_177) / 352.);
        const double k4[4] = {(-271. + 29. * sqrt_177) / (315. * x3),
                              (-11. + 11. * sqrt_177) / (1260. * x3),
                              (-99. + 11. * sqrt_177) / (5040. * x3),
                              (89. - sqrt_177) / (5040. * x3)};
        const double y2 = (857. - 58. * sqrt_177) / 630., k12[2] = {x1, x2}, k34[2] = {x3, 1.0};
        const ct_tensor *all[5] = {pw[0], pw[1], pw[2], NULL, NULL};
        all[3] = ct_matmul(pw[2], ct__lincomb(pw + 1, k12, 2));  /* A4 */
        all[4] = ct_matmul(ct__lincomb(all + 2, k34, 2), ct__lincomb(all, k4, 4)); /* A8 */
        const double k[5] = {1.0, 1.0, y2, 0.0, 1.0};
        return ct__lincomb(all, k, 5);
    }
    int n = deg == 4 ? 4 : 5;
    ct_tensor *bs[5];
    for (int i = 0; i < n; i++) {
        bs[i] = ct__lincomb(pw, deg == 4 ? t12[i] : t18[i], n);
    }
    if (deg == 4) { /* B2 += B3 B3; B0 + (B1 + B2) B2 */
        bs[2] = ct_add(bs[2], ct_matmul(bs[3], bs[3]));
        return ct_add(bs[0], ct_matmul(ct_add(bs[1], bs[2]), bs[2]));
    }
    bs[3] = ct_add(bs[3], ct_matmul(bs[0], bs[4])); /* B3 += B0 B4; B1 + (B2 + B3) B3 */
    return ct_add(bs[1], ct_matmul(ct_add(bs[2], bs[3]), bs[3]));
}

/* The 1-norms (max column sum) of the b matrices of a, read on the host. */
static bool ct__mexp_norms(const ct_tensor *a, double *norm)
{
    const int64_t rows = -2, cols = -1;
    ct_tensor *n = ct_amax(ct_sum_dims(ct_abs(a), &rows, 1, false), &cols, 1, false);
    ct_tensor *h = ct_contiguous(ct_to_dtype(ct_cpu(n), CT_FLOAT64));
    if (!h) {
        return false;
    }
    memcpy(norm, ct_data_ptr(h), sizeof(double) * (size_t)a->sizes[0]);
    return true;
}

/* T18 of each matrix scaled by 2^-s, s = max(0, ceil(log2(norm / theta))), squared s times. */
static ct_tensor *ct__mexp_scale_square(const ct_tensor *a, const double *norm, double theta)
{
    int64_t b = a->sizes[0];
    double *s = (double *)ct__malloc(sizeof(double) * (size_t)(2 * b + 1));
    const ct_tensor **piece = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)b);
    if (!s || !piece) {
        ct__free(s);
        ct__free((void *)piece);
        ct__fail(CT_ERR_OOM, "ct_linalg_matrix_exp", "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < b; i++) {
        double q = a->dtype == CT_FLOAT32 ? (double)ceilf(log2f((float)norm[i] / (float)theta))
                                          : ceil(log2(norm[i] / theta));
        s[i] = q > 0 ? q : 0;
        s[b + i] = ldexp(1.0, -(int)s[i]);
    }
    int64_t shape[3] = {b, 1, 1};
    ct_tensor *scale = ct_to_dtype(ct_tensor_from_data(s + b, CT_FLOAT64, shape, 3), a->dtype);
    ct_tensor *t = ct__mexp_poly(ct_mul(a, ct_to_device(scale, ct_tensor_device(a))), 5);
    for (int64_t i = 0; i < b; i++) {
        ct_tensor *x = t ? ct_select(t, 0, i) : NULL;
        for (int64_t k = 0; k < (int64_t)s[i]; k++) {
            x = ct_mm(x, x);
        }
        piece[i] = x;
    }
    ct_tensor *r = ct_stack(piece, (int)b, 0);
    ct__free(s);
    ct__free((void *)piece);
    return r;
}

/* PyTorch's mexp on a (b, m, m): one matrix takes the lowest degree its 1-norm allows (NaN
   norm: NaN result); batches and norms from theta[4] on take T18 with scaling and squaring. */
static ct_tensor *ct__mexp(const ct_tensor *a)
{
    static const double th64[6] = {2.220446049250313e-16, 2.580956802971767e-08,
                                   3.397168839976962e-04, 4.991228871115323e-02,
                                   2.996158913811580e-01, 1.090863719290036e+00};
    static const float th32[6] = {1.192092800768788e-07f, 5.978858893805233e-04f,
                                  5.116619363445086e-02f, 5.800524627688768e-01f,
                                  1.461661507209034e+00f, 3.010066362817634e+00f};
    double th[6], norm1 = 0;
    for (int k = 0; k < 6; k++) {
        th[k] = a->dtype == CT_FLOAT32 ? (double)th32[k] : th64[k];
    }
    int64_t b = a->sizes[0];
    if (b == 0) {
        return ct_clone(a);
    }
    double *norm = b == 1 ? &norm1 : (double *)ct__malloc(sizeof(double) * (size_t)b);
    if (!norm || !ct__mexp_norms(a, norm)) {
        if (norm && norm != &norm1) {
            ct__free(norm);
        }
        return NULL;
    }
    ct_tensor *r = NULL;
    if (b > 1 || norm1 >= th[4]) {
        r = ct__mexp_scale_square(a, norm, th[5]);
    } else if (isnan(norm1)) {
        r = ct_full_like(a, NAN);
    } else {
        int deg = 0;
        while (norm1 > th[deg]) {
            deg++;
        }
        r = ct__mexp_poly(a, deg);
    }
    if (norm != &norm1) {
        ct__free(norm);
    }
    return r;
}

/* Under no grad (the node is LinalgMatrixExpBackward0): (*, 0, 0) a clone, (*, 1, 1) exp,
   else mexp on the matrices as (b, m, m). */
static ct_status ct__matrix_exp_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0];
    int64_t m = a->sizes[a->ndim - 1], flat[3] = {-1, m, m};
    ct_no_grad_begin();
    ct_scope_begin();
    ct_tensor *r = m == 0 ? ct_clone(a)
                   : m == 1 ? ct_exp(a)
                            : ct_reshape(ct__mexp(ct_reshape(a, flat, 3)), a->sizes, a->ndim);
    ct_status st = ct__composite_end(c, r);
    ct_no_grad_end();
    return st;
}

/* PyTorch's linalg_matrix_exp_differential (adjoint): the top right block of
   exp([[A^T, G], [0, A^T]]). */
static void ct__matrix_exp_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct_tensor *a = ct__saved(n, 0);
    if (!a || !ct__needs_grad(n, 0)) {
        return;
    }
    int64_t m = a->sizes[a->ndim - 1];
    const ct_tensor *at = ct_mt(a);
    const ct_tensor *top[2] = {at, g}, *bottom[2] = {ct_zeros_like(at), at};
    const ct_tensor *rows[2] = {ct_cat(top, 2, -1), ct_cat(bottom, 2, -1)};
    ct_tensor *e = ct_linalg_matrix_exp(ct_cat(rows, 2, -2));
    gi[0] = ct_narrow(ct_narrow(e, -2, 0, m), -1, m, m);
}

/* ---- einsum ---------------------------------------------------------------------------------
 * Labels: 'A'..'Z' are 0..25, 'a'..'z' 26..51 (PyTorch's order); CT__EIN_ELL marks the
 * ellipsis in a label list. The aligned layout every operand is permuted and viewed into has
 * the output dims first (in output order, the ellipsis dims where "..." stands), then the
 * summed labels in label order, then the ellipsis dims when the output has none. */
#define CT__EIN_LABELS 52
#define CT__EIN_ELL 64

typedef struct ct__ein_op {
    int lab[CT_MAX_DIMS + 1]; /* labels in order, CT__EIN_ELL where "..." is */
    int n, n_labels;          /* entries of lab, labels among them (any number: checked) */
    bool ell;
} ct__ein_op;

typedef struct ct__einsum_state {
    const char *eq;
    ct__ein_op *ops; /* one per operand (the public function's) */
    int out[CT_MAX_DIMS + 1], n_out;
    bool out_ell, any_ell;
    int count[CT__EIN_LABELS]; /* occurrences over the operands */
    int64_t size[CT__EIN_LABELS], ell_size[CT_MAX_DIMS];
    int ell_ndim;
    /* the aligned layout (meta): position of each label, first ellipsis position, number of
       output dims and of all dims */
    int pos[CT__EIN_LABELS], ell_base, n_out_dims, total;
} ct__einsum_state;

static int ct__ein_label(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26 : -1;
}

static char ct__ein_char(int label)
{
    return (char)(label < 26 ? 'A' + label : 'a' + label - 26);
}

/* Appends an entry to a label list of capacity CT_MAX_DIMS + 1 (more entries are only
   counted: the dimension check rejects them). */
static void ct__ein_push(int *lab, int *n, int v)
{
    if (*n < CT_MAX_DIMS + 1) {
        lab[*n] = v;
    }
    (*n)++;
}

/* "..." at eq[i] for operand k (-1: the output); else PyTorch's error. */
static bool ct__ein_ellipsis(const char *fn, const char *eq, size_t i, bool seen, int k)
{
    if (seen && k >= 0) {
        ct__fail(CT_ERR_VALUE, fn, "einsum(): found '.' for operand %d for which an ellipsis was "
                 "already found", k);
        return false;
    }
    if (seen) {
        ct__fail(CT_ERR_VALUE, fn, "einsum(): found '.' for output but an ellipsis (...) was "
                 "already found");
        return false;
    }
    if (eq[i + 1] != '.' || eq[i + 2] != '.') {
        if (k >= 0) {
            ct__fail(CT_ERR_VALUE, fn, "einsum(): found '.' for operand %d that is not part of "
                     "any ellipsis", k);
        } else {
            ct__fail(CT_ERR_VALUE, fn, "einsum(): found '.' for output that is not part of any "
                     "ellipsis (...)");
        }
        return false;
    }
    return true;
}

static bool ct__ein_invalid(const char *fn, size_t i)
{
    ct__fail(CT_ERR_VALUE, fn, "einsum(): invalid subscript given at index %zu in the equation "
             "string, subscripts must be in [a-zA-Z]", i);
    return false;
}

/* The operands' side of the equation; *end: where "->" starts (or the end). */
static bool ct__ein_parse_inputs(ct_op_call *c, ct__einsum_state *s, size_t *end)
{
    const char *eq = s->eq;
    int k = 0;
    size_t i = 0;
    for (; eq[i] && !(eq[i] == '-' && eq[i + 1] == '>'); i++) {
        ct__ein_op *o = &s->ops[k];
        int label = ct__ein_label(eq[i]);
        if (eq[i] == ' ') {
            continue;
        } else if (eq[i] == '.') {
            if (!ct__ein_ellipsis(c->fn, eq, i, o->ell, k)) {
                return false;
            }
            ct__ein_push(o->lab, &o->n, CT__EIN_ELL);
            o->ell = s->any_ell = true;
            i += 2;
        } else if (eq[i] == ',') {
            if (++k >= c->n_inputs) {
                ct__fail(CT_ERR_VALUE, c->fn, "einsum(): fewer operands were provided than "
                         "specified in the equation");
                return false;
            }
        } else if (label < 0) {
            return ct__ein_invalid(c->fn, i);
        } else {
            ct__ein_push(o->lab, &o->n, label);
            o->n_labels++;
            s->count[label]++;
        }
    }
    if (k != c->n_inputs - 1) {
        ct__fail(CT_ERR_VALUE, c->fn, "einsum(): more operands were provided than specified in "
                 "the equation");
        return false;
    }
    *end = i;
    return true;
}

/* Each operand has one dim per label (plus any number under its ellipsis). */
static bool ct__ein_check_dims(ct_op_call *c, ct__einsum_state *s)
{
    for (int k = 0; k < c->n_inputs; k++) {
        const ct__ein_op *o = &s->ops[k];
        int nd = c->inputs[k]->ndim;
        if (o->ell ? o->n_labels > nd : o->n_labels != nd) {
            ct__fail(CT_ERR_SHAPE, c->fn, "einsum(): the number of subscripts in the equation (%d) "
                     "%s the number of dimensions (%d) for operand %d%s", o->n_labels,
                     o->ell ? "is more than" : "does not match", nd, k,
                     o->ell ? "" : " and no ellipsis was given");
            return false;
        }
        if (o->ell && nd - o->n_labels > s->ell_ndim) {
            s->ell_ndim = nd - o->n_labels;
        }
    }
    return true;
}

/* The explicit output after "->" at eq[i], or the implicit one: the ellipsis, then the labels
   seen once in label order. */
static bool ct__ein_parse_output(ct_op_call *c, ct__einsum_state *s, size_t i)
{
    const char *eq = s->eq;
    bool in_out[CT__EIN_LABELS] = {false};
    if (!eq[i]) {
        if (s->any_ell) {
            ct__ein_push(s->out, &s->n_out, CT__EIN_ELL);
            s->out_ell = true;
        }
        for (int l = 0; l < CT__EIN_LABELS; l++) {
            if (s->count[l] == 1) {
                ct__ein_push(s->out, &s->n_out, l);
            }
        }
        return true;
    }
    for (i += 2; eq[i]; i++) {
        int label = ct__ein_label(eq[i]);
        if (eq[i] == ' ') {
            continue;
        } else if (eq[i] == '.') {
            if (!ct__ein_ellipsis(c->fn, eq, i, s->out_ell, -1)) {
                return false;
            }
            ct__ein_push(s->out, &s->n_out, CT__EIN_ELL);
            s->out_ell = true;
            i += 2;
        } else if (label < 0) {
            return ct__ein_invalid(c->fn, i);
        } else if (in_out[label] || !s->count[label]) {
            ct__fail(CT_ERR_VALUE, c->fn, "einsum(): output subscript %c %s", eq[i],
                     in_out[label] ? "appears more than once in the output"
                                   : "does not appear in the equation for any input operand");
            return false;
        } else {
            in_out[label] = true;
            ct__ein_push(s->out, &s->n_out, label);
        }
    }
    return true;
}

/* Sizes: a label repeated in an operand must match there; across operands sizes broadcast
   (1 against n), as the ellipsis dims (right-aligned) do. */
static bool ct__ein_check_sizes(ct_op_call *c, ct__einsum_state *s)
{
    for (int l = 0; l < CT__EIN_LABELS; l++) {
        s->size[l] = -1;
    }
    for (int d = 0; d < s->ell_ndim; d++) {
        s->ell_size[d] = 1;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        const ct__ein_op *o = &s->ops[k];
        const ct_tensor *t = c->inputs[k];
        int64_t local[CT__EIN_LABELS];
        bool seen[CT__EIN_LABELS] = {false};
        int d = 0, ne = t->ndim - o->n_labels;
        for (int e = 0; e < o->n; e++) {
            if (o->lab[e] == CT__EIN_ELL) {
                for (int j = 0; j < ne; j++, d++) {
                    int64_t *cur = &s->ell_size[s->ell_ndim - ne + j], sz = t->sizes[d];
                    if (sz != 1 && *cur != 1 && sz != *cur) {
                        ct__fail(CT_ERR_SHAPE, c->fn, "einsum(): dimension %d covered by ellipsis "
                                 "in operand %dhas size %lld which does not broadcast with "
                                 "previously seen ellipsis with size %lld for the respective "
                                 "dimension", j, k, (long long)sz, (long long)*cur);
                        return false;
                    }
                    *cur = sz != 1 ? sz : *cur;
                }
                continue;
            }
            int l = o->lab[e];
            int64_t sz = t->sizes[d++];
            if (seen[l]) {
                if (sz != local[l]) {
                    ct__fail(CT_ERR_SHAPE, c->fn, "einsum(): subscript %c is repeated for operand "
                             "%d but the sizes don't match, %lld != %lld", ct__ein_char(l), k,
                             (long long)sz, (long long)local[l]);
                    return false;
                }
                continue;
            }
            seen[l] = true;
            local[l] = sz;
            if (s->size[l] != -1 && s->size[l] != 1 && sz != 1 && sz != s->size[l]) {
                ct__fail(CT_ERR_SHAPE, c->fn, "einsum(): subscript %c has size %lld for operand %d "
                         "which does not broadcast with previously seen size %lld",
                         ct__ein_char(l), (long long)sz, k, (long long)s->size[l]);
                return false;
            }
            s->size[l] = s->size[l] == -1 || s->size[l] == 1 ? sz : s->size[l];
        }
    }
    return true;
}

/* The aligned layout (see the part's comment); false when it has more than CT_MAX_DIMS dims. */
static bool ct__ein_layout(ct_op_call *c, ct__einsum_state *s)
{
    bool in_out[CT__EIN_LABELS] = {false};
    int p = 0;
    s->ell_base = 0;
    for (int e = 0; e < s->n_out; e++) {
        if (s->out[e] == CT__EIN_ELL) {
            s->ell_base = p;
            p += s->ell_ndim;
        } else {
            in_out[s->out[e]] = true;
            s->pos[s->out[e]] = p++;
        }
    }
    s->n_out_dims = p;
    for (int l = 0; l < CT__EIN_LABELS; l++) {
        if (s->count[l] && !in_out[l]) {
            s->pos[l] = p++;
        }
    }
    if (!s->out_ell) {
        s->ell_base = p;
        p += s->ell_ndim;
    }
    s->total = p;
    if (p > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "einsum(): ctorch takes at most %d output and summed "
                 "dimensions, the equation has %d", CT_MAX_DIMS, p);
        return false;
    }
    return true;
}

static bool ct__einsum_meta(ct_op_call *c)
{
    ct__einsum_state *s = (ct__einsum_state *)c->state;
    size_t arrow = 0;
    if (!ct__ein_parse_inputs(c, s, &arrow) || !ct__ein_check_dims(c, s) ||
        !ct__ein_parse_output(c, s, arrow)) {
        return false;
    }
    for (int k = 1; k < c->n_inputs; k++) {
        if (c->inputs[k]->dtype != c->inputs[0]->dtype) {
            ct__fail(CT_ERR_DTYPE, c->fn, "expected scalar type %s but found %s",
                     ct__title(c->inputs[0]), ct__title(c->inputs[k]));
            return false;
        }
    }
    c->dtype = c->inputs[0]->dtype;
    return ct__ein_check_sizes(c, s) && ct__ein_layout(c, s);
}

/* The aligned position of each dim of operand k (labels and ellipsis dims) into code[]. */
static int ct__ein_codes(const ct__einsum_state *s, int k, int ndim, int *code)
{
    const ct__ein_op *o = &s->ops[k];
    int d = 0, ne = ndim - o->n_labels;
    for (int e = 0; e < o->n; e++) {
        if (o->lab[e] == CT__EIN_ELL) {
            for (int j = 0; j < ne; j++) {
                code[d++] = CT__EIN_LABELS + s->ell_base + s->ell_ndim - ne + j;
            }
        } else {
            code[d++] = o->lab[e];
        }
    }
    return d;
}

static int ct__ein_position(const ct__einsum_state *s, int code)
{
    return code < CT__EIN_LABELS ? s->pos[code] : code - CT__EIN_LABELS;
}

/* Operand k in the aligned layout (total dims, size 1 where it has none): diagonals of repeated
   labels, a permutation, a view adding the size-1 dims; in the current scope. */
static ct_tensor *ct__ein_align(const ct__einsum_state *s, int k, const ct_tensor *t)
{
    int code[CT_MAX_DIMS], nd = ct__ein_codes(s, k, t->ndim, code);
    for (int e = 0; e < nd && t; e++) {
        for (int d = e + 1; d < nd && t; d++) {
            if (code[d] != code[e]) {
                continue;
            }
            int moved = code[e], w = 0;
            t = ct__diagonal(t, e, d); /* the diagonal goes last */
            for (int j = 0; j < nd; j++) {
                if (j != e && j != d) {
                    code[w++] = code[j];
                }
            }
            code[w] = moved;
            nd = w + 1;
            e = -1; /* rescan */
            break;
        }
    }
    if (!t) {
        return NULL;
    }
    int64_t perm[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    bool used[CT_MAX_DIMS] = {false};
    for (int i = 0; i < nd; i++) { /* dims by aligned position */
        int best = -1;
        for (int j = 0; j < nd; j++) {
            if (!used[j] && (best < 0 || ct__ein_position(s, code[j]) <
                                             ct__ein_position(s, code[best]))) {
                best = j;
            }
        }
        used[best] = true;
        perm[i] = best;
    }
    for (int p = 0; p < s->total; p++) {
        shape[p] = 1;
    }
    for (int i = 0; i < nd; i++) {
        shape[ct__ein_position(s, code[perm[i]])] = t->sizes[perm[i]];
    }
    return ct_reshape(ct_permute(t, perm, nd), shape, s->total);
}

/* a dims listed in order (dims of size 1 elsewhere) reshaped to (rows, ...): the permutation
   puts the listed groups first; in the current scope. */
static ct_tensor *ct__ein_group(const ct_tensor *t, const int64_t *order, int n, const int64_t *m3)
{
    int64_t perm[CT_MAX_DIMS];
    bool listed[CT_MAX_DIMS] = {false};
    int k = 0;
    for (int i = 0; i < n; i++) {
        perm[k++] = order[i];
        listed[order[i]] = true;
    }
    for (int d = 0; d < t->ndim; d++) {
        if (!listed[d]) {
            perm[k++] = d;
        }
    }
    return ct_reshape(ct_permute(t, perm, t->ndim), m3, 3);
}

/* PyTorch's sumproduct_pair on aligned operands: dims in both (batch), only in l, only in r,
   and summed ones (sum[d]) become one bmm (B, LO, S) @ (B, S, RO); the result back in the
   aligned layout with size 1 on the summed dims. No summed dim: the broadcast product. */
static ct_tensor *ct__ein_pair(const ct_tensor *l, const ct_tensor *r, const bool *sum,
                               int total)
{
    int64_t lo[CT_MAX_DIMS], ro[CT_MAX_DIMS], bo[CT_MAX_DIMS], so[CT_MAX_DIMS];
    int nl = 0, nr = 0, nb = 0, ns = 0;
    int64_t B = 1, LO = 1, RO = 1, S = 1;
    for (int d = 0; d < total; d++) {
        int64_t sl = l->sizes[d], sr = r->sizes[d];
        if (sum[d]) {
            so[ns++] = d;
            S *= sl;
        } else if (sl != 1 && sr != 1) {
            bo[nb++] = d;
            B *= sl;
        } else if (sl != 1) {
            lo[nl++] = d;
            LO *= sl;
        } else if (sr != 1) {
            ro[nr++] = d;
            RO *= sr;
        }
    }
    if (ns == 0) { /* nothing to contract: PyTorch's sumproduct_pair multiplies (bool too) */
        return ct_mul(l, r);
    }
    int64_t order[2 * CT_MAX_DIMS], ml[3] = {B, LO, S}, mr[3] = {B, S, RO};
    memcpy(order, bo, sizeof(int64_t) * (size_t)nb);
    memcpy(order + nb, lo, sizeof(int64_t) * (size_t)nl);
    memcpy(order + nb + nl, so, sizeof(int64_t) * (size_t)ns);
    ct_tensor *a = ct__ein_group(l, order, nb + nl + ns, ml);
    memcpy(order + nb, so, sizeof(int64_t) * (size_t)ns);
    memcpy(order + nb + ns, ro, sizeof(int64_t) * (size_t)nr);
    ct_tensor *b = ct__ein_group(r, order, nb + ns + nr, mr);
    ct_tensor *p = ct_bmm(a, b);
    /* (B, LO, RO) -> (batch dims, l dims, r dims) -> the aligned order -> the aligned shape */
    int64_t kept[CT_MAX_DIMS], ks[CT_MAX_DIMS], perm[CT_MAX_DIMS], shape[CT_MAX_DIMS];
    int nk = 0;
    for (int g = 0; g < 3; g++) {
        const int64_t *dims = g == 0 ? bo : g == 1 ? lo : ro;
        const ct_tensor *src = g == 2 ? r : l;
        for (int i = 0; i < (g == 0 ? nb : g == 1 ? nl : nr); i++) {
            kept[nk] = dims[i];
            ks[nk++] = src->sizes[dims[i]];
        }
    }
    for (int d = 0, i = 0; d < total; d++) {
        shape[d] = 1;
        for (int j = 0; j < nk; j++) {
            if (kept[j] == d) {
                perm[i++] = j;
                shape[d] = ks[j];
            }
        }
    }
    return ct_reshape(ct_permute(ct_reshape(p, ks, nk), perm, nk), shape, total);
}

/* Sums t over dims (keepdim) where it is larger than 1; in the current scope. */
static ct_tensor *ct__ein_sum(const ct_tensor *t, const int64_t *dims, int n)
{
    int64_t keep[CT_MAX_DIMS];
    int k = 0;
    for (int i = 0; t && i < n; i++) {
        if (t->sizes[dims[i]] != 1) {
            keep[k++] = dims[i];
        }
    }
    return k && t ? ct_sum_dims(t, keep, k, true) : (ct_tensor *)(uintptr_t)t;
}

/* Left to right: before operand k joins, summed dims used by no later operand leave (from the
   side that has them alone), the rest of them are contracted in the pair. */
static ct_status ct__einsum_composite(ct_op_call *c)
{
    const ct__einsum_state *s = (const ct__einsum_state *)c->state;
    int last[CT_MAX_DIMS], code[CT_MAX_DIMS];
    for (int d = 0; d < s->total; d++) {
        last[d] = -1;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        int nd = ct__ein_codes(s, k, c->inputs[k]->ndim, code);
        for (int i = 0; i < nd; i++) {
            last[ct__ein_position(s, code[i])] = k;
        }
    }
    ct_scope_begin();
    ct_tensor *r = ct__ein_align(s, 0, c->inputs[0]);
    for (int k = 1; k < c->n_inputs && r; k++) {
        ct_tensor *t = ct__ein_align(s, k, c->inputs[k]);
        int64_t done[CT_MAX_DIMS], only_r[CT_MAX_DIMS], only_t[CT_MAX_DIMS];
        int nd = 0, nr = 0, nt = 0;
        bool sum[CT_MAX_DIMS] = {false};
        for (int d = s->n_out_dims; d < s->total && t; d++) {
            if (last[d] < k) {
                done[nd++] = d;
            } else if (last[d] == k) {
                if (r->sizes[d] == 1) {
                    only_t[nt++] = d;
                } else if (t->sizes[d] == 1) {
                    only_r[nr++] = d;
                } else {
                    sum[d] = true;
                }
            }
        }
        memcpy(done + nd, only_r, sizeof(int64_t) * (size_t)nr);
        r = ct__ein_pair(ct__ein_sum(r, done, nd + nr), ct__ein_sum(t, only_t, nt), sum, s->total);
    }
    if (r && c->n_inputs > 1) { /* the summed dims have size 1 by now */
        r = ct_reshape(r, r->sizes, s->n_out_dims);
    } else if (r && s->total > s->n_out_dims) {
        int64_t rest[CT_MAX_DIMS];
        for (int d = s->n_out_dims; d < s->total; d++) {
            rest[d - s->n_out_dims] = d;
        }
        r = ct_sum_dims(r, rest, s->total - s->n_out_dims, false);
    }
    return ct__composite_end(c, r);
}
#undef CT__EIN_LABELS
#undef CT__EIN_ELL

/* ---- float32 matmul precision -------------------------------------------------------------- */
static const char *const ct__precisions[3] = {"highest", "high", "medium"};
static int ct__precision = 0; /* index into ct__precisions; the CPU GEMM does not read it */

ct_status ct_set_float32_matmul_precision(const char *precision)
{
    if (ct__null("ct_set_float32_matmul_precision", precision)) {
        return ct_error_code();
    }
    for (int k = 0; k < 3; k++) {
        if (!strcmp(precision, ct__precisions[k])) {
            ct__precision = k;
            return CT_OK;
        }
    }
    return ct__fail(CT_ERR_VALUE, "ct_set_float32_matmul_precision", "%s is not one of "
                    "'highest', 'high', or 'medium'; the current setFloat32MatmulPrecision call "
                    "has no effect", precision);
}

const char *ct_get_float32_matmul_precision(void) { return ct__precisions[ct__precision]; }

/* ---- descriptors (issue 7, linalg T2) ------------------------------------------------------ */
#define CT__LA_OP(SYM, NAME, SCHEMA, API, VAR, META, K, COMP, NODE, BW, SAVE, RECORD, FLOPS)       \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, VAR,  \
                                       0u, NULL, META, K, COMP, NODE, CT__BACKWARD(BW), SAVE,  \
                                       RECORD, FLOPS};
#define CT__LA_COMPOSITE(SYM, SCHEMA, API, VAR, META)                                             \
    CT__LA_OP(SYM, "aten::" #SYM, SCHEMA, API, VAR, META, CT__K_NONE, ct__##SYM##_composite,      \
              NULL, NULL, 0u, NULL, NULL)
CT__LA_OP(baddbmm, "aten::baddbmm", "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar "
          "beta=1, Scalar alpha=1) -> Tensor", "ct_baddbmm", CT__ADD_BADDBMM, ct__baddbmm_meta,
          CT__K_NUMERIC(ct__addgemm_kernel), NULL, "BaddbmmBackward0", ct__addgemm_backward, 0u,
          ct__addgemm_record, ct__flops_12)
CT__LA_OP(addbmm, "aten::addbmm", "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar "
          "beta=1, Scalar alpha=1) -> Tensor", "ct_addbmm", CT__ADD_ADDBMM, ct__addbmm_meta,
          CT__K_NUMERIC(ct__addgemm_kernel), NULL, "AddbmmBackward0", ct__addgemm_backward, 0u,
          ct__addgemm_record, ct__flops_12)
CT__LA_OP(addmv, "aten::addmv", "addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, "
          "Scalar alpha=1) -> Tensor", "ct_addmv", CT__ADD_ADDMV, ct__addmv_meta,
          CT__K_NUMERIC(ct__addgemm_kernel), NULL, "AddmvBackward0", ct__addgemm_backward, 0u,
          ct__addgemm_record, ct__flops_12)
CT__LA_COMPOSITE(addr, "addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar "
                 "alpha=1) -> Tensor", "ct_addr", 0, ct__addr_meta)
CT__LA_COMPOSITE(outer, "outer(Tensor self, Tensor vec2) -> Tensor", "ct_outer", 0,
                 ct__outer_meta)
CT__LA_COMPOSITE(inner, "inner(Tensor self, Tensor other) -> Tensor", "ct_inner", 0,
                 ct__inner_meta)
CT__LA_COMPOSITE(vdot, "vdot(Tensor self, Tensor other) -> Tensor", "ct_vdot", 0, ct__vdot_meta)
CT__LA_COMPOSITE(einsum, "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
                 "ct_einsum", 0, ct__einsum_meta)
CT__LA_COMPOSITE(tensordot, "tensordot(Tensor self, Tensor other, int[] dims_self, int[] "
                 "dims_other) -> Tensor", "ct_tensordot ct_inner", 0, ct__tensordot_meta)
CT__LA_COMPOSITE(kron, "kron(Tensor self, Tensor other) -> Tensor", "ct_kron", 0, ct__kron_meta)
CT__LA_COMPOSITE(trace, "trace(Tensor self) -> Tensor", "ct_trace", 0, ct__trace_meta)
CT__LA_COMPOSITE(cross, "cross(Tensor self, Tensor other, int? dim=None) -> Tensor", "ct_cross", 0,
                 ct__cross_meta)
CT__LA_COMPOSITE(linalg_cross, "linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",
                 "ct_cross", 1, ct__cross_meta)
CT__LA_COMPOSITE(linalg_multi_dot, "linalg_multi_dot(Tensor[] tensors) -> Tensor",
                 "ct_linalg_multi_dot", 0, ct__multi_dot_meta)
CT__LA_COMPOSITE(linalg_matrix_power, "linalg_matrix_power(Tensor self, int n) -> Tensor",
                 "ct_linalg_matrix_power", 0, ct__matrix_power_meta)
CT__LA_OP(linalg_matrix_exp, "aten::linalg_matrix_exp", "linalg_matrix_exp(Tensor self) -> Tensor",
          "ct_linalg_matrix_exp", 0, ct__matrix_exp_meta, CT__K_NONE, ct__matrix_exp_composite,
          "LinalgMatrixExpBackward0", ct__matrix_exp_backward, 1u, NULL, NULL)
#undef CT__LA_COMPOSITE
#undef CT__LA_OP

/* ---- public functions (issue 7, linalg T2) ------------------------------------------------- */
/* A call of op over the inputs a, b, m with the attributes beta and alpha. */
static ct_tensor *ct__call_beta_alpha(const ct_op *op, const char *fn, const ct_tensor *a,
                                      const ct_tensor *b, const ct_tensor *m, double beta,
                                      double alpha)
{
    const ct_tensor *in[3] = {a, b, m};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 3);
    ct__call_f(&c, beta);
    ct__call_f(&c, alpha);
    return ct__dispatch(&c);
}

ct_tensor *ct_baddbmm(const ct_tensor *input, const ct_tensor *batch1, const ct_tensor *batch2,
                      double beta, double alpha)
{
    return ct__call_beta_alpha(&ct__op_baddbmm, "ct_baddbmm", input, batch1, batch2, beta, alpha);
}

ct_tensor *ct_addbmm(const ct_tensor *input, const ct_tensor *batch1, const ct_tensor *batch2,
                     double beta, double alpha)
{
    return ct__call_beta_alpha(&ct__op_addbmm, "ct_addbmm", input, batch1, batch2, beta, alpha);
}

ct_tensor *ct_addmv(const ct_tensor *input, const ct_tensor *mat, const ct_tensor *vec,
                    double beta, double alpha)
{
    return ct__call_beta_alpha(&ct__op_addmv, "ct_addmv", input, mat, vec, beta, alpha);
}

ct_tensor *ct_addr(const ct_tensor *input, const ct_tensor *vec1, const ct_tensor *vec2,
                   double beta, double alpha)
{
    return ct__call_beta_alpha(&ct__op_addr, "ct_addr", input, vec1, vec2, beta, alpha);
}

ct_tensor *ct_outer(const ct_tensor *input, const ct_tensor *vec2)
{
    const ct_tensor *in[2] = {input, vec2};
    return ct__call_gemm(&ct__op_outer, "ct_outer", in, 2);
}

ct_tensor *ct_inner(const ct_tensor *input, const ct_tensor *other)
{
    const ct_tensor *in[2] = {input, other};
    return ct__call_gemm(&ct__op_inner, "ct_inner", in, 2);
}

ct_tensor *ct_vdot(const ct_tensor *input, const ct_tensor *other)
{
    const ct_tensor *in[2] = {input, other};
    return ct__call_gemm(&ct__op_vdot, "ct_vdot", in, 2);
}

ct_tensor *ct_einsum(const char *equation, const ct_tensor *const *operands, int n)
{
    const char *fn = "ct_einsum";
    if (ct__null(fn, equation) || ct__null(fn, operands)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "einsum(): must provide at least one operand");
        return NULL;
    }
    ct__einsum_state s;
    memset(&s, 0, sizeof s);
    s.eq = equation;
    s.ops = (ct__ein_op *)ct__calloc(sizeof(ct__ein_op) * (size_t)n);
    if (!s.ops) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return NULL;
    }
    ct_op_call c;
    ct__call_init(&c, &ct__op_einsum, fn, operands, n);
    c.state = &s;
    ct_tensor *r = ct__dispatch(&c);
    ct__free(s.ops);
    return r;
}

ct_tensor *ct_tensordot(const ct_tensor *a, const ct_tensor *b, const int64_t *dims_a, int na,
                        const int64_t *dims_b, int nb)
{
    const char *fn = "ct_tensordot";
    if (ct__null(fn, dims_a) || ct__null(fn, dims_b)) {
        return NULL;
    }
    const ct_tensor *in[2] = {a, b};
    ct__tensordot_state s;
    ct_op_call c;
    ct__call_init(&c, &ct__op_tensordot, fn, in, 2);
    ct__call_ints(&c, dims_a, na > 0 ? na : 0);
    ct__call_ints(&c, dims_b, nb > 0 ? nb : 0);
    c.state = &s;
    return ct__dispatch(&c);
}

ct_tensor *ct_kron(const ct_tensor *input, const ct_tensor *other)
{
    const ct_tensor *in[2] = {input, other};
    return ct__call_gemm(&ct__op_kron, "ct_kron", in, 2);
}

ct_tensor *ct_trace(const ct_tensor *input)
{
    return ct__call_gemm(&ct__op_trace, "ct_trace", &input, 1);
}

/* linalg_cross over a and b along dim, reported as fn's. */
static ct_tensor *ct__linalg_cross(const char *fn, const ct_tensor *a, const ct_tensor *b,
                                   int64_t dim)
{
    const ct_tensor *in[2] = {a, b};
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_cross, fn, in, 2);
    ct__call_i(&c, dim);
    return ct__dispatch(&c);
}

ct_tensor *ct_cross(const ct_tensor *input, const ct_tensor *other, const int64_t *dim)
{
    const ct_tensor *in[2] = {input, other};
    ct_op_call c;
    ct__call_init(&c, &ct__op_cross, "ct_cross", in, 2);
    ct__call_i(&c, dim ? *dim : 0);
    ct__call_i(&c, dim != NULL);
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_multi_dot(const ct_tensor *const *tensors, int n)
{
    const char *fn = "ct_linalg_multi_dot";
    if (ct__null(fn, tensors)) {
        return NULL;
    }
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, fn, "multi_dot(): expected at least 2 tensors but got %d",
                 n > 0 ? n : 0);
        return NULL;
    }
    return ct__call_gemm(&ct__op_linalg_multi_dot, fn, tensors, n);
}

ct_tensor *ct_linalg_matrix_power(const ct_tensor *A, int64_t n)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_linalg_matrix_power, "ct_linalg_matrix_power", &A, 1);
    ct__call_i(&c, n);
    return ct__dispatch(&c);
}

ct_tensor *ct_linalg_matrix_exp(const ct_tensor *A)
{
    return ct__call_gemm(&ct__op_linalg_matrix_exp, "ct_linalg_matrix_exp", &A, 1);
}
CT__GLUE_END
