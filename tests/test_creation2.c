/* tests/test_creation2.c - logspace, tril_indices/triu_indices, meshgrid, new_empty/zeros/
 * ones/full, empty_strided against PyTorch (tools/gen_golden_creation2.py,
 * tests/golden/creation2_golden.h), meshgrid's views and gradients, PyTorch's errors, and
 * DLPack: the ABI's layout, round trips both ways, a foreign managed tensor built by hand
 * (strides, byte_offset, deleter called once), and the rejected inputs.
 */
#include "test.h"

#include <stddef.h>
#include <stdlib.h>

#include "golden/creation2_golden.h"

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void test_creation2_logspace(void)
{
    CHECK(N_OF(ct_logspace_cases) == 15);
    for (int i = 0; i < N_OF(ct_logspace_cases); i++) {
        const ct_logspace_case *c = &ct_logspace_cases[i];
        ct_scope_begin();
        ct_tensor *t = ct_logspace(c->start, c->end, c->steps, c->base, c->dtype);
        CHECK_MSG(t && ct_tensor_dtype(t) == c->dtype && ct_dim(t) == 1, "case %d", i);
        double rtol = c->dtype == CT_FLOAT32 ? 1e-7 : c->dtype == CT_FLOAT64 ? 1e-15 : 0;
        CHECK_MSG(CHECK_TENSOR(t, c->out, c->steps, rtol, 0), "case %d", i);
        ct_scope_end();
    }
    CHECK(ct_logspace(0, 2, -1, 10, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_logspace: number of steps must be non-negative");
    CHECK(ct_logspace(0, 2, 3, 10, CT_BOOL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"logspace_cpu\" not implemented for 'Bool'");
    CHECK(ct_logspace(300, 400, 3, 10, CT_UINT8) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type uint8_t without overflow");
    CHECK(ct_linspace(0, 1, 3, CT_BOOL) == NULL); /* the shared check names linspace */
    CHECK_ERROR(CT_ERR_DTYPE, "\"linspace_cpu\" not implemented for 'Bool'");
}

static void test_creation2_tri_indices(void)
{
    CHECK(N_OF(ct_tri_cases) == 20);
    for (int i = 0; i < N_OF(ct_tri_cases); i++) {
        const ct_tri_case *c = &ct_tri_cases[i];
        ct_scope_begin();
        ct_tensor *t = (c->upper ? ct_triu_indices : ct_tril_indices)(c->row, c->col, c->offset,
                                                                      CT_DTYPE_DEFAULT);
        const int64_t shape[2] = {2, c->n};
        CHECK_MSG(t && ct_tensor_dtype(t) == CT_INT64 && ct_test_has_shape(t, shape, 2),
                  "case %d", i);
        for (int64_t k = 0; t && k < 2 * c->n; k++) {
            CHECK_MSG(((const int64_t *)ct_data_ptr(t))[k] == c->out[k], "case %d [%lld]", i,
                      (long long)k);
        }
        ct_scope_end();
    }
    ct_tensor *t = ct_tril_indices(3, 3, 0, CT_INT32);
    const int32_t want[12] = {0, 1, 1, 2, 2, 2, 0, 0, 1, 0, 1, 2};
    CHECK(t && ct_tensor_dtype(t) == CT_INT32 && !memcmp(ct_data_ptr(t), want, sizeof want));
    ct_free(t);
    CHECK(ct_tril_indices(-1, 3, 0, CT_DTYPE_DEFAULT) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ct_tril_indices: row must be non-negative, got-1");
    CHECK(ct_triu_indices(3, -3, 0, CT_DTYPE_DEFAULT) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "col must be non-negative, got-3");
    CHECK(ct_tril_indices(3, 3, 0, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"tril_indices\" not implemented for 'Float'");
    CHECK(ct_triu_indices(2, 2, INT64_MIN, CT_INT16) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "\"triu_indices\" not implemented for 'Short'");
    t = ct_triu_indices(2, 2, INT64_MAX, CT_DTYPE_DEFAULT); /* offsets clamp: no overflow */
    CHECK(t && ct_size(t, 1) == 0);
    ct_free(t);
}

/* The named meshgrid input: a = [1, 2, 3], b = [4, 5], c = 7 (0-D), d = [8, 9, 10, 11]. */
static ct_tensor *mesh_input(char name)
{
    static const double a[3] = {1, 2, 3}, b[2] = {4, 5}, c[1] = {7}, d[4] = {8, 9, 10, 11};
    const double *v = name == 'a' ? a : name == 'b' ? b : name == 'c' ? c : d;
    int64_t n = name == 'a' ? 3 : name == 'b' ? 2 : name == 'c' ? 1 : 4;
    return ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, &n, name == 'c' ? 0 : 1), CT_FLOAT32);
}

static void test_creation2_meshgrid(void)
{
    CHECK(N_OF(ct_meshgrid_cases) == 16);
    for (int i = 0; i < N_OF(ct_meshgrid_cases); i++) {
        const ct_meshgrid_case *c = &ct_meshgrid_cases[i];
        ct_scope_begin();
        int n = (int)strlen(c->inputs);
        ct_tensor *in[3], *out[3] = {NULL, NULL, NULL};
        for (int k = 0; k < n; k++) {
            in[k] = mesh_input(c->inputs[k]);
        }
        CHECK(ct_meshgrid((const ct_tensor *const *)in, n, c->indexing, out) == CT_OK);
        ct_tensor *o = out[c->k];
        CHECK_MSG(o && ct_test_has_shape(o, c->shape, c->ndim), "case %d", i);
        for (int d = 0; o && d < c->ndim; d++) {
            CHECK_MSG(ct_stride(o, d) == c->strides[d], "case %d stride %d", i, d);
        }
        CHECK_MSG(CHECK_TENSOR(o, c->out, ct_test_numel(c->shape, c->ndim), 0, 0), "case %d", i);
        CHECK_MSG(o && ct_data_ptr(o) == ct_data_ptr(in[strchr(c->inputs, c->inputs[c->k]) -
                                                         c->inputs]),
                  "case %d: not a view of its input", i);
        ct_scope_end();
    }
    ct_scope_begin();
    ct_tensor *in[2] = {mesh_input('a'), mesh_input('b')}, *out[2] = {NULL, NULL};
    CHECK(ct_meshgrid((const ct_tensor *const *)in, 2, NULL, out) == CT_OK); /* "ij" */
    CHECK(ct_size(out[0], 0) == 3 && ct_stride(out[1], 0) == 0);
    CHECK(ct_meshgrid((const ct_tensor *const *)in, 0, "ij", out) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "meshgrid expects a non-empty TensorList");
    CHECK(ct_meshgrid((const ct_tensor *const *)in, 2, "foo", out) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "indexing must be one of \"xy\" or \"ij\", but received: foo");
    const int64_t s22[2] = {2, 2};
    ct_tensor *bad[2] = {in[0], ct_ones(s22, 2, CT_FLOAT32)};
    CHECK(ct_meshgrid((const ct_tensor *const *)bad, 2, "ij", out) == CT_ERR_SHAPE);
    CHECK_ERROR(CT_ERR_SHAPE, "Expected 0D or 1D tensor in the tensor list");
    bad[1] = ct_to_dtype(in[1], CT_FLOAT64);
    CHECK(ct_meshgrid((const ct_tensor *const *)bad, 2, "ij", out) == CT_ERR_DTYPE);
    CHECK_ERROR(CT_ERR_DTYPE, "meshgrid expects all tensors to have the same dtype");
    ct_scope_end();
}

/* sum(x_grid * y_grid^2) of meshgrid(x, y, "xy"): gradients through the expanded views. */
static ct_tensor *gc_meshgrid(ct_tensor *const *in, int n, void *user)
{
    ct_tensor *out[2];
    if (ct_meshgrid((const ct_tensor *const *)in, n, (const char *)user, out) != CT_OK) {
        return NULL;
    }
    return ct_mul(out[0], ct_mul(out[1], out[1]));
}

static void test_creation2_meshgrid_grad(void)
{
    ct_scope_begin();
    const int64_t s3[1] = {3}, s2[1] = {2};
    ct_manual_seed(3);
    ct_tensor *in[2] = {ct_requires_grad_(ct_randn(s3, 1, CT_FLOAT64, NULL), true),
                        ct_requires_grad_(ct_randn(s2, 1, CT_FLOAT64, NULL), true)};
    CHECK(ct_gradcheck(gc_meshgrid, in, 2, (void *)"ij", NULL));
    CHECK(ct_gradcheck(gc_meshgrid, in, 2, (void *)"xy", NULL));
    ct_tensor *out[2];
    CHECK(ct_meshgrid((const ct_tensor *const *)in, 2, "ij", out) == CT_OK);
    CHECK(strcmp(ct_node_name(ct_grad_fn(out[0])), "ExpandBackward0") == 0);
    ct_scope_end();
}

static ct_tensor *new_call(const ct_new_case *c, const ct_tensor *self, const int64_t *s)
{
    if (!strcmp(c->kind, "zeros")) {
        return ct_new_zeros(self, s, 2, c->dtype);
    }
    if (!strcmp(c->kind, "ones")) {
        return ct_new_ones(self, s, 2, c->dtype);
    }
    return ct_new_full(self, s, 2, c->fill, c->dtype);
}

static void test_creation2_new(void)
{
    CHECK(N_OF(ct_new_cases) == 6);
    const int64_t s2[1] = {2}, s23[2] = {2, 3};
    for (int i = 0; i < N_OF(ct_new_cases); i++) {
        const ct_new_case *c = &ct_new_cases[i];
        ct_scope_begin();
        ct_tensor *self = ct_ones(s2, 1, !strcmp(c->self, "f64") ? CT_FLOAT64 : CT_INT32);
        ct_requires_grad_(self, ct_is_floating_point(self)); /* not inherited */
        ct_tensor *t = new_call(c, self, s23);
        CHECK_MSG(t && ct_tensor_dtype(t) == c->out_dtype && !ct_requires_grad(t), "case %d", i);
        CHECK_MSG(CHECK_TENSOR(t, c->out, 6, 0, 0), "case %d", i);
        ct_scope_end();
    }
    ct_tensor *self = ct_ones(s2, 1, CT_FLOAT64);
    ct_tensor *e = ct_new_empty(self, s23, 2, CT_DTYPE_DEFAULT);
    CHECK(e && ct_tensor_dtype(e) == CT_FLOAT64 && ct_test_has_shape(e, s23, 2));
    ct_free(e);
    const int64_t neg[2] = {2, -1};
    CHECK(ct_new_zeros(self, neg, 2, CT_DTYPE_DEFAULT) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Trying to create tensor with negative dimension -1: [2, -1]");
    CHECK(ct_new_full(self, s2, 1, 300, CT_UINT8) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "value cannot be converted to type uint8_t without overflow");
    ct_free(self);
}

static void test_creation2_empty_strided(void)
{
    CHECK(N_OF(ct_strided_cases) == 6);
    for (int i = 0; i < N_OF(ct_strided_cases); i++) {
        const ct_strided_case *c = &ct_strided_cases[i];
        ct_tensor *t = ct_empty_strided(c->sizes, c->strides, c->ndim, CT_FLOAT32);
        CHECK_MSG(t && ct_test_has_shape(t, c->sizes, c->ndim), "case %d", i);
        for (int d = 0; t && d < c->ndim; d++) {
            CHECK_MSG(ct_stride(t, d) == c->strides[d], "case %d stride %d", i, d);
        }
        CHECK_MSG(ct_storage_nbytes(ct_untyped_storage(t)) == (size_t)c->nbytes, "case %d", i);
        ct_free(t);
    }
    const int64_t s[2] = {2, 3}, neg[2] = {-1, 1}, big[2] = {INT64_C(1) << 62, 1};
    CHECK(ct_empty_strided(s, neg, 2, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Storage size calculation overflowed with sizes=[2, 3] and "
                "strides=[-1, 1]");
    CHECK(ct_empty_strided(s, big, 2, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Storage size calculation overflowed");
    CHECK(ct_empty_strided(neg, s, 2, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "Trying to create tensor with negative dimension -1");
}

/* ---- DLPack ----------------------------------------------------------------------- */
/* A uint64_t's alignment inside a struct (8 on LP64 and 32-bit ARM, 4 on i386). */
typedef struct dlpack_u64_align {
    char c;
    uint64_t x;
} dlpack_u64_align;

/* DLPack 0.8's layout (dlpack.h): the offsets every producer and consumer use, for this
   platform's pointer size and uint64_t alignment. */
static void test_creation2_dlpack_layout(void)
{
    size_t a64 = offsetof(dlpack_u64_align, x);
    CHECK(sizeof(ct_dlpack_device) == 8 && sizeof(ct_dlpack_dtype) == 4);
    CHECK(offsetof(ct_dlpack_dtype, bits) == 1 && offsetof(ct_dlpack_dtype, lanes) == 2);
    CHECK(offsetof(ct_dlpack_tensor, device) == sizeof(void *));
    CHECK(offsetof(ct_dlpack_tensor, ndim) == sizeof(void *) + 8);
    CHECK(offsetof(ct_dlpack_tensor, dtype) == sizeof(void *) + 12);
    CHECK(offsetof(ct_dlpack_tensor, shape) == sizeof(void *) + 16);
    CHECK(offsetof(ct_dlpack_tensor, strides) == 2 * sizeof(void *) + 16);
    CHECK(offsetof(ct_dlpack_tensor, byte_offset) == (3 * sizeof(void *) + 16 + a64 - 1) /
                                                         a64 * a64);
    CHECK(offsetof(ct_dlpack_managed_tensor, manager_ctx) == sizeof(ct_dlpack_tensor));
    CHECK(offsetof(ct_dlpack_managed_tensor, deleter) ==
          sizeof(ct_dlpack_tensor) + sizeof(void *));
    CHECK(CT_DLPACK_CPU == 1 && CT_DLPACK_CUDA == 2 && CT_DLPACK_CUDA_HOST == 3);
    CHECK(CT_DLPACK_INT == 0 && CT_DLPACK_UINT == 1 && CT_DLPACK_FLOAT == 2 &&
          CT_DLPACK_BFLOAT == 4 && CT_DLPACK_BOOL == 6);
}

/* ctorch -> DLPack -> ctorch: zero-copy, strides kept, the storage outlives the first tensor
   until both the new tensor and the managed tensor are gone. */
static void test_creation2_dlpack_round_trip(void)
{
    const int64_t s34[2] = {3, 4};
    ct_scope_begin();
    ct_tensor *t = ct_t(ct_reshape(ct_arange(0, 12, 1, CT_FLOAT64), s34, 2)); /* strides (1, 4) */
    ct_dlpack_managed_tensor *m = ct_to_dlpack(t);
    CHECK(m && m->deleter && m->dl_tensor.data == ct_data_ptr(t));
    CHECK(m->dl_tensor.ndim == 2 && m->dl_tensor.shape[0] == 4 && m->dl_tensor.shape[1] == 3);
    CHECK(m->dl_tensor.strides[0] == 1 && m->dl_tensor.strides[1] == 4);
    CHECK(m->dl_tensor.dtype.code == CT_DLPACK_FLOAT && m->dl_tensor.dtype.bits == 64 &&
          m->dl_tensor.dtype.lanes == 1 && m->dl_tensor.byte_offset == 0);
    CHECK(m->dl_tensor.device.device_type == CT_DLPACK_CPU && m->dl_tensor.device.device_id == 0);
    const double *v = (const double *)ct_data_ptr(t);
    ct_scope_end(); /* t is gone; the managed tensor keeps the memory */
    ct_tensor *back = ct_from_dlpack(m);
    CHECK(back && ct_data_ptr(back) == v && ct_stride(back, 0) == 1 && ct_stride(back, 1) == 4);
    const double want[12] = {0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11};
    CHECK_TENSOR(back, want, 12, 0, 0);
    ct_fill_(back, 2); /* writes land in the shared memory */
    CHECK(v[5] == 2);
    ct_tensor *view = ct_select(back, 0, 1);
    ct_free(back); /* the view keeps the memory: the deleter runs when the view goes */
    ct_scope_begin();
    CHECK(ct_item(ct_sum(view)) == 6);
    ct_scope_end();
    ct_free(view);
    /* a bool tensor and a slice with an offset */
    ct_scope_begin();
    ct_tensor *sl = ct_slice(ct_gt_scalar(ct_arange(0, 6, 1, CT_FLOAT32), 2), 0, 2, 6, 2);
    m = ct_to_dlpack(sl);
    CHECK(m && m->dl_tensor.dtype.code == CT_DLPACK_BOOL && m->dl_tensor.dtype.bits == 8 &&
          m->dl_tensor.data == ct_data_ptr(sl) && m->dl_tensor.strides[0] == 2);
    ct_scope_end();
    m->deleter(m); /* a consumer that never imports it frees it this way */
}

/* A managed tensor of a foreign library's: float32 (2, 3) with strides (1, 2) over 7 floats,
   element 0 at byte_offset 4; its deleter counts its calls. */
typedef struct foreign {
    ct_dlpack_managed_tensor m;
    float data[7];
    int64_t shape[2], strides[2];
    int deleted;
} foreign;

static void foreign_deleter(ct_dlpack_managed_tensor *m)
{
    ((foreign *)m->manager_ctx)->deleted++;
}

static void foreign_init(foreign *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < 7; i++) {
        f->data[i] = (float)i * 10;
    }
    f->shape[0] = 2, f->shape[1] = 3, f->strides[0] = 1, f->strides[1] = 2;
    ct_dlpack_tensor *d = &f->m.dl_tensor;
    d->data = f->data;
    d->device.device_type = CT_DLPACK_CPU;
    d->ndim = 2;
    d->dtype.code = CT_DLPACK_FLOAT;
    d->dtype.bits = 32;
    d->dtype.lanes = 1;
    d->shape = f->shape;
    d->strides = f->strides;
    d->byte_offset = sizeof(float);
    f->m.manager_ctx = f;
    f->m.deleter = foreign_deleter;
}

static void test_creation2_dlpack_foreign(void)
{
    foreign f;
    foreign_init(&f);
    ct_scope_begin();
    ct_tensor *t = ct_from_dlpack(&f.m);
    const double want[6] = {10, 30, 50, 20, 40, 60};
    CHECK(t && ct_tensor_dtype(t) == CT_FLOAT32 && CHECK_TENSOR(t, want, 6, 0, 0));
    CHECK(ct_data_ptr(t) == &f.data[1] && f.deleted == 0);
    ct_mul_(t, ct_scalar_tensor(2, CT_FLOAT32));
    CHECK(f.data[1] == 20 && f.data[0] == 0); /* zero-copy, element 0 untouched */
    ct_free(t);
    CHECK(f.deleted == 1);
    /* no strides: row-major */
    foreign_init(&f);
    f.m.dl_tensor.strides = NULL;
    f.m.dl_tensor.byte_offset = 0;
    t = ct_from_dlpack(&f.m);
    const double rows[6] = {0, 10, 20, 30, 40, 50};
    CHECK(t && ct_is_contiguous(t) && CHECK_TENSOR(t, rows, 6, 0, 0));
    ct_free(t);
    CHECK(f.deleted == 1);
    /* rejected: nothing consumed */
    foreign_init(&f);
    f.m.dl_tensor.device.device_type = CT_DLPACK_CUDA;
    CHECK(ct_from_dlpack(&f.m) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "ct_from_dlpack: Unsupported device_type: 2");
    foreign_init(&f);
    f.m.dl_tensor.dtype.code = CT_DLPACK_UINT;
    f.m.dl_tensor.dtype.bits = 16;
    CHECK(ct_from_dlpack(&f.m) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Unsupported kUInt bits 16");
    f.m.dl_tensor.dtype.code = 5; /* complex */
    CHECK(ct_from_dlpack(&f.m) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "Unsupported code 5");
    f.m.dl_tensor.dtype.code = CT_DLPACK_FLOAT;
    f.m.dl_tensor.dtype.bits = 32;
    f.m.dl_tensor.dtype.lanes = 4;
    CHECK(ct_from_dlpack(&f.m) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "ATen does not support lanes != 1");
    foreign_init(&f);
    f.strides[1] = -2;
    CHECK(ct_from_dlpack(&f.m) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "negative sizes and strides are not supported");
    f.m.dl_tensor.ndim = 99;
    CHECK(ct_from_dlpack(&f.m) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "number of dimensions 99 is out of range");
    CHECK(f.deleted == 0);
    /* export errors */
    const int64_t s2[1] = {2};
    ct_tensor *g = ct_requires_grad_(ct_ones(s2, 1, CT_FLOAT32), true);
    CHECK(g != NULL);
    CHECK(ct_to_dlpack(g) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Can't export tensors that require gradient, use "
                "tensor.detach()");
    ct_scope_end();
}

void test_creation2(void)
{
    RUN(test_creation2_logspace);
    RUN(test_creation2_tri_indices);
    RUN(test_creation2_meshgrid);
    RUN(test_creation2_meshgrid_grad);
    RUN(test_creation2_new);
    RUN(test_creation2_empty_strided);
    RUN(test_creation2_dlpack_layout);
    RUN(test_creation2_dlpack_round_trip);
    RUN(test_creation2_dlpack_foreign);
}
