/* ops/registry.c - the table of every op descriptor (ct_op_registry). An op is added to the
 * list of its part below; the registry test checks that each one is reached by its public
 * function (tests/test_dispatch.c). */
#include "../core/internal.h"

static const ct_op *const ct__registry[] = {
    /* core/tensor.c */
    &ct__op_empty,
    &ct__op_zeros,
    &ct__op_ones,
    &ct__op_full,
    &ct__op_scalar_tensor,
    &ct__op_empty_like,
    &ct__op_zeros_like,
    &ct__op_ones_like,
    &ct__op_full_like,
    &ct__op_tensor,
    &ct__op_arange,
    &ct__op_linspace,
    &ct__op_eye,
    /* core/rng.c */
    &ct__op_uniform_,
    &ct__op_normal_,
    &ct__op_bernoulli_,
    &ct__op_random_,
    &ct__op_rand,
    &ct__op_randn,
    &ct__op_rand_like,
    &ct__op_randn_like,
    &ct__op_randint,
    &ct__op_randperm,
    /* ops/pointwise.c */
    &ct__op_add,
    &ct__op_sub,
    &ct__op_mul,
    &ct__op_div,
    &ct__op_pow,
    &ct__op_maximum,
    &ct__op_minimum,
    &ct__op_eq,
    &ct__op_ne,
    &ct__op_lt,
    &ct__op_le,
    &ct__op_gt,
    &ct__op_ge,
    &ct__op_logical_and,
    &ct__op_logical_or,
    &ct__op_threshold_backward,
    &ct__op_sigmoid_backward,
    &ct__op_tanh_backward,
    &ct__op_add_,
    &ct__op_sub_,
    &ct__op_mul_,
    &ct__op_div_,
    &ct__op_neg,
    &ct__op_abs,
    &ct__op_relu,
    &ct__op_square,
    &ct__op_sign,
    &ct__op_exp,
    &ct__op_log,
    &ct__op_log1p,
    &ct__op_sqrt,
    &ct__op_rsqrt,
    &ct__op_sin,
    &ct__op_cos,
    &ct__op_sigmoid,
    &ct__op_tanh,
    &ct__op_reciprocal,
    &ct__op_logical_not,
    &ct__op_clamp,
    &ct__op_pow_scalar,
    &ct__op_relu_,
    &ct__op_where,
    &ct__op_fill_,
    &ct__op_copy_,
    &ct__op_clone,
    &ct__op_to_dtype,
    &ct__op_to_device,
    /* ops/pointwise.c (issue 7: pointwise7) */
    &ct__op_erf,
    &ct__op_isnan,
    &ct__op_isinf,
    &ct__op_isfinite,
    &ct__op_neg_,
    &ct__op_abs_,
    &ct__op_exp_,
    &ct__op_log_,
    &ct__op_sqrt_,
    &ct__op_sigmoid_,
    &ct__op_tanh_,
    &ct__op_pow_,
    &ct__op_clamp_,
    &ct__op_addcmul,
    &ct__op_addcmul_,
    &ct__op_addcdiv,
    &ct__op_addcdiv_,
    &ct__op_lerp,
    &ct__op_lerp_scalar,
    &ct__op_lerp_,
    &ct__op_lerp_scalar_,
    &ct__op_div_true,
    &ct__op_div_trunc,
    &ct__op_div_floor,
    &ct__op_bernoulli, /* core/rng.c */
    /* ops/view.c */
    &ct__op_view,
    &ct__op_reshape,
    &ct__op_flatten,
    &ct__op_permute,
    &ct__op_transpose,
    &ct__op_t,
    &ct__op_unsqueeze,
    &ct__op_squeeze,
    &ct__op_squeeze_dim,
    &ct__op_expand,
    &ct__op_narrow,
    &ct__op_slice,
    &ct__op_select,
    &ct__op_contiguous,
    &ct__op_alias,
    &ct__op_select_backward,
    &ct__op_slice_backward,
    &ct__op_cat,
    &ct__op_stack,
    /* ops/view.c (issue 7: view7) */
    &ct__op_view_as,
    &ct__op_reshape_as,
    &ct__op_expand_as,
    &ct__op_unflatten,
    &ct__op_mt,
    &ct__op_broadcast_to,
    &ct__op_tril,
    &ct__op_triu,
    /* ops/index.c */
    &ct__op_gather,
    &ct__op_index_select,
    &ct__op_scatter,
    &ct__op_scatter_,
    &ct__op_scatter_add,
    &ct__op_scatter_add_,
    &ct__op_index_add,
    &ct__op_index_add_,
    &ct__op_masked_fill,
    &ct__op_masked_fill_,
    /* ops/reduce.c */
    &ct__op_sum,
    &ct__op_sum_dim,
    &ct__op_sum_to_size,
    &ct__op_mean,
    &ct__op_mean_dim,
    &ct__op_max,
    &ct__op_min,
    &ct__op_max_dim,
    &ct__op_min_dim,
    &ct__op_argmax,
    &ct__op_argmin,
    /* ops/reduce.c: reduce7 */
    &ct__op_amax,
    &ct__op_amin,
    &ct__op_logsumexp,
    &ct__op_var,
    &ct__op_std,
    &ct__op_all,
    &ct__op_all_dim,
    &ct__op_any,
    &ct__op_any_dim,
    &ct__op_linalg_vector_norm,
    &ct__op_allclose,
    &ct__op_equal,
    /* ops/linalg.c */
    &ct__op_mm,
    &ct__op_addmm,
    &ct__op_linear,
    &ct__op_linear_relu,
    &ct__op_bmm,
    &ct__op_dot,
    &ct__op_mv,
    &ct__op_matmul,
    /* ops/decomp.c */
    &ct__op_linalg_det,
    &ct__op_linalg_slogdet,
    &ct__op_logdet,
    &ct__op_linalg_inv,
    &ct__op_linalg_solve,
    &ct__op_linalg_solve_triangular,
    &ct__op_linalg_cholesky,
    &ct__op_linalg_qr,
    &ct__op_linalg_eigh,
    &ct__op_linalg_eigvalsh,
    &ct__op_linalg_svd,
    &ct__op_linalg_svdvals,
    &ct__op_linalg_matrix_norm,
    &ct__op_linalg_norm,
    &ct__op_linalg_matrix_power,
    /* ops/softmax.c */
    &ct__op_softmax,
    &ct__op_log_softmax,
    &ct__op_softmax_backward,
    &ct__op_log_softmax_backward,
    /* nn/loss.c */
    &ct__op_nll_loss,
    &ct__op_cross_entropy,
    &ct__op_cross_entropy_backward,
    &ct__op_mse_loss,
    /* optim/optim.c */
    &ct__op_fused_sgd_,
    &ct__op_fused_adam_,
    &ct__op_fused_adamw_,
    /* autograd/autograd.c */
    &ct__op_detach,
};

const ct_op *const *ct_op_registry(int *n)
{
    if (n) {
        *n = (int)(sizeof ct__registry / sizeof ct__registry[0]);
    }
    return ct__registry;
}

/* Whether s is name, or name followed by "." and the schema's overload name. */
static bool ct__op_matches(const ct_op *op, const char *s)
{
    size_t n = strlen(op->name);
    if (strncmp(op->name, s, n) != 0) {
        return false;
    }
    if (s[n] == '\0') {
        return true;
    }
    const char *dot = strchr(op->schema, '.'), *paren = strchr(op->schema, '(');
    if (s[n] != '.' || !dot || !paren || dot > paren) {
        return false;
    }
    size_t m = (size_t)(paren - dot - 1);
    return strncmp(s + n + 1, dot + 1, m) == 0 && s[n + 1 + m] == '\0';
}

const ct_op *ct_op_find(const char *name)
{
    if (ct__null("ct_op_find", (const void *)name)) {
        return NULL;
    }
    int n = 0;
    const ct_op *const *ops = ct_op_registry(&n);
    for (int k = 0; k < n; k++) {
        if (ct__op_matches(ops[k], name)) {
            return ops[k];
        }
    }
    return NULL;
}
