/* ops/view.c - views over shared storage and shape ops (cat, stack).
 *
 * A view is a new tensor object with its own sizes/strides/offset over the input's storage.
 * Its backward maps the view's gradient back to the input's shape.
 */
#include "../core/internal.h"
#include "view.h"
#include "pointwise.h"
#include "../autograd/autograd.h"

/* ---- derivative formulas ------------------------------------------------------------- */
static void ct__view_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct_reshape(g, n->next[0].sizes, n->next[0].ndim);
}


static void ct__permute_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    int64_t inv[CT_MAX_DIMS];
    for (int d = 0; d < g->ndim; d++) {
        inv[n->i[d]] = d;
    }
    gi[0] = ct_permute(g, inv, g->ndim);
}

/* ints: i[0] dim, i[1] start, i[2] length, i[3] 1 for select (the dim is dropped) */
static ct_tensor *ct__slice_scatter(const ct_tensor *g, const ct__edge *in, const int64_t *ints);

static void ct__slice_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    gi[0] = ct__slice_scatter(g, &n->next[0], n->i);
}

/* The slice backward is linear in g: its own backward takes the same slice of gg. */
static void ct__slice_scatter_backward(ct_node *n, const ct_tensor *gg, ct_tensor **gi)
{
    gi[0] = n->i[3] ? ct_select(gg, n->i[0], n->i[1]) : ct_narrow(gg, n->i[0], n->i[1], n->i[2]);
}

/* Zeros of the input's shape with g written into the slice (differentiable in g). */
static ct_tensor *ct__slice_scatter(const ct_tensor *g, const ct__edge *in, const int64_t *ints)
{
    ct_tensor *z = ct__tensor_new("ct_slice_backward", in->sizes, in->ndim, g->dtype);
    if (!z) {
        return NULL;
    }
    memset(ct__data(z), 0, ct_nbytes(z));
    int d = (int)ints[0];
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int k = 0; k < z->ndim; k++) {
        if (k == d && ints[3]) {
            continue;
        }
        sizes[nd] = k == d ? ints[2] : z->sizes[k];
        strides[nd++] = z->strides[k];
    }
    ct_tensor *slot =
        ct__tensor_over(z->storage, z->dtype, sizes, strides, nd, ints[1] * z->strides[d]);
    if (!slot) {
        ct__release(z);
        return NULL;
    }
    ct__copy_kernel(slot, g);
    ct__release(slot);
    ct_node *n = ct__node_new(ints[3] ? "SelectBackwardBackward0" : "NarrowBackwardBackward0",
                              ct__slice_scatter_backward, &g, 1);
    if (n) {
        memcpy(n->i, ints, 4 * sizeof(int64_t));
    }
    z = ct__set_history(z, n);
    return ct__scoped(z);
}

/* A scoped view of t; records a node (name, fn, with integers ints[ni]) when t requires
   grad. */
static ct_tensor *ct__make_view(const ct_tensor *t, const int64_t *sizes, const int64_t *strides,
                                int ndim, int64_t offset, const char *name, ct__backward_fn fn,
                                const int64_t *ints, int ni)
{
    ct_tensor *v = ct__tensor_over(t->storage, t->dtype, sizes, strides, ndim, offset);
    if (!v) {
        return NULL;
    }
    ct_node *n = ct__node_new(name, fn, &t, 1);
    if (n) {
        for (int k = 0; k < ni; k++) {
            n->i[k] = ints[k];
        }
    }
    v = ct__set_history(v, n);
    if (!v) {
        return NULL;
    }
    v->view_of = t->view_of         ? t->view_of
                 : t->grad_fn       ? CT__VIEW_OF_GRAPH
                 : t->requires_grad ? CT__VIEW_OF_LEAF
                                    : CT__VIEW_OF_NONE;
    v->view_version = t->view_of ? t->view_version : t->storage->version;
    return ct__scoped(v);
}

static bool ct__view_check(const char *op, const ct_tensor *t)
{
    return !ct__null(op, t);
}

ct_tensor *ct_alias(const ct_tensor *t)
{
    if (!ct__view_check("ct_alias", t)) {
        return NULL;
    }
    return ct__make_view(t, t->sizes, t->strides, t->ndim, t->offset, "AliasBackward0",
                         ct__identity_backward, NULL, 0);
}

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

ct_tensor *ct_view(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_view";
    int64_t shape[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    if (!ct__view_check(op, t) || !ct__infer_size(op, sizes, ndim, ct_numel(t), shape)) {
        return NULL;
    }
    if (!ct__view_strides(t, shape, ndim, strides)) {
        ct__fail(CT_ERR_SHAPE, op,
                 "view size is not compatible with input tensor's size and "
                 "stride (at least one dimension spans across two contiguous subspaces). Use "
                 ".reshape(...) instead.");
        return NULL;
    }
    return ct__make_view(t, shape, strides, ndim, t->offset, "ViewBackward0", ct__view_backward,
                         NULL, 0);
}

ct_tensor *ct_reshape(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_reshape";
    int64_t shape[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    if (!ct__view_check(op, t) || !ct__infer_size(op, sizes, ndim, ct_numel(t), shape)) {
        return NULL;
    }
    if (ct__view_strides(t, shape, ndim, strides)) {
        return ct__make_view(t, shape, strides, ndim, t->offset, "ViewBackward0", ct__view_backward,
                             NULL, 0);
    }
    ct_tensor *c = ct_clone(t); /* contiguous copy, then a view of it */
    ct_tensor *r = ct_view(c, shape, ndim);
    ct_free(c);
    return r;
}

ct_tensor *ct_flatten(const ct_tensor *t, int64_t start_dim, int64_t end_dim)
{
    const char *op = "ct_flatten";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        int64_t one = 1;
        return ct_reshape(t, &one, 1);
    }
    int s = ct__wrap_dim(op, start_dim, t->ndim), e = ct__wrap_dim(op, end_dim, t->ndim);
    if (s < 0 || e < 0) {
        return NULL;
    }
    if (s > e) {
        ct__fail(CT_ERR_VALUE, op,
                 "flatten() has invalid args: start_dim cannot come after "
                 "end_dim");
        return NULL;
    }
    int64_t shape[CT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (d <= s || d > e) {
            shape[nd++] = t->sizes[d];
        } else {
            shape[nd - 1] *= t->sizes[d];
        }
    }
    return ct_reshape(t, shape, nd);
}

ct_tensor *ct_permute(const ct_tensor *t, const int64_t *dims, int ndim)
{
    const char *op = "ct_permute";
    if (!ct__view_check(op, t) || ct__null(op, ndim ? (const void *)dims : (const void *)t)) {
        return NULL;
    }
    if (ndim != t->ndim) {
        ct__fail(CT_ERR_SHAPE, op, "number of dims don't match in permute");
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS], perm[CT_MAX_DIMS];
    bool seen[CT_MAX_DIMS] = {false};
    for (int d = 0; d < ndim; d++) {
        int k = ct__wrap_dim(op, dims[d], ndim);
        if (k < 0) {
            return NULL;
        }
        if (seen[k]) {
            ct__fail(CT_ERR_VALUE, op, "repeated dim in permute");
            return NULL;
        }
        seen[k] = true;
        perm[d] = k;
        sizes[d] = t->sizes[k];
        strides[d] = t->strides[k];
    }
    return ct__make_view(t, sizes, strides, ndim, t->offset, "PermuteBackward0",
                         ct__permute_backward, perm, ndim);
}

ct_tensor *ct_transpose(const ct_tensor *t, int64_t dim0, int64_t dim1)
{
    const char *op = "ct_transpose";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        return ct_alias(t);
    }
    int a = ct__wrap_dim(op, dim0, t->ndim), b = ct__wrap_dim(op, dim1, t->ndim);
    if (a < 0 || b < 0) {
        return NULL;
    }
    int64_t perm[CT_MAX_DIMS];
    for (int d = 0; d < t->ndim; d++) {
        perm[d] = d;
    }
    perm[a] = b;
    perm[b] = a;
    return ct_permute(t, perm, t->ndim);
}

ct_tensor *ct_t(const ct_tensor *t)
{
    if (!ct__view_check("ct_t", t)) {
        return NULL;
    }
    if (t->ndim > 2) {
        ct__fail(CT_ERR_SHAPE, "ct_t",
                 "t() expects a tensor with <= 2 dimensions, but self is "
                 "%dD",
                 t->ndim);
        return NULL;
    }
    return t->ndim < 2 ? ct_alias(t) : ct_transpose(t, 0, 1);
}

static ct_tensor *ct__reshape_view(const char *op, const ct_tensor *t, const int64_t *sizes,
                                   const int64_t *strides, int ndim)
{
    (void)op;
    return ct__make_view(t, sizes, strides, ndim, t->offset, "ViewBackward0", ct__view_backward,
                         NULL, 0);
}

ct_tensor *ct_unsqueeze(const ct_tensor *t, int64_t dim)
{
    const char *op = "ct_unsqueeze";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, op, "tensors have at most %d dimensions", CT_MAX_DIMS);
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim + 1);
    if (d < 0) {
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int k = 0, j = 0; k <= t->ndim; k++) {
        if (k == d) {
            sizes[k] = 1;
            strides[k] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
        } else {
            sizes[k] = t->sizes[j];
            strides[k] = t->strides[j];
            j++;
        }
    }
    return ct__reshape_view(op, t, sizes, strides, t->ndim + 1);
}

static ct_tensor *ct__squeeze(const char *op, const ct_tensor *t, int only)
{
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < t->ndim; d++) {
        if (t->sizes[d] == 1 && (only < 0 || only == d)) {
            continue;
        }
        sizes[nd] = t->sizes[d];
        strides[nd] = t->strides[d];
        nd++;
    }
    return ct__reshape_view(op, t, sizes, strides, nd);
}

ct_tensor *ct_squeeze(const ct_tensor *t)
{
    return ct__view_check("ct_squeeze", t) ? ct__squeeze("ct_squeeze", t, -1) : NULL;
}

ct_tensor *ct_squeeze_dim(const ct_tensor *t, int64_t dim)
{
    const char *op = "ct_squeeze_dim";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    return d < 0 ? NULL : t->ndim == 0 ? ct_alias(t) : ct__squeeze(op, t, d);
}

ct_tensor *ct_expand(const ct_tensor *t, const int64_t *sizes, int ndim)
{
    const char *op = "ct_expand";
    if (!ct__view_check(op, t) || (ndim > 0 && ct__null(op, sizes))) {
        return NULL;
    }
    if (ndim < t->ndim || ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, op,
                 "the number of sizes provided (%d) must be greater or equal "
                 "to the number of dimensions in the tensor (%d)",
                 ndim, t->ndim);
        return NULL;
    }
    int64_t out[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        int td = d - (ndim - t->ndim);
        int64_t want = sizes[d];
        if (td < 0) {
            if (want < 0) {
                ct__fail(CT_ERR_SHAPE, op,
                         "The expanded size of the tensor (%lld) isn't allowed "
                         "in a leading, non-existing dimension %d",
                         (long long)want, d);
                return NULL;
            }
            out[d] = want;
            strides[d] = 0;
            continue;
        }
        int64_t have = t->sizes[td];
        if (want == -1) {
            want = have;
        }
        if (have != want && have != 1) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, op,
                     "The expanded size of the tensor (%lld) must match the "
                     "existing size (%lld) at non-singleton dimension %d.  Target sizes: %s.  "
                     "Tensor sizes: %s",
                     (long long)want, (long long)have, d, ct__shape_str(sizes, ndim, a, sizeof a),
                     ct__shape_str(t->sizes, t->ndim, b, sizeof b));
            return NULL;
        }
        out[d] = want;
        strides[d] = have == want ? t->strides[td] : 0;
    }
    return ct__make_view(t, out, strides, ndim, t->offset, "ExpandBackward0", ct__identity_backward,
                         NULL, 0);
}

ct_tensor *ct_narrow(const ct_tensor *t, int64_t dim, int64_t start, int64_t length)
{
    const char *op = "ct_narrow";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op, "narrow() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t size = t->sizes[d];
    if (start < 0) {
        start += size;
    }
    if (start < 0 || start > size || length < 0 || start + length > size) {
        ct__fail(CT_ERR_INDEX, op, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                 (long long)start, (long long)length, (long long)size);
        return NULL;
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, t->sizes, sizeof(int64_t) * (size_t)t->ndim);
    sizes[d] = length;
    int64_t ints[4] = {d, start, length, 0};
    return ct__make_view(t, sizes, t->strides, t->ndim, t->offset + start * t->strides[d],
                         "NarrowBackward0", ct__slice_backward, ints, 4);
}

ct_tensor *ct_select(const ct_tensor *t, int64_t dim, int64_t index)
{
    const char *op = "ct_select";
    if (!ct__view_check(op, t)) {
        return NULL;
    }
    if (t->ndim == 0) {
        ct__fail(CT_ERR_INDEX, op, "select() cannot be applied to a 0-dim tensor.");
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, t->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t size = t->sizes[d];
    if (index < -size || index >= size) {
        char buf[160];
        ct__fail(CT_ERR_INDEX, op,
                 "select(): index %lld out of range for tensor of size %s at "
                 "dimension %d",
                 (long long)index, ct__shape_str(t->sizes, t->ndim, buf, sizeof buf), d);
        return NULL;
    }
    if (index < 0) {
        index += size;
    }
    int64_t sizes[CT_MAX_DIMS], strides[CT_MAX_DIMS];
    for (int k = 0, j = 0; k < t->ndim; k++) {
        if (k != d) {
            sizes[j] = t->sizes[k];
            strides[j] = t->strides[k];
            j++;
        }
    }
    int64_t ints[4] = {d, index, 1, 1};
    return ct__make_view(t, sizes, strides, t->ndim - 1, t->offset + index * t->strides[d],
                         "SelectBackward0", ct__slice_backward, ints, 4);
}

ct_tensor *ct_contiguous(const ct_tensor *t)
{
    if (!ct__view_check("ct_contiguous", t)) {
        return NULL;
    }
    return ct_is_contiguous(t) ? ct_alias(t) : ct_clone(t);
}

/* ---- cat and stack ------------------------------------------------------------------- */
static void ct__cat_backward(ct_node *n, const ct_tensor *g, ct_tensor **gi)
{
    const int64_t *offsets = (const int64_t *)n->ctx;
    for (int k = 0; k < n->n_next; k++) {
        if (ct__needs_grad(n, k)) {
            gi[k] = ct_narrow(g, n->i[0], offsets[k], offsets[k + 1] - offsets[k]);
        }
    }
}

ct_tensor *ct_cat(const ct_tensor *const *ts, int n, int64_t dim)
{
    const char *op = "ct_cat";
    if (ct__null(op, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, op, "expected a non-empty list of Tensors");
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        if (ct__null(op, ts[k]) || !ct__check_cpu(op, ts[k])) {
            return NULL;
        }
    }
    const ct_tensor *ref = ts[0];
    if (ref->ndim == 0) {
        ct__fail(CT_ERR_SHAPE, op,
                 "zero-dimensional tensor (at position 0) cannot be "
                 "concatenated");
        return NULL;
    }
    int d = ct__wrap_dim(op, dim, ref->ndim);
    if (d < 0) {
        return NULL;
    }
    int64_t *offsets = (int64_t *)ct__malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!offsets) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_dtype dt = ref->dtype;
    offsets[0] = 0;
    for (int k = 0; k < n; k++) {
        const ct_tensor *t = ts[k];
        bool ok = t->ndim == ref->ndim;
        for (int j = 0; ok && j < ref->ndim; j++) {
            if (j != d && t->sizes[j] != ref->sizes[j]) {
                ct__fail(CT_ERR_SHAPE, op,
                         "Sizes of tensors must match except in dimension %d. "
                         "Expected size %lld but got size %lld for tensor number %d in the list.",
                         d, (long long)ref->sizes[j], (long long)t->sizes[j], k);
                ok = false;
            }
        }
        if (t->ndim != ref->ndim) {
            ct__fail(CT_ERR_SHAPE, op, "Tensors must have same number of dimensions: got %d and %d",
                     ref->ndim, t->ndim);
        }
        if (!ok) {
            ct__free(offsets);
            return NULL;
        }
        dt = ct_promote_types(dt, t->dtype);
        offsets[k + 1] = offsets[k] + t->sizes[d];
    }
    int64_t sizes[CT_MAX_DIMS];
    memcpy(sizes, ref->sizes, sizeof(int64_t) * (size_t)ref->ndim);
    sizes[d] = offsets[n];
    ct_tensor *out = ct__tensor_new(op, sizes, ref->ndim, dt);
    if (!out) {
        ct__free(offsets);
        return NULL;
    }
    for (int k = 0; k < n; k++) { /* copy each input into its slice of out */
        int64_t part[CT_MAX_DIMS];
        memcpy(part, sizes, sizeof part);
        part[d] = ts[k]->sizes[d];
        ct_tensor *slot = ct__tensor_over(out->storage, dt, part, out->strides, out->ndim,
                                          offsets[k] * out->strides[d]);
        if (slot) {
            ct__copy_kernel(slot, ts[k]);
        }
        ct__release(slot);
    }
    ct_node *node = ct_dtype_is_floating_point(dt)
                        ? ct__node_new("CatBackward0", ct__cat_backward, ts, n)
                        : NULL;
    if (node) {
        node->i[0] = d;
        node->ctx = offsets;
        node->ctx_free = ct__free;
    } else {
        ct__free(offsets);
    }
    out = ct__set_history(out, node);
    return ct__scoped(out);
}

ct_tensor *ct_stack(const ct_tensor *const *ts, int n, int64_t dim)
{
    const char *op = "ct_stack";
    if (ct__null(op, ts)) {
        return NULL;
    }
    if (n <= 0) {
        ct__fail(CT_ERR_VALUE, op, "stack expects a non-empty TensorList");
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        if (ct__null(op, ts[k])) {
            return NULL;
        }
        if (ts[k]->ndim != ts[0]->ndim ||
            memcmp(ts[k]->sizes, ts[0]->sizes, sizeof(int64_t) * (size_t)ts[0]->ndim) != 0) {
            char a[160], b[160];
            ct__fail(CT_ERR_SHAPE, op,
                     "stack expects each tensor to be equal size, but got %s at "
                     "entry 0 and %s at entry %d",
                     ct__shape_str(ts[0]->sizes, ts[0]->ndim, a, sizeof a),
                     ct__shape_str(ts[k]->sizes, ts[k]->ndim, b, sizeof b), k);
            return NULL;
        }
    }
    int d = ct__wrap_dim(op, dim, ts[0]->ndim + 1);
    if (d < 0) {
        return NULL;
    }
    const ct_tensor **views = (const ct_tensor **)ct__malloc(sizeof(ct_tensor *) * (size_t)n);
    if (!views) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    ct_scope_begin();
    for (int k = 0; k < n; k++) {
        views[k] = ct_unsqueeze(ts[k], d);
    }
    ct_tensor *out = ct_keep(ct_cat(views, n, d));
    ct_scope_end();
    ct__free(views);
    return out;
}
