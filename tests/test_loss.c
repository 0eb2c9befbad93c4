/* tests/test_loss.c - the losses of nn/loss.c against PyTorch (tools/gen_golden_loss.py,
 * tests/golden/loss_golden.h): values and gradients for every reduction and option on
 * contiguous and transposed inputs, float32/float64/float16/bfloat16; gradcheck and
 * gradgradcheck in float64; PyTorch's errors; the loss modules.
 */
#include "test.h"

typedef struct loss_golden {
    const char *op;
    ct_dtype dtype;
    ct_reduction red;
    int how;   /* 1: input is the transpose of a contiguous (shape[1], shape[0]) base */
    double p;   /* beta, delta, label_smoothing, margin; kl_div, poisson_nll: log_input */
    int64_t ii; /* ignore_index; triplet_margin, multi_margin: p; gaussian, poisson: full */
    int nd;
    int64_t shape[4];
    double x[48]; /* the base's values */
    int tnd;
    int64_t tshape[4];
    int tint; /* int64 class indices */
    double t[48];
    int wn;
    double w[8]; /* class weights; triplet_margin: swap when given */
    int pwn;
    double pw[8];
    int ond;
    int64_t oshape[4];
    double out[48];
    double gx[48]; /* in the input's (logical, row-major) order */
    int has_gt;
    double gt[48];
    int ynd; /* the second input of three-tensor losses (gaussian_nll: var) */
    int64_t yshape[4];
    double y[48];
    double gy[48];
} loss_golden;
#include "golden/loss_golden.h"

#define N_CASES ((int)(sizeof loss_golden_cases / sizeof loss_golden_cases[0]))

/* The inputs of a case: x's base (requires grad when grad), x, target, weight, pos_weight,
   the second input. */
typedef struct loss_inputs {
    ct_tensor *base, *x, *t, *w, *pw, *y;
} loss_inputs;

static ct_tensor *vec(const double *v, int64_t n, ct_dtype dtype)
{
    return n ? ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, &n, 1), dtype) : NULL;
}

static loss_inputs case_inputs(const loss_golden *g, ct_dtype dtype, bool grad)
{
    loss_inputs in;
    int64_t bs[4];
    memcpy(bs, g->shape, sizeof bs);
    if (g->how == 1) {
        bs[0] = g->shape[1];
        bs[1] = g->shape[0];
    }
    in.base = ct_to_dtype(ct_tensor_from_data(g->x, CT_FLOAT64, bs, g->nd), dtype);
    if (grad) {
        ct_requires_grad_(in.base, true);
    }
    in.x = g->how == 1 ? ct_t(in.base) : in.base;
    in.t = ct_tensor_from_data(g->t, CT_FLOAT64, g->tshape, g->tnd);
    in.t = ct_to_dtype(in.t, g->tint ? CT_INT64 : dtype);
    if (grad && g->has_gt) {
        ct_requires_grad_(in.t, true);
    }
    in.w = vec(g->w, g->wn, dtype);
    in.pw = vec(g->pw, g->pwn, dtype);
    in.y = NULL;
    if (g->ynd) {
        in.y = ct_to_dtype(ct_tensor_from_data(g->y, CT_FLOAT64, g->yshape, g->ynd), dtype);
        ct_requires_grad_(in.y, grad);
    }
    return in;
}

/* the losses of nn/loss.c's second part: margins and likelihoods */
static ct_tensor *run_loss3(const loss_golden *g, const ct_tensor *x, const ct_tensor *t,
                            const ct_tensor *w, const ct_tensor *y)
{
    const char *op = g->op;
    if (!strcmp(op, "margin_ranking")) {
        return ct_margin_ranking_loss(x, y, t, g->p, g->red);
    }
    if (!strcmp(op, "cosine_embedding")) {
        return ct_cosine_embedding_loss(x, y, t, g->p, g->red);
    }
    if (!strcmp(op, "triplet_margin")) {
        return ct_triplet_margin_loss(x, y, t, g->p, (double)g->ii, 1e-6, g->wn > 0, g->red);
    }
    if (!strcmp(op, "gaussian_nll")) {
        return ct_gaussian_nll_loss(x, t, y, g->ii != 0, 1e-6, g->red);
    }
    if (!strcmp(op, "hinge_embedding")) {
        return ct_hinge_embedding_loss(x, t, g->p, g->red);
    }
    if (!strcmp(op, "soft_margin")) {
        return ct_soft_margin_loss(x, t, g->red);
    }
    if (!strcmp(op, "poisson_nll")) {
        return ct_poisson_nll_loss(x, t, g->p != 0, g->ii != 0, 1e-8, g->red);
    }
    return ct_multi_margin_loss(x, t, g->ii, g->p, w, g->red);
}

static ct_tensor *run_loss(const loss_golden *g, const ct_tensor *x, const ct_tensor *t,
                           const ct_tensor *w, const ct_tensor *pw, const ct_tensor *y)
{
    const char *op = g->op;
    if (!strcmp(op, "l1")) {
        return ct_l1_loss(x, t, g->red);
    }
    if (!strcmp(op, "mse")) {
        return ct_mse_loss(x, t, g->red);
    }
    if (!strcmp(op, "smooth_l1")) {
        return ct_smooth_l1_loss(x, t, g->red, g->p);
    }
    if (!strcmp(op, "huber")) {
        return ct_huber_loss(x, t, g->red, g->p);
    }
    if (!strcmp(op, "bce")) {
        return ct_binary_cross_entropy(x, t, w, g->red);
    }
    if (!strcmp(op, "bce_logits")) {
        return ct_binary_cross_entropy_with_logits(x, t, w, pw, g->red);
    }
    if (!strcmp(op, "kl_div")) {
        return ct_kl_div(x, t, g->red, g->p != 0);
    }
    if (strcmp(op, "nll") && strcmp(op, "ce")) {
        return run_loss3(g, x, t, w, y);
    }
    ct_nll_loss_opts o = {w, g->ii, g->red, g->p};
    return !strcmp(op, "nll") ? ct_nll_loss(x, t, &o) : ct_cross_entropy(x, t, &o);
}

/* G[k] = (k % 5 - 2) * 0.5 + 1.5 in the loss's shape */
static ct_tensor *upstream(const ct_tensor *out)
{
    int64_t n = ct_numel(out);
    double v[48];
    for (int64_t k = 0; k < n; k++) {
        v[k] = (double)(k % 5 - 2) * 0.5 + 1.5;
    }
    return ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, ct_sizes(out), ct_dim(out)),
                       ct_tensor_dtype(out));
}

static void tolerances(ct_dtype d, double *rtol, double *atol)
{
    *rtol = d == CT_FLOAT64 ? 1e-10 : d == CT_FLOAT32 ? 2e-5 : 2e-2;
    *atol = d == CT_FLOAT64 ? 1e-12 : d == CT_FLOAT32 ? 1e-6 : 2e-2;
}

static void test_loss_golden(void)
{
    for (int k = 0; k < N_CASES; k++) {
        const loss_golden *g = &loss_golden_cases[k];
        ct_scope_begin();
        loss_inputs in = case_inputs(g, g->dtype, true);
        ct_tensor *out = run_loss(g, in.x, in.t, in.w, in.pw, in.y);
        double rtol, atol;
        tolerances(g->dtype, &rtol, &atol);
        bool shaped = out && ct_test_has_shape(out, g->oshape, g->ond);
        CHECK_MSG(shaped && ct_tensor_dtype(out) == g->dtype, "case %d (%s): %s", k, g->op,
                  ct_error() ? ct_error() : "shape/dtype");
        if (!out) {
            ct_error_clear();
            ct_scope_end();
            continue;
        }
        int64_t n = ct_numel(out), nx = ct_numel(in.x);
        if (!CHECK_TENSOR(out, g->out, n, rtol, atol)) {
            fprintf(stderr, "  case %d (%s) output\n", k, g->op);
        }
        CHECK(ct_backward(ct_sum(ct_mul(out, upstream(out))), NULL, false) == CT_OK);
        ct_tensor *gx = g->how == 1 ? ct_t(ct_grad(in.base)) : ct_grad(in.base);
        if (!CHECK_TENSOR(gx, g->gx, nx, rtol, atol)) {
            fprintf(stderr, "  case %d (%s) grad input\n", k, g->op);
        }
        if (g->has_gt && !CHECK_TENSOR(ct_grad(in.t), g->gt, ct_numel(in.t), rtol, atol)) {
            fprintf(stderr, "  case %d (%s) grad target\n", k, g->op);
        }
        if (g->ynd && !CHECK_TENSOR(ct_grad(in.y), g->gy, ct_numel(in.y), rtol, atol)) {
            fprintf(stderr, "  case %d (%s) grad of the second input\n", k, g->op);
        }
        ct_scope_end();
    }
}

/* ---- gradcheck (float64): every float64 golden case, w.r.t. input and float target --------- */
typedef struct gc_user {
    const loss_golden *g;
    const ct_tensor *t, *w, *pw; /* the fixed target (class indices), the weights */
    bool t_in;                   /* the target is input 1 */
    const ct_tensor *go;         /* gradgrad: the upstream gradient */
} gc_user;

static ct_tensor *gc_loss(ct_tensor *const *in, int n, void *user)
{
    const gc_user *u = (const gc_user *)user;
    const ct_tensor *t = u->t_in ? in[1] : u->t;
    int k = u->t_in ? 2 : 1;
    return run_loss(u->g, in[0], t, u->w, u->pw, k < n ? in[k] : NULL);
}

/* the gradients (create_graph) of sum(loss * go) w.r.t. the inputs, concatenated */
static ct_tensor *gc_loss_grad(ct_tensor *const *in, int n, void *user)
{
    const gc_user *u = (const gc_user *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = gc_loss(in, n, user), *g[3] = {NULL, NULL, NULL}, *out = NULL;
    const ct_tensor *go[1] = {u->go};
    if (y && ct_autograd_grad(&y, 1, in, n, go, false, true, true, g) == CT_OK) {
        const ct_tensor *parts[3];
        int m = 0;
        for (int k = 0; k < n; k++) {
            if (g[k]) { /* NULL: not used by the gradient */
                parts[m++] = ct_flatten(g[k], 0, -1);
            }
        }
        out = ct_cat(parts, m, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

/* Whether the target is checked: kl_div's target gradient log(t) + 1 is infinite at the
   golden's t = 0; bce's finite differences need inputs inside (0, 1) (x[0] == 0: none). */
static bool gc_target(const loss_golden *g)
{
    return g->has_gt && !(!strcmp(g->op, "kl_div") && g->p == 0);
}

static void test_loss_gradcheck(void)
{
    int checked = 0;
    for (int k = 0; k < N_CASES; k++) {
        const loss_golden *g = &loss_golden_cases[k];
        if (g->dtype != CT_FLOAT64 || (!strcmp(g->op, "bce") && g->x[0] == 0.0)) {
            continue;
        }
        ct_scope_begin();
        loss_inputs li = case_inputs(g, CT_FLOAT64, true);
        gc_user u = {g, li.t, li.w, li.pw, gc_target(g), NULL};
        ct_tensor *in[3] = {li.x, NULL, NULL};
        int n = 1;
        if (u.t_in) {
            in[n++] = ct_requires_grad_(li.t, true);
        }
        if (li.y) {
            in[n++] = li.y;
        }
        CHECK_MSG(ct_gradcheck(gc_loss, in, n, &u, NULL), "gradcheck case %d (%s): %s", k, g->op,
                  ct_error() ? ct_error() : "?");
        ct_error_clear();
        ct_no_grad_begin();
        ct_tensor *y = gc_loss(in, n, &u);
        ct_no_grad_end();
        u.go = y ? upstream(y) : NULL;
        /* piecewise linear: the gradient is constant in the inputs */
        bool linear = !strcmp(g->op, "nll") || !strcmp(g->op, "hinge_embedding") ||
                      (!strcmp(g->op, "multi_margin") && g->ii == 1);
        CHECK_MSG(linear || (y && ct_gradcheck(gc_loss_grad, in, n, &u, NULL)),
                  "gradgradcheck case %d (%s): %s", k, g->op, ct_error() ? ct_error() : "?");
        ct_error_clear();
        checked++;
        ct_scope_end();
    }
    CHECK_MSG(checked >= 40, "%d cases checked", checked);
}

/* ---- errors with PyTorch's wording ------------------------------------------------------- */
static ct_tensor *f32(const double *v, const int64_t *s, int nd)
{
    return ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, s, nd), CT_FLOAT32);
}

static ct_tensor *i64(const int64_t *v, const int64_t *s, int nd)
{
    return ct_tensor_from_data(v, CT_INT64, s, nd);
}

static void test_loss_errors(void)
{
    ct_scope_begin();
    const double v[12] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.25, 0.35, 0.45};
    const int64_t s34[2] = {3, 4}, s32[2] = {3, 2}, s3[1] = {3}, s234[3] = {2, 3, 4};
    const int64_t s25[2] = {2, 5}, s2345[4] = {2, 3, 4, 5}, s244[3] = {2, 4, 4};
    const int64_t cls[3] = {0, 1, 7}, z[40] = {0};
    ct_tensor *x = f32(v, s34, 2), *t = f32(v, s34, 2), *t32 = f32(v, s32, 2);
    CHECK(!ct_binary_cross_entropy(ct_mul_scalar(x, 3.0), t, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "all elements of input should be between 0 and 1");
    CHECK(!ct_binary_cross_entropy(x, ct_mul_scalar(t, 3.0), NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "all elements of target should be between 0 and 1");
    CHECK(!ct_binary_cross_entropy(x, t32, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "Using a target size (torch.Size([3, 2])) that is different to "
                "the input size (torch.Size([3, 4])) is deprecated. Please ensure they have "
                "the same size.");
    CHECK(!ct_binary_cross_entropy(x, ct_to_dtype(t, CT_FLOAT64), NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_DTYPE, "Found dtype Double but expected Float");
    CHECK(!ct_binary_cross_entropy(x, t, f32(v, s25 + 1, 1), CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "");
    CHECK(!ct_binary_cross_entropy_with_logits(x, t32, NULL, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "Target size (torch.Size([3, 2])) must be the same as input size "
                "(torch.Size([3, 4]))");
    CHECK(!ct_binary_cross_entropy_with_logits(x, t, NULL, f32(v, s3, 1), CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a");
    CHECK(!ct_smooth_l1_loss(x, t, CT_REDUCTION_MEAN, -1.0));
    CHECK_ERROR(CT_ERR_VALUE, "smooth_l1_loss does not support negative values for beta.");
    CHECK(!ct_huber_loss(x, t, CT_REDUCTION_MEAN, 0.0));
    CHECK_ERROR(CT_ERR_VALUE, "huber_loss does not support non-positive values for delta.");
    CHECK(!ct_l1_loss(x, t32, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (4) must match the size of tensor b (2) at "
                "non-singleton dimension 1");
    CHECK(!ct_mse_loss(x, t, CT_REDUCTION_BATCHMEAN)); /* PyTorch: "batchmean is not a ..." */
    CHECK_ERROR(CT_ERR_VALUE, "4 is not a valid value for reduction");
    CHECK(!ct_kl_div(x, t, (ct_reduction)17, false));
    CHECK_ERROR(CT_ERR_VALUE, "17 is not a valid value for reduction");
    /* cross_entropy */
    ct_nll_loss_opts o = ct_nll_loss_defaults();
    CHECK(!ct_cross_entropy(x, ct_to_dtype(t, CT_INT64), NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "Expected floating point type for target with class "
                "probabilities, got Long");
    o.ignore_index = 1;
    CHECK(!ct_cross_entropy(x, t, &o));
    CHECK_ERROR(CT_ERR_VALUE, "ignore_index is not supported for floating point target");
    o = ct_nll_loss_defaults();
    o.label_smoothing = 1.5;
    CHECK(!ct_cross_entropy(x, i64(cls, s3, 1), &o));
    CHECK_ERROR(CT_ERR_VALUE, "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
    o = ct_nll_loss_defaults();
    o.weight = f32(v, s25 + 1, 1);
    CHECK(!ct_cross_entropy(x, t, &o));
    CHECK_ERROR(CT_ERR_SHAPE, "cross_entropy: weight tensor should be defined either for all 4 "
                "classes or no classes but got weight tensor of shape: [5]");
    CHECK(!ct_cross_entropy(x, i64(cls, s3, 1), NULL));
    CHECK_ERROR(CT_ERR_INDEX, "Target 7 is out of bounds.");
    ct_tensor *x4 = ct_zeros(s2345, 4, CT_FLOAT32), *x3 = ct_zeros(s234, 3, CT_FLOAT32);
    CHECK(!ct_cross_entropy(x4, i64(z, s244, 3), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "size mismatch (got input: [2, 3, 4, 5] , target: [2, 4, 4]");
    CHECK(!ct_cross_entropy(x4, i64(z, s25, 2), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "only batches of spatial targets supported (3D tensors) but got "
                "targets of dimension: 2");
    CHECK(!ct_nll_loss(x3, i64(z, s25, 2), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected target size [2, 4], got [2, 5]");
    CHECK(!ct_cross_entropy(x3, i64(z, s3, 1), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected input batch_size (2) to match target batch_size (3).");
    ct_scope_end();
}

static void test_loss_errors3(void)
{
    ct_scope_begin();
    const double v[12] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.25, 0.35, 0.45};
    const int64_t s34[2] = {3, 4}, s31[2] = {3, 1}, s3[1] = {3}, s4[1] = {4}, s234[3] = {2, 3, 4};
    const int64_t cls[4] = {0, 1, 7, 2}, c3[3] = {0, 1, 2}, s22[2] = {2, 2};
    ct_tensor *a = f32(v, s34, 2), *b = f32(v, s34, 2), *v3 = f32(v, s3, 1);
    CHECK(!ct_margin_ranking_loss(v3, v3, f32(v, s31, 2), 0.0, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "margin_ranking_loss : All input tensors should have same "
                "dimension but got sizes: input1: torch.Size([3]), input2: torch.Size([3]), "
                "target: torch.Size([3, 1]) ");
    CHECK(!ct_cosine_embedding_loss(a, b, f32(v, s31, 2), 0.0, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "0D or 1D target tensor expected, multi-target not supported");
    CHECK(!ct_cosine_embedding_loss(f32(v, s4, 1), f32(v, s4, 1), v3, 0.0, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "1D target tensor expects 2D input tensors, but found inputs with "
                "sizes [4] and [4].");
    CHECK(!ct_multi_margin_loss(a, i64(cls, s3, 1), 1, 1.0, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_INDEX, "target out of range");
    CHECK(!ct_multi_margin_loss(a, i64(cls, s4, 1), 1, 1.0, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "multi_margin_loss: target tensor should be 1-D with size equal "
                "to the number of input samples (batch size). Expected target size [3], but got "
                "[4]. Input has shape [3, 4].");
    ct_tensor *t3 = i64(c3, s3, 1);
    CHECK(!ct_multi_margin_loss(a, t3, 3, 1.0, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "only p == 1 and p == 2 supported");
    CHECK(!ct_multi_margin_loss(a, t3, 1, 1.0, v3, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "inconsistent weight size, expected 4 but got [3]");
    CHECK(!ct_multi_margin_loss(a, t3, 1, 1.0, f32(v, s22, 2), CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "weight must be one-dimensional");
    CHECK(!ct_multi_margin_loss(ct_zeros(s234, 3, CT_FLOAT32), t3, 1, 1.0, NULL,
                                CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "Expected non-empty vector or matrix with optional 0-dim batch "
                "size, but got: [2, 3, 4]");
    CHECK(!ct_multi_margin_loss(a, ct_to_dtype(t3, CT_FLOAT32), 1, 1.0, NULL,
                                CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_DTYPE, "expected scalar type Long but found Float");
    CHECK(!ct_triplet_margin_loss(a, b, f32(v, s4, 1), 1.0, 2.0, 1e-6, false,
                                  CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "The anchor, positive, and negative tensors are expected to have "
                "the same number of dimensions, but got: anchor 2D, positive 2D, and negative 1D "
                "inputs");
    CHECK(!ct_triplet_margin_loss(a, b, b, 0.0, 2.0, 1e-6, false, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "margin must be greater than 0, got 0.0");
    CHECK(!ct_triplet_margin_loss(a, b, b, -0.5, 2.0, 1e-6, false, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "margin must be greater than 0, got -0.5");
    CHECK(!ct_gaussian_nll_loss(a, b, ct_neg(b), false, 1e-6, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "var has negative entry/entries");
    CHECK(!ct_gaussian_nll_loss(a, b, f32(v, s4, 1), false, 1e-6, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "var is of incorrect size");
    CHECK(ct_gaussian_nll_loss(a, b, f32(v, s31, 2), false, 1e-6, CT_REDUCTION_MEAN) != NULL);
    CHECK(!ct_soft_margin_loss(a, f32(v, s3, 1), CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a");
    CHECK(!ct_poisson_nll_loss(a, b, true, false, 1e-8, CT_REDUCTION_BATCHMEAN));
    CHECK_ERROR(CT_ERR_VALUE, "4 is not a valid value for reduction");
    ct_scope_end();
}

/* ---- modules ------------------------------------------------------------------------------ */
/* m's loss equals the functional one (same bytes) */
static void check_module(ct_module *m, const ct_tensor *x, const ct_tensor *t,
                         const ct_tensor *want, const char *name)
{
    CHECK(m && !strcmp(ct_module_name(m), name));
    CHECK_MSG(ct_test_same_bytes(ct_loss_forward(m, x, t), want), "%s: %s", name,
              ct_error() ? ct_error() : "values differ");
    ct_error_clear();
    ct_module_free(m);
}

static void test_loss_modules(void)
{
    ct_scope_begin();
    const int64_t s34[2] = {3, 4}, s4[1] = {4}, s3[1] = {3};
    const int64_t cls[3] = {0, 3, 2};
    const double wv[4] = {0.5, 2.0, 1.5, 1.0};
    ct_manual_seed(3);
    ct_tensor *x = ct_randn(s34, 2, CT_FLOAT32, NULL), *p = ct_sigmoid(x);
    ct_tensor *t = ct_rand(s34, 2, CT_FLOAT32, NULL), *c = i64(cls, s3, 1), *w = f32(wv, s4, 1);
    ct_nll_loss_opts o = {w, 2, CT_REDUCTION_SUM, 0.25};
    ct_module *m = ct_cross_entropy_loss_new(&o);
    CHECK(ct_module_get_parameter(m, "weight") == w);
    check_module(m, x, c, ct_cross_entropy(x, c, &o), "CrossEntropyLoss");
    check_module(ct_cross_entropy_loss_new(NULL), x, c, ct_cross_entropy(x, c, NULL),
                 "CrossEntropyLoss");
    check_module(ct_nll_loss_new(&o), x, c, ct_nll_loss(x, c, &o), "NLLLoss");
    check_module(ct_mse_loss_new(CT_REDUCTION_SUM), x, t, ct_mse_loss(x, t, CT_REDUCTION_SUM),
                 "MSELoss");
    check_module(ct_l1_loss_new(CT_REDUCTION_NONE), x, t, ct_l1_loss(x, t, CT_REDUCTION_NONE),
                 "L1Loss");
    check_module(ct_bce_loss_new(w, CT_REDUCTION_MEAN), p, t,
                 ct_binary_cross_entropy(p, t, w, CT_REDUCTION_MEAN), "BCELoss");
    m = ct_bce_with_logits_loss_new(NULL, CT_REDUCTION_MEAN, w);
    CHECK(ct_module_get_parameter(m, "pos_weight") == w && !ct_module_get_parameter(m, "weight"));
    check_module(m, x, t, ct_binary_cross_entropy_with_logits(x, t, NULL, w, CT_REDUCTION_MEAN),
                 "BCEWithLogitsLoss");
    check_module(ct_huber_loss_new(CT_REDUCTION_MEAN, 0.5), x, t,
                 ct_huber_loss(x, t, CT_REDUCTION_MEAN, 0.5), "HuberLoss");
    check_module(ct_smooth_l1_loss_new(CT_REDUCTION_SUM, 0.5), x, t,
                 ct_smooth_l1_loss(x, t, CT_REDUCTION_SUM, 0.5), "SmoothL1Loss");
    ct_tensor *lt = ct_log_softmax(t, 1);
    check_module(ct_kl_div_loss_new(CT_REDUCTION_BATCHMEAN, true), ct_log_softmax(x, 1), lt,
                 ct_kl_div(ct_log_softmax(x, 1), lt, CT_REDUCTION_BATCHMEAN, true), "KLDivLoss");
    /* a loss module has no one-input forward; ct_loss_forward needs a loss module */
    m = ct_mse_loss_new(CT_REDUCTION_MEAN);
    CHECK(!ct_module_forward(m, x));
    CHECK_ERROR(CT_ERR_VALUE, "MSELoss takes an input and a target: call ct_loss_forward");
    ct_module_free(m);
    m = ct_relu_new();
    CHECK(!ct_loss_forward(m, x, t));
    CHECK_ERROR(CT_ERR_VALUE, "ReLU is not a loss module");
    ct_module_free(m);
    /* errors surface at forward, as PyTorch's */
    m = ct_mse_loss_new((ct_reduction)9);
    CHECK(!ct_loss_forward(m, x, t));
    CHECK_ERROR(CT_ERR_VALUE, "9 is not a valid value for reduction");
    ct_module_free(m);
    ct_scope_end();
}

/* The fused cross-entropy gives the same bytes for 1 and 4 threads on (N, C, d) inputs. */
static void xent_nd(ct_tensor **out)
{
    const int64_t s[3] = {64, 10, 9}, st[2] = {64, 9};
    ct_manual_seed(5);
    ct_tensor *x = ct_requires_grad_(ct_randn(s, 3, CT_FLOAT32, NULL), true);
    ct_tensor *t = ct_randint(0, 10, st, 2, CT_INT64, NULL);
    ct_tensor *l = ct_cross_entropy(x, t, NULL);
    CHECK(ct_backward(l, NULL, false) == CT_OK);
    out[0] = ct_keep(ct_detach(l));
    out[1] = ct_keep(ct_clone(ct_grad(x)));
}

static void test_loss_threads(void)
{
    CHECK_THREAD_INVARIANT(xent_nd, 2);
}

void test_loss(void)
{
    RUN(test_loss_golden);
    RUN(test_loss_gradcheck);
    RUN(test_loss_errors);
    RUN(test_loss_errors3);
    RUN(test_loss_modules);
    RUN(test_loss_threads);
}
