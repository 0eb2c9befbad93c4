/* nn/init.c - torch.nn.init as torch/nn/init.py writes it: the dispatched ops uniform_, normal_
 * and fill_ under no_grad (so each initializer shows as those ops to hooks and the profiler).
 *
 * The bounds are computed as torch/nn/init.py computes them in Python doubles, one rounding
 * per operation: the one product that feeds a sum (1 + slope^2) is rounded on its own by
 * ct__init_square, so -ffp-contract cannot fuse it and change the bound's last bit.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../core/rng.h"
#include "../ops/pointwise.h"
#include "../ops/view.h"
#include "../ops/creation.h"
#include "../ops/decomp.h"
#include "../ops/index.h"
#include "../ops/reduce.h"
#include "../autograd/autograd.h"
#include "init.h"

CT__GLUE_BEGIN

/* x * x rounded to double by itself: an fma with a +0 addend is that product (a zero's
   sign aside), and being a call it is never fused into the caller's following add. */
static double ct__init_square(double x)
{
    return fma(x, x, 0.0);
}

double ct_init_calculate_gain(ct_nonlinearity nl, double param)
{
    switch (nl) {
    case CT_NONLINEARITY_TANH: return 5.0 / 3.0;
    case CT_NONLINEARITY_RELU: return sqrt(2.0);
    case CT_NONLINEARITY_LEAKY_RELU: return sqrt(2.0 / (1.0 + ct__init_square(param)));
    case CT_NONLINEARITY_SELU: return 3.0 / 4.0;
    case CT_NONLINEARITY_LINEAR:
    case CT_NONLINEARITY_SIGMOID: return 1.0;
    default:
        ct__fail(CT_ERR_VALUE, "ct_init_calculate_gain", "Unsupported nonlinearity %d", (int)nl);
        return NAN;
    }
}

ct_status ct_init_calculate_fan_in_and_fan_out(const ct_tensor *t, int64_t *fan_in,
                                               int64_t *fan_out)
{
    const char *op = "ct_init_calculate_fan_in_and_fan_out";
    if (ct__null(op, t)) {
        return ct_error_code();
    }
    if (t->ndim < 2) {
        return ct__fail(CT_ERR_SHAPE, op, "Fan in and fan out can not be computed for tensor "
                        "with fewer than 2 dimensions");
    }
    int64_t receptive = 1;
    for (int d = 2; d < t->ndim; d++) {
        receptive *= t->sizes[d];
    }
    if (fan_in) {
        *fan_in = t->sizes[1] * receptive;
    }
    if (fan_out) {
        *fan_out = t->sizes[0] * receptive;
    }
    return CT_OK;
}

/* Runs fill on t without recording history (the parameter is a leaf requiring grad). */
static ct_tensor *ct__init_fill(ct_tensor *t, double a, double b, bool normal, ct_generator *g)
{
    ct_no_grad_begin();
    ct_tensor *r = normal ? ct_normal_(t, a, b, g) : ct_uniform_(t, a, b, g);
    ct_no_grad_end();
    return r;
}

ct_tensor *ct_init_uniform_(ct_tensor *t, double a, double b, ct_generator *g)
{
    return ct__init_fill(t, a, b, false, g);
}

ct_tensor *ct_init_normal_(ct_tensor *t, double mean, double std, ct_generator *g)
{
    return ct__init_fill(t, mean, std, true, g);
}

ct_tensor *ct_init_constant_(ct_tensor *t, double value)
{
    ct_no_grad_begin();
    ct_tensor *r = ct_fill_(t, value);
    ct_no_grad_end();
    return r;
}

ct_tensor *ct_init_zeros_(ct_tensor *t) { return ct_init_constant_(t, 0.0); }

ct_tensor *ct_init_ones_(ct_tensor *t) { return ct_init_constant_(t, 1.0); }

/* gain / sqrt(fan) for the kaiming initializers; NAN on error */
static double ct__kaiming_std(const char *op, const ct_tensor *t, double a, ct_fan_mode mode,
                              ct_nonlinearity nl)
{
    int64_t fan_in = 0, fan_out = 0;
    if (mode != CT_FAN_IN && mode != CT_FAN_OUT) {
        ct__fail(CT_ERR_VALUE, op, "Mode %d not supported, please use one of "
                 "CT_FAN_IN, CT_FAN_OUT", (int)mode);
        return NAN;
    }
    if (ct_init_calculate_fan_in_and_fan_out(t, &fan_in, &fan_out) != CT_OK) {
        return NAN;
    }
    int64_t fan = mode == CT_FAN_OUT ? fan_out : fan_in;
    if (fan == 0) {
        return 0.0; /* PyTorch warns "Initializing zero-element tensors is a no-op" */
    }
    return ct_init_calculate_gain(nl, a) / sqrt((double)fan);
}

ct_tensor *ct_init_kaiming_uniform_(ct_tensor *t, double a, ct_fan_mode mode,
                                    ct_nonlinearity nl, ct_generator *g)
{
    double bound = sqrt(3.0) * ct__kaiming_std("ct_init_kaiming_uniform_", t, a, mode, nl);
    return isnan(bound) ? NULL : ct__init_fill(t, -bound, bound, false, g);
}

ct_tensor *ct_init_kaiming_normal_(ct_tensor *t, double a, ct_fan_mode mode, ct_nonlinearity nl,
                                   ct_generator *g)
{
    double std = ct__kaiming_std("ct_init_kaiming_normal_", t, a, mode, nl);
    return isnan(std) ? NULL : ct__init_fill(t, 0.0, std, true, g);
}

/* gain * sqrt(2 / (fan_in + fan_out)); NAN on error */
static double ct__xavier_std(const ct_tensor *t, double gain)
{
    int64_t fan_in = 0, fan_out = 0;
    if (ct_init_calculate_fan_in_and_fan_out(t, &fan_in, &fan_out) != CT_OK) {
        return NAN;
    }
    return gain * sqrt(2.0 / (double)(fan_in + fan_out));
}

ct_tensor *ct_init_xavier_uniform_(ct_tensor *t, double gain, ct_generator *g)
{
    double bound = sqrt(3.0) * ct__xavier_std(t, gain);
    return isnan(bound) ? NULL : ct__init_fill(t, -bound, bound, false, g);
}

ct_tensor *ct_init_xavier_normal_(ct_tensor *t, double gain, ct_generator *g)
{
    double std = ct__xavier_std(t, gain);
    return isnan(std) ? NULL : ct__init_fill(t, 0.0, std, true, g);
}

/* ---- T2 initializers: public ops under no_grad, inside a scope --------------------------- */
/* standard normal cumulative distribution, as torch/nn/init.py's norm_cdf */
static double ct__norm_cdf(double x)
{
    return (1.0 + erf(x / sqrt(2.0))) / 2.0;
}

/* a 0-dim tensor of v in t's dtype (the Python scalar operand of PyTorch's in-place ops) */
static ct_tensor *ct__init_scalar(const ct_tensor *t, double v)
{
    return ct_scalar_tensor(v, t->dtype);
}

/* ends an initializer's scope and no_grad region: t, or NULL when an op failed */
static ct_tensor *ct__init_end(ct_tensor *t, bool ok)
{
    ct_no_grad_end();
    ct_scope_end();
    return ok ? t : NULL;
}

static void ct__init_begin(void)
{
    ct_scope_begin();
    ct_no_grad_begin();
}

/* whether some element of the bool tensor m is true */
static bool ct__init_any(const ct_tensor *m)
{
    return m && ct_item(ct_any(m)) != 0.0;
}

/* The most likely case (mass of [a, b] > 0.3): N(mean, std^2) draws, the ones outside [a, b]
   (bounds rounded to t's dtype) redrawn for all elements together until none is left. */
static ct_tensor *ct__trunc_normal_redraw(ct_tensor *t, double mean, double std, double a,
                                          double b, ct_generator *g)
{
    double lo = ct_item(ct__init_scalar(t, a)), hi = ct_item(ct__init_scalar(t, b));
    ct_tensor *r = ct_normal_(t, mean, std, g);
    ct_tensor *m = r ? ct_logical_or(ct_lt_scalar(r, lo), ct_gt_scalar(r, hi)) : NULL;
    while (ct__init_any(m)) {
        r = ct_where(m, ct_normal_(ct_empty_like(r), mean, std, g), r);
        m = r ? ct_logical_or(ct_lt_scalar(r, lo), ct_gt_scalar(r, hi)) : NULL;
    }
    return m && ct_copy_(t, r) ? t : NULL;
}

/* log of the unnormalized density at c relative to its peak: -0.5 ((c - mean) / std)^2 - lp */
static ct_tensor *ct__trunc_log_pdf(const ct_tensor *c, double mean, double std, double lp)
{
    ct_tensor *z = ct_div_scalar(ct_sub_scalar(c, mean), std);
    return ct_sub_scalar(ct_mul_scalar(ct_pow_scalar(z, 2.0), -0.5), lp);
}

/* whether log(U(0, 1)) > the candidates' log density, drawn into buf */
static ct_tensor *ct__trunc_reject(ct_tensor *buf, const ct_tensor *logpdf, ct_generator *g)
{
    return ct_gt(ct_log_(ct_uniform_(buf, 0.0, 1.0, g)), logpdf);
}

/* A narrow [a, b]: U(a, b) candidates accepted with probability pdf / pdf(mode), the
   rejected ones redrawn until none is pending. */
static ct_tensor *ct__trunc_normal_reject(ct_tensor *t, double mean, double std, double a,
                                          double b, ct_generator *g)
{
    double mode = fmax(a, fmin(mean, b)), zm = (mode - mean) / std;
    double lp = -0.5 * (zm * zm);
    ct_tensor *buf = ct_empty_like(t), *r = ct_uniform_(t, a, b, g);
    ct_tensor *pending = r ? ct__trunc_reject(buf, ct__trunc_log_pdf(r, mean, std, lp), g) : NULL;
    while (ct__init_any(pending)) {
        ct_tensor *c = ct_uniform_(ct_empty_like(t), a, b, g);
        r = ct_where(pending, c, r);
        ct_tensor *again = c ? ct__trunc_reject(buf, ct__trunc_log_pdf(c, mean, std, lp), g)
                             : NULL;
        pending = ct_where(pending, again, pending);
    }
    return pending && ct_copy_(t, r) ? t : NULL;
}

ct_tensor *ct_init_trunc_normal_(ct_tensor *t, double mean, double std, double a, double b,
                                 ct_generator *g)
{
    if (ct__null("ct_init_trunc_normal_", t)) {
        return NULL;
    }
    double p = ct__norm_cdf((b - mean) / std) - ct__norm_cdf((a - mean) / std);
    ct__init_begin();
    ct_tensor *r = p > 0.3 ? ct__trunc_normal_redraw(t, mean, std, a, b, g)
                           : ct__trunc_normal_reject(t, mean, std, a, b, g);
    return ct__init_end(t, r != NULL);
}

/* CT_ERR_VALUE "Only tensors with <what> dimensions are supported" unless ok */
static bool ct__init_dims(const char *op, const ct_tensor *t, bool ok, const char *what)
{
    if (ct__null(op, t)) {
        return false;
    }
    if (!ok) {
        ct__fail(CT_ERR_VALUE, op, "Only tensors with %s dimensions are supported", what);
    }
    return ok;
}

ct_tensor *ct_init_eye_(ct_tensor *t)
{
    const char *op = "ct_init_eye_";
    if (!ct__init_dims(op, t, t && t->ndim == 2, "2")) {
        return NULL;
    }
    ct__init_begin();
    return ct__init_end(t, ct_copy_(t, ct_eye(t->sizes[0], t->sizes[1], t->dtype)) != NULL);
}

ct_tensor *ct_init_dirac_(ct_tensor *t, int64_t groups)
{
    const char *op = "ct_init_dirac_";
    if (!ct__init_dims(op, t, t && t->ndim >= 3 && t->ndim <= 5, "3, 4, or 5")) {
        return NULL;
    }
    if (groups <= 0 || t->sizes[0] % groups) {
        ct__fail(CT_ERR_VALUE, op, "dim 0 must be divisible by groups");
        return NULL;
    }
    int64_t per = t->sizes[0] / groups, n = per < t->sizes[1] ? per : t->sizes[1];
    ct__init_begin();
    bool ok = ct_zero_(t) != NULL;
    for (int64_t gi = 0; ok && gi < groups; gi++) {
        for (int64_t d = 0; ok && d < n; d++) {
            ct_tensor *v = ct_select(ct_select(t, 0, gi * per + d), 0, d);
            for (int k = 2; k < t->ndim; k++) {
                v = ct_select(v, 0, t->sizes[k] / 2);
            }
            ok = ct_fill_(v, 1.0) != NULL;
        }
    }
    return ct__init_end(t, ok);
}

ct_tensor *ct_init_orthogonal_(ct_tensor *t, double gain, ct_generator *g)
{
    const char *op = "ct_init_orthogonal_";
    if (!ct__init_dims(op, t, t && t->ndim >= 2, "2 or more")) {
        return NULL;
    }
    if (ct_numel(t) == 0) {
        return t; /* PyTorch warns "Initializing zero-element tensors is a no-op" */
    }
    int64_t rows = t->sizes[0], cols = ct_numel(t) / rows, shape[2] = {rows, cols};
    ct__init_begin();
    ct_tensor *a = ct_normal_(ct_empty(shape, 2, t->dtype), 0.0, 1.0, g), *r = NULL;
    a = rows < cols ? ct_t(a) : a;
    ct_tensor *q = ct_linalg_qr(a, CT_QR_REDUCED, &r);
    q = r ? ct_mul(q, ct_sign(ct_diagonal(r, 0, 0, 1))) : NULL;
    q = rows < cols ? ct_t(q) : q;
    bool ok = q && ct_copy_(ct_view(t, shape, 2), q) && ct_mul_(t, ct__init_scalar(t, gain));
    return ct__init_end(t, ok);
}

ct_tensor *ct_init_sparse_(ct_tensor *t, double sparsity, double std, ct_generator *g)
{
    const char *op = "ct_init_sparse_";
    if (!ct__init_dims(op, t, t && t->ndim == 2, "2")) {
        return NULL;
    }
    int64_t rows = t->sizes[0], zeros = (int64_t)ceil(sparsity * (double)rows);
    ct__init_begin();
    bool ok = ct_normal_(t, 0.0, std, g) != NULL;
    for (int64_t c = 0; ok && c < t->sizes[1]; c++) {
        ct_tensor *idx = ct_narrow(ct_randperm(rows, NULL), 0, 0, zeros);
        ok = ct_index_fill_(ct_select(t, 1, c), 0, idx, 0.0) != NULL;
    }
    return ct__init_end(t, ok);
}
CT__GLUE_END
