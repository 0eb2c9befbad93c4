/* core/tensor.c - tensor and storage objects, attributes, creation, printing. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

/* ---- storage ------------------------------------------------------------------------ */
/* nbytes of memory on device (its backend's, for a device other than the CPU). */
static ct_storage *ct__storage_new(size_t nbytes, ct_device device)
{
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        return NULL;
    }
    const ct_backend *b = device.type == CT_CPU ? NULL : ct__backend(device.type);
    s->data = b ? b->malloc(b->user, device, nbytes ? nbytes : 1) : ct__malloc(nbytes ? nbytes : 1);
    if (!s->data) {
        ct__free(s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->refcount = 1;
    s->device = device;
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

ct_tensor *ct__tensor_new_on(const char *op, const int64_t *sizes, int ndim, ct_dtype dtype,
                             ct_device device)
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
    size_t nbytes = (size_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype);
    if (device.type != CT_CPU && !ct__backend(device.type)) {
        char d[32];
        ct__fail(CT_ERR_DEVICE, op, "no backend is registered for device %s",
                 ct__device_str(device, d, sizeof d));
        return NULL;
    }
    ct_storage *s = ct__storage_new(nbytes, device);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "%sAllocator: not enough memory: you tried to allocate %zu "
                 "bytes", device.type == CT_CPU ? "DefaultCPU" : ct__device_key(device.type),
                 nbytes);
        return NULL;
    }
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    if (t) {
        ct__debug_track(t, op);
    }
    return t;
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
    return ct__null_tensor("ct_version", t) ? 0 : t->storage->version;
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

static ct_status ct__empty_kernel(ct_op_call *c)
{
    (void)c; /* meta allocated the output; empty leaves it uninitialized */
    return CT_OK;
}

static ct_status ct__fill_new_kernel(ct_op_call *c)
{
    ct__fill_contig(c->outputs[0], ct__fill_value(c));
    return CT_OK;
}

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
    if (step == 0) {
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

/* linspace: (Scalar start, Scalar end, int steps, ScalarType dtype). */
static bool ct__linspace_meta(ct_op_call *c)
{
    double start = c->attrs[0].f, end = c->attrs[1].f;
    int64_t steps = c->attrs[2].i;
    ct_dtype dtype = (ct_dtype)c->attrs[3].i;
    if (!ct__check_dtype_arg(c->fn, dtype)) {
        return false;
    }
    if (steps < 0) {
        ct__fail(CT_ERR_VALUE, c->fn, "number of steps must be non-negative");
        return false;
    }
    if (ct__dtype_resolve(dtype) == CT_BOOL) {
        ct__fail(CT_ERR_DTYPE, c->fn, "\"linspace_cpu\" not implemented for 'Bool'");
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

/* eye: (int n, int m, ScalarType dtype). */
static bool ct__eye_meta(ct_op_call *c)
{
    int64_t sizes[2] = {c->attrs[0].i, c->attrs[1].i};
    return ct__factory_output(c, sizes, 2, (ct_dtype)c->attrs[2].i);
}

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
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    return ct__scoped(t);
}

/* ---- printing ----------------------------------------------------------------------- */
typedef struct ct__sbuf {
    char *buf;
    size_t cap, len;
} ct__sbuf;

static void ct__sbuf_put(ct__sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->cap ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->buf + b->len : NULL, room, fmt, ap);
    va_end(ap);
    b->len += n > 0 ? (size_t)n : 0;
}

/* Formats one element: floats with 4 decimals (PyTorch's default precision), or with a
   trailing "." when every value of the tensor is integral. */
static void ct__print_elem(ct__sbuf *b, const ct_tensor *t, const char *p, bool ints, int width)
{
    if (t->dtype == CT_BOOL) {
        ct__sbuf_put(b, "%*s", width, *(const bool *)p ? "True" : "False");
    } else if (!ct_dtype_is_floating_point(t->dtype)) {
        ct__sbuf_put(b, "%*lld", width, (long long)ct__load_i64(p, t->dtype));
    } else if (ints) {
        ct__sbuf_put(b, "%*.0f.", width - 1, ct__load_f64(p, t->dtype));
    } else {
        ct__sbuf_put(b, "%*.4f", width, ct__load_f64(p, t->dtype));
    }
}

static void ct__print_rec(ct__sbuf *b, const ct_tensor *t, int dim, const char *p, bool ints,
                          int width)
{
    if (dim == t->ndim) {
        ct__print_elem(b, t, p, ints, width);
        return;
    }
    size_t es = ct_dtype_size(t->dtype);
    ct__sbuf_put(b, "[");
    for (int64_t i = 0; i < t->sizes[dim]; i++) {
        if (i > 0) {
            ct__sbuf_put(b, dim == t->ndim - 1 ? ", " : ",\n");
            if (dim < t->ndim - 1) {
                ct__sbuf_put(b, "%*s", 8 + dim, "");
            }
        }
        ct__print_rec(b, t, dim + 1, p + (size_t)(i * t->strides[dim]) * es, ints, width);
    }
    ct__sbuf_put(b, "]");
}

static void ct__print_width(const ct_tensor *t, bool *ints, int *width)
{
    int64_t n = ct_numel(t);
    int64_t idx[CT_MAX_DIMS] = {0};
    size_t es = ct_dtype_size(t->dtype);
    *ints = true;
    *width = t->dtype == CT_BOOL ? 5 : 1;
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++) {
            off += idx[d] * t->strides[d];
        }
        double v = ct__load_f64(ct__data(t) + (size_t)off * es, t->dtype);
        if (v != floor(v) || isinf(v)) {
            *ints = false;
        }
        char tmp[64];
        int w =
            snprintf(tmp, sizeof tmp, ct_dtype_is_floating_point(t->dtype) ? "%.4f" : "%.0f", v);
        *width = w > *width ? w : *width;
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->sizes[d]; d--) {
            idx[d] = 0;
        }
    }
    if (*ints && ct_dtype_is_floating_point(t->dtype)) {
        *width -= 4; /* "%.4f" counted ".0000"; integral floats print as "3." */
    }
}

size_t ct_to_string(const ct_tensor *t, char *buf, size_t n)
{
    ct__sbuf b = {buf, buf ? n : 0, 0};
    if (buf && n > 0) {
        buf[0] = '\0';
    }
    if (ct__null_tensor("ct_to_string", t) || !ct__check_cpu("ct_to_string", t)) {
        return 0;
    }
    bool ints = true;
    int width = 1;
    ct__print_width(t, &ints, &width);
    ct__sbuf_put(&b, "tensor(");
    if (ct_numel(t) == 0) {
        ct__sbuf_put(&b, "[]");
    } else {
        ct__print_rec(&b, t, 0, ct__data(t), ints, t->ndim ? width : 0);
    }
    if (t->dtype != ct_get_default_dtype() && t->dtype != CT_INT64 && t->dtype != CT_BOOL) {
        ct__sbuf_put(&b, ", dtype=torch.%s", ct_dtype_name(t->dtype));
    }
    if (t->grad_fn) {
        ct__sbuf_put(&b, ", grad_fn=<%s>", ct__node_name(t->grad_fn));
    } else if (t->requires_grad) {
        ct__sbuf_put(&b, ", requires_grad=True");
    }
    ct__sbuf_put(&b, ")");
    return b.len;
}

#ifndef CTORCH_NO_STDIO
void ct_print(const ct_tensor *t, FILE *f)
{
    const char *op = "ct_print";
    if (ct__null_tensor(op, t) || ct__null(op, f) || !ct__check_cpu(op, t)) {
        return;
    }
    size_t n = ct_to_string(t, NULL, 0) + 1;
    char *s = (char *)ct__malloc(n);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory formatting a tensor of %lld elements",
                 (long long)ct__numel(t->sizes, t->ndim));
        return;
    }
    ct_to_string(t, s, n);
    fprintf(f, "%s\n", s);
    ct__free(s);
}
#endif
