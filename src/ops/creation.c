/* ops/creation.c - meshgrid (views of its inputs, as PyTorch's) and DLPack exchange.
 *
 * DLPack: ct_from_dlpack wraps the producer's memory in a borrowed storage whose deleter calls
 * the managed tensor's; ct_to_dlpack hands out a managed tensor holding its own reference to
 * the storage (a tensor struct of ctorch's, released by the consumer's call of the deleter).
 */
#include "../core/internal.h"
#include "view.h"
#include "creation.h"

CT__GLUE_BEGIN

/* ---- meshgrid ---------------------------------------------------------------------- */
/* Checks the list: non-empty, 0-D or 1-D tensors of one dtype and device. */
static bool ct__meshgrid_check(const char *fn, const ct_tensor *const *ts, int n)
{
    if (n < 1) {
        ct__fail(CT_ERR_VALUE, fn, "meshgrid expects a non-empty TensorList");
        return false;
    }
    if (n > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, fn, "a grid of %d tensors has more than %d dimensions", n,
                 CT_MAX_DIMS);
        return false;
    }
    for (int k = 0; k < n; k++) {
        if (ct__null(fn, ts[k])) {
            return false;
        }
        if (ts[k]->ndim > 1) {
            ct__fail(CT_ERR_SHAPE, fn, "torch.meshgrid: Expected 0D or 1D tensor in the tensor "
                     "list but got a %d-D tensor", ts[k]->ndim);
            return false;
        }
        if (ts[k]->dtype != ts[0]->dtype) {
            ct__fail(CT_ERR_DTYPE, fn, "meshgrid expects all tensors to have the same dtype");
            return false;
        }
        if (ts[k]->storage->device.type != ts[0]->storage->device.type ||
            ts[k]->storage->device.index != ts[0]->storage->device.index) {
            ct__fail(CT_ERR_DEVICE, fn, "meshgrid expects all tensors to have the same device");
            return false;
        }
    }
    return true;
}

ct_status ct_meshgrid(const ct_tensor *const *ts, int n, const char *indexing, ct_tensor **out)
{
    const char *fn = "ct_meshgrid";
    if (ct__null(fn, out) || (n > 0 && ct__null(fn, ts))) {
        return CT_ERR_NULL_ARG;
    }
    indexing = indexing ? indexing : "ij";
    bool xy = strcmp(indexing, "xy") == 0;
    if (!xy && strcmp(indexing, "ij") != 0) {
        return ct__fail(CT_ERR_VALUE, fn, "torch.meshgrid: indexing must be one of \"xy\" or "
                        "\"ij\", but received: %s", indexing);
    }
    if (!ct__meshgrid_check(fn, ts, n)) {
        return ct_error_code();
    }
    /* PyTorch: "xy" swaps the first two inputs, builds the "ij" grid and swaps the first two
       outputs back */
    int perm[CT_MAX_DIMS];
    int64_t grid[CT_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        perm[i] = xy && n >= 2 && i < 2 ? 1 - i : i;
        grid[i] = ct__numel(ts[perm[i]]->sizes, ts[perm[i]]->ndim);
    }
    ct_tensor *res[CT_MAX_DIMS];
    bool ok = true;
    for (int i = 0; i < n; i++) {
        int64_t shape[CT_MAX_DIMS];
        for (int k = 0; k < n; k++) {
            shape[k] = k == i ? grid[i] : 1;
        }
        res[perm[i]] = ct_expand(ct_view(ts[perm[i]], shape, n), grid, n);
        ok = ok && res[perm[i]];
    }
    if (!ok) {
        return ct_error_code();
    }
    memcpy(out, res, sizeof(ct_tensor *) * (size_t)n);
    return CT_OK;
}

/* ---- contiguous(memory_format) ----------------------------------------------------- */
ct_tensor *ct_contiguous_memory_format(const ct_tensor *t, ct_memory_format format)
{
    const char *fn = "ct_contiguous_memory_format";
    if (ct__null(fn, t) || !ct__check_enum(fn, "memory_format", (int)format,
                                            (int)CT_PRESERVE_FORMAT + 1)) {
        return NULL;
    }
    if (ct_is_contiguous_memory_format(t, format)) {
        return ct__scoped(ct_retain((ct_tensor *)t));
    }
    if (format == CT_PRESERVE_FORMAT) {
        ct__fail(CT_ERR_VALUE, fn, "preserve memory format is unsupported by the contiguous "
                 "operator");
        return NULL;
    }
    if (format == CT_CONTIGUOUS_FORMAT) {
        return ct_contiguous(t);
    }
    int nd = format == CT_CHANNELS_LAST ? 4 : 5;
    if (t->ndim != nd) {
        ct__fail(CT_ERR_SHAPE, fn, "required rank %d tensor to use %s format", nd,
                 nd == 4 ? "channels_last" : "channels_last_3d");
        return NULL;
    }
    /* (N, C, spatial...) -> (N, spatial..., C) row-major, viewed back as (N, C, spatial...) */
    static const int64_t last4[4] = {0, 2, 3, 1}, back4[4] = {0, 3, 1, 2};
    static const int64_t last5[5] = {0, 2, 3, 4, 1}, back5[5] = {0, 4, 1, 2, 3};
    return ct_permute(ct_contiguous(ct_permute(t, nd == 4 ? last4 : last5, nd)),
                      nd == 4 ? back4 : back5, nd);
}

/* ---- DLPack ------------------------------------------------------------------------ */
/* The DLPack type code of a dtype (bits: its size * 8), or -1 where DLPack has none here. */
static int ct__dlpack_code(ct_dtype d)
{
    switch (d) {
    case CT_BOOL: return CT_DLPACK_BOOL;
    case CT_UINT8: return CT_DLPACK_UINT;
    case CT_INT8:
    case CT_INT16:
    case CT_INT32:
    case CT_INT64: return CT_DLPACK_INT;
    case CT_FLOAT16:
    case CT_FLOAT32:
    case CT_FLOAT64: return CT_DLPACK_FLOAT;
    case CT_BFLOAT16: return CT_DLPACK_BFLOAT;
    default: return -1;
    }
}

/* The dtype of a DLPack type, or CT_DTYPE_DEFAULT + CT_ERR_DTYPE in PyTorch's words. */
static ct_dtype ct__dlpack_dtype(const char *fn, ct_dlpack_dtype t)
{
    static const char *const names[7] = {"kInt", "kUInt", "kFloat", NULL, "kBfloat", NULL,
                                         "kDLBool"};
    if (t.lanes != 1) {
        ct__fail(CT_ERR_DTYPE, fn, "ATen does not support lanes != 1");
        return CT_DTYPE_DEFAULT;
    }
    for (int d = CT_DTYPE_DEFAULT + 1; d < CT_DTYPE_COUNT; d++) {
        if (ct__dlpack_code((ct_dtype)d) == t.code && ct_dtype_size((ct_dtype)d) * 8 == t.bits) {
            return (ct_dtype)d;
        }
    }
    if (t.code < 7 && names[t.code]) {
        ct__fail(CT_ERR_DTYPE, fn, "Unsupported %s bits %u", names[t.code], (unsigned)t.bits);
    } else {
        ct__fail(CT_ERR_DTYPE, fn, "Unsupported code %u", (unsigned)t.code);
    }
    return CT_DTYPE_DEFAULT;
}

/* The borrowed storage's deleter: hands the memory back to its producer. */
static void ct__dlpack_release(void *data, void *ctx)
{
    ct_dlpack_managed_tensor *m = (ct_dlpack_managed_tensor *)ctx;
    (void)data;
    if (m->deleter) {
        m->deleter(m);
    }
}

/* Checks the geometry of d: ndim, sizes and strides; writes its strides (row-major when d has
   none) and the elements its memory spans. */
static bool ct__dlpack_geometry(const char *fn, const ct_dlpack_tensor *d, int64_t *strides,
                                int64_t *span)
{
    if (d->ndim < 0 || d->ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, fn, "number of dimensions %d is out of range [0, %d]",
                 (int)d->ndim, CT_MAX_DIMS);
        return false;
    }
    if (d->ndim > 0 && ct__null(fn, d->shape)) {
        return false;
    }
    ct__contiguous_strides(d->shape, d->ndim, strides);
    double extent = 1;
    for (int i = 0; i < d->ndim; i++) {
        strides[i] = d->strides ? d->strides[i] : strides[i];
        if (d->shape[i] < 0 || strides[i] < 0) {
            ct__fail(CT_ERR_SHAPE, fn, "dimension %d has size %lld and stride %lld: negative "
                     "sizes and strides are not supported", i, (long long)d->shape[i],
                     (long long)strides[i]);
            return false;
        }
        extent += d->shape[i] > 0 ? (double)(d->shape[i] - 1) * (double)strides[i] : 0;
    }
    *span = ct__numel(d->shape, d->ndim) == 0 ? 0 : (int64_t)extent;
    if (extent > (double)(INT64_MAX / 16) || (*span > 0 && !d->data)) {
        ct__fail(CT_ERR_SHAPE, fn, "the DLPack tensor spans %.0f elements at %p", extent,
                 d->data);
        return false;
    }
    return true;
}

ct_tensor *ct_from_dlpack(ct_dlpack_managed_tensor *m)
{
    const char *fn = "ct_from_dlpack";
    if (ct__null(fn, m)) {
        return NULL;
    }
    const ct_dlpack_tensor *d = &m->dl_tensor;
    if (d->device.device_type != CT_DLPACK_CPU && d->device.device_type != CT_DLPACK_CUDA_HOST) {
        ct__fail(CT_ERR_DEVICE, fn, "Unsupported device_type: %d", (int)d->device.device_type);
        return NULL;
    }
    ct_dtype dtype = ct__dlpack_dtype(fn, d->dtype);
    int64_t strides[CT_MAX_DIMS], span;
    if (dtype == CT_DTYPE_DEFAULT || !ct__dlpack_geometry(fn, d, strides, &span)) {
        return NULL;
    }
    /* a 1-D tensor over the memory, then given the DLPack geometry (nobody else sees it yet);
       an empty tensor reads nothing, so any non-NULL address serves */
    char *data = d->data ? (char *)d->data + d->byte_offset : (char *)m;
    ct_tensor *t = ct_from_blob(data, dtype, &span, 1, ct__dlpack_release, m);
    if (t) {
        t->ndim = d->ndim;
        for (int i = 0; i < d->ndim; i++) {
            t->sizes[i] = d->shape[i];
            t->strides[i] = strides[i];
        }
    }
    return t;
}

/* What ct_to_dlpack hands out: the managed tensor first, then what it points into. */
typedef struct ct__dlpack_export {
    ct_dlpack_managed_tensor m;
    ct_tensor *ref; /* ctorch's reference to the storage, with the exported geometry */
    int64_t shape[CT_MAX_DIMS], strides[CT_MAX_DIMS];
} ct__dlpack_export;

static void ct__dlpack_export_free(ct_dlpack_managed_tensor *m)
{
    ct__dlpack_export *e = (ct__dlpack_export *)m->manager_ctx;
    ct__release(e->ref);
    ct__free(e);
}

ct_dlpack_managed_tensor *ct_to_dlpack(const ct_tensor *t)
{
    const char *fn = "ct_to_dlpack";
    if (ct__null(fn, t) || !ct__check_cpu(fn, t)) {
        return NULL;
    }
    if (t->requires_grad || t->grad_fn) {
        ct__fail(CT_ERR_AUTOGRAD, fn, "Can't export tensors that require gradient, use "
                 "tensor.detach()");
        return NULL;
    }
    if (ct__dlpack_code(t->dtype) < 0) {
        ct__fail(CT_ERR_DTYPE, fn, "DLPack exchange of %s tensors is not supported",
                 ct_dtype_name(t->dtype));
        return NULL;
    }
    ct__dlpack_export *e = (ct__dlpack_export *)ct__calloc(sizeof *e);
    ct_tensor *ref = e ? ct__tensor_over(t->storage, t->dtype, t->sizes, t->strides, t->ndim,
                                         t->offset)
                       : NULL;
    if (!ref) {
        ct__free(e);
        ct__fail(CT_ERR_OOM, fn, "out of memory");
        return NULL;
    }
    e->ref = ref;
    for (int i = 0; i < t->ndim; i++) {
        e->shape[i] = t->sizes[i];
        e->strides[i] = t->strides[i];
    }
    ct_dlpack_tensor *d = &e->m.dl_tensor;
    d->data = ct__data(t);
    d->device.device_type = CT_DLPACK_CPU;
    d->device.device_id = 0;
    d->ndim = t->ndim;
    d->dtype.code = (uint8_t)ct__dlpack_code(t->dtype);
    d->dtype.bits = (uint8_t)(ct_dtype_size(t->dtype) * 8);
    d->dtype.lanes = 1;
    d->shape = e->shape;
    d->strides = e->strides;
    d->byte_offset = 0;
    e->m.manager_ctx = e;
    e->m.deleter = ct__dlpack_export_free;
    return &e->m;
}
CT__GLUE_END
