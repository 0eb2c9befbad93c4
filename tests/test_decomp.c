/* tests/test_decomp.c - torch.linalg's decompositions (ops/decomp.c): det, slogdet, logdet,
 * inv, solve, solve_triangular, cholesky, qr, eigh, eigvalsh, svd, svdvals, matrix_norm, norm,
 * matrix_power. PyTorch's outputs and gradients (tools/gen_golden_decomp.py,
 * tests/golden/decomp_golden.h) on contiguous, transposed, step-sliced, batched and broadcast
 * inputs in float32 and float64, eigenvectors and singular vectors compared after the sign
 * normalization the generator documents; reconstructions on larger matrices (the blocked LU),
 * gradcheck in float64, PyTorch's errors, node names and thread-count invariance.
 */
#include "test.h"

#include <stdlib.h>

typedef struct decomp_golden {
    const char *op, *arg; /* arg: qr's mode, eigh's UPLO, a norm's ord */
    int flags;            /* per op: left/upper/unitriangular/full_matrices/keepdim/dims, n */
    ct_dtype dtype;
    int how; /* 0 contiguous, 1 transposed base, 2 every other column of the base */
    int nda;
    int64_t a_shape[4];
    int ndb;
    int64_t b_shape[4];
    int64_t nout;
    int grad;
    const double *a, *b, *out, *ga, *gb;
} decomp_golden;
#include "golden/decomp_golden.h"

#define N_CASES ((int)(sizeof decomp_golden_cases / sizeof decomp_golden_cases[0]))

/* ---- the ops as the generator runs them ----------------------------------------------------- */
typedef struct op_case {
    const char *op, *arg;
    int flags;
} op_case;

#define MAX_OUT 3

/* Runs the case's op on in; outs (n_out) to compare, terms (n_term) for the loss, sq[k]: the
   term is squared (eigenvectors and singular vectors). Returns false after an error. */
static bool run_op(const op_case *c, ct_tensor *const *in, ct_tensor **outs, int *n_out,
                   ct_tensor **terms, bool *sq, int *n_term)
{
    const char *op = c->op;
    ct_tensor *r = NULL, *x = NULL, *y = NULL;
    int f = c->flags;
    *n_out = *n_term = 1;
    sq[0] = sq[1] = sq[2] = false;
    if (!strcmp(op, "det")) {
        r = ct_linalg_det(in[0]);
    } else if (!strcmp(op, "slogdet")) {
        r = ct_linalg_slogdet(in[0], &x);
        outs[1] = terms[0] = x;
        *n_out = 2;
        outs[0] = r;
        return r && x;
    } else if (!strcmp(op, "logdet")) {
        r = ct_logdet(in[0]);
    } else if (!strcmp(op, "inv")) {
        r = ct_linalg_inv(in[0]);
    } else if (!strcmp(op, "solve")) {
        r = ct_linalg_solve(in[0], in[1], f & 1);
    } else if (!strcmp(op, "solve_tri")) {
        r = ct_linalg_solve_triangular(in[0], in[1], f & 1, f & 2, f & 4);
    } else if (!strcmp(op, "cholesky")) {
        r = ct_linalg_cholesky(in[0], f & 1);
    } else if (!strcmp(op, "qr")) {
        ct_qr_mode mode = !strcmp(c->arg, "complete") ? CT_QR_COMPLETE
                          : !strcmp(c->arg, "r")     ? CT_QR_R
                                                     : CT_QR_REDUCED;
        outs[0] = terms[0] = ct_linalg_qr(in[0], mode, &x);
        outs[1] = terms[1] = x;
        *n_out = *n_term = 2;
        return outs[0] && x;
    } else if (!strcmp(op, "eigh")) {
        outs[0] = terms[0] = ct_linalg_eigh(in[0], c->arg[0], &x);
        outs[1] = terms[1] = x;
        sq[1] = true;
        *n_out = *n_term = 2;
        return outs[0] && x;
    } else if (!strcmp(op, "eigvalsh")) {
        r = ct_linalg_eigvalsh(in[0], c->arg[0]);
    } else if (!strcmp(op, "svd")) {
        ct_tensor *u = ct_linalg_svd(in[0], f & 1, &x, &y);
        if (!u || !x || !y) {
            return false;
        }
        int64_t k = ct_size(x, -1);
        outs[0] = terms[0] = ct_narrow(u, -1, 0, k);
        outs[1] = terms[1] = x;
        outs[2] = terms[2] = ct_narrow(y, -2, 0, k);
        sq[0] = sq[2] = true;
        *n_out = *n_term = 3;
        return true;
    } else if (!strcmp(op, "svdvals")) {
        r = ct_linalg_svdvals(in[0]);
    } else if (!strcmp(op, "matrix_norm")) {
        const int64_t d02[2] = {0, 2};
        r = ct_linalg_matrix_norm(in[0], c->arg, f & 2 ? d02 : NULL, f & 1);
    } else if (!strcmp(op, "norm")) {
        const int64_t d1 = 1, d02[2] = {0, 2};
        const int64_t *dims = (f & 6) == 2 ? &d1 : (f & 6) == 4 ? d02 : NULL;
        r = ct_linalg_norm(in[0], c->arg[0] ? c->arg : NULL, dims, (f & 6) / 2, f & 1);
    } else if (!strcmp(op, "matrix_power")) {
        r = ct_linalg_matrix_power(in[0], f);
    }
    outs[0] = terms[0] = r;
    return r != NULL;
}

/* ---- golden comparisons ------------------------------------------------------------------- */
/* The contiguous float64 values of t (owned by the scope). */
static const double *f64_values(const ct_tensor *t)
{
    return (const double *)ct_data_ptr(ct_contiguous(ct_to_dtype(t, CT_FLOAT64)));
}

/* Flips each column of u (batch of r x c, in place) so its largest-magnitude entry (the first
   such) is positive, and the matching rows of vh (batch of c x n) with it. */
static void normalize_cols(double *u, int64_t batch, int64_t r, int64_t c, double *vh,
                           int64_t n)
{
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t j = 0; j < c; j++) {
            double *col = u + b * r * c + j, best = 0, sign = 1;
            for (int64_t i = 0; i < r; i++) {
                if (fabs(col[i * c]) > best) {
                    best = fabs(col[i * c]);
                    sign = col[i * c] < 0 ? -1 : 1;
                }
            }
            for (int64_t i = 0; i < r; i++) {
                col[i * c] *= sign;
            }
            for (int64_t i = 0; vh && i < n; i++) {
                vh[b * c * n + j * n + i] *= sign;
            }
        }
    }
}

/* The case's outputs flattened into buf (eigenvectors and singular vectors normalized). */
static int64_t flatten_outputs(const decomp_golden *g, ct_tensor *const *outs, int n_out,
                               double *buf)
{
    int64_t pos[MAX_OUT + 1] = {0};
    for (int k = 0; k < n_out; k++) {
        int64_t n = ct_numel(outs[k]);
        memcpy(buf + pos[k], f64_values(outs[k]), sizeof(double) * (size_t)n);
        pos[k + 1] = pos[k] + n;
    }
    if (!strcmp(g->op, "eigh")) {
        const ct_tensor *v = outs[1];
        int64_t r = ct_size(v, -2);
        normalize_cols(buf + pos[1], ct_numel(v) / (r * r), r, r, NULL, 0);
    } else if (!strcmp(g->op, "svd")) {
        const ct_tensor *u = outs[0], *vh = outs[2];
        int64_t r = ct_size(u, -2), c = ct_size(u, -1), n = ct_size(vh, -1);
        normalize_cols(buf, ct_numel(u) / (r * c), r, c, buf + pos[2], n);
    }
    return pos[n_out];
}

/* The case's base as a tensor of its dtype (a leaf requiring grad when the case has
   gradients), and the input made from it by the case's layout. */
static ct_tensor *case_input(const decomp_golden *g, const double *v, const int64_t *shape,
                             int nd, ct_tensor **leaf)
{
    ct_tensor *b = ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, shape, nd), g->dtype);
    *leaf = ct_requires_grad_(ct_detach(b), g->grad != 0);
    if (g->how == 1) {
        return ct_mt(*leaf);
    }
    if (g->how == 2) {
        return ct_slice(*leaf, -1, 0, shape[nd - 1], 2);
    }
    return *leaf;
}

/* sum_k sum(f_k(term_k) * w_k), w_k[i] = ((i + 3k) % 7 - 3) / 4 (the generator's loss). */
static ct_tensor *golden_loss(ct_tensor *const *terms, const bool *sq, int n, ct_dtype dtype)
{
    ct_tensor *loss = NULL;
    for (int k = 0; k < n; k++) {
        int64_t m = ct_numel(terms[k]);
        double *w = (double *)malloc(sizeof(double) * (size_t)(m > 0 ? m : 1));
        for (int64_t i = 0; i < m; i++) {
            w[i] = (double)((i + 3 * k) % 7 - 3) / 4;
        }
        ct_tensor *wt = ct_to_dtype(
            ct_tensor_from_data(w, CT_FLOAT64, ct_sizes(terms[k]), ct_dim(terms[k])), dtype);
        free(w);
        const ct_tensor *t = sq[k] ? ct_mul(terms[k], terms[k]) : terms[k];
        ct_tensor *s = ct_sum(ct_mul(t, wt));
        loss = loss ? ct_add(loss, s) : s;
    }
    return loss;
}

static void test_decomp_golden(void)
{
    CHECK(N_CASES == 54);
    for (int k = 0; k < N_CASES; k++) {
        const decomp_golden *g = &decomp_golden_cases[k];
        bool f32 = g->dtype == CT_FLOAT32;
        double tol = f32 ? 2e-4 : 1e-9, gtol = f32 ? 2e-3 : 1e-7;
        ct_scope_begin();
        ct_tensor *leaves[2] = {NULL, NULL}, *in[2] = {NULL, NULL};
        in[0] = case_input(g, g->a, g->a_shape, g->nda, &leaves[0]);
        if (g->ndb) {
            in[1] = case_input(g, g->b, g->b_shape, g->ndb, &leaves[1]);
        }
        op_case c = {g->op, g->arg, g->flags};
        ct_tensor *outs[MAX_OUT] = {NULL}, *terms[MAX_OUT] = {NULL};
        bool sq[MAX_OUT];
        int n_out = 0, n_term = 0;
        bool ok = run_op(&c, in, outs, &n_out, terms, sq, &n_term);
        CHECK_MSG(ok, "case %d (%s %s): %s", k, g->op, g->arg, ct_error() ? ct_error() : "?");
        if (!ok) {
            ct_error_clear();
            ct_scope_end();
            continue;
        }
        double *buf = (double *)malloc(sizeof(double) * (size_t)(g->nout + 1));
        int64_t n = flatten_outputs(g, outs, n_out, buf);
        CHECK_MSG(n == g->nout, "case %d (%s): %lld outputs, want %lld", k, g->op, (long long)n,
                  (long long)g->nout);
        if (n == g->nout && !CHECK_CLOSE(buf, g->out, n, tol, tol)) {
            printf("  in case %d (%s %s %s)\n", k, g->op, g->arg, ct_dtype_name(g->dtype));
        }
        free(buf);
        if (g->grad) {
            ct_backward(golden_loss(terms, sq, n_term, g->dtype), NULL, false);
            for (int j = 0; j < (g->ndb ? 2 : 1); j++) {
                const ct_tensor *gr = ct_grad(leaves[j]);
                CHECK_MSG(gr != NULL, "case %d (%s): no gradient for input %d", k, g->op, j);
                if (gr && !CHECK_TENSOR(gr, j ? g->gb : g->ga, ct_numel(gr), gtol, gtol)) {
                    printf("  gradient %d of case %d (%s %s %s)\n", j, k, g->op, g->arg,
                           ct_dtype_name(g->dtype));
                }
            }
        }
        CHECK_MSG(!ct_error(), "case %d: %s", k, ct_error());
        ct_error_clear();
        ct_scope_end();
    }
}

/* ---- reconstructions on larger matrices ---------------------------------------------------- */
/* max |a - b| */
static double max_diff(const ct_tensor *a, const ct_tensor *b)
{
    return ct_item(ct_amax(ct_abs(ct_sub(a, b)), NULL, 0, false));
}

static ct_tensor *randn3(int64_t b, int64_t m, int64_t n, ct_dtype dtype)
{
    const int64_t s[3] = {b, m, n};
    return ct_randn(s, 3, dtype, NULL);
}

static ct_tensor *eye_like(const ct_tensor *a)
{
    int64_t n = ct_size(a, -1);
    return ct_eye(n, n, ct_tensor_dtype(a));
}

static void check_reconstructions(ct_dtype dtype, double tol)
{
    ct_scope_begin();
    ct_manual_seed(7);
    /* LU (100 > two panels: the blocked update on the GEMM), batched, transposed */
    ct_tensor *A = ct_add(randn3(2, 100, 100, dtype), ct_mul_scalar(eye_like(randn3(1, 100, 100,
                                                                                      dtype)),
                                                                     10));
    ct_tensor *B = randn3(2, 100, 7, dtype);
    CHECK_MSG(max_diff(ct_matmul(A, ct_linalg_solve(A, B, true)), B) < tol * 100, "solve %s",
              ct_dtype_name(dtype));
    CHECK_MSG(max_diff(ct_matmul(ct_mt(A), ct_linalg_inv(ct_mt(A))), eye_like(A)) < tol * 100,
              "inv %s", ct_dtype_name(dtype));
    ct_tensor *la = NULL, *sign = ct_linalg_slogdet(ct_narrow(A, -1, 0, 100), &la);
    CHECK(sign && la);
    /* log|det| = sum(log(S)) */
    ct_tensor *lsv = ct_sum_dim(ct_log(ct_linalg_svdvals(A)), -1, false);
    CHECK_MSG(max_diff(la, lsv) < tol * 1000, "slogdet vs svdvals %s", ct_dtype_name(dtype));
    /* Cholesky, triangular solves */
    ct_tensor *X = randn3(3, 40, 40, dtype);
    ct_tensor *spd = ct_add(ct_matmul(X, ct_mt(X)), ct_mul_scalar(eye_like(X), 40));
    ct_tensor *L = ct_linalg_cholesky(spd, false);
    CHECK_MSG(max_diff(ct_matmul(L, ct_mt(L)), spd) < tol * 100, "cholesky %s",
              ct_dtype_name(dtype));
    CHECK(max_diff(L, ct_tril(L, 0)) == 0);
    ct_tensor *Y = ct_linalg_solve_triangular(L, ct_narrow(X, -1, 0, 5), false, true, false);
    CHECK(max_diff(ct_matmul(L, Y), ct_narrow(X, -1, 0, 5)) < tol * 100);
    /* QR, tall and wide */
    for (int w = 0; w < 2; w++) {
        ct_tensor *M = w ? randn3(2, 30, 50, dtype) : randn3(2, 50, 30, dtype), *R = NULL;
        ct_tensor *Q = ct_linalg_qr(M, CT_QR_COMPLETE, &R);
        CHECK(max_diff(ct_matmul(Q, R), M) < tol * 10);
        CHECK(max_diff(ct_matmul(ct_mt(Q), Q), eye_like(Q)) < tol * 10);
        CHECK(max_diff(R, ct_triu(R, 0)) == 0);
    }
    /* eigh, svd (full, with a rank-deficient matrix: U completed to an orthonormal basis) */
    ct_tensor *S = ct_add(X, ct_mt(X)), *V = NULL;
    ct_tensor *ev = ct_linalg_eigh(S, 'L', &V);
    ct_tensor *VLVt = ct_matmul(ct_mul(V, ct_unsqueeze(ev, -2)), ct_mt(V));
    CHECK_MSG(max_diff(VLVt, S) < tol * 100, "eigh %s", ct_dtype_name(dtype));
    CHECK(max_diff(ct_matmul(ct_mt(V), V), eye_like(V)) < tol * 100);
    ct_tensor *low = ct_matmul(randn3(2, 45, 3, dtype), randn3(2, 3, 20, dtype));
    for (int w = 0; w < 2; w++) {
        ct_tensor *M = w ? ct_mt(low) : low, *sv = NULL, *Vh = NULL;
        ct_tensor *U = ct_linalg_svd(M, true, &sv, &Vh);
        int64_t k = ct_size(sv, -1);
        ct_tensor *US = ct_mul(ct_narrow(U, -1, 0, k), ct_unsqueeze(sv, -2));
        CHECK_MSG(max_diff(ct_matmul(US, ct_narrow(Vh, -2, 0, k)), M) < tol * 100, "svd %s",
                  ct_dtype_name(dtype));
        CHECK(max_diff(ct_matmul(ct_mt(U), U), eye_like(U)) < tol * 100);
        CHECK(max_diff(ct_matmul(Vh, ct_mt(Vh)), eye_like(Vh)) < tol * 100);
    }
    CHECK_MSG(!ct_error(), "%s", ct_error());
    ct_error_clear();
    ct_scope_end();
}

static void test_decomp_reconstruct(void)
{
    check_reconstructions(CT_FLOAT64, 1e-12);
    check_reconstructions(CT_FLOAT32, 1e-5);
}

/* ---- gradcheck ---------------------------------------------------------------------------- */
/* pre: 0 the input as is, 1 X + X^T (eigh), 2 X X^T + n I (cholesky, logdet). */
typedef struct gc_case {
    op_case c;
    int pre;
} gc_case;

/* The loss terms of the op (squared where the generator squares them), flattened and
   concatenated. */
static ct_tensor *gc_fn(ct_tensor *const *in, int n, void *user)
{
    const gc_case *g = (const gc_case *)user;
    ct_tensor *x[2] = {in[0], n > 1 ? in[1] : NULL};
    if (g->pre == 1) {
        x[0] = ct_add(in[0], ct_mt(in[0]));
    } else if (g->pre == 2) {
        x[0] = ct_add(ct_matmul(in[0], ct_mt(in[0])), ct_mul_scalar(eye_like(in[0]), 3));
    }
    ct_tensor *outs[MAX_OUT], *terms[MAX_OUT];
    bool sq[MAX_OUT];
    int n_out = 0, n_term = 0;
    if (!run_op(&g->c, x, outs, &n_out, terms, sq, &n_term)) {
        return NULL;
    }
    const ct_tensor *parts[MAX_OUT];
    for (int k = 0; k < n_term; k++) {
        parts[k] = ct_flatten(sq[k] ? ct_mul(terms[k], terms[k]) : terms[k], 0, -1);
    }
    return ct_cat(parts, n_term, 0);
}

static void test_decomp_gradcheck(void)
{
    static const struct {
        gc_case g;
        int64_t a[3], b[3];
        int nda, ndb;
    } cases[] = {
        {{{"det", "", 0}, 0}, {2, 3, 3}, {0}, 3, 0},
        {{{"slogdet", "", 0}, 0}, {3, 3}, {0}, 2, 0},
        {{{"logdet", "", 0}, 2}, {3, 3}, {0}, 2, 0},
        {{{"inv", "", 0}, 0}, {2, 3, 3}, {0}, 3, 0},
        {{{"solve", "", 1}, 0}, {2, 3, 3}, {3, 2}, 3, 2},
        {{{"solve", "", 1}, 0}, {3, 3}, {3}, 2, 1},
        {{{"solve", "", 0}, 0}, {3, 3}, {2, 2, 3}, 2, 3},
        {{{"solve_tri", "", 3}, 0}, {3, 3}, {3, 2}, 2, 2},
        {{{"solve_tri", "", 4}, 0}, {3, 3}, {2, 3}, 2, 2},
        {{{"cholesky", "", 0}, 2}, {2, 3, 3}, {0}, 3, 0},
        {{{"cholesky", "", 1}, 2}, {3, 3}, {0}, 2, 0},
        {{{"qr", "reduced", 0}, 0}, {4, 3}, {0}, 2, 0},
        {{{"qr", "reduced", 0}, 0}, {3, 5}, {0}, 2, 0},
        {{{"qr", "complete", 0}, 0}, {3, 3}, {0}, 2, 0},
        {{{"eigh", "L", 0}, 1}, {2, 3, 3}, {0}, 3, 0},
        {{{"eigvalsh", "U", 0}, 1}, {3, 3}, {0}, 2, 0},
        {{{"svd", "", 1}, 0}, {4, 3}, {0}, 2, 0},
        {{{"svd", "", 0}, 0}, {2, 3, 5}, {0}, 3, 0},
        {{{"svd", "", 0}, 0}, {3, 3}, {0}, 2, 0},
        {{{"svdvals", "", 0}, 0}, {3, 4}, {0}, 2, 0},
        {{{"matrix_norm", "nuc", 0}, 0}, {3, 4}, {0}, 2, 0},
        {{{"matrix_norm", "-2", 1}, 0}, {2, 3, 4}, {0}, 3, 0},
        {{{"matrix_norm", "inf", 0}, 0}, {3, 4}, {0}, 2, 0},
        {{{"matrix_norm", "fro", 2}, 0}, {2, 3, 4}, {0}, 3, 0},
        {{{"norm", "3", 2}, 0}, {3, 4}, {0}, 2, 0},
        {{{"matrix_power", "", -2}, 0}, {3, 3}, {0}, 2, 0},
        {{{"matrix_power", "", 5}, 0}, {2, 3, 3}, {0}, 3, 0},
    };
    ct_scope_begin();
    ct_manual_seed(3);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ct_tensor *in[2] = {ct_randn(cases[k].a, cases[k].nda, CT_FLOAT64, NULL), NULL};
        if (!strcmp(cases[k].g.c.op, "solve") || !strcmp(cases[k].g.c.op, "inv") ||
            !strcmp(cases[k].g.c.op, "solve_tri") || !strcmp(cases[k].g.c.op, "matrix_power")) {
            in[0] = ct_add(in[0], ct_mul_scalar(eye_like(in[0]), 3)); /* well conditioned */
        }
        ct_requires_grad_(in[0], true);
        if (cases[k].ndb) {
            in[1] = ct_requires_grad_(ct_randn(cases[k].b, cases[k].ndb, CT_FLOAT64, NULL), true);
        }
        CHECK_MSG(ct_gradcheck(gc_fn, in, cases[k].ndb ? 2 : 1, (void *)&cases[k].g, NULL),
                  "gradcheck %s %s %d: %s", cases[k].g.c.op, cases[k].g.c.arg,
                  cases[k].g.c.flags, ct_error() ? ct_error() : "?");
        ct_error_clear();
    }
    ct_scope_end();
}

/* Double backward through det, inv, solve and cholesky (their formulas are ctorch ops): the
   gradient of sum(f(x) * w) with create_graph, checked by gradcheck in x and w. */
static ct_tensor *gg_fn(ct_tensor *const *in, int n, void *user)
{
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = gc_fn(in, n - 1, user), *g[2] = {NULL, NULL}, *out = NULL;
    const ct_tensor *go[1] = {in[n - 1]};
    if (y && ct_autograd_grad(&y, 1, in, n - 1, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[2] = {ct_flatten(g[0], 0, -1), n > 2 ? ct_flatten(g[1], 0, -1)
                                                                     : NULL};
        out = ct_cat(parts, n - 1, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void test_decomp_gradgradcheck(void)
{
    static const gc_case cases[] = {{{"det", "", 0}, 0},
                                    {{"inv", "", 0}, 0},
                                    {{"solve", "", 1}, 0},
                                    {{"cholesky", "", 0}, 2}};
    const int64_t s33[2] = {3, 3}, s32[2] = {3, 2};
    ct_scope_begin();
    ct_manual_seed(5);
    for (int k = 0; k < 4; k++) {
        bool solve = k == 2;
        ct_tensor *a = ct_add(ct_randn(s33, 2, CT_FLOAT64, NULL),
                              ct_mul_scalar(ct_eye(3, 3, CT_FLOAT64), k == 3 ? 0 : 3));
        ct_tensor *in[3] = {ct_requires_grad_(a, true), NULL, NULL};
        if (solve) {
            in[1] = ct_requires_grad_(ct_randn(s32, 2, CT_FLOAT64, NULL), true);
        }
        ct_no_grad_begin();
        ct_tensor *y = gc_fn(in, solve ? 2 : 1, (void *)&cases[k]);
        ct_no_grad_end();
        CHECK(y != NULL);
        if (!y) {
            ct_error_clear();
            continue;
        }
        in[solve ? 2 : 1] = ct_requires_grad_(ct_randn(ct_sizes(y), ct_dim(y), CT_FLOAT64, NULL),
                                              true);
        CHECK_MSG(ct_gradcheck(gg_fn, in, solve ? 3 : 2, (void *)&cases[k], NULL),
                  "gradgradcheck %s: %s", cases[k].c.op, ct_error() ? ct_error() : "?");
        ct_error_clear();
    }
    ct_scope_end();
}

/* ---- errors, node names, out-pointers, threads ---------------------------------------------- */
static void test_decomp_errors(void)
{
    ct_scope_begin();
    const int64_t s23[2] = {2, 3}, s33[2] = {3, 3}, s233[3] = {2, 3, 3}, s42[2] = {4, 2};
    const double sing[9] = {1, 0, 0, 0, 0, 0, 0, 0, 1};
    const double notpd[9] = {1, 2, 0, 2, 1, 0, 0, 0, 1};
    ct_tensor *S = ct_tensor_from_data(sing, CT_FLOAT64, s33, 2);
    CHECK(ct_linalg_inv(S) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.inv: The diagonal element 2 is zero, the inversion could "
                              "not be completed because the input matrix is singular.");
    const ct_tensor *pair[2] = {ct_eye(3, 3, CT_FLOAT64), S};
    ct_tensor *S2 = ct_stack(pair, 2, 0);
    CHECK(ct_linalg_inv(S2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.inv: (Batch element 1): The diagonal element 2 is zero");
    CHECK(ct_linalg_solve(S, ct_ones(s33, 2, CT_FLOAT64), true) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "torch.linalg.solve: The solver failed because the input matrix "
                              "is singular.");
    CHECK(ct_linalg_cholesky(ct_tensor_from_data(notpd, CT_FLOAT64, s33, 2), false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.cholesky: The factorization could not be completed because "
                              "the input is not positive-definite (the leading minor of order 2 "
                              "is not positive-definite).");
    CHECK(ct_linalg_inv(ct_ones(s23, 2, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.inv: A must be batches of square matrices, but they are 2 "
                              "by 3 matrices");
    CHECK(ct_linalg_inv(ct_ones(s33, 2, CT_INT64)) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "linalg.inv: Expected a floating point or complex tensor as input. "
                              "Got Long");
    CHECK(ct_linalg_det(ct_ones(s33, 1, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.det: The input tensor A must have at least 2 dimensions.");
    CHECK(ct_linalg_solve(ct_eye(3, 3, CT_FLOAT32), ct_ones(s42, 2, CT_FLOAT32), true) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.solve: Incompatible shapes of A and B for the equation AX = "
                              "B (3x3 and 4x2)");
    CHECK(ct_linalg_solve(ct_eye(3, 3, CT_FLOAT32), ct_ones(s33, 2, CT_FLOAT64), true) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "linalg.solve: Expected A and B to have the same dtype, but found "
                              "A of type Float and B of type Double instead");
    CHECK(ct_linalg_solve(ct_ones(s233, 3, CT_FLOAT32), ct_ones(s42, 2, CT_FLOAT32), false) ==
          NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.solve: Incompatible shapes of A and B for the equation XA = "
                              "B (3x3 and 4x2)");
    CHECK(ct_linalg_eigh(ct_eye(3, 3, CT_FLOAT32), 'X', NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got X");
    CHECK(ct_linalg_qr(ct_eye(3, 3, CT_FLOAT32), (ct_qr_mode)7, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "qr received unrecognized mode 7");
    CHECK(ct_linalg_matrix_norm(ct_eye(3, 3, CT_FLOAT32), "3", NULL, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.matrix_norm: Order 3 not supported.");
    const int64_t same[2] = {1, 1}, three[3] = {0, 1, 2};
    CHECK(ct_linalg_matrix_norm(ct_eye(3, 3, CT_FLOAT32), NULL, same, false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.matrix_norm: dims must be different. Got (1, 1)");
    CHECK(ct_linalg_norm(ct_ones(s233, 3, CT_FLOAT32), "2", NULL, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.norm: If dim is not specified but ord is, the input must be "
                              "1D or 2D. Got 3D.");
    CHECK(ct_linalg_norm(ct_ones(s233, 3, CT_FLOAT32), NULL, three, 3, false) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.norm: If dim is specified, it must be of length 1 or 2. "
                              "Got [0, 1, 2]");
    CHECK(ct_linalg_norm(ct_eye(3, 3, CT_FLOAT32), "abc", NULL, 0, false) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.norm: Order abc not supported.");
    CHECK(ct_linalg_matrix_power(ct_ones(s23, 2, CT_FLOAT32), 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "linalg.matrix_power: A must be batches of square matrices, but "
                              "they are 2 by 3 matrices");
    CHECK(ct_linalg_matrix_power(S, -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.inv: The diagonal element 2 is zero");
    /* a NaN in an SVD's input: PyTorch's error (gesdd's info -4), on every path; an inf
       alone is no error (NaNs in S: all of them with LAPACK, as PyTorch's MKL) */
    const double nan9[9] = {1, 2, 3, 4, NAN, 6, 7, 8, 10};
    ct_tensor *N = ct_tensor_from_data(nan9, CT_FLOAT64, s33, 2), *Sv = NULL, *Vh = NULL;
    const char *nonfinite = "linalg.svd: The algorithm failed to converge because the input "
                            "matrix contained non-finite values.";
    for (int d = 0; d < 2; d++) {
        ct_dtype dt = d ? CT_FLOAT32 : CT_FLOAT64;
        ct_tensor *Nd = ct_to_dtype(N, dt);
        CHECK(ct_linalg_svd(Nd, true, &Sv, &Vh) == NULL && Sv == NULL && Vh == NULL);
        CHECK_ERROR(CT_ERR_VALUE, nonfinite);
        CHECK(ct_linalg_svd(ct_narrow(Nd, 0, 1, 2), false, &Sv, &Vh) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, nonfinite);
        CHECK(ct_linalg_svdvals(ct_mt(Nd)) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, nonfinite);
        CHECK(ct_linalg_matrix_norm(Nd, "2", NULL, false) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, nonfinite);
        const ct_tensor *two[2] = {ct_eye(3, 3, dt), Nd};
        CHECK(ct_linalg_svdvals(ct_stack(two, 2, 0)) == NULL);
        CHECK_ERROR(CT_ERR_VALUE, "linalg.svd: (Batch element 1): The algorithm failed to "
                                  "converge because the input matrix contained non-finite "
                                  "values.");
        ct_tensor *Si = ct_linalg_svdvals(ct_nan_to_num(Nd, INFINITY, NULL, NULL));
        CHECK_MSG(Si && ct_item(ct_any(ct_isnan(Si))) == 1, "%s", ct_error());
    }
    /* backward errors of qr (PyTorch raises them in the backward too) */
    ct_tensor *x = ct_requires_grad_(ct_randn(s42, 2, CT_FLOAT64, NULL), true), *R = NULL;
    ct_linalg_qr(x, CT_QR_R, &R);
    CHECK(ct_backward(ct_sum(R), NULL, false) != CT_OK);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "The derivative of linalg.qr depends on Q, which is not computed "
                                 "when mode='r'.");
    ct_tensor *Q = ct_linalg_qr(x, CT_QR_COMPLETE, NULL);
    CHECK(ct_backward(ct_sum(Q), NULL, false) != CT_OK);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "The QR decomposition is not differentiable when "
                                 "mode='complete' and nrows > ncols.");
    ct_scope_end();
}

static void test_decomp_nodes_and_outputs(void)
{
    ct_scope_begin();
    const int64_t s33[2] = {3, 3}, s35[2] = {3, 5};
    ct_tensor *a = ct_requires_grad_(ct_add(ct_randn(s33, 2, CT_FLOAT64, NULL),
                                            ct_mul_scalar(ct_eye(3, 3, CT_FLOAT64), 3)),
                                     true);
    ct_tensor *spd = ct_add(ct_matmul(a, ct_mt(a)), ct_eye(3, 3, CT_FLOAT64));
    ct_tensor *la = NULL, *V = NULL, *R = NULL, *S = NULL, *Vh = NULL;
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_det(a))), "LinalgDetBackward0"));
    ct_tensor *sign = ct_linalg_slogdet(a, &la);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(la)), "LinalgSlogdetBackward0"));
    CHECK(sign && ct_item(ct_abs(sign)) == 1);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_inv(a))), "LinalgInvExBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_solve(a, spd, true))),
                  "LinalgSolveExBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_solve_triangular(a, spd, true, true, false))),
                  "LinalgSolveTriangularBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_cholesky(spd, false))),
                  "LinalgCholeskyExBackward0"));
    ct_tensor *Q = ct_linalg_qr(a, CT_QR_REDUCED, &R);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(Q)), "LinalgQrBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(R)), "LinalgQrBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(ct_linalg_eigh(spd, 'L', &V))), "LinalgEighBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(V)), "LinalgEighBackward0"));
    ct_tensor *U = ct_linalg_svd(a, true, &S, &Vh);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(U)), "LinalgSvdBackward0"));
    CHECK(!strcmp(ct_node_name(ct_grad_fn(Vh)), "LinalgSvdBackward0"));
    /* NULL out-pointers drop those results; shapes by mode */
    ct_tensor *w = ct_randn(s35, 2, CT_FLOAT32, NULL);
    const int64_t q33[2] = {3, 3}, r35[2] = {3, 5}, u33[2] = {3, 3}, v55[2] = {5, 5}, z1[1] = {0};
    CHECK(ct_test_has_shape(ct_linalg_qr(w, CT_QR_COMPLETE, NULL), q33, 2));
    CHECK(ct_test_has_shape(ct_linalg_qr(w, CT_QR_R, &R), z1, 1) &&
          ct_test_has_shape(R, r35, 2));
    CHECK(ct_test_has_shape(ct_linalg_svd(w, true, NULL, &Vh), u33, 2) &&
          ct_test_has_shape(Vh, v55, 2));
    CHECK(ct_linalg_eigh(spd, 'U', NULL) != NULL);
    /* logdet of a negative determinant is NaN; matrix_power 0 is the identity */
    const double neg[4] = {0, 1, 1, 0};
    const int64_t s22[2] = {2, 2};
    CHECK(isnan(ct_item(ct_logdet(ct_tensor_from_data(neg, CT_FLOAT64, s22, 2)))));
    CHECK(max_diff(ct_linalg_matrix_power(a, 0), ct_eye(3, 3, CT_FLOAT64)) == 0);
    CHECK_MSG(!ct_error(), "%s", ct_error());
    ct_error_clear();
    ct_scope_end();
}

/* ---- the blocked LU and its solves -------------------------------------------------------- */
/* Orders around the LU's panel width (32) and the pivot search's lanes (16), and above 512
   (OpenBLAS's getrf with LAPACK), right-hand sides around the solve's row blocks (64 rows of
   B^T per task), both sides, both dtypes: residuals against the float64 solve; a pivot that must come from a later panel; a zero pivot in the
   second panel. */
static void test_decomp_lu_blocks(void)
{
    ct_scope_begin();
    ct_manual_seed(5);
    const int64_t ns[7] = {1, 17, 32, 33, 70, 130, 520}, ks[4] = {1, 64, 65, 200};
    for (int d = 0; d < 2; d++) {
        ct_dtype dt = d ? CT_FLOAT32 : CT_FLOAT64;
        double tol = d ? 1e-4 : 1e-11;
        for (int i = 0; i < 7; i++) {
            for (int j = 0; j < 4; j++) {
                const int64_t as[2] = {ns[i], ns[i]}, bs[2] = {ns[i], ks[j]};
                ct_tensor *A = ct_randn(as, 2, CT_FLOAT64, NULL), *B = ct_randn(bs, 2,
                                                                                CT_FLOAT64, NULL);
                ct_tensor *X = ct_linalg_solve(A, B, true);
                ct_tensor *Xr = ct_linalg_solve(ct_mt(A), ct_mt(B), false);
                ct_tensor *Xd = ct_linalg_solve(ct_to_dtype(A, dt), ct_to_dtype(B, dt), true);
                double scale = 1 + ct_item(ct_amax(ct_abs(X), NULL, 0, false));
                CHECK_MSG(max_diff(ct_matmul(A, X), B) < 1e-10 * scale, "AX = B n %lld k %lld",
                          (long long)ns[i], (long long)ks[j]);
                CHECK_MSG(max_diff(ct_matmul(Xr, ct_mt(A)), ct_mt(B)) < 1e-10 * scale,
                          "XA = B n %lld k %lld", (long long)ns[i], (long long)ks[j]);
                CHECK_MSG(max_diff(ct_to_dtype(Xd, CT_FLOAT64), X) < tol * scale * scale,
                          "%s n %lld k %lld", ct_dtype_name(dt), (long long)ns[i],
                          (long long)ks[j]);
            }
        }
    }
    /* [[0, I], [I, 0]] (70 x 70): every pivot of the first 35 columns is in rows 35..69 */
    const int64_t n = 70, shift = 35, dim0 = 0, one = 1, as[2] = {n, n};
    ct_tensor *P = ct_roll(ct_eye(n, n, CT_FLOAT64), &shift, 1, &dim0, 1);
    CHECK(max_diff(ct_linalg_inv(P), ct_mt(P)) == 0);
    CHECK(ct_item(ct_linalg_det(P)) == -1);
    /* row and column 40 zero (in the second panel): det 0, solve and inv refuse */
    ct_tensor *Z = ct_randn(as, 2, CT_FLOAT32, NULL), *at = ct_full(&one, 1, 40, CT_INT64);
    ct_index_fill_(ct_index_fill_(Z, 0, at, 0), 1, at, 0);
    CHECK(ct_item(ct_linalg_det(Z)) == 0);
    CHECK(ct_linalg_solve(Z, ct_ones(as, 2, CT_FLOAT32), true) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "The solver failed because the input matrix is singular.");
    CHECK(ct_linalg_inv(Z) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "linalg.inv: The diagonal element 41 is zero");
    CHECK_MSG(!ct_error(), "%s", ct_error());
    ct_scope_end();
}

/* SVD of square and near-square matrices (with LAPACK: gesdd's path 5, its last step as two
   tasks), full and reduced, and of scaled ones (LAPACK scales into range first): A = U S Vh,
   orthonormal U and Vh, S of the scaled matrix scaled. */
static void test_decomp_svd_shapes(void)
{
    ct_scope_begin();
    ct_manual_seed(9);
    const int64_t shapes[3][2] = {{64, 64}, {60, 70}, {70, 60}};
    for (int d = 0; d < 2; d++) {
        ct_dtype dt = d ? CT_FLOAT32 : CT_FLOAT64;
        double tol = d ? 1e-4 : 1e-12, tiny = d ? 1e-20 : 1e-150;
        for (int i = 0; i < 6; i++) {
            ct_tensor *A = ct_randn(shapes[i % 3], 2, dt, NULL), *S = NULL, *Vh = NULL;
            ct_tensor *U = ct_linalg_svd(A, i < 3, &S, &Vh);
            int64_t k = ct_size(S, -1);
            ct_tensor *US = ct_mul(ct_narrow(U, -1, 0, k), ct_unsqueeze(S, -2));
            CHECK_MSG(max_diff(ct_matmul(US, ct_narrow(Vh, -2, 0, k)), A) < tol * 10,
                      "svd %s case %d", ct_dtype_name(dt), i);
            CHECK(max_diff(ct_matmul(ct_mt(U), U), eye_like(U)) < tol);
            CHECK(max_diff(ct_matmul(Vh, ct_mt(Vh)), eye_like(ct_mt(Vh))) < tol);
            ct_tensor *St = ct_linalg_svdvals(ct_mul_scalar(A, tiny));
            CHECK_MSG(max_diff(ct_div_scalar(St, tiny), S) < tol * 10, "scaled svd %s case %d",
                      ct_dtype_name(dt), i);
        }
    }
    CHECK_MSG(!ct_error(), "%s", ct_error());
    ct_scope_end();
}

/* The same bits at one and two threads (each matrix of a batch is one task; one matrix's
   right-hand sides go in blocks of rows, its SVD's last step (LAPACK) as two tasks). */
static void test_decomp_threads(void)
{
    ct_scope_begin();
    ct_manual_seed(11);
    ct_tensor *A = randn3(6, 20, 20, CT_FLOAT64);
    const int64_t ms[2] = {130, 130}, bs[2] = {130, 200};
    ct_tensor *M = ct_randn(ms, 2, CT_FLOAT32, NULL), *B = ct_randn(bs, 2, CT_FLOAT32, NULL);
    const int64_t ss[2] = {60, 70};
    ct_tensor *W = ct_randn(ss, 2, CT_FLOAT64, NULL);
    ct_tensor *r1[9], *r2[9];
    int prev = ct_get_num_threads();
    for (int t = 0; t < 2; t++) {
        ct_tensor **r = t ? r2 : r1;
        ct_set_num_threads(t + 1);
        r[0] = ct_linalg_inv(A);
        r[1] = ct_linalg_svdvals(A);
        r[2] = ct_linalg_eigvalsh(A, 'L');
        r[3] = ct_linalg_solve(M, B, true);
        r[4] = ct_linalg_inv(M);
        r[5] = ct_linalg_det(ct_to_dtype(M, CT_FLOAT64));
        r[6] = ct_linalg_svd(W, true, &r[7], &r[8]); /* one matrix: its last step as two tasks */
    }
    ct_set_num_threads(prev);
    for (int k = 0; k < 9; k++) {
        CHECK_MSG(ct_equal(r1[k], r2[k]), "result %d", k);
    }
    ct_scope_end();
}

void test_decomp(void)
{
    RUN(test_decomp_golden);
    RUN(test_decomp_reconstruct);
    RUN(test_decomp_lu_blocks);
    RUN(test_decomp_svd_shapes);
    RUN(test_decomp_gradcheck);
    RUN(test_decomp_gradgradcheck);
    RUN(test_decomp_errors);
    RUN(test_decomp_nodes_and_outputs);
    RUN(test_decomp_threads);
}
