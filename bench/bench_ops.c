/* bench/bench_ops.c - ctorch's op-level benchmarks (GEMM, MLP products, pointwise, softmax,
 * cross-entropy) with OpenBLAS and a STREAM triad as references measured in the same run.
 *
 * Build (one command; drop -DBENCH_OPENBLAS and -lopenblas without OpenBLAS):
 *   cc -std=c11 -O2 -march=native -fopenmp -DBENCH_OPENBLAS bench/bench_ops.c -o build/bench_ops -lm -lopenblas
 * (`make bench` builds it so, adding -DBENCH_OPENBLAS -lopenblas when <cblas.h> and
 * libopenblas are found).
 * Run:
 *   ./build/bench_ops [--threads 1,2] [--min-run-time 0.3] [--filter SUBSTRING] [--no-compare]
 * Prints, per workload and thread count, one line `RESULT <workload> <threads> <seconds per call>`
 * (the minimum over blocked_autorange's blocks; tools/bench.py reads these), then a ct_compare
 * table (medians, as torch.utils.benchmark.Compare; --no-compare leaves it out).
 * tools/bench_torch_ops.py runs the same workloads in PyTorch under the same names.
 *
 * Workloads (all float32; inputs preallocated, results allocated per call in a scope that ends
 * each call, the way users write `c = a + b`):
 *   sgemm_N               ct_mm (N, N) @ (N, N), N in 64 .. 2048
 *   bgemm_N, hgemm_N      the same in bfloat16 / float16, N in 1024, 2048 (float32
 *                         accumulation, rounded once; prints the kernel path: the line
 *                         LOWP bfloat16 <path>)
 *   linear_BxI_O          ct_linear(x (B, I), W (O, I), no bias): x @ W^T
 *   mm_gTx_OxB_BxI        ct_mm(ct_t(g), x): the weight gradient g^T @ x, g (B, O), x (B, I)
 *   mm_gW_BxO_OxI         ct_mm(g, W): the input gradient g @ W, g (B, O), W (O, I)
 *   linear_mM_k384_n1536  ct_linear(x (M, 384), W (1536, 384)) for M = 1, 8, 32: a Linear on a
 *                         few tokens (a MiniLM's intermediate layer at batch 1)
 *   blas_<name>           the same products through cblas_sgemm (same transposes, -DBENCH_OPENBLAS)
 *   conv2d_fb_64x32x28x28 ct_conv2d 3x3 pad 1 (64,32,28,28) -> 32 channels, forward+backward
 *   conv2d_f_1x32x28x28   its forward on one image (latency)
 *   mm_32x288_288x50176   ct_mm on the batch's equivalent GEMM (prints the conv's GFLOP/s
 *                         and its ratio to it: the line CONV ...)
 *   add_16M mul_16M relu_16M   ct_add / ct_mul / ct_relu on 16M elements
 *   triad_16M             plain C a[i] = b[i] + s * c[i] (OpenMP for at 2+ threads): bandwidth
 *   bf16_add_16M          ct_add on 16M bfloat16 elements (computed in float32, rounded once)
 *   f16_to_f32_16M        ct_to_dtype of 16M float16 elements to float32
 *   softmax_RxC           ct_softmax over the last dim ((32768, 10): a classifier's logits)
 *   log_softmax_RxC       ct_log_softmax over the last dim
 *   xent_fb_NxC           ct_cross_entropy then ct_backward, logits requiring grad (.grad cleared
 *                         each call, as `x.grad = None` in the PyTorch version)
 *   gather_16M            ct_gather(x, 1, idx): x (4096, 4096), idx (4096, 4096) int64 uniform in
 *                         [0, 4096) - picking per row along the last dim, as
 *                         torch.gather(x, 1, idx) (top-k / label lookups), 16M elements
 *   scatter_add_16M       ct_scatter_add(z, 1, idx, src): z, src (4096, 4096), idx as above (the
 *                         out-of-place torch.scatter_add(z, 1, idx, src), per-row histograms)
 *   solve_256             ct_linalg_solve(A (256, 256), B (256, 256)), as torch.linalg.solve
 *   svd_256               ct_linalg_svd(A (256, 256)), full_matrices (PyTorch's default)
 *   max_pool2d_2x2_fb_64x32x28x28   ct_max_pool2d(x, 2x2) then ct_backward, x (64, 32, 28, 28)
 *                         requiring grad (.grad cleared each call)
 *   adaptive_avg_pool2d_7x7_fb_64x32x28x28   the same with ct_adaptive_avg_pool2d(x, (7, 7))
 *   batch_norm_fb_64x32x28x28  ct_batch_norm in training (weight, bias, running statistics)
 *                         then ct_backward with a preallocated gradient (.grad cleared each call)
 *   layer_norm_fb_4096x1024    ct_layer_norm over the last dim (weight, bias), fwd + bwd alike
 *   gelu_16M              ct_gelu on 16M elements (approximate 'none')
 *   optim_<name>_1M       one ct_optimizer_step of sgd (lr 1e-3, momentum 0.9), adam, rmsprop,
 *                         nadam (defaults otherwise) over one (1024, 1024) parameter whose
 *                         .grad is set once (the state exists before timing)
 *   embedding_fb_64x256_65x384      ct_embedding then ct_backward with a preallocated gradient
 *                         (.grad cleared each call): idx (64, 256) int64 into weight (65, 384),
 *                         nanoGPT's character-level GPT (batch 64, block 256, n_embd 384)
 *   embedding_fb_16x128_50257x128   the same into a GPT-2-sized vocabulary (50257, 128)
 *   sdpa_fb_BxHxLxE       ct_scaled_dot_product_attention(q, k, v, causal), q, k, v (B, H, L, E)
 *                         requiring grad, then ct_backward (grads cleared each call): GPT-like
 *                         (16, 4, 128, 32) and a long context (1, 4, 1024, 64)
 *   sdpa_f_BxHxLxE        its forward alone (inputs without grad)
 *   encoder_layer_fb_16x128x128  a TransformerEncoderLayer(128, 4, dim_feedforward 512,
 *                         dropout 0, batch_first) on x (16, 128, 128) requiring grad, then
 *                         ct_backward of a preallocated gradient (x's and the parameters' grads
 *                         cleared each call)
 * With -DBENCH_OPENBLAS the decompositions run on OpenBLAS's LAPACK (CTORCH_LAPACK, as PyTorch
 * runs on MKL's or OpenBLAS's), while the products keep ctorch's own GEMM.
 */
#ifdef BENCH_OPENBLAS
#define CTORCH_LAPACK
#endif
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef BENCH_OPENBLAS
#include <cblas.h>
#endif

static void die_on_error(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)user;
    fprintf(stderr, "bench_ops: error: %s\n", message);
    exit(1);
}

/* ---- workloads ------------------------------------------------------------------------ */
typedef enum kind {
    K_MM,     /* ct_mm(a, b) */
    K_MM_TA,  /* ct_mm(ct_t(a), b) */
    K_LINEAR, /* ct_linear(a, b, NULL) */
    K_BLAS,   /* cblas_sgemm */
    K_ADD,
    K_MUL,
    K_RELU,
    K_TO_F32, /* ct_to_dtype(a, CT_FLOAT32) */
    K_TRIAD,
    K_SOFTMAX,
    K_LOG_SOFTMAX,
    K_XENT,
    K_SORT,   /* ct_sort(a, -1) */
    K_TOPK,   /* ct_topk(a, 16, -1) */
    K_CUMSUM, /* ct_cumsum(a, -1) */
    K_GATHER,     /* ct_gather(a, 1, idx) */
    K_SCATTER_ADD, /* ct_scatter_add(b, 1, idx, a) */
    K_SOLVE, /* ct_linalg_solve(a, b, true) */
    K_SVD,   /* ct_linalg_svd(a, true, &S, &Vh) */
    K_MAXPOOL_FB, /* ct_max_pool2d(a, 2x2) + backward */
    K_AAVGPOOL_FB, /* ct_adaptive_avg_pool2d(a, (7, 7)) + backward */
    K_CONV_FB, /* y = ct_conv2d(a, b, bias, pad 1); backward(y, g) into a, b, bias */
    K_CONV_F,  /* ct_conv2d(a, b, bias, pad 1) */
    K_BN_FB, /* ct_batch_norm(a, rm, rv, {w, bias, training}) + backward(g) */
    K_LN_FB, /* ct_layer_norm(a, last dim, w, bias) + backward(g) */
    K_GELU,  /* ct_gelu(a) */
    K_OPTIM, /* ct_optimizer_step(opt) */
    K_EMB_FB, /* ct_embedding(idx, a) + backward(g) */
    K_SDPA_FB, /* y = sdpa(a, b, w, causal); backward(y, g) into a, b, w */
    K_SDPA_F,  /* sdpa(a, b, w, causal) */
    K_ENC_FB,  /* y = encoder layer mod (a); backward(y, g) */
} kind;

typedef struct work {
    kind k;
    ct_tensor *a, *b, *idx;
    ct_tensor *bias, *g; /* K_CONV_*, K_BN_FB, K_LN_FB: bias; the output gradient */
    /* K_BLAS */
    int ta, tb, M, N, K, lda, ldb;
    float *c;
    /* K_TRIAD */
    float *ta_, *tb_, *tc_;
    int64_t n;
    int threads;
    /* K_BN_FB, K_LN_FB: weight, running mean and variance */
    ct_tensor *w, *rm, *rv;
    ct_optimizer *opt; /* K_OPTIM */
    ct_module *mod;    /* K_ENC_FB */
} work;

/* the norm workloads: forward, then backward of a preallocated gradient (grads cleared) */
static void norm_fb(const work *w)
{
    ct_set_grad(w->a, NULL);
    ct_set_grad(w->w, NULL);
    ct_set_grad(w->bias, NULL);
    ct_tensor *y;
    if (w->k == K_BN_FB) {
        ct_batch_norm_opts o = ct_batch_norm_defaults();
        o.weight = w->w;
        o.bias = w->bias;
        o.training = true;
        y = ct_batch_norm(w->a, w->rm, w->rv, &o);
    } else {
        int64_t k = ct_size(w->a, -1);
        y = ct_layer_norm(w->a, &k, 1, w->w, w->bias, 1e-5);
    }
    ct_backward(y, w->g, false);
}

static void stmt(void *user)
{
    work *w = (work *)user;
    switch (w->k) {
    case K_BLAS:
#ifdef BENCH_OPENBLAS
        cblas_sgemm(CblasRowMajor, w->ta ? CblasTrans : CblasNoTrans,
                    w->tb ? CblasTrans : CblasNoTrans, w->M, w->N, w->K, 1.0f,
                    (const float *)ct_data_ptr(w->a), w->lda, (const float *)ct_data_ptr(w->b),
                    w->ldb, 0.0f, w->c, w->N);
#endif
        return;
    case K_OPTIM:
        ct_optimizer_step(w->opt);
        return;
    case K_TRIAD: {
        float *a = w->ta_;
        const float *b = w->tb_, *c = w->tc_;
        const float s = 3.0f;
        int64_t n = w->n;
#ifdef _OPENMP
#pragma omp parallel for num_threads(w->threads) if (w->threads > 1) schedule(static)
#endif
        for (int64_t i = 0; i < n; i++) {
            a[i] = b[i] + s * c[i];
        }
        return;
    }
    default:
        break;
    }
    ct_scope_begin();
    switch (w->k) {
    case K_MM: ct_mm(w->a, w->b); break;
    case K_MM_TA: ct_mm(ct_t(w->a), w->b); break;
    case K_LINEAR: ct_linear(w->a, w->b, NULL); break;
    case K_ADD: ct_add(w->a, w->b); break;
    case K_MUL: ct_mul(w->a, w->b); break;
    case K_RELU: ct_relu(w->a); break;
    case K_TO_F32: ct_to_dtype(w->a, CT_FLOAT32); break;
    case K_SOFTMAX: ct_softmax(w->a, -1); break;
    case K_LOG_SOFTMAX: ct_log_softmax(w->a, -1); break;
    case K_CUMSUM: ct_cumsum(w->a, -1, CT_DTYPE_DEFAULT); break;
    case K_XENT:
        ct_set_grad(w->a, NULL);
        ct_backward(ct_cross_entropy(w->a, w->b, NULL), NULL, false);
        break;
    case K_SORT: {
        ct_tensor *v, *i;
        ct_sort(w->a, -1, false, false, &v, &i);
        break;
    }
    case K_TOPK: {
        ct_tensor *v, *i;
        ct_topk(w->a, 16, -1, true, true, &v, &i);
        break;
    }
    case K_GATHER: ct_gather(w->a, 1, w->idx); break;
    case K_SCATTER_ADD: ct_scatter_add(w->b, 1, w->idx, w->a); break;
    case K_SOLVE: ct_linalg_solve(w->a, w->b, true); break;
    case K_BN_FB: norm_fb(w); break;
    case K_LN_FB: norm_fb(w); break;
    case K_GELU: ct_gelu(w->a, CT_GELU_NONE); break;
    case K_EMB_FB:
        ct_set_grad(w->a, NULL);
        ct_backward(ct_embedding(w->idx, w->a, NULL), w->g, false);
        break;
    case K_SVD: {
        ct_tensor *s = NULL, *vh = NULL;
        ct_linalg_svd(w->a, true, &s, &vh);
        break;
    }
    case K_MAXPOOL_FB:
    case K_AAVGPOOL_FB: {
        const int64_t k2[2] = {2, 2}, o7[2] = {7, 7};
        ct_set_grad(w->a, NULL);
        ct_tensor *y = w->k == K_MAXPOOL_FB ? ct_max_pool2d(w->a, k2, NULL)
                                            : ct_adaptive_avg_pool2d(w->a, o7);
        ct_backward(y, w->b, false);
        break;
    }
    case K_SDPA_F:
    case K_SDPA_FB: {
        ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
        o.is_causal = true;
        ct_tensor *y = ct_scaled_dot_product_attention(w->a, w->b, w->w, NULL, &o);
        if (w->k == K_SDPA_FB) {
            ct_set_grad(w->a, NULL);
            ct_set_grad(w->b, NULL);
            ct_set_grad(w->w, NULL);
            ct_backward(y, w->g, false);
        }
        break;
    }
    case K_ENC_FB:
        ct_set_grad(w->a, NULL);
        ct_module_zero_grad(w->mod, true);
        ct_backward(ct_transformer_encoder_layer_forward(w->mod, w->a, NULL, NULL, false), w->g,
                    false);
        break;
    case K_CONV_F:
    case K_CONV_FB: {
        ct_conv_opts o = ct_conv_defaults();
        o.padding[0] = o.padding[1] = 1;
        ct_tensor *y = ct_conv2d(w->a, w->b, w->bias, &o);
        if (w->k == K_CONV_FB) {
            ct_set_grad(w->a, NULL);
            ct_set_grad(w->b, NULL);
            ct_set_grad(w->bias, NULL);
            ct_backward(y, w->g, false);
        }
        break;
    }
    default: break;
    }
    ct_scope_end();
}

/* ---- driver --------------------------------------------------------------------------- */
static double g_min_run_time = 0.3;
static const char *g_filter = NULL;
static ct_measurement **g_ms = NULL;
static int g_nms = 0;

/* Measures stmt(w) at `threads` threads, keeps the measurement for the Compare table and
   returns the best block's seconds per call; prints its RESULT line when emit. */
static double measure_(const char *name, const char *label, const char *sub_label,
                       const char *description, work *w, int threads, bool emit)
{
    if (g_filter && !strstr(name, g_filter)) {
        return 0;
    }
    w->threads = threads;
    ct_timer_opts o = {0};
    o.stmt = stmt;
    o.user = w;
    o.stmt_name = name;
    o.label = label;
    o.sub_label = sub_label;
    o.description = description;
    o.num_threads = threads;
#ifdef BENCH_OPENBLAS
    openblas_set_num_threads(threads);
#endif
    ct_timer *t = ct_timer_new(&o);
    ct_measurement *m = ct_timer_blocked_autorange(t, g_min_run_time);
    const double *times = ct_measurement_times(m);
    double best = times[0];
    for (int64_t i = 1; i < ct_measurement_number_of_runs(m); i++) {
        best = times[i] < best ? times[i] : best;
    }
    if (emit) {
        printf("RESULT %s %d %.9e\n", name, threads, best);
        fflush(stdout);
    }
    g_ms = (ct_measurement **)realloc(g_ms, sizeof(*g_ms) * (size_t)(g_nms + 1));
    g_ms[g_nms++] = m;
    ct_timer_free(t);
    return best;
}

static void measure(const char *name, const char *label, const char *sub_label,
                    const char *description, work *w, int threads)
{
    measure_(name, label, sub_label, description, w, threads, true);
}

static ct_tensor *randn2(int64_t r, int64_t c)
{
    int64_t s[2] = {r, c};
    return ct_randn(s, 2, CT_FLOAT32, NULL);
}

/* A GEMM through ctorch and through cblas with the same operands and transposes.
   kind: K_MM (a (M,K) @ b (K,N)), K_MM_TA (a (K,M) transposed), K_LINEAR (b (N,K) transposed). */
static void gemm_pair(const char *name, const char *label, const char *sub, kind k, int M, int N,
                      int K, int threads, bool with_blas)
{
    work w = {0};
    w.k = k;
    w.a = k == K_MM_TA ? randn2(K, M) : randn2(M, K);
    w.b = k == K_LINEAR ? randn2(N, K) : randn2(K, N);
    measure(name, label, sub, "ctorch", &w, threads);
#ifdef BENCH_OPENBLAS
    if (with_blas) {
        char bname[128];
        snprintf(bname, sizeof bname, "blas_%s", name);
        work b = w;
        b.k = K_BLAS;
        b.M = M;
        b.N = N;
        b.K = K;
        b.ta = k == K_MM_TA;
        b.tb = k == K_LINEAR;
        b.lda = b.ta ? M : K;
        b.ldb = b.tb ? K : N;
        b.c = (float *)malloc(sizeof(float) * (size_t)M * (size_t)N);
        memset(b.c, 0, sizeof(float) * (size_t)M * (size_t)N);
        measure(bname, label, sub, "OpenBLAS", &b, threads);
        free(b.c);
    }
#else
    (void)with_blas;
#endif
    ct_free(w.a);
    ct_free(w.b);
}

/* one optimizer step over a (1024, 1024) float32 parameter whose .grad is set once */
static void optim_rows(int threads)
{
    static const char *names[] = {"sgd", "adam", "rmsprop", "nadam"};
    for (int j = 0; j < 4; j++) {
        char name[64];
        snprintf(name, sizeof name, "optim_%s_1M", names[j]);
        if (g_filter && !strstr(name, g_filter)) {
            continue;
        }
        work w = {0};
        w.k = K_OPTIM;
        w.a = ct_requires_grad_(randn2(1024, 1024), true);
        ct_tensor *g = randn2(1024, 1024);
        ct_set_grad(w.a, g);
        ct_free(g);
        ct_sgd_opts so = ct_sgd_defaults();
        so.lr = 1e-3;
        so.momentum = 0.9;
        w.opt = j == 0   ? ct_sgd_new(&w.a, 1, &so)
                : j == 1 ? ct_adam_new(&w.a, 1, NULL)
                : j == 2 ? ct_rmsprop_new(&w.a, 1, NULL)
                         : ct_nadam_new(&w.a, 1, NULL);
        ct_optimizer_step(w.opt); /* the state exists before timing */
        measure(name, "optimizer step, 1M float32 parameters", names[j], "ctorch", &w, threads);
        ct_optimizer_free(w.opt);
        ct_free(w.a);
    }
}

static void run_all(int threads)
{
    char name[96], sub[96];
    /* square sgemm */
    static const int sq[] = {64, 128, 256, 512, 1024, 2048};
    for (size_t i = 0; i < sizeof sq / sizeof sq[0]; i++) {
        snprintf(name, sizeof name, "sgemm_%d", sq[i]);
        snprintf(sub, sizeof sub, "%d", sq[i]);
        gemm_pair(name, "sgemm (N,N)@(N,N)", sub, K_MM, sq[i], sq[i], sq[i], threads, true);
    }
    /* bfloat16 / float16 GEMM (issue 11), beside sgemm_1024 / sgemm_2048 */
    printf("LOWP bfloat16 %s\n", ct__gemm_lowp_kernel(CT_BFLOAT16, 1024));
    for (int n = 1024; n <= 2048; n *= 2) {
        for (int h = 0; h < 2; h++) {
            work w = {0};
            w.k = K_MM;
            w.a = ct_to_dtype(randn2(n, n), h ? CT_FLOAT16 : CT_BFLOAT16);
            w.b = ct_to_dtype(randn2(n, n), h ? CT_FLOAT16 : CT_BFLOAT16);
            snprintf(name, sizeof name, "%s_%d", h ? "hgemm" : "bgemm", n);
            snprintf(sub, sizeof sub, "%d", n);
            measure(name, h ? "hgemm (N,N)@(N,N) float16" : "bgemm (N,N)@(N,N) bfloat16", sub,
                    "ctorch", &w, threads);
            ct_free(w.a);
            ct_free(w.b);
        }
    }
    /* quickstart MLP: forward x @ W^T, backward g^T @ x and g @ W */
    static const struct { int b, i, o; } lin[] = {{64, 784, 512}, {64, 512, 512}, {64, 512, 10}};
    for (size_t j = 0; j < 3; j++) {
        int Bn = lin[j].b, In = lin[j].i, On = lin[j].o;
        snprintf(name, sizeof name, "linear_%dx%d_%d", Bn, In, On);
        snprintf(sub, sizeof sub, "fwd x(%d,%d)@W(%d,%d)^T", Bn, In, On, In);
        gemm_pair(name, "quickstart MLP products", sub, K_LINEAR, Bn, On, In, threads, true);
    }
    for (size_t j = 0; j < 3; j++) {
        int Bn = lin[j].b, In = lin[j].i, On = lin[j].o;
        snprintf(name, sizeof name, "mm_gTx_%dx%d_%dx%d", On, Bn, Bn, In);
        snprintf(sub, sizeof sub, "dW g^T(%d,%d)@x(%d,%d)", On, Bn, Bn, In);
        gemm_pair(name, "quickstart MLP products", sub, K_MM_TA, On, In, Bn, threads, true);
    }
    static const struct { int b, o, i; } gw[] = {{64, 512, 784}, {64, 10, 512}};
    for (size_t j = 0; j < 2; j++) {
        int Bn = gw[j].b, On = gw[j].o, In = gw[j].i;
        snprintf(name, sizeof name, "mm_gW_%dx%d_%dx%d", Bn, On, On, In);
        snprintf(sub, sizeof sub, "dx g(%d,%d)@W(%d,%d)", Bn, On, On, In);
        gemm_pair(name, "quickstart MLP products", sub, K_MM, Bn, In, On, threads, true);
    }
    /* a Linear on a few tokens (a MiniLM at batch 1): x (M, 384) @ W^T, W (1536, 384) */
    static const int few[] = {1, 8, 32};
    for (size_t j = 0; j < 3; j++) {
        snprintf(name, sizeof name, "linear_m%d_k384_n1536", few[j]);
        snprintf(sub, sizeof sub, "x(%d,384)@W(1536,384)^T", few[j]);
        gemm_pair(name, "few-row Linear", sub, K_LINEAR, few[j], 1536, 384, threads, true);
    }
    /* pointwise on 16M elements, between two runs of the STREAM triad (the anchor: its
       RESULT is the better of the two, so a burst of load on the machine hurts it less) */
    {
        const int64_t n = 16 * 1024 * 1024;
        const char *pw = "pointwise, 16M float32", *tsub = "STREAM triad a=b+s*c (C, prealloc)";
        work t = {0};
        t.k = K_TRIAD;
        t.n = n;
        t.ta_ = (float *)malloc(sizeof(float) * (size_t)n);
        t.tb_ = (float *)malloc(sizeof(float) * (size_t)n);
        t.tc_ = (float *)malloc(sizeof(float) * (size_t)n);
        if (!t.ta_ || !t.tb_ || !t.tc_) {
            fprintf(stderr, "bench_ops: out of memory\n");
            exit(1);
        }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
#endif
        for (int64_t i = 0; i < n; i++) { /* first touch with the benchmark's schedule */
            t.ta_[i] = 0.0f;
            t.tb_[i] = 1.0f;
            t.tc_[i] = 2.0f;
        }
        double tri = measure_("triad_16M", pw, tsub, "ctorch", &t, threads, false);
        int64_t s[1] = {n};
        work w = {0};
        w.a = ct_randn(s, 1, CT_FLOAT32, NULL);
        w.b = ct_randn(s, 1, CT_FLOAT32, NULL);
        w.k = K_ADD;
        measure("add_16M", pw, "c = a + b", "ctorch", &w, threads);
        w.k = K_MUL;
        measure("mul_16M", pw, "c = a * b", "ctorch", &w, threads);
        w.k = K_RELU;
        measure("relu_16M", pw, "c = relu(a)", "ctorch", &w, threads);
        /* float16 / bfloat16 (issue 7): bandwidth-bound, compared with the same triad */
        ct_tensor *a32 = w.a, *b32 = w.b;
        w.a = ct_to_dtype(a32, CT_BFLOAT16);
        w.b = ct_to_dtype(b32, CT_BFLOAT16);
        w.k = K_ADD;
        measure("bf16_add_16M", "pointwise, 16M float16/bfloat16", "c = a + b (bfloat16)",
                "ctorch", &w, threads);
        ct_free(w.a);
        ct_free(w.b);
        w.a = ct_to_dtype(a32, CT_FLOAT16);
        w.b = NULL;
        w.k = K_TO_F32;
        measure("f16_to_f32_16M", "pointwise, 16M float16/bfloat16", "a.float() (float16)",
                "ctorch", &w, threads);
        ct_free(w.a);
        w.a = a32;
        w.b = b32;
        ct_free(w.a);
        ct_free(w.b);
        double tri2 = measure_("triad_16M", pw, tsub, "ctorch", &t, threads, false);
        if (tri > 0) {
            printf("RESULT triad_16M %d %.9e\n", threads, tri2 < tri ? tri2 : tri);
        }
        free(t.ta_);
        free(t.tb_);
        free(t.tc_);
    }
    /* softmax and log_softmax over the last dim */
    static const struct { int r, c; } sm[] = {{4096, 1024}, {64, 10}, {32768, 10}};
    for (size_t j = 0; j < 6; j++) {
        work w = {0};
        const char *op = j < 3 ? "softmax" : "log_softmax";
        w.k = j < 3 ? K_SOFTMAX : K_LOG_SOFTMAX;
        w.a = randn2(sm[j % 3].r, sm[j % 3].c);
        snprintf(name, sizeof name, "%s_%dx%d", op, sm[j % 3].r, sm[j % 3].c);
        snprintf(sub, sizeof sub, "%s (%d,%d) dim -1", op, sm[j % 3].r, sm[j % 3].c);
        measure(name, "softmax / cross-entropy", sub, "ctorch", &w, threads);
        ct_free(w.a);
    }
    /* cross-entropy forward + backward */
    static const struct { int n, c; } xe[] = {{4096, 1000}, {64, 10}, {32768, 10}};
    for (size_t j = 0; j < 3; j++) {
        work w = {0};
        w.k = K_XENT;
        w.a = ct_requires_grad_(randn2(xe[j].n, xe[j].c), true);
        int64_t s[1] = {xe[j].n};
        w.b = ct_randint(0, xe[j].c, s, 1, CT_INT64, NULL);
        snprintf(name, sizeof name, "xent_fb_%dx%d", xe[j].n, xe[j].c);
        snprintf(sub, sizeof sub, "cross_entropy fwd+bwd (%d,%d)", xe[j].n, xe[j].c);
        measure(name, "softmax / cross-entropy", sub, "ctorch", &w, threads);
        ct_free(w.a);
        ct_free(w.b);
    }
    /* sort and topk along the last dim (ops/sort.c) */
    for (int j = 0; j < 2; j++) {
        work w = {0};
        w.k = j == 0 ? K_SORT : K_TOPK;
        w.a = randn2(4096, 1024);
        measure(j == 0 ? "sort_4096x1024" : "topk_4096x1024_k16", "sort / topk",
                j == 0 ? "sort (4096,1024) dim -1" : "topk k=16 (4096,1024) dim -1", "ctorch", &w,
                threads);
        ct_free(w.a);
    }
    /* scans: cumsum over the last dim */
    {
        work w = {0};
        w.k = K_CUMSUM;
        w.a = randn2(4096, 1024);
        measure("cumsum_4096x1024", "scans", "cumsum (4096,1024) dim -1", "ctorch", &w, threads);
        ct_free(w.a);
    }
    /* gather / scatter_add along the last dim of (4096, 4096), random int64 indices */
    {
        work w = {0};
        int64_t s[2] = {4096, 4096};
        w.a = ct_randn(s, 2, CT_FLOAT32, NULL);
        w.b = ct_zeros(s, 2, CT_FLOAT32);
        w.idx = ct_randint(0, 4096, s, 2, CT_INT64, NULL);
        const char *lab = "gather / scatter_add, 16M float32";
        w.k = K_GATHER;
        measure("gather_16M", lab, "gather(x (4096,4096), 1, idx int64)", "ctorch", &w, threads);
        w.k = K_SCATTER_ADD;
        measure("scatter_add_16M", lab, "scatter_add(z, 1, idx, src)", "ctorch", &w, threads);
        ct_free(w.a);
        ct_free(w.b);
        ct_free(w.idx);
    }
    /* conv2d 3x3, padding 1, 32 -> 32 channels on 28x28: forward+backward of a (64, ...)
       batch, the forward of one image, and ctorch's GEMM on the batch's equivalent product
       W (32, 288) @ col (288, 64 * 784), the reference of the conv's GFLOP/s */
    {
        static const int64_t xs[4] = {64, 32, 28, 28}, x1[4] = {1, 32, 28, 28};
        static const int64_t ws[4] = {32, 32, 3, 3}, bs = 32;
        work w = {0};
        w.k = K_CONV_FB;
        w.a = ct_requires_grad_(ct_randn(xs, 4, CT_FLOAT32, NULL), true);
        w.b = ct_requires_grad_(ct_randn(ws, 4, CT_FLOAT32, NULL), true);
        w.bias = ct_requires_grad_(ct_randn(&bs, 1, CT_FLOAT32, NULL), true);
        w.g = ct_randn(xs, 4, CT_FLOAT32, NULL);
        const char *lab = "conv2d 3x3 pad 1, 32->32 channels, 28x28";
        double fb = measure_("conv2d_fb_64x32x28x28", lab, "conv2d fwd+bwd (64,32,28,28)",
                             "ctorch", &w, threads, true);
        ct_free(w.a);
        w.k = K_CONV_F;
        w.a = ct_randn(x1, 4, CT_FLOAT32, NULL);
        measure("conv2d_f_1x32x28x28", lab, "conv2d fwd (1,32,28,28)", "ctorch", &w, threads);
        work m = {0};
        m.k = K_MM;
        m.a = randn2(32, 288);
        m.b = randn2(288, 64 * 784);
        double gm = measure_("mm_32x288_288x50176", lab, "sgemm (32,288)@(288,50176)", "ctorch",
                             &m, threads, true);
        if (fb > 0 && gm > 0) { /* fwd+bwd = 3 products of the GEMM's size */
            double flops = 2.0 * 32 * 288 * 64 * 784;
            printf("CONV conv2d_fb_64x32x28x28 %d threads: %.1f GFLOP/s, ctorch sgemm %.1f "
                   "GFLOP/s, ratio %.2f\n", threads, 3 * flops / fb * 1e-9, flops / gm * 1e-9,
                   3 * gm / fb);
        }
        ct_free(w.a);
        ct_free(w.b);
        ct_free(w.bias);
        ct_free(w.g);
        ct_free(m.a);
        ct_free(m.b);
    }
    /* linalg decompositions: solve with a (256, 256) right-hand side, full SVD */
    {
        work w = {0};
        w.a = randn2(256, 256);
        w.b = randn2(256, 256);
        w.k = K_SOLVE;
        measure("solve_256", "linalg decompositions", "solve A(256,256) X = B(256,256)", "ctorch",
                &w, threads);
        w.k = K_SVD;
        measure("svd_256", "linalg decompositions", "svd A(256,256) full_matrices", "ctorch", &w,
                threads);
        ct_free(w.a);
        ct_free(w.b);
    }
    /* pooling forward + backward on a CNN-sized batch; w.b: the output's gradient */
    for (int j = 0; j < 2; j++) {
        work w = {0};
        int64_t s[4] = {64, 32, 28, 28}, so[4] = {64, 32, j ? 7 : 14, j ? 7 : 14};
        w.k = j ? K_AAVGPOOL_FB : K_MAXPOOL_FB;
        w.a = ct_requires_grad_(ct_randn(s, 4, CT_FLOAT32, NULL), true);
        w.b = ct_randn(so, 4, CT_FLOAT32, NULL);
        measure(j ? "adaptive_avg_pool2d_7x7_fb_64x32x28x28" : "max_pool2d_2x2_fb_64x32x28x28",
                "pooling fwd+bwd (64,32,28,28)", j ? "adaptive_avg_pool2d (7,7)" : "max_pool2d 2x2",
                "ctorch", &w, threads);
        ct_free(w.a);
        ct_free(w.b);
    }
    /* normalization fwd + bwd, gelu (nn/norm.c, nn/activation.c) */
    {
        static const int64_t bs[4] = {64, 32, 28, 28}, ls[2] = {4096, 1024};
        const char *lab = "normalization / activations";
        for (int j = 0; j < 2; j++) {
            work w = {0};
            int64_t c = j == 0 ? 32 : 1024;
            w.k = j == 0 ? K_BN_FB : K_LN_FB;
            w.a = ct_requires_grad_(ct_randn(j == 0 ? bs : ls, j == 0 ? 4 : 2, CT_FLOAT32, NULL),
                                    true);
            w.g = ct_randn(j == 0 ? bs : ls, j == 0 ? 4 : 2, CT_FLOAT32, NULL);
            w.w = ct_requires_grad_(ct_ones(&c, 1, CT_FLOAT32), true);
            w.bias = ct_requires_grad_(ct_zeros(&c, 1, CT_FLOAT32), true);
            w.rm = ct_zeros(&c, 1, CT_FLOAT32);
            w.rv = ct_ones(&c, 1, CT_FLOAT32);
            measure(j == 0 ? "batch_norm_fb_64x32x28x28" : "layer_norm_fb_4096x1024", lab,
                    j == 0 ? "batch_norm train fwd+bwd (64,32,28,28)"
                           : "layer_norm fwd+bwd (4096,1024)", "ctorch", &w, threads);
            ct_free(w.a);
            ct_free(w.g);
            ct_free(w.w);
            ct_free(w.bias);
            ct_free(w.rm);
            ct_free(w.rv);
        }
        work w = {0};
        int64_t n = 16 * 1024 * 1024;
        w.k = K_GELU;
        w.a = ct_randn(&n, 1, CT_FLOAT32, NULL);
        measure("gelu_16M", lab, "gelu 16M", "ctorch", &w, threads);
        ct_free(w.a);
    }
    optim_rows(threads);
    /* embedding fwd + bwd (nn/embedding.c): a character-level GPT and a GPT-2 vocabulary */
    static const int64_t emb[2][4] = {{64, 256, 65, 384}, {16, 128, 50257, 128}};
    for (int j = 0; j < 2; j++) {
        work w = {0};
        const int64_t *e = emb[j];
        int64_t gs[3] = {e[0], e[1], e[3]};
        w.k = K_EMB_FB;
        w.a = ct_requires_grad_(randn2(e[2], e[3]), true);
        w.idx = ct_randint(0, e[2], e, 2, CT_INT64, NULL);
        w.g = ct_randn(gs, 3, CT_FLOAT32, NULL);
        snprintf(name, sizeof name, "embedding_fb_%lldx%lld_%lldx%lld", (long long)e[0],
                 (long long)e[1], (long long)e[2], (long long)e[3]);
        snprintf(sub, sizeof sub, "embedding fwd+bwd idx (%lld,%lld) weight (%lld,%lld)",
                 (long long)e[0], (long long)e[1], (long long)e[2], (long long)e[3]);
        measure(name, "embedding", sub, "ctorch", &w, threads);
        ct_free(w.a);
        ct_free(w.idx);
        ct_free(w.g);
    }
    /* scaled dot product attention, causal (nn/attention.c) */
    {
        static const int64_t shapes[2][4] = {{16, 4, 128, 32}, {1, 4, 1024, 64}};
        for (int j = 0; j < 4; j++) {
            const int64_t *s = shapes[j / 2];
            bool fb = j % 2 == 0;
            work w = {0};
            w.k = fb ? K_SDPA_FB : K_SDPA_F;
            w.a = ct_requires_grad_(ct_randn(s, 4, CT_FLOAT32, NULL), fb);
            w.b = ct_requires_grad_(ct_randn(s, 4, CT_FLOAT32, NULL), fb);
            w.w = ct_requires_grad_(ct_randn(s, 4, CT_FLOAT32, NULL), fb);
            w.g = ct_randn(s, 4, CT_FLOAT32, NULL);
            snprintf(name, sizeof name, "sdpa_%s_%lldx%lldx%lldx%lld", fb ? "fb" : "f",
                     (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3]);
            snprintf(sub, sizeof sub, "sdpa causal %s (%lld,%lld,%lld,%lld)",
                     fb ? "fwd+bwd" : "fwd", (long long)s[0], (long long)s[1], (long long)s[2],
                     (long long)s[3]);
            measure(name, "scaled dot product attention", sub, "ctorch", &w, threads);
            ct_free(w.a);
            ct_free(w.b);
            ct_free(w.w);
            ct_free(w.g);
        }
    }
    /* a TransformerEncoderLayer (nn/transformer.c) */
    {
        const int64_t s[3] = {16, 128, 128};
        ct_transformer_layer_opts o = ct_transformer_layer_defaults();
        o.dim_feedforward = 512;
        o.dropout = 0;
        o.batch_first = true;
        work w = {0};
        w.k = K_ENC_FB;
        w.mod = ct_transformer_encoder_layer_new(128, 4, &o);
        w.a = ct_requires_grad_(ct_randn(s, 3, CT_FLOAT32, NULL), true);
        w.g = ct_randn(s, 3, CT_FLOAT32, NULL);
        measure("encoder_layer_fb_16x128x128", "transformer", "TransformerEncoderLayer(128, 4, "
                "512) fwd+bwd (16,128,128)", "ctorch", &w, threads);
        ct_module_free(w.mod);
        ct_free(w.a);
        ct_free(w.g);
    }
}

int main(int argc, char **argv)
{
    const char *threads_arg = "1,2";
    bool compare = true;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--threads") && v) {
            threads_arg = v;
            i++;
        } else if (!strcmp(argv[i], "--min-run-time") && v) {
            g_min_run_time = atof(v);
            i++;
        } else if (!strcmp(argv[i], "--filter") && v) {
            g_filter = v;
            i++;
        } else if (!strcmp(argv[i], "--no-compare")) {
            compare = false;
        } else {
            fprintf(stderr, "usage: bench_ops [--threads 1,2] [--min-run-time S] "
                            "[--filter SUBSTRING] [--no-compare]\n");
            return 2;
        }
    }
    ct_set_error_handler(die_on_error, NULL);
    ct_manual_seed(0);
#ifdef BENCH_OPENBLAS
    printf("openblas: %s\n", openblas_get_config());
#else
    printf("openblas: not built in (add -DBENCH_OPENBLAS ... -lopenblas)\n");
#endif
    for (const char *p = threads_arg; *p;) {
        int t = atoi(p);
        if (t < 1) {
            fprintf(stderr, "bench_ops: bad --threads %s\n", threads_arg);
            return 2;
        }
        run_all(t);
        p = strchr(p, ',');
        if (!p) {
            break;
        }
        p++;
    }
    if (compare && g_nms > 0) {
        ct_compare *c = ct_compare_new(g_ms, g_nms);
        ct_compare_print(c, stdout);
        ct_compare_free(c);
    }
    for (int i = 0; i < g_nms; i++) {
        ct_measurement_free(g_ms[i]);
    }
    free(g_ms);
    return 0;
}
