/* tests/test_core.c - tensors, scopes, errors, the allocator, dtypes and views. */
#include "test.h"

static void test_scope_frees_everything(void)
{
    size_t live = ct_memory_allocated();
    ct_scope_begin();
    int64_t s[2] = {3, 4};
    ct_tensor *a = ct_ones(s, 2, CT_FLOAT32);
    ct_tensor *b = ct_add(ct_mul(a, a), ct_exp(a));
    CHECK(b != NULL);
    CHECK(ct_memory_allocated() > live);
    ct_scope_end();
    CHECK(ct_memory_allocated() == live);
}

static void test_keep_moves_to_caller(void)
{
    ct_scope_begin();
    int64_t s[1] = {5};
    ct_tensor *kept = ct_keep(ct_arange(0, 5, 1, CT_FLOAT32));
    ct_scope_end();
    ct_tensor *sum = ct_sum(kept); /* no scope open: the caller owns it */
    CHECK_NEAR(ct_item(sum), 10.0, 0);
    ct_free(sum);
    ct_free(kept);
    (void)s;
}

static void test_error_is_sticky_and_null_propagates(void)
{
    int64_t a[2] = {2, 3}, b[2] = {4, 3};
    ct_scope_begin();
    ct_tensor *x = ct_zeros(a, 2, CT_FLOAT32), *y = ct_zeros(b, 2, CT_FLOAT32);
    ct_tensor *z = ct_add(x, y);
    CHECK(z == NULL);
    CHECK(ct_mul(z, x) == NULL); /* NULL propagates without a new message */
    CHECK_ERROR(CT_ERR_SHAPE, "ct_add: The size of tensor a (2) must match the size of tensor b "
                              "(4) at non-singleton dimension 0");
    CHECK(ct_exp(NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_exp");
    ct_scope_end();
}

static void test_views_share_storage(void)
{
    ct_scope_begin();
    int64_t s[2] = {2, 3};
    ct_tensor *x = ct_reshape(ct_arange(0, 6, 1, CT_FLOAT32), s, 2);
    ct_tensor *t = ct_t(x);
    CHECK(!ct_is_contiguous(t));
    CHECK(ct_stride(t, 0) == 1 && ct_stride(t, 1) == 3);
    ct_fill_(ct_select(t, 0, 1), 7.0); /* column 1 of x */
    double want[6] = {0, 7, 2, 3, 7, 5};
    CHECK_TENSOR(x, want, 6, 0, 0);
    CHECK(ct_version(x) == 1);
    int64_t bad[1] = {4};
    CHECK(ct_view(t, bad, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "shape '[4]' is invalid for input of size 6");
    int64_t flat[1] = {6};
    CHECK(ct_view(t, flat, 1) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "view size is not compatible");
    ct_scope_end();
}

void test_core(void)
{
    RUN(test_scope_frees_everything);
    RUN(test_keep_moves_to_caller);
    RUN(test_error_is_sticky_and_null_propagates);
    RUN(test_views_share_storage);
}
