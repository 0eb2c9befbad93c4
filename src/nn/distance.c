/* nn/distance.c - one_hot, normalize, cosine_similarity, pairwise_distance, pdist, bilinear
 * and their modules: composites of dispatched ops (no kernel loops of their own), each
 * written as PyTorch's definition (ATen's Distance.cpp, Onehot.cpp, Linear.cpp; Python's
 * F.normalize), so autograd, determinism and the float16/bfloat16 paths are the ops'. */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../ops/index.h"
#include "../ops/reduce.h"
#include "../ops/linalg.h"
#include "../autograd/autograd.h"
#include "init.h"
#include "state_dict.h"
#include "module.h"
#include "distance.h"

#include <math.h>

CT__GLUE_BEGIN

/* ---- composites ------------------------------------------------------------------------- */
static bool ct__one_hot_meta(ct_op_call *c)
{
    if (c->inputs[0]->dtype != CT_INT64) {
        ct__fail(CT_ERR_DTYPE, c->fn,
                 "one_hot is only applicable to index tensor of type LongTensor.");
        return false;
    }
    return true;
}

/* Onehot.cpp's checks, then (input[..., None] == arange(num_classes)) as int64. Attribute:
   num_classes. */
static ct_status ct__one_hot_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    int64_t classes = c->attrs[0].i;
    ct_scope_begin();
    const char *bad = NULL;
    if (ct_numel(x) == 0) {
        bad = classes <= 0 ? "Can not infer total number of classes from empty tensor." : NULL;
    } else if (ct_item_int64(ct_min(x)) < 0) {
        bad = "Class values must be non-negative.";
    } else {
        int64_t top = ct_item_int64(ct_max(x));
        classes = classes == -1 ? top + 1 : classes;
        bad = top >= classes ? "Class values must be smaller than num_classes." : NULL;
    }
    if (bad) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s", bad);
        return ct__composite_end(c, NULL);
    }
    ct_tensor *hot = ct_eq(ct_unsqueeze(x, -1), ct_arange(0.0, (double)classes, 1.0, CT_INT64));
    return ct__composite_end(c, ct_to_dtype(hot, CT_INT64));
}

/* max(t, eps) (PyTorch's clamp_min: the gradient passes where t >= eps) */
static ct_tensor *ct__clamp_min(const ct_tensor *t, double eps)
{
    return ct_clamp(t, eps, INFINITY);
}

/* input / norm(input, p, dim, keepdim).clamp_min(eps). Attributes: p, dim, eps. */
static ct_status ct__normalize_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    int64_t dim = c->attrs[1].i;
    ct_scope_begin();
    ct_tensor *n = ct_linalg_vector_norm(x, c->attrs[0].f, &dim, 1, true);
    return ct__composite_end(c, ct_div(x, ct__clamp_min(n, c->attrs[2].f)));
}

static bool ct__cosine_similarity_meta(ct_op_call *c)
{
    ct_dtype common = ct_promote_types(c->inputs[0]->dtype, c->inputs[1]->dtype);
    if (!ct_dtype_is_floating_point(common)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "expected common dtype to be floating point, yet common "
                 "dtype is %s", ct__dtype_title(common));
        return false;
    }
    c->dtype = common;
    return true;
}

/* x / max(||x||_2 along dim, eps), the norm clamped in place on a clone without gradient
   (PyTorch's NoGradGuard clamp_min_): the gradient flows as if unclamped. */
static ct_tensor *ct__cosine_scaled(const ct_tensor *x, int64_t dim, double eps)
{
    ct_tensor *n = ct_clone(ct_linalg_vector_norm(x, 2.0, &dim, 1, true));
    ct_no_grad_begin();
    ct_clamp_(n, eps, INFINITY);
    ct_no_grad_end();
    return ct_div(x, n);
}

/* sum(x1 / |x1| * x2 / |x2|, dim) over the inputs expanded to their broadcast shape (integers
   converted to the common dtype first). Attributes: dim, eps. */
static ct_status ct__cosine_similarity_composite(ct_op_call *c)
{
    int64_t dim = c->attrs[0].i;
    double eps = c->attrs[1].f;
    ct_scope_begin();
    const ct_tensor *in[2];
    for (int k = 0; k < 2; k++) {
        const ct_tensor *x = c->inputs[k];
        in[k] = ct_dtype_is_floating_point(x->dtype) ? x : ct_to_dtype(x, c->dtype);
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    ct_tensor *r = NULL;
    if (in[0] && in[1] && ct__broadcast_shapes(c->fn, in[0]->sizes, in[0]->ndim, in[1]->sizes,
                                               in[1]->ndim, shape, &nd)) {
        ct_tensor *a = ct__cosine_scaled(ct_expand(in[0], shape, nd), dim, eps);
        r = ct_sum_dim(ct_mul(a, ct__cosine_scaled(ct_expand(in[1], shape, nd), dim, eps)), dim,
                       false);
    }
    return ct__composite_end(c, r);
}

/* norm(x1 - x2 + eps, p, last dim of the broadcast, keepdim). Attributes: p, eps, keepdim. */
static ct_status ct__pairwise_distance_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1];
    int64_t last = (a->ndim > b->ndim ? a->ndim : b->ndim) - 1;
    ct_scope_begin();
    ct_tensor *d = ct_add_scalar(ct_sub(a, b), c->attrs[1].f);
    return ct__composite_end(c, ct_linalg_vector_norm(d, c->attrs[0].f, &last, 1,
                                                      c->attrs[2].i != 0));
}

static bool ct__pdist_meta(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    if (x->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "pdist only supports 2D tensors, got: %dD", x->ndim);
        return false;
    }
    if (!ct_dtype_is_floating_point(x->dtype)) {
        ct__fail(CT_ERR_DTYPE, c->fn, "pdist only supports floating-point dtypes");
        return false;
    }
    if (ct__is_half(x->dtype)) { /* PyTorch's CPU kernel has no half dtypes */
        ct__fail(CT_ERR_DTYPE, c->fn, "\"pdist\" not implemented for '%s'",
                 ct__dtype_title(x->dtype));
        return false;
    }
    if (!(c->attrs[0].f >= 0)) {
        ct__fail(CT_ERR_VALUE, c->fn, "pdist only supports non-negative p values");
        return false;
    }
    return true;
}

/* norm(input[i] - input[j], p, dim 1) over the pairs i < j of triu_indices(N, N, 1).
   Attribute: p. */
static ct_status ct__pdist_composite(ct_op_call *c)
{
    const ct_tensor *x = c->inputs[0];
    int64_t n = x->sizes[0], one = 1;
    ct_scope_begin();
    ct_tensor *pairs = ct_triu_indices(n, n, 1, CT_INT64);
    ct_tensor *d = ct_sub(ct_index_select(x, 0, ct_select(pairs, 0, 0)),
                          ct_index_select(x, 0, ct_select(pairs, 0, 1)));
    return ct__composite_end(c, ct_linalg_vector_norm(d, c->attrs[0].f, &one, 1, false));
}

/* at::bilinear's checks (weight 3-D first, so its sizes can be read). */
static bool ct__bilinear_meta(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1], *w = c->inputs[2];
    const ct_tensor *bias = c->inputs[3];
    if (w->ndim != 3 || a->ndim < 1) {
        ct__fail(CT_ERR_SHAPE, c->fn, "number of dimensions must match");
        return false;
    }
    if (a->ndim != b->ndim) {
        ct__fail(CT_ERR_SHAPE, c->fn, "bilinear(): input dimensions do not match: got %d and %d",
                 a->ndim, b->ndim);
        return false;
    }
    for (int d = 0; d < a->ndim - 1; d++) {
        if (a->sizes[d] != b->sizes[d]) {
            ct__fail(CT_ERR_SHAPE, c->fn, "bilinear(): input batch dimensions do not match at "
                     "dim %d: got %lld and %lld", d, (long long)a->sizes[d],
                     (long long)b->sizes[d]);
            return false;
        }
    }
    const char *what[3] = {"input1", "input2", "bias"};
    int64_t got[3] = {a->sizes[a->ndim - 1], b->sizes[b->ndim - 1], w->sizes[0]};
    int64_t want[3] = {w->sizes[1], w->sizes[2], w->sizes[0]};
    for (int k = 0; k < 3; k++) {
        got[k] = k == 2 && bias && bias->ndim ? bias->sizes[0] : got[k];
        if (got[k] != want[k]) {
            ct__fail(CT_ERR_SHAPE, c->fn, "bilinear(): %s size does not match weight size: got "
                     "%lld but expected %lld", what[k], (long long)got[k], (long long)want[k]);
            return false;
        }
    }
    return true;
}

/* (B, in1) @ weight permuted to (in1, out * in2) -> (B, out, in2), times input2 (B, 1, in2)
   summed over in2, plus bias; B the product of the batch dims. Inputs: input1, input2, weight,
   bias (optional). */
static ct_status ct__bilinear_composite(ct_op_call *c)
{
    const ct_tensor *a = c->inputs[0], *b = c->inputs[1], *w = c->inputs[2];
    int64_t out = w->sizes[0], in1 = w->sizes[1], in2 = w->sizes[2], batch = 1;
    int64_t shape[CT_MAX_DIMS];
    for (int d = 0; d < a->ndim - 1; d++) {
        shape[d] = a->sizes[d];
        batch *= a->sizes[d];
    }
    shape[a->ndim - 1] = out;
    const int64_t perm[3] = {1, 0, 2}, sw[2] = {in1, out * in2}, sa[2] = {batch, in1};
    const int64_t sb[3] = {batch, 1, in2}, st[3] = {batch, out, in2};
    ct_scope_begin();
    ct_tensor *w2 = ct_reshape(ct_permute(w, perm, 3), sw, 2);
    ct_tensor *t = ct_reshape(ct_matmul(ct_reshape(a, sa, 2), w2), st, 3);
    ct_tensor *y = ct_sum_dim(ct_mul(t, ct_reshape(b, sb, 3)), 2, false);
    y = c->inputs[3] ? ct_add(y, c->inputs[3]) : y;
    return ct__composite_end(c, ct_reshape(y, shape, a->ndim));
}

/* ---- descriptors ---------------------------------------------------------------------------- */
#define CT__DIST_OP(SYM, NAME, SCHEMA, API, OPT, META)                                            \
    static const ct_op ct__op_##SYM = {NAME, SCHEMA, API, CT_OP_OTHER, CT_AUTOCAST_NONE, 0, OPT,  \
                                       NULL, META, CT__K_NONE, ct__##SYM##_composite, NULL,      \
                                       NULL, 0u, NULL, NULL};
CT__DIST_OP(one_hot, "aten::one_hot", "one_hot(Tensor self, int num_classes=-1) -> Tensor",
            "ct_one_hot", 0u, ct__one_hot_meta)
CT__DIST_OP(normalize, "ctorch::normalize", "normalize(Tensor input, float p=2.0, int dim=1, "
            "float eps=1e-12) -> Tensor", "ct_normalize", 0u, NULL)
CT__DIST_OP(cosine_similarity, "aten::cosine_similarity", "cosine_similarity(Tensor x1, Tensor "
            "x2, int dim=1, float eps=1e-08) -> Tensor", "ct_cosine_similarity", 0u,
            ct__cosine_similarity_meta)
CT__DIST_OP(pairwise_distance, "aten::pairwise_distance", "pairwise_distance(Tensor x1, Tensor "
            "x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor",
            "ct_pairwise_distance", 0u, NULL)
CT__DIST_OP(pdist, "aten::pdist", "pdist(Tensor self, float p=2) -> Tensor", "ct_pdist", 0u,
            ct__pdist_meta)
CT__DIST_OP(bilinear, "aten::bilinear", "bilinear(Tensor input1, Tensor input2, Tensor weight, "
            "Tensor? bias=None) -> Tensor", "ct_bilinear", 1u << 3, ct__bilinear_meta)
#undef CT__DIST_OP

/* ---- public functions ----------------------------------------------------------------------- */
/* A call of op on n inputs with the integer attributes i[0..ni), then the float ones
   f[0..nf) (the schemas' order of one_hot, cosine_similarity, pdist and bilinear). */
static ct_tensor *ct__dist_call(const ct_op *op, const char *fn, const ct_tensor *const *in,
                                int n, const double *f, int nf, const int64_t *i, int ni)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, in, n);
    for (int k = 0; k < ni; k++) {
        ct__call_i(&c, i[k]);
    }
    for (int k = 0; k < nf; k++) {
        ct__call_f(&c, f[k]);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_one_hot(const ct_tensor *input, int64_t num_classes)
{
    const ct_tensor *in[1] = {input};
    return ct__dist_call(&ct__op_one_hot, "ct_one_hot", in, 1, NULL, 0, &num_classes, 1);
}

ct_tensor *ct_normalize(const ct_tensor *input, double p, int64_t dim, double eps)
{
    const ct_tensor *in[1] = {input};
    ct_op_call c;
    ct__call_init(&c, &ct__op_normalize, "ct_normalize", in, 1);
    ct__call_f(&c, p);
    ct__call_i(&c, dim);
    ct__call_f(&c, eps);
    return ct__dispatch(&c);
}

ct_tensor *ct_cosine_similarity(const ct_tensor *x1, const ct_tensor *x2, int64_t dim,
                                double eps)
{
    const ct_tensor *in[2] = {x1, x2};
    return ct__dist_call(&ct__op_cosine_similarity, "ct_cosine_similarity", in, 2, &eps, 1,
                         &dim, 1);
}

ct_tensor *ct_pairwise_distance(const ct_tensor *x1, const ct_tensor *x2, double p, double eps,
                                bool keepdim)
{
    const ct_tensor *in[2] = {x1, x2};
    ct_op_call c;
    ct__call_init(&c, &ct__op_pairwise_distance, "ct_pairwise_distance", in, 2);
    ct__call_f(&c, p);
    ct__call_f(&c, eps);
    ct__call_i(&c, keepdim);
    return ct__dispatch(&c);
}

ct_tensor *ct_pdist(const ct_tensor *input, double p)
{
    const ct_tensor *in[1] = {input};
    return ct__dist_call(&ct__op_pdist, "ct_pdist", in, 1, &p, 1, NULL, 0);
}

ct_tensor *ct_bilinear(const ct_tensor *input1, const ct_tensor *input2, const ct_tensor *weight,
                       const ct_tensor *bias)
{
    const ct_tensor *in[4] = {input1, input2, weight, bias};
    return ct__dist_call(&ct__op_bilinear, "ct_bilinear", in, 4, NULL, 0, NULL, 0);
}

/* ---- modules ------------------------------------------------------------------------------
 * A module named as PyTorch's class whose user data holds its kind and options. */
typedef enum ct__dist_kind { CT__DIST_BILINEAR, CT__DIST_COSINE, CT__DIST_PAIRWISE } ct__dist_kind;

static const char *const ct__dist_names[3] = {"Bilinear", "CosineSimilarity", "PairwiseDistance"};

typedef struct ct__dist_module {
    ct__dist_kind kind;
    int64_t dim; /* CosineSimilarity */
    double p, eps;
    bool keepdim; /* PairwiseDistance */
} ct__dist_module;

static ct_tensor *ct__dist_module_forward(ct_module *m, const ct_tensor *input)
{
    (void)input;
    ct__fail(CT_ERR_VALUE, "ct_module_forward", "%s takes two inputs: call its typed forward "
             "with input1 and input2", ct_module_name(m));
    return NULL;
}

static ct_module *ct__dist_module_new(const char *fn, ct__dist_module u)
{
    ct__dist_module *cfg = (ct__dist_module *)ct__malloc(sizeof *cfg);
    if (!cfg) {
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return NULL;
    }
    *cfg = u;
    ct_module *m = ct_module_new(ct__dist_names[u.kind], ct__dist_module_forward, cfg, ct__free);
    if (!m) {
        ct__free(cfg);
    }
    return m;
}

/* A new float32 parameter of shape s from U(-bound, bound), registered on m; false on error. */
static bool ct__dist_uniform_param(ct_module *m, const char *name, const int64_t *s, int nd,
                                   double bound)
{
    ct_tensor *t = ct__tensor_new("ct_bilinear_new", s, nd, CT_FLOAT32);
    bool ok = t && ct_init_uniform_(t, -bound, bound, NULL) &&
              ct_module_register_parameter(m, name, t) == CT_OK;
    ct__release(t); /* the module holds it */
    return ok;
}

ct_module *ct_bilinear_new(int64_t in1_features, int64_t in2_features, int64_t out_features,
                           bool bias)
{
    const char *fn = "ct_bilinear_new";
    if (in1_features <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "in1_features must be > 0, but got (in1_features=%lld)",
                 (long long)in1_features);
        return NULL;
    }
    ct__dist_module u = {CT__DIST_BILINEAR, 0, 0.0, 0.0, false};
    ct_module *m = ct__dist_module_new(fn, u);
    const int64_t ws[3] = {out_features, in1_features, in2_features};
    double bound = 1.0 / sqrt((double)in1_features);
    bool ok = m && ct__dist_uniform_param(m, "weight", ws, 3, bound);
    ok = ok && (!bias || ct__dist_uniform_param(m, "bias", ws, 1, bound));
    if (!ok) {
        ct_module_free(m);
        return NULL;
    }
    return m;
}

ct_module *ct_cosine_similarity_new(int64_t dim, double eps)
{
    ct__dist_module u = {CT__DIST_COSINE, dim, 0.0, eps, false};
    return ct__dist_module_new("ct_cosine_similarity_new", u);
}

ct_module *ct_pairwise_distance_new(double p, double eps, bool keepdim)
{
    ct__dist_module u = {CT__DIST_PAIRWISE, 0, p, eps, keepdim};
    return ct__dist_module_new("ct_pairwise_distance_new", u);
}

/* m's options when m is a module of kind with both inputs given, else NULL (reported). */
static const ct__dist_module *ct__dist_module_of(const char *fn, const ct_module *m,
                                                 ct__dist_kind kind, const ct_tensor *a,
                                                 const ct_tensor *b)
{
    if (ct__null(fn, m) || ct__null(fn, a) || ct__null(fn, b)) {
        return NULL;
    }
    const char *name = ct_module_name(m);
    const ct__dist_module *u = (const ct__dist_module *)ct_module_user(m);
    if (!u || strcmp(name, ct__dist_names[kind]) != 0 || u->kind != kind) {
        ct__fail(CT_ERR_VALUE, fn, "expected a %s module, got %s", ct__dist_names[kind], name);
        return NULL;
    }
    return u;
}

ct_tensor *ct_bilinear_forward(ct_module *m, const ct_tensor *input1, const ct_tensor *input2)
{
    const char *fn = "ct_bilinear_forward";
    if (!ct__dist_module_of(fn, m, CT__DIST_BILINEAR, input1, input2)) {
        return NULL;
    }
    return ct_bilinear(input1, input2, ct_module_get_parameter(m, "weight"),
                       ct_module_get_parameter(m, "bias"));
}

ct_tensor *ct_cosine_similarity_forward(ct_module *m, const ct_tensor *x1, const ct_tensor *x2)
{
    const ct__dist_module *u =
        ct__dist_module_of("ct_cosine_similarity_forward", m, CT__DIST_COSINE, x1, x2);
    return u ? ct_cosine_similarity(x1, x2, u->dim, u->eps) : NULL;
}

ct_tensor *ct_pairwise_distance_forward(ct_module *m, const ct_tensor *x1, const ct_tensor *x2)
{
    const ct__dist_module *u =
        ct__dist_module_of("ct_pairwise_distance_forward", m, CT__DIST_PAIRWISE, x1, x2);
    return u ? ct_pairwise_distance(x1, x2, u->p, u->eps, u->keepdim) : NULL;
}
CT__GLUE_END
