/* tests/test_core.c - tensors, scopes, errors, the allocator, dtypes and views. */
#include "test.h"

#include <stdlib.h>

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

/* The allocator's size classes, seen through ct_memory_allocated (which counts each block's
   class capacity): 4 per power of two from 16 bytes, (4 + k%4) << (k/4 + 2). */
static void test_alloc_size_classes(void)
{
    static const int64_t request[] = {1, 16, 17, 20, 21, 33, 64, 65, 100, 1000, 4097, 1 << 20};
    static const size_t capacity[] = {16, 16, 20, 20, 24, 40, 64, 80, 112, 1024, 5120, 1 << 20};
    int64_t one = 1;
    size_t live = ct_memory_allocated();
    ct_tensor *base = ct_empty(&one, 1, CT_UINT8);
    size_t base_bytes = ct_memory_allocated() - live;
    ct_free(base);
    for (size_t k = 0; k < sizeof request / sizeof request[0]; k++) {
        ct_tensor *t = ct_empty(&request[k], 1, CT_UINT8);
        CHECK(ct_memory_allocated() - live - base_bytes + 16 == capacity[k]);
        ct_free(t);
    }
}

/* Attributes PyTorch users read: is_signed, element_size, result_type, repr, the default
   generator (values as PyTorch 2.15 prints them). */
static void test_tensor_attributes(void)
{
    int64_t one = 1, two = 2;
    ct_scope_begin();
    CHECK(ct_is_signed(ct_empty(&one, 1, CT_INT8)) && ct_is_signed(ct_empty(&one, 1, CT_FLOAT32)));
    CHECK(!ct_is_signed(ct_empty(&one, 1, CT_UINT8)) && !ct_is_signed(ct_empty(&one, 1, CT_BOOL)));
    CHECK(ct_element_size(ct_empty(&one, 1, CT_FLOAT64)) == 8);
    CHECK(ct_element_size(ct_empty(&one, 1, CT_INT16)) == 2);
    ct_tensor *i32 = ct_empty(&one, 1, CT_INT32);
    CHECK(ct_result_type(i32, ct_scalar_tensor(1.0, CT_FLOAT64)) == CT_FLOAT64);
    CHECK(ct_result_type(i32, ct_scalar_tensor(1.0, CT_INT64)) == CT_INT32);
    const float v[2] = {1.0f, 2.5f};
    char buf[64];
    ct_to_string(ct_tensor_from_data(v, CT_FLOAT32, &two, 1), buf, sizeof buf);
    CHECK(strcmp(buf, "tensor([1.0000, 2.5000])") == 0);
    ct_manual_seed(3);
    CHECK(ct_generator_initial_seed(ct_default_generator()) == 3);
    ct_scope_end();
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

/* ulp distance of got from the correctly rounded float32 of want */
static double ulp_error(float got, double want)
{
    float w = (float)want;
    if (isinf(want) || w == 0) {
        return got == w ? 0 : 1e9;
    }
    double ulp = (double)nextafterf(fabsf(w), INFINITY) - (double)fabsf(w);
    return fabs((double)got - want) / ulp;
}

/* The vectorized float32 exp/log/tanh/sigmoid (src/ops/vmath.h) against libm in double, on
   4M float32 values spread over their whole ranges: the bounds the header states. */
static void test_vmath_ulp(void)
{
    const int64_t n = 1 << 22;
    float *xs = (float *)malloc(sizeof(float) * (size_t)n);
    double worst[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n; i++) { /* normal floats (subnormals flush to zero) */
        uint32_t v =
            0x00800000u + (uint32_t)((uint64_t)i * (0x7f000000u - 0x00800000u) / (uint64_t)n);
        float f;
        memcpy(&f, &v, sizeof f);
        xs[i] = (i & 1) ? -f : f;
    }
    ct_scope_begin();
    int64_t shape[1] = {n};
    ct_tensor *x = ct_tensor_from_data(xs, CT_FLOAT32, shape, 1);
    const float *e = (const float *)ct_data_ptr(ct_exp(x));
    const float *l = (const float *)ct_data_ptr(ct_log(ct_abs(x)));
    const float *t = (const float *)ct_data_ptr(ct_tanh(x));
    const float *sg = (const float *)ct_data_ptr(ct_sigmoid(x));
    for (int64_t i = 0; i < n; i++) {
        double xd = xs[i], err[4] = {0, 0, 0, 0};
        if (xd > -87.0 && xd < 88.0) {
            err[0] = ulp_error(e[i], exp(xd));
        }
        err[1] = ulp_error(l[i], log(fabs(xd)));
        err[2] = fabs(tanh(xd)) > 1.2e-38 ? ulp_error(t[i], tanh(xd)) : 0;
        double s = 1.0 / (1.0 + exp(-xd));
        if (s > 1e-37) {
            err[3] = ulp_error(sg[i], s);
        }
        for (int k = 0; k < 4; k++) {
            worst[k] = err[k] > worst[k] ? err[k] : worst[k];
        }
    }
    CHECK_MSG(worst[0] <= 2 && worst[1] <= 2 && worst[2] <= 3 && worst[3] <= 3,
              "max ulp: exp %.2f log %.2f tanh %.2f sigmoid %.2f", worst[0], worst[1], worst[2],
              worst[3]);
    float specials[6] = {-INFINITY, INFINITY, NAN, 0.0f, -1.0f, 100.0f};
    int64_t six[1] = {6};
    ct_tensor *sp = ct_tensor_from_data(specials, CT_FLOAT32, six, 1);
    const float *se = (const float *)ct_data_ptr(ct_exp(sp));
    const float *sl = (const float *)ct_data_ptr(ct_log(sp));
    CHECK(se[0] == 0 && isinf(se[1]) && isnan(se[2]) && se[3] == 1 && isinf(se[5]));
    CHECK(isnan(sl[0]) && isinf(sl[1]) && isnan(sl[2]) && isinf(sl[3]) && sl[3] < 0 &&
          isnan(sl[4]));
    ct_scope_end();
    free(xs);
}

/* Every creation function is a factory op through the one entry: the hook sees each call
   with PyTorch's operator name, kind and the attributes in schema order. */
static void test_creation_ops_dispatch(void)
{
    ct_scope_begin();
    int64_t sz[2] = {2, 3};
    float data[6] = {1, 2, 3, 4, 5, 6};
    ct_tensor *x = ct_ones(sz, 2, CT_FLOAT32);
    ct_test_op_log log;
    ct_test_op_log_begin(&log);
    ct_tensor *outs[13] = {
        ct_empty(sz, 2, CT_INT32), ct_zeros(sz, 2, CT_FLOAT64), ct_ones(sz, 2, CT_INT8),
        ct_full(sz, 2, 2.5, CT_FLOAT32), ct_scalar_tensor(7, CT_INT64), ct_empty_like(x),
        ct_zeros_like(x), ct_ones_like(x), ct_full_like(x, -1), ct_tensor_from_data(data,
        CT_FLOAT32, sz, 2), ct_arange(0, 5, 2, CT_INT16), ct_linspace(0, 1, 3, CT_FLOAT64),
        ct_eye(3, -1, CT_BOOL)};
    ct_test_op_log_end();
    static const char *names[13] = {"aten::empty", "aten::zeros", "aten::ones", "aten::full",
                                    "aten::scalar_tensor", "aten::empty_like",
                                    "aten::zeros_like", "aten::ones_like", "aten::full_like",
                                    "aten::tensor", "aten::arange", "aten::linspace",
                                    "aten::eye"};
    CHECK(log.n == 13);
    for (int k = 0; k < 13 && k < log.n; k++) {
        const ct_op *op = log.call[k].op;
        CHECK_MSG(strcmp(op->name, names[k]) == 0, "op %d is %s, want %s", k, op->name,
                  names[k]);
        CHECK(op->kind == CT_OP_FACTORY && ct_op_find(names[k]) == op);
        CHECK(outs[k] != NULL && ct_tensor_device(outs[k]).type == CT_CPU);
        CHECK(log.call[k].n_inputs == ((k >= 5 && k <= 8) ? 1 : 0));
    }
    CHECK(log.call[3].n_attrs == 3 && log.call[3].attrs[0].i == 2 &&
          log.call[3].attrs[1].f == 2.5 && log.call[3].attrs[2].i == CT_FLOAT32);
    CHECK(log.input0[8] == x && log.call[8].attrs[0].f == -1);
    CHECK(log.call[10].attrs[2].f == 2 && log.call[10].attrs[3].i == CT_INT16);
    CHECK(log.call[12].attrs[0].i == 3 && log.call[12].attrs[1].i == 3); /* m < 0: m = n */
    CHECK(ct_tensor_dtype(outs[12]) == CT_BOOL && ct_item(ct_sum(outs[12])) == 3);
    CHECK(ct_item(ct_sum(outs[9])) == 21 && ct_item(ct_sum(outs[7])) == 6);
    CHECK(ct_version(outs[1]) == 0); /* torch.zeros(2, 3)._version */
    ct_scope_end();
}

void test_core(void)
{
    RUN(test_vmath_ulp);
    RUN(test_scope_frees_everything);
    RUN(test_alloc_size_classes);
    RUN(test_tensor_attributes);
    RUN(test_keep_moves_to_caller);
    RUN(test_error_is_sticky_and_null_propagates);
    RUN(test_views_share_storage);
    RUN(test_creation_ops_dispatch);
}
