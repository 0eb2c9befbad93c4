/* core/tensor.c - tensor and storage objects, attributes, creation. */
#include "internal.h"
#include "scope.h"
#include "../ops/view.h"
#include "../autograd/autograd.h"

#include <stdio.h>

/* ---- storage ------------------------------------------------------------------------ */
/* Pinned storage's deleter: ctx is the backend whose host_alloc made it. */
static void ct__pinned_free(void *data, void *ctx)
{
    const ct_backend *b = (const ct_backend *)ctx;
    b->host_free(b->user, data);
}

/* nbytes of memory on device (its backend's, for a device other than the CPU); pin (not
   NULL): page-locked host memory from its host_alloc. */
static ct_storage *ct__storage_new(size_t nbytes, ct_device device, const ct_backend *pin)
{
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        return NULL;
    }
    size_t n = nbytes ? nbytes : 1;
    const ct_backend *b = device.type == CT_CPU ? NULL : ct__backend(device.type);
    s->data = pin ? pin->host_alloc(pin->user, n) : b ? b->malloc(b->user, device, n)
                                                      : ct__malloc(n);
    if (pin) {
        s->borrowed = s->pinned = true;
        s->deleter = ct__pinned_free;
        s->deleter_ctx = (void *)pin;
    }
    if (!s->data) {
        ct__free(s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->refcount = 1;
    s->device = device;
    s->inference = ct_is_inference_mode_enabled();
    return s;
}

void ct__storage_release(ct_storage *s)
{
    if (!s || CT__ATOMIC_ADD(&s->refcount, -1) > 0) {
        return;
    }
    if (s->borrowed) {
        if (s->deleter) {
            s->deleter(s->data, s->deleter_ctx);
        }
    } else if (s->device.type != CT_CPU) {
        const ct_backend *b = ct__backend(s->device.type);
        b->free(b->user, s->device, s->data);
    } else {
        ct__free(s->data);
    }
    ct__free(s);
}

/* ---- tensor objects ----------------------------------------------------------------- */
int64_t ct__numel(const int64_t *sizes, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        n *= sizes[i];
    }
    return n;
}

void ct__contiguous_strides(const int64_t *sizes, int ndim, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= sizes[i] > 1 ? sizes[i] : 1;
    }
}

ct_tensor *ct__tensor_over(ct_storage *storage, ct_dtype dtype, const int64_t *sizes,
                           const int64_t *strides, int ndim, int64_t offset)
{
    ct_tensor *t = (ct_tensor *)ct__calloc(sizeof(ct_tensor));
    if (!t) {
        ct__fail(CT_ERR_OOM, "ct_tensor", "out of memory allocating a tensor");
        return NULL;
    }
    CT__ATOMIC_ADD(&storage->refcount, 1);
    t->storage = storage;
    t->dtype = dtype;
    t->ndim = ndim;
    t->offset = offset;
    t->refcount = 1;
    t->scope_depth = -1;
    for (int i = 0; i < ndim; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides[i];
    }
    ct__debug_track(t, NULL);
    return t;
}

static bool ct__check_shape(const char *op, const int64_t *sizes, int ndim)
{
    if (ndim < 0 || ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_SHAPE, op, "number of dimensions %d is out of range [0, %d]", ndim,
                 CT_MAX_DIMS);
        return false;
    }
    if (ndim > 0 && !sizes) {
        ct__null(op, sizes);
        return false;
    }
    double total = 1;
    for (int i = 0; i < ndim; i++) {
        if (sizes[i] < 0) {
            char buf[160];
            ct__fail(CT_ERR_SHAPE, op,
                     "Trying to create tensor with negative dimension "
                     "%lld: %s",
                     (long long)sizes[i], ct__shape_str(sizes, ndim, buf, sizeof buf));
            return false;
        }
        total *= (double)sizes[i];
    }
    if (total > (double)(INT64_MAX / 16)) {
        ct__fail(CT_ERR_SHAPE, op, "tensor of %.0f elements is too large", total);
        return false;
    }
    return true;
}

ct_tensor *ct__tensor_new(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__tensor_new_on(op, sizes, ndim, dtype, ct_device_cpu());
}

/* ct__tensor_new_on, in pinned memory of backend pin when it is not NULL. */
static ct_tensor *ct__tensor_alloc(const char *op, const int64_t *sizes, int ndim,
                                   ct_dtype dtype, ct_device device, const ct_backend *pin)
{
    if (!ct__check_dtype_arg(op, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    if (!ct__check_shape(op, sizes, ndim)) {
        return NULL;
    }
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    uint64_t bytes = (uint64_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype); /* < 2^63 */
    if (bytes > SIZE_MAX / 2) { /* only where size_t is narrower than 64 bits */
        ct__fail(CT_ERR_OOM, op, "DefaultCPUAllocator: not enough memory: you tried to allocate "
                 "%llu bytes", (unsigned long long)bytes);
        return NULL;
    }
    size_t nbytes = (size_t)bytes;
    if (device.type != CT_CPU && !ct__backend(device.type)) {
        char d[32];
        ct__fail(CT_ERR_DEVICE, op, "no backend is registered for device %s",
                 ct__device_str(device, d, sizeof d));
        return NULL;
    }
    ct_storage *s = ct__storage_new(nbytes, device, pin);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "%s%sAllocator: not enough memory: you tried to allocate %zu "
                 "bytes", pin ? pin->name : device.type == CT_CPU ? "DefaultCPU"
                                                                 : ct__device_key(device.type),
                 pin ? "Host" : "", nbytes);
        return NULL;
    }
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    if (t) {
        ct__debug_track(t, op);
    }
    return t;
}

ct_tensor *ct__tensor_new_on(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype,
                             ct_device device)
{
    return ct__tensor_alloc(op, sizes, ndim, dtype, device, NULL);
}

ct_tensor *ct__tensor_new_pinned(const char *op, const int64_t *sizes, int ndim,
                                 ct_dtype dtype, const ct_backend *pin)
{
    return ct__tensor_alloc(op, sizes, ndim, dtype, ct_device_cpu(), pin);
}

void ct__release(ct_tensor *t)
{
    if (!t || CT__ATOMIC_ADD(&t->refcount, -1) > 0) {
        return;
    }
    if (t->retains_grad && t->grad_fn && t->grad_fn->retain_target == t) {
        t->grad_fn->retain_target = NULL; /* the weak reference of ct_retain_grad */
    }
    ct__storage_release(t->storage);
    ct__release(t->base);
    ct__release(t->grad);
    ct__node_release(t->grad_fn);
    for (ct__hook *h = t->hooks; h;) {
        ct__hook *next = h->next;
        ct__free(h);
        h = next;
    }
    ct__debug_untrack(t);
    ct__free(t);
}

void ct_release(ct_tensor *t)
{
    if (t && ct__debug_check("ct_release", t, true)) {
        ct__release(t);
    }
}

ct_tensor *ct_retain(ct_tensor *t)
{
    if (!t || !ct__debug_check("ct_retain", t, true)) {
        return NULL;
    }
    CT__ATOMIC_ADD(&t->refcount, 1);
    return t;
}

CT__GLUE_BEGIN
/* ---- attributes --------------------------------------------------------------------- */
bool ct__null_any(const char *op, const void *p)
{
    if (p) {
        ct__debug_enter(op);
        return !ct__debug_check(op, p, false);
    }
    if (!ct_error()) {
        ct__fail(CT_ERR_NULL_ARG, op, "argument is NULL");
    }
    return true;
}

bool ct__null_tensor(const char *op, const ct_tensor *t)
{
    return ct__null_any(op, t) || !ct__debug_check(op, t, true);
}

bool ct__check_cpu(const char *op, const ct_tensor *t)
{
    if (!ct__debug_check(op, t, true)) {
        return false;
    }
    if (t->storage->device.type == CT_CPU) {
        return true;
    }
    char d[32];
    ct__fail(CT_ERR_DEVICE, op, "expected a CPU tensor, got a tensor on device %s",
             ct__device_str(t->storage->device, d, sizeof d));
    return false;
}

int ct__wrap_dim(const char *op, int64_t dim, int ndim)
{
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n) {
        ct__fail(CT_ERR_INDEX, op,
                 "Dimension out of range (expected to be in range of "
                 "[%lld, %lld], but got %lld)",
                 (long long)-n, (long long)(n - 1), (long long)dim);
        return -1;
    }
    return (int)(dim < 0 ? dim + n : dim);
}

const char *ct__shape_str(const int64_t *sizes, int ndim, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < ndim && used < n; i++) {
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)sizes[i]);
    }
    if (used < n) {
        snprintf(buf + used, n - used, "]");
    }
    return buf;
}

int ct_dim(const ct_tensor *t)
{
    return ct__null_tensor("ct_dim", t) ? -1 : t->ndim;
}

int64_t ct_size(const ct_tensor *t, int64_t dim)
{
    if (ct__null_tensor("ct_size", t)) {
        return -1;
    }
    int d = ct__wrap_dim("ct_size", dim, t->ndim);
    return (d < 0 || t->ndim == 0) ? -1 : t->sizes[d];
}

const int64_t *ct_sizes(const ct_tensor *t)
{
    return ct__null_tensor("ct_sizes", t) ? NULL : t->sizes;
}

int64_t ct_stride(const ct_tensor *t, int64_t dim)
{
    if (ct__null_tensor("ct_stride", t)) {
        return -1;
    }
    int d = ct__wrap_dim("ct_stride", dim, t->ndim);
    return (d < 0 || t->ndim == 0) ? -1 : t->strides[d];
}

const int64_t *ct_strides(const ct_tensor *t)
{
    return ct__null_tensor("ct_strides", t) ? NULL : t->strides;
}

int64_t ct_storage_offset(const ct_tensor *t)
{
    return ct__null_tensor("ct_storage_offset", t) ? 0 : t->offset;
}

int64_t ct_numel(const ct_tensor *t)
{
    return ct__null_tensor("ct_numel", t) ? 0 : ct__numel(t->sizes, t->ndim);
}

ct_dtype ct_tensor_dtype(const ct_tensor *t)
{
    return ct__null_tensor("ct_tensor_dtype", t) ? CT_DTYPE_DEFAULT : t->dtype;
}

ct_device ct_tensor_device(const ct_tensor *t)
{
    return ct__null_tensor("ct_tensor_device", t) ? ct_device_cpu() : t->storage->device;
}

bool ct_is_pinned(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_pinned", t) && t->storage->pinned;
}

size_t ct_element_size(const ct_tensor *t)
{
    return ct__null_tensor("ct_element_size", t) ? 0 : ct_dtype_size(t->dtype);
}

size_t ct_nbytes(const ct_tensor *t)
{
    return ct__null_tensor("ct_nbytes", t)
               ? 0
               : (size_t)ct__numel(t->sizes, t->ndim) * ct_dtype_size(t->dtype);
}

void *ct_data_ptr(const ct_tensor *t)
{
    return ct__null_tensor("ct_data_ptr", t) ? NULL : ct__data(t);
}

bool ct_is_contiguous(const ct_tensor *t)
{
    if (ct__null_tensor("ct_is_contiguous", t)) {
        return false;
    }
    int64_t expected = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->sizes[i] == 0) {
            return true;
        }
        if (t->sizes[i] != 1 && t->strides[i] != expected) {
            return false;
        }
        expected *= t->sizes[i];
    }
    return true;
}

bool ct_is_floating_point(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_floating_point", t) && ct_dtype_is_floating_point(t->dtype);
}

bool ct_is_signed(const ct_tensor *t)
{
    return !ct__null_tensor("ct_is_signed", t) && ct_dtype_is_signed(t->dtype);
}

uint32_t ct_version(const ct_tensor *t)
{
    if (ct__null_tensor("ct_version", t)) {
        return 0;
    }
    if (t->storage->inference) {
        ct__fail(CT_ERR_AUTOGRAD, "ct_version", "Inference tensors do not track version counter.");
        return 0;
    }
    return t->storage->version;
}

/* The expected strides of a channels-last layout: dims in order (C, W, H, N) or
   (C, W, H, D, N) step fastest to slowest; size-1 dims take any stride. */
static bool ct__is_channels_last(const ct_tensor *t, int ndim)
{
    static const int order4[4] = {1, 3, 2, 0}, order5[5] = {1, 4, 3, 2, 0};
    if (t->ndim != ndim) {
        return false;
    }
    int64_t expected = 1;
    for (int k = 0; k < ndim; k++) {
        int d = ndim == 4 ? order4[k] : order5[k];
        if (t->sizes[d] != 1) {
            if (t->strides[d] != expected) {
                return false;
            }
            expected *= t->sizes[d];
        }
    }
    return true;
}

bool ct_is_contiguous_memory_format(const ct_tensor *t, ct_memory_format format)
{
    const char *op = "ct_is_contiguous_memory_format";
    if (ct__null(op, t) || !ct__check_enum(op, "memory_format", (int)format,
                                            (int)CT_PRESERVE_FORMAT + 1)) {
        return false;
    }
    return format == CT_CHANNELS_LAST      ? ct__is_channels_last(t, 4)
           : format == CT_CHANNELS_LAST_3D ? ct__is_channels_last(t, 5)
                                           : ct_is_contiguous(t);
}

ct_storage *ct_untyped_storage(const ct_tensor *t)
{
    return ct__null_tensor("ct_untyped_storage", t) ? NULL : t->storage;
}

size_t ct_storage_nbytes(const ct_storage *s)
{
    return ct__null("ct_storage_nbytes", s) ? 0 : s->nbytes;
}

void *ct_storage_data_ptr(const ct_storage *s)
{
    return ct__null("ct_storage_data_ptr", s) ? NULL : s->data;
}

/* Checks set_'s geometry against its storage, in PyTorch's words. */
static bool ct__check_set(const char *op, const ct_tensor *self, const ct_storage *source,
                          int64_t offset, const int64_t *sizes, const int64_t *strides, int ndim)
{
    if (!ct__check_shape(op, sizes, ndim) || (ndim > 0 && ct__null(op, strides))) {
        return false;
    }
    if (offset < 0) {
        ct__fail(CT_ERR_VALUE, op, "Tensor: invalid storage offset %lld", (long long)offset);
        return false;
    }
    if (source->device.type != self->storage->device.type ||
        source->device.index != self->storage->device.index) {
        ct__fail(CT_ERR_DEVICE, op, "Attempted to set the storage of a tensor on device to a "
                 "storage on a different device");
        return false;
    }
    double need = (double)offset + 1; /* elements, in double: no wrap */
    bool negative = false;
    for (int i = 0; i < ndim; i++) {
        negative = negative || strides[i] < 0;
        need += sizes[i] > 0 ? (double)(sizes[i] - 1) * (double)strides[i] : 0;
    }
    char a[200], b[200];
    if (negative) {
        ct__fail(CT_ERR_VALUE, op, "Storage size calculation overflowed with sizes=%s and "
                 "strides=%s", ct__shape_str(sizes, ndim, a, sizeof a),
                 ct__shape_str(strides, ndim, b, sizeof b));
        return false;
    }
    size_t es = ct_dtype_size(self->dtype);
    need = ct__numel(sizes, ndim) == 0 ? 0 : need * (double)es;
    if (need > (double)source->nbytes) {
        ct__fail(CT_ERR_VALUE, op, "setStorage: sizes %s, strides %s, storage offset %lld, and "
                 "itemsize %zu requiring a storage size of %.0f are out of bounds for storage of "
                 "size %zu", ct__shape_str(sizes, ndim, a, sizeof a),
                 ct__shape_str(strides, ndim, b, sizeof b), (long long)offset, es, need,
                 source->nbytes);
        return false;
    }
    return true;
}

ct_tensor *ct_set_(ct_tensor *self, ct_storage *source, int64_t storage_offset,
                   const int64_t *sizes, const int64_t *strides, int ndim)
{
    const char *op = "ct_set_";
    if (ct__null(op, self) || ct__null(op, source) || !ct__check_inplace(op, self) ||
        !ct__check_set(op, self, source, storage_offset, sizes, strides, ndim)) {
        return NULL;
    }
    CT__ATOMIC_ADD(&source->refcount, 1);
    ct__storage_release(self->storage);
    self->storage = source;
    self->offset = storage_offset;
    self->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        self->sizes[i] = sizes[i];
        self->strides[i] = strides[i];
    }
    return self;
}

bool ct_is_set_to(const ct_tensor *t, const ct_tensor *other)
{
    if (ct__null("ct_is_set_to", t) || ct__null("ct_is_set_to", other)) {
        return false;
    }
    size_t n = sizeof(int64_t) * (size_t)t->ndim;
    return t->storage == other->storage && t->offset == other->offset &&
           t->ndim == other->ndim && !memcmp(t->sizes, other->sizes, n) &&
           !memcmp(t->strides, other->strides, n);
}

double ct__load_f64(const void *p, ct_dtype d)
{
    switch (d) {
    case CT_BOOL: return *(const bool *)p ? 1.0 : 0.0;
    case CT_UINT8: return *(const uint8_t *)p;
    case CT_INT8: return *(const int8_t *)p;
    case CT_INT16: return *(const int16_t *)p;
    case CT_INT32: return *(const int32_t *)p;
    case CT_INT64: return (double)*(const int64_t *)p;
    case CT_FLOAT32: return *(const float *)p;
    case CT_FLOAT64: return *(const double *)p;
    case CT_FLOAT16: return ct_half_to_float(*(const uint16_t *)p);
    case CT_BFLOAT16: return ct_bfloat16_to_float(*(const uint16_t *)p);
    default: return 0;
    }
}

int64_t ct__load_i64(const void *p, ct_dtype d)
{
    switch (d) {
    case CT_INT64: return *(const int64_t *)p;
    case CT_FLOAT32: return ct__f32_to_i64(*(const float *)p);
    case CT_FLOAT64: return ct__f64_to_i64(*(const double *)p);
    case CT_FLOAT16:
    case CT_BFLOAT16: return ct__f32_to_i64((float)ct__load_f64(p, d)); /* via float, as c10 */
    default: return (int64_t)ct__load_f64(p, d);
    }
}

void ct__store_f64(void *p, ct_dtype d, double v)
{
    switch (d) {
    case CT_BOOL: *(bool *)p = v != 0; break;
    case CT_UINT8: *(uint8_t *)p = (uint8_t)ct__f64_to_i64(v); break;
    case CT_INT8: *(int8_t *)p = (int8_t)ct__f64_to_i32(v); break;
    case CT_INT16: *(int16_t *)p = (int16_t)ct__f64_to_i32(v); break;
    case CT_INT32: *(int32_t *)p = ct__f64_to_i32(v); break;
    case CT_INT64: *(int64_t *)p = ct__f64_to_i64(v); break;
    case CT_FLOAT32: *(float *)p = (float)v; break;
    case CT_FLOAT64: *(double *)p = v; break;
    case CT_FLOAT16: /* through float32, as PyTorch's conversion of a double */
        *(uint16_t *)p = ct_float_to_half(ct__f64_to_f32(v));
        break;
    case CT_BFLOAT16: *(uint16_t *)p = ct_float_to_bfloat16(ct__f64_to_f32(v)); break;
    default: break;
    }
}

/* The address of t's one element: in t's memory on the CPU, else in buf, copied from the
   device through its backend (as .item() on CUDA); NULL after an error. */
static const void *ct__item_ptr(const char *op, const ct_tensor *t, uint64_t *buf)
{
    if (ct__null_tensor(op, t)) {
        return NULL;
    }
    if (ct_numel(t) != 1) {
        ct__fail(CT_ERR_VALUE, op, "a Tensor with %lld elements cannot be converted to Scalar",
                 (long long)ct_numel(t));
        return NULL;
    }
    ct_device d = t->storage->device;
    if (d.type == CT_CPU) {
        return ct__data(t);
    }
    const ct_backend *b = ct__backend(d.type);
    ct_status st = b->copy(b->user, buf, ct_device_cpu(), ct__data(t), d, ct_dtype_size(t->dtype));
    if (st != CT_OK) {
        ct__fail(st, op, "the %s backend failed to copy the element to the host", b->name);
        return NULL;
    }
    return buf;
}

double ct_item(const ct_tensor *t)
{
    uint64_t buf = 0;
    const void *p = ct__item_ptr("ct_item", t, &buf);
    return p ? ct__load_f64(p, t->dtype) : NAN;
}

int64_t ct_item_int64(const ct_tensor *t)
{
    uint64_t buf = 0;
    const void *p = ct__item_ptr("ct_item_int64", t, &buf);
    return p ? ct__load_i64(p, t->dtype) : 0;
}

bool ct_is_nonzero(const ct_tensor *t)
{
    const char *op = "ct_is_nonzero";
    if (ct__null(op, t)) {
        return false;
    }
    int64_t n = ct__numel(t->sizes, t->ndim);
    if (n != 1) {
        ct__fail(CT_ERR_VALUE, op, "Boolean value of Tensor with %s is ambiguous",
                 n == 0 ? "no values" : "more than one value");
        return false;
    }
    return ct_item(t) != 0;
}

/* The element callbacks' walk: each element of t in row-major order, with other's element
   (strides ostrides; NULL: none). */
static void ct__map_each(ct_tensor *t, const ct_tensor *other, double (*fn1)(double, void *),
                         double (*fn2)(double, double, void *), void *user)
{
    int64_t n = ct__numel(t->sizes, t->ndim), idx[CT_MAX_DIMS] = {0};
    size_t es = ct_dtype_size(t->dtype);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0, ooff = 0;
        for (int d = 0; d < t->ndim; d++) {
            off += idx[d] * t->strides[d];
            ooff += other ? idx[d] * other->strides[d] : 0;
        }
        char *p = ct__data(t) + (ptrdiff_t)off * (ptrdiff_t)es;
        double x = ct__load_f64(p, t->dtype);
        double y = other ? fn2(x, ct__load_f64(ct__data(other) + (ptrdiff_t)ooff * (ptrdiff_t)es,
                                               other->dtype), user)
                         : fn1(x, user);
        ct__store_f64(p, t->dtype, y);
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->sizes[d]; d--) {
            idx[d] = 0;
        }
    }
    ct__bump_version(t);
}

/* The checks of apply_ and map_ (name: "apply_" or "map_") on t (and other). */
static bool ct__check_callback(const char *op, const char *name, const ct_tensor *t,
                               const ct_tensor *other)
{
    if (ct_requires_grad(t) || (other && ct_requires_grad(other))) {
        ct__fail(CT_ERR_AUTOGRAD, op, "Can't call %s() on Variable that requires grad. Use "
                 "var.detach().%s() instead.", name, name);
        return false;
    }
    if (t->storage->device.type != CT_CPU ||
        (other && other->storage->device.type != CT_CPU)) {
        ct__fail(CT_ERR_DEVICE, op, "%s is only implemented on CPU tensors", name);
        return false;
    }
    if (other && other->dtype != t->dtype) {
        ct__fail(CT_ERR_DTYPE, op, "%s: expected torch.%sTensor for 'other' (got torch.%sTensor)",
                 name, ct__dtype_title(t->dtype), ct__dtype_title(other->dtype));
        return false;
    }
    return true;
}

ct_tensor *ct_apply_(ct_tensor *t, double (*fn)(double x, void *user), void *user)
{
    const char *op = "ct_apply_";
    if (ct__null(op, t) || (!fn && ct__null_any(op, NULL)) ||
        !ct__check_callback(op, "apply_", t, NULL)) {
        return NULL;
    }
    ct__map_each(t, NULL, fn, NULL, user);
    return t;
}

ct_tensor *ct_map_(ct_tensor *t, const ct_tensor *other,
                   double (*fn)(double x, double y, void *user), void *user)
{
    const char *op = "ct_map_";
    if (ct__null(op, t) || ct__null(op, other) || (!fn && ct__null_any(op, NULL)) ||
        !ct__check_callback(op, "map_", t, other)) {
        return NULL;
    }
    ct_scope_begin();
    ct_tensor *o = ct_expand(other, t->sizes, t->ndim);
    if (o) {
        ct__map_each(t, o, NULL, fn, user);
    }
    ct_scope_end();
    return o ? t : NULL;
}

static CT__THREAD_LOCAL ct_device ct__default_device = {CT_CPU, 0};

ct_status ct_set_default_device(ct_device device)
{
    const char *op = "ct_set_default_device";
    if (!ct__check_enum(op, "device type", (int)device.type, CT_DEVICE_TYPE_COUNT)) {
        return CT_ERR_VALUE;
    }
    if (device.index < 0) {
        return ct__fail(CT_ERR_VALUE, op, "Device index must be -1 or non-negative, got %d",
                        device.index);
    }
    if (device.type != CT_CPU && !ct__backend(device.type)) {
        char d[32];
        return ct__fail(CT_ERR_DEVICE, op, "no backend is registered for device %s",
                        ct__device_str(device, d, sizeof d));
    }
    ct__default_device = ct_make_device(device.type, device.index);
    return CT_OK;
}

ct_device ct_get_default_device(void) { return ct__default_device; }

/* ---- creation: factory ops ------------------------------------------------------------------
 * Every creation function is a factory op (no tensor inputs: it runs on the CPU; the _like
 * ops run on their input's device). Attributes in schema order: the sizes (int[]), then the
 * Scalars, then the dtype. meta checks the arguments and allocates the output; the kernel
 * writes it. */

/* Where a fill op's value comes from: op->variant is the index of its Scalar attribute, or
   one of these. */
enum { CT__FILL_EMPTY = -3, CT__FILL_ZERO = -2, CT__FILL_ONE = -1 };

static double ct__fill_value(const ct_op_call *c)
{
    int v = c->op->variant;
    return v == CT__FILL_ZERO ? 0.0 : v == CT__FILL_ONE ? 1.0 : c->attrs[v].f;
}

/* Checks dtype (and that the fill value fits it) and allocates the output of sizes; the
   kernel's dtype is the output's. */
static bool ct__factory_output(ct_op_call *c, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    bool fill = c->op->variant != CT__FILL_EMPTY; /* (the allocation checks dtype for empty) */
    if (fill && (!ct__check_dtype_arg(c->fn, dtype) ||
                 !ct__check_scalar(c->fn, ct__fill_value(c), dtype))) {
        return false;
    }
    ct_tensor *t = ct__op_output(c, sizes, ndim, dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}

/* empty, zeros, ones, full: (int[] size, [Scalar fill_value,] ScalarType dtype). */
static bool ct__factory_sizes_meta(ct_op_call *c)
{
    return ct__factory_output(c, c->attrs[0].ints, (int)c->attrs[0].i,
                              (ct_dtype)c->attrs[c->n_attrs - 1].i);
}

/* scalar_tensor: (Scalar s, ScalarType dtype), 0-dim. */
static bool ct__scalar_tensor_meta(ct_op_call *c)
{
    return ct__factory_output(c, NULL, 0, (ct_dtype)c->attrs[1].i);
}

/* The _like ops: self's shape and dtype. */
static bool ct__factory_like_meta(ct_op_call *c)
{
    const ct_tensor *t = c->inputs[0];
    return ct__factory_output(c, t->sizes, t->ndim, t->dtype);
}
CT__GLUE_END

/* Fills a fresh contiguous tensor with value (also: reductions of empty inputs). */
void ct__fill_contig(ct_tensor *t, double value)
{
    int64_t n = ct_numel(t);
    char *p = ct__data(t);
    size_t es = ct_dtype_size(t->dtype);
    if (value == 0) {
        memset(p, 0, (size_t)n * es);
        return;
    }
    if (t->dtype == CT_FLOAT32) {
        float v = (float)value, *q = (float *)p;
        for (int64_t i = 0; i < n; i++) {
            q[i] = v;
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        ct__store_f64(p + (size_t)i * es, t->dtype, value);
    }
}

/* Deterministic mode's fill of "uninitialized" memory, as PyTorch's
   fill_empty_deterministic_: NaN for floating point, the largest value for integers, true for
   bool. */
static void ct__fill_uninitialized(ct_tensor *t)
{
    int64_t n = ct_numel(t);
    char *p = ct__data(t);
    switch (t->dtype) {
    case CT_BOOL: memset(p, 1, (size_t)n); break;
    case CT_UINT8: memset(p, 0xff, (size_t)n); break;
    case CT_INT8: memset(p, 0x7f, (size_t)n); break;
    case CT_INT16:
        for (int64_t i = 0; i < n; i++) {
            ((int16_t *)p)[i] = INT16_MAX;
        }
        break;
    case CT_INT32:
        for (int64_t i = 0; i < n; i++) {
            ((int32_t *)p)[i] = INT32_MAX;
        }
        break;
    case CT_INT64:
        for (int64_t i = 0; i < n; i++) {
            ((int64_t *)p)[i] = INT64_MAX;
        }
        break;
    default: ct__fill_contig(t, NAN); break;
    }
}

/* empty leaves the memory meta allocated uninitialized, unless deterministic mode is on. */
static ct_status ct__empty_kernel(ct_op_call *c)
{
    if (ct_are_deterministic_algorithms_enabled()) {
        ct__fill_uninitialized(c->outputs[0]);
    }
    return CT_OK;
}

static ct_status ct__fill_new_kernel(ct_op_call *c)
{
    ct__fill_contig(c->outputs[0], ct__fill_value(c));
    return CT_OK;
}

CT__GLUE_BEGIN
/* tensor: (data, ScalarType dtype) with the sizes as attribute 0 and c->state pointing at
   the caller's data. */
static bool ct__from_data_meta(ct_op_call *c)
{
    if (!ct__factory_sizes_meta(c)) {
        return false;
    }
    if (ct_nbytes(c->outputs[0]) && !c->state) {
        ct__null(c->fn, c->state);
        return false;
    }
    return true;
}
CT__GLUE_END

static ct_status ct__from_data_kernel(ct_op_call *c)
{
    size_t nbytes = ct_nbytes(c->outputs[0]);
    if (nbytes) {
        memcpy(ct__data(c->outputs[0]), c->state, nbytes);
    }
    return CT_OK;
}

/* arange's length ceil((end - start) / step), or -1 + CT_ERR_VALUE in PyTorch's words. */
static int64_t ct__arange_size(const char *op, double start, double end, double step)
{
    if (!isfinite(step)) {
        ct__fail(CT_ERR_VALUE, op, "step must be finite but got %g", step);
        return -1;
    }
    uint64_t step_bits;
    memcpy(&step_bits, &step, sizeof step_bits);
    if ((step_bits << 1) == 0) { /* by its bits: under FTZ/DAZ a subnormal step compares == 0 */
        ct__fail(CT_ERR_VALUE, op, "step must be nonzero");
        return -1;
    }
    if (!isfinite(start) || !isfinite(end)) {
        ct__fail(CT_ERR_VALUE, op, "unsupported range: %g -> %g", start, end);
        return -1;
    }
    if ((step > 0 && end < start) || (step < 0 && end > start)) {
        ct__fail(CT_ERR_VALUE, op, "upper bound and lower bound inconsistent with step sign");
        return -1;
    }
    double n = ceil((end - start) / step); /* >= 0; inf when end - start overflows */
    if (!(n < 9223372036854775808.0)) {
        ct__fail(CT_ERR_VALUE, op, "invalid size, possible overflow?");
        return -1;
    }
    return (int64_t)n;
}

CT__GLUE_BEGIN
/* arange: (Scalar start, Scalar end, Scalar step, ScalarType dtype). */
static bool ct__arange_meta(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f, step = c->attrs[2].f;
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    if (!ct__check_dtype_arg(c->fn, dtype)) {
        return false;
    }
    dtype = ct__dtype_resolve(dtype);
    if (dtype == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"arange_cpu\" not implemented for 'Bool'");
        return false;
    }
    int64_t n = ct__arange_size(c->fn, start, end, step);
    /* integer types count in int64 from the truncated start and step, wrapping into dtype */
    if (n < 0 || (!ct_dtype_is_floating_point(dtype) &&
                  (!ct__check_scalar(c->fn, start, CT_INT64) ||
                   !ct__check_scalar(c->fn, step, CT_INT64)))) {
        return false;
    }
    c->dtype = dtype;
    return ct__op_output(c, &n, 1, dtype) != NULL;
}
CT__GLUE_END

static ct_status ct__arange_kernel(ct_op_call *c)
{
    double start = c->attrs[0].f, step = c->attrs[2].f;
    ct_tensor *out = c->outputs[0];
    int64_t n = out->sizes[0];
    if (ct_dtype_is_floating_point(out->dtype)) {
        for (int64_t i = 0; i < n; i++) {
            ct__store_f64(ct__data(out) + (size_t)i * ct_dtype_size(out->dtype), out->dtype,
                          start + (double)i * step);
        }
        return CT_OK;
    }
    ct_tensor *t = out->dtype == CT_INT64 ? out : ct__tensor_new(c->fn, &n, 1, CT_INT64);
    if (!t) {
        return ct_error_code();
    }
    uint64_t first = (uint64_t)(int64_t)start, stride = (uint64_t)(int64_t)step;
    for (int64_t i = 0; i < n; i++) { /* unsigned arithmetic wraps as PyTorch's int64 does */
        ((int64_t *)ct__data(t))[i] = (int64_t)(first + (uint64_t)i * stride);
    }
    if (t != out) {
        ct__copy_kernel(out, t);
        ct__release(t);
    }
    return CT_OK;
}

CT__GLUE_BEGIN
/* linspace: (Scalar start, Scalar end, int steps, ScalarType dtype); logspace: (Scalar start,
   Scalar end, int steps, float base, ScalarType dtype). */
static bool ct__linspace_meta(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f;
    int64_t steps = c->attrs[2].i;
    ct_dtype dtype = (ct_dtype)c->attrs[c->n_attrs - 1].i;
    if (!ct__check_dtype_arg(c->fn, dtype)) {
        return false;
    }
    if (steps < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "number of steps must be non-negative");
        return false;
    }
    if (ct__dtype_resolve(dtype) == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"%s_cpu\" not implemented for 'Bool'", c->op->name + 6);
        return false;
    }
    if (!ct__check_scalar(c->fn, start, dtype) || !ct__check_scalar(c->fn, end, dtype)) {
        return false;
    }
    ct_tensor *t = ct__op_output(c, &steps, 1, dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}
CT__GLUE_END

static ct_status ct__linspace_kernel(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f;
    int64_t steps = c->attrs[2].i;
    ct_tensor *t = c->outputs[0];
    size_t es = ct_dtype_size(t->dtype);
    double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; i++) {
        /* PyTorch fills the second half backwards from end for symmetry */
        double v = (i < half || steps == 1) ? start + step * (double)i
                                            : end - step * (double)(steps - 1 - i);
        ct__store_f64(ct__data(t) + (size_t)i * es, t->dtype, v);
    }
    return CT_OK;
}

CT__GLUE_BEGIN
/* eye: (int n, int m, ScalarType dtype). */
static bool ct__eye_meta(ct_op_call *c)
{
    int64_t sizes[2] = {c->attrs[0].i, c->attrs[1].i};
    return ct__factory_output(c, sizes, 2, (ct_dtype)c->attrs[2].i);
}
CT__GLUE_END

static ct_status ct__eye_kernel(ct_op_call *c)
{
    ct_tensor *t = c->outputs[0];
    ct__fill_contig(t, 0);
    size_t es = ct_dtype_size(t->dtype);
    for (int64_t i = 0; i < t->sizes[0] && i < t->sizes[1]; i++) {
        ct__store_f64(ct__data(t) + (size_t)(i * t->sizes[1] + i) * es, t->dtype, 1.0);
    }
    return CT_OK;
}

/* x * y rounded by itself: an fma with a zero addend, so -ffp-contract cannot fuse the
   product into a following addition (PyTorch's kernels round it). */
static double ct__mul_rounded(double x, double y)
{
    return fma(x, y, 0.0);
}

/* PyTorch's logspace_cpu: start and end in the dtype, step = (end - start) / (steps - 1)
   in double, base^(start + step * i) for the first half and base^(end - step * (steps - 1 -
   i)) for the second, each cast to the dtype; one step gives base^start. */
static ct_status ct__logspace_kernel(ct_op_call *c)
{
    double base = c->attrs[3].f;
    int64_t steps = c->attrs[2].i;
    ct_tensor *t = c->outputs[0];
    size_t es = ct_dtype_size(t->dtype);
    double first = c->attrs[0].f, last = c->attrs[1].f, span;
    if (t->dtype == CT_FLOAT32) {
        float s = (float)first, e = (float)last;
        first = s, last = e, span = (double)(e - s);
    } else if (t->dtype != CT_FLOAT64) {
        first = (double)(int64_t)first, last = (double)(int64_t)last, span = last - first;
    } else {
        span = last - first;
    }
    double step = steps > 1 ? span / (double)(steps - 1) : 0;
    for (int64_t i = 0; i < steps; i++) {
        double x = steps == 1           ? c->attrs[0].f
                   : i < steps / 2      ? first + ct__mul_rounded(step, (double)i)
                                        : last - ct__mul_rounded(step, (double)(steps - i - 1));
        ct__store_f64(ct__data(t) + (size_t)i * es, t->dtype, pow(base, x));
    }
    return CT_OK;
}

CT__GLUE_BEGIN
/* empty_strided: (int[] size, int[] stride, ScalarType dtype). The storage spans 1 + sum of
   (size - 1) * stride elements (none when a size is 0), as computeStorageNbytes. */
static bool ct__empty_strided_meta(ct_op_call *c)
{
    const int64_t *sizes = c->attrs[0].ints, *strides = c->attrs[1].ints;
    int ndim = (int)c->attrs[0].i;
    if (!ct__check_shape(c->fn, sizes, ndim) || (ndim > 0 && ct__null(c->fn, strides))) {
        return false;
    }
    double span = 1; /* in double: a product that overflows int64 cannot wrap */
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        overflow = overflow || strides[i] < 0;
        span += sizes[i] > 0 ? (double)(sizes[i] - 1) * (double)strides[i] : 0;
    }
    if (overflow || span > (double)(INT64_MAX / 16)) {
        char a[200], b[200];
        ct__fail(CT_ERR_VALUE, c->fn, "Storage size calculation overflowed with sizes=%s and "
                 "strides=%s", ct__shape_str(sizes, ndim, a, sizeof a),
                 ct__shape_str(strides, ndim, b, sizeof b));
        return false;
    }
    int64_t n = ct__numel(sizes, ndim) == 0 ? 0 : (int64_t)span;
    ct_tensor *t = ct__op_output(c, &n, 1, (ct_dtype)c->attrs[2].i);
    if (!t) {
        return false;
    }
    t->ndim = ndim; /* a fresh tensor: its storage's geometry becomes the strided one */
    for (int i = 0; i < ndim; i++) {
        t->sizes[i] = sizes[i];
        t->strides[i] = strides[i];
    }
    c->dtype = t->dtype;
    return true;
}

/* new_empty, new_zeros, new_ones, new_full: (Tensor self, int[] size, [Scalar fill_value,]
   ScalarType dtype); dtype DEFAULT is self's, the device is self's. */
static bool ct__factory_new_meta(ct_op_call *c)
{
    ct_dtype dtype = (ct_dtype)c->attrs[c->n_attrs - 1].i;
    return ct__factory_output(c, c->attrs[0].ints, (int)c->attrs[0].i,
                              dtype == CT_DTYPE_DEFAULT ? c->inputs[0]->dtype : dtype);
}
CT__GLUE_END

/* The columns of row r in the lower (variant 0) or upper (variant 1) triangle of tril_indices'
   or triu_indices' (row, col, offset): [begin, end). */
static void ct__tri_span(const ct_op_call *c, int64_t r, int64_t *begin, int64_t *end)
{
    int variant = c->op->variant;
    int64_t row = c->attrs[0].i, col = c->attrs[1].i, offset = c->attrs[2].i;
    offset = offset < -row ? -row : offset > col ? col : offset; /* no overflow below */
    int64_t edge = r + offset + (variant == 0 ? 1 : 0);
    edge = edge < 0 ? 0 : edge > col ? col : edge;
    *begin = variant == 0 ? 0 : edge;
    *end = variant == 0 ? edge : col;
}

/* tril_indices, triu_indices: (int row, int col, int offset, ScalarType dtype); a (2, N)
   output of the N positions in row-major order. */
static bool ct__tri_indices_meta(ct_op_call *c)
{
    int64_t row = c->attrs[0].i, col = c->attrs[1].i;
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    if (row < 0 || col < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "%s must be non-negative, got%lld", row < 0 ? "row" : "col",
                 (long long)(row < 0 ? row : col));
        return false;
    }
    if (!ct__check_dtype_arg(c->fn, dtype)) {
        return false;
    }
    int64_t sizes[2] = {2, 0};
    for (int64_t r = 0, begin, end; r < row; r++) {
        ct__tri_span(c, r, &begin, &end);
        sizes[1] += end - begin;
    }
    ct_tensor *t = ct__op_output(c, sizes, 2, dtype == CT_DTYPE_DEFAULT ? CT_INT64 : dtype);
    if (t) {
        c->dtype = t->dtype;
    }
    return t != NULL;
}

static ct_status ct__tri_indices_kernel(ct_op_call *c)
{
    ct_tensor *t = c->outputs[0];
    int64_t n = t->sizes[1], k = 0;
    size_t es = ct_dtype_size(t->dtype);
    for (int64_t r = 0, begin, end; k < n; r++) {
        ct__tri_span(c, r, &begin, &end);
        for (int64_t j = begin; j < end; j++, k++) {
            ct__store_f64(ct__data(t) + (size_t)k * es, t->dtype, (double)r);
            ct__store_f64(ct__data(t) + (size_t)(n + k) * es, t->dtype, (double)j);
        }
    }
    return CT_OK;
}

/* A factory op: name, schema, public functions, fill variant, meta, kernels. */
#define CT__FACTORY(SYM, NAME, SCHEMA, API, VAR, META, KERNELS)                                \
    static const ct_op ct__op_##SYM = {"aten::" NAME, SCHEMA, API, CT_OP_FACTORY,             \
                                       CT_AUTOCAST_NONE, VAR, 0u, NULL, META, KERNELS, NULL,  \
                                       NULL, NULL, 0u, NULL, NULL};
#define CT__FACTORY_OPTS "ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
                         "bool? pin_memory=None"
#define CT__LIKE_OPTS CT__FACTORY_OPTS ", MemoryFormat? memory_format=None) -> Tensor"

CT__FACTORY(empty, "empty", "empty.memory_format(SymInt[] size, *, " CT__FACTORY_OPTS
            ", MemoryFormat? memory_format=None) -> Tensor", "ct_empty", CT__FILL_EMPTY,
            ct__factory_sizes_meta, CT__K_ANY(ct__empty_kernel))
CT__FACTORY(zeros, "zeros", "zeros(SymInt[] size, *, " CT__FACTORY_OPTS ") -> Tensor",
            "ct_zeros", CT__FILL_ZERO, ct__factory_sizes_meta, CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(ones, "ones", "ones(SymInt[] size, *, " CT__FACTORY_OPTS ") -> Tensor", "ct_ones",
            CT__FILL_ONE, ct__factory_sizes_meta, CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(full, "full", "full(SymInt[] size, Scalar fill_value, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_full", 1, ct__factory_sizes_meta, CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(scalar_tensor, "scalar_tensor", "scalar_tensor(Scalar s, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_scalar_tensor", 0, ct__scalar_tensor_meta,
            CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(empty_like, "empty_like", "empty_like(Tensor self, *, " CT__LIKE_OPTS,
            "ct_empty_like", CT__FILL_EMPTY, ct__factory_like_meta, CT__K_ANY(ct__empty_kernel))
CT__FACTORY(zeros_like, "zeros_like", "zeros_like(Tensor self, *, " CT__LIKE_OPTS,
            "ct_zeros_like", CT__FILL_ZERO, ct__factory_like_meta,
            CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(ones_like, "ones_like", "ones_like(Tensor self, *, " CT__LIKE_OPTS, "ct_ones_like",
            CT__FILL_ONE, ct__factory_like_meta, CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(full_like, "full_like", "full_like(Tensor self, Scalar fill_value, *, "
            CT__LIKE_OPTS, "ct_full_like", 0, ct__factory_like_meta,
            CT__K_ANY(ct__fill_new_kernel))
CT__FACTORY(tensor, "tensor", "tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, "
            "bool requires_grad=False) -> Tensor", "ct_tensor_from_data", CT__FILL_EMPTY,
            ct__from_data_meta, CT__K_ANY(ct__from_data_kernel))
CT__FACTORY(arange, "arange", "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, "
            CT__FACTORY_OPTS ") -> Tensor", "ct_arange", CT__FILL_EMPTY, ct__arange_meta,
            CT__K_NUMERIC(ct__arange_kernel))
CT__FACTORY(linspace, "linspace", "linspace(Scalar start, Scalar end, int steps, *, "
            CT__FACTORY_OPTS ") -> Tensor", "ct_linspace", CT__FILL_EMPTY, ct__linspace_meta,
            CT__K_NUMERIC(ct__linspace_kernel))
CT__FACTORY(eye, "eye", "eye.m(SymInt n, SymInt m, *, " CT__FACTORY_OPTS ") -> Tensor",
            "ct_eye", CT__FILL_EMPTY, ct__eye_meta, CT__K_ANY(ct__eye_kernel))
CT__FACTORY(logspace, "logspace", "logspace(Scalar start, Scalar end, int steps, float base=10.0, "
            "*, " CT__FACTORY_OPTS ") -> Tensor", "ct_logspace", CT__FILL_EMPTY,
            ct__linspace_meta, CT__K_NUMERIC(ct__logspace_kernel))
CT__FACTORY(empty_strided, "empty_strided", "empty_strided(SymInt[] size, SymInt[] stride, *, "
            CT__FACTORY_OPTS ") -> Tensor", "ct_empty_strided", CT__FILL_EMPTY,
            ct__empty_strided_meta, CT__K_ALL(ct__empty_kernel))
CT__FACTORY(new_empty, "new_empty", "new_empty(Tensor self, SymInt[] size, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_new_empty", CT__FILL_EMPTY, ct__factory_new_meta,
            CT__K_ALL(ct__empty_kernel))
CT__FACTORY(new_zeros, "new_zeros", "new_zeros(Tensor self, SymInt[] size, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_new_zeros", CT__FILL_ZERO, ct__factory_new_meta,
            CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(new_ones, "new_ones", "new_ones(Tensor self, SymInt[] size, *, " CT__FACTORY_OPTS
            ") -> Tensor", "ct_new_ones", CT__FILL_ONE, ct__factory_new_meta,
            CT__K_ALL(ct__fill_new_kernel))
CT__FACTORY(new_full, "new_full", "new_full(Tensor self, SymInt[] size, Scalar fill_value, *, "
            CT__FACTORY_OPTS ") -> Tensor", "ct_new_full", 1, ct__factory_new_meta,
            CT__K_ALL(ct__fill_new_kernel))
/* int32 and int64 only, as PyTorch's CPU kernels (AT_DISPATCH_INDEX_TYPES) */
#define CT__K_INDEX(K) {NULL, NULL, NULL, NULL, NULL, K, K, NULL, NULL, NULL, NULL}
CT__FACTORY(tril_indices, "tril_indices", "tril_indices(int row, int col, int offset=0, *, "
            "ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? "
            "pin_memory=None) -> Tensor", "ct_tril_indices", 0, ct__tri_indices_meta,
            CT__K_INDEX(ct__tri_indices_kernel))
CT__FACTORY(triu_indices, "triu_indices", "triu_indices(int row, int col, int offset=0, *, "
            "ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? "
            "pin_memory=None) -> Tensor", "ct_triu_indices", 1, ct__tri_indices_meta,
            CT__K_INDEX(ct__tri_indices_kernel))
#undef CT__K_INDEX
#undef CT__FACTORY
#undef CT__FACTORY_OPTS
#undef CT__LIKE_OPTS

/* A call of a factory op over sizes, with the fill value when it takes one (full_value). */
static ct_tensor *ct__factory_call(const ct_op *op, const char *fn, const int64_t *sizes,
                                   int ndim, double value, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    if (op->variant >= 0) {
        ct__call_f(&c, value);
    }
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

/* A call of a _like op over t, with its fill value when it takes one. */
static ct_tensor *ct__like_call(const ct_op *op, const char *fn, const ct_tensor *t,
                                double value)
{
    const ct_tensor *in[1] = {t};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    if (op->variant >= 0) {
        ct__call_f(&c, value);
    }
    return ct__dispatch(&c);
}

ct_tensor *ct_empty(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_empty, "ct_empty", sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_full(const int64_t *sizes, int ndim, double value, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_full, "ct_full", sizes, ndim, value, dtype);
}

ct_tensor *ct_zeros(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_zeros, "ct_zeros", sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_ones(const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__factory_call(&ct__op_ones, "ct_ones", sizes, ndim, 1.0, dtype);
}

ct_tensor *ct_scalar_tensor(double value, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_scalar_tensor, "ct_scalar_tensor", NULL, 0);
    ct__call_f(&c, value);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_empty_like(const ct_tensor *t)
{
    return ct__like_call(&ct__op_empty_like, "ct_empty_like", t, 0.0);
}

ct_tensor *ct_full_like(const ct_tensor *t, double value)
{
    return ct__like_call(&ct__op_full_like, "ct_full_like", t, value);
}

ct_tensor *ct_zeros_like(const ct_tensor *t)
{
    return ct__like_call(&ct__op_zeros_like, "ct_zeros_like", t, 0.0);
}

ct_tensor *ct_ones_like(const ct_tensor *t)
{
    return ct__like_call(&ct__op_ones_like, "ct_ones_like", t, 1.0);
}

ct_tensor *ct_tensor_from_data(const void *data, ct_dtype dtype, const int64_t *sizes, int ndim)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_tensor, "ct_tensor_from_data", NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    ct__call_i(&c, dtype);
    c.state = (void *)(uintptr_t)data;
    return ct__dispatch(&c);
}

ct_tensor *ct_arange(double start, double end, double step, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_arange, "ct_arange", NULL, 0);
    ct__call_f(&c, start);
    ct__call_f(&c, end);
    ct__call_f(&c, step);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_linspace(double start, double end, int64_t steps, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_linspace, "ct_linspace", NULL, 0);
    ct__call_f(&c, start);
    ct__call_f(&c, end);
    ct__call_i(&c, steps);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_eye(int64_t n, int64_t m, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_eye, "ct_eye", NULL, 0);
    ct__call_i(&c, n);
    ct__call_i(&c, m < 0 ? n : m);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_logspace(double start, double end, int64_t steps, double base, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_logspace, "ct_logspace", NULL, 0);
    ct__call_f(&c, start);
    ct__call_f(&c, end);
    ct__call_i(&c, steps);
    ct__call_f(&c, base);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_empty_strided(const int64_t *sizes, const int64_t *strides, int ndim,
                            ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, &ct__op_empty_strided, "ct_empty_strided", NULL, 0);
    ct__call_ints(&c, sizes, ndim);
    ct__call_ints(&c, strides, ndim);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

/* A call of a new_ op of self over sizes, with its fill value when it takes one. */
static ct_tensor *ct__new_call(const ct_op *op, const char *fn, const ct_tensor *self,
                               const int64_t *sizes, int ndim, double value, ct_dtype dtype)
{
    const ct_tensor *in[1] = {self};
    ct_op_call c;
    ct__call_init(&c, op, fn, in, 1);
    ct__call_ints(&c, sizes, ndim);
    if (op->variant >= 0) {
        ct__call_f(&c, value);
    }
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_new_empty(const ct_tensor *self, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__new_call(&ct__op_new_empty, "ct_new_empty", self, sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_new_zeros(const ct_tensor *self, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__new_call(&ct__op_new_zeros, "ct_new_zeros", self, sizes, ndim, 0.0, dtype);
}

ct_tensor *ct_new_ones(const ct_tensor *self, const int64_t *sizes, int ndim, ct_dtype dtype)
{
    return ct__new_call(&ct__op_new_ones, "ct_new_ones", self, sizes, ndim, 1.0, dtype);
}

ct_tensor *ct_new_full(const ct_tensor *self, const int64_t *sizes, int ndim, double value,
                       ct_dtype dtype)
{
    return ct__new_call(&ct__op_new_full, "ct_new_full", self, sizes, ndim, value, dtype);
}

/* A call of tril_indices or triu_indices. */
static ct_tensor *ct__tri_indices_call(const ct_op *op, const char *fn, int64_t row, int64_t col,
                                       int64_t offset, ct_dtype dtype)
{
    ct_op_call c;
    ct__call_init(&c, op, fn, NULL, 0);
    ct__call_i(&c, row);
    ct__call_i(&c, col);
    ct__call_i(&c, offset);
    ct__call_i(&c, dtype);
    return ct__dispatch(&c);
}

ct_tensor *ct_tril_indices(int64_t row, int64_t col, int64_t offset, ct_dtype dtype)
{
    return ct__tri_indices_call(&ct__op_tril_indices, "ct_tril_indices", row, col, offset, dtype);
}

ct_tensor *ct_triu_indices(int64_t row, int64_t col, int64_t offset, ct_dtype dtype)
{
    return ct__tri_indices_call(&ct__op_triu_indices, "ct_triu_indices", row, col, offset, dtype);
}

ct_tensor *ct_from_blob(void *data, ct_dtype dtype, const int64_t *sizes, int ndim,
                        void (*deleter)(void *data, void *ctx), void *ctx)
{
    const char *op = "ct_from_blob";
    if (ct__null(op, data) || !ct__check_shape(op, sizes, ndim) ||
        !ct__check_dtype_arg(op, dtype)) {
        return NULL;
    }
    dtype = ct__dtype_resolve(dtype);
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    s->data = data;
    s->nbytes = (size_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype);
    s->refcount = 1;
    s->device = ct_device_cpu();
    s->borrowed = true;
    s->deleter = deleter;
    s->deleter_ctx = ctx;
    s->inference = ct_is_inference_mode_enabled();
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    return ct__scoped(t);
}
