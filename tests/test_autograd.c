/* tests/test_autograd.c - ct_gradcheck of every differentiable op in the public headers
 * (STYLE §9 "Gradients") and the features of the autograd engine (DESIGN §6): explicit and
 * implicit grad_output, accumulation, retain_graph, grad mode, detach, version counters,
 * in-place checks, ct_autograd_grad (with create_graph), retain_grad, hooks, node names,
 * diamonds, deep chains, broadcast and dtype-promoted gradients, and freeing.
 *
 * Inputs are float64 from a seeded generator, shifted away from the points where an op is
 * not smooth (abs/relu/reciprocal away from 0, log/sqrt/pow bases positive).
 */
#include "test.h"

#include <stdint.h>

#define F64 CT_FLOAT64

/* ---- helpers ------------------------------------------------------------------------ */
typedef ct_tensor *(*unary_op)(const ct_tensor *);
typedef ct_tensor *(*binary_op)(const ct_tensor *, const ct_tensor *);

/* Value domains of random inputs. */
enum {
    D_NORMAL = 0, /* standard normal */
    D_POS,        /* uniform in [0.5, 2) */
    D_AWAY,       /* magnitude uniform in [0.2, 2), random sign: away from 0 */
    D_LOG1P       /* uniform in [-0.5, 1.5) */
};

/* A float64 tensor from the domain (no grad). */
static ct_tensor *raw(int dom, const int64_t *s, int nd)
{
    switch (dom) {
    case D_POS:
        return ct_add_scalar(ct_mul_scalar(ct_rand(s, nd, F64, NULL), 1.5), 0.5);
    case D_AWAY: {
        ct_tensor *m = ct_add_scalar(ct_mul_scalar(ct_rand(s, nd, F64, NULL), 1.8), 0.2);
        return ct_where(ct_gt_scalar(ct_randn(s, nd, F64, NULL), 0.0), m, ct_neg(m));
    }
    case D_LOG1P:
        return ct_add_scalar(ct_mul_scalar(ct_rand(s, nd, F64, NULL), 2.0), -0.5);
    default:
        return ct_randn(s, nd, F64, NULL);
    }
}

/* Marks t (a leaf) as requiring grad. */
static ct_tensor *leaf(ct_tensor *t) { return ct_requires_grad_(t, true); }

/* A leaf that requires grad with values from the domain. */
static ct_tensor *rg(int dom, const int64_t *s, int nd) { return leaf(raw(dom, s, nd)); }

/* A float64 tensor from values (no grad). */
static ct_tensor *from(const double *v, const int64_t *s, int nd)
{
    return ct_tensor_from_data(v, F64, s, nd);
}

static ct_tensor *from_i64(const int64_t *v, const int64_t *s, int nd)
{
    return ct_tensor_from_data(v, CT_INT64, s, nd);
}

static void gc_check(const char *file, int line, const char *label, ct_gradcheck_fn fn,
                     ct_tensor *const *in, int n, void *user, const ct_gradcheck_opts *opts)
{
    for (int i = 0; i < n; i++) {
        if (!in[i]) {
            ct_test_fail(file, line, "gradcheck %s: input %d is NULL (%s)", label, i,
                         ct_error() ? ct_error() : "no error");
            ct_error_clear();
            return;
        }
    }
    if (!ct_gradcheck(fn, in, n, user, opts)) {
        ct_test_fail(file, line, "gradcheck %s failed: %s", label,
                     ct_error() ? ct_error() : "(no error set)");
        ct_error_clear();
    } else if (ct_error()) {
        ct_test_fail(file, line, "gradcheck %s passed with an error pending: %s", label,
                     ct_error());
        ct_error_clear();
    }
}

/* CHECK(ct_gradcheck(fn, {inputs...}, user, opts)) with the error printed on failure. */
#define GC(label, fn, user, opts, ...)                                                      \
    do {                                                                                    \
        ct_tensor *gc_in_[] = {__VA_ARGS__};                                                \
        gc_check(__FILE__, __LINE__, label, fn, gc_in_,                                     \
                 (int)(sizeof gc_in_ / sizeof gc_in_[0]), (void *)(user), opts);            \
    } while (0)

/* Checks that a ct_status call succeeded; on failure prints and clears the error so the
   rest of the test runs with a clean state. */
#define CHECK_OK(call)                                                                      \
    do {                                                                                    \
        ct_status st_ = (call);                                                             \
        CHECK_MSG(st_ == CT_OK, "%s failed: %s", #call, ct_error() ? ct_error() : "?");     \
        if (st_ != CT_OK) {                                                                 \
            ct_error_clear();                                                               \
        }                                                                                   \
    } while (0)

/* Checks the name of t's grad_fn. */
#define CHECK_NODE(t, want)                                                                 \
    do {                                                                                    \
        const char *nm_ = ct_node_name(ct_grad_fn(t));                                      \
        CHECK_MSG(nm_ && strcmp(nm_, want) == 0, "grad_fn of %s is %s, want %s", #t,        \
                  nm_ ? nm_ : "NULL", want);                                                \
    } while (0)

static void shape_str(const int64_t *s, int nd, char *buf, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int d = 0; d < nd && k < n; d++) {
        k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)s[d]);
    }
    if (k < n) {
        snprintf(buf + k, n - k, "]");
    }
}

/* ---- gradcheck itself ----------------------------------------------------------------- */
static ct_tensor *gc_detached_square(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_mul(in[0], ct_detach(in[0])); /* autograd sees x * c: gradient x, not 2x */
}

static int gc_calls = 0;
static ct_tensor *gc_nondeterministic(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    gc_calls++;
    return ct_mul_scalar(in[0], (double)gc_calls); /* a different function on every call */
}

static ct_tensor *gc_detached(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_detach(ct_exp(in[0]));
}

static ct_tensor *gc_unary(ct_tensor *const *in, int n, void *user);

typedef struct unary_case {
    const char *name;
    unary_op op;
    int dom;
} unary_case;

static void test_gradcheck_can_fail(void)
{
    ct_scope_begin();
    ct_manual_seed(1);
    int64_t s[1] = {3};
    ct_tensor *x = rg(D_POS, s, 1);
    /* a wrong derivative: autograd gives x, finite differences 2x */
    CHECK(!ct_gradcheck(gc_detached_square, &x, 1, NULL, NULL));
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Jacobian mismatch for output 0 with respect to input 0");
    /* a function that changes between calls */
    gc_calls = 0;
    CHECK(!ct_gradcheck(gc_nondeterministic, &x, 1, NULL, NULL));
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Jacobian mismatch");
    CHECK(gc_calls > 1);
    /* an output without history */
    CHECK(!ct_gradcheck(gc_detached, &x, 1, NULL, NULL));
    CHECK_ERROR(CT_ERR_AUTOGRAD, "does not require grad");
    /* a correct derivative fails under a huge step and tight tolerances, passes by default */
    unary_case exp_case = {"exp", ct_exp, D_NORMAL};
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    CHECK(o.eps == 1e-6 && o.atol == 1e-5 && o.rtol == 1e-3);
    o.eps = 0.5;
    o.atol = 1e-9;
    o.rtol = 1e-9;
    CHECK(!ct_gradcheck(gc_unary, &x, 1, &exp_case, &o));
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Jacobian mismatch");
    CHECK(ct_gradcheck(gc_unary, &x, 1, &exp_case, NULL));
    /* the Jacobian of the wrong function, in numbers: x = 2 -> numerical 4, analytical 2 */
    double two = 2.0;
    ct_tensor *x2 = leaf(from(&two, NULL, 0));
    CHECK(!ct_gradcheck(gc_detached_square, &x2, 1, NULL, NULL));
    CHECK_MSG(ct_error_code() == CT_ERR_AUTOGRAD && ct_error() &&
                  strstr(ct_error(), "analytical:2 at (output 0, input 0)") &&
                  (strstr(ct_error(), "numerical:4") || strstr(ct_error(), "numerical:3.99")),
              "message: %s", ct_error() ? ct_error() : "(none)");
    ct_error_clear();
    /* the inputs are restored after checking */
    CHECK_NEAR(ct_item(x2), 2.0, 0);
    ct_scope_end();
}

/* ---- pointwise ops -------------------------------------------------------------------- */
static ct_tensor *gc_unary(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ((const unary_case *)user)->op(in[0]);
}

static ct_tensor *clamp_both(const ct_tensor *x) { return ct_clamp(x, -0.5, 0.5); }
static ct_tensor *clamp_min(const ct_tensor *x) { return ct_clamp(x, -0.5, INFINITY); }
static ct_tensor *clamp_max(const ct_tensor *x) { return ct_clamp(x, -INFINITY, 0.5); }
static ct_tensor *pow_2_5(const ct_tensor *x) { return ct_pow_scalar(x, 2.5); }
static ct_tensor *pow_3(const ct_tensor *x) { return ct_pow_scalar(x, 3.0); }
static ct_tensor *pow_2(const ct_tensor *x) { return ct_pow_scalar(x, 2.0); }
static ct_tensor *pow_1(const ct_tensor *x) { return ct_pow_scalar(x, 1.0); }
static ct_tensor *pow_0(const ct_tensor *x) { return ct_pow_scalar(x, 0.0); }
static ct_tensor *pow_half(const ct_tensor *x) { return ct_pow_scalar(x, 0.5); }
static ct_tensor *pow_m1_5(const ct_tensor *x) { return ct_pow_scalar(x, -1.5); }
static ct_tensor *pow_m2(const ct_tensor *x) { return ct_pow_scalar(x, -2.0); }
static ct_tensor *add_s(const ct_tensor *x) { return ct_add_scalar(x, 1.5); }
static ct_tensor *sub_s(const ct_tensor *x) { return ct_sub_scalar(x, 0.25); }
static ct_tensor *mul_s(const ct_tensor *x) { return ct_mul_scalar(x, -2.0); }
static ct_tensor *div_s(const ct_tensor *x) { return ct_div_scalar(x, 4.0); }
static ct_tensor *to_f64(const ct_tensor *x) { return ct_to_dtype(x, F64); }
static ct_tensor *to_f32_f64(const ct_tensor *x)
{
    return ct_to_dtype(ct_to_dtype(x, CT_FLOAT32), F64);
}

static unary_case unary_cases[] = {
    {"neg", ct_neg, D_NORMAL},
    {"abs", ct_abs, D_AWAY},
    {"exp", ct_exp, D_NORMAL},
    {"log", ct_log, D_POS},
    {"log1p", ct_log1p, D_LOG1P},
    {"sqrt", ct_sqrt, D_POS},
    {"rsqrt", ct_rsqrt, D_POS},
    {"sin", ct_sin, D_NORMAL},
    {"cos", ct_cos, D_NORMAL},
    {"sigmoid", ct_sigmoid, D_NORMAL},
    {"tanh", ct_tanh, D_NORMAL},
    {"relu", ct_relu, D_AWAY},
    {"square", ct_square, D_NORMAL},
    {"reciprocal", ct_reciprocal, D_AWAY},
    {"clamp(-0.5, 0.5)", clamp_both, D_NORMAL},
    {"clamp(-0.5, inf)", clamp_min, D_NORMAL},
    {"clamp(-inf, 0.5)", clamp_max, D_NORMAL},
    {"pow_scalar(2.5)", pow_2_5, D_POS},
    {"pow_scalar(3)", pow_3, D_NORMAL},
    {"pow_scalar(2)", pow_2, D_NORMAL},
    {"pow_scalar(1)", pow_1, D_NORMAL},
    {"pow_scalar(0)", pow_0, D_POS},
    {"pow_scalar(0.5)", pow_half, D_POS},
    {"pow_scalar(-1.5)", pow_m1_5, D_POS},
    {"pow_scalar(-2)", pow_m2, D_AWAY},
    {"add_scalar", add_s, D_NORMAL},
    {"sub_scalar", sub_s, D_NORMAL},
    {"mul_scalar", mul_s, D_NORMAL},
    {"div_scalar", div_s, D_NORMAL},
    {"clone", ct_clone, D_NORMAL},
    {"to_dtype(float64)", to_f64, D_NORMAL},
};

static void test_gradcheck_unary(void)
{
    ct_scope_begin();
    ct_manual_seed(2);
    int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
    char label[96];
    for (size_t i = 0; i < sizeof unary_cases / sizeof unary_cases[0]; i++) {
        unary_case *c = &unary_cases[i];
        snprintf(label, sizeof label, "%s (2, 3)", c->name);
        GC(label, gc_unary, c, NULL, rg(c->dom, s23, 2));
        snprintf(label, sizeof label, "%s 0-dim", c->name);
        GC(label, gc_unary, c, NULL, rg(c->dom, NULL, 0));
        snprintf(label, sizeof label, "%s non-contiguous", c->name);
        GC(label, gc_unary, c, NULL, leaf(ct_t(raw(c->dom, s32, 2))));
    }
    /* float64 -> float32 -> float64: float32 rounding needs a bigger step and tolerance */
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    o.eps = 1e-3;
    o.atol = 1e-3;
    o.rtol = 1e-2;
    unary_case rt = {"to_dtype(float32) and back", to_f32_f64, D_NORMAL};
    GC(rt.name, gc_unary, &rt, &o, rg(D_NORMAL, s23, 2));
    ct_scope_end();
}

typedef struct binary_case {
    const char *name;
    binary_op op;
    int dom_a, dom_b;
} binary_case;

static ct_tensor *gc_binary(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ((const binary_case *)user)->op(in[0], in[1]);
}

static ct_tensor *add_alpha(const ct_tensor *a, const ct_tensor *b)
{
    return ct_add_alpha(a, b, 2.5);
}

static binary_case binary_cases[] = {
    {"add", ct_add, D_NORMAL, D_NORMAL},
    {"add_alpha", add_alpha, D_NORMAL, D_NORMAL},
    {"sub", ct_sub, D_NORMAL, D_NORMAL},
    {"mul", ct_mul, D_NORMAL, D_NORMAL},
    {"div", ct_div, D_NORMAL, D_AWAY},
    {"pow", ct_pow, D_POS, D_NORMAL},
    {"maximum", ct_maximum, D_NORMAL, D_NORMAL},
    {"minimum", ct_minimum, D_NORMAL, D_NORMAL},
};

typedef struct shape_pair {
    int64_t a[3];
    int na;
    int64_t b[3];
    int nb;
} shape_pair;

static void test_gradcheck_binary(void)
{
    ct_scope_begin();
    ct_manual_seed(3);
    static const shape_pair pairs[] = {
        {{2, 3, 0}, 2, {2, 3, 0}, 2}, /* same shape */
        {{2, 3, 0}, 2, {3, 0, 0}, 1}, /* b broadcast */
        {{3, 0, 0}, 1, {2, 3, 0}, 2}, /* a broadcast */
        {{3, 1, 0}, 2, {1, 4, 0}, 2}, /* both broadcast */
        {{2, 1, 3}, 3, {4, 1, 0}, 2}, /* both, different ranks */
        {{0, 0, 0}, 0, {2, 3, 0}, 2}, /* 0-dim and tensor */
        {{2, 3, 0}, 2, {0, 0, 0}, 0}, /* tensor and 0-dim */
    };
    char label[128], sa[32], sb[32];
    for (size_t i = 0; i < sizeof binary_cases / sizeof binary_cases[0]; i++) {
        binary_case *c = &binary_cases[i];
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
            const shape_pair *sp = &pairs[p];
            shape_str(sp->a, sp->na, sa, sizeof sa);
            shape_str(sp->b, sp->nb, sb, sizeof sb);
            snprintf(label, sizeof label, "%s %s %s", c->name, sa, sb);
            GC(label, gc_binary, c, NULL, rg(c->dom_a, sp->a, sp->na),
               rg(c->dom_b, sp->b, sp->nb));
        }
        /* only one input requires grad; the other is a tensor without grad */
        int64_t s23[2] = {2, 3}, s3[1] = {3};
        snprintf(label, sizeof label, "%s, b without grad", c->name);
        GC(label, gc_binary, c, NULL, rg(c->dom_a, s23, 2), raw(c->dom_b, s3, 1));
        snprintf(label, sizeof label, "%s, a without grad", c->name);
        GC(label, gc_binary, c, NULL, raw(c->dom_a, s3, 1), rg(c->dom_b, s23, 2));
        /* non-contiguous operands */
        int64_t s32[2] = {3, 2};
        snprintf(label, sizeof label, "%s non-contiguous", c->name);
        GC(label, gc_binary, c, NULL, leaf(ct_t(raw(c->dom_a, s32, 2))),
           leaf(ct_t(raw(c->dom_b, s32, 2))));
    }
    ct_scope_end();
}

static ct_tensor *gc_where(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_where(in[0], in[1], in[2]);
}

static void test_gradcheck_where(void)
{
    ct_scope_begin();
    ct_manual_seed(4);
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s21[2] = {2, 1};
    ct_tensor *cond = ct_gt_scalar(ct_randn(s23, 2, F64, NULL), 0.0);
    GC("where same shape", gc_where, NULL, NULL, cond, rg(D_NORMAL, s23, 2),
       rg(D_NORMAL, s23, 2));
    GC("where broadcast", gc_where, NULL, NULL, cond, rg(D_NORMAL, s21, 2),
       rg(D_NORMAL, s3, 1));
    GC("where 0-dim other", gc_where, NULL, NULL, cond, rg(D_NORMAL, s23, 2),
       rg(D_NORMAL, NULL, 0));
    GC("where broadcast cond", gc_where, NULL, NULL, ct_gt_scalar(ct_randn(s3, 1, F64, NULL), 0.0),
       rg(D_NORMAL, s21, 2), raw(D_NORMAL, s23, 2));
    ct_scope_end();
}

/* ---- views and shape ops -------------------------------------------------------------- */
typedef struct view_case {
    const char *name;
    unary_op op;
    int64_t in[4];
    int nd;
} view_case;

static ct_tensor *v_view(const ct_tensor *x)
{
    int64_t s[2] = {6, 4};
    return ct_view(x, s, 2);
}
static ct_tensor *v_view_infer(const ct_tensor *x)
{
    int64_t s[3] = {3, -1, 2};
    return ct_view(x, s, 3);
}
static ct_tensor *v_reshape(const ct_tensor *x)
{
    int64_t s[2] = {4, 6};
    return ct_reshape(x, s, 2);
}
static ct_tensor *v_reshape_copy(const ct_tensor *x)
{
    int64_t s[1] = {24};
    return ct_reshape(ct_transpose(x, 0, 2), s, 1); /* not viewable: a copy */
}
static ct_tensor *v_flatten(const ct_tensor *x) { return ct_flatten(x, 1, 2); }
static ct_tensor *v_flatten_all(const ct_tensor *x) { return ct_flatten(x, 0, -1); }
static ct_tensor *v_permute(const ct_tensor *x)
{
    int64_t p[3] = {2, 0, 1};
    return ct_permute(x, p, 3);
}
static ct_tensor *v_transpose(const ct_tensor *x) { return ct_transpose(x, 0, 2); }
static ct_tensor *v_transpose_neg(const ct_tensor *x) { return ct_transpose(x, -1, -2); }
static ct_tensor *v_t(const ct_tensor *x) { return ct_t(x); }
static ct_tensor *v_unsqueeze(const ct_tensor *x) { return ct_unsqueeze(x, 1); }
static ct_tensor *v_unsqueeze_end(const ct_tensor *x) { return ct_unsqueeze(x, -1); }
static ct_tensor *v_squeeze(const ct_tensor *x) { return ct_squeeze(x); }
static ct_tensor *v_squeeze_dim(const ct_tensor *x) { return ct_squeeze_dim(x, 1); }
static ct_tensor *v_squeeze_dim_noop(const ct_tensor *x) { return ct_squeeze_dim(x, 0); }
static ct_tensor *v_expand(const ct_tensor *x)
{
    int64_t s[3] = {2, 3, 4};
    return ct_expand(x, s, 3);
}
static ct_tensor *v_expand_keep(const ct_tensor *x)
{
    int64_t s[3] = {2, -1, 4};
    return ct_expand(x, s, 3);
}
static ct_tensor *v_narrow(const ct_tensor *x) { return ct_narrow(x, 1, 1, 2); }
static ct_tensor *v_narrow_last(const ct_tensor *x) { return ct_narrow(x, -1, 0, 3); }
static ct_tensor *v_select(const ct_tensor *x) { return ct_select(x, 2, 3); }
static ct_tensor *v_select0(const ct_tensor *x) { return ct_select(x, 0, 1); }
static ct_tensor *v_contiguous(const ct_tensor *x) { return ct_contiguous(ct_transpose(x, 0, 1)); }
static ct_tensor *v_alias(const ct_tensor *x) { return ct_alias(x); }
static view_case view_cases[] = {
    {"view", v_view, {2, 3, 4, 0}, 3},
    {"view -1", v_view_infer, {2, 3, 4, 0}, 3},
    {"reshape", v_reshape, {2, 3, 4, 0}, 3},
    {"reshape (copy)", v_reshape_copy, {2, 3, 4, 0}, 3},
    {"flatten(1, 2)", v_flatten, {2, 3, 4, 0}, 3},
    {"flatten(0, -1)", v_flatten_all, {2, 3, 4, 0}, 3},
    {"permute", v_permute, {2, 3, 4, 0}, 3},
    {"transpose(0, 2)", v_transpose, {2, 3, 4, 0}, 3},
    {"transpose(-1, -2)", v_transpose_neg, {2, 3, 4, 0}, 3},
    {"t 2-D", v_t, {2, 3, 0, 0}, 2},
    {"t 1-D", v_t, {3, 0, 0, 0}, 1},
    {"unsqueeze(1)", v_unsqueeze, {2, 3, 0, 0}, 2},
    {"unsqueeze(-1)", v_unsqueeze_end, {2, 3, 0, 0}, 2},
    {"squeeze", v_squeeze, {2, 1, 3, 1}, 4},
    {"squeeze_dim(1)", v_squeeze_dim, {2, 1, 3, 0}, 3},
    {"squeeze_dim(0) of size 2", v_squeeze_dim_noop, {2, 1, 3, 0}, 3},
    {"expand (3, 1)", v_expand, {3, 1, 0, 0}, 2},
    {"expand (1, 3, 1) with -1", v_expand_keep, {1, 3, 1, 0}, 3},
    {"narrow", v_narrow, {2, 3, 4, 0}, 3},
    {"narrow(-1)", v_narrow_last, {2, 3, 4, 0}, 3},
    {"select(2, 3)", v_select, {2, 3, 4, 0}, 3},
    {"select(0, 1)", v_select0, {2, 3, 4, 0}, 3},
    {"contiguous", v_contiguous, {2, 3, 4, 0}, 3},
    {"alias", v_alias, {2, 3, 4, 0}, 3},
};

static ct_tensor *gc_view(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    /* multiply by a fixed ramp so every output element has its own weight */
    ct_tensor *y = ((const view_case *)user)->op(in[0]);
    return y ? ct_mul(y, ct_add_scalar(ct_reshape(ct_arange(0, (double)ct_numel(y), 1, F64),
                                                  ct_sizes(y), ct_dim(y)),
                                       1.0))
             : NULL;
}

typedef struct cat_case {
    int64_t dim;
    bool stack;
} cat_case;

static ct_tensor *gc_cat(ct_tensor *const *in, int n, void *user)
{
    const cat_case *c = (const cat_case *)user;
    const ct_tensor *ts[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < n && i < 4; i++) {
        ts[i] = in[i];
    }
    return c->stack ? ct_stack(ts, n, c->dim) : ct_cat(ts, n, c->dim);
}

static void test_gradcheck_views(void)
{
    ct_scope_begin();
    ct_manual_seed(5);
    char label[96];
    for (size_t i = 0; i < sizeof view_cases / sizeof view_cases[0]; i++) {
        view_case *c = &view_cases[i];
        GC(c->name, gc_view, c, NULL, rg(D_NORMAL, c->in, c->nd));
        snprintf(label, sizeof label, "%s of a non-contiguous input", c->name);
        if (c->nd >= 2 && c->op != v_view && c->op != v_view_infer) { /* view needs strides */
            ct_tensor *x = ct_transpose(ct_contiguous(ct_transpose(raw(D_NORMAL, c->in, c->nd),
                                                                   0, 1)),
                                        0, 1);
            GC(label, gc_view, c, NULL, leaf(x));
        }
    }
    /* cat along dims 1, 0 and -1, one input without grad */
    int64_t a[2] = {2, 3}, b[2] = {2, 1}, c2[2] = {2, 2}, d[2] = {1, 3};
    cat_case cat1 = {1, false}, cat0 = {0, false}, catm1 = {-1, false};
    GC("cat dim 1", gc_cat, &cat1, NULL, rg(D_NORMAL, a, 2), rg(D_NORMAL, b, 2),
       rg(D_NORMAL, c2, 2));
    GC("cat dim -1, one without grad", gc_cat, &catm1, NULL, rg(D_NORMAL, a, 2),
       raw(D_NORMAL, b, 2), rg(D_NORMAL, c2, 2));
    GC("cat dim 0", gc_cat, &cat0, NULL, rg(D_NORMAL, a, 2), rg(D_NORMAL, d, 2));
    GC("cat of one", gc_cat, &cat0, NULL, rg(D_NORMAL, a, 2));
    /* stack along a new first, middle and last dim */
    cat_case st0 = {0, true}, st1 = {1, true}, stm1 = {-1, true};
    GC("stack dim 0", gc_cat, &st0, NULL, rg(D_NORMAL, a, 2), rg(D_NORMAL, a, 2),
       rg(D_NORMAL, a, 2));
    GC("stack dim 1", gc_cat, &st1, NULL, rg(D_NORMAL, a, 2), raw(D_NORMAL, a, 2));
    GC("stack dim -1", gc_cat, &stm1, NULL, rg(D_NORMAL, a, 2), rg(D_NORMAL, a, 2));
    ct_scope_end();
}

/* ---- reductions ----------------------------------------------------------------------- */
static ct_tensor *r_sum(const ct_tensor *x) { return ct_sum(x); }
static ct_tensor *r_sum_dim(const ct_tensor *x) { return ct_sum_dim(x, 1, false); }
static ct_tensor *r_sum_dim_keep(const ct_tensor *x) { return ct_sum_dim(x, -1, true); }
static ct_tensor *r_sum_dims(const ct_tensor *x)
{
    int64_t d[2] = {0, 2};
    return ct_sum_dims(x, d, 2, false);
}
static ct_tensor *r_sum_dims_keep(const ct_tensor *x)
{
    int64_t d[2] = {-1, 1};
    return ct_sum_dims(x, d, 2, true);
}
static ct_tensor *r_sum_to_size(const ct_tensor *x)
{
    int64_t s[3] = {1, 3, 1};
    return ct_sum_to_size(x, s, 3);
}
static ct_tensor *r_sum_to_size_rank(const ct_tensor *x)
{
    int64_t s[2] = {3, 1};
    return ct_sum_to_size(x, s, 2);
}
static ct_tensor *r_mean(const ct_tensor *x) { return ct_mean(x); }
static ct_tensor *r_mean_dim(const ct_tensor *x) { return ct_mean_dim(x, 1, true); }
static ct_tensor *r_mean_dim0(const ct_tensor *x) { return ct_mean_dim(x, 0, false); }
static ct_tensor *r_max(const ct_tensor *x) { return ct_max(x); }
static ct_tensor *r_min(const ct_tensor *x) { return ct_min(x); }
static ct_tensor *r_max_dim(const ct_tensor *x)
{
    ct_tensor *v = NULL;
    ct_max_dim(x, 1, false, &v, NULL);
    return v;
}
static ct_tensor *r_max_dim_keep(const ct_tensor *x)
{
    ct_tensor *v = NULL, *ix = NULL;
    ct_max_dim(x, -1, true, &v, &ix);
    return v;
}
static ct_tensor *r_min_dim(const ct_tensor *x)
{
    ct_tensor *v = NULL;
    ct_min_dim(x, 0, false, &v, NULL);
    return v;
}
static ct_tensor *r_min_dim_keep(const ct_tensor *x)
{
    ct_tensor *v = NULL;
    ct_min_dim(x, 2, true, &v, NULL);
    return v;
}

static unary_case reduce_cases[] = {
    {"sum", r_sum, D_NORMAL},
    {"sum_dim(1)", r_sum_dim, D_NORMAL},
    {"sum_dim(-1, keepdim)", r_sum_dim_keep, D_NORMAL},
    {"sum_dims(0, 2)", r_sum_dims, D_NORMAL},
    {"sum_dims(-1, 1, keepdim)", r_sum_dims_keep, D_NORMAL},
    {"sum_to_size(1, 3, 1)", r_sum_to_size, D_NORMAL},
    {"sum_to_size(3, 1)", r_sum_to_size_rank, D_NORMAL},
    {"mean", r_mean, D_NORMAL},
    {"mean_dim(1, keepdim)", r_mean_dim, D_NORMAL},
    {"mean_dim(0)", r_mean_dim0, D_NORMAL},
    {"max", r_max, D_NORMAL},
    {"min", r_min, D_NORMAL},
    {"max_dim(1)", r_max_dim, D_NORMAL},
    {"max_dim(-1, keepdim)", r_max_dim_keep, D_NORMAL},
    {"min_dim(0)", r_min_dim, D_NORMAL},
    {"min_dim(2, keepdim)", r_min_dim_keep, D_NORMAL},
};

static void test_gradcheck_reductions(void)
{
    ct_scope_begin();
    ct_manual_seed(6);
    int64_t s[3] = {2, 3, 4}, s43[2] = {4, 3};
    char label[96];
    for (size_t i = 0; i < sizeof reduce_cases / sizeof reduce_cases[0]; i++) {
        unary_case *c = &reduce_cases[i];
        GC(c->name, gc_unary, c, NULL, rg(c->dom, s, 3));
        snprintf(label, sizeof label, "%s of a non-contiguous input", c->name);
        int64_t p[3] = {2, 0, 1}; /* (3, 4, 2) permuted to (2, 3, 4) */
        int64_t s342[3] = {3, 4, 2};
        GC(label, gc_unary, c, NULL, leaf(ct_permute(raw(c->dom, s342, 3), p, 3)));
    }
    unary_case sum = {"sum 0-dim", r_sum, D_NORMAL}, mean = {"mean 2-D", r_mean, D_NORMAL};
    GC(sum.name, gc_unary, &sum, NULL, rg(D_NORMAL, NULL, 0));
    GC(mean.name, gc_unary, &mean, NULL, rg(D_NORMAL, s43, 2));
    ct_scope_end();
}

/* max/min at ties: the full reduction splits the gradient evenly, the dim forms give it to
   the first occurrence; maximum/minimum split it in half. */
static void test_max_min_ties(void)
{
    ct_scope_begin();
    double v[6] = {1, 3, 3, 2, -1, -1};
    int64_t s6[1] = {6}, s23[2] = {2, 3};
    ct_tensor *x = leaf(from(v, s6, 1));
    CHECK_OK(ct_backward(ct_max(x), NULL, false));
    double want_max[6] = {0, 0.5, 0.5, 0, 0, 0};
    CHECK_TENSOR(ct_grad(x), want_max, 6, 0, 1e-15);
    ct_set_grad(x, NULL);
    CHECK_OK(ct_backward(ct_min(x), NULL, false));
    double want_min[6] = {0, 0, 0, 0, 0.5, 0.5};
    CHECK_TENSOR(ct_grad(x), want_min, 6, 0, 1e-15);

    ct_tensor *m = leaf(from(v, s23, 2)); /* [[1, 3, 3], [2, -1, -1]] */
    ct_tensor *vals = NULL, *idx = NULL;
    CHECK_OK(ct_max_dim(m, 1, false, &vals, &idx));
    CHECK(idx && ct_item_int64(ct_select(idx, 0, 0)) == 1);
    CHECK_OK(ct_backward(ct_sum(vals), NULL, false));
    double want_md[6] = {0, 1, 0, 1, 0, 0};
    CHECK_TENSOR(ct_grad(m), want_md, 6, 0, 0);
    ct_set_grad(m, NULL);
    CHECK_OK(ct_min_dim(m, 1, false, &vals, NULL));
    CHECK_OK(ct_backward(ct_sum(vals), NULL, false));
    double want_mn[6] = {1, 0, 0, 0, 1, 0};
    CHECK_TENSOR(ct_grad(m), want_mn, 6, 0, 0);

    double av[3] = {1, 2, 3}, bv[3] = {1, 5, 0};
    int64_t s3[1] = {3};
    ct_tensor *a = leaf(from(av, s3, 1)), *b = leaf(from(bv, s3, 1));
    CHECK_OK(ct_backward(ct_sum(ct_maximum(a, b)), NULL, false));
    double ga[3] = {0.5, 0, 1}, gb[3] = {0.5, 1, 0};
    CHECK_TENSOR(ct_grad(a), ga, 3, 0, 0);
    CHECK_TENSOR(ct_grad(b), gb, 3, 0, 0);
    ct_set_grad(a, NULL);
    ct_set_grad(b, NULL);
    CHECK_OK(ct_backward(ct_sum(ct_minimum(a, b)), NULL, false));
    double ga2[3] = {0.5, 1, 0}, gb2[3] = {0.5, 0, 1};
    CHECK_TENSOR(ct_grad(a), ga2, 3, 0, 0);
    CHECK_TENSOR(ct_grad(b), gb2, 3, 0, 0);
    /* abs and relu have gradient 0 at 0; clamp passes it at the bounds */
    double zv[4] = {0, -2, 0.5, -0.5};
    int64_t s4[1] = {4};
    ct_tensor *z = leaf(from(zv, s4, 1));
    double zabs[4] = {0, 2, 0.5, 0.5};
    CHECK_TENSOR(ct_abs(z), zabs, 4, 0, 0);
    CHECK_OK(ct_backward(ct_sum(ct_abs(z)), NULL, false));
    double gabs[4] = {0, -1, 1, -1};
    CHECK_TENSOR(ct_grad(z), gabs, 4, 0, 0);
    ct_set_grad(z, NULL);
    CHECK_OK(ct_backward(ct_sum(ct_relu(z)), NULL, false));
    double grelu[4] = {0, 0, 1, 0};
    CHECK_TENSOR(ct_grad(z), grelu, 4, 0, 0);
    ct_set_grad(z, NULL);
    CHECK_OK(ct_backward(ct_sum(ct_clamp(z, -2, 0.5)), NULL, false));
    double gcl[4] = {1, 1, 1, 1};
    CHECK_TENSOR(ct_grad(z), gcl, 4, 0, 0);
    ct_scope_end();
}

/* ---- matrix products ------------------------------------------------------------------ */
typedef struct mm_case {
    const char *name;
    binary_op op;
    int64_t a[4];
    int na;
    int64_t b[4];
    int nb;
} mm_case;

static mm_case mm_cases[] = {
    {"matmul 1-D @ 1-D", ct_matmul, {3}, 1, {3}, 1},
    {"matmul 2-D @ 1-D", ct_matmul, {2, 3}, 2, {3}, 1},
    {"matmul 1-D @ 2-D", ct_matmul, {3}, 1, {3, 2}, 2},
    {"matmul 2-D @ 2-D", ct_matmul, {2, 3}, 2, {3, 4}, 2},
    {"matmul batched broadcast", ct_matmul, {2, 1, 2, 3}, 4, {3, 3, 2}, 3},
    {"matmul 3-D @ 3-D", ct_matmul, {2, 2, 3}, 3, {2, 3, 2}, 3},
    {"matmul N-D @ 2-D", ct_matmul, {2, 3, 4}, 3, {4, 2}, 2},
    {"matmul 2-D @ N-D", ct_matmul, {2, 3}, 2, {2, 3, 4}, 3},
    {"matmul 1-D @ 3-D", ct_matmul, {3}, 1, {2, 3, 4}, 3},
    {"matmul 3-D @ 1-D", ct_matmul, {2, 3, 4}, 3, {4}, 1},
    {"mm", ct_mm, {2, 3}, 2, {3, 4}, 2},
    {"bmm", ct_bmm, {2, 2, 3}, 3, {2, 3, 4}, 3},
    {"mv", ct_mv, {2, 3}, 2, {3}, 1},
    {"dot", ct_dot, {4}, 1, {4}, 1},
};

static ct_tensor *gc_addmm(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const double *ba = (const double *)user;
    return ct_addmm(in[0], in[1], in[2], ba[0], ba[1]);
}

static ct_tensor *gc_linear(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    return ct_linear(in[0], in[1], n > 2 ? in[2] : NULL);
}

static void test_gradcheck_matmul(void)
{
    ct_scope_begin();
    ct_manual_seed(7);
    char label[96];
    for (size_t i = 0; i < sizeof mm_cases / sizeof mm_cases[0]; i++) {
        mm_case *c = &mm_cases[i];
        binary_case bc = {c->name, c->op, D_NORMAL, D_NORMAL};
        GC(c->name, gc_binary, &bc, NULL, rg(D_NORMAL, c->a, c->na), rg(D_NORMAL, c->b, c->nb));
        snprintf(label, sizeof label, "%s, only b requires grad", c->name);
        GC(label, gc_binary, &bc, NULL, raw(D_NORMAL, c->a, c->na), rg(D_NORMAL, c->b, c->nb));
        if (c->na == 2 && c->nb == 2) { /* transposed (non-contiguous) operands */
            int64_t at[2] = {c->a[1], c->a[0]}, bt[2] = {c->b[1], c->b[0]};
            snprintf(label, sizeof label, "%s of transposed operands", c->name);
            GC(label, gc_binary, &bc, NULL, leaf(ct_t(raw(D_NORMAL, at, 2))),
               leaf(ct_t(raw(D_NORMAL, bt, 2))));
        }
    }
    /* addmm: input broadcast from (4) and (1, 4), or full (2, 4); beta and alpha */
    int64_t s4[1] = {4}, s14[2] = {1, 4}, s24[2] = {2, 4}, s23[2] = {2, 3}, s34[2] = {3, 4};
    double ba[2] = {0.5, 2.0}, ones[2] = {1.0, 1.0}, zero_beta[2] = {0.0, -1.5};
    GC("addmm (4) beta 0.5 alpha 2", gc_addmm, ba, NULL, rg(D_NORMAL, s4, 1),
       rg(D_NORMAL, s23, 2), rg(D_NORMAL, s34, 2));
    GC("addmm (1, 4)", gc_addmm, ones, NULL, rg(D_NORMAL, s14, 2), rg(D_NORMAL, s23, 2),
       rg(D_NORMAL, s34, 2));
    GC("addmm (2, 4) beta 0 alpha -1.5", gc_addmm, zero_beta, NULL, rg(D_NORMAL, s24, 2),
       rg(D_NORMAL, s23, 2), rg(D_NORMAL, s34, 2));
    GC("addmm, only mat2 requires grad", gc_addmm, ba, NULL, raw(D_NORMAL, s24, 2),
       raw(D_NORMAL, s23, 2), rg(D_NORMAL, s34, 2));
    /* linear: with and without bias, 1-D, 2-D and 3-D input */
    int64_t x3[3] = {2, 3, 4}, x2[2] = {3, 4}, x1[1] = {4}, w[2] = {5, 4}, bias[1] = {5};
    GC("linear 3-D with bias", gc_linear, NULL, NULL, rg(D_NORMAL, x3, 3), rg(D_NORMAL, w, 2),
       rg(D_NORMAL, bias, 1));
    GC("linear 3-D without bias", gc_linear, NULL, NULL, rg(D_NORMAL, x3, 3),
       rg(D_NORMAL, w, 2));
    GC("linear 2-D with bias", gc_linear, NULL, NULL, rg(D_NORMAL, x2, 2), rg(D_NORMAL, w, 2),
       rg(D_NORMAL, bias, 1));
    GC("linear 2-D without bias", gc_linear, NULL, NULL, rg(D_NORMAL, x2, 2), rg(D_NORMAL, w, 2));
    GC("linear 1-D with bias", gc_linear, NULL, NULL, rg(D_NORMAL, x1, 1), rg(D_NORMAL, w, 2),
       rg(D_NORMAL, bias, 1));
    GC("linear, input without grad", gc_linear, NULL, NULL, raw(D_NORMAL, x3, 3),
       rg(D_NORMAL, w, 2), rg(D_NORMAL, bias, 1));
    ct_scope_end();
}

/* Sequential(Linear, ReLU) runs one fused op (its own backward). Its parameters are float32
   (ct_linear_new), so the gradcheck runs in float32 on the module's own tensors, perturbed
   in place: the function is piecewise linear, so central differences are exact up to float32
   rounding (eps 1e-3: about 3e-5) away from ReLU's kink, and a wrong formula is off by O(1).
   The fused forward and gradients must also equal ct_relu(ct_linear(...))'s bit for bit. */
static ct_tensor *gc_module(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    return ct_module_forward((ct_module *)user, in[0]);
}

static bool same_bits(const ct_tensor *a, const ct_tensor *b)
{
    return a && b && ct_nbytes(a) == ct_nbytes(b) && ct_is_contiguous(a) && ct_is_contiguous(b) &&
           memcmp(ct_data_ptr(a), ct_data_ptr(b), ct_nbytes(a)) == 0;
}

static void test_gradcheck_linear_relu_fused(void)
{
    ct_scope_begin();
    ct_manual_seed(11);
    ct_module *seq = ct_sequential_new(), *lin = ct_linear_new(4, 5, true);
    ct_sequential_append(seq, lin);
    ct_sequential_append(seq, ct_relu_new());
    ct_tensor *w = ct_module_get_parameter(lin, "weight");
    ct_tensor *b = ct_module_get_parameter(lin, "bias");
    int64_t xs[2] = {3, 4};
    ct_tensor *x = leaf(ct_randn(xs, 2, CT_FLOAT32, NULL));
    ct_gradcheck_opts o = ct_gradcheck_defaults();
    o.eps = 1e-3;
    o.atol = 1e-3;
    o.rtol = 1e-3;
    GC("Sequential(Linear, ReLU), fused", gc_module, seq, &o, x, w, b);
    /* both sides of the kink are exercised */
    ct_tensor *y = ct_module_forward(seq, x);
    CHECK(ct_item(ct_sum(ct_eq_scalar(y, 0.0))) >= 2);
    CHECK(ct_item(ct_sum(ct_gt_scalar(y, 0.0))) >= 2);
    /* the same bits as the unfused ops, forward and backward */
    ct_tensor *ref = ct_relu(ct_linear(x, w, b));
    CHECK(same_bits(y, ref));
    ct_tensor *in[3] = {x, w, b}, *g1[3] = {NULL}, *g2[3] = {NULL};
    ct_tensor *ys = ct_sum(ct_mul(y, y)), *refs = ct_sum(ct_mul(ref, ref));
    CHECK_OK(ct_autograd_grad(&ys, 1, in, 3, NULL, false, false, false, g1));
    CHECK_OK(ct_autograd_grad(&refs, 1, in, 3, NULL, false, false, false, g2));
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(same_bits(g1[i], g2[i]), "gradient %d of the fused op differs", i);
    }
    ct_module_free(seq);
    ct_scope_end();
}

/* ---- softmax and losses --------------------------------------------------------------- */
static ct_tensor *sm0(const ct_tensor *x) { return ct_softmax(x, 0); }
static ct_tensor *sm1(const ct_tensor *x) { return ct_softmax(x, 1); }
static ct_tensor *smm1(const ct_tensor *x) { return ct_softmax(x, -1); }
static ct_tensor *lsm0(const ct_tensor *x) { return ct_log_softmax(x, 0); }
static ct_tensor *lsm1(const ct_tensor *x) { return ct_log_softmax(x, 1); }
static ct_tensor *lsmm1(const ct_tensor *x) { return ct_log_softmax(x, -1); }

static void test_gradcheck_softmax(void)
{
    ct_scope_begin();
    ct_manual_seed(8);
    static unary_case cases[] = {
        {"softmax(0)", sm0, D_NORMAL},    {"softmax(1)", sm1, D_NORMAL},
        {"softmax(-1)", smm1, D_NORMAL},  {"log_softmax(0)", lsm0, D_NORMAL},
        {"log_softmax(1)", lsm1, D_NORMAL}, {"log_softmax(-1)", lsmm1, D_NORMAL},
    };
    int64_t s[3] = {2, 3, 4}, s1[1] = {5}, s342[3] = {3, 4, 2};
    int64_t p[3] = {2, 0, 1};
    char label[96];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        GC(cases[i].name, gc_unary, &cases[i], NULL, rg(D_NORMAL, s, 3));
        snprintf(label, sizeof label, "%s non-contiguous", cases[i].name);
        GC(label, gc_unary, &cases[i], NULL, leaf(ct_permute(raw(D_NORMAL, s342, 3), p, 3)));
    }
    unary_case v0 = {"softmax 1-D", sm0, D_NORMAL}, v1 = {"log_softmax 1-D", lsmm1, D_NORMAL};
    GC(v0.name, gc_unary, &v0, NULL, rg(D_NORMAL, s1, 1));
    GC(v1.name, gc_unary, &v1, NULL, rg(D_NORMAL, s1, 1));
    /* large logits stay stable */
    double big[3] = {1000, 1001, 999};
    int64_t s3[1] = {3};
    GC("log_softmax of large logits", gc_unary, &v1, NULL, leaf(from(big, s3, 1)));
    ct_scope_end();
}

typedef struct loss_case {
    const char *name;
    int kind; /* 0 nll_loss, 1 cross_entropy, 2 mse_loss */
    ct_nll_loss_opts o;
    ct_reduction red;
} loss_case;

static ct_tensor *gc_loss(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const loss_case *c = (const loss_case *)user;
    switch (c->kind) {
    case 0:
        return ct_nll_loss(in[0], in[1], &c->o);
    case 1:
        return ct_cross_entropy(in[0], in[1], &c->o);
    default:
        return ct_mse_loss(in[0], in[1], c->red);
    }
}

static void test_gradcheck_losses(void)
{
    ct_scope_begin();
    ct_manual_seed(9);
    int64_t s34[2] = {3, 4}, s3[1] = {3}, s4[1] = {4};
    int64_t tv[3] = {0, 3, 1}, tign[3] = {2, -100, 1}, t1[3] = {1, 1, 3};
    double wv[4] = {0.5, 2.0, 1.0, 3.0};
    ct_tensor *target = from_i64(tv, s3, 1), *target_ign = from_i64(tign, s3, 1);
    ct_tensor *target_one = from_i64(t1, s3, 1), *weight = from(wv, s4, 1);
    int64_t c0 = 2;
    ct_tensor *target0 = from_i64(&c0, NULL, 0);
    ct_nll_loss_opts d = ct_nll_loss_defaults();
    CHECK(d.weight == NULL && d.ignore_index == -100 && d.reduction == CT_REDUCTION_MEAN);
    static const ct_reduction reds[4] = {CT_REDUCTION_DEFAULT, CT_REDUCTION_MEAN,
                                         CT_REDUCTION_SUM, CT_REDUCTION_NONE};
    static const char *red_names[4] = {"default", "mean", "sum", "none"};
    char label[128];
    for (int kind = 0; kind < 2; kind++) {
        const char *op = kind ? "cross_entropy" : "nll_loss";
        for (int r = 0; r < 4; r++) {
            loss_case c;
            c.kind = kind;
            c.o = d;
            c.o.reduction = reds[r];
            c.red = reds[r];
            c.name = op;
            snprintf(label, sizeof label, "%s %s", op, red_names[r]);
            GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), target);
            c.o.weight = weight;
            snprintf(label, sizeof label, "%s %s weighted", op, red_names[r]);
            GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), target);
            snprintf(label, sizeof label, "%s %s weighted, default ignore_index", op,
                     red_names[r]);
            GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), target_ign);
            c.o.ignore_index = 1;
            snprintf(label, sizeof label, "%s %s weighted, ignore_index 1", op, red_names[r]);
            GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), target_one);
            c.o.weight = NULL;
            snprintf(label, sizeof label, "%s %s, ignore_index 1", op, red_names[r]);
            GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), target);
            c.o.ignore_index = -100;
            snprintf(label, sizeof label, "%s %s, 1-D input", op, red_names[r]);
            GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s4, 1), target0);
        }
        loss_case c;
        c.kind = kind;
        c.o = d;
        c.red = CT_REDUCTION_MEAN;
        c.name = op;
        snprintf(label, sizeof label, "%s of a non-contiguous input", op);
        int64_t s43[2] = {4, 3};
        GC(label, gc_loss, &c, NULL, leaf(ct_t(raw(D_NORMAL, s43, 2))), target);
    }
    /* mse_loss: both sides differentiable, target broadcast */
    for (int r = 0; r < 4; r++) {
        loss_case c;
        c.kind = 2;
        c.o = d;
        c.red = reds[r];
        c.name = "mse_loss";
        snprintf(label, sizeof label, "mse_loss %s", red_names[r]);
        GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), rg(D_NORMAL, s34, 2));
        snprintf(label, sizeof label, "mse_loss %s, target without grad", red_names[r]);
        GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), raw(D_NORMAL, s34, 2));
        snprintf(label, sizeof label, "mse_loss %s, broadcast target", red_names[r]);
        GC(label, gc_loss, &c, NULL, rg(D_NORMAL, s34, 2), rg(D_NORMAL, s4, 1));
    }
    ct_scope_end();
}

/* ---- in-place ops on non-leaf tensors -------------------------------------------------- */
static ct_tensor *ip_add(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_mul_scalar(in[0], 1.5);
    ct_add_(y, in[1], 0.7);
    return y;
}
static ct_tensor *ip_sub(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_sin(in[0]); /* sin saves its input, not its result */
    ct_sub_(y, in[1], -2.0);
    return ct_mul(y, y); /* uses the result after the in-place op */
}
static ct_tensor *ip_mul(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_sin(in[0]);
    ct_mul_(y, in[1]);
    return y;
}
static ct_tensor *ip_div(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_mul_scalar(in[0], 2.0);
    ct_div_(y, in[1]);
    return ct_sum_dim(y, 0, false);
}
static ct_tensor *ip_relu(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_mul_scalar(in[0], 1.0);
    ct_relu_(y);
    return ct_mul(y, y);
}
static ct_tensor *ip_chain(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    ct_tensor *y = ct_cos(in[0]);
    ct_mul_(y, in[1]);
    ct_add_(y, in[1], 1.0);
    ct_div_(y, in[2]);
    ct_relu_(y);
    return ct_mul(y, y);
}

static void test_gradcheck_inplace(void)
{
    ct_scope_begin();
    ct_manual_seed(10);
    int64_t s23[2] = {2, 3}, s3[1] = {3};
    GC("add_ alpha 0.7", ip_add, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_NORMAL, s23, 2));
    GC("add_ broadcast other", ip_add, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_NORMAL, s3, 1));
    GC("add_ other without grad", ip_add, NULL, NULL, rg(D_NORMAL, s23, 2),
       raw(D_NORMAL, s23, 2));
    GC("sub_ alpha -2", ip_sub, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_NORMAL, s3, 1));
    GC("mul_", ip_mul, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_NORMAL, s23, 2));
    GC("mul_ broadcast other", ip_mul, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_NORMAL, s3, 1));
    GC("div_", ip_div, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_AWAY, s23, 2));
    GC("div_ 0-dim other", ip_div, NULL, NULL, rg(D_NORMAL, s23, 2), rg(D_AWAY, NULL, 0));
    GC("relu_", ip_relu, NULL, NULL, rg(D_AWAY, s23, 2));
    GC("mul_ add_ div_ relu_", ip_chain, NULL, NULL, rg(D_NORMAL, s23, 2),
       rg(D_NORMAL, s3, 1), rg(D_AWAY, s23, 2));
    ct_scope_end();
}

/* ---- second derivatives: gradcheck of the gradient itself ------------------------------ */
typedef struct gg_case {
    const char *name;
    unary_op f1;
    binary_op f2;
    int dom_a, dom_b;
} gg_case;

/* The gradient of sum(f(x...) * w) with respect to x... (create_graph), flattened and
   concatenated; the last input is w (the grad_output). */
static ct_tensor *gc_gradgrad(ct_tensor *const *in, int n, void *user)
{
    const gg_case *c = (const gg_case *)user;
    int nx = n - 1;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *y = c->f1 ? c->f1(in[0]) : c->f2(in[0], in[1]);
    const ct_tensor *go[1] = {in[n - 1]};
    ct_tensor *g[2] = {NULL, NULL};
    ct_tensor *out = NULL;
    if (y && ct_autograd_grad(&y, 1, in, nx, go, false, true, false, g) == CT_OK) {
        if (nx == 1) {
            out = g[0];
        } else {
            const ct_tensor *parts[2] = {ct_flatten(g[0], 0, -1), ct_flatten(g[1], 0, -1)};
            out = ct_cat(parts, 2, 0);
        }
    }
    ct_set_grad_enabled(prev);
    return out;
}

/* As gc_gradgrad for f2(x, target): inputs x, target (no grad), w; only x is
   differentiated. */
static ct_tensor *gc_gradgrad_loss(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    const gg_case *c = (const gg_case *)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true);
    ct_tensor *y = c->f2(in[0], in[1]);
    const ct_tensor *go[1] = {in[2]};
    ct_tensor *g = NULL;
    if (y && ct_autograd_grad(&y, 1, in, 1, go, false, true, false, &g) != CT_OK) {
        g = NULL;
    }
    ct_set_grad_enabled(prev);
    return g;
}

static ct_tensor *ce_mean(const ct_tensor *x, const ct_tensor *t)
{
    return ct_cross_entropy(x, t, NULL);
}
static ct_tensor *nll_none(const ct_tensor *x, const ct_tensor *t)
{
    ct_nll_loss_opts o = ct_nll_loss_defaults();
    o.reduction = CT_REDUCTION_NONE;
    return ct_nll_loss(x, t, &o);
}
static ct_tensor *mse_mean(const ct_tensor *x, const ct_tensor *t)
{
    return ct_mse_loss(x, t, CT_REDUCTION_MEAN);
}
static ct_tensor *sum_sq(const ct_tensor *x) { return ct_sum_dim(ct_mul(x, x), 1, false); }
static ct_tensor *mean_cube(const ct_tensor *x)
{
    return ct_mean_dim(ct_pow_scalar(x, 3.0), 0, true);
}

static void test_gradgradcheck(void)
{
    ct_scope_begin();
    ct_manual_seed(11);
    static gg_case unary[] = {
        {"exp", ct_exp, NULL, D_NORMAL, 0},
        {"log", ct_log, NULL, D_POS, 0},
        {"log1p", ct_log1p, NULL, D_LOG1P, 0},
        {"sqrt", ct_sqrt, NULL, D_POS, 0},
        {"rsqrt", ct_rsqrt, NULL, D_POS, 0},
        {"sin", ct_sin, NULL, D_NORMAL, 0},
        {"cos", ct_cos, NULL, D_NORMAL, 0},
        {"sigmoid", ct_sigmoid, NULL, D_NORMAL, 0},
        {"tanh", ct_tanh, NULL, D_NORMAL, 0},
        {"square", ct_square, NULL, D_NORMAL, 0},
        {"reciprocal", ct_reciprocal, NULL, D_AWAY, 0},
        {"relu", ct_relu, NULL, D_AWAY, 0},
        {"abs", ct_abs, NULL, D_AWAY, 0},
        {"neg", ct_neg, NULL, D_NORMAL, 0},
        {"clamp", clamp_both, NULL, D_NORMAL, 0},
        {"pow_scalar(2.5)", pow_2_5, NULL, D_POS, 0},
        {"pow_scalar(3)", pow_3, NULL, D_NORMAL, 0},
        {"softmax(1)", sm1, NULL, D_NORMAL, 0},
        {"log_softmax(-1)", lsmm1, NULL, D_NORMAL, 0},
        {"sum_dim(x * x)", sum_sq, NULL, D_NORMAL, 0},
        {"mean_dim(x ** 3)", mean_cube, NULL, D_NORMAL, 0},
        {"view", v_view, NULL, D_NORMAL, 0},
        {"permute", v_permute, NULL, D_NORMAL, 0},
        {"narrow", v_narrow, NULL, D_NORMAL, 0},
        {"select", v_select, NULL, D_NORMAL, 0},
        {"expand", v_expand, NULL, D_NORMAL, 0},
    };
    int64_t s234[3] = {2, 3, 4}, s23[2] = {2, 3}, s31[2] = {3, 1};
    char label[96];
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        gg_case *c = &unary[i];
        const int64_t *s = c->f1 == v_expand ? s31 : s234;
        int nd = c->f1 == v_expand ? 2 : 3;
        ct_tensor *x = rg(c->dom_a, s, nd);
        ct_no_grad_begin();
        ct_tensor *y = c->f1(x);
        ct_no_grad_end();
        snprintf(label, sizeof label, "double backward of %s", c->name);
        if (!y) {
            CHECK_MSG(0, "%s: %s", label, ct_error());
            ct_error_clear();
            continue;
        }
        GC(label, gc_gradgrad, c, NULL, x, rg(D_NORMAL, ct_sizes(y), ct_dim(y)));
    }
    static gg_case binary[] = {
        {"add", NULL, ct_add, D_NORMAL, D_NORMAL},
        {"sub", NULL, ct_sub, D_NORMAL, D_NORMAL},
        {"mul", NULL, ct_mul, D_NORMAL, D_NORMAL},
        {"div", NULL, ct_div, D_NORMAL, D_AWAY},
        {"pow", NULL, ct_pow, D_POS, D_NORMAL},
        {"maximum", NULL, ct_maximum, D_NORMAL, D_NORMAL},
        {"matmul", NULL, ct_matmul, D_NORMAL, D_NORMAL},
        {"mm", NULL, ct_mm, D_NORMAL, D_NORMAL},
        {"mse_loss", NULL, mse_mean, D_NORMAL, D_NORMAL},
    };
    int64_t s3[1] = {3}, s34[2] = {3, 4};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        gg_case *c = &binary[i];
        bool mat = c->f2 == ct_matmul || c->f2 == ct_mm;
        ct_tensor *a = rg(c->dom_a, s23, 2), *b = rg(c->dom_b, mat ? s34 : s3, mat ? 2 : 1);
        if (c->f2 == mse_mean) {
            b = rg(c->dom_b, s23, 2);
        }
        ct_no_grad_begin();
        ct_tensor *y = c->f2(a, b);
        ct_no_grad_end();
        snprintf(label, sizeof label, "double backward of %s", c->name);
        if (!y) {
            CHECK_MSG(0, "%s: %s", label, ct_error());
            ct_error_clear();
            continue;
        }
        GC(label, gc_gradgrad, c, NULL, a, b, rg(D_NORMAL, ct_sizes(y), ct_dim(y)));
    }
    /* losses with class targets: differentiate with respect to the logits only */
    int64_t tv[3] = {0, 3, 1};
    ct_tensor *target = from_i64(tv, s3, 1);
    static gg_case losses[] = {
        {"cross_entropy", NULL, ce_mean, D_NORMAL, 0},
        {"nll_loss none", NULL, nll_none, D_NORMAL, 0},
    };
    for (size_t i = 0; i < sizeof losses / sizeof losses[0]; i++) {
        gg_case *c = &losses[i];
        ct_tensor *x = rg(D_NORMAL, s34, 2);
        ct_no_grad_begin();
        ct_tensor *y = c->f2(x, target);
        ct_no_grad_end();
        snprintf(label, sizeof label, "double backward of %s", c->name);
        if (!y) {
            CHECK_MSG(0, "%s: %s", label, ct_error());
            ct_error_clear();
            continue;
        }
        /* inputs: x, target (no grad), w: the gradient is taken with respect to x only */
        GC(label, gc_gradgrad_loss, c, NULL, x, target, rg(D_NORMAL, ct_sizes(y), ct_dim(y)));
    }
    ct_scope_end();
}


/* ---- ct_backward ------------------------------------------------------------------------ */
static void test_backward_grad_output(void)
{
    ct_scope_begin();
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s11[2] = {1, 1};
    double xv[6] = {1, 2, 3, 4, 5, 6}, gv[6] = {0.5, -1, 2, 0, 1, 3};
    ct_tensor *x = leaf(from(xv, s23, 2));
    ct_tensor *y = ct_mul(x, x);
    CHECK_OK(ct_backward(y, from(gv, s23, 2), false));
    double want[6];
    for (int i = 0; i < 6; i++) {
        want[i] = 2 * xv[i] * gv[i];
    }
    CHECK_TENSOR(ct_grad(x), want, 6, 0, 1e-15);
    CHECK(ct_test_has_shape(ct_grad(x), s23, 2) && ct_tensor_dtype(ct_grad(x)) == F64);
    /* implicit grad_output needs a one-element output */
    ct_tensor *y2 = ct_mul_scalar(x, 2.0);
    CHECK(ct_backward(y2, NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "grad can be implicitly created only for scalar outputs");
    CHECK(ct_backward(y2, ct_ones(s3, 1, F64), false) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "Mismatch in shape");
    CHECK(ct_backward(ct_ones(s3, 1, F64), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "does not require grad");
    CHECK(ct_backward(NULL, NULL, false) != CT_OK);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_backward");
    /* a one-element output that is not 0-dim takes the implicit 1 */
    ct_tensor *x1 = leaf(ct_full(s11, 2, 3.0, F64));
    CHECK_OK(ct_backward(ct_mul(x1, x1), NULL, false));
    double six = 6.0;
    CHECK_TENSOR(ct_grad(x1), &six, 1, 0, 0);
    /* backward of a leaf itself: its grad is grad_output, copied, not aliased */
    ct_tensor *z = leaf(ct_zeros(s3, 1, F64)), *go = ct_full(s3, 1, 3.0, F64);
    CHECK_OK(ct_backward(z, go, false));
    CHECK_OK(ct_backward(z, go, false));
    double g6[3] = {6, 6, 6}, g3[3] = {3, 3, 3};
    CHECK_TENSOR(ct_grad(z), g6, 3, 0, 0);
    CHECK_TENSOR(go, g3, 3, 0, 0);
    CHECK(ct_grad(z) != go);
    ct_scope_end();
}

static void test_backward_accumulates(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, -2, 0.5};
    ct_tensor *x = leaf(from(xv, s3, 1));
    CHECK(ct_grad(x) == NULL);
    CHECK_OK(ct_backward(ct_sum(ct_mul(x, x)), NULL, false)); /* 2x */
    CHECK_OK(ct_backward(ct_sum(ct_mul_scalar(x, 3.0)), NULL, false)); /* + 3 */
    double want[3] = {5, -1, 4};
    CHECK_TENSOR(ct_grad(x), want, 3, 0, 1e-15);
    /* zero_grad: set_grad(NULL), then a fresh gradient */
    CHECK(ct_set_grad(x, NULL) == CT_OK && ct_grad(x) == NULL);
    CHECK_OK(ct_backward(ct_sum(x), NULL, false));
    double ones[3] = {1, 1, 1};
    CHECK_TENSOR(ct_grad(x), ones, 3, 0, 0);
    /* zeroing the grad in place also restarts the sum */
    ct_zero_(ct_grad(x));
    CHECK_OK(ct_backward(ct_sum(ct_mul_scalar(x, 2.0)), NULL, false));
    double twos[3] = {2, 2, 2};
    CHECK_TENSOR(ct_grad(x), twos, 3, 0, 0);
    /* set_grad checks the shape */
    int64_t s2[1] = {2};
    CHECK(ct_set_grad(x, ct_zeros(s2, 1, F64)) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_set_grad");
    /* a gradient that reaches a leaf through two paths in one backward is summed */
    ct_set_grad(x, NULL);
    CHECK_OK(ct_backward(ct_add(ct_sum(x), ct_sum(ct_mul_scalar(x, 4.0))), NULL, false));
    double fives[3] = {5, 5, 5};
    CHECK_TENSOR(ct_grad(x), fives, 3, 0, 0);
    ct_scope_end();
}

static void test_retain_graph(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, 2, 3};
    ct_tensor *x = leaf(from(xv, s3, 1));
    ct_tensor *y = ct_sum(ct_mul(x, x));
    CHECK_OK(ct_backward(y, NULL, true));
    CHECK_OK(ct_backward(y, NULL, false)); /* allowed: the graph was retained */
    double w4[3] = {4, 8, 12};
    CHECK_TENSOR(ct_grad(x), w4, 3, 0, 0);
    CHECK(ct_backward(y, NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Trying to backward through the graph a second time");
    CHECK_TENSOR(ct_grad(x), w4, 3, 0, 0); /* unchanged by the failed call */
    /* without retain_graph the second backward fails at once */
    ct_tensor *x2 = leaf(from(xv, s3, 1));
    ct_tensor *y2 = ct_sum(ct_exp(ct_mul(x2, x2)));
    CHECK_OK(ct_backward(y2, NULL, false));
    CHECK(ct_backward(y2, NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Specify retain_graph=True");
    /* a new graph over the same leaves works */
    CHECK_OK(ct_backward(ct_sum(x2), NULL, false));
    ct_scope_end();
}

static void test_requires_grad_flags(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    ct_tensor *i = ct_zeros(s3, 1, CT_INT64);
    CHECK(ct_requires_grad_(i, true) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "only Tensors of floating point dtype can require gradients");
    CHECK(ct_requires_grad_(ct_zeros(s3, 1, CT_BOOL), true) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "only Tensors of floating point dtype can require gradients");
    CHECK(ct_requires_grad_(i, false) == i && !ct_requires_grad(i));
    ct_tensor *f = ct_zeros(s3, 1, CT_FLOAT32);
    CHECK(!ct_requires_grad(f) && ct_is_leaf(f) && ct_grad_fn(f) == NULL);
    CHECK(ct_requires_grad_(f, true) == f && ct_requires_grad(f) && ct_is_leaf(f));
    ct_tensor *y = ct_mul_scalar(f, 2.0);
    CHECK(ct_requires_grad(y) && !ct_is_leaf(y) && ct_grad_fn(y) != NULL);
    CHECK(ct_requires_grad_(y, false) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "you can only change requires_grad flags of leaf variables.");
    CHECK(ct_requires_grad_(f, false) == f && !ct_requires_grad(f));
    CHECK(ct_grad_fn(ct_mul_scalar(f, 2.0)) == NULL);
    /* ops without a differentiable input record nothing; comparisons never do */
    ct_requires_grad_(f, true);
    CHECK(!ct_requires_grad(ct_gt_scalar(f, 0.0)));
    CHECK(!ct_requires_grad(ct_add(i, i)));
    ct_tensor *ix = NULL;
    CHECK(ct_max_dim(f, 0, false, NULL, &ix) == CT_OK && ix && !ct_requires_grad(ix));
    CHECK(!ct_requires_grad(ct_argmax(f)));
    /* retain_grad and hooks need a tensor that requires grad */
    CHECK(ct_retain_grad(i) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "can't retain_grad on Tensor that has requires_grad=False");
    ct_scope_end();
}

static void test_no_grad(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    ct_tensor *x = rg(D_NORMAL, s3, 1);
    CHECK(ct_is_grad_enabled());
    ct_no_grad_begin();
    CHECK(!ct_is_grad_enabled());
    ct_tensor *y = ct_mul(x, x);
    CHECK(y && ct_grad_fn(y) == NULL && !ct_requires_grad(y) && ct_is_leaf(y));
    ct_no_grad_begin(); /* nesting */
    CHECK(!ct_is_grad_enabled());
    ct_no_grad_end();
    CHECK(!ct_is_grad_enabled());
    /* set_grad_enabled(true) inside no_grad re-enables until the block ends */
    ct_set_grad_enabled(true);
    CHECK(ct_is_grad_enabled());
    CHECK(ct_grad_fn(ct_exp(x)) != NULL);
    ct_no_grad_end();
    CHECK(ct_is_grad_enabled());
    ct_no_grad_end(); /* unbalanced end: no effect */
    CHECK(ct_is_grad_enabled());
    /* set_grad_enabled(false) is restored by an enclosing no_grad block's end */
    ct_set_grad_enabled(false);
    CHECK(!ct_is_grad_enabled());
    CHECK(ct_grad_fn(ct_sum(x)) == NULL);
    ct_no_grad_begin();
    ct_set_grad_enabled(true);
    ct_no_grad_end();
    CHECK(!ct_is_grad_enabled());
    ct_set_grad_enabled(true);
    CHECK(ct_is_grad_enabled());
    /* every kind of op records nothing under no_grad */
    ct_no_grad_begin();
    int64_t s23[2] = {2, 3};
    ct_tensor *m = rg(D_NORMAL, s23, 2);
    CHECK(ct_grad_fn(ct_matmul(m, x)) == NULL);
    CHECK(ct_grad_fn(ct_softmax(m, 1)) == NULL);
    CHECK(ct_grad_fn(ct_t(m)) == NULL);
    CHECK(ct_grad_fn(ct_sum_dim(m, 0, false)) == NULL);
    CHECK(ct_grad_fn(ct_mse_loss(x, x, CT_REDUCTION_MEAN)) == NULL);
    /* in-place updates of leaves that require grad are allowed (an optimizer step) */
    double before = ct_item(ct_select(x, 0, 0));
    uint32_t v = ct_version(x);
    CHECK(ct_add_(x, ct_ones(s3, 1, F64), 1.0) == x);
    CHECK(ct_is_leaf(x) && ct_requires_grad(x) && ct_version(x) == v + 1);
    CHECK_NEAR(ct_item(ct_select(x, 0, 0)), before + 1, 1e-15);
    ct_no_grad_end();
    ct_scope_end();
}

static void test_detach(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, 2, 3};
    ct_tensor *x = leaf(from(xv, s3, 1));
    ct_tensor *y = ct_mul_scalar(x, 2.0);
    ct_tensor *d = ct_detach(y);
    CHECK(d && d != y && ct_data_ptr(d) == ct_data_ptr(y));
    CHECK(!ct_requires_grad(d) && ct_grad_fn(d) == NULL && ct_is_leaf(d));
    CHECK(ct_test_has_shape(d, s3, 1));
    /* writes through the detached tensor show in the original (shared version counter) */
    uint32_t v = ct_version(y);
    ct_fill_(ct_select(d, 0, 0), 7.0);
    CHECK_NEAR(ct_item(ct_select(y, 0, 0)), 7.0, 0);
    CHECK(ct_version(y) == v + 1 && ct_version(d) == ct_version(y));
    /* no gradient flows through a detached tensor */
    ct_tensor *x2 = leaf(from(xv, s3, 1));
    ct_tensor *e = ct_exp(x2);
    CHECK_OK(ct_backward(ct_sum(ct_mul(ct_detach(e), x2)), NULL, false));
    double want[3] = {exp(1.0), exp(2.0), exp(3.0)};
    CHECK_TENSOR(ct_grad(x2), want, 3, 1e-15, 0);
    /* detach_ turns a non-leaf into a leaf without grad */
    ct_tensor *y2 = ct_mul_scalar(x2, 3.0);
    CHECK(ct_detach_(y2) == y2 && ct_is_leaf(y2) && !ct_requires_grad(y2));
    CHECK(ct_grad_fn(ct_exp(y2)) == NULL);
    /* detaching a leaf that requires grad */
    ct_tensor *dx = ct_detach(x2);
    CHECK(!ct_requires_grad(dx) && ct_requires_grad(x2) && ct_data_ptr(dx) == ct_data_ptr(x2));
    CHECK(ct_detach(NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_detach");
    ct_scope_end();
}

/* ---- version counters and in-place checks --------------------------------------------- */
static void test_version_counter(void)
{
    ct_scope_begin();
    ct_manual_seed(12);
    int64_t s23[2] = {2, 3};
    ct_tensor *x = rg(D_NORMAL, s23, 2), *ones = ct_ones(s23, 2, F64);
    /* a saved non-leaf modified by add_ */
    ct_tensor *a = ct_mul_scalar(x, 2.0);
    ct_tensor *b = ct_mul(a, a);
    CHECK(ct_version(a) == 0);
    CHECK(ct_add_(a, ones, 1.0) == a);
    CHECK(ct_version(a) == 1);
    CHECK(ct_backward(ct_sum(b), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    /* the message gives the versions, in PyTorch's words */
    ct_tensor *c = ct_mul_scalar(x, 1.0);
    ct_tensor *e = ct_mul(x, c);
    ct_mul_(c, ones);
    CHECK(ct_backward(ct_sum(e), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "is at version 1; expected version 0 instead");
    /* saved tensors without grad count too: mul_, zero_, fill_, through a view */
    ct_tensor *k1 = raw(D_NORMAL, s23, 2), *k2 = raw(D_NORMAL, s23, 2);
    ct_tensor *k3 = raw(D_NORMAL, s23, 2), *k4 = raw(D_NORMAL, s23, 2);
    ct_tensor *e1 = ct_mul(x, k1), *e2 = ct_mul(x, k2), *e3 = ct_mul(x, k3), *e4 = ct_mul(x, k4);
    ct_mul_(k1, k1);
    ct_zero_(k2);
    ct_fill_(k3, 2.0);
    ct_fill_(ct_select(ct_t(k4), 1, 0), 2.0);
    CHECK(ct_backward(ct_sum(e1), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    CHECK(ct_backward(ct_sum(e2), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    CHECK(ct_backward(ct_sum(e3), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    CHECK(ct_backward(ct_sum(e4), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    /* an op that saves its result (exp) sees in-place changes of the result */
    ct_tensor *ex = ct_exp(x);
    ct_add_(ex, ones, 1.0);
    CHECK(ct_backward(ct_sum(ex), NULL, false) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "modified by an inplace operation");
    /* modifying a tensor that was not saved is fine (add saves nothing) */
    ct_tensor *k5 = raw(D_NORMAL, s23, 2);
    ct_tensor *e5 = ct_add(x, k5);
    ct_zero_(k5);
    CHECK_OK(ct_backward(ct_sum(e5), NULL, false));
    double ones6[6] = {1, 1, 1, 1, 1, 1};
    CHECK_TENSOR(ct_grad(x), ones6, 6, 0, 0);
    /* the in-place result itself is differentiable: y = x * 2; y += 1; sum(y * y) */
    ct_set_grad(x, NULL);
    ct_tensor *y = ct_mul_scalar(x, 2.0);
    ct_add_(y, ones, 1.0);
    CHECK_OK(ct_backward(ct_sum(ct_mul(y, y)), NULL, false));
    ct_tensor *want = ct_mul_scalar(ct_add_scalar(ct_mul_scalar(ct_detach(x), 2.0), 1.0), 4.0);
    double wv[6];
    for (int i = 0; i < 6; i++) {
        wv[i] = ct_item(ct_select(ct_flatten(want, 0, -1), 0, i));
    }
    CHECK_TENSOR(ct_grad(x), wv, 6, 1e-15, 1e-15);
    ct_scope_end();
}

static void test_inplace_on_leaf(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, 2, 3};
    ct_tensor *x = leaf(from(xv, s3, 1)), *o = ct_ones(s3, 1, F64);
    const char *msg = "a leaf Variable that requires grad is being used in an in-place operation.";
    CHECK(ct_add_(x, o, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_sub_(x, o, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_mul_(x, o) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_div_(x, o) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_relu_(x) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_zero_(x) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_fill_(x, 1.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK(ct_copy_(x, o) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, msg);
    CHECK_TENSOR(x, xv, 3, 0, 0); /* untouched */
    CHECK(ct_version(x) == 0);
    /* a leaf that does not require grad may be modified */
    ct_tensor *p = from(xv, s3, 1);
    CHECK(ct_add_(p, o, 1.0) == p);
    /* a view of a leaf that requires grad may not be modified either (PyTorch: "a view of a
       leaf Variable that requires grad is being used in an in-place operation.") */
    CHECK(ct_mul_(ct_narrow(x, 0, 0, 2), ct_narrow(o, 0, 0, 2)) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "leaf Variable that requires grad");
    CHECK(ct_fill_(ct_select(x, 0, 1), 0.0) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "leaf Variable that requires grad");
    CHECK_TENSOR(x, xv, 3, 0, 0);
    ct_scope_end();
}

/* ---- ct_autograd_grad ------------------------------------------------------------------- */
static void test_autograd_grad(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, 2, 3}, wv[3] = {0.5, -1, 2};
    ct_tensor *x = leaf(from(xv, s3, 1)), *w = leaf(from(wv, s3, 1));
    ct_tensor *u = leaf(from(xv, s3, 1)); /* not used */
    ct_tensor *h = ct_mul(x, x);             /* non-leaf input */
    ct_tensor *z = ct_sum(ct_mul(h, w));
    ct_tensor *ins[3] = {x, h, w};
    ct_tensor *g[3] = {NULL, NULL, NULL};
    CHECK_OK(ct_autograd_grad(&z, 1, ins, 3, NULL, true, false, false, g));
    double gx[3], gh[3], gw[3];
    for (int i = 0; i < 3; i++) {
        gx[i] = 2 * xv[i] * wv[i];
        gh[i] = wv[i];
        gw[i] = xv[i] * xv[i];
    }
    CHECK_TENSOR(g[0], gx, 3, 0, 1e-15);
    CHECK_TENSOR(g[1], gh, 3, 0, 0);
    CHECK_TENSOR(g[2], gw, 3, 0, 0);
    CHECK(ct_grad(x) == NULL && ct_grad(w) == NULL); /* .grad is not touched */
    CHECK(!ct_requires_grad(g[0])); /* no create_graph: no history */
    /* allow_unused */
    ct_tensor *ins2[2] = {x, u};
    CHECK_OK(ct_autograd_grad(&z, 1, ins2, 2, NULL, true, false, true, g));
    CHECK(g[0] != NULL && g[1] == NULL);
    CHECK(ct_autograd_grad(&z, 1, ins2, 2, NULL, true, false, false, g) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "One of the differentiated Tensors appears to not have been "
                                 "used in the graph");
    /* an input that does not require grad */
    ct_tensor *plain = from(xv, s3, 1);
    CHECK(ct_autograd_grad(&z, 1, &plain, 1, NULL, true, false, true, g) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "does not require grad");
    /* several outputs, with grad_outputs (NULL for a scalar output) */
    ct_tensor *outs[2] = {h, ct_sum(x)};
    const ct_tensor *gos[2] = {ct_full(s3, 1, 2.0, F64), NULL};
    CHECK_OK(ct_autograd_grad(outs, 2, &x, 1, gos, true, false, false, g));
    double g2[3] = {5, 9, 13}; /* 2 * 2x + 1 */
    CHECK_TENSOR(g[0], g2, 3, 0, 0);
    /* a non-scalar output needs its grad_output */
    CHECK(ct_autograd_grad(&h, 1, &x, 1, NULL, true, false, false, g) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "grad can be implicitly created only for scalar outputs");
    /* the output itself as the input: gradient 1 */
    CHECK_OK(ct_autograd_grad(&z, 1, &z, 1, NULL, true, false, false, g));
    CHECK(g[0] && ct_item(g[0]) == 1.0);
    /* without retain_graph the graph is freed after the call */
    CHECK_OK(ct_autograd_grad(&z, 1, &x, 1, NULL, false, false, false, g));
    CHECK(ct_autograd_grad(&z, 1, &x, 1, NULL, false, false, false, g) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Trying to backward through the graph a second time");
    CHECK(g[0] == NULL);
    ct_scope_end();
}

static void test_second_derivatives(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {-1, 0.5, 2};
    ct_tensor *x = leaf(from(xv, s3, 1));
    /* x^3: 3x^2, 6x, 6 */
    ct_tensor *y = ct_sum(ct_pow_scalar(x, 3.0));
    ct_tensor *g1 = NULL, *g2 = NULL, *g3 = NULL;
    CHECK_OK(ct_autograd_grad(&y, 1, &x, 1, NULL, false, true, false, &g1));
    CHECK(g1 && ct_requires_grad(g1));
    double w1[3] = {3, 0.75, 12}, w2[3] = {-6, 3, 12}, w3[3] = {6, 6, 6};
    CHECK_TENSOR(g1, w1, 3, 1e-14, 0);
    ct_tensor *s1 = ct_sum(g1);
    CHECK_OK(ct_autograd_grad(&s1, 1, &x, 1, NULL, false, true, false, &g2));
    CHECK_TENSOR(g2, w2, 3, 1e-14, 0);
    ct_tensor *s2 = ct_sum(g2);
    CHECK_OK(ct_autograd_grad(&s2, 1, &x, 1, NULL, false, true, true, &g3));
    CHECK_TENSOR(g3, w3, 3, 1e-14, 0);
    /* x * x * x built from muls gives the same */
    ct_tensor *ym = ct_sum(ct_mul(ct_mul(x, x), x));
    CHECK_OK(ct_autograd_grad(&ym, 1, &x, 1, NULL, false, true, false, &g1));
    s1 = ct_sum(g1);
    CHECK_OK(ct_autograd_grad(&s1, 1, &x, 1, NULL, false, false, false, &g2));
    CHECK_TENSOR(g2, w2, 3, 1e-14, 0);
    /* sigmoid: s(1 - s), s(1 - s)(1 - 2s); tanh: 1 - t^2, -2t(1 - t^2) */
    double ws1[3], ws2[3], wt1[3], wt2[3];
    for (int i = 0; i < 3; i++) {
        double s = 1 / (1 + exp(-xv[i])), t = tanh(xv[i]);
        ws1[i] = s * (1 - s);
        ws2[i] = s * (1 - s) * (1 - 2 * s);
        wt1[i] = 1 - t * t;
        wt2[i] = -2 * t * (1 - t * t);
    }
    ct_tensor *ys = ct_sum(ct_sigmoid(x));
    CHECK_OK(ct_autograd_grad(&ys, 1, &x, 1, NULL, false, true, false, &g1));
    CHECK_TENSOR(g1, ws1, 3, 1e-14, 0);
    s1 = ct_sum(g1);
    CHECK_OK(ct_autograd_grad(&s1, 1, &x, 1, NULL, false, false, false, &g2));
    CHECK_TENSOR(g2, ws2, 3, 1e-12, 1e-15);
    ct_tensor *yt = ct_sum(ct_tanh(x));
    CHECK_OK(ct_autograd_grad(&yt, 1, &x, 1, NULL, false, true, false, &g1));
    CHECK_TENSOR(g1, wt1, 3, 1e-14, 0);
    s1 = ct_sum(g1);
    CHECK_OK(ct_autograd_grad(&s1, 1, &x, 1, NULL, false, false, false, &g2));
    CHECK_TENSOR(g2, wt2, 3, 1e-12, 1e-15);
    /* mixed partials: f = sum(x * w^2): df/dx = w^2, d/dw sum(df/dx) = 2w */
    double wv[3] = {1.5, -2, 0.25};
    ct_tensor *w = leaf(from(wv, s3, 1));
    ct_tensor *f = ct_sum(ct_mul(x, ct_mul(w, w)));
    CHECK_OK(ct_autograd_grad(&f, 1, &x, 1, NULL, false, true, false, &g1));
    s1 = ct_sum(g1);
    CHECK_OK(ct_autograd_grad(&s1, 1, &w, 1, NULL, false, false, false, &g2));
    double w2w[3] = {3, -4, 0.5};
    CHECK_TENSOR(g2, w2w, 3, 0, 1e-15);
    /* ct_backward of a create_graph gradient accumulates the second derivative in .grad */
    ct_tensor *yb = ct_sum(ct_pow_scalar(x, 3.0));
    CHECK_OK(ct_autograd_grad(&yb, 1, &x, 1, NULL, false, true, false, &g1));
    CHECK_OK(ct_backward(ct_sum(g1), NULL, false));
    CHECK_TENSOR(ct_grad(x), w2, 3, 1e-14, 0);
    ct_scope_end();
}

/* ---- retain_grad and hooks --------------------------------------------------------------- */
static void test_retain_grad(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, 2, 3};
    ct_tensor *x = leaf(from(xv, s3, 1));
    ct_tensor *y = ct_mul_scalar(x, 2.0), *h = ct_exp(x);
    CHECK(ct_retain_grad(y) == CT_OK);
    CHECK(ct_retain_grad(x) == CT_OK); /* a leaf: no-op */
    ct_tensor *z = ct_sum(ct_add(ct_mul(y, y), h));
    CHECK_OK(ct_backward(z, NULL, true));
    double gy[3] = {4, 8, 12}, gx[3] = {8 + exp(1.0), 16 + exp(2.0), 24 + exp(3.0)};
    CHECK_TENSOR(ct_grad(y), gy, 3, 0, 0);
    CHECK_TENSOR(ct_grad(x), gx, 3, 1e-15, 0);
    CHECK(ct_grad(h) == NULL); /* not retained */
    /* a second backward accumulates into the retained grad, as PyTorch */
    CHECK_OK(ct_backward(z, NULL, false));
    double gy2[3] = {8, 16, 24};
    CHECK_TENSOR(ct_grad(y), gy2, 3, 0, 0);
    /* ct_autograd_grad leaves .grad alone */
    ct_tensor *y2 = ct_mul_scalar(x, 2.0), *g = NULL;
    CHECK(ct_retain_grad(y2) == CT_OK);
    ct_tensor *z2 = ct_sum(y2);
    CHECK_OK(ct_autograd_grad(&z2, 1, &x, 1, NULL, false, false, false, &g));
    CHECK(ct_grad(y2) == NULL);
    /* the retained tensor may die before the backward that fills it (its node lives on) */
    ct_scope_begin();
    ct_tensor *y3 = ct_mul_scalar(x, 2.0);
    CHECK(ct_retain_grad(y3) == CT_OK);
    ct_tensor *z3 = ct_keep(ct_sum(ct_mul(y3, y3)));
    ct_scope_end();
    CHECK_OK(ct_backward(z3, NULL, false));
    ct_scope_end();
}

static ct_tensor *double_hook(const ct_tensor *grad, void *user)
{
    (*(int *)user)++;
    return ct_mul_scalar(grad, 2.0);
}

static ct_tensor *observe_hook(const ct_tensor *grad, void *user)
{
    double *seen = (double *)user;
    seen[0] = ct_item(ct_sum(grad));
    seen[1] = (double)ct_numel(grad);
    return NULL; /* keep the gradient */
}

static void test_hooks(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {1, 2, 3};
    /* on a leaf */
    int calls = 0;
    ct_tensor *x = leaf(from(xv, s3, 1));
    CHECK(ct_register_hook(x, double_hook, &calls) == CT_OK);
    CHECK_OK(ct_backward(ct_sum(ct_mul_scalar(x, 3.0)), NULL, false));
    double six[3] = {6, 6, 6};
    CHECK_TENSOR(ct_grad(x), six, 3, 0, 0);
    CHECK(calls == 1);
    /* on a non-leaf, observing only (NULL return keeps the gradient) */
    double seen[2] = {0, 0};
    ct_tensor *x5 = leaf(from(xv, s3, 1));
    ct_tensor *y5 = ct_mul_scalar(x5, 2.0);
    CHECK(ct_register_hook(y5, observe_hook, seen) == CT_OK);
    CHECK_OK(ct_backward(ct_sum(ct_mul(y5, y5)), NULL, false));
    CHECK_NEAR(seen[0], 24.0, 0); /* sum(2 * y5) */
    CHECK_NEAR(seen[1], 3.0, 0);
    double w5[3] = {8, 16, 24};
    CHECK_TENSOR(ct_grad(x5), w5, 3, 0, 0);
    /* on a non-leaf, replacing the gradient: the doubled gradient flows on to x2 */
    calls = 0;
    ct_tensor *x2 = leaf(from(xv, s3, 1));
    ct_tensor *y = ct_mul_scalar(x2, 3.0);
    CHECK(ct_register_hook(y, double_hook, &calls) == CT_OK);
    CHECK_OK(ct_backward(ct_sum(ct_mul(y, y)), NULL, false));
    double want[3] = {36, 72, 108}; /* 2 * 2y * 3 */
    CHECK_TENSOR(ct_grad(x2), want, 3, 0, 0);
    CHECK(calls == 1);
    /* hooks run in registration order: the second sees the first's result */
    calls = 0;
    ct_tensor *x3 = leaf(from(xv, s3, 1));
    ct_tensor *y3 = ct_exp(x3);
    CHECK(ct_register_hook(y3, double_hook, &calls) == CT_OK);
    CHECK(ct_register_hook(y3, observe_hook, seen) == CT_OK);
    CHECK_OK(ct_backward(ct_sum(y3), NULL, false));
    CHECK_NEAR(seen[0], 6.0, 0);
    CHECK_NEAR(seen[1], 3.0, 0);
    double we[3] = {2 * exp(1.0), 2 * exp(2.0), 2 * exp(3.0)};
    CHECK_TENSOR(ct_grad(x3), we, 3, 1e-15, 0);
    /* two hooks on a leaf run in registration order */
    calls = 0;
    ct_tensor *x6 = leaf(from(xv, s3, 1));
    CHECK(ct_register_hook(x6, double_hook, &calls) == CT_OK);
    CHECK(ct_register_hook(x6, observe_hook, seen) == CT_OK);
    CHECK_OK(ct_backward(ct_sum(ct_mul_scalar(x6, 1.5)), NULL, false));
    CHECK_NEAR(seen[0], 9.0, 0);
    CHECK(calls == 1);
    /* a hook on a leaf used twice sees the summed gradient once */
    calls = 0;
    ct_tensor *x4 = leaf(from(xv, s3, 1));
    CHECK(ct_register_hook(x4, observe_hook, seen) == CT_OK);
    CHECK_OK(ct_backward(ct_sum(ct_add(x4, ct_mul_scalar(x4, 2.0))), NULL, false));
    double three[3] = {3, 3, 3};
    CHECK_TENSOR(ct_grad(x4), three, 3, 0, 0);
    /* errors */
    CHECK(ct_register_hook(from(xv, s3, 1), double_hook, &calls) == CT_ERR_AUTOGRAD);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "cannot register a hook on a tensor that doesn't require "
                                 "gradient");
    CHECK(ct_register_hook(x, NULL, NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_register_hook");
    ct_scope_end();
}

/* ---- node names --------------------------------------------------------------------------- */
static void test_grad_fn_names(void)
{
    ct_scope_begin();
    ct_manual_seed(13);
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s34[2] = {3, 4}, s223[3] = {2, 2, 3};
    ct_tensor *x = rg(D_POS, s23, 2), *b = rg(D_POS, s3, 1), *m = rg(D_NORMAL, s34, 2);
    CHECK(ct_grad_fn(x) == NULL && ct_node_name(NULL) == NULL);
    CHECK_NODE(ct_add(x, b), "AddBackward0");
    CHECK_NODE(ct_add_scalar(x, 1.0), "AddBackward0");
    CHECK_NODE(ct_add_alpha(x, b, 2.0), "AddBackward0");
    CHECK_NODE(ct_sub(x, b), "SubBackward0");
    CHECK_NODE(ct_mul(x, b), "MulBackward0");
    CHECK_NODE(ct_mul_scalar(x, 2.0), "MulBackward0");
    CHECK_NODE(ct_div(x, b), "DivBackward0");
    CHECK_NODE(ct_pow(x, b), "PowBackward1");
    CHECK_NODE(ct_pow_scalar(x, 2.5), "PowBackward0");
    CHECK_NODE(ct_square(x), "PowBackward0");
    CHECK_NODE(ct_maximum(x, b), "MaximumBackward0");
    CHECK_NODE(ct_minimum(x, b), "MinimumBackward0");
    CHECK_NODE(ct_neg(x), "NegBackward0");
    CHECK_NODE(ct_abs(x), "AbsBackward0");
    CHECK_NODE(ct_exp(x), "ExpBackward0");
    CHECK_NODE(ct_log(x), "LogBackward0");
    CHECK_NODE(ct_log1p(x), "Log1PBackward0");
    CHECK_NODE(ct_sqrt(x), "SqrtBackward0");
    CHECK_NODE(ct_rsqrt(x), "RsqrtBackward0");
    CHECK_NODE(ct_sin(x), "SinBackward0");
    CHECK_NODE(ct_cos(x), "CosBackward0");
    CHECK_NODE(ct_sigmoid(x), "SigmoidBackward0");
    CHECK_NODE(ct_tanh(x), "TanhBackward0");
    CHECK_NODE(ct_relu(x), "ReluBackward0");
    CHECK_NODE(ct_reciprocal(x), "ReciprocalBackward0");
    CHECK_NODE(ct_clamp(x, 0.0, 1.0), "ClampBackward1");
    CHECK_NODE(ct_where(ct_gt_scalar(x, 1.0), x, b), "WhereBackward0");
    CHECK_NODE(ct_clone(x), "CloneBackward0");
    CHECK_NODE(ct_to_dtype(x, CT_FLOAT32), "ToCopyBackward0");
    int64_t flat[1] = {6}, perm[2] = {1, 0};
    CHECK_NODE(ct_view(x, flat, 1), "ViewBackward0");
    CHECK_NODE(ct_permute(x, perm, 2), "PermuteBackward0");
    CHECK_NODE(ct_expand(b, s23, 2), "ExpandBackward0");
    CHECK_NODE(ct_select(x, 0, 1), "SelectBackward0");
    CHECK_NODE(ct_alias(x), "AliasBackward0");
    const ct_tensor *two[2] = {x, x};
    CHECK_NODE(ct_cat(two, 2, 0), "CatBackward0");
    /* the other view ops, as PyTorch names them (narrow is a slice; reshape, flatten, stack
       and contiguous take their node from the ops they call) */
    CHECK_NODE(ct_transpose(x, 0, 1), "TransposeBackward0");
    CHECK_NODE(ct_t(x), "TBackward0");
    CHECK_NODE(ct_t(b), "TBackward0");
    CHECK_NODE(ct_unsqueeze(x, 1), "UnsqueezeBackward0");
    CHECK_NODE(ct_squeeze(x), "SqueezeBackward0");
    CHECK_NODE(ct_squeeze_dim(x, 0), "SqueezeBackward1");
    CHECK_NODE(ct_narrow(x, 1, 1, 2), "SliceBackward0");
    CHECK_NODE(ct_reshape(x, flat, 1), "ViewBackward0");
    CHECK_NODE(ct_flatten(x, 0, -1), "ViewBackward0");
    CHECK_NODE(ct_stack(two, 2, 0), "CatBackward0");
    CHECK_NODE(ct_contiguous(x), "AliasBackward0");
    CHECK_NODE(ct_contiguous(ct_t(x)), "CloneBackward0");
    /* the gradients of select and narrow, taken with create_graph (of a square, so that
       they depend on x), come from PyTorch's backward ops */
    ct_tensor *gs = NULL, *gn = NULL, *sel = ct_select(x, 0, 1), *nar = ct_narrow(x, 1, 1, 2);
    ct_tensor *ys = ct_sum(ct_mul(sel, sel)), *yn = ct_sum(ct_mul(nar, nar));
    CHECK_OK(ct_autograd_grad(&ys, 1, &x, 1, NULL, true, true, false, &gs));
    CHECK_OK(ct_autograd_grad(&yn, 1, &x, 1, NULL, true, true, false, &gn));
    CHECK_NODE(gs, "SelectBackwardBackward0");
    CHECK_NODE(gn, "SliceBackwardBackward0");
    CHECK_NODE(ct_sum(x), "SumBackward0");
    CHECK_NODE(ct_sum_dim(x, 0, false), "SumBackward1");
    CHECK_NODE(ct_mean(x), "MeanBackward0");
    CHECK_NODE(ct_mean_dim(x, 1, true), "MeanBackward1");
    CHECK_NODE(ct_max(x), "MaxBackward1");
    CHECK_NODE(ct_min(x), "MinBackward1");
    ct_tensor *v = NULL;
    ct_max_dim(x, 1, false, &v, NULL);
    CHECK_NODE(v, "MaxBackward0");
    ct_min_dim(x, 1, false, &v, NULL);
    CHECK_NODE(v, "MinBackward0");
    CHECK_NODE(ct_mm(x, m), "MmBackward0");
    CHECK_NODE(ct_matmul(x, m), "MmBackward0");
    int64_t s2_34[3] = {2, 3, 4};
    CHECK_NODE(ct_bmm(rg(D_NORMAL, s223, 3), rg(D_NORMAL, s2_34, 3)), "BmmBackward0");
    int64_t s4[1] = {4};
    CHECK_NODE(ct_addmm(rg(D_NORMAL, s4, 1), x, m, 1.0, 1.0), "AddmmBackward0");
    CHECK_NODE(ct_softmax(x, 1), "SoftmaxBackward0");
    CHECK_NODE(ct_log_softmax(x, 1), "LogSoftmaxBackward0");
    int64_t tv[2] = {0, 2};
    int64_t s2[1] = {2};
    CHECK_NODE(ct_nll_loss(x, from_i64(tv, s2, 1), NULL), "NllLossBackward0");
    CHECK_NODE(ct_cross_entropy(x, from_i64(tv, s2, 1), NULL), "NllLossBackward0");
    /* in place: the tensor's grad_fn becomes the in-place op's node */
    ct_tensor *y = ct_exp(x);
    ct_mul_(y, b);
    CHECK_NODE(y, "MulBackward0");
    ct_relu_(y);
    CHECK_NODE(y, "ReluBackward0");
    ct_scope_end();
}

/* ---- graph shapes ------------------------------------------------------------------------- */
static void test_diamond_and_shared(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    double xv[3] = {0.5, -1, 2};
    /* x used three times: y = x * x + x -> 2x + 1 */
    ct_tensor *x = leaf(from(xv, s3, 1));
    CHECK_OK(ct_backward(ct_sum(ct_add(ct_mul(x, x), x)), NULL, false));
    double w1[3] = {2, -1, 5};
    CHECK_TENSOR(ct_grad(x), w1, 3, 0, 0);
    /* a shared subexpression: a = exp(x); y = a * a + sin(a) -> (2a + cos a) a */
    ct_tensor *x2 = leaf(from(xv, s3, 1));
    ct_tensor *a = ct_exp(x2);
    CHECK_OK(ct_backward(ct_sum(ct_add(ct_mul(a, a), ct_sin(a))), NULL, false));
    double w2[3];
    for (int i = 0; i < 3; i++) {
        double e = exp(xv[i]);
        w2[i] = (2 * e + cos(e)) * e;
    }
    CHECK_TENSOR(ct_grad(x2), w2, 3, 1e-14, 0);
    /* repeated doubling y = y + y, 60 times: 2^60 paths, each node run once */
    ct_tensor *x3 = leaf(from(xv, s3, 1));
    ct_tensor *y = x3;
    for (int i = 0; i < 60; i++) {
        y = ct_add(y, y);
    }
    CHECK_OK(ct_backward(ct_sum(y), NULL, false));
    double p = ldexp(1.0, 60), w3[3] = {p, p, p};
    CHECK_TENSOR(ct_grad(x3), w3, 3, 0, 0);
    /* two views of one tensor recombined */
    ct_tensor *x4 = leaf(from(xv, s3, 1));
    ct_tensor *l = ct_narrow(x4, 0, 0, 2), *r = ct_narrow(x4, 0, 1, 2);
    CHECK_OK(ct_backward(ct_sum(ct_mul(l, r)), NULL, false));
    double w4[3] = {xv[1], xv[0] + xv[2], xv[1]};
    CHECK_TENSOR(ct_grad(x4), w4, 3, 0, 0);
    ct_scope_end();
}

/* A long chain: the engine must not recurse per node, and everything is freed after. */
static void test_deep_chain(void)
{
    size_t live = ct_memory_allocated();
    ct_scope_begin();
    double one = 1.0;
    ct_tensor *x = leaf(from(&one, NULL, 0));
    ct_tensor *y = x;
    for (int i = 0; i < 2000; i++) {
        y = i % 2 ? ct_mul_scalar(y, 1.001) : ct_add_scalar(y, 0.5);
    }
    CHECK(y && ct_requires_grad(y));
    CHECK_OK(ct_backward(y, NULL, true));
    CHECK_NEAR(ct_item(ct_grad(x)), pow(1.001, 1000), 1e-12);
    ct_tensor *g = NULL;
    CHECK_OK(ct_autograd_grad(&y, 1, &x, 1, NULL, false, false, false, &g));
    CHECK(g && fabs(ct_item(g) - pow(1.001, 1000)) < 1e-12);
    ct_scope_end();
    CHECK(ct_memory_allocated() == live);
    /* the same chain caller-owned (no scope open), each intermediate freed at once: the
       graph alone keeps the nodes alive, and freeing the root frees the whole chain */
    CHECK(ct_scope_depth() == 0);
    ct_tensor *x2 = leaf(from(&one, NULL, 0));
    ct_tensor *prev = ct_retain(x2);
    for (int i = 0; i < 2000; i++) {
        ct_tensor *next = ct_mul_scalar(prev, 1.0);
        if (prev == x2) {
            ct_release(prev); /* the reference ct_retain took */
        } else {
            ct_free(prev);
        }
        prev = next;
    }
    CHECK_OK(ct_backward(prev, NULL, false));
    CHECK_NEAR(ct_item(ct_grad(x2)), 1.0, 0);
    ct_free(prev);
    ct_free(x2);
    CHECK(ct_memory_allocated() == live);
}

static void test_broadcast_grad_shapes(void)
{
    ct_scope_begin();
    ct_manual_seed(14);
    int64_t s23[2] = {2, 3}, s3[1] = {3}, s13[2] = {1, 3}, s21[2] = {2, 1}, s123[3] = {1, 2, 3};
    ct_tensor *a = rg(D_NORMAL, s23, 2), *b = rg(D_NORMAL, s3, 1), *c = rg(D_NORMAL, s13, 2);
    ct_tensor *d = rg(D_NORMAL, NULL, 0), *e = rg(D_NORMAL, s21, 2);
    ct_tensor *f = rg(D_NORMAL, s123, 3);
    ct_tensor *y = ct_add(ct_sub(ct_mul(a, b), ct_div_scalar(c, 2.0)), ct_mul(d, e));
    y = ct_add(y, f); /* (1, 2, 3) */
    CHECK_OK(ct_backward(ct_sum(y), NULL, false));
    CHECK(ct_test_has_shape(ct_grad(a), s23, 2));
    CHECK(ct_test_has_shape(ct_grad(b), s3, 1));
    CHECK(ct_test_has_shape(ct_grad(c), s13, 2));
    CHECK(ct_test_has_shape(ct_grad(d), NULL, 0));
    CHECK(ct_test_has_shape(ct_grad(e), s21, 2));
    CHECK(ct_test_has_shape(ct_grad(f), s123, 3));
    double cg[3] = {-1, -1, -1}; /* each of c's elements is used by both rows, times -1/2 */
    CHECK_TENSOR(ct_grad(c), cg, 3, 0, 0);
    /* d's gradient sums over everything: sum(e) * 3 */
    double dsum = 3 * (ct_item(ct_select(ct_select(e, 0, 0), 0, 0)) +
                       ct_item(ct_select(ct_select(e, 0, 1), 0, 0)));
    CHECK_NEAR(ct_item(ct_grad(d)), dsum, 1e-12);
    /* expand's gradient sums back */
    ct_tensor *g = rg(D_NORMAL, s21, 2);
    int64_t big[3] = {4, 2, 3};
    CHECK_OK(ct_backward(ct_sum(ct_expand(g, big, 3)), NULL, false));
    double twelve[2] = {12, 12};
    CHECK(ct_test_has_shape(ct_grad(g), s21, 2));
    CHECK_TENSOR(ct_grad(g), twelve, 2, 0, 0);
    ct_scope_end();
}

static void test_dtype_promotion_grads(void)
{
    ct_scope_begin();
    int64_t s3[1] = {3};
    float av[3] = {1, 2, 3};
    double bv[3] = {0.5, -1, 4};
    ct_tensor *a = leaf(ct_tensor_from_data(av, CT_FLOAT32, s3, 1));
    ct_tensor *b = leaf(from(bv, s3, 1));
    ct_tensor *y = ct_mul(a, b);
    CHECK(ct_tensor_dtype(y) == F64);
    CHECK_OK(ct_backward(ct_sum(y), NULL, false));
    CHECK(ct_grad(a) && ct_tensor_dtype(ct_grad(a)) == CT_FLOAT32);
    CHECK(ct_grad(b) && ct_tensor_dtype(ct_grad(b)) == F64);
    CHECK_TENSOR(ct_grad(a), bv, 3, 0, 0);
    double avd[3] = {1, 2, 3};
    CHECK_TENSOR(ct_grad(b), avd, 3, 0, 0);
    /* float32 with C scalars stays float32; an int64 operand promotes to float32 */
    ct_tensor *a2 = leaf(ct_tensor_from_data(av, CT_FLOAT32, s3, 1));
    int64_t iv[3] = {2, 3, 4};
    ct_tensor *yi = ct_mul(ct_mul_scalar(a2, 2.5), from_i64(iv, s3, 1));
    CHECK(ct_tensor_dtype(yi) == CT_FLOAT32);
    CHECK_OK(ct_backward(ct_sum(yi), NULL, false));
    CHECK(ct_grad(a2) && ct_tensor_dtype(ct_grad(a2)) == CT_FLOAT32);
    double gi[3] = {5, 7.5, 10};
    CHECK_TENSOR(ct_grad(a2), gi, 3, 0, 0);
    /* a float32 0-dim tensor times a float64 tensor: result float64, 0-dim grad float32 */
    float s = 2.0f;
    ct_tensor *z = leaf(ct_tensor_from_data(&s, CT_FLOAT32, NULL, 0));
    ct_tensor *bb = leaf(from(bv, s3, 1));
    CHECK_OK(ct_backward(ct_sum(ct_mul(z, bb)), NULL, false));
    CHECK(ct_grad(z) && ct_tensor_dtype(ct_grad(z)) == CT_FLOAT32 && ct_dim(ct_grad(z)) == 0);
    CHECK_NEAR(ct_item(ct_grad(z)), 3.5, 0);
    /* to_dtype's gradient comes back in the source dtype */
    ct_tensor *a3 = leaf(ct_tensor_from_data(av, CT_FLOAT32, s3, 1));
    CHECK_OK(ct_backward(ct_sum(ct_mul_scalar(ct_to_dtype(a3, F64), 3.0)), NULL, false));
    CHECK(ct_grad(a3) && ct_tensor_dtype(ct_grad(a3)) == CT_FLOAT32);
    ct_scope_end();
}

/* Graphs are freed with their tensors: built and dropped, after backward, retained, with
   create_graph, and caller-owned outside any scope. */
static void test_graph_freed(void)
{
    size_t live = ct_memory_allocated();
    int64_t s23[2] = {2, 3}, s34[2] = {3, 4};
    ct_manual_seed(15);
    for (int mode = 0; mode < 4; mode++) {
        ct_scope_begin();
        ct_tensor *x = rg(D_NORMAL, s23, 2), *w = rg(D_NORMAL, s34, 2);
        ct_tensor *h = ct_relu(ct_matmul(x, w));
        ct_tensor *loss = ct_mean(ct_log_softmax(ct_mul(h, h), 1));
        if (mode == 1) {
            CHECK_OK(ct_backward(loss, NULL, false));
        } else if (mode == 2) {
            CHECK_OK(ct_backward(loss, NULL, true));
        } else if (mode == 3) {
            ct_tensor *g = NULL;
            CHECK_OK(ct_autograd_grad(&loss, 1, &w, 1, NULL, false, true, false, &g));
            CHECK_OK(ct_backward(ct_sum(ct_mul(g, g)), NULL, false));
            CHECK(ct_grad(x) != NULL);
        }
        ct_scope_end();
        CHECK_MSG(ct_memory_allocated() == live, "mode %d: %lld bytes live", mode,
                  (long long)(ct_memory_allocated() - live));
    }
    /* a graph kept past its inner scope, freed by the outer one */
    ct_scope_begin();
    ct_tensor *x = rg(D_NORMAL, s23, 2);
    ct_scope_begin();
    ct_tensor *kept = ct_keep(ct_sum(ct_exp(ct_mul(x, x))));
    ct_scope_end();
    CHECK_OK(ct_backward(kept, NULL, false));
    CHECK(ct_grad(x) != NULL);
    ct_scope_end();
    CHECK(ct_memory_allocated() == live);
    /* caller-owned tensors (no scope open): freed in any order */
    CHECK(ct_scope_depth() == 0);
    ct_tensor *a = ct_requires_grad_(ct_ones(s23, 2, F64), true);
    ct_tensor *b = ct_exp(a), *c = ct_sum(b);
    ct_free(a);
    ct_free(b);
    CHECK_OK(ct_backward(c, NULL, true)); /* the graph keeps a alive */
    ct_free(c);
    CHECK(ct_memory_allocated() == live);
}

void test_autograd(void)
{
    RUN(test_gradcheck_can_fail);
    RUN(test_gradcheck_unary);
    RUN(test_gradcheck_binary);
    RUN(test_gradcheck_where);
    RUN(test_gradcheck_views);
    RUN(test_gradcheck_reductions);
    RUN(test_max_min_ties);
    RUN(test_gradcheck_matmul);
    RUN(test_gradcheck_linear_relu_fused);
    RUN(test_gradcheck_softmax);
    RUN(test_gradcheck_losses);
    RUN(test_gradcheck_inplace);
    RUN(test_gradgradcheck);
    RUN(test_backward_grad_output);
    RUN(test_backward_accumulates);
    RUN(test_retain_graph);
    RUN(test_requires_grad_flags);
    RUN(test_no_grad);
    RUN(test_detach);
    RUN(test_version_counter);
    RUN(test_inplace_on_leaf);
    RUN(test_autograd_grad);
    RUN(test_second_derivatives);
    RUN(test_retain_grad);
    RUN(test_hooks);
    RUN(test_grad_fn_names);
    RUN(test_diamond_and_shared);
    RUN(test_deep_chain);
    RUN(test_broadcast_grad_shapes);
    RUN(test_dtype_promotion_grads);
    RUN(test_graph_freed);
}
