/* amp/autocast.c - autocast regions: the per-thread state, PyTorch's op lists and the casts
 * the dispatcher applies before an op runs (ct__autocast_dispatch, called from ct__dispatch's
 * slow path, which an open region or an enabled device type turns on).
 *
 * Why a table here rather than the descriptors' `autocast` field: the CPU and CUDA lists
 * differ (softmax is float32 on CUDA, unlisted on the CPU), so one field per descriptor cannot
 * hold both; PyTorch's lists name the ops, so they are kept as PyTorch prints them (the
 * accessors return them) and matched by name, once per op and thread (a small memo keyed by
 * the descriptor). The descriptor's field remains the category of ops the lists do not name.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "autocast.h"

CT__GLUE_BEGIN

/* ---- PyTorch's lists (torch.amp, "Autocast Op Reference") ------------------------------ */
static const char *const ct__ac_cpu_lower[] = {
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm",
    "linear", "matmul", "_convolution", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention"};
static const char *const ct__ac_cpu_fp32[] = {
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "grid_sampler_2d",
    "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "cross_entropy_loss", "l1_loss", "huber_loss", "margin_ranking_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
    "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2",
    "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond",
    "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq", "linalg_inv_ex"};
static const char *const ct__ac_cpu_promote[] = {"cat", "stack", "index_copy"};
static const char *const ct__ac_cuda_lower[] = {
    "__matmul__", "addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "chain_matmul",
    "multi_dot", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "GRUCell", "linear", "LSTMCell", "matmul", "mm", "mv", "prelu",
    "RNNCell"};
static const char *const ct__ac_cuda_fp32[] = {
    "__pow__", "__rdiv__", "__rpow__", "__rtruediv__", "acos", "asin",
    "binary_cross_entropy_with_logits", "cosh", "cosine_embedding_loss", "cdist",
    "cosine_similarity", "cross_entropy", "cumprod", "cumsum", "dist", "erfinv", "exp", "expm1",
    "group_norm", "hinge_embedding_loss", "kl_div", "l1_loss", "layer_norm", "log",
    "log_softmax", "log10", "log1p", "log2", "margin_ranking_loss", "mse_loss",
    "multilabel_margin_loss", "multi_margin_loss", "nll_loss", "norm", "normalize", "pdist",
    "poisson_nll_loss", "pow", "prod", "reciprocal", "rsqrt", "sinh", "smooth_l1_loss",
    "soft_margin_loss", "softmax", "softmin", "softplus", "sum", "renorm", "tan",
    "triplet_margin_loss"};
static const char *const ct__ac_cuda_promote[] = {
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "grid_sample", "index_put",
    "scatter_add", "tensordot"};

#define CT__AC_LIST(a) {a, (int)(sizeof(a) / sizeof(a[0]))}
typedef struct ct__ac_list {
    const char *const *names;
    int n;
} ct__ac_list;
/* [device type][category - 1] */
static const ct__ac_list ct__ac_lists[2][3] = {
    {CT__AC_LIST(ct__ac_cpu_lower), CT__AC_LIST(ct__ac_cpu_fp32),
     CT__AC_LIST(ct__ac_cpu_promote)},
    {CT__AC_LIST(ct__ac_cuda_lower), CT__AC_LIST(ct__ac_cuda_fp32),
     CT__AC_LIST(ct__ac_cuda_promote)}};

/* ctorch ops that PyTorch reaches through a listed op of another name. */
static const char *const ct__ac_aliases[][2] = {
    {"convolution", "conv2d"},           {"linear_relu", "linear"},
    {"native_layer_norm", "layer_norm"}, {"cross_entropy_loss", "cross_entropy"},
    {"linalg_multi_dot", "multi_dot"},  {"max_pool3d_with_indices", "max_pool3d"}};

/* Unlisted ops that PyTorch decomposes above autocast (CompositeImplicitAutograd): the ops
   they call are autocast. Every other op runs its own calls with autocast off, as PyTorch's
   kernels do (ctorch's ct_mv or ct_dot built on ct_mm stay float32 on the CPU). */
static const char *const ct__ac_decomposed[] = {"tensordot", "einsum", "inner", "kron",
                                                "linalg_matrix_power", "chain_matmul"};

/* CUDA registrations beyond the documented tables that PyTorch's own CUDA autocast tests
   check (torch/testing/_internal/autocast_test_lists.py); not in the accessors' lists. */
static const struct {
    const char *name;
    ct_autocast_category cat;
} ct__ac_cuda_extra[] = {{"logsumexp", CT_AUTOCAST_FP32},
                         {"rms_norm", CT_AUTOCAST_FP32},
                         {"vdot", CT_AUTOCAST_PROMOTE}};

static const char *const *ct__ac_get(int device, int category, int *n)
{
    const ct__ac_list *l = &ct__ac_lists[device][category - 1];
    if (n) {
        *n = l->n;
    }
    return l->names;
}

const char *const *ct_autocast_cpu_lower_ops(int *n)
{
    return ct__ac_get(CT_CPU, CT_AUTOCAST_LOWER_PRECISION, n);
}

const char *const *ct_autocast_cpu_fp32_ops(int *n)
{
    return ct__ac_get(CT_CPU, CT_AUTOCAST_FP32, n);
}

const char *const *ct_autocast_cpu_promote_ops(int *n)
{
    return ct__ac_get(CT_CPU, CT_AUTOCAST_PROMOTE, n);
}

const char *const *ct_autocast_cuda_lower_ops(int *n)
{
    return ct__ac_get(CT_CUDA, CT_AUTOCAST_LOWER_PRECISION, n);
}

const char *const *ct_autocast_cuda_fp32_ops(int *n)
{
    return ct__ac_get(CT_CUDA, CT_AUTOCAST_FP32, n);
}

const char *const *ct_autocast_cuda_promote_ops(int *n)
{
    return ct__ac_get(CT_CUDA, CT_AUTOCAST_PROMOTE, n);
}

static ct_autocast_category ct__ac_find(int device, const char *name)
{
    for (int cat = CT_AUTOCAST_LOWER_PRECISION; cat <= CT_AUTOCAST_PROMOTE; cat++) {
        const ct__ac_list *l = &ct__ac_lists[device][cat - 1];
        for (int i = 0; i < l->n; i++) {
            if (strcmp(l->names[i], name) == 0) {
                return (ct_autocast_category)cat;
            }
        }
    }
    for (size_t i = 0; device == CT_CUDA && i < sizeof ct__ac_cuda_extra / sizeof
                                                    ct__ac_cuda_extra[0]; i++) {
        if (strcmp(ct__ac_cuda_extra[i].name, name) == 0) {
            return ct__ac_cuda_extra[i].cat;
        }
    }
    return CT_AUTOCAST_NONE;
}

/* An op name without its namespace and overload, into name[96]. */
static void ct__ac_bare_name(const char *op, char *name)
{
    const char *ns = strstr(op, "::");
    size_t len = strcspn(ns ? ns + 2 : op, ".");
    len = len < 95 ? len : 95;
    memcpy(name, ns ? ns + 2 : op, len);
    name[len] = '\0';
}

/* The category of an op name with or without its namespace and overload. */
static ct_autocast_category ct__ac_category_of(int device, const char *op)
{
    char name[96];
    ct__ac_bare_name(op, name);
    ct_autocast_category cat = ct__ac_find(device, name);
    for (size_t i = 0; cat == CT_AUTOCAST_NONE && i < sizeof ct__ac_aliases / sizeof
                                                           ct__ac_aliases[0]; i++) {
        if (strcmp(ct__ac_aliases[i][0], name) == 0) {
            cat = ct__ac_find(device, ct__ac_aliases[i][1]);
        }
    }
    return cat;
}

bool ct_is_autocast_available(ct_device_type device_type)
{
    return device_type == CT_CPU || device_type == CT_CUDA;
}

ct_autocast_category ct_autocast_policy(ct_device_type device_type, const char *op)
{
    if (!op || !ct_is_autocast_available(device_type)) {
        return CT_AUTOCAST_NONE;
    }
    return ct__ac_category_of((int)device_type, op);
}

/* ---- per-thread state -------------------------------------------------------------------- */
#define CT__AC_MAX_DEPTH 64
#define CT__AC_MEMO 256
#define CT__AC_BANNED 4 /* CUDA's binary_cross_entropy: an error inside a region */

typedef struct ct__ac_saved {
    ct_device_type type;
    bool enabled, cache_disabled;
    ct_dtype dtype;
} ct__ac_saved;

typedef struct ct__ac_cached {
    ct_tensor *src, *cast; /* both retained: src stays alive, so its address keys the cast */
} ct__ac_cached;

typedef struct ct__ac_memo {
    const ct_op *op;
    unsigned char cat[2]; /* per device type: a ct_autocast_category or CT__AC_BANNED */
    bool decomposed;      /* unlisted, and its own calls are autocast */
} ct__ac_memo;

typedef struct ct__ac_state {
    ct_dtype dtype[2]; /* CT_DTYPE_DEFAULT: the default, bfloat16 / float16 */
    bool enabled[2];
    bool cache_disabled;
    bool excluded; /* inside an op: the calls it makes are not autocast */
    bool slow;     /* this thread holds one count of the dispatcher's slow path */
    ct_device_type cpu_lists; /* whose state and lists CPU tensors take (tests: CT_CUDA) */
    int depth;
    ct__ac_saved saved[CT__AC_MAX_DEPTH];
    ct__ac_cached *cache;
    int n_cache, cap_cache;
    ct__ac_memo memo[CT__AC_MEMO];
} ct__ac_state;

/* Zero at a thread's start: dtype CT_DTYPE_DEFAULT reads as the device type's default. */
static CT__THREAD_LOCAL ct__ac_state ct__ac;

static ct_dtype ct__ac_dtype(const ct__ac_state *s, int device)
{
    ct_dtype d = s->dtype[device];
    return d != CT_DTYPE_DEFAULT ? d : device == CT_CPU ? CT_BFLOAT16 : CT_FLOAT16;
}

/* Holds the dispatcher's slow path while a region is open or a device type is enabled. */
static void ct__ac_sync_slow(ct__ac_state *s)
{
    bool want = s->depth > 0 || s->enabled[CT_CPU] || s->enabled[CT_CUDA];
    if (want != s->slow) {
        ct__dispatch_slow_add(want ? 1 : -1);
        s->slow = want;
    }
}

static void ct__ac_clear_cache(ct__ac_state *s)
{
    for (int i = 0; i < s->n_cache; i++) {
        ct_release(s->cache[i].cast);
        ct_release(s->cache[i].src);
    }
    ct__free(s->cache);
    s->cache = NULL;
    s->n_cache = s->cap_cache = 0;
}

void ct__autocast_cpu_lists(ct_device_type device_type)
{
    ct__ac.cpu_lists = device_type;
}

static bool ct__ac_check_type(const char *fn, ct_device_type device_type)
{
    if (ct_is_autocast_available(device_type)) {
        return true;
    }
    if (device_type == CT_PRIVATEUSE1) {
        ct__fail(CT_ERR_VALUE, fn, "User specified an unsupported autocast device_type "
                 "'privateuseone'");
    } else {
        ct__fail(CT_ERR_VALUE, fn, "User specified an unsupported autocast device_type %d",
                 (int)device_type);
    }
    return false;
}

/* Whether a region of device_type can run in dtype (PyTorch warns and disables otherwise:
   here the error is recorded and the region opened disabled). */
static ct_status ct__ac_supported(ct_device_type device_type, ct_dtype dtype)
{
    const char *fn = "ct_autocast_begin";
    if (device_type == CT_CUDA && !ct__backend(CT_CUDA)) {
        return ct__fail(CT_ERR_DEVICE, fn, "CUDA is not available or torch_xla is imported. "
                        "Disabling autocast.");
    }
    if (dtype != CT_BFLOAT16 && dtype != CT_FLOAT16) {
        const char *d = device_type == CT_CPU ? "CPU" : "CUDA";
        return ct__fail(CT_ERR_DTYPE, fn, "In %s autocast, but the target dtype is not "
                        "supported. Disabling autocast.\n%s Autocast only supports dtypes of "
                        "torch.bfloat16, torch.float16 currently.", d, d);
    }
    return CT_OK;
}

ct_status ct_autocast_begin(ct_device_type device_type, ct_dtype dtype, bool cache_enabled)
{
    const char *fn = "ct_autocast_begin";
    ct__ac_state *s = &ct__ac;
    if (!ct__ac_check_type(fn, device_type) || !ct__check_dtype_arg(fn, dtype)) {
        return ct_error_code();
    }
    if (s->depth == CT__AC_MAX_DEPTH) {
        return ct__fail(CT_ERR_STATE, fn, "more than %d nested autocast regions",
                        CT__AC_MAX_DEPTH);
    }
    ct_dtype fast = dtype == CT_DTYPE_DEFAULT ? ct__ac_dtype(s, device_type) : dtype;
    ct__ac_saved *sv = &s->saved[s->depth++];
    sv->type = device_type;
    sv->enabled = s->enabled[device_type];
    sv->dtype = s->dtype[device_type];
    sv->cache_disabled = s->cache_disabled;
    ct_status st = ct__ac_supported(device_type, fast);
    s->enabled[device_type] = st == CT_OK;
    s->dtype[device_type] = fast;
    s->cache_disabled = !cache_enabled;
    ct__ac_sync_slow(s);
    return st;
}

ct_status ct_autocast_end(void)
{
    ct__ac_state *s = &ct__ac;
    if (s->depth == 0) {
        return ct__fail(CT_ERR_STATE, "ct_autocast_end", "no autocast region is open");
    }
    const ct__ac_saved *sv = &s->saved[--s->depth];
    s->enabled[sv->type] = sv->enabled;
    s->dtype[sv->type] = sv->dtype;
    s->cache_disabled = sv->cache_disabled;
    if (s->depth == 0) {
        ct__ac_clear_cache(s);
    }
    ct__ac_sync_slow(s);
    return CT_OK;
}

bool ct_is_autocast_enabled(ct_device_type device_type)
{
    return ct_is_autocast_available(device_type) && ct__ac.enabled[device_type];
}

ct_status ct_set_autocast_enabled(ct_device_type device_type, bool enabled)
{
    if (!ct__ac_check_type("ct_set_autocast_enabled", device_type)) {
        return CT_ERR_VALUE;
    }
    ct__ac.enabled[device_type] = enabled;
    ct__ac_sync_slow(&ct__ac);
    return CT_OK;
}

ct_dtype ct_get_autocast_dtype(ct_device_type device_type)
{
    return ct_is_autocast_available(device_type) ? ct__ac_dtype(&ct__ac, device_type)
                                                 : CT_DTYPE_DEFAULT;
}

ct_status ct_set_autocast_dtype(ct_device_type device_type, ct_dtype dtype)
{
    const char *fn = "ct_set_autocast_dtype";
    if (!ct__ac_check_type(fn, device_type) || !ct__check_dtype_arg(fn, dtype)) {
        return ct_error_code();
    }
    if (dtype == CT_DTYPE_DEFAULT) {
        return ct__fail(CT_ERR_VALUE, fn, "expected a dtype, got the default");
    }
    ct__ac.dtype[device_type] = dtype;
    return CT_OK;
}

/* ---- the casts --------------------------------------------------------------------------- */
static bool ct__ac_is_decomposed(const char *op)
{
    char name[96];
    ct__ac_bare_name(op, name);
    for (size_t i = 0; i < sizeof ct__ac_decomposed / sizeof ct__ac_decomposed[0]; i++) {
        if (strcmp(ct__ac_decomposed[i], name) == 0) {
            return true;
        }
    }
    return false;
}

/* What autocast does with op (memoized per thread; misses search the lists by name). */
static const ct__ac_memo *ct__ac_lookup(ct__ac_state *s, const ct_op *op)
{
    ct__ac_memo *m = &s->memo[((uintptr_t)op >> 4) % CT__AC_MEMO];
    if (m->op != op) {
        m->decomposed = ct__ac_is_decomposed(op->name);
        for (int d = 0; d < 2; d++) {
            ct_autocast_category cat = ct__ac_category_of(d, op->name);
            bool banned = d == CT_CUDA && strcmp(op->name, "aten::binary_cross_entropy") == 0;
            m->cat[d] = (unsigned char)(banned ? CT__AC_BANNED
                                        : cat != CT_AUTOCAST_NONE ? cat : op->autocast);
        }
        m->op = op;
    }
    return m;
}

/* The index among the schema's non-tensor arguments (the call's attrs) of its
   "ScalarType? dtype" argument, or -1. */
static int ct__ac_dtype_attr(const char *schema)
{
    const char *p = strchr(schema, '(');
    if (!p || !strstr(p, "ScalarType? dtype")) {
        return -1;
    }
    int k = 0;
    for (p++; *p && *p != ')';) {
        size_t len = strcspn(p, ",)");
        while (*p == ' ') {
            p++, len--;
        }
        if (strncmp(p, "ScalarType? dtype", 17) == 0) {
            return k;
        }
        k += *p != '*' && strncmp(p, "Tensor", 6) != 0;
        p += len + (p[len] == ',');
    }
    return -1;
}

/* Calls with an explicit dtype argument are not autocast. */
static bool ct__ac_explicit_dtype(const ct_op_call *c)
{
    int k = ct__ac_dtype_attr(c->op->schema);
    return k >= 0 && k < c->n_attrs && c->attrs[k].i != CT_DTYPE_DEFAULT;
}

/* Whether autocast may cast input t of a call on device: a floating tensor other than
   float64 on the call's device, not a wrapped C scalar (PyTorch's Scalar arguments). */
static bool ct__ac_eligible(const ct_op_call *c, const ct_tensor *t)
{
    return t && !t->wrapped_number && ct_dtype_is_floating_point(t->dtype) &&
           t->dtype != CT_FLOAT64 && t->storage->device.type == c->device.type;
}

/* t cast to dtype: an unscoped reference the caller releases. */
static ct_tensor *ct__ac_to(const ct_tensor *t, ct_dtype dtype)
{
    ct_scope_begin();
    ct_tensor *r = ct_retain(ct_to_dtype(t, dtype));
    ct_scope_end();
    return r;
}

/* The cast of a parameter (a float32 leaf that requires grad, not a view) to the region's
   dtype, made once per outermost region. */
static ct_tensor *ct__ac_cached_cast(ct__ac_state *s, const ct_tensor *t, ct_dtype dtype)
{
    for (int i = 0; i < s->n_cache; i++) {
        if (s->cache[i].src == t && s->cache[i].cast->dtype == dtype) {
            return ct_retain(s->cache[i].cast);
        }
    }
    ct_tensor *r = ct__ac_to(t, dtype);
    if (!r) {
        return NULL;
    }
    if (s->n_cache == s->cap_cache) {
        int cap = s->cap_cache ? 2 * s->cap_cache : 32;
        ct__ac_cached *m = (ct__ac_cached *)ct__realloc(s->cache, (size_t)cap * sizeof *m);
        if (!m) {
            return r; /* used uncached */
        }
        s->cache = m;
        s->cap_cache = cap;
    }
    s->cache[s->n_cache].src = ct_retain((ct_tensor *)(uintptr_t)t);
    s->cache[s->n_cache++].cast = ct_retain(r);
    return r;
}

static const ct_tensor *ct__ac_cast(ct__ac_state *s, const ct_op_call *c, const ct_tensor *t,
                                    ct_dtype dtype, ct_dtype lower)
{
    if (!ct__ac_eligible(c, t) || t->dtype == dtype) {
        return t;
    }
    bool cache = !s->cache_disabled && dtype == lower && t->dtype == CT_FLOAT32 &&
                 t->requires_grad && !t->grad_fn && !t->base;
    return cache ? ct__ac_cached_cast(s, t, dtype) : ct__ac_to(t, dtype);
}

/* The dtype a call's eligible inputs are cast to. */
static ct_dtype ct__ac_target(const ct_op_call *c, int cat, ct_dtype lower)
{
    if (cat == CT_AUTOCAST_FP32) {
        return CT_FLOAT32;
    }
    ct_dtype d = lower;
    for (int k = 0; cat == CT_AUTOCAST_PROMOTE && k < c->n_inputs; k++) {
        if (ct__ac_eligible(c, c->inputs[k])) {
            d = ct_promote_types(d, c->inputs[k]->dtype);
        }
    }
    return d;
}

/* Runs an op on its cast inputs (none when dtype is CT_DTYPE_DEFAULT), with autocast off for
   the calls it makes. */
static ct_tensor *ct__ac_run(ct__ac_state *s, ct_op_call *c, ct_dtype dtype, ct_dtype lower)
{
    const ct_tensor *local[16], **in = local, *const *orig = c->inputs;
    int n = dtype == CT_DTYPE_DEFAULT ? 0 : c->n_inputs;
    if (n > 16 && !(in = (const ct_tensor **)ct__malloc(sizeof(*in) * (size_t)n))) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        return NULL;
    }
    s->excluded = true;
    bool ok = true;
    for (int k = 0; k < n; k++) {
        in[k] = ok ? ct__ac_cast(s, c, orig[k], dtype, lower) : orig[k];
        ok = ok && (in[k] || !orig[k]);
    }
    c->inputs = n ? in : orig;
    ct_tensor *r = ok ? ct__dispatch_hooked(c) : NULL;
    c->inputs = orig;
    s->excluded = false;
    for (int k = 0; k < n; k++) {
        if (in[k] != orig[k]) {
            ct_release((ct_tensor *)(uintptr_t)in[k]);
        }
    }
    if (in != local) {
        ct__free((void *)in);
    }
    return r;
}

ct_tensor *ct__autocast_dispatch(ct_op_call *c)
{
    ct__ac_state *s = &ct__ac;
    int device = c->device.type == CT_CPU ? (int)s->cpu_lists : (int)c->device.type;
    if (s->excluded || device > CT_CUDA || !s->enabled[device]) {
        return ct__dispatch_hooked(c);
    }
    const ct__ac_memo *m = ct__ac_lookup(s, c->op);
    int cat = m->cat[device];
    if (cat == CT__AC_BANNED) {
        ct__fail(CT_ERR_VALUE, c->fn, "torch.nn.functional.binary_cross_entropy and "
                 "torch.nn.BCELoss are unsafe to autocast.\nMany models use a sigmoid layer "
                 "right before the binary cross entropy layer.\nIn this case, combine the two "
                 "layers using torch.nn.functional.binary_cross_entropy_with_logits\nor "
                 "torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
                 "BCEWithLogits are\nsafe to autocast.");
        return NULL;
    }
    if (cat == CT_AUTOCAST_NONE && m->decomposed) {
        return ct__dispatch_hooked(c);
    }
    ct_dtype lower = ct__ac_dtype(s, device);
    bool cast = cat != CT_AUTOCAST_NONE && c->op->kind != CT_OP_INPLACE &&
                !ct__ac_explicit_dtype(c);
    return ct__ac_run(s, c, cast ? ct__ac_target(c, cat, lower) : CT_DTYPE_DEFAULT, lower);
}

CT__GLUE_END
