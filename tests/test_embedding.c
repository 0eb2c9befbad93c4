/* tests/test_embedding.c - embedding and embedding_bag against PyTorch (tools/
 * gen_golden_embedding.py, tests/golden/embedding_golden.h): outputs, weight and
 * per_sample_weights gradients, the weight after max_norm, on float32/float64, int64/int32,
 * transposed weight and indices, every option; the modules' initial weights bit for bit;
 * gradcheck and the double backward; PyTorch's errors; float16; thread invariance.
 */
#include "test.h"

#include <stdint.h>
#include <stdlib.h>

#include "golden/embedding_golden.h"

static ct_tensor *emb_f64(const double *v, const int64_t *s, int nd, ct_dtype dt)
{
    return ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, s, nd), dt);
}

/* The case's weight (a leaf requiring grad, transposed when wt) */
static ct_tensor *emb_weight(const emb_golden *c, ct_tensor **leaf)
{
    ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
    int64_t s[2] = {c->wt ? c->D : c->V, c->wt ? c->V : c->D};
    *leaf = ct_requires_grad_(emb_f64(c->w, s, 2, dt), true);
    return c->wt ? ct_t(*leaf) : *leaf;
}

static ct_tensor *emb_indices(const emb_golden *c)
{
    int64_t s[3] = {c->shape[0], c->shape[1], c->shape[2]};
    if (c->it) {
        s[0] = c->shape[1];
        s[1] = c->shape[0];
    }
    ct_tensor *ix = ct_tensor_from_data(c->idx, CT_INT64, s, c->nd);
    ix = c->i32 ? ct_to_dtype(ix, CT_INT32) : ix;
    return c->it ? ct_t(ix) : ix;
}

static void test_embedding_golden(void)
{
    int n = (int)(sizeof emb_cases / sizeof emb_cases[0]);
    for (int i = 0; i < n; i++) {
        const emb_golden *c = &emb_cases[i];
        ct_scope_begin();
        double tol = c->f64 ? 1e-14 : 1e-6;
        ct_tensor *leaf, *w = emb_weight(c, &leaf), *ix = emb_indices(c);
        ct_embedding_opts o = ct_embedding_defaults();
        o.padding_idx = c->padding_idx;
        o.max_norm = c->max_norm;
        o.norm_type = c->norm_type;
        o.scale_grad_by_freq = c->scale != 0;
        ct_tensor *y = ct_embedding(ix, w, &o);
        int64_t n_out = ct_numel(ix) * c->D;
        CHECK_MSG(y && ct_dim(y) == c->nd + 1, "embedding case %d: %s", i,
                  ct_error() ? ct_error() : "shape");
        CHECK_TENSOR(y, c->out, n_out, tol, tol);
        CHECK_TENSOR(w, c->after, c->V * c->D, tol, tol);
        int64_t gs = n_out;
        /* the generator's g: values(n, 3) */
        double *gv = (double *)malloc(sizeof(double) * (size_t)n_out);
        for (int64_t k = 0; k < n_out; k++) {
            gv[k] = sin((double)k * 1.3 + 0.7 + 3) * 2 + cos((double)k * 0.37) + 1.5;
        }
        ct_tensor *g = ct_reshape(emb_f64(gv, &gs, 1, ct_tensor_dtype(y)), ct_sizes(y),
                                  ct_dim(y));
        free(gv);
        CHECK(ct_backward(y, g, false) == CT_OK);
        ct_tensor *dw = c->wt ? ct_t(ct_grad(leaf)) : ct_grad(leaf);
        CHECK_MSG(dw != NULL, "embedding case %d: no gradient", i);
        CHECK_TENSOR(dw, c->dw, c->V * c->D, tol, tol);
        ct_scope_end();
    }
}

static double bag_values(int64_t i, int k)
{
    return ct_test_wave(i, k);
}

static ct_tensor *bag_vals(int64_t n, int k, double scale, const int64_t *s, int nd, ct_dtype dt)
{
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        v[i] = bag_values(i, k) * scale;
    }
    ct_tensor *t = emb_f64(v, s, nd, dt);
    free(v);
    return t;
}

static ct_embedding_bag_mode bag_mode(const char *m)
{
    return !strcmp(m, "sum") ? CT_EMBEDDING_BAG_SUM
                             : (!strcmp(m, "mean") ? CT_EMBEDDING_BAG_MEAN : CT_EMBEDDING_BAG_MAX);
}

static void test_embedding_bag_golden(void)
{
    int n = (int)(sizeof bag_cases / sizeof bag_cases[0]);
    for (int i = 0; i < n; i++) {
        const bag_golden *c = &bag_cases[i];
        ct_scope_begin();
        ct_dtype dt = c->f64 ? CT_FLOAT64 : CT_FLOAT32;
        double tol = c->f64 ? 1e-13 : 2e-6;
        int64_t ws[2] = {c->V, c->D}, ni = ct_test_numel(c->shape, c->nd);
        ct_tensor *w = ct_requires_grad_(bag_vals(c->V * c->D, 1, 1, ws, 2, dt), true);
        ct_tensor *ix = ct_tensor_from_data(c->idx, CT_INT64, c->shape, c->nd);
        int64_t no = c->n_off;
        ct_tensor *off = c->n_off >= 0 ? ct_tensor_from_data(c->off, CT_INT64, &no, 1) : NULL;
        ct_tensor *psw = c->psw ? ct_requires_grad_(bag_vals(ni, 2, 0.5, c->shape, c->nd, dt),
                                                    true)
                                : NULL;
        ct_embedding_bag_opts o = ct_embedding_bag_defaults();
        o.mode = bag_mode(c->mode);
        o.include_last_offset = c->last != 0;
        o.padding_idx = c->padding_idx;
        o.scale_grad_by_freq = c->scale != 0;
        o.max_norm = c->max_norm;
        ct_tensor *y = ct_embedding_bag(ix, w, off, psw, &o);
        int64_t os[2] = {c->B, c->D};
        CHECK_MSG(y && ct_test_has_shape(y, os, 2), "bag case %d (%s): %s", i, c->mode,
                  ct_error() ? ct_error() : "shape");
        CHECK_TENSOR(y, c->out, c->B * c->D, tol, tol);
        CHECK(ct_backward(y, bag_vals(c->B * c->D, 4, 1, os, 2, dt), false) == CT_OK);
        CHECK_MSG(ct_grad(w) != NULL, "bag case %d: no weight gradient", i);
        CHECK_TENSOR(ct_grad(w), c->dw, c->V * c->D, tol, tol);
        if (psw) {
            CHECK_TENSOR(ct_grad(psw), c->dpsw, ni, tol, tol);
        }
        ct_scope_end();
    }
}

static void test_embedding_modules(void)
{
    ct_scope_begin();
    ct_embedding_opts o = ct_embedding_defaults();
    o.padding_idx = 2;
    ct_manual_seed(0);
    ct_module *m = ct_embedding_new(10, 4, &o);
    ct_tensor *w = ct_module_get_parameter(m, "weight");
    CHECK(w && ct_tensor_dtype(w) == CT_FLOAT32 && ct_requires_grad(w));
    CHECK_TENSOR(w, emb_init_golden, 40, 0, 0);
    const int64_t iv[3] = {2, 5, 2}, three = 3;
    ct_tensor *ix = ct_tensor_from_data(iv, CT_INT64, &three, 1);
    ct_tensor *y = ct_module_forward(m, ix);
    CHECK(y && ct_equal(y, ct_embedding_forward(m, ix)));
    CHECK(ct_backward(ct_sum(y), NULL, false) == CT_OK);
    int64_t r2 = 2, r5 = 5;
    CHECK(ct_item(ct_sum(ct_abs(ct_select(ct_grad(w), 0, r2)))) == 0); /* padding row */
    CHECK(ct_item(ct_sum(ct_select(ct_grad(w), 0, r5))) == 4);
    ct_manual_seed(1);
    ct_module *b = ct_embedding_bag_new(7, 3, NULL);
    CHECK_TENSOR(ct_module_get_parameter(b, "weight"), bag_init_golden, 21, 0, 0);
    int64_t s2[2] = {1, 3}, one = 1;
    ct_tensor *bag = ct_module_forward(b, ct_reshape(ix, s2, 2));
    ct_tensor *want = ct_mean_dim(ct_embedding(ix, ct_module_get_parameter(b, "weight"), NULL),
                                  0, true);
    CHECK(bag && ct_allclose(bag, ct_reshape(want, s2, 2), 1e-6, 1e-7, false));
    const int64_t z = 0;
    ct_tensor *off = ct_tensor_from_data(&z, CT_INT64, &one, 1);
    CHECK(ct_allclose(ct_embedding_bag_forward(b, ix, off, NULL), bag, 0, 0, false));
    CHECK(!ct_embedding_forward(b, ix));
    CHECK_ERROR(CT_ERR_VALUE, "expected a Embedding module, got EmbeddingBag");
    ct_module_free(m);
    ct_module_free(b);
    ct_scope_end();
}

static void test_embedding_defaults(void)
{
    ct_embedding_opts o = ct_embedding_defaults();
    CHECK(o.padding_idx == INT64_MIN && isnan(o.max_norm) && o.norm_type == 2 &&
          !o.scale_grad_by_freq && !o.sparse);
    ct_embedding_bag_opts b = ct_embedding_bag_defaults();
    CHECK(b.mode == CT_EMBEDDING_BAG_MEAN && b.padding_idx == INT64_MIN && isnan(b.max_norm) &&
          b.norm_type == 2 && !b.scale_grad_by_freq && !b.sparse && !b.include_last_offset);
}

/* inputs: weight (float64); user: the indices (padding_idx and scale_grad_by_freq change the
   gradient on purpose: the golden tests check them) */
static ct_tensor *gc_emb(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_embedding((const ct_tensor *)user, in[0], NULL);
}

static ct_tensor *gc_bag(ct_tensor *const *in, int n, void *user)
{
    ct_embedding_bag_opts o = ct_embedding_bag_defaults();
    const int64_t ov[3] = {0, 2, 2}, three = 3;
    o.mode = n == 2 ? CT_EMBEDDING_BAG_SUM : CT_EMBEDDING_BAG_MAX;
    o.padding_idx = 1;
    ct_tensor *off = ct_tensor_from_data(ov, CT_INT64, &three, 1);
    return ct_embedding_bag((const ct_tensor *)user, in[0], off, n == 2 ? in[1] : NULL, &o);
}

static void test_embedding_gradcheck(void)
{
    ct_scope_begin();
    int64_t s[2] = {6, 3}, two[2] = {2, 3};
    const int64_t iv[6] = {1, 3, 3, 0, 5, 1};
    ct_manual_seed(3);
    ct_tensor *w = ct_requires_grad_(ct_randn(s, 2, CT_FLOAT64, NULL), true);
    ct_tensor *ix = ct_tensor_from_data(iv, CT_INT64, two, 2);
    CHECK(ct_gradcheck(gc_emb, &w, 1, ix, NULL));
    int64_t six = 6;
    ct_tensor *flat = ct_reshape(ix, &six, 1);
    ct_tensor *in[2] = {w, ct_requires_grad_(ct_randn(&six, 1, CT_FLOAT64, NULL), true)};
    CHECK(ct_gradcheck(gc_bag, in, 2, flat, NULL));
    CHECK(ct_gradcheck(gc_bag, in, 1, flat, NULL));
    /* double backward: d/dg <dweight(g), v> = embedding(v)[padding entries zero] */
    ct_tensor *g = ct_requires_grad_(ct_randn(ct_sizes(ct_embedding(ix, w, NULL)), 3,
                                              CT_FLOAT64, NULL), true);
    ct_embedding_opts o = ct_embedding_defaults();
    o.padding_idx = 3;
    ct_tensor *y = ct_embedding(ix, w, &o), *dw = NULL, *dg = NULL;
    CHECK(ct_autograd_grad(&y, 1, &w, 1, (const ct_tensor *const *)&g, true, true, false, &dw) ==
          CT_OK);
    ct_tensor *v = ct_randn(s, 2, CT_FLOAT64, NULL);
    ct_tensor *l = ct_sum(ct_mul(dw, v));
    CHECK(ct_autograd_grad(&l, 1, &g, 1, NULL, false, false, false, &dg) == CT_OK);
    ct_tensor *want = ct_embedding(ix, v, NULL);
    ct_tensor *keep = ct_unsqueeze(ct_to_dtype(ct_ne(ix, ct_scalar_tensor(3, CT_INT64)),
                                               CT_FLOAT64), -1);
    CHECK(dg && ct_allclose(dg, ct_mul(want, keep), 0, 0, false));
    ct_scope_end();
}

static void test_embedding_errors(void)
{
    ct_scope_begin();
    int64_t s[2] = {5, 3}, s3[3] = {1, 1, 2}, one = 1, two = 2, three = 3;
    ct_tensor *w = ct_zeros(s, 2, CT_FLOAT32);
    const int64_t v5 = 5, vm1 = -1, v12[2] = {1, 2}, o1 = 1, o03[2] = {0, 3}, o021[3] = {0, 2, 1};
    CHECK(!ct_embedding(ct_tensor_from_data(&v5, CT_INT64, &one, 1), w, NULL));
    CHECK_ERROR(CT_ERR_INDEX, "index out of range in self");
    CHECK(!ct_embedding(ct_tensor_from_data(&vm1, CT_INT64, &one, 1), w, NULL));
    CHECK_ERROR(CT_ERR_INDEX, "index out of range in self");
    CHECK(!ct_embedding(ct_ones(&one, 1, CT_FLOAT32), w, NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "Expected tensor for argument #1 'indices' to have one of the "
                              "following scalar types: Long, Int; but got torch.FloatTensor "
                              "instead (while checking arguments for embedding)");
    ct_tensor *i1 = ct_tensor_from_data(v12, CT_INT64, &two, 1);
    CHECK(!ct_embedding(i1, ct_zeros(&three, 1, CT_FLOAT32), NULL));
    CHECK_ERROR(CT_ERR_SHAPE, "'weight' must be 2-D");
    ct_embedding_opts o = ct_embedding_defaults();
    o.padding_idx = 5;
    CHECK(!ct_embedding(i1, w, &o));
    CHECK_ERROR(CT_ERR_VALUE, "Padding_idx must be within num_embeddings");
    o.padding_idx = -6;
    CHECK(!ct_embedding_new(5, 3, &o));
    CHECK_ERROR(CT_ERR_VALUE, "Padding_idx must be within num_embeddings");
    o = ct_embedding_defaults();
    o.sparse = true;
    CHECK(!ct_embedding(i1, w, &o));
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "sparse");
    o = ct_embedding_defaults();
    o.max_norm = 1;
    CHECK(!ct_embedding(ct_tensor_from_data(&v5, CT_INT64, &one, 1), w, &o));
    CHECK_ERROR(CT_ERR_INDEX, "index out of range in self");
    /* embedding_bag */
    ct_tensor *i2 = ct_reshape(i1, s3 + 1, 2);
    CHECK(!ct_embedding_bag(i1, w, NULL, NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "offsets has to be a 1D Tensor but got None");
    ct_tensor *off0 = ct_zeros(&one, 1, CT_INT64);
    CHECK(!ct_embedding_bag(i2, w, off0, NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "if input is 2D, then offsets has to be None, as input is treated "
                              "is a mini-batch of fixed length sequences. However, found offsets "
                              "of type Tensor");
    CHECK(!ct_embedding_bag(ct_reshape(i1, s3, 3), w, NULL, NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "input has to be 1D or 2D Tensor, but got Tensor of dimension 3");
    CHECK(!ct_embedding_bag(i1, w, ct_reshape(off0, s3, 2), NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "offsets has to be a 1D Tensor");
    CHECK(!ct_embedding_bag(i1, w, ct_tensor_from_data(&o1, CT_INT64, &one, 1), NULL, NULL));
    CHECK_ERROR(CT_ERR_VALUE, "offsets[0] has to be 0, i.e., the first sequence in the "
                              "mini-batch has to start from position 0. However, got 1");
    CHECK(!ct_embedding_bag(i1, w, ct_tensor_from_data(o03, CT_INT64, &two, 1), NULL, NULL));
    CHECK_ERROR(CT_ERR_INDEX, "offsets[-1] can not be greater than input's length 2 but got "
                              "offsets[-1] of 3");
    CHECK(!ct_embedding_bag(i1, w, ct_tensor_from_data(o021, CT_INT64, &three, 1), NULL, NULL));
    CHECK_ERROR(CT_ERR_INDEX, "Expected i < index_size to be true, but got false.");
    CHECK(!ct_embedding_bag(i1, w, off0, ct_ones(&two, 1, CT_FLOAT32), NULL));
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "embedding_bag: per_sample_weights was not None. "
                                    "per_sample_weights is only supported for mode='sum' (got "
                                    "mode='mean'). Please open a feature request on GitHub.");
    ct_embedding_bag_opts b = ct_embedding_bag_defaults();
    b.mode = CT_EMBEDDING_BAG_SUM;
    CHECK(!ct_embedding_bag(i1, w, off0, ct_ones(&three, 1, CT_FLOAT32), &b));
    CHECK_ERROR(CT_ERR_SHAPE, "embedding_bag: If per_sample_weights (torch.Size([3])) is not "
                              "None, then it must have the same shape as the input "
                              "(torch.Size([2]))");
    b.mode = CT_EMBEDDING_BAG_MAX;
    b.scale_grad_by_freq = true;
    CHECK(!ct_embedding_bag(i1, w, off0, NULL, &b));
    CHECK_ERROR(CT_ERR_VALUE, "max mode does not support scaling the gradient by the frequency");
    b = ct_embedding_bag_defaults();
    b.padding_idx = 7;
    CHECK(!ct_embedding_bag(i1, w, off0, NULL, &b));
    CHECK_ERROR(CT_ERR_VALUE, "padding_idx must be within the number of embeddings, -5 through "
                              "4, but got 7");
    CHECK(!ct_embedding_bag_new(5, 3, &b));
    CHECK_ERROR(CT_ERR_VALUE, "padding_idx must be within num_embeddings");
    CHECK(!ct_embedding_bag(ct_tensor_from_data(&v5, CT_INT64, &one, 1), w, off0, NULL, NULL));
    CHECK_ERROR(CT_ERR_INDEX, "index out of range in self");
    CHECK(!ct_embedding_bag(ct_to_dtype(i1, CT_FLOAT32), w, off0, NULL, NULL));
    CHECK_ERROR(CT_ERR_DTYPE, "but got torch.FloatTensor instead (while checking arguments for "
                              "embedding_bag)");
    b = ct_embedding_bag_defaults();
    b.sparse = true;
    CHECK(!ct_embedding_bag(i1, w, off0, NULL, &b));
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "sparse");
    ct_scope_end();
}

/* float16 weights: the lookup copies bits; the gradient computes in float32 */
static void test_embedding_half(void)
{
    ct_scope_begin();
    int64_t s[2] = {6, 4}, n = 5;
    const int64_t iv[5] = {1, 4, 1, 0, 5};
    ct_manual_seed(4);
    ct_tensor *w16 = ct_requires_grad_(ct_to_dtype(ct_randn(s, 2, CT_FLOAT32, NULL), CT_FLOAT16),
                                       true);
    ct_tensor *ix = ct_tensor_from_data(iv, CT_INT64, &n, 1);
    ct_tensor *y = ct_embedding(ix, w16, NULL);
    CHECK(y && ct_tensor_dtype(y) == CT_FLOAT16 &&
          ct_equal(y, ct_index_select(ct_detach(w16), 0, ix)));
    CHECK(ct_backward(ct_sum(y), NULL, false) == CT_OK);
    const double want[6] = {4, 8, 0, 0, 4, 4};
    CHECK(ct_tensor_dtype(ct_grad(w16)) == CT_FLOAT16);
    CHECK_TENSOR(ct_sum_dim(ct_to_dtype(ct_grad(w16), CT_FLOAT64), 1, false), want, 6, 0, 0);
    ct_scope_end();
}

/* A GPT-like lookup large enough to run in parallel: forward, backward with repeats. */
static void emb_threads(ct_tensor **out)
{
    int64_t s[2] = {3000, 64}, is[2] = {16, 128};
    ct_manual_seed(5);
    ct_tensor *w = ct_requires_grad_(ct_randn(s, 2, CT_FLOAT32, NULL), true);
    ct_tensor *ix = ct_randint(0, 3000, is, 2, CT_INT64, NULL);
    ct_embedding_opts o = ct_embedding_defaults();
    o.scale_grad_by_freq = true;
    ct_tensor *y = ct_embedding(ix, w, &o);
    ct_backward(y, ct_randn(ct_sizes(y), 3, CT_FLOAT32, NULL), false);
    out[0] = ct_keep(y);
    out[1] = ct_keep(ct_mul_scalar(ct_grad(w), 1));
    ct_embedding_bag_opts b = ct_embedding_bag_defaults();
    b.mode = CT_EMBEDDING_BAG_MAX;
    out[2] = ct_keep(ct_embedding_bag(ix, w, NULL, NULL, &b));
}

static void test_embedding_threads(void)
{
    CHECK_THREAD_INVARIANT(emb_threads, 3);
}

void test_embedding(void)
{
    RUN(test_embedding_defaults);
    RUN(test_embedding_golden);
    RUN(test_embedding_bag_golden);
    RUN(test_embedding_modules);
    RUN(test_embedding_gradcheck);
    RUN(test_embedding_errors);
    RUN(test_embedding_half);
    RUN(test_embedding_threads);
}
