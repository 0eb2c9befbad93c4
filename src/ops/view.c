/* ops/view.c - views over shared storage and shape ops (cat, stack), as op descriptors.
 *
 * A view op's meta checks its arguments and computes the view's geometry (sizes, strides,
 * offset) into the call's state; its composite makes a new tensor struct over the input's
 * storage (no data touched, so it runs on any device). reshape, flatten, narrow (through
 * slice), contiguous, stack, view_as, reshape_as, expand_as, unflatten, mT and broadcast_to
 * are built on other ops, which record their autograd; split, split_with_sizes and chunk
 * (aten::slice per piece) and broadcast_tensors (aten::expand per tensor) are public functions
 * over ops, as their outputs are lists; cat, tril/triu and the slice/select backward ops copy
 * data with CPU kernels. A view's backward maps its gradient back to the input's shape.
 * The second part (issue 7's second slice) adds the views diagonal, as_strided, unfold and
 * movedim (over permute), the copies flip and diag_embed (CPU kernels), composites over those
 * ops (repeat, tile, repeat_interleave, fliplr/flipud, roll, rot90, diag, diagflat, the
 * stacks) and the list functions unbind and tensor_split/hsplit/vsplit/dsplit (select and
 * slice views).
 */
#include "../core/internal.h"
#include "view.h"
#include "pointwise.h"
#include "../autograd/autograd.h"

#include <limits.h>
#include <string.h>

/* What a view op's meta computes for its kernel (c->state, in the public function's frame):
   the view's geometry, and the integers its autograd node keeps (ct__view_record). Slices
   and selects keep {dim, start, end, step, is_select}; cat and stack keep {dim}. */
typedef struct ct__view_geom {
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], offset;
    int ndim;
    int n_ints;
    int64_t ints[CT_MAX_DIMS];
} ct__view_geom;

/* Private dispatched ops defined after the descriptors (backward formulas and composites
   call them). */
static ct_tensor *ct__slice(const char *fn, const ct_tensor *t, int64_t dim, int64_t start,
                            int64_t end, int64_t step);
static ct_tensor *ct__slice_scatter(const ct_tensor *g, const ct__edge *in, const int64_t *ints);

/* ---- derivative formulas ------------------------------------------------------------- */
static void ct__view_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_reshape(g, n->next[0].sizes, n->next[0].ndim);
}

CT__GLUE_BEGIN
static void ct__permute_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int64_t inv[CT_MAX_DIMS];
    for (int d = 0; d < g->ndim; d++) {
        inv[n->i[d]] = d;
    }
    gi[0] = ct_permute(g, inv, g->ndim);
}

static void ct__transpose_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_transpose(g, n->i[0], n->i[1]);
}

static void ct__t_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    (void)n;
    gi[0] = ct_t(g);
}

static void ct__unsqueeze_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_squeeze_dim(g, n->i[0]);
}

/* slice and select: zeros of the input's shape with g in the slice (select_backward,
   slice_backward); g added into the slice of the input's gradient so far instead where the
   engine lets it (the pieces of split, chunk and unbind: no zeros, no whole-size sums). */
static void ct__slice_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    ct_tensor *acc = ct__grad_buffer(&n->next[0], g);
    if (acc) {
        ct_add_(n->i[4] ? ct_select(acc, n->i[0], n->i[1])
                        : ct__slice("ct_slice", acc, n->i[0], n->i[1], n->i[2], n->i[3]),
                g, 1.0);
        return;
    }
    gi[0] = ct__slice_scatter(g, &n->next[0], n->i);
}

/* select_backward and slice_backward are linear in g: their own backward takes the same
   slice of gg. */
static void ct__slice_scatter_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    gi[0] = n->i[4] ? ct_select(gg, n->i[0], n->i[1])
                    : ct__slice("ct_slice", gg, n->i[0], n->i[1], n->i[2], n->i[3]);
}

static void ct__cat_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int d = (int)n->i[0];
    int64_t start = 0;
    for (int k = 0; k < n->n_next; k++) {
        int64_t length = n->next[k].sizes[d];
        if (ct__needs_grad(n, k)) {
            gi[k] = ct_narrow(g, d, start, length);
        }
        start += length;
    }
}

static void ct__tril_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_tril(g, n->i[0]);
}

static void ct__triu_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_triu(g, n->i[0]);
}

/* ---- geometry helpers ------------------------------------------------------------------ */
/* Resolves one -1 in sizes against numel; false + error when impossible. */
static bool ct__infer_size(const char *op, const int64_t *sizes, int ndim, int64_t numel,
                           int64_t *out)
{
    int infer = -1;
    int64_t prod = 1;
    char buf[160];
    if (ndim > 0 && ct__null(op, sizes)) {
        return false;
    }
    if (ndim < 0 || ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, op, "invalid number of dimensions %d", ndim);
        return false;
    }
    for (int d = 0; d < ndim; d++) {
        if (sizes[d] == -1) {
            if (infer >= 0) {
                ct__fail(CT_ERR_SHAPE, op, "only one dimension can be inferred");
                return false;
            }
            infer = d;
        } else if (sizes[d] < 0) {
            ct__fail(CT_ERR_SHAPE, op, "invalid shape dimension %lld", (long long)sizes[d]);
            return false;
        } else {
            prod *= sizes[d];
        }
        out[d] = sizes[d];
    }
    if (infer >= 0 && prod > 0 && numel % prod == 0) {
        out[infer] = numel / prod;
        prod = numel;
    }
    if (prod != numel || (infer >= 0 && prod == 0)) {
        ct__fail(CT_ERR_SHAPE, op, "shape '%s' is invalid for input of size %lld",
                 ct__shape_str(sizes, ndim, buf, sizeof buf), (long long)numel);
        return false;
    }
    return true;
}

/* Strides for viewing t as sizes without copying (PyTorch's computeStride); false when the
   view would span non-contiguous chunks. */
static bool ct__view_strides(const ct_tensor *t, const int64_t *sizes, int ndim, int64_t *strides)
{
    if (t->ndim == 0 || ct_numel(t) == 0) {
        ct__contiguous_strides(sizes, ndim, strides);
        return true;
    }
    int view_d = ndim - 1;
    int64_t chunk = t->strides[t->ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int td = t->ndim - 1; td >= 0; td--) {
        tensor_numel *= t->sizes[td];
        if (td == 0 || (t->sizes[td - 1] != 1 && t->strides[td - 1] != tensor_numel * chunk)) {
            while (view_d >= 0 && (view_numel < tensor_numel || sizes[view_d] == 1)) {
                strides[view_d] = view_numel * chunk;
                view_numel *= sizes[view_d];
                view_d--;
            }
            if (view_numel != tensor_numel) {
                return false;
            }
            if (td > 0) {
                chunk = t->strides[td - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

/* ---- meta: checks and geometry ----------------------------------------------------------- */
/* Starts a view op's meta: the call's dtype column (views run no kernel of a dtype) and its
   geometry, initialised to the input's own. */
static ct__view_geom *ct__geom(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = (ct__view_geom *)c->state;
    c->dtype = t->dtype;
    g->ndim = t->ndim;
    g->offset = t->offset;
    g->n_ints = 0;
    memcpy(g->sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    memcpy(g->strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    return g;
}

/* alias, contiguous: the input's geometry, no checks. */
static bool ct__alias_meta(ct_op_call *c)
{
    ct__geom(c);
    return true;
}

/* The view's sizes from attribute 0 (one may be -1) and, when the input's strides allow a
   view, its strides (*viewable). */
static bool ct__shape_geom(ct_op_call *c, bool *viewable)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    g->ndim = (int)c->attrs[0].i;
    if (!ct__infer_size(c->fn, c->attrs[0].ints, g->ndim, ct_numel(t), g->sizes)) {
        return false;
    }
    *viewable = ct__view_strides(t, g->sizes, g->ndim, g->strides);
    return true;
}

static bool ct__view_meta(ct_op_call *c)
{
    bool viewable = false;
    if (!ct__shape_geom(c, &viewable)) {
        return false;
    }
    if (!viewable) {
        ct__fail(CT_ERR_SHAPE, c->fn, "view size is not compatible with input tensor's size and "
                 "stride (at least one dimension spans across two contiguous subspaces). Use "
                 ".reshape(...) instead.");
    }
    return viewable;
}

/* reshape: ints[0] says whether a view is possible (else the composite copies first). */
static bool ct__reshape_meta(ct_op_call *c)
{
    bool viewable = false;
    if (!ct__shape_geom(c, &viewable)) {
        return false;
    }
    ct__view_geom *g = (ct__view_geom *)c->state;
    g->ints[0] = viewable;
    return true;
}

/* flatten (attributes start_dim, end_dim): the flattened sizes, which the composite reshapes
   to; a 0-dim input becomes 1-D. */
static bool ct__flatten_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    if (t->ndim == 0) {
        g->ndim = 1;
        g->sizes[0] = 1;
        return true;
    }
    int s = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    int e = s < 0 ? -1 : ct__wrap_dim(c->fn, c->attrs[1].i, t->ndim);
    if (e < 0) {
        return false;
    }
    if (s > e) {
        ct__fail(CT_ERR_VALUE, c->fn, "flatten() has invalid args: start_dim cannot come after "
                 "end_dim");
        return false;
    }
    g->ndim = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d <= s || d > e) {
            g->sizes[g->ndim++] = t->sizes[d];
        } else {
            g->sizes[g->ndim - 1] *= t->sizes[d];
        }
    }
    return true;
}

/* permute (attribute 0: dims); the node keeps the permutation. */
static bool ct__permute_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *dims = c->attrs[0].ints;
    int ndim = (int)c->attrs[0].i;
    if (ndim > 0 && ct__null(c->fn, dims)) {
        return false;
    }
    if (ndim != t->ndim) {
        ct__fail(CT_ERR_SHAPE, c->fn, "number of dims don't match in permute");
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    bool seen[CT_MAX_DIMS] = {false};
    for (int d = 0; d < ndim; d++) {
        int k = ct__wrap_dim(c->fn, dims[d], ndim);
        if (k < 0) {
            return false;
        }
        if (seen[k]) {
            ct__fail(CT_ERR_VALUE, c->fn, "repeated dim in permute");
            return false;
        }
        seen[k] = true;
        g->ints[d] = k;
        g->sizes[d] = t->sizes[k];
        g->strides[d] = t->strides[k];
    }
    g->n_ints = ndim;
    return true;
}

/* Swaps dims a and b of g (a == b: nothing). */
static void ct__swap_dims(ct__view_geom *g, int a, int b)
{
    int64_t size = g->sizes[a], stride = g->strides[a];
    g->sizes[a] = g->sizes[b];
    g->strides[a] = g->strides[b];
    g->sizes[b] = size;
    g->strides[b] = stride;
}

/* transpose (attributes dim0, dim1; a 0-dim input takes dims -1 and 0); the node keeps the
   two dims. */
static bool ct__transpose_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    int a = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    int b = a < 0 ? -1 : ct__wrap_dim(c->fn, c->attrs[1].i, t->ndim);
    if (b < 0) {
        return false;
    }
    if (t->ndim > 0) {
        ct__swap_dims(g, a, b);
    }
    g->ints[0] = a;
    g->ints[1] = b;
    g->n_ints = 2;
    return true;
}

static bool ct__t_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "t() expects a tensor with <= 2 dimensions, but self is "
                 "%dD", t->ndim);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    if (t->ndim == 2) {
        ct__swap_dims(g, 0, 1);
    }
    return true;
}

/* unsqueeze (attribute 0: dim in [-ndim-1, ndim]); the node keeps the dim. */
static bool ct__unsqueeze_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "tensors have at most %d dimensions", CT_MAX_DIMS);
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim + 1);
    if (d < 0) {
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    for (int k = 0, j = 0; k <= t->ndim; k++) {
        if (k == d) {
            g->sizes[k] = 1;
            g->strides[k] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            g->sizes[k] = t->sizes[j];
            g->strides[k] = t->strides[j];
            j++;
        }
    }
    g->ndim = t->ndim + 1;
    g->ints[0] = d;
    g->n_ints = 1;
    return true;
}

/* Drops the size-1 dims of the input (only: that dim alone; -1: every one). */
static void ct__squeeze_geom(ct_op_call *c, int only)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    g->ndim = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1 && (only < 0 || only == d)) {
            continue;
        }
        g->sizes[g->ndim] = t->sizes[d];
        g->strides[g->ndim++] = t->strides[d];
    }
}

static bool ct__squeeze_meta(ct_op_call *c)
{
    ct__squeeze_geom(c, -1);
    return true;
}

/* squeeze.dim (attribute 0: dim; a 0-dim input takes -1 and 0 and stays as it is). */
static bool ct__squeeze_dim_meta(ct_op_call *c)
{
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, c->inputs[0]->ndim);
    if (d < 0) {
        return false;
    }
    ct__squeeze_geom(c, d);
    return true;
}

/* expand (attribute 0: size; -1 keeps a size, new leading dims allowed): stride 0 along the
   expanded dims. */
static bool ct__expand_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[0].ints;
    int ndim = (int)c->attrs[0].i;
    if (ndim > 0 && ct__null(c->fn, sizes)) {
        return false;
    }
    if (ndim < t->ndim || ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "the number of sizes provided (%d) must be greater or equal "
                 "to the number of dimensions in the tensor (%d)", ndim, t->ndim);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    for (int d = ndim - 1; d >= 0; d--) {
        int td = d - (ndim - t->ndim);
        int64_t want = sizes[d];
        if (td < 0) {
            if (want < 0) {
                ct__fail(CT_ERR_SHAPE, c->fn, "The expanded size of the tensor (%lld) isn't "
                         "allowed in a leading, non-existing dimension %d", (long long)want, d);
                return false;
            }
            g->sizes[d] = want;
            g->strides[d] = 0;
            continue;
        }
        int64_t have = t->sizes[td];
        if (want == -1) {
            want = have;
        }
        if (have != want && have != 1) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, c->fn, "The expanded size of the tensor (%lld) must match the "
                     "existing size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                     "Tensor sizes: %s", (long long)want, (long long)have, d,
                     ct__shape_str(sizes, ndim, a, sizeof a),
                     ct__shape_str(t->sizes, t->ndim, b, sizeof b));
            return false;
        }
        g->sizes[d] = want;
        g->strides[d] = have == want ? t->strides[td] : 0;
    }
    g->ndim = ndim;
    return true;
}

/* narrow (attributes dim, start, length; start may count from the end): ints {dim, start,
   end} of the slice the composite takes. */
static bool ct__narrow_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, c->fn, "narrow() cannot be applied to a 0-dim tensor.");
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    int64_t size = t->sizes[d], start = c->attrs[1].i, length = c->attrs[2].i;
    if (start < 0) {
        start += size;
    }
    if (start < 0 || start > size || length < 0 || start + length > size) {
        ct__fail(CT_ERR_INDEX, c->fn, "start (%lld) + length (%lld) exceeds dimension size "
                 "(%lld).", (long long)start, (long long)length, (long long)size);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = d;
    g->ints[1] = start;
    g->ints[2] = start + length;
    return true;
}

/* Python's clamp of a slice bound into [0, size] (negative counts from the end). */
static int64_t ct__slice_bound(int64_t v, int64_t size)
{
    if (v < 0) {
        v += size;
    }
    return v < 0 ? 0 : v > size ? size : v;
}

/* slice (attributes dim, start, end, step >= 1): PyTorch's checks, start and end clamped as
   Python slicing, end at least start; ints {dim, start, end, step, 0}. */
static bool ct__slice_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "slice() cannot be applied to a 0-dim tensor.");
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    int64_t step = c->attrs[3].i;
    if (step < 1) {
        ct__fail(CT_ERR_VALUE, c->fn, "slice step must be positive");
        return false;
    }
    int64_t start = ct__slice_bound(c->attrs[1].i, t->sizes[d]);
    int64_t end = ct__slice_bound(c->attrs[2].i, t->sizes[d]);
    if (end < start) {
        end = start;
    }
    ct__view_geom *g = ct__geom(c);
    g->sizes[d] = (end - start + step - 1) / step;
    g->strides[d] *= step;
    g->offset += start * c->inputs[0]->strides[d];
    int64_t ints[5] = {d, start, end, step, 0};
    memcpy(g->ints, ints, sizeof ints);
    g->n_ints = 5;
    return true;
}

/* select (attributes dim, index; index may count from the end). */
static bool ct__select_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "select() cannot be applied to a 0-dim tensor.");
        return false;
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    int64_t size = t->sizes[d], index = c->attrs[1].i;
    if (index < -size || index >= size) {
        char buf[160];
        ct__fail(CT_ERR_INDEX, c->fn, "select(): index %lld out of range for tensor of size %s "
                 "at dimension %d", (long long)index,
                 ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
        return false;
    }
    if (index < 0) {
        index += size;
    }
    ct__view_geom *g = ct__geom(c);
    for (int k = d; k < t->ndim - 1; k++) {
        g->sizes[k] = t->sizes[k + 1];
        g->strides[k] = t->strides[k + 1];
    }
    g->ndim = t->ndim - 1;
    g->offset += index * t->strides[d];
    int64_t ints[5] = {d, index, index + 1, 1, 1};
    memcpy(g->ints, ints, sizeof ints);
    g->n_ints = 5;
    return true;
}

/* select_backward (attributes input_sizes, dim, index) and slice_backward (input_sizes, dim,
   start, end, step): zeros of input_sizes in grad's dtype; ints as select's and slice's. */
static bool ct__slice_scatter_meta(ct_op_call *c)
{
    const ct_tensor *g = c->inputs[0];
    ct__view_geom *geom = (ct__view_geom *)c->state;
    bool select = c->op->variant == 1;
    int64_t start = c->attrs[2].i;
    int64_t ints[5] = {c->attrs[1].i, start, select ? start + 1 : c->attrs[3].i,
                       select ? 1 : c->attrs[4].i, select};
    memcpy(geom->ints, ints, sizeof ints);
    geom->n_ints = 5;
    c->dtype = g->dtype;
    return ct__op_output(c, c->attrs[0].ints, (int)c->attrs[0].i, g->dtype) != NULL;
}

/* cat (inputs: the list; attribute 0: dim): PyTorch's checks, the promoted dtype, the
   concatenated shape; ints {dim}. */
static bool ct__cat_meta(ct_op_call *c)
{
    const ct_tensor *ref = c->inputs[0];
    for (int k = 0; k < c->n_inputs; k++) {
        if (c->inputs[k]->ndim == 0) {
            ct__fail(CT_ERR_SHAPE, c->fn, "zero-dimensional tensor (at position %d) cannot be "
                     "concatenated", k);
            return false;
        }
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, ref->ndim);
    if (d < 0) {
        return false;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim);
    sizes[d] = 0;
    ct_dtype dt = ref->dtype;
    for (int k = 0; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (t->ndim != ref->ndim) {
            ct__fail(CT_ERR_SHAPE, c->fn, "Tensors must have same number of dimensions: got %d "
                     "and %d", ref->ndim, t->ndim);
            return false;
        }
        for (int j = 0; j < ref->ndim; j++) {
            if (j != d && t->sizes[j] != ref->sizes[j]) {
                ct__fail(CT_ERR_SHAPE, c->fn, "Sizes of tensors must match except in dimension "
                         "%d. Expected size %lld but got size %lld for tensor number %d in the "
                         "list.", d, (long long)ref->sizes[j], (long long)t->sizes[j], k);
                return false;
            }
        }
        dt = ct_promote_types(dt, t->dtype);
        sizes[d] += t->sizes[d];
    }
    ct__view_geom *g = (ct__view_geom *)c->state;
    g->ints[0] = d;
    g->n_ints = 1;
    c->dtype = dt;
    return ct__op_output(c, sizes, ref->ndim, dt) != NULL;
}

/* stack (inputs: the list; attribute 0: dim in [-ndim-1, ndim]): equal shapes; ints {dim}. */
static bool ct__stack_meta(ct_op_call *c)
{
    const ct_tensor *ref = c->inputs[0];
    for (int k = 0; k < c->n_inputs; k++) {
        const ct_tensor *t = c->inputs[k];
        if (t->ndim != ref->ndim ||
            memcmp(t->sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim) != 0) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, c->fn, "stack expects each tensor to be equal size, but got "
                     "%s at entry 0 and %s at entry %d",
                     ct__shape_str(ref->sizes, ref->ndim, a, sizeof a),
                     ct__shape_str(t->sizes, t->ndim, b, sizeof b), k);
            return false;
        }
    }
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, ref->ndim + 1);
    if (d < 0) {
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = d;
    return true;
}

/* unflatten (attributes dim, sizes; one size may be -1): the input's sizes with dim replaced
   by sizes, which the composite views the input as. */
static bool ct__unflatten_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[1].ints;
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, c->fn, "Dimension specified as %lld but tensor has no dimensions",
                 (long long)c->attrs[0].i);
        return false;
    }
    int n = (int)c->attrs[1].i, d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0 || (n > 0 && ct__null(c->fn, sizes))) {
        return false;
    }
    if (n <= 0 || t->ndim - 1 + n > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, n <= 0 ? "unflatten: sizes must be non-empty"
                 : "unflatten: more than %d dimensions", CT_MAX_DIMS);
        return false;
    }
    int64_t prod = 1, size = t->sizes[d];
    int infer = 0, negative = 0, huge = 0; /* huge: the running product passed INT64_MAX */
    for (int k = 0; k < n; k++) {
        int64_t s = sizes[k] < 0 ? 1 : sizes[k];
        infer += sizes[k] == -1;
        negative += sizes[k] < -1;
        huge += !huge && s != 0 && prod > INT64_MAX / s;
        prod = huge ? prod : prod * s;
    }
    bool fits = !huge && (infer ? prod != 0 && size % prod == 0 : prod == size);
    if (!fits && (huge || (infer <= 1 && !negative))) {
        char buf[160];
        ct__fail(CT_ERR_SHAPE, c->fn, "unflatten: Provided sizes %s don't multiply up to the size "
                 "of dim %d (%lld) in the input tensor", ct__shape_str(sizes, n, buf, sizeof buf),
                 d, (long long)size);
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    if (!ct__infer_size(c->fn, sizes, n, size, g->sizes + d)) {
        return false;
    }
    memcpy(g->sizes + d + n, t->sizes + d + 1, sizeof(int64_t) * (size_t)(t->ndim - d - 1));
    g->ndim = t->ndim - 1 + n;
    return true;
}

static bool ct__mt_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "tensor.mT is only supported on matrices or batches of "
                 "matrices. Got %d-D tensor.", t->ndim);
        return false;
    }
    ct__geom(c);
    return true;
}

/* tril and triu (variant 1; attribute 0: diagonal): input (*, m, n) with ndim >= 2, a new
   tensor of its shape and dtype; ints {diagonal}. */
static bool ct__tril_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (t->ndim < 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "%s: input tensor must have at least 2 dimensions",
                 c->op->variant ? "triu" : "tril");
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = c->attrs[0].i;
    g->n_ints = 1;
    return ct__op_output(c, t->sizes, t->ndim, t->dtype) != NULL;
}
CT__GLUE_END

/* ---- kernels --------------------------------------------------------------------------- */
/* Every view op's composite: a tensor struct over the input's storage with the geometry meta
   computed. It keeps its base (the input's base when the input is a view itself) and the
   storage version its history was recorded at, for in-place ops on views
   (autograd/views.c). */
static ct_status ct__view_kernel(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    ct_tensor *v =
        ct__tensor_over(t->storage, t->dtype, g->sizes, g->strides, g->ndim, g->offset);
    if (!v) {
        return CT_ERR_OOM;
    }
    if (!t->storage->inference) { /* inference tensors skip view tracking */
        v->base = ct_retain(t->base ? t->base : (ct_tensor *)(uintptr_t)t);
        v->view_version = t->storage->version;
        v->inference_view = ct_is_inference_mode_enabled();
    }
    c->outputs[c->n_outputs++] = v;
    return CT_OK;
}

CT__GLUE_BEGIN
/* reshape: a view (aten::view) when possible, else a view of a contiguous copy (clone). */
static ct_status ct__reshape_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    const ct_tensor *src = g->ints[0] ? c->inputs[0] : ct_clone(c->inputs[0]);
    return ct__composite_end(c, ct_view(src, g->sizes, g->ndim));
}

static ct_status ct__flatten_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_reshape(c->inputs[0], g->sizes, g->ndim));
}

static ct_status ct__narrow_composite(ct_op_call *c)
{
    const int64_t *ints = ((const ct__view_geom *)c->state)->ints;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct__slice(c->fn, c->inputs[0], ints[0], ints[1], ints[2], 1));
}

/* contiguous: an alias when the input is contiguous, else a contiguous copy (clone). */
static ct_status ct__contiguous_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_is_contiguous(t) ? ct_alias(t) : ct_clone(t));
}

/* stack: each input unsqueezed at dim, concatenated along it. */
static ct_status ct__stack_composite(ct_op_call *c)
{
    int64_t d = ((const ct__view_geom *)c->state)->ints[0];
    const ct_tensor **views =
        (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)c->n_inputs);
    if (!views) {
        return ct__fail(CT_ERR_OOM, c->fn, "out of memory");
    }
    if (ct_scope_begin() != CT_OK) {
        ct__free(views);
        return CT_ERR_STATE;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        views[k] = ct_unsqueeze(c->inputs[k], d);
    }
    ct_tensor *r = ct_cat(views, c->n_inputs, d);
    ct__free(views);
    return ct__composite_end(c, r);
}
CT__GLUE_END

/* cat on the CPU: each input copied (converting) into its slice of the output along dim. */
static ct_status ct__cat_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    int d = (int)((const ct__view_geom *)c->state)->ints[0];
    int64_t part[CT_MAX_DIMS], start = 0;
    memcpy(part, out->sizes, sizeof(int64_t) * (size_t)out->ndim);
    for (int k = 0; k < c->n_inputs; k++) {
        part[d] = c->inputs[k]->sizes[d];
        ct_tensor *slot = ct__tensor_over(out->storage, out->dtype, part, out->strides,
                                          out->ndim, start * out->strides[d]);
        if (!slot) {
            return CT_ERR_OOM;
        }
        ct__copy_kernel(slot, c->inputs[k]);
        ct__release(slot);
        start += part[d];
    }
    return CT_OK;
}

/* select_backward and slice_backward on the CPU: zeros, then grad copied into the slice
   (ints {dim, start, end, step, is_select}). */
static ct_status ct__slice_scatter_kernel(ct_op_call *c)
{
    ct_tensor *z = c->outputs[0];
    const ct_tensor *g = c->inputs[0];
    const int64_t *ints = ((const ct__view_geom *)c->state)->ints;
    int d = (int)ints[0];
    memset(ct__data(z), 0, ct_nbytes(z));
    int64_t strides[CT_MAX_DIMS];
    for (int k = 0, j = 0; k < z->ndim; k++) {
        if (k != d || !ints[4]) {
            strides[j++] = k == d ? z->strides[k] * ints[3] : z->strides[k];
        }
    }
    ct_tensor *slot =
        ct__tensor_over(z->storage, z->dtype, g->sizes, strides, g->ndim, ints[1] * z->strides[d]);
    if (!slot) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(slot, g);
    ct__release(slot);
    return CT_OK;
}

CT__GLUE_BEGIN
/* view_as, reshape_as, expand_as (variants 0, 1, 2): the op with other's sizes. */
static ct_status ct__as_composite(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0], *o = c->inputs[1];
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    ct_tensor *r = c->op->variant == 0   ? ct_view(t, o->sizes, o->ndim)
                   : c->op->variant == 1 ? ct_reshape(t, o->sizes, o->ndim)
                                         : ct_expand(t, o->sizes, o->ndim);
    return ct__composite_end(c, r);
}

/* unflatten: a view with the sizes meta computed. */
static ct_status ct__unflatten_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_view(c->inputs[0], g->sizes, g->ndim));
}

static ct_status ct__mt_composite(ct_op_call *c)
{
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_transpose(c->inputs[0], -2, -1));
}

static ct_status ct__broadcast_to_composite(ct_op_call *c)
{
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_expand(c->inputs[0], c->attrs[0].ints, (int)c->attrs[0].i));
}
CT__GLUE_END

/* tril and triu on the CPU: the input copied into the contiguous output, then each row's
   dropped columns zeroed (tril: col > row + diagonal; triu: col < row + diagonal).
   Shapes: out (B, m, n), B the product of the leading dims. */
static ct_status ct__tril_kernel(ct_op_call *c)
{
    ct_tensor *out = c->outputs[0];
    bool upper = c->op->variant == 1;
    int64_t m = out->sizes[out->ndim - 2], n = out->sizes[out->ndim - 1];
    int64_t k = c->attrs[0].i < -m ? -m : c->attrs[0].i > n ? n : c->attrs[0].i;
    int64_t rows = m * n == 0 ? 0 : ct_numel(out) / n;
    size_t es = ct_dtype_size(out->dtype);
    char *p = ct__data(out);
    ct__copy_kernel(out, c->inputs[0]);
    for (int64_t r = 0; r < rows; r++) {
        int64_t i = r % m, edge = upper ? i + k : i + k + 1;
        int64_t lo = upper ? 0 : edge < 0 ? 0 : edge, hi = !upper ? n : edge > n ? n : edge;
        if (hi > lo) {
            memset(p + (size_t)(r * n + lo) * es, 0, (size_t)(hi - lo) * es);
        }
    }
    return CT_OK;
}

CT__GLUE_BEGIN
/* Keeps the integers meta computed (dims, the slice) in the node. */
static void ct__view_record(ct_node *n, const ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    memcpy(n->i, g->ints, sizeof(int64_t) * (size_t)g->n_ints);
}

/* ---- descriptors ------------------------------------------------------------------------ */
/* An op of this file: name, schema, public functions, kind, meta, CPU kernels, composite,
   node, backward, record. */
#define CT__SHAPE_OP(SYM, NAME, SCHEMA, API, KIND, VAR, META, KERNELS, COMPOSITE, NODE, BW,      \
                     RECORD)                                                                   \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, API, KIND, CT_AUTOCAST_NONE, VAR, \
                                       0u, NULL, META, KERNELS, COMPOSITE, NODE, CT__BACKWARD(BW),\
                                       0u, RECORD, NULL};
/* A view: the view struct made by ct__view_kernel, or built on other ops (node NULL). */
#define CT__VIEW(SYM, NAME, SCHEMA, API, META, COMPOSITE, NODE, BW, RECORD)                     \
    CT__SHAPE_OP(SYM, NAME, SCHEMA, API, CT_OP_VIEW, 0, META, CT__K_NONE, COMPOSITE, NODE, BW,  \
                 RECORD)

CT__VIEW(view, "view", "view(Tensor(a) self, SymInt[] size) -> Tensor(a)", "ct_view",
         ct__view_meta, ct__view_kernel, "ViewBackward0", ct__view_backward, NULL)
CT__VIEW(reshape, "reshape", "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
         "ct_reshape", ct__reshape_meta, ct__reshape_composite, NULL, NULL, NULL)
CT__VIEW(flatten, "flatten", "flatten.using_ints(Tensor(a) self, int start_dim=0, int "
         "end_dim=-1) -> Tensor(a)", "ct_flatten", ct__flatten_meta, ct__flatten_composite, NULL,
         NULL, NULL)
CT__VIEW(permute, "permute", "permute(Tensor(a) self, int[] dims) -> Tensor(a)", "ct_permute",
         ct__permute_meta, ct__view_kernel, "PermuteBackward0", ct__permute_backward,
         ct__view_record)
CT__VIEW(transpose, "transpose", "transpose.int(Tensor(a) self, int dim0, int dim1) -> "
         "Tensor(a)", "ct_transpose", ct__transpose_meta, ct__view_kernel, "TransposeBackward0",
         ct__transpose_backward, ct__view_record)
CT__VIEW(t, "t", "t(Tensor(a) self) -> Tensor(a)", "ct_t", ct__t_meta, ct__view_kernel,
         "TBackward0", ct__t_backward, NULL)
CT__VIEW(unsqueeze, "unsqueeze", "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)",
         "ct_unsqueeze", ct__unsqueeze_meta, ct__view_kernel, "UnsqueezeBackward0",
         ct__unsqueeze_backward, ct__view_record)
CT__VIEW(squeeze, "squeeze", "squeeze(Tensor(a) self) -> Tensor(a)", "ct_squeeze",
         ct__squeeze_meta, ct__view_kernel, "SqueezeBackward0", ct__view_backward, NULL)
CT__VIEW(squeeze_dim, "squeeze", "squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)",
         "ct_squeeze_dim", ct__squeeze_dim_meta, ct__view_kernel, "SqueezeBackward1",
         ct__view_backward, NULL)
CT__VIEW(expand, "expand", "expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> "
         "Tensor(a)", "ct_expand ct_broadcast_tensors", ct__expand_meta, ct__view_kernel,
         "ExpandBackward0", ct__identity_backward, NULL)
CT__VIEW(narrow, "narrow", "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> "
         "Tensor(a)", "ct_narrow", ct__narrow_meta, ct__narrow_composite, NULL, NULL, NULL)
CT__VIEW(slice, "slice", "slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
         "end=None, SymInt step=1) -> Tensor(a)", "ct_slice ct_narrow ct_split ct_split_with_sizes "
         "ct_chunk ct_tensor_split ct_tensor_split_indices ct_hsplit ct_vsplit ct_dsplit",
         ct__slice_meta, ct__view_kernel, "SliceBackward0", ct__slice_backward, ct__view_record)
CT__VIEW(select, "select", "select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)",
         "ct_select ct_unbind", ct__select_meta, ct__view_kernel, "SelectBackward0",
         ct__slice_backward, ct__view_record)
CT__VIEW(contiguous, "contiguous", "contiguous(Tensor(a) self, *, MemoryFormat "
         "memory_format=contiguous_format) -> Tensor(a)", "ct_contiguous", ct__alias_meta,
         ct__contiguous_composite, NULL, NULL, NULL)
CT__VIEW(alias, "alias", "alias(Tensor(a) self) -> Tensor(a)", "ct_alias", ct__alias_meta,
         ct__view_kernel, "AliasBackward0", ct__identity_backward, NULL)
CT__SHAPE_OP(select_backward, "select_backward", "select_backward(Tensor grad_output, SymInt[] "
             "input_sizes, int dim, SymInt index) -> Tensor", "ct_backward (select)",
             CT_OP_OTHER, 1, ct__slice_scatter_meta, CT__K_ALL(ct__slice_scatter_kernel), NULL,
             "SelectBackwardBackward0", ct__slice_scatter_backward, ct__view_record)
CT__SHAPE_OP(slice_backward, "slice_backward", "slice_backward(Tensor grad_output, SymInt[] "
             "input_sizes, int dim, SymInt start, SymInt end, SymInt step) -> Tensor",
             "ct_backward (narrow)", CT_OP_OTHER, 0, ct__slice_scatter_meta,
             CT__K_ALL(ct__slice_scatter_kernel), NULL, "SliceBackwardBackward0",
             ct__slice_scatter_backward, ct__view_record)
CT__SHAPE_OP(cat, "cat", "cat(Tensor[] tensors, int dim=0) -> Tensor", "ct_cat", CT_OP_OTHER, 0,
             ct__cat_meta, CT__K_ALL(ct__cat_kernel), NULL, "CatBackward0", ct__cat_backward,
             ct__view_record)
CT__SHAPE_OP(stack, "stack", "stack(Tensor[] tensors, int dim=0) -> Tensor", "ct_stack",
             CT_OP_OTHER, 0, ct__stack_meta, CT__K_NONE, ct__stack_composite, NULL, NULL, NULL)
/* view_as, reshape_as, expand_as: other's sizes only (it may be on any device). */
#define CT__AS_OP(SYM, VAR)                                                                     \
    static const ct_op ct__op_##SYM = {"aten::" #SYM, #SYM "(Tensor(a) self, Tensor other) -> " \
                                       "Tensor(a)", "ct_" #SYM, CT_OP_VIEW, CT_AUTOCAST_NONE,   \
                                       VAR, CT_OP_ANY_DEVICE(1), NULL, ct__alias_meta,          \
                                       CT__K_NONE, ct__as_composite, NULL, NULL, 0u, NULL, NULL};
CT__AS_OP(view_as, 0)
CT__AS_OP(reshape_as, 1)
CT__AS_OP(expand_as, 2)
#undef CT__AS_OP
CT__VIEW(unflatten, "unflatten", "unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> "
         "Tensor(a)", "ct_unflatten", ct__unflatten_meta, ct__unflatten_composite, NULL, NULL,
         NULL)
CT__VIEW(mt, "mT", "mT(Tensor(a) self) -> Tensor(a)", "ct_mt", ct__mt_meta, ct__mt_composite,
         NULL, NULL, NULL)
CT__VIEW(broadcast_to, "broadcast_to", "broadcast_to(Tensor(a) self, SymInt[] size) -> "
         "Tensor(a)", "ct_broadcast_to", ct__alias_meta, ct__broadcast_to_composite, NULL, NULL,
         NULL)
CT__SHAPE_OP(tril, "tril", "tril(Tensor self, SymInt diagonal=0) -> Tensor", "ct_tril",
             CT_OP_OTHER, 0, ct__tril_meta, CT__K_ALL(ct__tril_kernel), NULL, "TrilBackward0",
             ct__tril_backward, ct__view_record)
CT__SHAPE_OP(triu, "triu", "triu(Tensor self, SymInt diagonal=0) -> Tensor", "ct_triu",
             CT_OP_OTHER, 1, ct__tril_meta, CT__K_ALL(ct__tril_kernel), NULL, "TriuBackward0",
             ct__triu_backward, ct__view_record)

/* ---- public functions -------------------------------------------------------------------- */
/* Dispatches c with its meta's geometry in this frame. */
static ct_tensor *ct__view_dispatch(ct_op_call *c)
{
    ct__view_geom g;
    c->state = &g;
    return ct__dispatch(c);
}

/* A call of op over t with n int attributes v. */
static ct_tensor *ct__view_op(const ct_op *op, const char *fn, const ct_tensor *t, int n,
                              const int64_t *v)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    for (int k = 0; k < n; k++) {
        ct__call_i(&c, v[k]);
    }
    return ct__view_dispatch(&c);
}

/* A call of op over t with one int[] attribute. */
static ct_tensor *ct__view_op_ints(const ct_op *op, const char *fn, const ct_tensor *t,
                                   const int64_t *ints, int n)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, ints, n);
    return ct__view_dispatch(&c);
}

/* A call of op over the list ts[n] with attribute dim; a missing list, or an empty one (the
   message empty), fails first. */
static ct_tensor *ct__list_op(const ct_op *op, const char *fn, const ct_tensor *const *ts, int n,
                              int64_t dim, const char *empty)
{
    if (ct__null(fn, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "%s", empty);
        return NULL;
    }
    ct_op_call c;
    ct__call_init(&c, op, fn, ts, n);
    ct__call_i(&c, dim);
    return ct__view_dispatch(&c);
}

/* Elements start, start + step, ... before end of dim of t (Python's clamps): aten::slice,
   errors reported as fn's. */
static ct_tensor *ct__slice(const char *fn, const ct_tensor *t, int64_t dim, int64_t start,
                            int64_t end, int64_t step)
{
    int64_t v[4] = {dim, start, end, step};
    return ct__view_op(&ct__op_slice, fn, t, 4, v);
}

/* select_backward (ints[4]) or slice_backward of g into zeros of the input in's shape. */
static ct_tensor *ct__slice_scatter(const ct_tensor *g, const ct__edge *in, const int64_t *ints)
{
    const ct_tensor *inputs[1] = {g};
    ct_op_call c;
    bool select = ints[4] != 0;
    ct__call_init(&c, select ? &ct__op_select_backward : &ct__op_slice_backward,
                  select ? "ct_select_backward" : "ct_slice_backward", inputs, 1);
    ct__call_ints(&c, in->sizes, in->ndim);
    ct__call_i(&c, ints[0]);
    ct__call_i(&c, ints[1]);
    if (!select) {
        ct__call_i(&c, ints[2]);
        ct__call_i(&c, ints[3]);
    }
    return ct__view_dispatch(&c);
}

ct_tensor *ct_alias(const ct_tensor *t)
{
    return ct__view_op(&ct__op_alias, "ct_alias", t, 0, NULL);
}

ct_tensor *ct_view(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_view, "ct_view", t, sizes, ndim);
}

ct_tensor *ct_reshape(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_reshape, "ct_reshape", t, sizes, ndim);
}

ct_tensor *ct_flatten(const ct_tensor *t, int64_t start_dim, int64_t end_dim)
{
    int64_t v[2] = {start_dim, end_dim};
    return ct__view_op(&ct__op_flatten, "ct_flatten", t, 2, v);
}

ct_tensor *ct_permute(const ct_tensor *t, const int64_t *dims, int ndim)
{
    return ct__view_op_ints(&ct__op_permute, "ct_permute", t, dims, ndim);
}

ct_tensor *ct_transpose(const ct_tensor *t, int64_t dim0, int64_t dim1)
{
    int64_t v[2] = {dim0, dim1};
    return ct__view_op(&ct__op_transpose, "ct_transpose", t, 2, v);
}

ct_tensor *ct_t(const ct_tensor *t)
{
    return ct__view_op(&ct__op_t, "ct_t", t, 0, NULL);
}

ct_tensor *ct_unsqueeze(const ct_tensor *t, int64_t dim)
{
    return ct__view_op(&ct__op_unsqueeze, "ct_unsqueeze", t, 1, &dim);
}

ct_tensor *ct_squeeze(const ct_tensor *t)
{
    return ct__view_op(&ct__op_squeeze, "ct_squeeze", t, 0, NULL);
}

ct_tensor *ct_squeeze_dim(const ct_tensor *t, int64_t dim)
{
    return ct__view_op(&ct__op_squeeze_dim, "ct_squeeze_dim", t, 1, &dim);
}

ct_tensor *ct_expand(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_expand, "ct_expand", t, sizes, ndim);
}

ct_tensor *ct_narrow(const ct_tensor *t, int64_t dim, int64_t start, int64_t length)
{
    int64_t v[3] = {dim, start, length};
    return ct__view_op(&ct__op_narrow, "ct_narrow", t, 3, v);
}

ct_tensor *ct_select(const ct_tensor *t, int64_t dim, int64_t index)
{
    int64_t v[2] = {dim, index};
    return ct__view_op(&ct__op_select, "ct_select", t, 2, v);
}

ct_tensor *ct_contiguous(const ct_tensor *t)
{
    return ct__view_op(&ct__op_contiguous, "ct_contiguous", t, 0, NULL);
}

ct_tensor *ct_cat(const ct_tensor *const *ts, int n, int64_t dim)
{
    return ct__list_op(&ct__op_cat, "ct_cat", ts, n, dim, "expected a non-empty list of Tensors");
}

ct_tensor *ct_stack(const ct_tensor *const *ts, int n, int64_t dim)
{
    return ct__list_op(&ct__op_stack, "ct_stack", ts, n, dim,
                       "stack expects a non-empty TensorList");
}

/* A call of op over t and other (view_as, reshape_as, expand_as). */
static ct_tensor *ct__as_op(const ct_op *op, const char *fn, const ct_tensor *t,
                            const ct_tensor *other)
{
    const ct_tensor *in[2] = {t, other};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 2);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_view_as(const ct_tensor *t, const ct_tensor *other)
{
    return ct__as_op(&ct__op_view_as, "ct_view_as", t, other);
}

ct_tensor *ct_reshape_as(const ct_tensor *t, const ct_tensor *other)
{
    return ct__as_op(&ct__op_reshape_as, "ct_reshape_as", t, other);
}

ct_tensor *ct_expand_as(const ct_tensor *t, const ct_tensor *other)
{
    return ct__as_op(&ct__op_expand_as, "ct_expand_as", t, other);
}

ct_tensor *ct_unflatten(const ct_tensor *t, int64_t dim, const int64_t *sizes, int n)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_unflatten, "ct_unflatten", in, 1);
    ct__call_i(&c, dim);
    ct__call_ints(&c, sizes, n);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_mt(const ct_tensor *t)
{
    return ct__view_op(&ct__op_mt, "ct_mt", t, 0, NULL);
}

ct_tensor *ct_broadcast_to(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    return ct__view_op_ints(&ct__op_broadcast_to, "ct_broadcast_to", t, sizes, ndim);
}

ct_tensor *ct_slice(const ct_tensor *t, int64_t dim, int64_t start, int64_t end, int64_t step)
{
    return ct__slice("ct_slice", t, dim, start, end, step);
}

ct_tensor *ct_tril(const ct_tensor *t, int64_t diagonal)
{
    return ct__view_op(&ct__op_tril, "ct_tril", t, 1, &diagonal);
}

ct_tensor *ct_triu(const ct_tensor *t, int64_t diagonal)
{
    return ct__view_op(&ct__op_triu, "ct_triu", t, 1, &diagonal);
}

/* Writes "(4, 3)" (Python's tuple: "(4,)", "()") into buf. */
static const char *ct__tuple_str(const int64_t *sizes, int ndim, char *buf, size_t n)
{
    size_t len = strlen(ct__shape_str(sizes, ndim, buf, n - 1));
    buf[0] = '(';
    buf[len - 1] = ndim == 1 ? ',' : ')';
    strcpy(buf + len, ndim == 1 ? ")" : "");
    return buf;
}

ct_status ct_broadcast_shapes(const int64_t *const *shapes, const int *ndims, int n,
                              int64_t *out, int *out_ndim)
{
    const char *fn = "ct_broadcast_shapes";
    if ((n > 0 && (ct__null(fn, shapes) || ct__null(fn, ndims))) || ct__null(fn, out) ||
        ct__null(fn, out_ndim)) {
        return CT_ERR_NULL_ARG;
    }
    int nd = 0;
    for (int k = 0; k < n; k++) {
        if (ndims[k] < 0 || ndims[k] > CT_MAX_DIMS) {
            return ct__fail(CT_ERR_SHAPE, fn, "invalid number of dimensions %d", ndims[k]);
        }
        if (ndims[k] > 0 && ct__null(fn, shapes[k])) {
            return CT_ERR_NULL_ARG;
        }
        nd = ndims[k] > nd ? ndims[k] : nd;
    }
    int64_t common[CT_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        common[d] = 1;
    }
    for (int k = 0; k < n; k++) { /* PyTorch's _broadcast_shapes, trailing dims first */
        for (int i = 1; i <= ndims[k]; i++) {
            int64_t want = shapes[k][ndims[k] - i], *have = &common[nd - i];
            if (*have == 1 && want < 0) {
                return ct__fail(CT_ERR_VALUE, fn, "Attempting to broadcast a dimension with "
                                "negative length!");
            }
            if (*have == 1) {
                *have = want;
            } else if (want != 1 && want != *have) {
                char a[200], b[200];
                return ct__fail(CT_ERR_SHAPE, fn, "Attempting to broadcast a dimension of length "
                                "%lld at -%d! Mismatching argument at index %d had %s; but "
                                "expected shape should be broadcastable to %s", (long long)want,
                                i, k, ct__tuple_str(shapes[k], ndims[k], a, sizeof a),
                                ct__shape_str(common, nd, b, sizeof b));
            }
        }
    }
    memcpy(out, common, sizeof(int64_t) * (size_t)nd);
    *out_ndim = nd;
    return CT_OK;
}

ct_status ct_broadcast_tensors(const ct_tensor *const *ts, int n, ct_tensor **out)
{
    const char *fn = "ct_broadcast_tensors";
    if ((n > 0 && ct__null(fn, ts)) || ct__null(fn, out)) {
        return CT_ERR_NULL_ARG;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < n; k++) {
        if (ct__null(fn, ts[k])) {
            return CT_ERR_NULL_ARG;
        }
        if (!ct__broadcast_shapes(fn, shape, nd, ts[k]->sizes, ts[k]->ndim, shape, &nd)) {
            return ct_error_code();
        }
    }
    for (int k = 0; k < n; k++) {
        bool same = ts[k]->ndim == nd &&
                    !memcmp(ts[k]->sizes, shape, sizeof(int64_t) * (size_t)nd);
        out[k] = same ? ct__scoped(ct_retain((ct_tensor *)ts[k])) : ct_expand(ts[k], shape, nd);
        if (!out[k]) {
            return ct_error_code();
        }
    }
    return CT_OK;
}

/* Whether count pieces fit an int and the caller's array out (NULL: only counting). */
static bool ct__pieces_fit(const char *fn, int64_t count, ct_tensor **out, int capacity)
{
    if (count > INT_MAX) {
        return !ct__fail(CT_ERR_VALUE, fn, "%lld pieces exceed INT_MAX", (long long)count);
    }
    if (out && capacity < count) {
        return !ct__fail(CT_ERR_VALUE, fn, "the output array holds %d tensors but the split "
                         "makes %lld", capacity, (long long)count);
    }
    return true;
}

/* The count pieces of t along dim d (validated): sizes[k], or size (the last one clipped to
   the dim) when sizes is NULL; written to out unless it is NULL. Returns count or -1. */
static int ct__pieces(const char *fn, const ct_tensor *t, int d, int64_t count, int64_t size,
                      const int64_t *sizes, ct_tensor **out, int capacity)
{
    if (!ct__pieces_fit(fn, count, out, capacity)) {
        return -1;
    }
    for (int64_t k = 0, start = 0; out && k < count; k++) {
        int64_t len = sizes ? sizes[k] : size < t->sizes[d] - start ? size : t->sizes[d] - start;
        out[k] = ct__slice(fn, t, d, start, start + len, 1);
        if (!out[k]) {
            return -1;
        }
        start += len;
    }
    return (int)count;
}

/* The wrapped dim of a split of t (at least 1-D: what names the op in the message), or -1. */
static int ct__split_dim(const char *fn, const char *what, const ct_tensor *t, int64_t dim)
{
    if (ct__null(fn, t)) {
        return -1;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, fn, "%s expects at least a 1-dimensional tensor", what);
        return -1;
    }
    return ct__wrap_dim(fn, dim, t->ndim);
}

int ct_split(const ct_tensor *t, int64_t split_size, int64_t dim, ct_tensor **out, int capacity)
{
    const char *fn = "ct_split";
    int d = ct__split_dim(fn, "split", t, dim);
    if (d < 0) {
        return -1;
    }
    int64_t size = t->sizes[d];
    if (split_size < 0) {
        ct__fail(CT_ERR_VALUE, fn, "split expects split_size be non-negative, but got "
                 "split_size=%lld", (long long)split_size);
        return -1;
    }
    if (split_size == 0 && size != 0) {
        ct__fail(CT_ERR_VALUE, fn, "split_size can only be 0 if dimension size is 0, but got "
                 "dimension size of %lld", (long long)size);
        return -1;
    }
    int64_t count = split_size == 0 || size == 0 ? 1 : (size - 1) / split_size + 1;
    return ct__pieces(fn, t, d, count, split_size, NULL, out, capacity);
}

int ct_split_with_sizes(const ct_tensor *t, const int64_t *split_sizes, int n, int64_t dim,
                        ct_tensor **out, int capacity)
{
    const char *fn = "ct_split_with_sizes";
    int d = ct__split_dim(fn, "split", t, dim);
    if (d < 0 || (n > 0 && ct__null(fn, split_sizes))) {
        return -1;
    }
    int64_t sum = 0;
    bool negative = false;
    for (int k = 0; k < n; k++) {
        negative = negative || split_sizes[k] < 0;
        sum += split_sizes[k] < 0 ? 0 : split_sizes[k];
    }
    if (negative || sum != t->sizes[d]) {
        char buf[200];
        ct__shape_str(split_sizes, n < 0 ? 0 : n, buf, sizeof buf);
        if (negative) {
            ct__fail(CT_ERR_VALUE, fn, "split_with_sizes expects split_sizes have only "
                     "non-negative entries, but got split_sizes=%s", buf);
        } else {
            ct__fail(CT_ERR_SHAPE, fn, "split_with_sizes expects split_sizes to sum exactly to "
                     "%lld (input tensor's size at dimension %d), but got split_sizes=%s",
                     (long long)t->sizes[d], d, buf);
        }
        return -1;
    }
    return ct__pieces(fn, t, d, n, 0, split_sizes, out, capacity);
}

int ct_chunk(const ct_tensor *t, int64_t chunks, int64_t dim, ct_tensor **out, int capacity)
{
    const char *fn = "ct_chunk";
    int d = ct__split_dim(fn, "chunk", t, dim);
    if (d < 0) {
        return -1;
    }
    if (chunks <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "chunk expects `chunks` to be greater than 0, got: %lld",
                 (long long)chunks);
        return -1;
    }
    int64_t size = t->sizes[d], split_size = size / chunks + (size % chunks != 0);
    int64_t count = size == 0 ? chunks : (size - 1) / split_size + 1;
    return ct__pieces(fn, t, d, count, split_size, NULL, out, capacity);
}

/* ==== issue 7, second slice: repeat/tile, flip/roll/rot90, movedim, diagonal family,
   as_strided, unfold, the stacks and the list splits ===================================== */
static ct_tensor *ct__diag_scatter(const ct_tensor *g, const int64_t *sizes, int ndim,
                                   const int64_t *ints);

/* A composite whose result ct__<SYM>_build(c) makes with public ops in a scope of its own. */
#define CT__BUILT(SYM)                                                                         \
    static ct_status ct__##SYM##_composite(ct_op_call *c)                                      \
    {                                                                                          \
        if (ct_scope_begin() != CT_OK) {                                                       \
            return CT_ERR_STATE;                                                               \
        }                                                                                      \
        return ct__composite_end(c, ct__##SYM##_build(c));                                     \
    }

/* ---- derivative formulas ------------------------------------------------------------------ */
static void ct__flip_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int64_t dims[CT_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < g->ndim; d++) {
        if (n->i[0] >> d & 1) {
            dims[k++] = d;
        }
    }
    gi[0] = ct_flip(g, dims, k);
}

/* diagonal: zeros of the input's shape with g on the diagonal (diagonal_backward). */
static void ct__diagonal_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__diag_scatter(g, n->next[0].sizes, n->next[0].ndim, n->i);
}

/* diag_embed and diagonal_backward (linear in their input): the gradient's diagonal. */
static void ct__diag_embed_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_diagonal(g, n->i[0], n->i[1], n->i[2]);
}

/* zeros(L) with g's entries added at the flat positions idx (idx has g's shape). */
static ct_tensor *ct__add_at(int64_t L, const ct_tensor *idx, const ct_tensor *g)
{
    int64_t flat = -1;
    return ct_index_add(ct_zeros(&L, 1, g->dtype), 0, ct_reshape(idx, &flat, 1),
                        ct_reshape(g, &flat, 1), 1.0);
}

/* unfold: each window's gradient added back at the input positions it read (the windows of
   an arange of the input's shape give those positions). */
static void ct__unfold_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct__edge *in = &n->next[0];
    int64_t numel = ct__numel(in->sizes, in->ndim);
    ct_tensor *pos = ct_reshape(ct_arange(0, (double)numel, 1, CT_INT64), in->sizes, in->ndim);
    ct_tensor *win = ct_unfold_view(pos, n->i[0], n->i[1], n->i[2]);
    gi[0] = ct_reshape(ct__add_at(numel, win, g), in->sizes, in->ndim);
}

/* as_strided's geometry, kept by its node: the storage length, the view's and the input's. */
typedef struct ct__strided_ctx {
    int64_t storage_len, out_offset, in_offset;
    int out_ndim, in_ndim;
    int64_t out_sizes[CT_MAX_DIMS], out_strides[CT_MAX_DIMS], in_sizes[CT_MAX_DIMS],
        in_strides[CT_MAX_DIMS];
} ct__strided_ctx;

/* as_strided: the gradient added into the storage positions the view reads, then read back at
   the input's positions (PyTorch's as_strided_backward for a non-overlapping input). */
static void ct__as_strided_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const ct__strided_ctx *x = (const ct__strided_ctx *)n->ctx;
    if (!x) {
        ct__fail(CT_ERR_OOM, "ct_backward", "out of memory (as_strided's node)");
        return;
    }
    ct_tensor *pos = ct_arange(0, (double)x->storage_len, 1, CT_INT64);
    ct_tensor *read = ct_as_strided(pos, x->out_sizes, x->out_strides, x->out_ndim, x->out_offset);
    ct_tensor *acc = ct__add_at(x->storage_len, read, g);
    gi[0] = ct_as_strided(acc, x->in_sizes, x->in_strides, x->in_ndim, x->in_offset);
}

/* ---- meta -------------------------------------------------------------------------------- */
/* movedim (attributes source, destination; n each): the permutation, kept in ints for the
   composite. */
static bool ct__movedim_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *src = c->attrs[0].ints, *dst = c->attrs[1].ints;
    int n = (int)c->attrs[0].i, nd = t->ndim;
    bool used_src[CT_MAX_DIMS + 1] = {false}, used_dst[CT_MAX_DIMS + 1] = {false};
    char buf[160];
    if (n > 0 && (ct__null(c->fn, src) || ct__null(c->fn, dst))) {
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    for (int k = 0; k < n; k++) {
        int s = ct__wrap_dim(c->fn, src[k], nd), d = s < 0 ? -1 : ct__wrap_dim(c->fn, dst[k], nd);
        if (d < 0) {
            return false;
        }
        if (used_src[s] || used_dst[d]) {
            return !ct__fail(CT_ERR_VALUE, c->fn, "movedim: repeated dim in `%s` (%s)",
                             used_src[s] ? "source" : "destination",
                             ct__shape_str(used_src[s] ? src : dst, n, buf, sizeof buf));
        }
        used_src[s] = used_dst[d] = true;
        g->ints[d] = s;
    }
    for (int d = 0, s = 0; d < nd; d++) {
        while (!used_dst[d] && used_src[s]) {
            s++;
        }
        if (!used_dst[d]) {
            g->ints[d] = s++;
        }
    }
    g->n_ints = nd;
    return true;
}

/* The diagonal offset of dims d1, d2 of a tensor (sizes, strides, offset, nd) into g. */
static void ct__diag_geom(const int64_t *sizes, const int64_t *strides, int nd, int64_t offset,
                          const int64_t *ints, ct__view_geom *g)
{
    int64_t off = ints[0];
    int d1 = (int)ints[1], d2 = (int)ints[2];
    int64_t a = off >= 0 ? sizes[d1] : sizes[d1] + off, b = off >= 0 ? sizes[d2] - off : sizes[d2];
    int64_t len = a < b ? a : b;
    len = len < 0 ? 0 : len;
    g->offset = offset + (len == 0 ? 0 : off >= 0 ? off * strides[d2] : -off * strides[d1]);
    g->ndim = 0;
    for (int d = 0; d < nd; d++) {
        if (d != d1 && d != d2) {
            g->sizes[g->ndim] = sizes[d];
            g->strides[g->ndim++] = strides[d];
        }
    }
    g->sizes[g->ndim] = len;
    g->strides[g->ndim++] = strides[d1] + strides[d2];
}

/* Wraps dims attrs[first], attrs[first + 1] of the diagonal family against nd into ints
   {offset, d1, d2} (offset: attrs[first - 1]). */
static bool ct__diag_dims(ct_op_call *c, int first, int nd, int64_t *ints)
{
    int d1 = ct__wrap_dim(c->fn, c->attrs[first].i, nd);
    int d2 = d1 < 0 ? -1 : ct__wrap_dim(c->fn, c->attrs[first + 1].i, nd);
    if (d2 < 0) {
        return false;
    }
    if (d1 == d2) {
        return !ct__fail(CT_ERR_VALUE, c->fn, "diagonal dimensions cannot be identical %lld, %lld",
                         (long long)c->attrs[first].i, (long long)c->attrs[first + 1].i);
    }
    ints[0] = c->attrs[first - 1].i;
    ints[1] = d1;
    ints[2] = d2;
    return true;
}

/* diagonal (attributes offset, dim1, dim2); ints {offset, d1, d2}. */
static bool ct__diagonal_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    if (!ct__diag_dims(c, 1, t->ndim, g->ints)) {
        return false;
    }
    g->n_ints = 3;
    ct__diag_geom(t->sizes, t->strides, t->ndim, t->offset, g->ints, g);
    return true;
}

/* diag_embed (attributes offset, dim1, dim2 in the output's ndim + 1 dims): zeros of
   input's sizes but the last, with n + |offset| inserted at d1 and d2. diagonal_backward
   (attributes input_sizes, offset, dim1, dim2): zeros of input_sizes. ints {offset, d1, d2}. */
static bool ct__diag_embed_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    ct__view_geom *g = ct__geom(c);
    bool embed = c->op->variant == 0;
    int nd = embed ? t->ndim + 1 : (int)c->attrs[0].i;
    if (embed && (t->ndim == 0 || nd > CT_MAX_DIMS)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "diag_embed: the input must have 1 to %d dims",
                         CT_MAX_DIMS - 1);
    }
    if (!ct__diag_dims(c, 2 - embed, nd, g->ints)) {
        return false;
    }
    g->n_ints = 3;
    int64_t sizes[CT_MAX_DIMS], off = g->ints[0];
    int64_t n = t->ndim > 0 ? t->sizes[t->ndim - 1] + (off < 0 ? -off : off) : 0;
    for (int d = 0, j = 0; embed && d < nd; d++) {
        sizes[d] = d == g->ints[1] || d == g->ints[2] ? n : t->sizes[j++];
    }
    return ct__op_output(c, embed ? sizes : c->attrs[0].ints, nd, t->dtype) != NULL;
}

/* flip (attribute dims): the flipped dims (ints {bit mask}) and the output. */
static bool ct__flip_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *dims = c->attrs[0].ints;
    int n = (int)c->attrs[0].i;
    bool seen[CT_MAX_DIMS + 1] = {false};
    if (n > 0 && ct__null(c->fn, dims)) {
        return false;
    }
    ct__view_geom *g = ct__geom(c);
    g->ints[0] = 0;
    for (int k = 0; k < n; k++) {
        int d = ct__wrap_dim(c->fn, dims[k], t->ndim);
        if (d < 0) {
            return false;
        }
        if (seen[d]) {
            return !ct__fail(CT_ERR_VALUE, c->fn, "dim %d appears multiple times in the list of "
                             "dims", d);
        }
        seen[d] = true;
        g->ints[0] |= (int64_t)1 << d;
    }
    g->n_ints = 1;
    return ct__op_output(c, t->sizes, t->ndim, t->dtype) != NULL;
}

/* as_strided (attributes size, stride, storage_offset): PyTorch's checks against the input's
   storage; the view's geometry. */
static bool ct__as_strided_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *sizes = c->attrs[0].ints, *strides = c->attrs[1].ints;
    int nd = (int)c->attrs[0].i;
    int64_t off = c->attrs[2].i, need = off + 1, esz = (int64_t)ct_dtype_size(t->dtype);
    char a[160], b[160];
    if (nd > 0 && (ct__null(c->fn, sizes) || ct__null(c->fn, strides))) {
        return false;
    }
    if (nd < 0 || nd > CT_MAX_DIMS) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "invalid number of dimensions %d", nd);
    }
    for (int d = 0; d < nd; d++) {
        if (strides[d] < 0) {
            return !ct__fail(CT_ERR_VALUE, c->fn, "as_strided: Negative strides are not supported "
                             "at the moment, got strides: %s",
                             ct__shape_str(strides, nd, a, sizeof a));
        }
        if (sizes[d] < 0) {
            return !ct__fail(CT_ERR_VALUE, c->fn, "Trying to create tensor with negative "
                             "dimension %lld: %s", (long long)sizes[d],
                             ct__shape_str(sizes, nd, a, sizeof a));
        }
        need += (sizes[d] - 1) * strides[d];
    }
    int64_t have = (int64_t)t->storage->nbytes / esz;
    if (off < 0 || (ct__numel(sizes, nd) > 0 && need > have)) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "setStorage: sizes %s, strides %s, storage offset "
                         "%lld, and itemsize %lld requiring a storage size of %lld are out of "
                         "bounds for storage of size %lld", ct__shape_str(sizes, nd, a, sizeof a),
                         ct__shape_str(strides, nd, b, sizeof b), (long long)off, (long long)esz,
                         (long long)(need * esz), (long long)(have * esz));
    }
    ct__view_geom *g = ct__geom(c);
    g->ndim = nd;
    g->offset = off;
    memcpy(g->sizes, sizes, sizeof(int64_t) * (size_t)nd);
    memcpy(g->strides, strides, sizeof(int64_t) * (size_t)nd);
    return true;
}

/* unfold (attributes dimension, size, step): PyTorch's checks and geometry (a 0-dim input
   counts as one element); ints {dimension, size, step}. */
static bool ct__unfold_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t size = c->attrs[1].i, step = c->attrs[2].i;
    int d = ct__wrap_dim(c->fn, c->attrs[0].i, t->ndim);
    if (d < 0) {
        return false;
    }
    if (t->ndim == CT_MAX_DIMS) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "tensors have at most %d dimensions", CT_MAX_DIMS);
    }
    int64_t max = t->ndim == 0 ? 1 : t->sizes[d];
    if (size > max || size < 0) {
        return !ct__fail(CT_ERR_SHAPE, c->fn, "maximum size for tensor at dimension %d is %lld but "
                         "size is %lld", d, (long long)max, (long long)size);
    }
    if (step <= 0) {
        return !ct__fail(CT_ERR_VALUE, c->fn, "step is %lld but must be > 0", (long long)step);
    }
    ct__view_geom *g = ct__geom(c);
    g->sizes[t->ndim] = size;
    g->strides[t->ndim] = t->ndim == 0 ? 1 : t->strides[d];
    if (t->ndim > 0) {
        g->sizes[d] = (t->sizes[d] - size) / step + 1;
        g->strides[d] *= step;
    }
    g->ndim = t->ndim + 1;
    int64_t ints[3] = {d, size, step};
    memcpy(g->ints, ints, sizeof ints);
    g->n_ints = 3;
    return true;
}

/* ---- kernels and composites ------------------------------------------------------------ */
/* flip on the CPU: the input seen with negative strides along the flipped dims, copied. */
static ct_status ct__flip_kernel(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    int64_t strides[CT_MAX_DIMS], offset = t->offset;
    if (ct_numel(t) == 0) {
        return CT_OK;
    }
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    for (int d = 0; d < t->ndim; d++) {
        if (!(g->ints[0] >> d & 1)) {
            continue;
        }
        offset += (t->sizes[d] - 1) * t->strides[d];
        strides[d] = -strides[d];
    }
    ct_tensor *v = ct__tensor_over(t->storage, t->dtype, t->sizes, strides, t->ndim, offset);
    if (!v) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(c->outputs[0], v);
    ct__release(v);
    return CT_OK;
}

/* diag_embed and diagonal_backward on the CPU: zeros, then the input copied onto the
   diagonal. */
static ct_status ct__diag_embed_kernel(ct_op_call *c)
{
    ct_tensor *z = c->outputs[0];
    ct__view_geom g;
    memset(ct__data(z), 0, ct_nbytes(z));
    ct__diag_geom(z->sizes, z->strides, z->ndim, 0, ((const ct__view_geom *)c->state)->ints, &g);
    ct_tensor *slot = ct__tensor_over(z->storage, z->dtype, g.sizes, g.strides, g.ndim, g.offset);
    if (!slot) {
        return CT_ERR_OOM;
    }
    ct__copy_kernel(slot, c->inputs[0]);
    ct__release(slot);
    return CT_OK;
}

/* as_strided's node keeps both geometries and the storage length (the view's output is
   unknown here: its geometry comes from the call's state). */
static void ct__as_strided_record(ct_node *n, const ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    ct__strided_ctx *x = (ct__strided_ctx *)ct__malloc(sizeof *x);
    if (!x) {
        return;
    }
    x->storage_len = (int64_t)(t->storage->nbytes / ct_dtype_size(t->dtype));
    x->out_offset = g->offset;
    x->out_ndim = g->ndim;
    memcpy(x->out_sizes, g->sizes, sizeof x->out_sizes);
    memcpy(x->out_strides, g->strides, sizeof x->out_strides);
    x->in_offset = t->offset;
    x->in_ndim = t->ndim;
    memcpy(x->in_sizes, t->sizes, sizeof x->in_sizes);
    memcpy(x->in_strides, t->strides, sizeof x->in_strides);
    n->ctx = x;
    n->ctx_free = ct__free;
}

static ct_status ct__movedim_composite(ct_op_call *c)
{
    const ct__view_geom *g = (const ct__view_geom *)c->state;
    if (ct_scope_begin() != CT_OK) {
        return CT_ERR_STATE;
    }
    return ct__composite_end(c, ct_permute(c->inputs[0], g->ints, g->n_ints));
}

/* repeat (attribute repeats): input padded with leading 1s, then per repeated dim d:
   unsqueeze at d, expand that new dim to the repeat count, merge it into d. */
static ct_tensor *ct__repeat_build(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *r = c->attrs[0].ints;
    int n = (int)c->attrs[0].i;
    int64_t sizes[CT_MAX_DIMS] = {0}, target[CT_MAX_DIMS] = {0};
    char buf[160];
    if (n > 0 && ct__null(c->fn, r)) {
        return NULL;
    }
    if (n < t->ndim || n > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Number of dimensions of repeat dims can not be smaller "
                 "than number of dimensions of tensor");
        return NULL;
    }
    for (int d = 0; d < n; d++) {
        sizes[d] = d < n - t->ndim ? 1 : t->sizes[d - (n - t->ndim)];
        target[d] = sizes[d] * r[d];
    }
    for (int d = 0; d < n; d++) {
        if (r[d] < 0) {
            ct__fail(CT_ERR_VALUE, c->fn, "Trying to create tensor with negative dimension %lld: "
                     "%s", (long long)target[d], ct__shape_str(target, n, buf, sizeof buf));
            return NULL;
        }
    }
    ct_tensor *x = ct_reshape(t, sizes, n);
    for (int d = 0; d < n && x; d++) {
        if (r[d] != 1) {
            int64_t e[CT_MAX_DIMS];
            memcpy(e, sizes, sizeof e);
            memmove(e + d + 1, e + d, sizeof(int64_t) * (size_t)(n - d));
            e[d] = r[d];
            x = ct_flatten(ct_expand(ct_unsqueeze(x, d), e, n + 1), d, d + 1);
        }
        sizes[d] = target[d];
    }
    return x && x->storage == t->storage ? ct_clone(x) : x;
}
CT__BUILT(repeat)

/* tile (attribute dims): repeat with dims padded by leading 1s to input's ndim. */
static ct_tensor *ct__tile_build(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *dims = c->attrs[0].ints;
    int n = (int)c->attrs[0].i;
    int64_t r[CT_MAX_DIMS];
    if (n > 0 && ct__null(c->fn, dims)) {
        return NULL;
    }
    int pad = n < t->ndim ? t->ndim - n : 0;
    if (n > CT_MAX_DIMS) {
        return ct_repeat(t, dims, n);
    }
    for (int d = 0; d < pad + n; d++) {
        r[d] = d < pad ? 1 : dims[d - pad];
    }
    return ct_repeat(t, r, pad + n);
}
CT__BUILT(tile)

/* repeat_interleave (attributes repeats, dim): a new dim after dim expanded to repeats, merged
   into dim. */
static ct_tensor *ct__repeat_interleave_build(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t one = 1, repeats = c->attrs[0].i;
    if (repeats < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "repeats can not be negative");
        return NULL;
    }
    const ct_tensor *x = t->ndim == 0 ? ct_reshape(t, &one, 1) : t;
    int d = x ? ct__wrap_dim(c->fn, c->attrs[1].i, x->ndim) : -1;
    if (d < 0) {
        return NULL;
    }
    int64_t e[CT_MAX_DIMS];
    memcpy(e, x->sizes, sizeof(int64_t) * (size_t)x->ndim);
    memmove(e + d + 2, e + d + 1, sizeof(int64_t) * (size_t)(x->ndim - d - 1));
    e[d + 1] = repeats;
    ct_tensor *r = ct_flatten(ct_expand(ct_unsqueeze(x, d + 1), e, x->ndim + 1), d, d + 1);
    return r && r->storage == t->storage ? ct_clone(r) : r;
}
CT__BUILT(repeat_interleave)

/* fliplr, flipud (variants 1, 0). */
static ct_tensor *ct__flip_lr_ud_build(ct_op_call *c)
{
    int lr = c->op->variant;
    int64_t d = lr;
    if (c->inputs[0]->ndim < 1 + lr) {
        ct__fail(CT_ERR_SHAPE, c->fn, "Input must be >= %d-d.", 1 + lr);
        return NULL;
    }
    return ct_flip(c->inputs[0], &d, 1);
}
CT__BUILT(flip_lr_ud)

/* x rolled by shift along dim d (a narrow of each part, concatenated); x when nothing moves. */
static ct_tensor *ct__roll1(ct_tensor *x, int d, int64_t shift)
{
    if (!x) {
        return NULL;
    }
    int64_t size = x->sizes[d];
    if (size == 0 || shift % size == 0) {
        return x;
    }
    int64_t s = (shift % size + size) % size;
    const ct_tensor *parts[2] = {ct_narrow(x, d, size - s, s), ct_narrow(x, d, 0, size - s)};
    return ct_cat(parts, 2, d);
}

/* roll (attributes shifts, dims). */
static ct_tensor *ct__roll_build(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *shifts = c->attrs[0].ints, *dims = c->attrs[1].ints;
    int ns = (int)c->attrs[0].i, nd = (int)c->attrs[1].i;
    if ((ns > 0 && ct__null(c->fn, shifts)) || (nd > 0 && ct__null(c->fn, dims))) {
        return NULL;
    }
    if (nd == 0 ? ns != 1 : ns != nd) {
        ct__fail(CT_ERR_VALUE, c->fn, "shifts and dimensions must align. shifts: %d, dims:%d", ns,
                 nd);
        return NULL;
    }
    ct_tensor *x = (ct_tensor *)(uintptr_t)t;
    if (nd == 0) {
        x = ct__roll1(ct_flatten(t, 0, -1), 0, shifts[0]);
        return ct_clone(ct_view(x, t->sizes, t->ndim));
    }
    for (int k = 0; k < nd && x; k++) {
        int d = ct__wrap_dim(c->fn, dims[k], t->ndim);
        x = d < 0 ? NULL : ct__roll1(x, d, shifts[k]);
    }
    return x && x->storage == t->storage ? ct_clone(x) : x;
}
CT__BUILT(roll)

/* rot90 (attributes k, dims): PyTorch's checks, then flips and a transpose. */
static ct_tensor *ct__rot90_build(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    const int64_t *dims = c->attrs[1].ints;
    int n = (int)c->attrs[1].i;
    if (n > 0 && ct__null(c->fn, dims)) {
        return NULL;
    }
    if (n != 2) {
        ct__fail(CT_ERR_VALUE, c->fn, "expected total rotation dims == 2, but got dims = %d", n);
        return NULL;
    }
    if (t->ndim < 2) {
        ct__fail(CT_ERR_VALUE, c->fn, "expected total dims >= 2, but got total dims = %d",
                 t->ndim);
        return NULL;
    }
    if (dims[0] == dims[1] || dims[0] - dims[1] == t->ndim || dims[1] - dims[0] == t->ndim) {
        ct__fail(CT_ERR_VALUE, c->fn, "expected rotation dims to be different, but got dim0 = "
                 "%lld and dim1 = %lld", (long long)dims[0], (long long)dims[1]);
        return NULL;
    }
    int64_t k = (c->attrs[0].i % 4 + 4) % 4;
    switch (k) {
    case 1:
        return ct_transpose(ct_flip(t, dims + 1, 1), dims[0], dims[1]);
    case 2:
        return ct_flip(t, dims, 2);
    case 3:
        return ct_transpose(ct_flip(t, dims, 1), dims[0], dims[1]);
    default:
        return ct_clone(t);
    }
}
CT__BUILT(rot90)

/* diag (attribute diagonal): 1-D: diag_embed; 2-D: a copy of the diagonal. */
static ct_tensor *ct__diag_build(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    int64_t k = c->attrs[0].i;
    if (t->ndim == 1) {
        return ct_diag_embed(t, k, 0, 1);
    }
    if (t->ndim != 2) {
        ct__fail(CT_ERR_SHAPE, c->fn, "diag(): Supports 1D or 2D tensors. Got %dD", t->ndim);
        return NULL;
    }
    return ct_clone(ct_diagonal(t, k, 0, 1));
}
CT__BUILT(diag)

static ct_tensor *ct__diagflat_build(ct_op_call *c)
{
    return ct_diag_embed(ct_flatten(c->inputs[0], 0, -1), c->attrs[0].i, 0, 1);
}
CT__BUILT(diagflat)

/* t with at least nd dims (1: (1); 2: (1, n); 3: (1, 1, 1), (1, n, 1), (m, n, 1)), or as a
   column (nd 0: 0-dim and 1-D to (n, 1)): a view. */
static const ct_tensor *ct__atleast(const ct_tensor *t, int nd)
{
    int64_t s[3] = {1, 1, 1}, numel = ct_numel(t);
    if (nd == 0) {
        s[0] = numel;
        return t->ndim > 1 ? t : ct_reshape(t, s, 2);
    }
    if (t->ndim >= nd) {
        return t;
    }
    if (t->ndim == 1) {
        s[1] = numel;
    } else if (t->ndim == 2) {
        s[0] = t->sizes[0];
        s[1] = t->sizes[1];
    }
    return ct_reshape(t, s, nd);
}

/* hstack, vstack, dstack, column_stack (variants 0-3): each input made at least 1-, 2-, 3-D
   or a column, concatenated along dim 0 or 1 (hstack), 0, 2, 1. */
static ct_tensor *ct__hstack_build(ct_op_call *c)
{
    static const int nds[4] = {1, 2, 3, 0}, dims[4] = {1, 0, 2, 1};
    int v = c->op->variant;
    const ct_tensor **ts =
        (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)c->n_inputs);
    if (!ts) {
        ct__fail(CT_ERR_OOM, c->fn, "out of memory");
        return NULL;
    }
    for (int k = 0; k < c->n_inputs; k++) {
        ts[k] = ct__atleast(c->inputs[k], nds[v]);
    }
    int dim = v == 0 && ts[0] && ts[0]->ndim == 1 ? 0 : dims[v];
    ct_tensor *r = ct_cat(ts, c->n_inputs, dim);
    ct__free(ts);
    return r;
}
CT__BUILT(hstack)
#undef CT__BUILT

/* ---- descriptors --------------------------------------------------------------------------- */
/* A composite over other ops (its autograd theirs): name, schema, api, variant, meta. */
#define CT__BUILT_OP(SYM, NAME, SCHEMA, API, VAR, META, COMPOSITE)                             \
    CT__SHAPE_OP(SYM, NAME, SCHEMA, API, CT_OP_OTHER, VAR, META, CT__K_NONE, COMPOSITE, NULL,  \
                 NULL, NULL)
CT__BUILT_OP(repeat, "repeat", "repeat(Tensor self, SymInt[] repeats) -> Tensor", "ct_repeat", 0,
             ct__alias_meta, ct__repeat_composite)
CT__BUILT_OP(tile, "tile", "tile(Tensor self, SymInt[] dims) -> Tensor", "ct_tile", 0,
             ct__alias_meta, ct__tile_composite)
CT__BUILT_OP(repeat_interleave, "repeat_interleave", "repeat_interleave.self_int(Tensor self, "
             "SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor",
             "ct_repeat_interleave", 0, ct__alias_meta, ct__repeat_interleave_composite)
CT__SHAPE_OP(flip, "flip", "flip(Tensor self, int[] dims) -> Tensor", "ct_flip", CT_OP_OTHER, 0,
             ct__flip_meta, CT__K_ALL(ct__flip_kernel), NULL, "FlipBackward0",
             ct__flip_backward, ct__view_record)
CT__BUILT_OP(fliplr, "fliplr", "fliplr(Tensor self) -> Tensor", "ct_fliplr", 1, ct__alias_meta,
             ct__flip_lr_ud_composite)
CT__BUILT_OP(flipud, "flipud", "flipud(Tensor self) -> Tensor", "ct_flipud", 0, ct__alias_meta,
             ct__flip_lr_ud_composite)
CT__BUILT_OP(roll, "roll", "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
             "ct_roll", 0, ct__alias_meta, ct__roll_composite)
CT__BUILT_OP(rot90, "rot90", "rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor",
             "ct_rot90", 0, ct__alias_meta, ct__rot90_composite)
CT__VIEW(movedim, "movedim", "movedim.intlist(Tensor(a) self, int[] source, int[] destination) "
         "-> Tensor(a)", "ct_movedim", ct__movedim_meta, ct__movedim_composite, NULL, NULL, NULL)
CT__VIEW(diagonal, "diagonal", "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) "
         "-> Tensor(a)", "ct_diagonal", ct__diagonal_meta, ct__view_kernel, "DiagonalBackward0",
         ct__diagonal_backward, ct__view_record)
CT__SHAPE_OP(diag_embed, "diag_embed", "diag_embed(Tensor self, int offset=0, int dim1=-2, int "
             "dim2=-1) -> Tensor", "ct_diag_embed", CT_OP_OTHER, 0, ct__diag_embed_meta,
             CT__K_ALL(ct__diag_embed_kernel), NULL, "DiagEmbedBackward0",
             ct__diag_embed_backward, ct__view_record)
CT__SHAPE_OP(diagonal_backward, "diagonal_backward", "diagonal_backward(Tensor grad_output, "
             "SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
             "ct_backward (diagonal)", CT_OP_OTHER, 1, ct__diag_embed_meta,
             CT__K_ALL(ct__diag_embed_kernel), NULL, "DiagonalBackwardBackward0",
             ct__diag_embed_backward, ct__view_record)
CT__BUILT_OP(diag, "diag", "diag(Tensor self, int diagonal=0) -> Tensor", "ct_diag", 0,
             ct__alias_meta, ct__diag_composite)
CT__BUILT_OP(diagflat, "diagflat", "diagflat(Tensor self, int offset=0) -> Tensor",
             "ct_diagflat", 0, ct__alias_meta, ct__diagflat_composite)
CT__VIEW(as_strided, "as_strided", "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, "
         "SymInt? storage_offset=None) -> Tensor(a)", "ct_as_strided", ct__as_strided_meta,
         ct__view_kernel, "AsStridedBackward0", ct__as_strided_backward, ct__as_strided_record)
CT__VIEW(unfold, "unfold", "unfold(Tensor(a) self, int dimension, int size, int step) -> "
         "Tensor(a)", "ct_unfold_view", ct__unfold_meta, ct__view_kernel, "UnfoldBackward0",
         ct__unfold_backward, ct__view_record)
CT__BUILT_OP(hstack, "hstack", "hstack(Tensor[] tensors) -> Tensor", "ct_hstack", 0,
             ct__alias_meta, ct__hstack_composite)
CT__BUILT_OP(vstack, "vstack", "vstack(Tensor[] tensors) -> Tensor", "ct_vstack", 1,
             ct__alias_meta, ct__hstack_composite)
CT__BUILT_OP(dstack, "dstack", "dstack(Tensor[] tensors) -> Tensor", "ct_dstack", 2,
             ct__alias_meta, ct__hstack_composite)
CT__BUILT_OP(column_stack, "column_stack", "column_stack(Tensor[] tensors) -> Tensor",
             "ct_column_stack", 3, ct__alias_meta, ct__hstack_composite)
#undef CT__BUILT_OP

/* ---- public functions -------------------------------------------------------------------- */
/* diagonal_backward of g into zeros of sizes (ints {offset, d1, d2}). */
static ct_tensor *ct__diag_scatter(const ct_tensor *g, const int64_t *sizes, int ndim,
                                   const int64_t *ints)
{
    const ct_tensor *in[1] = {g};
    ct_op_call c;
    ct__call_init(&c, &ct__op_diagonal_backward, "ct_diagonal_backward", in, 1);
    ct__call_ints(&c, sizes, ndim);
    for (int k = 0; k < 3; k++) {
        ct__call_i(&c, ints[k]);
    }
    return ct__view_dispatch(&c);
}

/* A call of op over t with two int[] attributes. */
static ct_tensor *ct__view_op_ints2(const ct_op *op, const char *fn, const ct_tensor *t,
                                    const int64_t *a, int na, const int64_t *b, int nb)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, a, na);
    ct__call_ints(&c, b, nb);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_repeat(const ct_tensor *t, const int64_t *repeats, int n)
{
    return ct__view_op_ints(&ct__op_repeat, "ct_repeat", t, repeats, n);
}

ct_tensor *ct_tile(const ct_tensor *t, const int64_t *dims, int n)
{
    return ct__view_op_ints(&ct__op_tile, "ct_tile", t, dims, n);
}

ct_tensor *ct_repeat_interleave(const ct_tensor *t, int64_t repeats, int64_t dim)
{
    int64_t v[2] = {repeats, dim};
    return ct__view_op(&ct__op_repeat_interleave, "ct_repeat_interleave", t, 2, v);
}

ct_tensor *ct_flip(const ct_tensor *t, const int64_t *dims, int n)
{
    return ct__view_op_ints(&ct__op_flip, "ct_flip", t, dims, n);
}

ct_tensor *ct_fliplr(const ct_tensor *t)
{
    return ct__view_op(&ct__op_fliplr, "ct_fliplr", t, 0, NULL);
}

ct_tensor *ct_flipud(const ct_tensor *t)
{
    return ct__view_op(&ct__op_flipud, "ct_flipud", t, 0, NULL);
}

ct_tensor *ct_roll(const ct_tensor *t, const int64_t *shifts, int n_shifts, const int64_t *dims,
                   int n_dims)
{
    return ct__view_op_ints2(&ct__op_roll, "ct_roll", t, shifts, n_shifts, dims, n_dims);
}

ct_tensor *ct_rot90(const ct_tensor *t, int64_t k, const int64_t *dims, int n)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_rot90, "ct_rot90", in, 1);
    ct__call_i(&c, k);
    ct__call_ints(&c, dims, n);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_movedim(const ct_tensor *t, const int64_t *source, const int64_t *destination,
                      int n)
{
    return ct__view_op_ints2(&ct__op_movedim, "ct_movedim", t, source, n, destination, n);
}

ct_tensor *ct_diagonal(const ct_tensor *t, int64_t offset, int64_t dim1, int64_t dim2)
{
    int64_t v[3] = {offset, dim1, dim2};
    return ct__view_op(&ct__op_diagonal, "ct_diagonal", t, 3, v);
}

ct_tensor *ct_diag(const ct_tensor *t, int64_t diagonal)
{
    return ct__view_op(&ct__op_diag, "ct_diag", t, 1, &diagonal);
}

ct_tensor *ct_diag_embed(const ct_tensor *t, int64_t offset, int64_t dim1, int64_t dim2)
{
    int64_t v[3] = {offset, dim1, dim2};
    return ct__view_op(&ct__op_diag_embed, "ct_diag_embed", t, 3, v);
}

ct_tensor *ct_diagflat(const ct_tensor *t, int64_t offset)
{
    return ct__view_op(&ct__op_diagflat, "ct_diagflat", t, 1, &offset);
}

ct_tensor *ct_as_strided(const ct_tensor *t, const int64_t *sizes, const int64_t *strides,
                         int ndim, int64_t storage_offset)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, &ct__op_as_strided, "ct_as_strided", in, 1);
    ct__call_ints(&c, sizes, ndim);
    ct__call_ints(&c, strides, ndim);
    ct__call_i(&c, storage_offset);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_unfold_view(const ct_tensor *t, int64_t dimension, int64_t size, int64_t step)
{
    int64_t v[3] = {dimension, size, step};
    return ct__view_op(&ct__op_unfold, "ct_unfold_view", t, 3, v);
}

/* A call of the stack op over the list ts[n] (empty: "<what> expects a non-empty
   TensorList"). */
static ct_tensor *ct__stack_like(const ct_op *op, const char *fn, const char *what,
                                 const ct_tensor *const *ts, int n)
{
    if (ct__null(fn, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "%s expects a non-empty TensorList", what);
        return NULL;
    }
    ct_op_call c;
    ct__call_init(&c, op, fn, ts, n);
    return ct__view_dispatch(&c);
}

ct_tensor *ct_hstack(const ct_tensor *const *ts, int n)
{
    return ct__stack_like(&ct__op_hstack, "ct_hstack", "hstack", ts, n);
}

ct_tensor *ct_vstack(const ct_tensor *const *ts, int n)
{
    return ct__stack_like(&ct__op_vstack, "ct_vstack", "vstack", ts, n);
}

ct_tensor *ct_dstack(const ct_tensor *const *ts, int n)
{
    return ct__stack_like(&ct__op_dstack, "ct_dstack", "dstack", ts, n);
}

ct_tensor *ct_column_stack(const ct_tensor *const *ts, int n)
{
    return ct__stack_like(&ct__op_column_stack, "ct_column_stack", "column_stack", ts, n);
}

int ct_unbind(const ct_tensor *t, int64_t dim, ct_tensor **out, int capacity)
{
    const char *fn = "ct_unbind";
    if (ct__null(fn, t)) {
        return -1;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, fn, "Dimension specified as %lld but tensor has no dimensions",
                 (long long)dim);
        return -1;
    }
    int d = ct__wrap_dim(fn, dim, t->ndim);
    if (d < 0 || !ct__pieces_fit(fn, t->sizes[d], out, capacity)) {
        return -1;
    }
    for (int64_t k = 0; out && k < t->sizes[d]; k++) {
        int64_t v[2] = {d, k};
        out[k] = ct__view_op(&ct__op_select, fn, t, 2, v);
        if (!out[k]) {
            return -1;
        }
    }
    return (int)t->sizes[d];
}

/* The wrapped dim of tensor_split's input t (at least 1-D), or -1. */
static int ct__tensor_split_dim(const char *fn, const ct_tensor *t, int64_t dim)
{
    if (ct__null(fn, t)) {
        return -1;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, fn, "tensor_split expected at least a 1-dimensional tensor, but "
                 "got a tensor with 0 dims");
        return -1;
    }
    return ct__wrap_dim(fn, dim, t->ndim);
}

/* tensor_split into sections pieces along the wrapped dim d, errors reported as fn's. */
static int ct__tensor_split(const char *fn, const ct_tensor *t, int64_t sections, int d,
                            ct_tensor **out, int capacity)
{
    if (sections <= 0) {
        ct__fail(CT_ERR_VALUE, fn, "number of sections must be larger than 0, got %lld",
                 (long long)sections);
        return -1;
    }
    if (!ct__pieces_fit(fn, sections, out, capacity)) {
        return -1;
    }
    int64_t size = t->sizes[d], q = size / sections, r = size % sections;
    for (int64_t k = 0, start = 0; out && k < sections; k++) {
        int64_t len = q + (k < r);
        out[k] = ct__slice(fn, t, d, start, start + len, 1);
        if (!out[k]) {
            return -1;
        }
        start += len;
    }
    return (int)sections;
}

int ct_tensor_split(const ct_tensor *t, int64_t sections, int64_t dim, ct_tensor **out,
                    int capacity)
{
    int d = ct__tensor_split_dim("ct_tensor_split", t, dim);
    return d < 0 ? -1 : ct__tensor_split("ct_tensor_split", t, sections, d, out, capacity);
}

int ct_tensor_split_indices(const ct_tensor *t, const int64_t *indices, int n, int64_t dim,
                            ct_tensor **out, int capacity)
{
    const char *fn = "ct_tensor_split_indices";
    int d = ct__tensor_split_dim(fn, t, dim);
    if (d < 0 || (n > 0 && ct__null(fn, indices))) {
        return -1;
    }
    if (n < 0 || !ct__pieces_fit(fn, (int64_t)n + 1, out, capacity)) {
        return -1;
    }
    for (int k = 0; out && k <= n; k++) {
        out[k] = ct__slice(fn, t, d, k == 0 ? 0 : indices[k - 1], k == n ? INT64_MAX : indices[k],
                           1);
        if (!out[k]) {
            return -1;
        }
    }
    return n + 1;
}

/* hsplit, vsplit, dsplit: torch.<what> of an input with at least min_nd dims along dim d
   (-1: hsplit's, 0 for a 1-D input, else 1). */
static int ct__hvdsplit(const char *fn, const char *what, int min_nd, int d, const ct_tensor *t,
                        int64_t sections, ct_tensor **out, int capacity)
{
    if (ct__null(fn, t)) {
        return -1;
    }
    if (t->ndim < min_nd) {
        ct__fail(CT_ERR_SHAPE, fn, "torch.%s requires a tensor with at least %d dimension, but got "
                 "a tensor with %d dimensions!", what, min_nd, t->ndim);
        return -1;
    }
    d = d >= 0 ? d : t->ndim == 1 ? 0 : 1;
    if (sections == 0 || t->sizes[d] % sections != 0) {
        ct__fail(CT_ERR_SHAPE, fn, "torch.%s attempted to split along dimension %d, but the size "
                 "of the dimension %lld is not divisible by the split_size %lld!", what, d,
                 (long long)t->sizes[d], (long long)sections);
        return -1;
    }
    return ct__tensor_split(fn, t, sections, d, out, capacity);
}

int ct_hsplit(const ct_tensor *t, int64_t sections, ct_tensor **out, int capacity)
{
    return ct__hvdsplit("ct_hsplit", "hsplit", 1, -1, t, sections, out, capacity);
}

int ct_vsplit(const ct_tensor *t, int64_t sections, ct_tensor **out, int capacity)
{
    return ct__hvdsplit("ct_vsplit", "vsplit", 2, 0, t, sections, out, capacity);
}

int ct_dsplit(const ct_tensor *t, int64_t sections, ct_tensor **out, int capacity)
{
    return ct__hvdsplit("ct_dsplit", "dsplit", 3, 2, t, sections, out, capacity);
}

#undef CT__SHAPE_OP
#undef CT__VIEW
CT__GLUE_END
