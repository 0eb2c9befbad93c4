/* tests/test_view7.c - the views and shape ops of issue 7 against PyTorch's numbers
 * (tests/golden/view7_golden.h from tools/gen_golden_view7.py): view_as, reshape_as,
 * expand_as, unflatten, mT, broadcast_to, broadcast_shapes, broadcast_tensors, slice, split,
 * split_with_sizes, chunk, tril and triu. Forward values on contiguous, transposed and
 * step-sliced inputs in float32 and float64 (and int64/bool where the op takes them), PyTorch's
 * gradients, gradcheck of every differentiable op, node names and PyTorch's error messages.
 */
#include "test.h"

#include <stdint.h>

#include "golden/view7_golden.h"

#define F64 CT_FLOAT64

static ct_tensor *from(const double *v, ct_dtype dt, const int64_t *s, int nd)
{
    ct_tensor *t = ct_tensor_from_data(v, F64, s, nd);
    return dt == F64 ? t : ct_to_dtype(t, dt);
}

#define CHECK_NODE(t, want)                                                                 \
    do {                                                                                    \
        const char *nm_ = ct_node_name(ct_grad_fn(t));                                      \
        CHECK_MSG(nm_ && strcmp(nm_, want) == 0, "grad_fn of %s is %s, want %s", #t,        \
                  nm_ ? nm_ : "NULL", want);                                                \
    } while (0)

/* ---- tril / triu ----------------------------------------------------------------------- */
/* Layout lay of (2, 3, 4) t: 0 itself, 1 transpose(1, 2), 2 t[:, :, ::2]. */
static ct_tensor *tri_layout(const ct_tensor *t, int lay)
{
    return lay == 0 ? ct_alias(t) : lay == 1 ? ct_transpose(t, 1, 2)
                                             : ct_slice(t, 2, 0, INT64_MAX, 2);
}

static void test_view7_tri_golden(void)
{
    static const double *const want[2][3][3][2] = {
        {{{v7_tril_l0_d0, v7_tril_l0_d0_grad}, {v7_tril_l0_d1, v7_tril_l0_d1_grad},
          {v7_tril_l0_d2, v7_tril_l0_d2_grad}},
         {{v7_tril_l1_d0, v7_tril_l1_d0_grad}, {v7_tril_l1_d1, v7_tril_l1_d1_grad},
          {v7_tril_l1_d2, v7_tril_l1_d2_grad}},
         {{v7_tril_l2_d0, v7_tril_l2_d0_grad}, {v7_tril_l2_d1, v7_tril_l2_d1_grad},
          {v7_tril_l2_d2, v7_tril_l2_d2_grad}}},
        {{{v7_triu_l0_d0, v7_triu_l0_d0_grad}, {v7_triu_l0_d1, v7_triu_l0_d1_grad},
          {v7_triu_l0_d2, v7_triu_l0_d2_grad}},
         {{v7_triu_l1_d0, v7_triu_l1_d0_grad}, {v7_triu_l1_d1, v7_triu_l1_d1_grad},
          {v7_triu_l1_d2, v7_triu_l1_d2_grad}},
         {{v7_triu_l2_d0, v7_triu_l2_d0_grad}, {v7_triu_l2_d1, v7_triu_l2_d1_grad},
          {v7_triu_l2_d2, v7_triu_l2_d2_grad}}}};
    static const int64_t diags[3] = {-1, 0, 2}, s[3] = {2, 3, 4};
    const ct_dtype dts[2] = {CT_FLOAT32, F64};
    for (int dt = 0; dt < 2; dt++) {
        for (int up = 0; up < 2; up++) {
            for (int lay = 0; lay < 3; lay++) {
                for (int k = 0; k < 3; k++) {
                    ct_scope_begin();
                    ct_tensor *x = ct_requires_grad_(from(v7_tri_x, dts[dt], s, 3), true);
                    ct_tensor *g = from(v7_tri_gout, dts[dt], s, 3);
                    ct_tensor *v = tri_layout(x, lay);
                    ct_tensor *out = up ? ct_triu(v, diags[k]) : ct_tril(v, diags[k]);
                    CHECK(out && ct_tensor_dtype(out) == dts[dt] && ct_is_contiguous(out));
                    CHECK_NODE(out, up ? "TriuBackward0" : "TrilBackward0");
                    CHECK_TENSOR(out, want[up][lay][k][0], ct_numel(v), 0, 0);
                    CHECK(ct_backward(out, tri_layout(g, lay), false) == CT_OK);
                    CHECK_TENSOR(ct_grad(x), want[up][lay][k][1], 24, 0, 0);
                    ct_scope_end();
                }
            }
        }
    }
}

static void test_view7_tri_int_bool(void)
{
    ct_scope_begin();
    int64_t v[12];
    for (int k = 0; k < 12; k++) {
        v[k] = k - 5;
    }
    const int64_t s[2] = {3, 4};
    ct_tensor *x = ct_tensor_from_data(v, CT_INT64, s, 2);
    ct_tensor *lo = ct_tril(x, 1), *up = ct_triu(x, -1);
    CHECK(lo && ct_tensor_dtype(lo) == CT_INT64 && up);
    CHECK(lo && !memcmp(ct_data_ptr(lo), v7_tril_int, sizeof v7_tril_int));
    CHECK(up && !memcmp(ct_data_ptr(up), v7_triu_int, sizeof v7_triu_int));
    ct_tensor *m = ct_tril(ct_ones(s, 2, CT_BOOL), 0);
    CHECK(m && ct_tensor_dtype(m) == CT_BOOL);
    const bool *mb = m ? (const bool *)ct_data_ptr(m) : NULL;
    for (int k = 0; mb && k < 12; k++) {
        CHECK_MSG(mb[k] == (v7_tril_bool[k] != 0), "bool tril at %d", k);
    }
    /* diagonals far outside the matrix: everything kept or nothing */
    CHECK(ct_item(ct_sum(ct_tril(ct_ones(s, 2, F64), INT64_MAX))) == 12);
    CHECK(ct_item(ct_sum(ct_triu(ct_ones(s, 2, F64), INT64_MIN))) == 12);
    CHECK(ct_item(ct_sum(ct_tril(ct_ones(s, 2, F64), INT64_MIN))) == 0);
    CHECK(ct_item(ct_sum(ct_triu(ct_ones(s, 2, F64), INT64_MAX))) == 0);
    const int64_t e[3] = {2, 0, 3};
    CHECK(ct_test_has_shape(ct_tril(ct_ones(e, 3, F64), 0), e, 3));
    ct_scope_end();
}

/* ---- slice ------------------------------------------------------------------------------- */
static void test_view7_slice_golden(void)
{
    static const double *const want[7][2] = {
        {v7_slice0, v7_slice0_grad}, {v7_slice1, v7_slice1_grad}, {v7_slice2, v7_slice2_grad},
        {v7_slice3, v7_slice3_grad}, {v7_slice4, v7_slice4_grad}, {v7_slice5, v7_slice5_grad},
        {v7_slice6, v7_slice6_grad}};
    const int64_t s[2] = {4, 6};
    const ct_dtype dts[2] = {CT_FLOAT32, F64};
    for (int dt = 0; dt < 2; dt++) {
        for (int k = 0; k < 7; k++) {
            const int64_t *r = v7_slices[k];
            ct_scope_begin();
            ct_tensor *x = ct_requires_grad_(ct_reshape(ct_arange(0, 24, 1, dts[dt]), s, 2), true);
            ct_tensor *out = ct_slice(x, r[0], r[1], r[2], r[3]);
            CHECK_MSG(ct_test_has_shape(out, r + 4, 2), "slice %d: shape", k);
            CHECK_NODE(out, "SliceBackward0");
            CHECK_TENSOR(out, want[k][0], r[4] * r[5], 0, 0);
            ct_tensor *g = ct_reshape(ct_arange(0, (double)(r[4] * r[5]), 1, dts[dt]), r + 4, 2);
            CHECK(ct_backward(out, g, false) == CT_OK);
            CHECK_TENSOR(ct_grad(x), want[k][1], 24, 0, 0);
            ct_scope_end();
        }
    }
    /* a view: writes through it reach the base */
    ct_scope_begin();
    ct_tensor *x = ct_zeros(s, 2, F64);
    ct_fill_(ct_slice(x, 1, 1, INT64_MAX, 2), 1);
    CHECK(ct_item(ct_sum(x)) == 12);
    ct_scope_end();
}

/* ---- split, split_with_sizes, chunk -------------------------------------------------- */
static void test_view7_pieces(void)
{
    int n_cases = (int)(sizeof v7_pieces / sizeof v7_pieces[0]);
    for (int k = 0; k < n_cases; k++) {
        const v7_piece_case *pc = &v7_pieces[k];
        ct_scope_begin();
        ct_tensor *t = ct_arange(0, (double)pc->size, 1, F64);
        ct_tensor *out[8];
        int count = pc->is_chunk ? ct_chunk(t, pc->arg, 0, NULL, 0)
                                 : ct_split(t, pc->arg, 0, NULL, 0);
        CHECK_MSG(count == pc->count, "case %d: count %d, want %d", k, count, pc->count);
        count = pc->is_chunk ? ct_chunk(t, pc->arg, -1, out, 8) : ct_split(t, pc->arg, -1, out, 8);
        CHECK_MSG(count == pc->count, "case %d: count %d, want %d", k, count, pc->count);
        for (int j = 0, start = 0; j < count && j < pc->count; j++) {
            CHECK_MSG(ct_size(out[j], 0) == pc->lens[j], "case %d piece %d", k, j);
            CHECK(ct_size(out[j], 0) == 0 || ct_item(ct_select(out[j], 0, 0)) == start);
            start += (int)pc->lens[j];
        }
        ct_scope_end();
    }
    ct_scope_begin();
    const int64_t s[2] = {2, 6}, sizes[3] = {1, 0, 5};
    ct_tensor *x = ct_reshape(ct_arange(0, 12, 1, F64), s, 2), *out[3];
    CHECK(ct_split_with_sizes(x, sizes, 3, 1, NULL, 0) == 3);
    CHECK(ct_split_with_sizes(x, sizes, 3, 1, out, 3) == 3);
    CHECK(ct_size(out[0], 1) == 1 && ct_size(out[1], 1) == 0 && ct_size(out[2], 1) == 5);
    CHECK(ct_item(ct_select(ct_select(out[2], 0, 1), 0, 0)) == 7);
    CHECK(ct_data_ptr(out[0]) == ct_data_ptr(x)); /* views */
    ct_scope_end();
}

/* ---- unflatten, mT, the *_as ops, broadcasting --------------------------------------- */
static void test_view7_shapes(void)
{
    ct_scope_begin();
    const int64_t s212[2] = {2, 12}, us[3] = {3, -1, 2}, want_u[4] = {2, 3, 2, 2};
    ct_tensor *x = ct_requires_grad_(ct_reshape(ct_arange(0, 24, 1, F64), s212, 2), true);
    ct_tensor *u = ct_unflatten(x, -1, us, 3);
    CHECK(ct_test_has_shape(u, want_u, 4) && ct_data_ptr(u) == ct_data_ptr(x));
    CHECK_TENSOR(u, v7_unflatten, 24, 0, 0);
    CHECK_NODE(u, "ViewBackward0");

    const int64_t s234[3] = {2, 3, 4}, s243[3] = {2, 4, 3};
    ct_tensor *y = ct_reshape(ct_arange(0, 24, 1, CT_FLOAT32), s234, 3);
    ct_tensor *m = ct_mt(y);
    CHECK(ct_test_has_shape(m, s243, 3) && ct_data_ptr(m) == ct_data_ptr(y));
    CHECK_TENSOR(m, v7_mt, 24, 0, 0);
    CHECK_TENSOR(ct_mt(ct_transpose(y, 0, 2)), v7_mt_t, 24, 0, 0);
    CHECK_NODE(ct_mt(ct_reshape(x, s234, 3)), "TransposeBackward0");

    ct_tensor *o = ct_zeros(s243, 3, CT_INT64);
    CHECK(ct_test_has_shape(ct_view_as(y, o), s243, 3));
    CHECK_NODE(ct_view_as(x, o), "ViewBackward0");
    ct_tensor *r = ct_reshape_as(ct_transpose(x, 0, 1), o); /* not viewable: a copy */
    CHECK(ct_test_has_shape(r, s243, 3) && ct_item(ct_select(ct_flatten(r, 0, -1), 0, 1)) == 12);
    const int64_t s14[2] = {1, 4}, s34[2] = {3, 4}, s234b[3] = {2, 3, -1};
    ct_tensor *row = ct_reshape(ct_arange(0, 4, 1, F64), s14, 2);
    ct_tensor *e = ct_expand_as(row, ct_zeros(s34, 2, F64));
    CHECK(ct_test_has_shape(e, s34, 2) && ct_stride(e, 0) == 0);
    ct_tensor *b = ct_broadcast_to(ct_requires_grad_(ct_clone(row), true), s234b, 3);
    const int64_t s234w[3] = {2, 3, 4};
    CHECK(ct_test_has_shape(b, s234w, 3) && ct_stride(b, 0) == 0 && ct_stride(b, 1) == 0);
    CHECK_NODE(b, "ExpandBackward0");
    ct_scope_end();
}

static void test_view7_broadcast(void)
{
    ct_scope_begin();
    const int64_t s31[2] = {3, 1}, s14[2] = {1, 4}, s34[2] = {3, 4};
    const ct_tensor *in[3] = {ct_reshape(ct_arange(0, 3, 1, F64), s31, 2),
                              ct_add_scalar(ct_reshape(ct_arange(0, 4, 1, F64), s14, 2), 10),
                              ct_add_scalar(ct_arange(0, 4, 1, F64), 20)};
    ct_tensor *out[3] = {NULL, NULL, NULL};
    CHECK(ct_broadcast_tensors(in, 3, out) == CT_OK);
    const double *want[3] = {v7_bt0, v7_bt1, v7_bt2};
    for (int k = 0; k < 3; k++) {
        CHECK(ct_test_has_shape(out[k], s34, 2));
        CHECK_TENSOR(out[k], want[k], 12, 0, 0);
    }
    /* a tensor that has the shape already is returned itself (as PyTorch) */
    const ct_tensor *same[2] = {out[0], in[2]};
    ct_tensor *o2[2] = {NULL, NULL};
    CHECK(ct_broadcast_tensors(same, 2, o2) == CT_OK && o2[0] == out[0] && o2[1] != in[2]);
    const int64_t s21[2] = {2, 1};
    const ct_tensor *bad[2] = {in[0], ct_zeros(s21, 2, F64)};
    CHECK(ct_broadcast_tensors(bad, 2, o2) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_broadcast_tensors: The size of tensor a (3) must match the size "
                "of tensor b (2) at non-singleton dimension 0");
    ct_scope_end();

    /* broadcast_shapes: the cases of tools/gen_golden_view7.py, in order */
    static const int64_t a23[2] = {2, 3}, a43[2] = {4, 3}, a3[1] = {3}, a21[2] = {2, 1},
                         a4[1] = {4}, a521[3] = {5, 2, 1}, a1413[4] = {1, 4, 1, 3}, a1[1] = {1},
                         a0[1] = {0}, a2[1] = {2}, a111[3] = {1, 1, 1}, am1[1] = {-1};
    static const int64_t *const sh[8][3] = {{a23, a43, NULL}, {a3, a21, a4}, {a3, a521, a1413},
                                            {a1, a0, NULL},   {NULL, a2, NULL}, {a2, a111, NULL},
                                            {a3, am1, NULL},  {am1, NULL, NULL}};
    static const int nd[8][3] = {{2, 2, 0}, {1, 2, 1}, {1, 3, 4}, {1, 1, 0},
                                 {0, 1, 0}, {1, 3, 0}, {1, 1, 0}, {1, 0, 0}};
    static const int n[8] = {2, 3, 3, 2, 2, 2, 2, 1};
    for (int k = 0; k < 8; k++) {
        int64_t res[CT_MAX_DIMS];
        int rn = -1;
        char buf[200];
        ct_status st = ct_broadcast_shapes(sh[k], nd[k], n[k], res, &rn);
        if (v7_bshapes[k][0] == '[') {
            CHECK_MSG(st == CT_OK, "case %d: %s", k, ct_error() ? ct_error() : "?");
            size_t len = 0;
            len += (size_t)snprintf(buf, sizeof buf, "[");
            for (int d = 0; d < rn; d++) {
                len += (size_t)snprintf(buf + len, sizeof buf - len, d ? ", %lld" : "%lld",
                                        (long long)res[d]);
            }
            snprintf(buf + len, sizeof buf - len, "]");
            CHECK_MSG(!strcmp(buf, v7_bshapes[k]), "case %d: %s, want %s", k, buf, v7_bshapes[k]);
        } else {
            CHECK_MSG(st != CT_OK, "case %d passed", k);
            CHECK_ERROR(strstr(v7_bshapes[k], "negative") ? CT_ERR_VALUE : CT_ERR_SHAPE,
                        v7_bshapes[k]);
        }
    }
    int64_t res[CT_MAX_DIMS];
    int rn = -1;
    CHECK(ct_broadcast_shapes(NULL, NULL, 0, res, &rn) == CT_OK && rn == 0);
}

/* ---- gradcheck -------------------------------------------------------------------------- */
static ct_tensor *gc_tril(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    int64_t k = (int64_t)(intptr_t)user;
    return ct_add(ct_tril(ct_transpose(in[0], 0, 1), k), ct_triu(in[0], -k));
}

static ct_tensor *gc_slice(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    return ct_slice(ct_slice(in[0], 1, -4, INT64_MAX, 2), 0, 1, -1, 1);
}

/* every piece times its index + 1, concatenated */
static ct_tensor *gc_pieces(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    ct_tensor *p[4];
    const int64_t sizes[3] = {2, 0, 3};
    int which = (int)(intptr_t)user;
    int count = which == 0   ? ct_split(in[0], 2, 1, p, 4)
                : which == 1 ? ct_chunk(in[0], 2, 1, p, 4)
                             : ct_split_with_sizes(in[0], sizes, 3, 1, p, 4);
    if (count < 0) {
        return NULL;
    }
    for (int k = 0; k < count; k++) {
        p[k] = ct_mul_scalar(p[k], k + 1);
    }
    return ct_cat((const ct_tensor *const *)p, count, 1);
}

/* unflatten, mT, broadcast_to, view_as, expand_as and reshape_as (of a non-viewable input)
   of in[0] (2, 5) and in[1] (5, 1), combined into a (2, 5) result */
static ct_tensor *gc_shapes(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    (void)user;
    const int64_t us[2] = {-1, 1}, s25[2] = {2, 5};
    ct_tensor *v = ct_view_as(ct_unflatten(in[0], 1, us, 2), in[0]);
    ct_tensor *b = ct_broadcast_to(ct_mt(in[1]), s25, 2);
    ct_tensor *e = ct_expand_as(ct_mt(in[1]), in[0]);
    ct_tensor *r = ct_reshape_as(ct_t(in[0]), in[0]);
    return ct_add(ct_mul(ct_mul(v, e), b), ct_mul(r, r));
}

static ct_tensor *gc_broadcast_tensors(ct_tensor *const *in, int n, void *user)
{
    (void)user;
    ct_tensor *out[2];
    if (ct_broadcast_tensors((const ct_tensor *const *)in, n, out) != CT_OK) {
        return NULL;
    }
    return ct_mul(out[0], out[1]);
}

/* d/dx sum(op(x * x)) with create_graph, for gradcheck of the double backward: op is tril
   (user 0), triu (1) or a step slice (2) */
static ct_tensor *gc_first_grad(ct_tensor *const *in, int n, void *user)
{
    (void)n;
    int which = (int)(intptr_t)user;
    bool prev = ct_is_grad_enabled();
    ct_set_grad_enabled(true); /* gradcheck evaluates under no_grad */
    ct_tensor *sq = ct_mul(in[0], in[0]);
    ct_tensor *y = which == 0 ? ct_tril(sq, -1) : which == 1 ? ct_triu(sq, 1)
                                                             : ct_slice(sq, 1, 1, INT64_MAX, 2);
    ct_tensor *s = ct_sum(y), *g = NULL;
    if (ct_autograd_grad(&s, 1, in, 1, NULL, false, true, false, &g) != CT_OK) {
        g = NULL;
    }
    ct_set_grad_enabled(prev);
    return g;
}

/* CHECK(ct_gradcheck(...)) printing and clearing the error of a failure. */
#define GC_OK(label, k, ...)                                                                \
    do {                                                                                    \
        CHECK_MSG(ct_gradcheck(__VA_ARGS__), "%s %d: %s", label, (int)(k),                  \
                  ct_error() ? ct_error() : "");                                            \
        ct_error_clear();                                                                   \
    } while (0)

static void test_view7_gradcheck(void)
{
    ct_scope_begin();
    ct_manual_seed(7);
    const int64_t s45[2] = {4, 5}, s25[2] = {2, 5}, s51[2] = {5, 1}, s13[2] = {1, 3};
    const int64_t s55[2] = {5, 5};
    ct_tensor *x = ct_requires_grad_(ct_randn(s45, 2, F64, NULL), true);
    ct_tensor *m = ct_requires_grad_(ct_randn(s55, 2, F64, NULL), true);
    for (intptr_t k = -2; k <= 2; k += 2) {
        GC_OK("tril/triu", k, gc_tril, &m, 1, (void *)k, NULL);
    }
    GC_OK("slice", 0, gc_slice, &x, 1, NULL, NULL);
    for (intptr_t k = 0; k < 3; k++) {
        GC_OK("double backward", k, gc_first_grad, &x, 1, (void *)k, NULL);
        GC_OK("pieces", k, gc_pieces, &x, 1, (void *)k, NULL);
    }
    ct_tensor *sh[2] = {ct_requires_grad_(ct_randn(s25, 2, F64, NULL), true),
                        ct_requires_grad_(ct_randn(s51, 2, F64, NULL), true)};
    GC_OK("shapes", 0, gc_shapes, sh, 2, NULL, NULL);
    ct_tensor *bt[2] = {ct_requires_grad_(ct_randn(s13, 2, F64, NULL), true),
                        ct_requires_grad_(ct_randn(s51, 2, F64, NULL), true)};
    GC_OK("broadcast_tensors", 0, gc_broadcast_tensors, bt, 2, NULL, NULL);
    ct_scope_end();
}

/* ---- errors ---------------------------------------------------------------------------- */
static void test_view7_errors(void)
{
    ct_scope_begin();
    const int64_t s26[2] = {2, 6}, s3[1] = {3}, s36[2] = {3, 6};
    ct_tensor *x = ct_zeros(s26, 2, F64), *v = ct_zeros(s3, 1, F64);
    ct_tensor *z = ct_scalar_tensor(1, F64), *p[4];
    const int64_t u1[2] = {4, -1}, u2[2] = {-1, -1}, u3[2] = {-1, 0}, u4[2] = {3, 2};
    CHECK(!ct_unflatten(x, 1, u1, 2));
    CHECK_ERROR(CT_ERR_SHAPE, "ct_unflatten: unflatten: Provided sizes [4, -1] don't multiply up "
                "to the size of dim 1 (6) in the input tensor");
    CHECK(!ct_unflatten(x, 1, u1, 0));
    CHECK_ERROR(CT_ERR_SHAPE, "unflatten: sizes must be non-empty");
    CHECK(!ct_unflatten(x, 1, u2, 2));
    CHECK_ERROR(CT_ERR_SHAPE, "only one dimension can be inferred");
    CHECK(!ct_unflatten(x, 1, u3, 2));
    CHECK_ERROR(CT_ERR_SHAPE, "Provided sizes [-1, 0] don't multiply up");
    CHECK(!ct_unflatten(x, 2, u4, 2));
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                "got 2)");
    const int64_t u5[3] = {INT64_MAX / 2, 4, -2};
    CHECK(!ct_unflatten(x, 1, u5, 3));
    CHECK_ERROR(CT_ERR_SHAPE, "Provided sizes [4611686018427387903, 4, -2] don't multiply up");
    CHECK(!ct_unflatten(z, 0, u4, 1));
    CHECK_ERROR(CT_ERR_INDEX, "Dimension specified as 0 but tensor has no dimensions");
    CHECK(!ct_mt(v));
    CHECK_ERROR(CT_ERR_SHAPE, "ct_mt: tensor.mT is only supported on matrices or batches of "
                "matrices. Got 1-D tensor.");
    CHECK(!ct_view_as(x, ct_zeros(s3, 1, F64)));
    CHECK_ERROR(CT_ERR_SHAPE, "shape '[3]' is invalid for input of size 12");
    CHECK(!ct_expand_as(x, ct_zeros(s36, 2, F64)));
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (3) must match the existing size "
                "(2) at non-singleton dimension 0.  Target sizes: [3, 6].  Tensor sizes: [2, 6]");
    CHECK(!ct_broadcast_to(x, s36, 2));
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (3) must match the existing size");
    CHECK(!ct_slice(x, 1, 0, 5, 0));
    CHECK_ERROR(CT_ERR_VALUE, "ct_slice: slice step must be positive");
    CHECK(!ct_slice(x, 3, 0, 5, 1));
    CHECK_ERROR(CT_ERR_INDEX, "Dimension out of range (expected to be in range of [-2, 1], but "
                "got 3)");
    CHECK(!ct_slice(z, 0, 0, 5, 1));
    CHECK_ERROR(CT_ERR_INDEX, "slice() cannot be applied to a 0-dim tensor.");
    CHECK(ct_split(x, 0, 1, p, 4) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "ct_split: split_size can only be 0 if dimension size is 0, but got "
                "dimension size of 6");
    CHECK(ct_split(x, -1, 1, p, 4) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "split expects split_size be non-negative, but got split_size=-1");
    CHECK(ct_split(x, 2, 5, p, 4) == -1);
    CHECK_ERROR(CT_ERR_INDEX, "but got 5)");
    CHECK(ct_split(z, 1, 0, p, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "split expects at least a 1-dimensional tensor");
    CHECK(ct_split(x, 1, 1, p, 4) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "ct_split: the output array holds 4 tensors but the split makes 6");
    const int64_t w1[2] = {2, 2}, w2[2] = {7, -1};
    CHECK(ct_split_with_sizes(x, w1, 2, 1, p, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "split_with_sizes expects split_sizes to sum exactly to 6 (input "
                "tensor's size at dimension 1), but got split_sizes=[2, 2]");
    CHECK(ct_split_with_sizes(x, w2, 2, 1, p, 4) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "split_with_sizes expects split_sizes have only non-negative "
                "entries, but got split_sizes=[7, -1]");
    CHECK(ct_split_with_sizes(z, w1, 2, 0, p, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "split expects at least a 1-dimensional tensor");
    CHECK(ct_chunk(x, 0, 1, p, 4) == -1);
    CHECK_ERROR(CT_ERR_VALUE, "ct_chunk: chunk expects `chunks` to be greater than 0, got: 0");
    CHECK(ct_chunk(z, 1, 0, p, 4) == -1);
    CHECK_ERROR(CT_ERR_SHAPE, "chunk expects at least a 1-dimensional tensor");
    CHECK(!ct_tril(z, 0));
    CHECK_ERROR(CT_ERR_SHAPE, "ct_tril: tril: input tensor must have at least 2 dimensions");
    CHECK(!ct_triu(v, 0));
    CHECK_ERROR(CT_ERR_SHAPE, "ct_triu: triu: input tensor must have at least 2 dimensions");
    /* NULL propagation of the functions that are not ops */
    CHECK(ct_split(NULL, 1, 0, p, 4) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_split");
    CHECK(ct_chunk(NULL, 1, 0, p, 4) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_chunk");
    CHECK(ct_split_with_sizes(x, NULL, 2, 0, p, 4) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_split_with_sizes");
    const ct_tensor *ts[2] = {x, NULL};
    CHECK(ct_broadcast_tensors(ts, 2, p) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_broadcast_tensors");
    int nd = 0;
    int64_t out[CT_MAX_DIMS];
    CHECK(ct_broadcast_shapes(NULL, &nd, 1, out, &nd) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_broadcast_shapes");
    ct_scope_end();
}

/* sum over k of (k + 1) * piece_k of split(y, 2, 1), chunk(y, 2, 0), unbind(y, 1), plus
   sum(y): the pieces' backwards add into y's gradient in place where the engine allows */
static ct_tensor *pieces_loss(ct_tensor *y)
{
    ct_tensor *p[6], *loss = ct_sum(y);
    int counts[3] = {ct_split(y, 2, 1, p, 6), 0, 0};
    for (int k = 0; k < counts[0]; k++) {
        loss = ct_add(loss, ct_mul_scalar(ct_sum(p[k]), k + 1));
    }
    counts[1] = ct_chunk(y, 2, 0, p, 6);
    for (int k = 0; k < counts[1]; k++) {
        loss = ct_add(loss, ct_mul_scalar(ct_sum(p[k]), 10 * (k + 1)));
    }
    counts[2] = ct_unbind(y, 1, p, 6);
    for (int k = 0; k < counts[2]; k++) {
        loss = ct_add(loss, ct_mul_scalar(ct_sum(p[k]), 100 * (k + 1)));
    }
    return loss;
}

/* The pieces of a non-leaf: .grad of the leaf and of the retained non-leaf, and
   ct_autograd_grad, against d(loss)/dy = 1 + (j / 2 + 1) + 10 (i / 2 + 1) + 100 (j + 1) */
static void test_view7_pieces_backward(void)
{
    ct_scope_begin();
    int64_t s[2] = {4, 6};
    double want[24];
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 6; j++) {
            want[i * 6 + j] = 1 + (j / 2 + 1) + 10 * (i / 2 + 1) + 100 * (j + 1);
        }
    }
    ct_tensor *x = ct_requires_grad_(ct_ones(s, 2, CT_FLOAT32), true);
    ct_tensor *y = ct_mul_scalar(x, 3);
    ct_retain_grad(y);
    CHECK(ct_backward(pieces_loss(y), NULL, false) == CT_OK);
    CHECK(CHECK_TENSOR(ct_grad(y), want, 24, 0, 0));
    ct_tensor *dx = ct_div_scalar(ct_grad(x), 3);
    CHECK(CHECK_TENSOR(dx, want, 24, 0, 0));
    ct_tensor *y2 = ct_mul_scalar(x, 3), *loss = pieces_loss(y2), *dy = NULL;
    CHECK(ct_autograd_grad(&loss, 1, &y2, 1, NULL, false, false, false, &dy) == CT_OK);
    CHECK(dy && CHECK_TENSOR(dy, want, 24, 0, 0));
    ct_scope_end();
}

void test_view7(void)
{
    RUN(test_view7_tri_golden);
    RUN(test_view7_tri_int_bool);
    RUN(test_view7_slice_golden);
    RUN(test_view7_pieces);
    RUN(test_view7_pieces_backward);
    RUN(test_view7_shapes);
    RUN(test_view7_broadcast);
    RUN(test_view7_gradcheck);
    RUN(test_view7_errors);
}
