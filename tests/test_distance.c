/* tests/test_distance.c - one_hot, normalize, cosine_similarity, pairwise_distance, pdist,
 * bilinear and their modules against PyTorch (tests/golden/distance_golden.h, from
 * tools/gen_golden_distance.py): outputs and gradients in float32/float64/float16 with
 * broadcast, transposed and zero-vector inputs, gradcheck and gradgradcheck, nn.Bilinear's
 * initialization bit for bit, PyTorch's errors. */
#include "test.h"
#include "golden/distance_golden.h"

#include <stdint.h>

static const ct_dtype dist_dtypes[3] = {CT_FLOAT32, CT_FLOAT64, CT_FLOAT16};

/* The op of a golden case on its inputs. */
static ct_tensor *dist_run(const ct_golden_dist_case *c, ct_tensor *const *x)
{
    const char *op = c->op;
    if (!strcmp(op, "normalize")) {
        return ct_normalize(x[0], c->p, c->dim, c->eps);
    }
    if (!strcmp(op, "cosine_similarity")) {
        return ct_cosine_similarity(x[0], x[1], c->dim, c->eps);
    }
    if (!strcmp(op, "pairwise_distance")) {
        return ct_pairwise_distance(x[0], x[1], c->p, c->eps, c->keepdim != 0);
    }
    if (!strcmp(op, "pdist")) {
        return ct_pdist(x[0], c->p);
    }
    return ct_bilinear(x[0], x[1], x[2], c->n_in > 3 ? x[3] : NULL);
}

/* One golden case: the leaves (transposed ones built from their base), the output, and the
   gradients of sum(out * gout). */
static void dist_check_case(int k, const ct_golden_dist_case *c)
{
    ct_dtype dt = dist_dtypes[c->dtype];
    double rtol = c->dtype == 1 ? 1e-12 : c->dtype == 0 ? 2e-5 : 2e-3;
    double atol = c->dtype == 1 ? 1e-12 : c->dtype == 0 ? 2e-6 : 2e-3;
    ct_tensor *leaf[4], *x[4];
    for (int i = 0; i < c->n_in; i++) {
        int64_t s[3];
        memcpy(s, c->shape[i], sizeof s);
        if (c->transposed[i]) {
            s[c->nd[i] - 1] = c->shape[i][c->nd[i] - 2];
            s[c->nd[i] - 2] = c->shape[i][c->nd[i] - 1];
        }
        leaf[i] = ct_test_param(c->in[i], s, c->nd[i], dt);
    }
    ct_scope_begin();
    for (int i = 0; i < c->n_in; i++) {
        x[i] = c->transposed[i] ? ct_transpose(leaf[i], -1, -2) : leaf[i];
    }
    ct_tensor *y = dist_run(c, x);
    int64_t n = ct_test_numel(c->out_shape, c->nd_out);
    CHECK_MSG(ct_test_has_shape(y, c->out_shape, c->nd_out), "case %d (%s): shape", k, c->op);
    CHECK_MSG(y && ct_tensor_dtype(y) == dt, "case %d (%s): dtype", k, c->op);
    CHECK_MSG(CHECK_TENSOR(y, c->out, n, rtol, atol), "case %d (%s): output", k, c->op);
    ct_tensor *g = ct_to_dtype(ct_tensor_from_data(c->gout, CT_FLOAT64, c->out_shape, c->nd_out),
                               dt);
    CHECK(ct_backward(ct_sum(ct_mul(y, g)), NULL, false) == CT_OK);
    for (int i = 0; i < c->n_in; i++) {
        ct_tensor *gr = ct_grad(leaf[i]);
        gr = gr && c->transposed[i] ? ct_transpose(gr, -1, -2) : gr;
        int64_t m = ct_test_numel(c->shape[i], c->nd[i]);
        CHECK_MSG(gr && CHECK_TENSOR(gr, c->grad[i], m, rtol, atol), "case %d (%s): grad %d", k,
                  c->op, i);
    }
    ct_scope_end();
    for (int i = 0; i < c->n_in; i++) {
        ct_free(leaf[i]);
    }
    CHECK_MSG(!ct_error(), "case %d: %s", k, ct_error() ? ct_error() : "");
    ct_error_clear();
}

static void test_distance_golden(void)
{
    int n = (int)(sizeof ct_golden_dist_cases / sizeof ct_golden_dist_cases[0]);
    for (int k = 0; k < n; k++) {
        dist_check_case(k, &ct_golden_dist_cases[k]);
    }
}

static void test_distance_one_hot(void)
{
    int n = (int)(sizeof ct_golden_one_hot_cases / sizeof ct_golden_one_hot_cases[0]);
    for (int k = 0; k < n; k++) {
        const ct_golden_one_hot_case *c = &ct_golden_one_hot_cases[k];
        ct_scope_begin();
        ct_tensor *x = ct_to_dtype(ct_tensor_from_data(c->in, CT_FLOAT64, c->shape, c->nd),
                                   CT_INT64);
        ct_tensor *y = ct_one_hot(x, c->num_classes);
        CHECK_MSG(ct_test_has_shape(y, c->out_shape, c->nd_out), "one_hot case %d: shape", k);
        CHECK(y && ct_tensor_dtype(y) == CT_INT64);
        CHECK(CHECK_TENSOR(ct_to_dtype(y, CT_FLOAT64), c->out,
                           ct_test_numel(c->out_shape, c->nd_out), 0, 0));
        ct_scope_end();
    }
    const double v[3] = {0, -1, 3};
    const int64_t s2 = 2, s0 = 0;
    ct_scope_begin();
    ct_tensor *neg = ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, &s2, 1), CT_INT64);
    ct_tensor *big = ct_to_dtype(ct_tensor_from_data(v + 1, CT_FLOAT64, &s2, 1), CT_INT64);
    CHECK(ct_one_hot(neg, 3) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_one_hot: Class values must be non-negative.");
    CHECK(ct_one_hot(ct_abs(big), 3) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Class values must be smaller than num_classes.");
    CHECK(ct_one_hot(ct_abs(big), 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Class values must be smaller than num_classes.");
    CHECK(ct_one_hot(ct_zeros(&s0, 1, CT_INT64), -1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Can not infer total number of classes from empty tensor.");
    CHECK(ct_one_hot(ct_ones(&s2, 1, CT_FLOAT32), 3) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "one_hot is only applicable to index tensor of type LongTensor.");
    ct_scope_end();
}

/* gradcheck functions: the ops with their options in user (a golden case's fields) */
static ct_tensor *dist_gc_fn(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return dist_run((const ct_golden_dist_case *)user, in);
}

/* float64 leaves of the case's shapes (each from values shifted by i) that require grad */
static void dist_gc_inputs(const ct_golden_dist_case *c, ct_tensor **x)
{
    for (int i = 0; i < c->n_in; i++) {
        ct_tensor *v = ct_tensor_from_data(c->in[i], CT_FLOAT64, c->shape[i], c->nd[i]);
        x[i] = ct_requires_grad_(ct_detach(v), true);
    }
}

/* gradgradcheck: the gradients of sum(out * gout) with respect to every input made with a
   graph, flattened and concatenated (the last input is gout) */
static ct_tensor *dist_gg_fn(ct_tensor *const *in, int n, void *user)
{
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = dist_run((const ct_golden_dist_case *)user, in);
    const ct_tensor *go[1] = {in[n - 1]};
    ct_tensor *g[4] = {NULL, NULL, NULL, NULL}, *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, n - 1, go, false, true, false, g) == CT_OK) {
        const ct_tensor *parts[4];
        for (int i = 0; i < n - 1; i++) {
            parts[i] = ct_flatten(g[i], 0, -1);
        }
        out = ct_cat(parts, n - 1, 0);
    }
    ct_set_grad_enabled(prev);
    return out;
}

static void test_distance_gradcheck(void)
{
    int n = (int)(sizeof ct_golden_dist_cases / sizeof ct_golden_dist_cases[0]);
    for (int k = 0; k < n; k++) {
        const ct_golden_dist_case *c = &ct_golden_dist_cases[k];
        if (c->dtype != 1 || !c->smooth) {
            continue;
        }
        ct_scope_begin();
        ct_tensor *x[5];
        dist_gc_inputs(c, x);
        CHECK_MSG(ct_gradcheck(dist_gc_fn, x, c->n_in, (void *)(uintptr_t)c, NULL),
                  "gradcheck case %d (%s): %s", k, c->op, ct_error() ? ct_error() : "");
        ct_error_clear();
        if (strcmp(c->op, "pdist") != 0 && c->p != INFINITY) {
            ct_tensor *y = dist_run(c, x);
            x[c->n_in] = ct_requires_grad_(
                ct_tensor_from_data(c->gout, CT_FLOAT64, ct_sizes(y), ct_dim(y)), true);
            CHECK_MSG(ct_gradcheck(dist_gg_fn, x, c->n_in + 1, (void *)(uintptr_t)c, NULL),
                      "gradgradcheck case %d (%s): %s", k, c->op, ct_error() ? ct_error() : "");
            ct_error_clear();
        }
        ct_scope_end();
    }
}

static void test_distance_errors(void)
{
    const int64_t s23[2] = {2, 3}, s24[2] = {2, 4}, s3[1] = {3}, s423[3] = {4, 2, 3};
    const int64_t s4[1] = {4}, s33[2] = {3, 3}, s232[3] = {2, 3, 2}, s22[2] = {2, 2};
    ct_scope_begin();
    ct_tensor *a = ct_ones(s23, 2, CT_FLOAT32), *w = ct_ones(s423, 3, CT_FLOAT32);
    ct_tensor *b = ct_ones(s23, 2, CT_FLOAT32), *bias = ct_ones(s4, 1, CT_FLOAT32);
    CHECK(ct_cosine_similarity(ct_ones(s23, 2, CT_INT64), ct_ones(s23, 2, CT_INT64), 1, 1e-8) ==
          NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "expected common dtype to be floating point, yet common dtype is "
                "Long");
    CHECK(ct_cosine_similarity(a, ct_ones(s24, 2, CT_FLOAT32), 1, 1e-8) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The size of tensor a (3) must match the size of tensor b (4)");
    CHECK(ct_pdist(ct_ones(s3, 1, CT_FLOAT32), 2.0) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_pdist: pdist only supports 2D tensors, got: 1D");
    CHECK(ct_pdist(a, -1.0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "pdist only supports non-negative p values");
    CHECK(ct_pdist(ct_ones(s23, 2, CT_INT64), 2.0) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "pdist only supports floating-point dtypes");
    CHECK(ct_normalize(ct_ones(s23, 2, CT_INT64), 2.0, 1, 1e-12) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Expected a floating point or complex tensor as input. Got Long");
    CHECK(ct_bilinear(a, ct_ones(s232, 3, CT_FLOAT32), w, bias) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_bilinear: bilinear(): input dimensions do not match: got 2 "
                "and 3");
    CHECK(ct_bilinear(a, ct_ones(s33, 2, CT_FLOAT32), w, bias) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "bilinear(): input batch dimensions do not match at dim 0: got 2 "
                "and 3");
    CHECK(ct_bilinear(b, a, w, bias) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "bilinear(): input1 size does not match weight size: got 3 but "
                "expected 2");
    CHECK(ct_bilinear(ct_ones(s22, 2, CT_FLOAT32), ct_ones(s22, 2, CT_FLOAT32), w, bias) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "bilinear(): input2 size does not match weight size: got 2 but "
                "expected 3");
    CHECK(ct_bilinear(ct_ones(s22, 2, CT_FLOAT32), a, w, ct_ones(s3, 1, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "bilinear(): bias size does not match weight size: got 3 but "
                "expected 4");
    CHECK(ct_bilinear(ct_ones(s22, 2, CT_FLOAT32), a, a, bias) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "number of dimensions must match");
    CHECK(ct_bilinear_new(0, 2, 3, true) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "in1_features must be > 0, but got (in1_features=0)");
    CHECK(ct_bilinear_new(2, -1, 3, true) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Trying to create tensor with negative dimension -1: [3, 2, -1]");
    ct_scope_end();
}

/* nn.Bilinear's parameters bit for bit after the same seed; the modules' forwards are the
   functions with the modules' options; single-input calls and wrong modules fail. */
static void test_distance_modules(void)
{
    ct_manual_seed(7);
    ct_module *bl = ct_bilinear_new(3, 2, 4, true);
    ct_module *cs = ct_cosine_similarity_new(0, 0.5);
    ct_module *pd = ct_pairwise_distance_new(1.0, 0.25, true);
    CHECK(bl && cs && pd && !strcmp(ct_module_name(bl), "Bilinear"));
    CHECK(!strcmp(ct_module_name(cs), "CosineSimilarity"));
    CHECK(!strcmp(ct_module_name(pd), "PairwiseDistance"));
    ct_tensor *w = ct_module_get_parameter(bl, "weight");
    ct_tensor *bias = ct_module_get_parameter(bl, "bias");
    CHECK(CHECK_TENSOR(w, ct_golden_bilinear_init_weight, 24, 0, 0));
    CHECK(CHECK_TENSOR(bias, ct_golden_bilinear_init_bias, 4, 0, 0));
    CHECK(ct_requires_grad(w) && ct_module_parameters(bl, NULL, 0) == 2);
    ct_module *nb = ct_bilinear_new(3, 2, 4, false);
    CHECK(nb && ct_module_parameters(nb, NULL, 0) == 1);
    const int64_t s53[2] = {5, 3}, s52[2] = {5, 2};
    ct_scope_begin();
    ct_tensor *x1 = ct_randn(s53, 2, CT_FLOAT32, NULL), *x2 = ct_randn(s52, 2, CT_FLOAT32, NULL);
    ct_tensor *x3 = ct_randn(s53, 2, CT_FLOAT32, NULL);
    CHECK(ct_allclose(ct_bilinear_forward(bl, x1, x2), ct_bilinear(x1, x2, w, bias), 0, 0, false));
    CHECK(ct_allclose(ct_cosine_similarity_forward(cs, x1, x3),
                      ct_cosine_similarity(x1, x3, 0, 0.5), 0, 0, false));
    CHECK(ct_allclose(ct_pairwise_distance_forward(pd, x1, x3),
                      ct_pairwise_distance(x1, x3, 1.0, 0.25, true), 0, 0, false));
    CHECK(ct_module_forward(cs, x1) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "CosineSimilarity takes two inputs");
    CHECK(ct_cosine_similarity_forward(pd, x1, x3) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected a CosineSimilarity module, got PairwiseDistance");
    CHECK(ct_bilinear_forward(pd, x1, x2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected a Bilinear module, got PairwiseDistance");
    CHECK(ct_pairwise_distance_forward(bl, x1, x3) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected a PairwiseDistance module, got Bilinear");
    ct_scope_end();
    ct_module_free(bl);
    ct_module_free(nb);
    ct_module_free(cs);
    ct_module_free(pd);
}

/* Results are the same bytes for 1 and 4 threads (large enough to split). */
static void dist_threads_compute(ct_tensor **out)
{
    const int64_t s[2] = {300, 200}, sw[3] = {8, 200, 200};
    ct_manual_seed(3);
    ct_tensor *a = ct_randn(s, 2, CT_FLOAT32, NULL), *b = ct_randn(s, 2, CT_FLOAT32, NULL);
    ct_tensor *w = ct_randn(sw, 3, CT_FLOAT32, NULL);
    out[0] = ct_keep(ct_cosine_similarity(a, b, 1, 1e-8));
    out[1] = ct_keep(ct_normalize(a, 2.0, 0, 1e-12));
    out[2] = ct_keep(ct_pdist(ct_narrow(a, 0, 0, 40), 2.0));
    out[3] = ct_keep(ct_bilinear(a, b, w, NULL));
}

static void test_distance_thread_invariant(void)
{
    CHECK_THREAD_INVARIANT(dist_threads_compute, 4);
}

void test_distance(void)
{
    RUN(test_distance_golden);
    RUN(test_distance_one_hot);
    RUN(test_distance_gradcheck);
    RUN(test_distance_errors);
    RUN(test_distance_modules);
    RUN(test_distance_thread_invariant);
}
