/* tests/test_tensor2.c - the tensor area's T2 items and API.md's aliases: the default device,
 * is_nonzero, apply_/map_, storage access with set_/is_set_to, memory formats (checks and
 * contiguous copies, strides from PyTorch), ct_tensor_free/ct_tensor_retain and
 * ct_last_error/ct_clear_error.
 */
#include "test.h"

static void test_tensor2_aliases(void)
{
    const int64_t s2[1] = {2};
    ct_tensor *t = ct_ones(s2, 1, CT_FLOAT32);
    CHECK(ct_tensor_retain(t) == t);
    ct_release(t);
    ct_tensor_free(t);
    CHECK(ct_last_error() == NULL);
    CHECK(ct_zeros(s2, 1, (ct_dtype)99) == NULL);
    CHECK(ct_last_error() && strstr(ct_last_error(), "99 is not a valid value for dtype"));
    ct_clear_error();
    CHECK(ct_last_error() == NULL && ct_error_code() == CT_OK);
}

static void test_tensor2_default_device(void)
{
    ct_device d = ct_get_default_device();
    CHECK(d.type == CT_CPU && d.index == 0);
    CHECK(ct_set_default_device(ct_make_device(CT_CUDA, 0)) == CT_ERR_DEVICE);
    CHECK_ERROR(CT_ERR_DEVICE, "no backend is registered for device cuda:0");
    CHECK(ct_set_default_device(ct_make_device((ct_device_type)9, 0)) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "9 is not a valid value for device type");
    ct_device bad = {CT_CPU, -2};
    CHECK(ct_set_default_device(bad) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "Device index must be -1 or non-negative, got -2");
    CHECK(ct_set_default_device(ct_device_cpu()) == CT_OK);
    CHECK(ct_get_default_device().type == CT_CPU);
}

static void test_tensor2_is_nonzero(void)
{
    ct_scope_begin();
    const int64_t s1[2] = {1, 1}, s2[1] = {2}, s0[1] = {0};
    CHECK(ct_is_nonzero(ct_full(s1, 2, 0.5, CT_FLOAT32)));
    CHECK(!ct_is_nonzero(ct_zeros(s1, 2, CT_FLOAT64)));
    CHECK(ct_is_nonzero(ct_scalar_tensor(NAN, CT_FLOAT32)));
    CHECK(ct_is_nonzero(ct_scalar_tensor(1, CT_BOOL)));
    CHECK(!ct_is_nonzero(ct_zeros(NULL, 0, CT_INT64)));
    CHECK(!ct_is_nonzero(ct_ones(s2, 1, CT_INT64)));
    CHECK_ERROR(CT_ERR_VALUE, "Boolean value of Tensor with more than one value is ambiguous");
    CHECK(!ct_is_nonzero(ct_ones(s0, 1, CT_INT64)));
    CHECK_ERROR(CT_ERR_VALUE, "Boolean value of Tensor with no values is ambiguous");
    ct_scope_end();
}

static double twice_plus(double x, void *user) { return 2 * x + *(const double *)user; }
static double times(double x, double y, void *user)
{
    (void)user;
    return x * y;
}

static void test_tensor2_apply_map(void)
{
    ct_scope_begin();
    const int64_t s23[2] = {2, 3}, s3[1] = {3}, s2[1] = {2};
    ct_tensor *t = ct_t(ct_reshape(ct_arange(0, 6, 1, CT_FLOAT32), s23, 2)); /* (3, 2) view */
    double one = 1;
    uint32_t v = ct_version(t);
    CHECK(ct_apply_(t, twice_plus, &one) == t && ct_version(t) == v + 1);
    const double want[6] = {1, 7, 3, 9, 5, 11};
    CHECK_TENSOR(t, want, 6, 0, 0);
    ct_tensor *m = ct_ones(s23, 2, CT_INT64); /* torch.ones(2, 3).map_(tensor([2, 3, 4]), *) */
    ct_tensor *o = ct_arange(2, 5, 1, CT_INT64);
    CHECK(ct_map_(m, o, times, NULL) == m);
    const double mwant[6] = {2, 3, 4, 2, 3, 4};
    CHECK_TENSOR(m, mwant, 6, 0, 0);
    CHECK(ct_map_(m, ct_to_dtype(o, CT_FLOAT64), times, NULL) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "map_: expected torch.LongTensor for 'other' (got "
                "torch.DoubleTensor)");
    CHECK(ct_map_(ct_ones(s23, 2, CT_INT64), ct_ones(s2, 1, CT_INT64), times, NULL) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "The expanded size of the tensor (3) must match the existing "
                "size (2) at non-singleton dimension 1");
    ct_tensor *g = ct_requires_grad_(ct_ones(s3, 1, CT_FLOAT32), true);
    CHECK(ct_apply_(g, twice_plus, &one) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Can't call apply_() on Variable that requires grad. Use "
                "var.detach().apply_() instead.");
    CHECK(ct_map_(ct_ones(s3, 1, CT_FLOAT32), g, times, NULL) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "Can't call map_() on Variable that requires grad.");
    ct_scope_end();
}

static void test_tensor2_storage_set(void)
{
    ct_scope_begin();
    const int64_t s22[2] = {2, 2}, st[2] = {1, 2}, s23[2] = {2, 3}, s1[1] = {1};
    ct_tensor *src = ct_arange(0, 6, 1, CT_FLOAT32);
    ct_storage *s = ct_untyped_storage(src);
    CHECK(ct_storage_nbytes(s) == 24 && ct_storage_data_ptr(s) == ct_data_ptr(src));
    ct_tensor *a = ct_zeros(s1, 1, CT_FLOAT32);
    CHECK(ct_set_(a, s, 1, s22, st, 2) == a); /* a.set_(s, 1, (2, 2), (1, 2)) */
    const double want[4] = {1, 3, 2, 4};
    CHECK(ct_test_has_shape(a, s22, 2) && ct_storage_offset(a) == 1);
    CHECK_TENSOR(a, want, 4, 0, 0);
    CHECK(ct_untyped_storage(a) == s && !ct_is_set_to(a, src));
    ct_tensor *b = ct_zeros(s1, 1, CT_FLOAT32); /* b.set_(src) */
    CHECK(ct_set_(b, ct_untyped_storage(src), ct_storage_offset(src), ct_sizes(src),
                  ct_strides(src), ct_dim(src)) == b);
    CHECK(ct_is_set_to(b, src) && ct_is_set_to(src, b));
    ct_fill_(b, 7); /* shared */
    CHECK(ct_item(ct_sum(src)) == 42);
    CHECK(ct_set_(a, s, 1, s23, st, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "setStorage: sizes [2, 3], strides [1, 2], storage offset 1, and "
                "itemsize 4 requiring a storage size of 28 are out of bounds for storage of "
                "size 24");
    CHECK(ct_set_(a, s, -1, s22, st, 2) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "Tensor: invalid storage offset -1");
    ct_tensor *g = ct_requires_grad_(ct_ones(s1, 1, CT_FLOAT32), true);
    CHECK(ct_set_(g, s, 0, s1, st, 1) == NULL);
    CHECK_ERROR(CT_ERR_AUTOGRAD, "a leaf Variable that requires grad is being used in an "
                "in-place operation.");
    ct_scope_end();
}

static void test_tensor2_memory_format(void)
{
    ct_scope_begin();
    const int64_t s4[4] = {2, 3, 4, 5}, s5[5] = {2, 3, 4, 5, 6}, s2[2] = {2, 3};
    const int64_t s4b[4] = {2, 1, 4, 1};
    ct_tensor *x = ct_ones(s4, 4, CT_FLOAT32);
    CHECK(ct_is_contiguous_memory_format(x, CT_CONTIGUOUS_FORMAT));
    CHECK(ct_is_contiguous_memory_format(x, CT_PRESERVE_FORMAT)); /* as PyTorch */
    CHECK(!ct_is_contiguous_memory_format(x, CT_CHANNELS_LAST));
    CHECK(!ct_is_contiguous_memory_format(x, CT_CHANNELS_LAST_3D));
    ct_tensor *y = ct_contiguous_memory_format(x, CT_CHANNELS_LAST);
    const int64_t cl[4] = {60, 1, 15, 3}; /* PyTorch's strides */
    CHECK(y && !memcmp(ct_strides(y), cl, sizeof cl) && ct_test_has_shape(y, s4, 4));
    CHECK(ct_is_contiguous_memory_format(y, CT_CHANNELS_LAST) && !ct_is_contiguous(y));
    CHECK(ct_contiguous_memory_format(y, CT_CHANNELS_LAST) == y);
    ct_tensor *z = ct_contiguous_memory_format(y, CT_CONTIGUOUS_FORMAT);
    CHECK(z && ct_is_contiguous(z) && ct_item(ct_sum(z)) == 120);
    ct_tensor *w = ct_contiguous_memory_format(ct_ones(s5, 5, CT_FLOAT64), CT_CHANNELS_LAST_3D);
    const int64_t cl3[5] = {360, 1, 90, 18, 3};
    CHECK(w && !memcmp(ct_strides(w), cl3, sizeof cl3));
    ct_tensor *u = ct_contiguous_memory_format(ct_ones(s4b, 4, CT_FLOAT32), CT_CHANNELS_LAST);
    CHECK(u && ct_is_contiguous(u) && ct_is_contiguous_memory_format(u, CT_CHANNELS_LAST));
    CHECK(ct_contiguous_memory_format(ct_ones(s2, 2, CT_FLOAT32), CT_CHANNELS_LAST) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "required rank 4 tensor to use channels_last format");
    CHECK(ct_contiguous_memory_format(y, CT_PRESERVE_FORMAT) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "preserve memory format is unsupported by the contiguous operator");
    CHECK(!ct_is_contiguous_memory_format(x, (ct_memory_format)9));
    CHECK_ERROR(CT_ERR_VALUE, "9 is not a valid value for memory_format");
    /* gradients flow through the copy */
    ct_tensor *g = ct_requires_grad_(ct_ones(s4, 4, CT_FLOAT64), true);
    ct_tensor *loss = ct_sum(ct_mul_scalar(ct_contiguous_memory_format(g, CT_CHANNELS_LAST), 3));
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    CHECK(ct_item(ct_sum(ct_grad(g))) == 360);
    ct_scope_end();
}

void test_tensor2(void)
{
    RUN(test_tensor2_aliases);
    RUN(test_tensor2_default_device);
    RUN(test_tensor2_is_nonzero);
    RUN(test_tensor2_apply_map);
    RUN(test_tensor2_storage_set);
    RUN(test_tensor2_memory_format);
}
