/* tests/test_linalg2.c - issue 7's linalg T2 ops: baddbmm, addbmm, addmv, addr, outer, inner,
 * vdot, einsum, tensordot, kron, trace, cross, linalg_multi_dot, linalg_matrix_power,
 * linalg_matrix_exp and the float32 matmul precision: PyTorch's outputs and gradients
 * (tools/gen_golden_linalg2.py, tests/golden/linalg2_golden.h) on contiguous, transposed,
 * step-sliced and broadcast inputs, gradcheck and gradgradcheck, PyTorch's errors.
 */
#include "test.h"

typedef struct linalg2_input {
    int nd, how;  /* how: 0 contiguous, 1 transpose of the base's last two dims, 2 every other
                     element of the base's last dim */
    double scale; /* the input is base * scale (integers: 2 base truncated, bool: base > 0) */
    int64_t base_shape[4];
    const double *base, *grad;
} linalg2_input;

typedef struct linalg2_golden {
    const char *op, *eq;
    ct_dtype dtype;
    double beta, alpha;
    int grad;
    int n_ints;
    int64_t ints[4]; /* tensordot: dims_a then dims_b; cross: dim; matrix_power: n */
    int n_in;
    linalg2_input in[5];
    int ond;
    int64_t out_shape[4];
    ct_dtype out_dtype;
    const double *out;
} linalg2_golden;
#include "golden/linalg2_golden.h"

#define N_CASES ((int)(sizeof linalg2_golden_cases / sizeof linalg2_golden_cases[0]))

/* Input k of case g: its base in the case's dtype, then transposed or stepped. */
static ct_tensor *case_input(const linalg2_golden *g, int k)
{
    const linalg2_input *in = &g->in[k];
    double v[128];
    int64_t n = ct_test_numel(in->base_shape, in->nd);
    CHECK(n <= 128);
    memcpy(v, in->base, sizeof(double) * (size_t)(n < 128 ? n : 128));
    if (g->beta == 0 && k == 0 && n > 0) { /* beta == 0 must ignore a NaN in input */
        v[0] = NAN;
    }
    ct_tensor *b = ct_tensor_from_data(v, CT_FLOAT64, in->base_shape, in->nd);
    if (g->dtype == CT_BOOL) {
        b = ct_gt_scalar(b, 0);
    } else if (ct_dtype_is_floating_point(g->dtype)) {
        b = ct_to_dtype(ct_mul_scalar(b, in->scale), g->dtype);
    } else {
        b = ct_to_dtype(ct_mul_scalar(b, 2), g->dtype);
    }
    if (in->how == 1) {
        return ct_transpose(b, -2, -1);
    }
    if (in->how == 2) {
        return ct_slice(b, -1, 0, INT64_MAX, 2);
    }
    return b;
}

/* The case's op on its inputs. */
static ct_tensor *run_case(const linalg2_golden *g, ct_tensor *const *x)
{
    const char *op = g->op;
    if (!strcmp(op, "baddbmm")) {
        return ct_baddbmm(x[0], x[1], x[2], g->beta, g->alpha);
    }
    if (!strcmp(op, "addbmm")) {
        return ct_addbmm(x[0], x[1], x[2], g->beta, g->alpha);
    }
    if (!strcmp(op, "addmv")) {
        return ct_addmv(x[0], x[1], x[2], g->beta, g->alpha);
    }
    if (!strcmp(op, "addr")) {
        return ct_addr(x[0], x[1], x[2], g->beta, g->alpha);
    }
    if (!strcmp(op, "outer")) {
        return ct_outer(x[0], x[1]);
    }
    if (!strcmp(op, "inner")) {
        return ct_inner(x[0], x[1]);
    }
    if (!strcmp(op, "vdot")) {
        return ct_vdot(x[0], x[1]);
    }
    if (!strcmp(op, "einsum")) {
        return ct_einsum(g->eq, (const ct_tensor *const *)x, g->n_in);
    }
    if (!strcmp(op, "tensordot")) {
        int n = g->n_ints / 2;
        return ct_tensordot(x[0], x[1], g->ints, n, g->ints + n, n);
    }
    if (!strcmp(op, "kron")) {
        return ct_kron(x[0], x[1]);
    }
    if (!strcmp(op, "trace")) {
        return ct_trace(x[0]);
    }
    if (!strcmp(op, "cross")) {
        return ct_cross(x[0], x[1], g->n_ints ? g->ints : NULL);
    }
    if (!strcmp(op, "multi_dot")) {
        return ct_linalg_multi_dot((const ct_tensor *const *)x, g->n_in);
    }
    if (!strcmp(op, "matrix_power")) {
        return ct_linalg_matrix_power(x[0], g->ints[0]);
    }
    return ct_linalg_matrix_exp(x[0]);
}

/* Tolerances: exact for integers and bool; float32 relative 1e-5 (2e-4 for matrix_exp, whose
   squarings amplify rounding); float64 relative 1e-10. */
static void check_values(const linalg2_golden *g, int k, const ct_tensor *t, const int64_t *shape,
                         int nd, const double *want, const char *what)
{
    CHECK_MSG(ct_test_has_shape(t, shape, nd), "case %d (%s %s) %s: shape (%s)", k, g->op,
              g->eq ? g->eq : "", what, ct_error() ? ct_error() : "wrong sizes");
    if (!t) {
        ct_error_clear();
        return;
    }
    bool mexp = !strcmp(g->op, "matrix_exp");
    double rtol = g->dtype == CT_FLOAT32 ? (mexp ? 2e-4 : 1e-5)
                  : g->dtype == CT_FLOAT64 ? 1e-10 : 0;
    double atol = g->dtype == CT_FLOAT32 ? 1e-5 : g->dtype == CT_FLOAT64 ? 1e-12 : 0;
    if (!CHECK_TENSOR(ct_to_dtype(t, CT_FLOAT64), want, ct_test_numel(shape, nd), rtol, atol)) {
        fprintf(stderr, "    case %d: %s %s %s\n", k, g->op, g->eq ? g->eq : "", what);
    }
}

/* out, its dtype and, for float cases, the gradients of sum(out * w), w[k] = k % 7 - 3. */
static void check_case(int k)
{
    const linalg2_golden *g = &linalg2_golden_cases[k];
    ct_tensor *x[5] = {NULL, NULL, NULL, NULL, NULL};
    for (int i = 0; i < g->n_in; i++) {
        x[i] = case_input(g, i);
        if (g->grad) {
            x[i] = ct_requires_grad_(ct_detach(x[i]), true);
        }
    }
    ct_tensor *out = run_case(g, x);
    check_values(g, k, out, g->out_shape, g->ond, g->out, "output");
    if (!out) {
        return;
    }
    CHECK_MSG(ct_tensor_dtype(out) == g->out_dtype, "case %d (%s): dtype %s", k, g->op,
              ct_dtype_name(ct_tensor_dtype(out)));
    if (!g->grad) {
        return;
    }
    double wv[256];
    int64_t n = ct_numel(out);
    CHECK(n <= 256);
    for (int64_t i = 0; i < n && i < 256; i++) {
        wv[i] = (double)(i % 7 - 3);
    }
    ct_tensor *w = ct_to_dtype(ct_tensor_from_data(wv, CT_FLOAT64, ct_sizes(out), ct_dim(out)),
                               g->dtype);
    CHECK(ct_backward(ct_sum(ct_mul(out, w)), NULL, false) == CT_OK);
    for (int i = 0; i < g->n_in; i++) {
        const ct_tensor *gr = ct_grad(x[i]);
        if (!gr) { /* ct_addr with beta == 0 leaves input out (PyTorch: a zero gradient) */
            gr = ct_zeros_like(x[i]);
        }
        check_values(g, k, gr, ct_sizes(x[i]), ct_dim(x[i]), g->in[i].grad, "gradient");
    }
}

static void test_linalg2_golden(void)
{
    CHECK(N_CASES == 75);
    for (int k = 0; k < N_CASES; k++) {
        ct_scope_begin();
        check_case(k);
        ct_scope_end();
    }
}

/* ---- gradcheck ---------------------------------------------------------------------------- */
static ct_tensor *randn(const int64_t *s, int nd)
{
    return ct_randn(s, nd, CT_FLOAT64, NULL);
}

/* user: the equation of an einsum, a const char *; the ops read their inputs in order. */
static ct_tensor *gc_baddbmm(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_baddbmm(in[0], in[1], in[2], 0.5, -2.0);
}
static ct_tensor *gc_addbmm(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_addbmm(in[0], in[1], in[2], 1.5, 0.5);
}
static ct_tensor *gc_addmv(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_addmv(in[0], in[1], in[2], -1.0, 3.0);
}
static ct_tensor *gc_addr(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_addr(in[0], in[1], in[2], 2.0, 0.5);
}
static ct_tensor *gc_outer(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_outer(in[0], in[1]);
}
static ct_tensor *gc_inner(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_inner(in[0], in[1]);
}
static ct_tensor *gc_vdot(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_vdot(in[0], in[1]);
}
static ct_tensor *gc_einsum(ct_tensor *const *in, int n, void *user)
{
    return ct_einsum((const char *)user, (const ct_tensor *const *)in, n);
}
static ct_tensor *gc_tensordot(ct_tensor *const *in, int n, void *user)
{
    const int64_t da[2] = {0, 2}, db[2] = {1, 0};
    (void)n;
    (void)user;
    return ct_tensordot(in[0], in[1], da, 2, db, 2);
}
static ct_tensor *gc_kron(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_kron(in[0], in[1]);
}
static ct_tensor *gc_trace(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_trace(in[0]);
}
static ct_tensor *gc_cross(ct_tensor *const *in, int n, void *user)
{
    const int64_t dim = -1;
    (void)n;
    (void)user;
    return ct_cross(in[0], in[1], &dim);
}
static ct_tensor *gc_multi_dot(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    return ct_linalg_multi_dot((const ct_tensor *const *)in, n);
}
static ct_tensor *gc_matrix_power(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_linalg_matrix_power(in[0], (int64_t)(intptr_t)user);
}
static ct_tensor *gc_matrix_exp(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_linalg_matrix_exp(in[0]);
}

static void gc(const char *label, ct_gradcheck_fn fn, ct_tensor **in, int n, void *user)
{
    for (int k = 0; k < n; k++) {
        ct_requires_grad_(in[k], true);
    }
    CHECK_MSG(ct_gradcheck(fn, in, n, user, NULL), "gradcheck %s: %s", label,
              ct_error() ? ct_error() : "?");
    ct_error_clear();
}

static void test_linalg2_gradcheck(void)
{
    ct_scope_begin();
    const int64_t s3[1] = {3}, s4[1] = {4}, s34[2] = {3, 4}, s43[2] = {4, 3}, s33[2] = {3, 3};
    const int64_t s234[3] = {2, 3, 4}, s245[3] = {2, 4, 5}, s35[2] = {3, 5}, s15[2] = {1, 5};
    const int64_t s23[2] = {2, 3}, s22[2] = {2, 2}, s243[3] = {2, 4, 3}, s423[3] = {4, 2, 3};
    const int64_t s233[3] = {2, 3, 3}, p102[3] = {1, 0, 2}, s334[3] = {3, 3, 4};
    const int64_t s143[3] = {1, 4, 3};
    /* batch2 (2, 4, 5) transposed in memory */
    ct_tensor *b3[3] = {randn(s15, 2), randn(s234, 3),
                        ct_transpose(ct_contiguous(ct_transpose(randn(s245, 3), 1, 2)), 1, 2)};
    gc("baddbmm", gc_baddbmm, b3, 3, NULL);
    ct_tensor *a3[3] = {randn(s35, 2), randn(s234, 3), randn(s245, 3)};
    gc("addbmm", gc_addbmm, a3, 3, NULL);
    ct_tensor *mv[3] = {randn(s3, 1), ct_t(randn(s43, 2)), randn(s4, 1)};
    gc("addmv", gc_addmv, mv, 3, NULL);
    ct_tensor *r3[3] = {randn(s4, 1), randn(s3, 1), randn(s4, 1)};
    gc("addr", gc_addr, r3, 3, NULL);
    ct_tensor *o2[2] = {randn(s3, 1), randn(s4, 1)};
    gc("outer", gc_outer, o2, 2, NULL);
    ct_tensor *i2[2] = {randn(s234, 3), randn(s34, 2)};
    i2[1] = ct_narrow(randn(s34, 2), 0, 0, 2);
    gc("inner", gc_inner, i2, 2, NULL);
    ct_tensor *v2[2] = {randn(s4, 1), randn(s4, 1)};
    gc("vdot", gc_vdot, v2, 2, NULL);
    ct_tensor *e2[2] = {ct_t(randn(s43, 2)), randn(s43, 2)};
    gc("einsum ij,jk->ik", gc_einsum, e2, 2, (void *)"ij,jk->ik");
    ct_tensor *e1[1] = {randn(s233, 3)};
    gc("einsum bii->bi", gc_einsum, e1, 1, (void *)"bii->bi");
    ct_tensor *e3[3] = {randn(s23, 2), randn(s334, 3), randn(s34, 2)};
    gc("einsum ab,bcd,cd->a", gc_einsum, e3, 3, (void *)"ab,bcd,cd->a");
    ct_tensor *ee[2] = {randn(s243, 3), randn(s3, 1)};
    gc("einsum ...ij,j", gc_einsum, ee, 2, (void *)"...ij,j");
    ct_tensor *t2[2] = {randn(s234, 3), randn(s423, 3)};
    t2[1] = ct_permute(randn(s243, 3), p102, 3);
    gc("tensordot", gc_tensordot, t2, 2, NULL);
    ct_tensor *k2[2] = {randn(s23, 2), randn(s22, 2)};
    gc("kron", gc_kron, k2, 2, NULL);
    ct_tensor *tr[1] = {ct_t(randn(s34, 2))};
    gc("trace", gc_trace, tr, 1, NULL);
    ct_tensor *c2[2] = {randn(s243, 3), randn(s143, 3)};
    gc("cross", gc_cross, c2, 2, NULL);
    ct_tensor *md[4] = {randn(s3, 1), randn(s34, 2), randn(s43, 2), randn(s35, 2)};
    gc("multi_dot", gc_multi_dot, md, 4, NULL);
    ct_tensor *mp[1] = {ct_mul_scalar(randn(s233, 3), 0.5)};
    gc("matrix_power 5", gc_matrix_power, mp, 1, (void *)(intptr_t)5);
    gc("matrix_power 0", gc_matrix_power, mp, 1, (void *)(intptr_t)0);
    ct_tensor *me[1] = {randn(s33, 2)};
    gc("matrix_exp", gc_matrix_exp, me, 1, NULL);
    ct_tensor *mb[1] = {ct_mul_scalar(randn(s233, 3), 0.1)};
    gc("matrix_exp batch", gc_matrix_exp, mb, 1, NULL);
    ct_scope_end();
}

/* Double backward: the gradients (create_graph) of sum(f(x...) * w) with respect to the nx
   inputs x..., flattened and concatenated; the last input is w. */
typedef struct gg_case {
    ct_gradcheck_fn f;
    void *user;
    int nx;
} gg_case;

static ct_tensor *gc_gradgrad(ct_tensor *const *in, int n, void *user)
{
    const gg_case *c = (const gg_case *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = c->f(in, c->nx, c->user);
    const ct_tensor *go[1] = {in[n - 1]};
    ct_tensor *g[3] = {NULL, NULL, NULL}, *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, c->nx, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[3];
        for (int k = 0; k < c->nx; k++) {
            parts[k] = ct_flatten(g[k], 0, -1);
        }
        out = ct_cat(parts, c->nx, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void gg(const char *label, gg_case *c, ct_tensor **x)
{
    ct_tensor *in[4];
    for (int k = 0; k < c->nx; k++) {
        in[k] = ct_requires_grad_(x[k], true);
    }
    ct_no_grad_begin();
    ct_tensor *y = c->f(in, c->nx, c->user);
    ct_no_grad_end();
    CHECK(y != NULL);
    if (!y) {
        ct_error_clear();
        return;
    }
    in[c->nx] = ct_requires_grad_(ct_randn(ct_sizes(y), ct_dim(y), CT_FLOAT64, NULL), true);
    CHECK_MSG(ct_gradcheck(gc_gradgrad, in, c->nx + 1, c, NULL), "gradgradcheck %s: %s", label,
              ct_error() ? ct_error() : "?");
    ct_error_clear();
}

static void test_linalg2_gradgradcheck(void)
{
    ct_scope_begin();
    const int64_t s3[1] = {3}, s4[1] = {4}, s34[2] = {3, 4}, s234[3] = {2, 3, 4};
    const int64_t s245[3] = {2, 4, 5}, s35[2] = {3, 5}, s33[2] = {3, 3}, s235[3] = {2, 3, 5};
    gg_case baddbmm = {gc_baddbmm, NULL, 3}, addbmm = {gc_addbmm, NULL, 3};
    gg_case addmv = {gc_addmv, NULL, 3}, einsum = {gc_einsum, (void *)"bij,bjk->bk", 2};
    gg_case mexp = {gc_matrix_exp, NULL, 1};
    ct_tensor *b[3] = {randn(s235, 3), randn(s234, 3), randn(s245, 3)};
    gg("baddbmm", &baddbmm, b);
    ct_tensor *a[3] = {randn(s35, 2), randn(s234, 3), randn(s245, 3)};
    gg("addbmm", &addbmm, a);
    ct_tensor *m[3] = {randn(s3, 1), randn(s34, 2), randn(s4, 1)};
    gg("addmv", &addmv, m);
    ct_tensor *e[2] = {randn(s234, 3), randn(s245, 3)};
    gg("einsum", &einsum, e);
    ct_tensor *x[1] = {ct_mul_scalar(randn(s33, 2), 0.5)};
    gg("matrix_exp", &mexp, x);
    ct_scope_end();
}

/* The node names of the ops with their own derivative. */
static void test_linalg2_grad_fn(void)
{
    ct_scope_begin();
    const int64_t s234[3] = {2, 3, 4}, s245[3] = {2, 4, 5}, s35[2] = {3, 5}, s3[1] = {3};
    const int64_t s34[2] = {3, 4}, s4[1] = {4}, s33[2] = {3, 3};
    ct_tensor *b1 = ct_requires_grad_(randn(s234, 3), true), *b2 = randn(s245, 3);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_baddbmm(randn(s35, 2), b1, b2, 1, 1))),
                  "BaddbmmBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_addbmm(randn(s35, 2), b1, b2, 1, 1))),
                  "AddbmmBackward0"));
    ct_tensor *m = ct_requires_grad_(randn(s34, 2), true);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_addmv(randn(s3, 1), m, randn(s4, 1), 1, 1))),
                  "AddmvBackward0"));
    ct_tensor *e = ct_requires_grad_(randn(s33, 2), true);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_matrix_exp(e))),
                  "LinalgMatrixExpBackward0"));
    ct_scope_end();
}

/* ---- errors, in PyTorch's words ----------------------------------------------------------- */
static void test_linalg2_errors_products(void)
{
    ct_scope_begin();
    const int64_t s234[3] = {2, 3, 4}, s245[3] = {2, 4, 5}, s255[3] = {2, 5, 5}, s34[2] = {3, 4};
    const int64_t s236[3] = {2, 3, 6}, s345[3] = {3, 4, 5}, s45[2] = {4, 5}, s3[1] = {3};
    const int64_t s5[1] = {5}, s4[1] = {4}, s2[1] = {2};
    ct_tensor *b1 = randn(s234, 3), *b2 = randn(s245, 3), *x = randn(s5, 1);
    CHECK(ct_baddbmm(x, randn(s34, 2), b2, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "batch1 must be a 3D tensor");
    CHECK(ct_baddbmm(x, b1, randn(s255, 3), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected size for first two dimensions of batch2 tensor to be: "
                              "[2, 4] but got: [2, 5].");
    CHECK(ct_baddbmm(randn(s236, 3), b1, b2, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (5) must match the existing size "
                              "(6) at non-singleton dimension 2.  Target sizes: [2, 3, 5].  "
                              "Tensor sizes: [2, 3, 6]");
    CHECK(ct_baddbmm(ct_to_dtype(x, CT_FLOAT32), b1, b2, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Input dtypes must be the same, got: input float, batch1: double, "
                              "batch2: double");
    CHECK(ct_baddbmm(x, b1, ct_to_dtype(b2, CT_FLOAT32), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected scalar type Double but found Float");
    CHECK(ct_baddbmm(ct_to_dtype(x, CT_BOOL), ct_to_dtype(b1, CT_BOOL),
                     ct_to_dtype(b2, CT_BOOL), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"baddbmm\" not implemented for 'Bool'");

    ct_tensor *y = randn(s34, 2);
    CHECK(ct_addbmm(ct_narrow(randn(s45, 2), 1, 0, 5), b1, b2, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (3) must match the existing size "
                              "(4) at non-singleton dimension 0.  Target sizes: [3, 5].  Tensor "
                              "sizes: [4, 5]");
    CHECK(ct_addbmm(x, b1, randn(s345, 3), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "batch1 and batch2 must have same number of batches, got 2 and 3");
    CHECK(ct_addbmm(x, b1, randn(s255, 3), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Incompatible matrix sizes for bmm (3x4 and 5x5)");
    CHECK(ct_addbmm(ct_to_dtype(x, CT_FLOAT32), b1, b2, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "self and mat2 must have the same dtype, but got Float and Double");

    CHECK(ct_addmv(randn(s3, 1), y, x, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "size mismatch, got input (3), mat (3x4), vec (5)");
    CHECK(ct_addmv(randn(s2, 1), y, randn(s4, 1), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "size mismatch, got input (2), mat (3x4), vec (4)");
    CHECK(ct_addmv(randn(s3, 1), randn(s3, 1), randn(s4, 1), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "vector + matrix @ vector expected, got 1, 1, 1");
    CHECK(ct_addmv(randn(s3, 1), y, ct_to_dtype(randn(s4, 1), CT_FLOAT32), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "addmv input tensors must have the same dtype, but got Double, "
                              "Double, and Float");

    CHECK(ct_addr(y, y, randn(s4, 1), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "addr: Expected 1-D argument vec1, but got 2-D");
    CHECK(ct_addr(y, randn(s3, 1), y, 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "addr: Expected 1-D argument vec2, but got 2-D");
    CHECK(ct_addr(ct_t(randn(s45, 2)), randn(s3, 1), randn(s4, 1), 1, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (3) must match the existing size "
                              "(5) at non-singleton dimension 0.  Target sizes: [3, 4].  Tensor "
                              "sizes: [5, 4]");
    ct_tensor *i3 = ct_to_dtype(randn(s3, 1), CT_INT32), *i4 = ct_to_dtype(randn(s4, 1), CT_INT32);
    CHECK(ct_addr(ct_to_dtype(y, CT_INT32), i3, i4, 1.5, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE,
                "For integral input tensors, argument beta must not be a floating point number.");
    CHECK(ct_addr(ct_to_dtype(y, CT_INT32), i3, i4, 1, 0.5) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "argument alpha must not be a floating point number.");

    CHECK(ct_outer(y, x) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "outer: Expected 1-D argument self, but got 2-D");
    CHECK(ct_outer(x, ct_select(x, 0, 0)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "outer: Expected 1-D argument vec2, but got 0-D");
    CHECK(ct_inner(y, randn(s245, 3)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "inner() the last dimension must match on both input tensors but "
                              "got shapes [3, 4] and [2, 4, 5]");
    CHECK(ct_inner(y, ct_to_dtype(y, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "both inputs should have same dtype");
    CHECK(ct_vdot(randn(s3, 1), x) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "inconsistent tensor size, expected tensor [3] and src [5] to have "
                              "the same number of elements, but got 3 and 5 elements respectively");
    CHECK(ct_vdot(x, ct_to_dtype(x, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE,
                "dot : expected both vectors to have same dtype, but found Double and Float");
    CHECK(ct_vdot(y, x) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "1D tensors expected, but got 2D and 1D tensors");
    ct_scope_end();
}

static void test_linalg2_errors_einsum(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s45[2] = {4, 5}, s35[2] = {3, 5}, s234[3] = {2, 3, 4};
    const int64_t s345[3] = {3, 4, 5}, s3[1] = {3};
    ct_tensor *a = randn(s34, 2), *b = randn(s45, 2);
    const ct_tensor *ab[2] = {a, b}, *a35[2] = {a, randn(s35, 2)}, *bad_b[2] = {a, NULL};
    const ct_tensor *ell[2] = {randn(s234, 3), randn(s345, 3)};
    const ct_tensor *mixed[2] = {a, ct_to_dtype(b, CT_FLOAT32)};
    struct {
        const char *eq;
        const ct_tensor *const *ops;
        int n;
        ct_status code;
        const char *msg;
    } cases[] = {
        {"ij,jk->ik", ab, 1, CT_ERR_VALUE,
         "einsum(): fewer operands were provided than specified in the equation"},
        {"ij", ab, 2, CT_ERR_VALUE,
         "einsum(): more operands were provided than specified in the equation"},
        {"ij,jk->ik", a35, 2, CT_ERR_SHAPE, "einsum(): subscript j has size 3 for operand 1 which "
                                            "does not broadcast with previously seen size 4"},
        {"ijk,jk->ik", ab, 2, CT_ERR_SHAPE,
         "einsum(): the number of subscripts in the equation (3) does not match the number of "
         "dimensions (2) for operand 0 and no ellipsis was given"},
        {"ijk...,jk->ik", ab, 2, CT_ERR_SHAPE,
         "einsum(): the number of subscripts in the equation (3) is more than the number of "
         "dimensions (2) for operand 0"},
        {"ij,jk->il", ab, 2, CT_ERR_VALUE,
         "einsum(): output subscript l does not appear in the equation for any input operand"},
        {"ij,jk->ii", ab, 2, CT_ERR_VALUE,
         "einsum(): output subscript i appears more than once in the output"},
        {"i1,jk->ik", ab, 2, CT_ERR_VALUE, "einsum(): invalid subscript given at index 1 in the "
                                           "equation string, subscripts must be in [a-zA-Z]"},
        {"ij,jk->ik->", ab, 2, CT_ERR_VALUE, "einsum(): invalid subscript given at index 9"},
        {"ij,jk->i.k", ab, 2, CT_ERR_VALUE,
         "einsum(): found '.' for output that is not part of any ellipsis (...)"},
        {"i...->...i...", ab, 1, CT_ERR_VALUE,
         "einsum(): found '.' for output but an ellipsis (...) was already found"},
        {"i..j,jk->ik", ab, 2, CT_ERR_VALUE,
         "einsum(): found '.' for operand 0 that is not part of any ellipsis"},
        {"...i...,jk->ik", ab, 2, CT_ERR_VALUE,
         "einsum(): found '.' for operand 0 for which an ellipsis was already found"},
        {"...ij,...jk->...ik", ell, 2, CT_ERR_SHAPE,
         "einsum(): dimension 0 covered by ellipsis in operand 1has size 3 which does not "
         "broadcast with previously seen ellipsis with size 2 for the respective dimension"},
        {"ii", ab, 1, CT_ERR_SHAPE,
         "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 4 != 3"},
        {"ij,jk->ik", mixed, 2, CT_ERR_DTYPE, "expected scalar type Double but found Float"},
        {"ij,jk->ik", bad_b, 2, CT_ERR_NULL_ARG, "ct_einsum"},
        {"abcde,fghij->acegi", ab, 2, CT_ERR_SHAPE, "number of dimensions"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK_MSG(ct_einsum(cases[k].eq, cases[k].ops, cases[k].n) == NULL, "%s", cases[k].eq);
        CHECK_ERROR(cases[k].code, cases[k].msg);
    }
    const ct_tensor *bools[2] = {ct_to_dtype(a, CT_BOOL), ct_to_dtype(b, CT_BOOL)};
    CHECK(ct_einsum("ij,jk", bools, 2) == NULL); /* integers: tests/test_imm.c */
    CHECK_ERROR(CT_ERR_DTYPE, "\"bmm\" not implemented for 'Bool'");
    const int64_t s11111[5] = {1, 1, 1, 1, 1};
    const ct_tensor *wide[2] = {randn(s11111, 5), randn(s11111, 5)};
    CHECK(ct_einsum("abcde,fghij->", wide, 2) == NULL); /* 10 summed dimensions */
    CHECK_ERROR(CT_ERR_SHAPE, "einsum(): ctorch takes at most 8 output and summed dimensions, the "
                              "equation has 10");
    CHECK(ct_einsum("i", ab, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "einsum(): must provide at least one operand");
    (void)s3;
    ct_scope_end();
}

static void test_linalg2_errors_others(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s45[2] = {4, 5}, s234[3] = {2, 3, 4}, s55[2] = {5, 5};
    const int64_t s24[2] = {2, 4}, s33[2] = {3, 3}, s13[2] = {1, 3}, s5[1] = {5};
    const int64_t s22222[5] = {2, 1, 1, 1, 2};
    const int64_t d1[1] = {1}, d0[1] = {0}, d10[2] = {1, 0}, d11[2] = {1, 1}, d9[1] = {9};
    ct_tensor *a = randn(s34, 2), *b = randn(s45, 2);
    CHECK(ct_tensordot(a, b, d10, 2, d0, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "both dimension lists should have same length");
    CHECK(ct_tensordot(a, b, d0, 1, d0, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "contracted dimensions need to match, but first has size 3 in dim 0 "
                              "and second has size 4 in dim 0");
    CHECK(ct_tensordot(a, b, d11, 2, d10, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "dim 1 appears multiple times in the list of dims");
    CHECK(ct_tensordot(a, ct_to_dtype(b, CT_FLOAT32), d1, 1, d0, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "both inputs should have same dtype");
    CHECK(ct_tensordot(a, b, d9, 1, d0, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                              "got 9)");

    CHECK(ct_kron(randn(s22222, 5), a) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "kron: ctorch takes operands of at most 4 dimensions, got 5 and 2");
    CHECK(ct_trace(randn(s234, 3)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "trace: expected a matrix, but got tensor with dim 3");
    CHECK(ct_trace(ct_gt_scalar(a, 0)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"trace\" not implemented for 'Bool'");

    const int64_t dm1 = -1, d5 = 5;
    CHECK(ct_cross(randn(s24, 2), randn(s24, 2), NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "no dimension of size 3 in input");
    CHECK(ct_cross(randn(s33, 2), randn(s13, 2), NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.cross: inputs dimension 0 must have length 3. Got 3 and 1");
    CHECK(ct_cross(randn(s33, 2), randn(s234, 3), &dm1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.cross: inputs must have the same number of dimensions.");
    CHECK(ct_cross(a, a, &dm1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4");
    CHECK(ct_cross(a, a, &d5) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                              "got 5)");
    CHECK(ct_cross(randn(s33, 2), ct_to_dtype(randn(s33, 2), CT_FLOAT32), &dm1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected scalar type Double but found Float");

    const ct_tensor *one[1] = {a}, *bad[2] = {a, randn(s55, 2)}, *first3[2] = {randn(s234, 3), b};
    const ct_tensor *mid1[3] = {a, randn(s5, 1), b}, *last3[2] = {a, randn(s234, 3)};
    const ct_tensor *mixed[2] = {a, ct_to_dtype(b, CT_FLOAT32)};
    CHECK(ct_linalg_multi_dot(one, 1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "multi_dot(): expected at least 2 tensors but got 1");
    CHECK(ct_linalg_multi_dot(one, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "multi_dot(): expected at least 2 tensors but got 0");
    CHECK(ct_linalg_multi_dot(bad, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "multi_dot(): tensors 0 and 1 with shapes [3, 4] and [5, 5] cannot "
                              "be multiplied");
    CHECK(ct_linalg_multi_dot(first3, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "multi_dot(): the first tensor must be 1D or 2D but got 3D");
    CHECK(ct_linalg_multi_dot(last3, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "multi_dot(): the last tensor must be 1D or 2D but got 3D");
    CHECK(ct_linalg_multi_dot(mid1, 3) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "multi_dot(): tensor 1 must be 2D but got 1D");
    CHECK(ct_linalg_multi_dot(mixed, 2) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "multi_dot(): all tensors must have be the same dtype but tensor 0 "
                              "is double and tensor 1 float");

    CHECK(ct_linalg_matrix_power(a, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.matrix_power: A must be batches of square matrices, but "
                              "they are 3 by 4 matrices");
    CHECK(ct_linalg_matrix_power(randn(s5, 1), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE,
                "linalg.matrix_power: The input tensor A must have at least 2 dimensions.");
    CHECK(ct_linalg_matrix_power(ct_to_dtype(randn(s33, 2), CT_INT64), -1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "linalg.inv: Expected a floating point or complex tensor as input. "
                              "Got Long");
    CHECK(ct_linalg_matrix_power(ct_to_dtype(randn(s33, 2), CT_BOOL), 2) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    CHECK(ct_tensordot(ct_to_dtype(a, CT_BOOL), ct_to_dtype(b, CT_BOOL), d1, 1, d0, 1) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    CHECK(ct_linalg_matrix_exp(a) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.matrix_exp: A must be batches of square matrices, but they "
                              "are 3 by 4 matrices");
    CHECK(ct_linalg_matrix_exp(ct_to_dtype(randn(s33, 2), CT_INT32)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "linalg.matrix_exp: Expected a floating point or complex tensor as "
                              "input. Got Int");
    ct_scope_end();
}

/* ---- semantics beyond the fixtures ------------------------------------------------------- */
/* einsum's pair contraction is one GEMM: the same bits as mm / bmm; addbmm over no batch is
   beta * input; matrix_power and matrix_exp of integer and empty inputs. */
static void test_linalg2_semantics(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s45[2] = {4, 5}, s234[3] = {2, 3, 4}, s245[3] = {2, 4, 5};
    const int64_t s035[3] = {0, 3, 4}, s045[3] = {0, 4, 5}, s35[2] = {3, 5};
    ct_tensor *a = ct_t(randn(s45, 2)), *b = randn(s45, 2);
    a = ct_narrow(a, 0, 0, 5);
    const ct_tensor *ab[2] = {ct_narrow(a, 0, 0, 3), ct_t(ct_narrow(ct_t(b), 0, 0, 5))};
    ct_tensor *mm = ct_mm(ab[0], ab[1]), *ein = ct_einsum("ij,jk->ik", ab, 2);
    CHECK(ein && ct_equal(ein, mm));
    const ct_tensor *bb[2] = {randn(s234, 3), randn(s245, 3)};
    CHECK(ct_equal(ct_einsum("bij,bjk->bik", bb, 2), ct_bmm(bb[0], bb[1])));

    ct_tensor *in = randn(s35, 2);
    ct_tensor *empty = ct_addbmm(in, randn(s035, 3), randn(s045, 3), 2.5, 1);
    CHECK(empty && ct_equal(empty, ct_mul_scalar(in, 2.5)));
    ct_tensor *zeroed = ct_addbmm(ct_full_like(in, NAN), randn(s035, 3), randn(s045, 3), 0, 1);
    CHECK(zeroed && ct_item(ct_sum(ct_abs(zeroed))) == 0);

    ct_tensor *eye = ct_linalg_matrix_power(ct_to_dtype(randn(s34, 2), CT_INT64), 0);
    CHECK(eye == NULL); /* not square */
    CHECK_ERROR(CT_ERR_SHAPE, "square matrices");
    const int64_t s233[3] = {2, 3, 3};
    eye = ct_linalg_matrix_power(ct_to_dtype(randn(s233, 3), CT_INT32), 0);
    CHECK(eye && ct_tensor_dtype(eye) == CT_INT32 &&
          ct_equal(eye, ct_expand(ct_eye(3, 3, CT_INT32), s233, 3)));
    /* ct_cross with dim NULL picks the first dimension of size 3 */
    const int64_t s43[2] = {4, 3}, s343[3] = {3, 4, 3}, d0 = 0;
    ct_tensor *x = randn(s343, 3), *y = randn(s343, 3);
    CHECK(ct_equal(ct_cross(x, y, NULL), ct_cross(x, y, &d0)));
    (void)s43;
    ct_scope_end();
}

/* ct_set/get_float32_matmul_precision: PyTorch's names, "highest" by default; no effect on the
   CPU GEMM (the same bits at every setting). */
static void test_linalg2_matmul_precision(void)
{
    ct_scope_begin();
    CHECK(!strcmp(ct_get_float32_matmul_precision(), "highest"));
    const int64_t s[2] = {17, 33};
    ct_tensor *a = ct_randn(s, 2, CT_FLOAT32, NULL), *ref = ct_mm(a, ct_t(a));
    const char *names[3] = {"high", "medium", "highest"};
    for (int k = 0; k < 3; k++) {
        CHECK(ct_set_float32_matmul_precision(names[k]) == CT_OK);
        CHECK(!strcmp(ct_get_float32_matmul_precision(), names[k]));
        CHECK(ct_equal(ct_mm(a, ct_t(a)), ref));
    }
    CHECK(ct_set_float32_matmul_precision("low") == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "low is not one of 'highest', 'high', or 'medium'; the current "
                              "setFloat32MatmulPrecision call has no effect");
    CHECK(!strcmp(ct_get_float32_matmul_precision(), "highest"));
    ct_scope_end();
}

void test_linalg2(void)
{
    RUN(test_linalg2_golden);
    RUN(test_linalg2_gradcheck);
    RUN(test_linalg2_gradgradcheck);
    RUN(test_linalg2_grad_fn);
    RUN(test_linalg2_errors_products);
    RUN(test_linalg2_errors_einsum);
    RUN(test_linalg2_errors_others);
    RUN(test_linalg2_semantics);
    RUN(test_linalg2_matmul_precision);
}
