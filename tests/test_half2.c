/* tests/test_half2.c - float16/bfloat16 across issue 7's op families against PyTorch
 * (tools/gen_golden_half2.py -> tests/golden/half2_golden.h): pointwise, sort/selection and
 * reductions, linalg products, views/indexing, creation and softmax on contiguous, transposed
 * and broadcast inputs; SGD, Adam and AdamW steps on half parameters; DLPack codes of the half
 * dtypes; the random ops' bounds checks in half and multinomial, bernoulli(p) and normal(mean,
 * std) over half tensors. (The random streams themselves are in
 * tests/test_rng.c, the printing in tests/test_print.c.)
 */
#include "test.h"
#include "golden/half2_golden.h"

#include <math.h>

/* A tensor of the case's stored values in its dtype (a transposed view for TRANSPOSED). */
static ct_tensor *half2_input(const half2_tensor *t)
{
    ct_tensor *d = ct_tensor_from_data(t->data, CT_FLOAT64, t->sizes, t->ndim);
    ct_tensor *r = ct_to_dtype(d, t->dtype);
    return t->layout == HALF2_TRANSPOSED ? ct_t(r) : r;
}

/* One unit in the last place of dtype (float16 or bfloat16) at magnitude |v|. */
static double half2_ulp(ct_dtype dtype, double v)
{
    int mant = dtype == CT_FLOAT16 ? 10 : 7, emin = dtype == CT_FLOAT16 ? -14 : -126;
    int e = v == 0 ? emin : (int)floor(log2(fabs(v)));
    return ldexp(1.0, (e < emin ? emin : e) - mant);
}

/* The values of the sort and selection ops (they return them through out-pointers). */
static ct_tensor *half2_select(const half2_case *c, ct_tensor *in)
{
    ct_tensor *v = NULL, *ix = NULL;
    ct_status st = CT_OK;
    if (c->op == HALF2_SORT) {
        st = ct_sort(in, c->i, c->i == 1, false, &v, &ix);
    } else if (c->op == HALF2_TOPK) {
        st = ct_topk(in, c->i, -1, true, true, &v, &ix);
    } else {
        st = ct_kthvalue(in, c->i, -1, false, &v, &ix);
    }
    return st == CT_OK ? v : NULL;
}

static ct_tensor *half2_run(const half2_case *c, ct_tensor **in)
{
    int64_t dim = c->i;
    switch (c->op) {
    case HALF2_ERF: return ct_erf(in[0]);
    case HALF2_LOG1P: return ct_log1p(in[0]);
    case HALF2_EXPM1: return ct_expm1(in[0]);
    case HALF2_ERFC: return ct_erfc(in[0]);
    case HALF2_FLOOR: return ct_floor(in[0]);
    case HALF2_ROUND: return ct_round(in[0]);
    case HALF2_ATAN2: return ct_atan2(in[0], in[1]);
    case HALF2_FMOD: return ct_fmod(in[0], in[1]);
    case HALF2_REMAINDER: return ct_remainder(in[0], in[1]);
    case HALF2_LOGADDEXP: return ct_logaddexp(in[0], in[1]);
    case HALF2_SIGMOID: return ct_sigmoid(in[0]);
    case HALF2_CLAMP: return ct_clamp(in[0], c->a, c->b);
    case HALF2_WHERE: return ct_where(in[0], in[1], in[2]);
    case HALF2_MASKED_FILL: return ct_masked_fill(in[0], in[1], c->a);
    case HALF2_SORT:
    case HALF2_TOPK:
    case HALF2_KTHVALUE: return half2_select(c, in[0]);
    case HALF2_MEDIAN: return ct_median(in[0]);
    case HALF2_CUMSUM: return ct_cumsum(in[0], dim, CT_DTYPE_DEFAULT);
    case HALF2_PROD_DIM: return ct_prod_dim(in[0], dim, false);
    case HALF2_AMAX: return ct_amax(in[0], &dim, 1, false);
    case HALF2_SUM_DIM: return ct_sum_dim(in[0], dim, false);
    case HALF2_MEAN_DIM: return ct_mean_dim(in[0], dim, false);
    case HALF2_STD_DIM: return ct_std_dim(in[0], &dim, 1, 1.0, false);
    case HALF2_SOFTMAX: return ct_softmax(in[0], dim);
    case HALF2_LOG_SOFTMAX: return ct_log_softmax(in[0], dim);
    case HALF2_BADDBMM: return ct_baddbmm(in[0], in[1], in[2], c->a, c->b);
    case HALF2_ADDMM: return ct_addmm(in[0], in[1], in[2], c->a, c->b);
    case HALF2_MATMUL: return ct_matmul(in[0], in[1]);
    case HALF2_EINSUM: return ct_einsum("bij,bjk->bik", (const ct_tensor *const *)in, 2);
    case HALF2_OUTER: return ct_outer(in[0], in[1]);
    case HALF2_TRACE: return ct_trace(in[0]);
    case HALF2_KRON: return ct_kron(in[0], in[1]);
    case HALF2_CROSS: return ct_cross(in[0], in[1], &dim);
    case HALF2_INDEX_SELECT: return ct_index_select(in[0], dim, in[1]);
    case HALF2_GATHER: return ct_gather(in[0], dim, in[1]);
    case HALF2_TRIL: return ct_tril(in[0], c->i);
    case HALF2_LOGSPACE: return ct_logspace(c->a, c->b, c->i, 10.0, c->dtype);
    case HALF2_LINSPACE: return ct_linspace(c->a, c->b, c->i, c->dtype);
    case HALF2_MULTINOMIAL:
        ct_manual_seed(0);
        return ct_multinomial(in[0], c->i, c->a != 0, NULL);
    case HALF2_BERNOULLI_P: ct_manual_seed(0); return ct_bernoulli(in[0], NULL);
    case HALF2_NORMAL_TT: ct_manual_seed(0); return ct_normal(in[0], in[1], NULL);
    case HALF2_SCATTER_ADD: return ct_scatter_add(in[0], dim, in[1], in[2]);
    case HALF2_SCATTER_AMAX: return ct_scatter_reduce(in[0], dim, in[1], in[2], "amax", true);
    case HALF2_INDEX_ADD: return ct_index_add(in[0], dim, in[1], in[2], c->a);
    case HALF2_INDEX_PUT_ACC: return ct_index_put(in[0], (const ct_tensor *const *)&in[1], 1,
                                                  in[2], true);
    case HALF2_TAKE_ALONG_DIM: return ct_take_along_dim(in[0], in[1], dim);
    case HALF2_MASKED_SELECT: return ct_masked_select(in[0], in[1]);
    case HALF2_FLIP: {
        const int64_t dims[2] = {0, 1};
        return ct_flip(in[0], dims, 2);
    }
    case HALF2_ROLL: {
        const int64_t shift = (int64_t)c->a;
        return ct_roll(in[0], &shift, 1, &dim, 1);
    }
    case HALF2_CUMPROD: return ct_cumprod(in[0], dim, CT_DTYPE_DEFAULT);
    case HALF2_CUMMAX: {
        ct_tensor *v = NULL, *ix = NULL;
        return ct_cummax(in[0], dim, &v, &ix) == CT_OK ? v : NULL;
    }
    case HALF2_LOGCUMSUMEXP: return ct_logcumsumexp(in[0], dim);
    case HALF2_LOGSUMEXP: return ct_logsumexp(in[0], &dim, 1, false);
    case HALF2_VAR_DIM: return ct_var_dim(in[0], &dim, 1, 0.0, false);
    case HALF2_NANSUM: return ct_nansum(in[0], &dim, 1, false);
    case HALF2_SEARCHSORTED: return ct_searchsorted(in[0], in[1], false, true, NULL);
    case HALF2_BUCKETIZE: return ct_bucketize(in[0], in[1], false, false);
    case HALF2_VECTOR_NORM: return ct_linalg_vector_norm(in[0], c->a, &dim, 1, false);
    case HALF2_ADDCMUL: return ct_addcmul(in[0], in[1], in[2], c->a);
    case HALF2_LERP: return ct_lerp(in[0], in[1], in[2]);
    case HALF2_HYPOT: return ct_hypot(in[0], in[1]);
    case HALF2_XLOGY: return ct_xlogy(in[0], in[1]);
    case HALF2_DOT: return ct_dot(in[0], in[1]);
    case HALF2_MV: return ct_mv(in[0], in[1]);
    case HALF2_MESHGRID: {
        ct_tensor *grids[2] = {NULL, NULL};
        return ct_meshgrid((const ct_tensor *const *)in, 2, "ij", grids) == CT_OK ? grids[1]
                                                                                 : NULL;
    }
    }
    return NULL;
}

/* got (any dtype) against the case's output: shape, dtype, then every value exactly or within
   one half ulp. */
static void half2_check(const half2_case *c, const ct_tensor *got)
{
    const half2_tensor *w = &c->out;
    if (!got || ct_tensor_dtype(got) != w->dtype || !ct_test_has_shape(got, w->sizes, w->ndim)) {
        ct_test_fail(__FILE__, __LINE__, "%s: no %s result of the expected shape (%s)", c->name,
                     ct_dtype_name(w->dtype), ct_error() ? ct_error() : "wrong dtype or shape");
        return;
    }
    const double *v = (const double *)ct_data_ptr(ct_contiguous(ct_to_dtype(got, CT_FLOAT64)));
    for (int64_t k = 0; k < w->numel; k++) {
        double want = w->data[k], tol = 0;
        if (c->mode != HALF2_EXACT) {
            tol = half2_ulp(c->dtype, fmax(fabs(want), fabs(v[k])));
        }
        bool same = v[k] == want || (isnan(v[k]) && isnan(want));
        if (!same && !(fabs(v[k] - want) <= tol)) {
            ct_test_fail(__FILE__, __LINE__, "%s: element %lld is %.9g, PyTorch's %.9g", c->name,
                         (long long)k, v[k], want);
            return;
        }
    }
}

/* Every case of the fixture: the op in float16 and bfloat16 equals PyTorch's result. */
static void test_half2_ops_match_pytorch(void)
{
    int n_cases = (int)(sizeof half2_cases / sizeof half2_cases[0]);
    for (int k = 0; k < n_cases; k++) {
        const half2_case *c = &half2_cases[k];
        ct_scope_begin();
        ct_tensor *in[4] = {NULL, NULL, NULL, NULL};
        for (int j = 0; j < c->n_inputs; j++) {
            in[j] = half2_input(&c->inputs[j]);
        }
        if (c->mode == HALF2_GRAD) { /* d/d in[0] of (op(in[0], ...) * in[last]).sum() */
            ct_requires_grad_(in[0], true);
            ct_tensor *y = half2_run(c, in);
            CHECK_MSG(y && ct_backward(y, in[c->n_inputs - 1], false) == CT_OK, "%s: %s",
                      c->name, ct_error() ? ct_error() : "");
            half2_check(c, ct_grad(in[0]));
        } else {
            half2_check(c, half2_run(c, in));
        }
        ct_error_clear();
        ct_scope_end();
    }
}

static ct_optimizer *half2_optimizer(const half2_optim *o, ct_tensor *p)
{
    if (o->kind == 0) {
        ct_sgd_opts s = ct_sgd_defaults();
        s.lr = o->lr;
        s.momentum = o->a;
        s.dampening = o->b;
        s.weight_decay = o->weight_decay;
        s.nesterov = o->nesterov;
        s.maximize = o->maximize;
        return ct_sgd_new(&p, 1, &s);
    }
    ct_adam_opts a = o->kind == 1 ? ct_adam_defaults() : ct_adamw_defaults();
    a.lr = o->lr;
    a.betas[0] = o->a;
    a.betas[1] = o->b;
    a.weight_decay = o->weight_decay;
    a.eps = o->eps;
    a.amsgrad = o->amsgrad;
    a.maximize = o->maximize;
    return o->kind == 1 ? ct_adam_new(&p, 1, &a) : ct_adamw_new(&p, 1, &a);
}

/* SGD (momentum, dampening, weight decay, nesterov, maximize), Adam (weight decay, amsgrad)
   and AdamW on float16/bfloat16 parameters: torch.optim's CPU results after a few steps, bit
   for bit (every op of the single-tensor path rounds to the parameter's dtype). */
static void test_half2_optimizers_match_pytorch(void)
{
    const int64_t sizes[2] = {4, 16};
    int n = (int)(sizeof half2_optims / sizeof half2_optims[0]);
    for (int k = 0; k < n; k++) {
        const half2_optim *o = &half2_optims[k];
        ct_scope_begin();
        half2_tensor init = {o->dtype, HALF2_CONTIG, 2, {4, 16, 0, 0}, 64, o->init};
        ct_tensor *p = ct_requires_grad_(half2_input(&init), true);
        ct_optimizer *opt = half2_optimizer(o, p);
        CHECK_MSG(opt != NULL, "%s: %s", o->name, ct_error() ? ct_error() : "");
        for (int s = 0; opt && s < HALF2_OPTIM_STEPS; s++) {
            ct_tensor *g = ct_tensor_from_data(o->grads + 64 * s, CT_FLOAT64, sizes, 2);
            CHECK(ct_set_grad(p, ct_to_dtype(g, o->dtype)) == CT_OK);
            CHECK_MSG(ct_optimizer_step(opt) == CT_OK, "%s: %s", o->name, ct_error());
        }
        half2_case c = {o->name, HALF2_ERF, o->dtype, 0, 0, 0, HALF2_EXACT, 0, {init, init, init},
                        {o->dtype, HALF2_CONTIG, 2, {4, 16, 0, 0}, 64, o->param}};
        half2_check(&c, ct_detach(p));
        ct_optimizer_free(opt);
        ct_error_clear();
        ct_scope_end();
    }
}

/* DLPack: float16 is kDLFloat with 16 bits, bfloat16 kDLBfloat with 16 bits, both ways. */
static void test_half2_dlpack_codes(void)
{
    static const struct {
        ct_dtype dtype;
        uint8_t code;
    } rows[2] = {{CT_FLOAT16, CT_DLPACK_FLOAT}, {CT_BFLOAT16, CT_DLPACK_BFLOAT}};
    const int64_t n = 5;
    for (int k = 0; k < 2; k++) {
        ct_scope_begin();
        ct_tensor *t = ct_to_dtype(ct_linspace(-2, 2, n, CT_FLOAT32), rows[k].dtype);
        ct_dlpack_managed_tensor *m = ct_to_dlpack(t);
        CHECK(m && m->dl_tensor.dtype.code == rows[k].code && m->dl_tensor.dtype.bits == 16);
        CHECK(m && m->dl_tensor.dtype.lanes == 1);
        ct_tensor *back = m ? ct_from_dlpack(m) : NULL;
        CHECK(back && ct_tensor_dtype(back) == rows[k].dtype && ct_numel(back) == n);
        CHECK(back && ct_data_ptr(back) == ct_data_ptr(t));
        ct_scope_end();
    }
    ct_scope_begin();
    ct_tensor *t = ct_zeros(&n, 1, CT_BFLOAT16);
    ct_dlpack_managed_tensor *m = ct_to_dlpack(t);
    if (m) {
        m->dl_tensor.dtype.bits = 32;
        CHECK(ct_from_dlpack(m) == NULL);
        CHECK_ERROR(CT_ERR_DTYPE, "Unsupported kBfloat bits 32");
        m->deleter(m);
    }
    ct_scope_end();
}

/* The random ops' bounds in half: PyTorch's uniform_ and random_ checks (the streams are in
   tests/test_rng.c). */
static void test_half2_random_bounds(void)
{
    const int64_t n = 4;
    ct_scope_begin();
    ct_tensor *h = ct_empty(&n, 1, CT_FLOAT16);
    CHECK(ct_uniform_(h, 0, 70000, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "to is out of bounds for c10::Half");
    CHECK(ct_uniform_(h, -60000, 60000, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "uniform_ expects to-from <= std::numeric_limits<Half>::max(), "
                              "but found to=60000 and from=-60000");
    CHECK(ct_uniform_(ct_empty(&n, 1, CT_FLOAT32), -1e39, 0, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "from is out of bounds for float");
    CHECK(ct_randint(0, 66000, &n, 1, CT_FLOAT16, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "to - 1 is out of bounds for c10::Half");
    ct_tensor *b = ct_randint(-70000, 70000, &n, 1, CT_BFLOAT16, NULL);
    CHECK(b && ct_tensor_dtype(b) == CT_BFLOAT16);
    ct_error_clear();
    ct_scope_end();
}

/* The decompositions and cdist refuse float16/bfloat16 with PyTorch's CPU errors. */
static void test_half2_linalg_refusals(void)
{
    static const struct {
        ct_dtype dtype;
        const char *title;
    } halves[2] = {{CT_FLOAT16, "Half"}, {CT_BFLOAT16, "BFloat16"}};
    char want[96];
    for (int k = 0; k < 2; k++) {
        ct_scope_begin();
        ct_tensor *a = ct_to_dtype(ct_eye(3, 3, CT_FLOAT32), halves[k].dtype), *S = NULL;
        CHECK(ct_linalg_inv(a) == NULL);
        snprintf(want, sizeof want, "linalg.inv: Low precision dtypes not supported. Got %s",
                 halves[k].title);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        CHECK(ct_linalg_matrix_power(a, -2) == NULL);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        CHECK(ct_linalg_det(a) == NULL);
        snprintf(want, sizeof want, "\"lu_cpu\" not implemented for '%s'", halves[k].title);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        CHECK(ct_linalg_svd(a, true, &S, NULL) == NULL);
        snprintf(want, sizeof want, "\"linalg_svd_cpu\" not implemented for '%s'",
                 halves[k].title);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        CHECK(ct_linalg_cholesky(a, false) == NULL);
        snprintf(want, sizeof want, "\"cholesky_cpu\" not implemented for '%s'",
                 halves[k].title);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        CHECK(ct_linalg_matrix_norm(a, "nuc", NULL, false) == NULL);
        snprintf(want, sizeof want, "linalg.matrix_norm: Low precision dtypes not supported. "
                 "Got %s", halves[k].title);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        CHECK(ct_linalg_matrix_norm(a, "fro", NULL, false) != NULL); /* no SVD: taken */
        CHECK(ct_cdist(a, a, 2.0, CT_CDIST_USE_MM_IF_NECESSARY) == NULL);
        snprintf(want, sizeof want, "\"cdist\" not implemented for '%s'", halves[k].title);
        CHECK_ERROR(CT_ERR_DTYPE, want);
        ct_scope_end();
    }
}

void test_half2(void)
{
    RUN(test_half2_ops_match_pytorch);
    RUN(test_half2_optimizers_match_pytorch);
    RUN(test_half2_dlpack_codes);
    RUN(test_half2_random_bounds);
    RUN(test_half2_linalg_refusals);
}
