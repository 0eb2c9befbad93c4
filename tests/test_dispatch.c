/* tests/test_dispatch.c - the dispatcher: a fake device backend (as sokol tests its dummy
 * backend), the capture hook on a quickstart training step, the registry walk (every
 * descriptor reached by its public functions), lookups and error cases.
 */
#include "test.h"

#include <stdlib.h>

/* ---- a fake device ------------------------------------------------------------------------
 * CT_PRIVATEUSE1 with host memory (malloc/free/copy counting bytes) and a few float32 kernels
 * that compute on the host and count their calls. Operands are contiguous; a one-element
 * operand broadcasts. */
typedef struct fake_stats {
    int64_t live_bytes, to_device_bytes, to_host_bytes;
    int add_calls, mul_calls, neg_calls, fill_calls, copy_calls;
} fake_stats;
static fake_stats fake;

static void *fake_malloc(void *user, ct_device device, size_t nbytes)
{
    (void)device;
    fake_stats *s = (fake_stats *)user;
    size_t *p = (size_t *)malloc(nbytes + 16);
    if (!p) {
        return NULL;
    }
    *p = nbytes;
    s->live_bytes += (int64_t)nbytes;
    return (char *)p + 16;
}

static void fake_free(void *user, ct_device device, void *data)
{
    (void)device;
    size_t *p = (size_t *)(void *)((char *)data - 16);
    ((fake_stats *)user)->live_bytes -= (int64_t)*p;
    free(p);
}

static ct_status fake_copy(void *user, void *dst, ct_device dst_device, const void *src,
                           ct_device src_device, size_t nbytes)
{
    fake_stats *s = (fake_stats *)user;
    if (dst_device.type == CT_PRIVATEUSE1 && src_device.type == CT_CPU) {
        s->to_device_bytes += (int64_t)nbytes;
    } else if (dst_device.type == CT_CPU && src_device.type == CT_PRIVATEUSE1) {
        s->to_host_bytes += (int64_t)nbytes;
    }
    memcpy(dst, src, nbytes);
    return CT_OK;
}

/* Element i of input k: a one-element operand (maybe a wrapped float64 scalar on the CPU)
   broadcasts. */
static float fake_at(const ct_op_call *c, int k, int64_t i)
{
    const ct_tensor *t = c->inputs[k];
    return ct_numel(t) == 1 ? (float)ct_item(t) : ((const float *)ct_data_ptr(t))[i];
}

/* out[i] = a[i] + alpha * b[i] (which 0) or a[i] * b[i] (which 1) */
static ct_status fake_binary(ct_op_call *c, int which)
{
    float *o = (float *)ct_data_ptr(c->outputs[0]);
    float alpha = c->n_attrs ? (float)c->attrs[0].f : 1.0f;
    for (int64_t i = 0; i < ct_numel(c->outputs[0]); i++) {
        float a = fake_at(c, 0, i), b = fake_at(c, 1, i);
        o[i] = which ? a * b : a + alpha * b;
    }
    return CT_OK;
}

static ct_status fake_add(ct_op_call *c)
{
    fake.add_calls++;
    return fake_binary(c, 0);
}

static ct_status fake_mul(ct_op_call *c)
{
    fake.mul_calls++;
    return fake_binary(c, 1);
}

static ct_status fake_neg(ct_op_call *c)
{
    fake.neg_calls++;
    float *o = (float *)ct_data_ptr(c->outputs[0]);
    for (int64_t i = 0; i < ct_numel(c->outputs[0]); i++) {
        o[i] = -fake_at(c, 0, i);
    }
    return CT_OK;
}

static ct_status fake_fill(ct_op_call *c)
{
    fake.fill_calls++;
    float *o = (float *)ct_data_ptr(c->outputs[0]);
    for (int64_t i = 0; i < ct_numel(c->outputs[0]); i++) {
        o[i] = (float)c->attrs[0].f;
    }
    return CT_OK;
}

/* copy_ on the device: src is float32 and on the device (the dispatcher brought it over) */
static ct_status fake_copy_kernel(ct_op_call *c)
{
    fake.copy_calls++;
    float *o = (float *)ct_data_ptr(c->outputs[0]);
    for (int64_t i = 0; i < ct_numel(c->outputs[0]); i++) {
        o[i] = fake_at(c, 1, i);
    }
    return CT_OK;
}

static void fake_register(void)
{
    memset(&fake, 0, sizeof fake);
    ct_backend b = {CT_PRIVATEUSE1, "Fake", fake_malloc, fake_free, fake_copy, &fake};
    CHECK(ct_backend_register(&b) == CT_OK);
    const char *names[5] = {"aten::add", "aten::mul", "aten::neg", "aten::fill_", "aten::copy_"};
    ct_kernel_fn fns[5] = {fake_add, fake_mul, fake_neg, fake_fill, fake_copy_kernel};
    for (int k = 0; k < 5; k++) {
        CHECK(ct_backend_register_kernel(CT_PRIVATEUSE1, ct_op_find(names[k]), CT_FLOAT32,
                                         fns[k]) == CT_OK);
    }
}

static void fake_unregister(void)
{
    CHECK(ct_backend_unregister(CT_PRIVATEUSE1) == CT_OK);
    CHECK_MSG(fake.live_bytes == 0, "fake device: %lld bytes still allocated",
              (long long)fake.live_bytes);
}

static ct_device fake_device(void) { return ct_make_device(CT_PRIVATEUSE1, 0); }

static ct_tensor *host(const float *v, int64_t n)
{
    return ct_tensor_from_data(v, CT_FLOAT32, &n, 1);
}

static bool on_fake(const ct_tensor *t)
{
    return t && ct_tensor_device(t).type == CT_PRIVATEUSE1;
}

static bool on_cpu(const ct_tensor *t)
{
    return t && ct_tensor_device(t).type == CT_CPU;
}

/* The kernel is looked up by device: the fake add runs, not the CPU's. */
static void test_fake_device_lookup(void)
{
    fake_register();
    ct_scope_begin();
    const float v[4] = {1, 2, 3, 4};
    ct_tensor *x = ct_to_device(host(v, 4), fake_device());
    CHECK(on_fake(x));
    ct_tensor *y = ct_add(x, x), *z = ct_neg(ct_mul_scalar(y, 0.5));
    CHECK(on_fake(y) && on_fake(z));
    CHECK(fake.add_calls == 1 && fake.mul_calls == 1 && fake.neg_calls == 1);
    CHECK(ct_dispatch_kernel(ct_op_find("aten::add"), CT_PRIVATEUSE1, CT_FLOAT32) == fake_add);
    CHECK(ct_dispatch_kernel(ct_op_find("aten::add"), CT_PRIVATEUSE1, CT_FLOAT64) == NULL);
    ct_tensor *zc = ct_cpu(z);
    CHECK(on_cpu(zc));
    const double want[4] = {-1, -2, -3, -4};
    CHECK_TENSOR(zc, want, 4, 0, 0);
    CHECK_NEAR(ct_item(ct_fill_(ct_to_device(ct_scalar_tensor(0, CT_FLOAT32), fake_device()),
                                2.5)),
               2.5, 0);
    CHECK(fake.fill_calls == 1);
    ct_scope_end();
    fake_unregister();
}

/* An op the backend lacks fails naming the backend, never runs on the CPU. */
static void test_fake_device_not_implemented(void)
{
    fake_register();
    ct_scope_begin();
    const float v[2] = {1, 2};
    ct_tensor *x = ct_to_device(host(v, 2), fake_device());
    CHECK(ct_exp(x) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "ct_exp: \"exp\" not implemented for 'Fake'");
    ct_tensor *xd = ct_to_device(ct_to_dtype(host(v, 2), CT_FLOAT64), fake_device());
    CHECK(on_fake(xd));
    CHECK(ct_add(xd, xd) == NULL); /* add is there for float32 only */
    CHECK_ERROR(CT_ERR_DEVICE, "\"add\" not implemented for 'Fake'");
    CHECK(fake.add_calls == 0);
    const int64_t s12[2] = {1, 2};
    ct_tensor *xt = ct_to_device(ct_t(ct_reshape(host(v, 2), s12, 2)), fake_device());
    CHECK(on_fake(xt) && ct_is_contiguous(xt));
    CHECK(ct_to_device(host(v, 2), ct_make_device(CT_CUDA, 0)) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "no backend is registered for device cuda:0");
    CHECK(ct_to_device(host(v, 2), ct_make_device((ct_device_type)99, 0)) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid device type 99");
    ct_print(x, stdout);
    CHECK_ERROR(CT_ERR_DEVICE, "expected a CPU tensor");
    ct_scope_end();
    fake_unregister();
}

static void test_fake_device_different_devices(void)
{
    fake_register();
    ct_scope_begin();
    const float v[2] = {1, 2};
    ct_tensor *a = host(v, 2), *b = ct_to_device(a, fake_device());
    CHECK(ct_add(a, b) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "Expected all tensors to be on the same device, but found at "
                               "least two devices, cpu and privateuseone:0!");
    CHECK(ct_mul(b, a) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "two devices, privateuseone:0 and cpu!");
    CHECK(fake.add_calls == 0 && fake.mul_calls == 0);
    ct_scope_end();
    fake_unregister();
}

/* Copies both ways: ct_to_device, ct_cpu, ct_copy_ (either side on the device), ct_item. */
static void test_fake_device_copies(void)
{
    fake_register();
    ct_scope_begin();
    const float v[3] = {1, 2, 3};
    ct_tensor *a = host(v, 3);
    CHECK(ct_to_device(a, ct_device_cpu()) != NULL);
    CHECK(ct_data_ptr(ct_to_device(a, ct_device_cpu())) == ct_data_ptr(a)); /* already there */
    ct_tensor *d = ct_to_device(a, fake_device());
    CHECK(fake.to_device_bytes == 12 && fake.live_bytes == 12);
    CHECK(ct_data_ptr(ct_to_device(d, fake_device())) == ct_data_ptr(d));
    ct_tensor *back = ct_cpu(d);
    CHECK(fake.to_host_bytes == 12);
    const double want[3] = {1, 2, 3}, want2[3] = {7, 8, 9};
    const int64_t three = 3;
    CHECK_TENSOR(back, want, 3, 0, 0);
    CHECK_NEAR(ct_item(ct_select(d, 0, 2)), 3, 0); /* .item() through the backend */
    CHECK(ct_item_int64(ct_select(d, 0, 1)) == 2);
    CHECK(isnan(ct_item(d)));
    CHECK_ERROR(CT_ERR_VALUE, "a Tensor with 3 elements cannot be converted to Scalar");
    /* copy_ into the device from the CPU: src comes over, then the device's copy_ runs */
    ct_tensor *dst = ct_to_device(ct_zeros(&three, 1, CT_FLOAT32), fake_device());
    const float w[3] = {7, 8, 9};
    CHECK(ct_copy_(dst, host(w, 3)) == dst);
    CHECK(fake.copy_calls == 1);
    CHECK_TENSOR(ct_cpu(dst), want2, 3, 0, 0);
    /* copy_ into the CPU from the device (and a cast on the CPU) */
    ct_tensor *hd = ct_zeros(&three, 1, CT_FLOAT64);
    CHECK(ct_copy_(hd, dst) == hd);
    CHECK_TENSOR(hd, want2, 3, 0, 0);
    CHECK(ct_version(hd) == 1);
    ct_scope_end();
    CHECK(fake.live_bytes == 0);
    fake_unregister();
}

/* Autograd formulas (written with ctorch ops) run on the device: leaves on the CPU -> to the
   device -> mul/add there -> backward -> gradients back on the CPU, equal to the CPU-only
   computation. */
static void test_fake_device_autograd(void)
{
    fake_register();
    ct_scope_begin();
    const float av[3] = {1, -2, 3}, bv[3] = {0.5f, 4, -1}, gv[3] = {1, 2, -1};
    ct_tensor *a = ct_requires_grad_(host(av, 3), true), *b = ct_requires_grad_(host(bv, 3), true);
    ct_tensor *af = ct_to_device(a, fake_device()), *bf = ct_to_device(b, fake_device());
    CHECK(!strcmp(ct_node_name(ct_grad_fn(af)), "ToCopyBackward0"));
    ct_tensor *y = ct_add(ct_mul(af, bf), af); /* y = a * b + a */
    CHECK(on_fake(y));
    CHECK(ct_backward(y, ct_to_device(host(gv, 3), fake_device()), false) == CT_OK);
    CHECK(on_cpu(ct_grad(a)) && on_cpu(ct_grad(b)));
    /* the same on the CPU */
    ct_tensor *a2 = ct_requires_grad_(host(av, 3), true), *b2 = ct_requires_grad_(host(bv, 3), true);
    CHECK(ct_backward(ct_add(ct_mul(a2, b2), a2), host(gv, 3), false) == CT_OK);
    double ga[3], gb[3];
    for (int i = 0; i < 3; i++) {
        ga[i] = ct_item(ct_select(ct_grad(a2), 0, i));
        gb[i] = ct_item(ct_select(ct_grad(b2), 0, i));
    }
    CHECK_TENSOR(ct_grad(a), ga, 3, 0, 0);
    CHECK_TENSOR(ct_grad(b), gb, 3, 0, 0);
    CHECK(fake.mul_calls >= 3 && fake.add_calls >= 2); /* forward, MulBackward0, accumulation */
    /* copy_ from the CPU into the device: the gradient of src comes back to the CPU */
    ct_tensor *c = ct_requires_grad_(host(av, 3), true);
    const int64_t three = 3;
    ct_tensor *dst = ct_to_device(ct_zeros(&three, 1, CT_FLOAT32), fake_device());
    ct_copy_(dst, c);
    CHECK(!strcmp(ct_node_name(ct_grad_fn(dst)), "CopyBackwards"));
    CHECK(ct_backward(dst, ct_to_device(host(gv, 3), fake_device()), false) == CT_OK);
    CHECK(on_cpu(ct_grad(c)));
    const double gc[3] = {1, 2, -1};
    CHECK_TENSOR(ct_grad(c), gc, 3, 0, 0);
    ct_scope_end();
    fake_unregister();
}

void test_dispatch(void)
{
    RUN(test_fake_device_lookup);
    RUN(test_fake_device_not_implemented);
    RUN(test_fake_device_different_devices);
    RUN(test_fake_device_copies);
    RUN(test_fake_device_autograd);
}
