/* tests/test_amp.c - autocast (amp/autocast.c) and GradScaler (amp/grad_scaler.c) against
 * PyTorch (tests/golden/amp_golden.h, tools/gen_golden_amp.py): output dtypes under CPU
 * bfloat16 / float16 autocast and through the CUDA lists (on CPU tensors), nesting and
 * disabling, the weight-cast cache, float32 gradients, GradScaler's scale and skip sequence,
 * and bad use.
 */
#include "test.h"
#include "golden/amp_golden.h"

/* Private (amp/autocast.c): CPU tensors take the CUDA state and lists (the CUDA mode). */
void ct__autocast_cpu_lists(ct_device_type device_type);

/* ---- the golden cases' ops ------------------------------------------------------------- */
typedef ct_tensor *(*amp_op_fn)(const ct_tensor *const *in);

#define AMP_OP(name, expr)                                                                  \
    static ct_tensor *amp_##name(const ct_tensor *const *in)                                \
    {                                                                                       \
        (void)in;                                                                           \
        return expr;                                                                        \
    }
static const int64_t amp_k2[3] = {2, 2, 2}, amp_n4[1] = {4}, amp_dim1[1] = {1},
                     amp_d0[1] = {0};
AMP_OP(mm, ct_mm(in[0], in[1]))
AMP_OP(bmm, ct_bmm(in[0], in[1]))
AMP_OP(addmm, ct_addmm(in[0], in[1], in[2], 1, 1))
AMP_OP(addbmm, ct_addbmm(in[0], in[1], in[2], 1, 1))
AMP_OP(baddbmm, ct_baddbmm(in[0], in[1], in[2], 1, 1))
AMP_OP(linear, ct_linear(in[0], in[1], in[2]))
AMP_OP(matmul, ct_matmul(in[0], in[1]))
AMP_OP(conv1d, ct_conv1d(in[0], in[1], in[2], NULL))
AMP_OP(conv2d, ct_conv2d(in[0], in[1], in[2], NULL))
AMP_OP(conv_transpose2d, ct_conv_transpose2d(in[0], in[1], in[2], NULL))
AMP_OP(prelu, ct_prelu(in[0], in[1]))
AMP_OP(scaled_dot_product_attention,
       ct_scaled_dot_product_attention(in[0], in[1], in[2], NULL, NULL))
AMP_OP(addmv, ct_addmv(in[0], in[1], in[2], 1, 1))
AMP_OP(addr, ct_addr(in[0], in[1], in[2], 1, 1))
AMP_OP(mv, ct_mv(in[0], in[1]))
AMP_OP(prod, ct_prod(in[0]))
AMP_OP(cdist, ct_cdist(in[0], in[1], 2.0, CT_CDIST_USE_MM_IF_NECESSARY))
AMP_OP(trace, ct_trace(in[0]))
AMP_OP(mse_loss, ct_mse_loss(in[0], in[1], CT_REDUCTION_MEAN))
AMP_OP(l1_loss, ct_l1_loss(in[0], in[1], CT_REDUCTION_MEAN))
AMP_OP(huber_loss, ct_huber_loss(in[0], in[1], CT_REDUCTION_MEAN, 1.0))
AMP_OP(smooth_l1_loss, ct_smooth_l1_loss(in[0], in[1], CT_REDUCTION_MEAN, 1.0))
AMP_OP(nll_loss, ct_nll_loss(in[0], in[1], NULL))
AMP_OP(cross_entropy, ct_cross_entropy(in[0], in[1], NULL))
AMP_OP(kl_div, ct_kl_div(in[0], in[1], CT_REDUCTION_MEAN, false))
AMP_OP(binary_cross_entropy_with_logits,
       ct_binary_cross_entropy_with_logits(in[0], in[1], NULL, NULL, CT_REDUCTION_MEAN))
AMP_OP(binary_cross_entropy, ct_binary_cross_entropy(in[0], in[1], NULL, CT_REDUCTION_MEAN))
AMP_OP(margin_ranking_loss, ct_margin_ranking_loss(in[0], in[1], in[2], 0, CT_REDUCTION_MEAN))
AMP_OP(soft_margin_loss, ct_soft_margin_loss(in[0], in[1], CT_REDUCTION_MEAN))
AMP_OP(hinge_embedding_loss, ct_hinge_embedding_loss(in[0], in[1], 1.0, CT_REDUCTION_MEAN))
AMP_OP(cosine_embedding_loss,
       ct_cosine_embedding_loss(in[0], in[1], in[2], 0, CT_REDUCTION_MEAN))
AMP_OP(poisson_nll_loss, ct_poisson_nll_loss(in[0], in[1], true, false, 1e-8,
                                             CT_REDUCTION_MEAN))
AMP_OP(linalg_inv, ct_linalg_inv(in[0]))
AMP_OP(linalg_solve, ct_linalg_solve(in[0], in[1], true))
AMP_OP(linalg_cholesky, ct_linalg_cholesky(in[0], false))
AMP_OP(linalg_svdvals, ct_linalg_svdvals(in[0]))
AMP_OP(avg_pool3d, ct_avg_pool3d(in[0], amp_k2, NULL))
AMP_OP(max_pool3d, ct_max_pool3d(in[0], amp_k2, NULL))
AMP_OP(adaptive_avg_pool3d, ct_adaptive_avg_pool3d(in[0], amp_k2))
AMP_OP(cat, ct_cat(in, 2, 0))
AMP_OP(stack, ct_stack(in, 2, 0))
AMP_OP(add, ct_add(in[0], in[1]))
AMP_OP(relu, ct_relu(in[0]))
AMP_OP(gelu, ct_gelu(in[0], CT_GELU_NONE))
AMP_OP(layer_norm, ct_layer_norm(in[0], amp_n4, 1, in[1], in[2], 1e-5))
AMP_OP(group_norm, ct_group_norm(in[0], 2, in[1], in[2], 1e-5))
AMP_OP(rms_norm, ct_rms_norm(in[0], amp_n4, 1, in[1], NAN))
AMP_OP(softmax, ct_softmax(in[0], 1))
AMP_OP(log_softmax, ct_log_softmax(in[0], 1))
AMP_OP(softmin, ct_softmin(in[0], 1))
AMP_OP(sum, ct_sum(in[0]))
AMP_OP(cumsum, ct_cumsum(in[0], 1, CT_DTYPE_DEFAULT))
AMP_OP(cumsum_dtype, ct_cumsum(in[0], 1, CT_FLOAT16))
AMP_OP(logsumexp, ct_logsumexp(in[0], amp_dim1, 1, false))
AMP_OP(exp, ct_exp(in[0]))
AMP_OP(log, ct_log(in[0]))
AMP_OP(rsqrt, ct_rsqrt(in[0]))
AMP_OP(tan, ct_tan(in[0]))
AMP_OP(pow, ct_pow(in[0], in[1]))
AMP_OP(softplus, ct_softplus(in[0], 1, 20))
AMP_OP(normalize, ct_normalize(in[0], 2, 1, 1e-12))
AMP_OP(cosine_similarity, ct_cosine_similarity(in[0], in[1], 1, 1e-8))
AMP_OP(dist, ct_dist(in[0], in[1], 2))
AMP_OP(pdist, ct_pdist(in[0], 2))
AMP_OP(addcmul, ct_addcmul(in[0], in[1], in[2], 1))
AMP_OP(addcdiv, ct_addcdiv(in[0], in[1], in[2], 1))
AMP_OP(atan2, ct_atan2(in[0], in[1]))
AMP_OP(dot, ct_dot(in[0], in[1]))
AMP_OP(vdot, ct_vdot(in[0], in[1]))
AMP_OP(cross, ct_cross(in[0], in[1], amp_dim1))
AMP_OP(tensordot, ct_tensordot(in[0], in[1], amp_dim1, 1, amp_d0, 1))
AMP_OP(bilinear, ct_bilinear(in[0], in[1], in[2], in[3]))
AMP_OP(scatter_add, ct_scatter_add(in[0], 0, in[1], in[2]))
AMP_OP(index_put, ct_index_put(in[0], &in[1], 1, in[2], false))

static const struct {
    const char *name;
    amp_op_fn fn;
} amp_ops[] = {
#define AMP_ENTRY(name) {#name, amp_##name},
    AMP_ENTRY(mm) AMP_ENTRY(bmm) AMP_ENTRY(addmm) AMP_ENTRY(addbmm) AMP_ENTRY(baddbmm)
    AMP_ENTRY(linear) AMP_ENTRY(matmul) AMP_ENTRY(conv1d) AMP_ENTRY(conv2d)
    AMP_ENTRY(conv_transpose2d) AMP_ENTRY(prelu) AMP_ENTRY(scaled_dot_product_attention)
    AMP_ENTRY(addmv) AMP_ENTRY(addr) AMP_ENTRY(mv) AMP_ENTRY(prod) AMP_ENTRY(cdist)
    AMP_ENTRY(trace) AMP_ENTRY(mse_loss) AMP_ENTRY(l1_loss) AMP_ENTRY(huber_loss)
    AMP_ENTRY(smooth_l1_loss) AMP_ENTRY(nll_loss) AMP_ENTRY(cross_entropy) AMP_ENTRY(kl_div)
    AMP_ENTRY(binary_cross_entropy_with_logits) AMP_ENTRY(binary_cross_entropy)
    AMP_ENTRY(margin_ranking_loss) AMP_ENTRY(soft_margin_loss) AMP_ENTRY(hinge_embedding_loss)
    AMP_ENTRY(cosine_embedding_loss) AMP_ENTRY(poisson_nll_loss) AMP_ENTRY(linalg_inv)
    AMP_ENTRY(linalg_solve) AMP_ENTRY(linalg_cholesky) AMP_ENTRY(linalg_svdvals)
    AMP_ENTRY(avg_pool3d) AMP_ENTRY(max_pool3d) AMP_ENTRY(adaptive_avg_pool3d) AMP_ENTRY(cat)
    AMP_ENTRY(stack) AMP_ENTRY(add) AMP_ENTRY(relu) AMP_ENTRY(gelu) AMP_ENTRY(layer_norm)
    AMP_ENTRY(group_norm) AMP_ENTRY(rms_norm) AMP_ENTRY(softmax) AMP_ENTRY(log_softmax)
    AMP_ENTRY(softmin) AMP_ENTRY(sum) AMP_ENTRY(cumsum) AMP_ENTRY(cumsum_dtype)
    AMP_ENTRY(logsumexp) AMP_ENTRY(exp) AMP_ENTRY(log) AMP_ENTRY(rsqrt) AMP_ENTRY(tan)
    AMP_ENTRY(pow) AMP_ENTRY(softplus) AMP_ENTRY(normalize) AMP_ENTRY(cosine_similarity)
    AMP_ENTRY(dist) AMP_ENTRY(pdist) AMP_ENTRY(addcmul) AMP_ENTRY(addcdiv) AMP_ENTRY(atan2)
    AMP_ENTRY(dot) AMP_ENTRY(vdot) AMP_ENTRY(cross) AMP_ENTRY(tensordot) AMP_ENTRY(bilinear)
    AMP_ENTRY(scatter_add) AMP_ENTRY(index_put)
#undef AMP_ENTRY
};
#define AMP_N_OPS ((int)(sizeof amp_ops / sizeof amp_ops[0]))
#define AMP_N_CASES ((int)(sizeof amp_golden_cases / sizeof amp_golden_cases[0]))

static amp_op_fn amp_find(const char *name)
{
    for (int i = 0; i < AMP_N_OPS; i++) {
        if (strcmp(amp_ops[i].name, name) == 0) {
            return amp_ops[i].fn;
        }
    }
    return NULL;
}

/* An input of the generator's kind (values only need to be valid for the op). */
static ct_tensor *amp_input(const amp_golden_input *g, ct_dtype dtype)
{
    int64_t n = ct_test_numel(g->sizes, g->ndim);
    if (g->kind == 'i') {
        int64_t v[64];
        for (int64_t i = 0; i < n && i < 64; i++) {
            v[i] = i % g->bound;
        }
        return ct_tensor_from_data(v, CT_INT64, g->sizes, g->ndim);
    }
    ct_tensor *w = ct_test_wave_tensor(g->sizes, g->ndim, 0, 0.5, CT_FLOAT64);
    if (g->kind == 's') {
        w = ct_sign(w);
    } else if (g->kind == 'u') {
        w = ct_sigmoid(w);
    } else if (g->kind == 'p') {
        w = ct_add_scalar(ct_abs(w), 0.5);
    } else if (g->kind == 'd') {
        w = ct_add(ct_matmul(w, ct_mt(w)), ct_mul_scalar(ct_eye(g->sizes[0], g->sizes[0],
                                                                CT_FLOAT64), 3.0));
    }
    return ct_to_dtype(w, dtype);
}

/* The modes of the golden table: CPU bfloat16, CPU float16, CUDA float16 (CPU tensors take
   the CUDA state and lists, a fake CUDA backend being registered so that the region opens). */
static void *amp_cuda_malloc(void *user, ct_device device, size_t nbytes)
{
    (void)user, (void)device;
    return malloc(nbytes);
}

static void amp_cuda_free(void *user, ct_device device, void *data)
{
    (void)user, (void)device;
    free(data);
}

static ct_status amp_cuda_copy(void *user, void *dst, ct_device dst_device, const void *src,
                               ct_device src_device, size_t nbytes)
{
    (void)user, (void)dst_device, (void)src_device;
    memcpy(dst, src, nbytes);
    return CT_OK;
}

static void amp_cuda_register(void)
{
    ct_backend b = {CT_CUDA, "CUDA", amp_cuda_malloc, amp_cuda_free, amp_cuda_copy, NULL, NULL,
                    NULL};
    CHECK(ct_backend_register(&b) == CT_OK);
}

static void amp_mode_begin(int mode)
{
    if (mode == 2) {
        ct__autocast_cpu_lists(CT_CUDA);
    }
    CHECK(ct_autocast_begin(mode == 2 ? CT_CUDA : CT_CPU, mode == 0 ? CT_BFLOAT16 : CT_FLOAT16,
                            true) == CT_OK);
}

static void amp_mode_end(void)
{
    CHECK(ct_autocast_end() == CT_OK);
    ct__autocast_cpu_lists(CT_CPU);
}

static void amp_check_case(const amp_golden_case *g, amp_op_fn fn, int variant, int mode)
{
    ct_dtype want = g->out[variant][mode];
    if (want == CT_DTYPE_COUNT) {
        return;
    }
    ct_dtype low = mode == 0 ? CT_BFLOAT16 : CT_FLOAT16;
    const ct_tensor *in[4];
    bool first = true;
    for (int k = 0; k < g->n_inputs; k++) {
        bool floating = g->inputs[k].kind != 'i';
        in[k] = amp_input(&g->inputs[k], floating && first && variant ? low : CT_FLOAT32);
        first = first && !floating;
    }
    amp_mode_begin(mode);
    ct_tensor *r = fn(in);
    amp_mode_end();
    if (want == CT_DTYPE_DEFAULT) {
        CHECK_MSG(!r && ct_error(), "%s variant %d mode %d: PyTorch raises, ctorch gave %s",
                  g->name, variant, mode, r ? ct_dtype_name(ct_tensor_dtype(r)) : "NULL");
        ct_error_clear();
        return;
    }
    CHECK_MSG(r && ct_tensor_dtype(r) == want, "%s variant %d mode %d: %s, PyTorch %s (%s)",
              g->name, variant, mode, r ? ct_dtype_name(ct_tensor_dtype(r)) : "NULL",
              ct_dtype_name(want), ct_error() ? ct_error() : "");
    ct_error_clear();
}

static void test_amp_golden_dtypes(void)
{
    amp_cuda_register();
    CHECK(AMP_N_CASES == AMP_N_OPS);
    for (int c = 0; c < AMP_N_CASES; c++) {
        const amp_golden_case *g = &amp_golden_cases[c];
        amp_op_fn fn = amp_find(g->name);
        CHECK_MSG(fn, "no C call for the golden case %s", g->name);
        for (int variant = 0; fn && variant < 2; variant++) {
            for (int mode = 0; mode < 3; mode++) {
                ct_scope_begin();
                amp_check_case(g, fn, variant, mode);
                ct_scope_end();
            }
        }
    }
    CHECK(ct_backend_unregister(CT_CUDA) == CT_OK);
}

/* ---- the lists, nesting, the cache, gradients ------------------------------------------- */
static void test_amp_lists(void)
{
    int n[6];
    CHECK(ct_autocast_cpu_lower_ops(&n[0]) && ct_autocast_cpu_fp32_ops(&n[1]) &&
          ct_autocast_cpu_promote_ops(&n[2]) && ct_autocast_cuda_lower_ops(&n[3]) &&
          ct_autocast_cuda_fp32_ops(&n[4]) && ct_autocast_cuda_promote_ops(&n[5]));
    CHECK(n[0] == 20 && n[1] == 90 && n[2] == 3 && n[3] == 23 && n[4] == 51 && n[5] == 10);
    CHECK(!strcmp(ct_autocast_cpu_promote_ops(NULL)[2], "index_copy"));
    CHECK(ct_autocast_policy(CT_CPU, "aten::mm") == CT_AUTOCAST_LOWER_PRECISION);
    CHECK(ct_autocast_policy(CT_CPU, "aten::convolution") == CT_AUTOCAST_LOWER_PRECISION);
    CHECK(ct_autocast_policy(CT_CPU, "cross_entropy_loss") == CT_AUTOCAST_FP32);
    CHECK(ct_autocast_policy(CT_CPU, "aten::softmax") == CT_AUTOCAST_NONE);
    CHECK(ct_autocast_policy(CT_CUDA, "aten::softmax") == CT_AUTOCAST_FP32);
    CHECK(ct_autocast_policy(CT_CUDA, "aten::pow.Tensor_Scalar") == CT_AUTOCAST_FP32);
    CHECK(ct_autocast_policy(CT_CUDA, "ctorch::linear_relu") == CT_AUTOCAST_LOWER_PRECISION);
    CHECK(ct_autocast_policy(CT_CUDA, "aten::native_layer_norm") == CT_AUTOCAST_FP32);
    CHECK(ct_autocast_policy(CT_CPU, "aten::stack") == CT_AUTOCAST_PROMOTE);
    CHECK(ct_autocast_policy(CT_PRIVATEUSE1, "aten::mm") == CT_AUTOCAST_NONE);
    CHECK(ct_autocast_policy(CT_CPU, NULL) == CT_AUTOCAST_NONE);
    CHECK(ct_is_autocast_available(CT_CPU) && ct_is_autocast_available(CT_CUDA) &&
          !ct_is_autocast_available(CT_PRIVATEUSE1));
}

static ct_dtype amp_mm_dtype(const ct_tensor *a)
{
    ct_tensor *r = ct_mm(a, a);
    return r ? ct_tensor_dtype(r) : CT_DTYPE_COUNT;
}

static void test_amp_nesting(void)
{
    ct_scope_begin();
    const int64_t s[2] = {2, 2};
    ct_tensor *a = ct_ones(s, 2, CT_FLOAT32), *d = ct_ones(s, 2, CT_FLOAT64);
    CHECK(!ct_is_autocast_enabled(CT_CPU) && !ct_is_autocast_enabled(CT_CUDA));
    CHECK(ct_get_autocast_dtype(CT_CPU) == CT_BFLOAT16);
    CHECK(ct_get_autocast_dtype(CT_CUDA) == CT_FLOAT16);
    CHECK(ct_autocast_begin(CT_CPU, CT_DTYPE_DEFAULT, true) == CT_OK);
    CHECK(ct_is_autocast_enabled(CT_CPU) && !ct_is_autocast_enabled(CT_CUDA));
    CHECK(amp_mm_dtype(a) == CT_BFLOAT16);
    CHECK(amp_mm_dtype(d) == CT_FLOAT64); /* float64 is never cast */
    CHECK(ct_autocast_begin(CT_CPU, CT_FLOAT16, true) == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_FLOAT16 && ct_get_autocast_dtype(CT_CPU) == CT_FLOAT16);
    CHECK(ct_autocast_begin(CT_CPU, CT_DTYPE_DEFAULT, true) == CT_OK); /* enabled=False */
    CHECK(ct_set_autocast_enabled(CT_CPU, false) == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_FLOAT32 && !ct_is_autocast_enabled(CT_CPU));
    CHECK(ct_autocast_end() == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_FLOAT16);
    CHECK(ct_autocast_end() == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_BFLOAT16 && ct_get_autocast_dtype(CT_CPU) == CT_BFLOAT16);
    CHECK(ct_autocast_end() == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_FLOAT32 && !ct_is_autocast_enabled(CT_CPU));
    /* torch.set_autocast_enabled / set_autocast_dtype outside a region */
    CHECK(ct_set_autocast_dtype(CT_CPU, CT_FLOAT16) == CT_OK);
    CHECK(ct_set_autocast_enabled(CT_CPU, true) == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_FLOAT16);
    CHECK(ct_set_autocast_enabled(CT_CPU, false) == CT_OK);
    CHECK(ct_set_autocast_dtype(CT_CPU, CT_BFLOAT16) == CT_OK);
    CHECK(amp_mm_dtype(a) == CT_FLOAT32);
    ct_scope_end();
}

/* Counts the casts (aten::_to_copy calls) the dispatcher sees. */
static bool amp_count_copies(void *user, ct_op_call *c)
{
    *(int *)user += !strcmp(c->op->name, "aten::_to_copy");
    return false;
}

static int amp_casts_of_two_mm(bool cache_enabled, bool nested)
{
    const int64_t s[2] = {2, 2};
    const double v[4] = {1, 2, 3, 4};
    ct_tensor *w = ct_test_param(v, s, 2, CT_FLOAT32);
    int copies = 0;
    ct_scope_begin();
    ct_tensor *x = ct_ones(s, 2, CT_FLOAT32);
    ct_dispatch_hook h = {amp_count_copies, NULL, &copies};
    CHECK(ct_dispatch_hook_push(&h) == CT_OK);
    CHECK(ct_autocast_begin(CT_CPU, CT_DTYPE_DEFAULT, cache_enabled) == CT_OK);
    CHECK(ct_tensor_dtype(ct_mm(x, w)) == CT_BFLOAT16);
    CHECK(!nested || ct_autocast_begin(CT_CPU, CT_DTYPE_DEFAULT, cache_enabled) == CT_OK);
    CHECK(ct_tensor_dtype(ct_mm(x, w)) == CT_BFLOAT16);
    CHECK(!nested || ct_autocast_end() == CT_OK);
    CHECK(ct_autocast_end() == CT_OK);
    CHECK(ct_dispatch_hook_pop() == CT_OK);
    ct_scope_end();
    ct_free(w);
    return copies;
}

static void test_amp_weight_cache(void)
{
    /* x (no grad) is cast by each mm; the parameter w once per outermost region */
    CHECK(amp_casts_of_two_mm(true, false) == 3);
    CHECK(amp_casts_of_two_mm(true, true) == 3);
    CHECK(amp_casts_of_two_mm(false, false) == 4);
    CHECK(amp_casts_of_two_mm(true, false) == 3); /* the cache was dropped at the end */
}

static void test_amp_gradients(void)
{
    const int64_t sw[2] = {2, 3}, sb[1] = {2}, sx[2] = {4, 3};
    const double wv[6] = {0.5, -1, 2, 0.25, 1.5, -0.75}, bv[2] = {0.1, -0.2};
    ct_tensor *w = ct_test_param(wv, sw, 2, CT_FLOAT32), *b = ct_test_param(bv, sb, 1, CT_FLOAT32);
    ct_scope_begin();
    ct_tensor *x = ct_test_wave_tensor(sx, 2, 0, 1.0, CT_FLOAT32);
    CHECK(ct_autocast_begin(CT_CPU, CT_BFLOAT16, true) == CT_OK);
    ct_tensor *y = ct_linear(x, w, b);
    CHECK(y && ct_tensor_dtype(y) == CT_BFLOAT16);
    ct_tensor *loss = ct_sum(ct_to_dtype(y, CT_FLOAT32));
    CHECK(ct_autocast_end() == CT_OK);
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    CHECK(ct_grad(w) && ct_tensor_dtype(ct_grad(w)) == CT_FLOAT32);
    CHECK(ct_grad(b) && ct_tensor_dtype(ct_grad(b)) == CT_FLOAT32);
    /* d loss / d w[i][j] = sum_n x[n][j] (x rounded to bfloat16), d loss / d b = 4 */
    ct_tensor *xs = ct_sum_dim(ct_to_dtype(ct_to_dtype(x, CT_BFLOAT16), CT_FLOAT64), 0, false);
    double want[6], wb[2] = {4, 4};
    for (int j = 0; j < 3; j++) {
        want[j] = want[3 + j] = ct_item(ct_select(xs, 0, j));
    }
    CHECK_TENSOR(ct_grad(w), want, 6, 1e-2, 1e-2);
    CHECK_TENSOR(ct_grad(b), wb, 2, 0, 0);
    ct_scope_end();
    ct_free(w);
    ct_free(b);
}

/* ---- GradScaler ------------------------------------------------------------------------- */
static void amp_poison_grad(ct_tensor *p, int64_t i, int kind)
{
    if (kind) {
        CHECK(ct_fill_(ct_select(ct_grad(p), 0, i), kind == 1 ? INFINITY : NAN) != NULL);
    }
}

/* The generator's schedule: SGD on p = (1, -2), loss = sum(p * p) * (1 + it / 10), the
   gradient's element it % 2 made inf or NaN on scripted iterations. */
static void test_amp_scaler_golden(void)
{
    const int64_t s[1] = {2};
    const double pv[2] = {1, -2};
    ct_tensor *p = ct_test_param(pv, s, 1, CT_FLOAT32);
    ct_sgd_opts so = ct_sgd_defaults();
    so.lr = 0.01;
    ct_optimizer *opt = ct_sgd_new(&p, 1, &so);
    ct_grad_scaler_opts o = ct_grad_scaler_defaults();
    o.init_scale = 1024;
    o.growth_interval = 3;
    ct_grad_scaler *sc = ct_grad_scaler_new(&o);
    int n = (int)(sizeof amp_golden_scaler / sizeof amp_golden_scaler[0]);
    CHECK(n >= 30);
    for (int it = 0; it < n; it++) {
        const double *g = amp_golden_scaler[it];
        ct_scope_begin();
        ct_optimizer_zero_grad(opt, true);
        ct_tensor *loss = ct_mul_scalar(ct_sum(ct_mul(p, p)), 1.0 + it / 10.0);
        CHECK(ct_backward(ct_grad_scaler_scale(sc, loss), NULL, false) == CT_OK);
        amp_poison_grad(p, it % 2, (int)g[0]);
        bool ran = true;
        CHECK(ct_grad_scaler_step(sc, opt, &ran) == CT_OK);
        CHECK(ct_grad_scaler_update(sc) == CT_OK);
        CHECK_MSG(ct_grad_scaler_get_scale(sc) == g[1] && ran == (g[2] != 0),
                  "iteration %d: scale %g ran %d, PyTorch %g %g", it,
                  ct_grad_scaler_get_scale(sc), ran, g[1], g[2]);
        CHECK_TENSOR(p, g + 3, 2, 1e-6, 0);
        ct_scope_end();
    }
    ct_grad_scaler_free(sc);
    ct_optimizer_free(opt);
    ct_free(p);
}

/* Every optimizer skips its step on an inf gradient and steps on finite ones; clipping
   after unscale_ sees the unscaled gradients. */
static void test_amp_scaler_optimizers(void)
{
    const int64_t s[1] = {2};
    const double pv[2] = {3, -4};
    for (int k = 0; k < 9; k++) {
        ct_tensor *p = ct_test_param(pv, s, 1, CT_FLOAT32);
        ct_optimizer *opt = k == 0 ? ct_sgd_new(&p, 1, NULL) : k == 1 ? ct_adam_new(&p, 1, NULL)
                            : k == 2 ? ct_adamw_new(&p, 1, NULL)
                            : k == 3 ? ct_rmsprop_new(&p, 1, NULL)
                            : k == 4 ? ct_adagrad_new(&p, 1, NULL)
                            : k == 5 ? ct_adadelta_new(&p, 1, NULL)
                            : k == 6 ? ct_adamax_new(&p, 1, NULL)
                            : k == 7 ? ct_nadam_new(&p, 1, NULL) : ct_radam_new(&p, 1, NULL);
        ct_grad_scaler *sc = ct_grad_scaler_new(NULL);
        for (int it = 0; it < 2; it++) {
            ct_scope_begin();
            ct_optimizer_zero_grad(opt, true);
            ct_tensor *loss = ct_mul_scalar(ct_sum(ct_mul(p, p)), 0.5); /* grad = p */
            CHECK(ct_backward(ct_grad_scaler_scale(sc, loss), NULL, false) == CT_OK);
            amp_poison_grad(p, 0, it == 0);
            CHECK(ct_grad_scaler_unscale_(sc, opt) == CT_OK);
            ct_tensor *norm = ct_clip_grad_norm_(&p, 1, 1.0, 2.0, false);
            double before = ct_item(ct_select(p, 0, 1)), want = it == 0 ? INFINITY : 5.0;
            CHECK_MSG(norm && ct_item(norm) == want, "%s: norm %g", ct_optimizer_name(opt),
                      norm ? ct_item(norm) : NAN);
            bool ran = it == 0;
            CHECK(ct_grad_scaler_step(sc, opt, &ran) == CT_OK && ran == (it == 1));
            CHECK(ct_grad_scaler_update(sc) == CT_OK);
            CHECK((ct_item(ct_select(p, 0, 1)) != before) == (it == 1));
            CHECK(ct_grad_scaler_get_scale(sc) == 32768.0);
            ct_scope_end();
        }
        ct_grad_scaler_free(sc);
        ct_optimizer_free(opt);
        ct_free(p);
    }
}

static void test_amp_scaler_state(void)
{
    const int64_t s[1] = {2};
    const double pv[2] = {1, 2};
    ct_tensor *p = ct_test_param(pv, s, 1, CT_FLOAT32);
    ct_optimizer *opt = ct_sgd_new(&p, 1, NULL);
    ct_grad_scaler_opts o = ct_grad_scaler_defaults();
    CHECK(o.init_scale == 65536.0 && o.growth_factor == 2.0 && o.backoff_factor == 0.5 &&
          o.growth_interval == 2000 && o.enabled);
    ct_grad_scaler *sc = ct_grad_scaler_new(NULL);
    CHECK(ct_grad_scaler_get_scale(sc) == 65536.0 && ct_grad_scaler_is_enabled(sc));
    ct_scope_begin();
    CHECK(ct_backward(ct_grad_scaler_scale(sc, ct_sum(p)), NULL, false) == CT_OK);
    CHECK(ct_grad_scaler_step(sc, opt, NULL) == CT_OK);
    CHECK(ct_grad_scaler_update(sc) == CT_OK);
    ct_scope_end();
    ct_state_dict *sd = ct_grad_scaler_state_dict(sc);
    double v = 0;
    int64_t i = -1;
    CHECK(ct_state_dict_len(sd) == 5 && ct_state_dict_get_double(sd, "scale", &v) && v == 65536);
    CHECK(ct_state_dict_get_int(sd, "_growth_tracker", &i) && i == 1);
    CHECK(ct_state_dict_set_double(sd, "scale", 8.0) == CT_OK);
    ct_grad_scaler *sc2 = ct_grad_scaler_new(NULL);
    CHECK(ct_grad_scaler_load_state_dict(sc2, sd) == CT_OK);
    CHECK(ct_grad_scaler_get_scale(sc2) == 8.0);
    ct_state_dict_free(sd);
    /* disabled: a pass-through (one code path for both precisions) */
    o.enabled = false;
    ct_grad_scaler *off = ct_grad_scaler_new(&o);
    ct_scope_begin();
    ct_tensor *loss = ct_sum(p);
    CHECK(ct_grad_scaler_scale(off, loss) == loss && ct_grad_scaler_get_scale(off) == 1.0);
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    bool ran = false;
    CHECK(ct_grad_scaler_step(off, opt, &ran) == CT_OK && ran);
    CHECK(ct_grad_scaler_update(off) == CT_OK);
    sd = ct_grad_scaler_state_dict(off);
    CHECK(sd && ct_state_dict_len(sd) == 0);
    CHECK(ct_grad_scaler_load_state_dict(sc2, sd) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler.");
    ct_state_dict_free(sd);
    ct_scope_end();
    ct_grad_scaler_free(off);
    ct_grad_scaler_free(sc2);
    ct_grad_scaler_free(sc);
    ct_optimizer_free(opt);
    ct_free(p);
}

/* ---- bad use: PyTorch's errors ---------------------------------------------------------- */
static void test_amp_errors(void)
{
    CHECK(ct_autocast_begin(CT_CPU, CT_FLOAT64, true) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "In CPU autocast, but the target dtype is not supported. "
                "Disabling autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                "torch.float16 currently.");
    CHECK(!ct_is_autocast_enabled(CT_CPU) && ct_autocast_end() == CT_OK);
    CHECK(ct_autocast_begin(CT_CUDA, CT_DTYPE_DEFAULT, true) == CT_ERR_DEVICE);
    CHECK_ERROR(CT_ERR_DEVICE, "CUDA is not available or torch_xla is imported. Disabling "
                "autocast.");
    CHECK(ct_autocast_end() == CT_OK);
    CHECK(ct_autocast_begin(CT_PRIVATEUSE1, CT_DTYPE_DEFAULT, true) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "User specified an unsupported autocast device_type "
                "'privateuseone'");
    CHECK(ct_autocast_end() == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "no autocast region is open");
    CHECK(ct_set_autocast_dtype(CT_CPU, CT_DTYPE_DEFAULT) == CT_ERR_VALUE);
    ct_error_clear();
    /* CUDA's ban of binary_cross_entropy, through the CUDA lists on CPU tensors */
    amp_cuda_register();
    ct_scope_begin();
    const int64_t s[1] = {3};
    ct_tensor *h = ct_full(s, 1, 0.5, CT_FLOAT32);
    amp_mode_begin(2);
    CHECK(!ct_binary_cross_entropy(h, h, NULL, CT_REDUCTION_MEAN));
    CHECK_ERROR(CT_ERR_VALUE, "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss "
                "are unsafe to autocast.");
    amp_mode_end();
    /* pdist refuses the half dtypes, as PyTorch's CPU kernel, under CPU autocast too */
    const int64_t s2[2] = {4, 3};
    for (int mode = 0; mode < 2; mode++) {
        ct_tensor *x = ct_full(s2, 2, 0.5, mode ? CT_FLOAT16 : CT_BFLOAT16);
        CHECK(!ct_pdist(x, 2));
        CHECK_ERROR(CT_ERR_DTYPE, mode ? "\"pdist\" not implemented for 'Half'"
                                       : "\"pdist\" not implemented for 'BFloat16'");
        amp_mode_begin(mode);
        CHECK(!ct_pdist(x, 2));
        CHECK_ERROR(CT_ERR_DTYPE, "\"pdist\" not implemented for");
        amp_mode_end();
    }
    ct_scope_end();
    CHECK(ct_backend_unregister(CT_CUDA) == CT_OK);

    ct_grad_scaler_opts o = ct_grad_scaler_defaults();
    o.growth_factor = 1.0;
    CHECK(!ct_grad_scaler_new(&o));
    CHECK_ERROR(CT_ERR_VALUE, "The growth factor must be > 1.0.");
    o = ct_grad_scaler_defaults();
    o.backoff_factor = 1.0;
    CHECK(!ct_grad_scaler_new(&o));
    CHECK_ERROR(CT_ERR_VALUE, "The backoff factor must be < 1.0.");

    const double pv[3] = {1, 2, 3};
    ct_tensor *p = ct_test_param(pv, s, 1, CT_FLOAT32), *q = ct_test_param(pv, s, 1, CT_FLOAT32);
    ct_tensor *hp = ct_test_param(pv, s, 1, CT_FLOAT16);
    ct_optimizer *opt = ct_sgd_new(&p, 1, NULL), *other = ct_sgd_new(&q, 1, NULL);
    ct_optimizer *half = ct_sgd_new(&hp, 1, NULL);
    ct_grad_scaler *sc = ct_grad_scaler_new(NULL);
    CHECK(ct_grad_scaler_step(sc, opt, NULL) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "Attempted step but _scale is None.  This may indicate your "
                "script did not use scaler.scale(loss or outputs) earlier in the iteration.");
    CHECK(ct_grad_scaler_unscale_(sc, opt) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "Attempted unscale_ but _scale is None.");
    CHECK(ct_grad_scaler_update(sc) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "Attempted update but _scale is None.");
    ct_scope_begin();
    CHECK(ct_backward(ct_grad_scaler_scale(sc, ct_sum(p)), NULL, false) == CT_OK);
    CHECK(ct_grad_scaler_update(sc) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "No inf checks were recorded prior to update.");
    CHECK(ct_grad_scaler_unscale_(sc, opt) == CT_OK);
    CHECK(ct_grad_scaler_unscale_(sc, opt) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "unscale_() has already been called on this optimizer since the "
                "last update().");
    CHECK(ct_grad_scaler_step(sc, opt, NULL) == CT_OK);
    CHECK(ct_grad_scaler_step(sc, opt, NULL) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "step() has already been called since the last update().");
    CHECK(ct_grad_scaler_unscale_(sc, opt) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "unscale_() is being called after step().");
    CHECK(ct_grad_scaler_step(sc, other, NULL) == CT_ERR_STATE); /* q has no .grad */
    CHECK_ERROR(CT_ERR_STATE, "No inf checks were recorded for this optimizer.");
    CHECK(ct_backward(ct_grad_scaler_scale(sc, ct_sum(hp)), NULL, false) == CT_OK);
    CHECK(ct_grad_scaler_unscale_(sc, half) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Attempting to unscale FP16 gradients.");
    CHECK(ct_grad_scaler_update(sc) == CT_OK);
    ct_scope_end();
    ct_grad_scaler_free(sc);
    ct_optimizer_free(half);
    ct_optimizer_free(other);
    ct_optimizer_free(opt);
    ct_free(hp);
    ct_free(q);
    ct_free(p);
}

void test_amp(void)
{
    RUN(test_amp_golden_dtypes);
    RUN(test_amp_lists);
    RUN(test_amp_nesting);
    RUN(test_amp_weight_cache);
    RUN(test_amp_gradients);
    RUN(test_amp_scaler_golden);
    RUN(test_amp_scaler_optimizers);
    RUN(test_amp_scaler_state);
    RUN(test_amp_errors);
}
