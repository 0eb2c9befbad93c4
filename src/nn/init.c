/* nn/init.c - torch.nn.init as torch/nn/init.py writes it: the dispatched ops uniform_, normal_
 * and fill_ under no_grad (so each initializer shows as those ops to hooks and the profiler).
 *
 * The bounds are computed as torch/nn/init.py computes them in Python doubles, one rounding
 * per operation: the one product that feeds a sum (1 + slope^2) is rounded on its own by
 * ct__init_square, so -ffp-contract cannot fuse it and change the bound's last bit.
 */
#include "../core/internal.h"
#include "../core/rng.h"
#include "../ops/pointwise.h"
#include "../autograd/autograd.h"
#include "init.h"

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
