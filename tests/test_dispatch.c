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
    int add_calls, mul_calls, neg_calls, fill_calls, copy_calls, pinned_allocs;
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

/* Pinned host memory: the same counted malloc, on the host. */
static void *fake_host_alloc(void *user, size_t nbytes)
{
    ((fake_stats *)user)->pinned_allocs++;
    return fake_malloc(user, ct_device_cpu(), nbytes);
}

static void fake_host_free(void *user, void *data)
{
    fake_free(user, ct_device_cpu(), data);
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
    ct_backend b = {CT_PRIVATEUSE1, "Fake", fake_malloc, fake_free, fake_copy, &fake,
                    fake_host_alloc, fake_host_free};
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
    CHECK(ct_to_device(host(v, 2), ct_make_device(CT_CUDA, 0)) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "no backend is registered for device cuda:0");
    CHECK(ct_to_device(host(v, 2), ct_make_device((ct_device_type)99, 0)) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "invalid device type 99");
    char text[64]; /* printed through a copy to the CPU, with PyTorch's device suffix */
    CHECK(ct_to_string(x, text, sizeof text) == strlen(text));
    CHECK(strcmp(text, "tensor([1., 2.], device='privateuseone:0')") == 0);
    ct_scope_end();
    fake_unregister();
}

/* ct_set_default_device: factories go to the default device (zeros has no Fake kernel, so the
   not-implemented error names it), and the repr marks tensors elsewhere, as PyTorch's. */
static void test_fake_device_default(void)
{
    fake_register();
    ct_scope_begin();
    const float v[2] = {1, 2};
    const int64_t s2[1] = {2};
    ct_tensor *x = host(v, 2);
    CHECK(ct_set_default_device(fake_device()) == CT_OK);
    CHECK(ct_get_default_device().type == CT_PRIVATEUSE1);
    CHECK(ct_zeros(s2, 1, CT_FLOAT32) == NULL);
    CHECK_ERROR(CT_ERR_DEVICE, "ct_zeros: \"zeros\" not implemented for 'Fake'");
    char text[64];
    CHECK(ct_to_string(x, text, sizeof text) == strlen(text));
    CHECK(strcmp(text, "tensor([1., 2.], device='cpu')") == 0);
    CHECK(ct_to_string(ct_to_device(x, fake_device()), text, sizeof text) == strlen(text));
    CHECK(strcmp(text, "tensor([1., 2.])") == 0);
    CHECK(ct_set_default_device(ct_device_cpu()) == CT_OK);
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
    /* a 0-dim CPU tensor joins a call on the device, before or after the device tensor */
    ct_tensor *three = ct_scalar_tensor(3, CT_FLOAT32);
    const double w[2] = {3, 6};
    ct_tensor *p = ct_mul(three, b), *q = ct_mul(b, three);
    CHECK(on_fake(p) && on_fake(q) && fake.mul_calls == 2);
    CHECK_TENSOR(ct_cpu(p), w, 2, 0, 0);
    CHECK_TENSOR(ct_cpu(q), w, 2, 0, 0);
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
    /* a strided source is made contiguous on its device first */
    const float m[4] = {1, 2, 3, 4};
    const int64_t s22[2] = {2, 2};
    const double mt[4] = {1, 3, 2, 4};
    ct_tensor *dt = ct_to_device(ct_t(ct_reshape(host(m, 4), s22, 2)), fake_device());
    CHECK(on_fake(dt) && ct_is_contiguous(dt));
    CHECK_TENSOR(ct_cpu(dt), mt, 4, 0, 0);
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
    ct_tensor *a = ct_requires_grad_(host(av, 3), true);
    ct_tensor *b = ct_requires_grad_(host(bv, 3), true);
    ct_tensor *af = ct_to_device(a, fake_device()), *bf = ct_to_device(b, fake_device());
    CHECK(!strcmp(ct_node_name(ct_grad_fn(af)), "ToCopyBackward0"));
    ct_tensor *y = ct_add(ct_mul(af, bf), af); /* y = a * b + a */
    CHECK(on_fake(y));
    CHECK(ct_backward(y, ct_to_device(host(gv, 3), fake_device()), false) == CT_OK);
    CHECK(on_cpu(ct_grad(a)) && on_cpu(ct_grad(b)));
    /* the same on the CPU */
    ct_tensor *a2 = ct_requires_grad_(host(av, 3), true);
    ct_tensor *b2 = ct_requires_grad_(host(bv, 3), true);
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


/* ---- the capture hook ------------------------------------------------------------------- */
/* A recorder: each op as "name (in shapes) -> (out shapes)", e.g.
   "aten::add [4,512] [512] -> [4,512]"; a missing input is "-". */
#define REC_MAX 256
typedef struct recorder {
    int n, dropped;
    char ops[REC_MAX][160];
} recorder;

static void rec_shape(char *buf, size_t cap, const ct_tensor *t)
{
    size_t len = strlen(buf);
    if (!t) {
        snprintf(buf + len, cap - len, " -");
        return;
    }
    snprintf(buf + len, cap - len, " [");
    for (int d = 0; d < ct_dim(t); d++) {
        len = strlen(buf);
        snprintf(buf + len, cap - len, d ? ",%lld" : "%lld", (long long)ct_size(t, d));
    }
    len = strlen(buf);
    snprintf(buf + len, cap - len, "]");
}

static void rec_after(void *user, ct_op_call *c)
{
    recorder *r = (recorder *)user;
    if (r->n == REC_MAX) {
        r->dropped++;
        return;
    }
    char *b = r->ops[r->n++];
    snprintf(b, 160, "%s", c->op->name);
    for (int k = 0; k < c->n_inputs; k++) {
        rec_shape(b, 160, c->inputs[k]);
    }
    snprintf(b + strlen(b), 160 - strlen(b), " ->");
    for (int k = 0; k < c->n_outputs; k++) {
        rec_shape(b, 160, c->outputs[k]);
    }
}

/* The quickstart (the MLP of examples/fashion_mnist.c, SGD) on random data, batch 4. */
typedef struct quickstart {
    ct_module *model;
    ct_optimizer *opt;
    ct_tensor *x, *y;
} quickstart;

static void quickstart_new(quickstart *q)
{
    ct_manual_seed(0);
    q->model = ct_sequential_new();
    ct_sequential_append(q->model, ct_flatten_new(1, -1));
    ct_sequential_append(q->model, ct_linear_new(28 * 28, 512, true));
    ct_sequential_append(q->model, ct_relu_new());
    ct_sequential_append(q->model, ct_linear_new(512, 512, true));
    ct_sequential_append(q->model, ct_relu_new());
    ct_sequential_append(q->model, ct_linear_new(512, 10, true));
    ct_tensor *params[16];
    int64_t n = ct_module_parameters(q->model, params, 16);
    ct_sgd_opts o = ct_sgd_defaults();
    o.lr = 1e-3;
    q->opt = ct_sgd_new(params, n, &o);
    const int64_t xs[4] = {4, 1, 28, 28}, ys[1] = {4};
    q->x = ct_rand(xs, 4, CT_FLOAT32, NULL);
    q->y = ct_randint(0, 10, ys, 1, CT_INT64, NULL);
}

/* One training step: forward, loss, backward, optimizer step, zero_grad. */
static void quickstart_step(quickstart *q)
{
    ct_scope_begin();
    ct_tensor *loss = ct_cross_entropy(ct_module_forward(q->model, q->x), q->y, NULL);
    CHECK(ct_backward(loss, NULL, false) == CT_OK);
    CHECK(ct_optimizer_step(q->opt) == CT_OK);
    ct_optimizer_zero_grad(q->opt, true);
    ct_scope_end();
}

static void quickstart_free(quickstart *q)
{
    ct_free(q->x);
    ct_free(q->y);
    ct_optimizer_free(q->opt);
    ct_module_free(q->model);
}

static void test_capture_quickstart_step(void)
{
    recorder *r = (recorder *)calloc(1, sizeof(recorder));
    ct_dispatch_hook h = {NULL, rec_after, r};
    quickstart q;
    quickstart_new(&q);
    CHECK(ct_dispatch_hook_push(&h) == CT_OK);
    quickstart_step(&q);
    CHECK(ct_dispatch_hook_pop() == CT_OK);
    quickstart_free(&q);
    if (getenv("CT_TEST_PRINT_CAPTURE")) {
        for (int i = 0; i < r->n; i++) {
            printf("    \"%s\",\n", r->ops[i]);
        }
    }
    /* The ops of the step in the order they finish (a nested op before the op that calls it):
       forward, loss, backward, optimizer. */
    static const char *const want[] = {
        "aten::view [4,1,28,28] -> [4,784]",
        "aten::reshape [4,1,28,28] -> [4,784]",
        "aten::flatten [4,1,28,28] -> [4,784]",
        "ctorch::linear_relu [4,784] [512,784] [512] -> [4,512]",
        "ctorch::linear_relu [4,512] [512,512] [512] -> [4,512]",
        "aten::linear [4,512] [10,512] [10] -> [4,10]",
        "aten::cross_entropy_loss [4,10] [4] - -> []",
        "aten::ones_like [] -> []",
        "aten::alias [4,10] -> [4,10]",
        "aten::contiguous [4,10] -> [4,10]",
        "ctorch::cross_entropy_loss_backward [] [4,10] [4] [4] - -> [4,10]",
        "aten::mm [4,10] [10,512] -> [4,512]",
        "aten::t [4,10] -> [10,4]",
        "aten::mm [10,4] [4,512] -> [10,512]",
        "aten::sum [4,10] -> [10]",
        "aten::threshold_backward [4,512] [4,512] -> [4,512]",
        "aten::mm [4,512] [512,512] -> [4,512]",
        "aten::t [4,512] -> [512,4]",
        "aten::mm [512,4] [4,512] -> [512,512]",
        "aten::sum [4,512] -> [512]",
        "aten::threshold_backward [4,512] [4,512] -> [4,512]",
        "aten::t [4,512] -> [512,4]",
        "aten::mm [512,4] [4,784] -> [512,784]",
        "aten::sum [4,512] -> [512]",
        "aten::_fused_sgd_ [512,784] [512,784] - -> [512,784]",
        "aten::_fused_sgd_ [512] [512] - -> [512]",
        "aten::_fused_sgd_ [512,512] [512,512] - -> [512,512]",
        "aten::_fused_sgd_ [512] [512] - -> [512]",
        "aten::_fused_sgd_ [10,512] [10,512] - -> [10,512]",
        "aten::_fused_sgd_ [10] [10] - -> [10]",
    };
    int n = (int)(sizeof want / sizeof want[0]);
    CHECK_MSG(r->dropped == 0, "%d ops beyond the recorder's %d", r->dropped, REC_MAX);
    CHECK_MSG(r->n == n, "%d ops recorded, want %d (CT_TEST_PRINT_CAPTURE=1 prints them)", r->n,
              n);
    for (int i = 0; i < n && i < r->n; i++) {
        CHECK_MSG(!strcmp(r->ops[i], want[i]), "op %d: '%s', want '%s'", i, r->ops[i], want[i]);
    }
    free(r);
}

/* Hooks that replace an op's output (after) or produce it (before: no kernel runs). */
static bool hook_before_ones(void *user, ct_op_call *c)
{
    if (strcmp(c->op->name, "aten::neg") != 0) {
        return false;
    }
    (*(int *)user)++;
    ct_tensor *t = ct_full(ct_sizes(c->inputs[0]), ct_dim(c->inputs[0]), 42, CT_FLOAT32);
    c->outputs[c->n_outputs++] = ct_retain(t);
    return true;
}

static void hook_after_double(void *user, ct_op_call *c)
{
    if (strcmp(c->op->name, "aten::exp") != 0) {
        return;
    }
    (*(int *)user)++;
    ct_scope_begin();
    ct_tensor *t = ct_retain(ct_mul_scalar(c->outputs[0], 2));
    ct_scope_end();
    c->outputs[0] = t;
}

static void test_hook_replaces_outputs(void)
{
    fake_register();
    ct_scope_begin();
    const float v[2] = {0, 1};
    int seen_before = 0, seen_after = 0;
    ct_dispatch_hook hb = {hook_before_ones, NULL, &seen_before};
    ct_dispatch_hook ha = {NULL, hook_after_double, &seen_after};
    CHECK(ct_dispatch_hook_push(&hb) == CT_OK);
    CHECK(ct_dispatch_hook_push(&ha) == CT_OK);
    ct_tensor *x = ct_to_device(host(v, 2), fake_device());
    ct_tensor *n = ct_neg(x); /* produced by the hook: the fake kernel does not run */
    const double w42[2] = {42, 42}, wexp[2] = {2, 2 * exp(1.0)};
    CHECK_TENSOR(n, w42, 2, 0, 0);
    CHECK(fake.neg_calls == 0 && seen_before == 1);
    ct_tensor *e = ct_exp(host(v, 2)); /* the after hook doubles it */
    CHECK_TENSOR(e, wexp, 2, 1e-6, 0);
    CHECK(seen_after == 1);
    CHECK(ct_dispatch_hook_pop() == CT_OK && ct_dispatch_hook_pop() == CT_OK);
    CHECK(ct_dispatch_hook_pop() == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "no hook is pushed");
    ct_neg(x);
    CHECK(fake.neg_calls == 1);
    ct_scope_end();
    fake_unregister();
}

static void test_hook_push_errors(void)
{
    ct_dispatch_hook h = {NULL, NULL, NULL};
    for (int k = 0; k < CT_DISPATCH_MAX_HOOKS; k++) {
        CHECK(ct_dispatch_hook_push(&h) == CT_OK);
    }
    CHECK(ct_dispatch_hook_push(&h) == CT_ERR_STATE);
    CHECK_ERROR(CT_ERR_STATE, "more than 8 hooks pushed");
    for (int k = 0; k < CT_DISPATCH_MAX_HOOKS; k++) {
        CHECK(ct_dispatch_hook_pop() == CT_OK);
    }
    CHECK(ct_dispatch_hook_push(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_dispatch_hook_push");
}

/* ---- lookups and backend registration errors --------------------------------------------- */
static void test_op_find(void)
{
    const ct_op *add = ct_op_find("aten::add");
    CHECK(add && !strcmp(add->name, "aten::add") && add->kind == CT_OP_POINTWISE);
    CHECK(ct_op_find("aten::add.Tensor") == add);
    CHECK(ct_op_find("aten::add.Scalar") == NULL);
    CHECK(ct_op_find("aten::ad") == NULL && ct_op_find("aten::addx") == NULL);
    const ct_op *ps = ct_op_find("aten::pow.Tensor_Scalar"), *pt = ct_op_find("aten::pow");
    CHECK(ps && pt && ps != pt && ct_op_find("aten::pow.Tensor_Tensor") == pt);
    CHECK(ct_op_find("aten::copy_") && ct_op_find("aten::nonexistent") == NULL);
    CHECK(ct_op_find(NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_op_find");
    int n = 0;
    const ct_op *const *ops = ct_op_registry(&n);
    CHECK(n > 0 && ops[0] != NULL && ct_op_registry(NULL) == ops);
}

static void test_backend_register_errors(void)
{
    ct_backend b = {CT_CPU, "Fake", fake_malloc, fake_free, fake_copy, &fake, NULL, NULL};
    CHECK(ct_backend_register(&b) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "device type 0 cannot take a backend (CPU is built in)");
    b.type = CT_DEVICE_TYPE_COUNT;
    CHECK(ct_backend_register(&b) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "cannot take a backend");
    b.type = CT_PRIVATEUSE1;
    b.copy = NULL;
    CHECK(ct_backend_register(&b) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_backend_register");
    b.name = NULL;
    b.copy = fake_copy;
    CHECK(ct_backend_register(&b) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_backend_register");
    b.name = "Fake";
    b.host_alloc = fake_host_alloc; /* without host_free */
    CHECK(ct_backend_register(&b) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "backend Fake sets only one of host_alloc and host_free");
    CHECK(ct_backend_register(NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_backend_register");
    const ct_op *add = ct_op_find("aten::add");
    CHECK(ct_backend_register_kernel(CT_PRIVATEUSE1, add, CT_FLOAT32, fake_add) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "no backend is registered for device type");
    CHECK(ct_backend_register_kernel(CT_CPU, add, CT_FLOAT32, fake_add) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "cannot take a backend");
    CHECK(ct_backend_register_kernel(CT_PRIVATEUSE1, NULL, CT_FLOAT32, fake_add) ==
          CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_backend_register_kernel");
    CHECK(ct_backend_register_kernel(CT_PRIVATEUSE1, add, CT_FLOAT32, NULL) == CT_ERR_NULL_ARG);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_backend_register_kernel");
    fake_register();
    CHECK(ct_backend_register_kernel(CT_PRIVATEUSE1, add, (ct_dtype)77, fake_add) ==
          CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "77");
    fake_unregister();
    CHECK(ct_backend_unregister(CT_CPU) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "cannot take a backend");
    CHECK(ct_dispatch_kernel(add, CT_PRIVATEUSE1, CT_FLOAT32) == NULL); /* unregistered */
    CHECK(ct_dispatch_kernel(add, CT_CPU, CT_FLOAT32) == add->cpu[CT_FLOAT32]);
    CHECK(ct_dispatch_kernel(NULL, CT_CPU, CT_FLOAT32) == NULL);
}

/* ---- pinned memory ----------------------------------------------------------------------- */
/* ct_pin_memory: a copy in the backend's host memory (values, shape, dtype kept, contiguous
   from a transposed input), the pinned tensor itself when pinned already, the gradient
   passing through, the memory handed back to host_free; PyTorch's errors. */
static void test_pin_memory(void)
{
    const float v[6] = {1, 2, 3, 4, 5, 6};
    const int64_t s23[2] = {2, 3};
    ct_scope_begin();
    ct_tensor *x = ct_requires_grad_(ct_tensor_from_data(v, CT_FLOAT32, s23, 2), true);
    CHECK(ct_pin_memory(x) == NULL); /* no backend with host memory yet */
    CHECK(ct_error_code() == CT_ERR_DEVICE && strstr(ct_error(), "Found no accelerator"));
    ct_error_clear();
    fake_register();
    ct_tensor *xt = ct_transpose(x, 0, 1), *p = ct_pin_memory(xt);
    CHECK(p && ct_is_pinned(p) && !ct_is_pinned(x) && ct_is_contiguous(p));
    CHECK(fake.pinned_allocs == 1 && fake.live_bytes == 24);
    CHECK(ct_equal(p, xt) && ct_tensor_dtype(p) == CT_FLOAT32 && ct_dim(p) == 2);
    CHECK(ct_data_ptr(ct_pin_memory(p)) == ct_data_ptr(p) && fake.pinned_allocs == 1);
    CHECK(ct_backward(ct_sum(ct_mul(p, p)), NULL, false) == CT_OK);
    CHECK(ct_equal(ct_grad(x), ct_mul_scalar(x, 2)));
    CHECK(ct_pin_memory(ct_to_device(x, fake_device())) == NULL);
    CHECK(ct_error_code() == CT_ERR_DEVICE &&
          strstr(ct_error(), "only dense CPU tensors can be pinned"));
    ct_error_clear();
    CHECK(!ct_is_pinned(NULL) && ct_error_code() == CT_ERR_NULL_ARG);
    ct_error_clear();
    ct_scope_end();
    fake_unregister(); /* every pinned byte went back through host_free */
}

/* DataLoader(pin_memory=True): pinned batches equal to the unpinned ones, with and without
   workers; without a backend that has pinned memory the batches stay unpinned. */
static void test_pin_memory_dataloader(void)
{
    ct_scope_begin();
    const int64_t n = 10, s[2] = {10, 3};
    ct_tensor *f[2] = {ct_randn(s, 2, CT_FLOAT32, NULL), ct_arange(0, (double)n, 1, CT_INT64)};
    ct_dataset *ds = ct_tensor_dataset_new(f, 2);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 4;
    o.pin_memory = true;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    ct_tensor *b[2];
    CHECK(ct_dataloader_next(dl, b) && !ct_is_pinned(b[0])); /* no accelerator: unpinned */
    fake_register();
    for (int workers = 0; workers <= 2; workers += 2) {
        CHECK(ct_dataloader_set_num_workers(dl, workers) == CT_OK);
        int64_t seen = 0;
        while (ct_dataloader_next(dl, b)) {
            CHECK(ct_is_pinned(b[0]) && ct_is_pinned(b[1]));
            CHECK(ct_equal(b[0], ct_narrow(f[0], 0, seen, ct_size(b[0], 0))));
            CHECK(ct_equal(b[1], ct_narrow(f[1], 0, seen, ct_size(b[1], 0))));
            seen += ct_size(b[0], 0);
        }
        CHECK(seen == n && !ct_error());
    }
    CHECK(ct_dataloader_set_pin_memory(dl, false) == CT_OK);
    CHECK(ct_dataloader_next(dl, b) && !ct_is_pinned(b[0]));
    CHECK(ct_dataloader_set_pin_memory(NULL, true) == CT_ERR_NULL_ARG);
    ct_error_clear();
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_scope_end();
    fake_unregister();
}

/* ---- the registry walk ------------------------------------------------------------------
 * A row per public function that calls an op: a small call of it. Every descriptor of
 * ct_op_registry must be reached by each public function its `api` names (tokens "ct_..."),
 * and every row must reach some descriptor. A new op adds its rows here. */
static ct_tensor *wx(void) /* (2, 3) float32, positive */
{
    const float v[6] = {0.5f, 1, 1.5f, 2, 2.5f, 3};
    const int64_t s[2] = {2, 3};
    return ct_tensor_from_data(v, CT_FLOAT32, s, 2);
}

static ct_tensor *wb(void) /* (2, 3) bool */
{
    return ct_gt_scalar(wx(), 1.2);
}

#define ROW_UNARY(F)                                                                          \
    static void row_##F(void) { ct_##F(wx()); }
#define ROW_BINARY(F)                                                                         \
    static void row_##F(void) { ct_##F(wx(), wx()); }
#define ROW_SCALAR(F)                                                                         \
    static void row_##F##_scalar(void) { ct_##F##_scalar(wx(), 2); }
#define ROW_INPLACE(F)                                                                        \
    static void row_##F##_(void) { ct_##F##_(wx(), wx()); }
ROW_UNARY(neg)
ROW_UNARY(exp)
ROW_UNARY(log)
ROW_UNARY(log1p)
ROW_UNARY(sqrt)
ROW_UNARY(rsqrt)
ROW_UNARY(sin)
ROW_UNARY(cos)
ROW_UNARY(sigmoid)
ROW_UNARY(tanh)
ROW_UNARY(relu)
ROW_UNARY(square)
ROW_UNARY(reciprocal)
ROW_UNARY(clone)
ROW_UNARY(relu_)
ROW_UNARY(erf)
ROW_UNARY(isnan)
ROW_UNARY(isinf)
ROW_UNARY(isfinite)
ROW_UNARY(neg_)
ROW_UNARY(abs_)
ROW_UNARY(exp_)
ROW_UNARY(log_)
ROW_UNARY(sqrt_)
ROW_UNARY(sigmoid_)
ROW_UNARY(tanh_)
ROW_UNARY(zero_)
ROW_BINARY(add)
ROW_BINARY(sub)
ROW_BINARY(mul)
ROW_BINARY(div)
ROW_BINARY(pow)
ROW_BINARY(maximum)
ROW_BINARY(minimum)
ROW_BINARY(eq)
ROW_BINARY(ne)
ROW_BINARY(lt)
ROW_BINARY(le)
ROW_BINARY(gt)
ROW_BINARY(ge)
ROW_BINARY(copy_)
ROW_SCALAR(add)
ROW_SCALAR(sub)
ROW_SCALAR(mul)
ROW_SCALAR(div)
ROW_SCALAR(eq)
ROW_SCALAR(gt)
ROW_SCALAR(lt)
ROW_INPLACE(mul)
ROW_INPLACE(div)
#undef ROW_UNARY
#undef ROW_BINARY
#undef ROW_SCALAR
#undef ROW_INPLACE
static void row_add_(void) { ct_add_(wx(), wx(), 2); }
static void row_sub_(void) { ct_sub_(wx(), wx(), 2); }
static void row_add_alpha(void) { ct_add_alpha(wx(), wx(), 2); }
static void row_pow_scalar(void) { ct_pow_scalar(wx(), 2.5); }
/* an integer tensor to an integer power: pow.Tensor_Tensor over a wrapped scalar */
static void row_pow_scalar_int(void) { ct_pow_scalar(ct_to_dtype(wx(), CT_INT64), 2); }
static void row_cpu(void) { ct_cpu(ct_to_device(wx(), fake_device())); }
static void row_logical_and(void) { ct_logical_and(wb(), wb()); }
static void row_logical_or(void) { ct_logical_or(wb(), wb()); }
static void row_logical_not(void) { ct_logical_not(wb()); }
static void row_clamp(void) { ct_clamp(wx(), 1, 2); }
static void row_clamp_(void) { ct_clamp_(wx(), 1, 2); }
static void row_pow_(void) { ct_pow_(wx(), 2.5); }
static void row_addcmul(void) { ct_addcmul(wx(), wx(), wx(), 0.5); }
static void row_addcmul_(void) { ct_addcmul_(wx(), wx(), wx(), 0.5); }
static void row_addcdiv(void) { ct_addcdiv(wx(), wx(), wx(), 0.5); }
static void row_addcdiv_(void) { ct_addcdiv_(wx(), wx(), wx(), 0.5); }
static void row_lerp(void) { ct_lerp(wx(), wx(), wx()); }
static void row_bernoulli(void) { ct_bernoulli(ct_zeros_like(wx()), NULL); }
/* the three rounding modes: one descriptor each */
static void row_div_mode(void)
{
    ct_div_mode(wx(), wx(), CT_ROUNDING_NONE);
    ct_div_mode(wx(), wx(), CT_ROUNDING_TRUNC);
    ct_div_mode(wx(), wx(), CT_ROUNDING_FLOOR);
}
static void row_lerp_(void) { ct_lerp_(wx(), wx(), wx()); }
static void row_lerp_scalar(void) { ct_lerp_scalar(wx(), wx(), 0.5); }
static void row_lerp_scalar_(void) { ct_lerp_scalar_(wx(), wx(), 0.5); }
static void row_where(void) { ct_where(wb(), wx(), wx()); }
static void row_fill_(void) { ct_fill_(wx(), 2); }
static void row_to_dtype(void) { ct_to_dtype(wx(), CT_FLOAT64); }
static void row_to_device(void) { ct_to_device(wx(), fake_device()); }
static void row_pin_memory(void) { ct_pin_memory(wx()); }
static ct_tensor *wv(void) /* (3) float32 */
{
    const float v[3] = {1, -2, 0.5f};
    const int64_t n = 3;
    return ct_tensor_from_data(v, CT_FLOAT32, &n, 1);
}

static ct_tensor *ws(void) /* (3, 3) float32 */
{
    const float v[9] = {1, 2, 3, -1, 0.5f, 2, 0, 1, -3};
    const int64_t s[2] = {3, 3};
    return ct_tensor_from_data(v, CT_FLOAT32, s, 2);
}

static const int64_t s23[2] = {2, 3}, s6[1] = {6}, s13[2] = {1, 3}, d10[2] = {1, 0};
/* views */
static void row_alias(void) { ct_alias(wx()); }
static void row_detach(void) { ct_detach(wx()); }
static void row_contiguous(void) { ct_contiguous(ct_t(wx())); }
static void row_view(void) { ct_view(wx(), s6, 1); }
static void row_reshape(void) { ct_reshape(wx(), s6, 1); }
static void row_flatten(void) { ct_flatten(wx(), 0, -1); }
static void row_expand(void) { ct_expand(ct_unsqueeze(wv(), 0), s23, 2); }
static void row_permute(void) { ct_permute(wx(), d10, 2); }
static void row_transpose(void) { ct_transpose(wx(), 0, 1); }
static void row_t(void) { ct_t(wx()); }
static void row_narrow(void) { ct_narrow(wx(), 1, 0, 2); }
static void row_select(void) { ct_select(wx(), 0, 1); }
static void row_squeeze(void) { ct_squeeze(ct_unsqueeze(wx(), 0)); }
static void row_squeeze_dim(void) { ct_squeeze_dim(ct_unsqueeze(wx(), 0), 0); }
static void row_unsqueeze(void) { ct_unsqueeze(wx(), 0); }
static void row_cat(void)
{
    const ct_tensor *ts[2] = {wx(), wx()};
    ct_cat(ts, 2, 0);
}
static void row_stack(void)
{
    const ct_tensor *ts[2] = {wx(), wx()};
    ct_stack(ts, 2, 0);
}
/* views and shape ops of issue 7 */
static void row_view_as(void) { ct_view_as(wx(), ct_reshape(wx(), s6, 1)); }
static void row_reshape_as(void) { ct_reshape_as(ct_t(wx()), ct_reshape(wx(), s6, 1)); }
static void row_expand_as(void) { ct_expand_as(ct_unsqueeze(wv(), 0), wx()); }
static void row_unflatten(void) { ct_unflatten(ct_reshape(wx(), s6, 1), 0, s23, 2); }
static void row_mt(void) { ct_mt(wx()); }
static void row_broadcast_to(void) { ct_broadcast_to(wv(), s23, 2); }
static void row_broadcast_tensors(void)
{
    const ct_tensor *ts[2] = {wx(), wv()};
    ct_tensor *out[2];
    ct_broadcast_tensors(ts, 2, out);
}
static void row_slice(void) { ct_slice(wx(), 1, 0, 3, 2); }
static void row_split(void)
{
    ct_tensor *out[2];
    ct_split(wx(), 2, 1, out, 2);
}
static void row_split_with_sizes(void)
{
    ct_tensor *out[2];
    const int64_t sizes[2] = {1, 2};
    ct_split_with_sizes(wx(), sizes, 2, 1, out, 2);
}
static void row_chunk(void)
{
    ct_tensor *out[2];
    ct_chunk(wx(), 2, 1, out, 2);
}
static void row_tril(void) { ct_tril(wx(), 0); }
static void row_triu(void) { ct_triu(wx(), 1); }
/* indexing */
static ct_tensor *wi(void) /* (2, 3) int64 indices into dim 1 of wx() */
{
    const int64_t v[6] = {2, 0, 1, 1, 1, 0}, s[2] = {2, 3};
    return ct_tensor_from_data(v, CT_INT64, s, 2);
}
static void row_gather(void) { ct_gather(wx(), 1, wi()); }
static void row_index_select(void) { ct_index_select(wx(), 1, ct_select(wi(), 0, 0)); }
static void row_scatter(void) { ct_scatter(wx(), 1, wi(), wx()); }
static void row_scatter_(void) { ct_scatter_(wx(), 1, wi(), wx()); }
static void row_scatter_add(void) { ct_scatter_add(wx(), 1, wi(), wx()); }
static void row_scatter_add_(void) { ct_scatter_add_(wx(), 1, wi(), wx()); }
static void row_index_add(void) { ct_index_add(wx(), 1, ct_select(wi(), 0, 0), wx(), 2); }
static void row_index_add_(void) { ct_index_add_(wx(), 1, ct_select(wi(), 0, 0), wx(), 1); }
static void row_masked_fill(void) { ct_masked_fill(wx(), wb(), -1); }
static void row_masked_fill_(void) { ct_masked_fill_(wx(), wb(), -1); }
/* views, copies and indexing of issue 7's second slice */
static const int64_t d01[2] = {0, 1}, s32[2] = {3, 2}, s11[2] = {1, 1};
static void row_repeat(void) { ct_repeat(wx(), s32, 2); }
static void row_tile(void) { ct_tile(wx(), s32, 1); }
static void row_repeat_interleave(void) { ct_repeat_interleave(wx(), 2, 1); }
static void row_flip(void) { ct_flip(wx(), d01, 2); }
static void row_fliplr(void) { ct_fliplr(wx()); }
static void row_flipud(void) { ct_flipud(wx()); }
static void row_roll(void) { ct_roll(wx(), s11, 1, d01 + 1, 1); }
static void row_rot90(void) { ct_rot90(wx(), 1, d01, 2); }
static void row_movedim(void) { ct_movedim(wx(), d01, d10, 1); }
static void row_diagonal(void) { ct_diagonal(wx(), 0, 0, 1); }
static void row_diag(void) { ct_diag(wv(), 1); }
static void row_diag_embed(void) { ct_diag_embed(wx(), 0, -2, -1); }
static void row_diagflat(void) { ct_diagflat(wx(), 0); }
static void row_as_strided(void) { ct_as_strided(wx(), s32 + 1, s11, 1, 1); }
static void row_unfold_view(void) { ct_unfold_view(wx(), 1, 2, 1); }
static void row_hstack(void)
{
    const ct_tensor *ts[2] = {wx(), wx()};
    ct_hstack(ts, 2);
}
static void row_vstack(void)
{
    const ct_tensor *ts[2] = {wx(), wv()};
    ct_vstack(ts, 2);
}
static void row_dstack(void)
{
    const ct_tensor *ts[2] = {wx(), wx()};
    ct_dstack(ts, 2);
}
static void row_column_stack(void)
{
    const ct_tensor *ts[2] = {ct_t(wx()), wv()};
    ct_column_stack(ts, 2);
}
static void row_unbind(void)
{
    ct_tensor *out[2];
    ct_unbind(wx(), 0, out, 2);
}
static void row_tensor_split(void)
{
    ct_tensor *out[2];
    ct_tensor_split(wx(), 2, 1, out, 2);
}
static void row_tensor_split_indices(void)
{
    ct_tensor *out[2];
    ct_tensor_split_indices(wx(), s11, 1, 1, out, 2);
}
static void row_hsplit(void)
{
    ct_tensor *out[3];
    ct_hsplit(wx(), 3, out, 3);
}
static void row_vsplit(void)
{
    ct_tensor *out[2];
    ct_vsplit(wx(), 2, out, 2);
}
static void row_dsplit(void)
{
    ct_tensor *out[3];
    ct_dsplit(ct_unsqueeze(wx(), 0), 3, out, 3);
}
static void row_nonzero(void) { ct_nonzero(wb()); }
static void row_argwhere(void) { ct_argwhere(wx()); }
static void row_index(void)
{
    const ct_tensor *ix[2] = {NULL, wi()};
    ct_index(wx(), ix, 2);
}
static void row_index_put(void)
{
    const ct_tensor *ix[1] = {wb()};
    ct_index_put(wx(), ix, 1, ct_sum(wx()), true);
}
static void row_index_put_(void)
{
    const ct_tensor *ix[2] = {NULL, wi()};
    ct_index_put_(wx(), ix, 2, ct_sum(wx()), false);
}
static void row_masked_select(void) { ct_masked_select(wx(), wb()); }
static void row_masked_scatter(void) { ct_masked_scatter(wx(), wb(), wx()); }
static void row_masked_scatter_(void) { ct_masked_scatter_(wx(), wb(), wx()); }
static void row_index_fill_(void) { ct_index_fill_(wx(), 1, ct_select(wi(), 0, 0), -1); }
static void row_index_copy_(void)
{
    ct_index_copy_(wx(), 1, ct_narrow(ct_select(wi(), 0, 0), 0, 0, 2), ct_narrow(wx(), 1, 0, 2));
}
static void row_take(void) { ct_take(wx(), wi()); }
static void row_take_along_dim(void) { ct_take_along_dim(wx(), wi(), 1); }
static void row_scatter_reduce(void) { ct_scatter_reduce(wx(), 1, wi(), wx(), "amax", false); }
static void row_scatter_reduce_(void) { ct_scatter_reduce_(wx(), 1, wi(), wx(), "mean", true); }
/* reductions, softmax */
static void row_sum(void) { ct_sum(wx()); }
static void row_sum_dim(void) { ct_sum_dim(wx(), 1, false); }
static void row_sum_dims(void) { ct_sum_dims(wx(), d10 + 1, 1, true); }
static void row_sum_to_size(void) { ct_sum_to_size(wx(), s13, 2); }
static void row_mean(void) { ct_mean(wx()); }
static void row_mean_dim(void) { ct_mean_dim(wx(), 0, false); }
static void row_max(void) { ct_max(wx()); }
static void row_min(void) { ct_min(wx()); }
static void row_max_dim(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_max_dim(wx(), 1, false, &v, &i);
}
static void row_min_dim(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_min_dim(wx(), 1, false, &v, &i);
}
static void row_argmax(void) { ct_argmax(wx()); }
static void row_argmin(void) { ct_argmin(wx()); }
static void row_argmax_dim(void) { ct_argmax_dim(wx(), 1, false); }
static void row_argmin_dim(void) { ct_argmin_dim(wx(), 1, false); }
static void row_amax(void) { ct_amax(wx(), d10, 1, false); }
static void row_amin(void) { ct_amin(wx(), d10, 2, true); }
static void row_logsumexp(void) { ct_logsumexp(wx(), d10, 1, false); }
static void row_var(void) { ct_var(wx(), 1.0); }
static void row_std(void) { ct_std(wx(), 1.0); }
static void row_var_dim(void) { ct_var_dim(wx(), d10, 1, 0.0, true); }
static void row_std_dim(void) { ct_std_dim(wx(), d10, 1, 1.0, false); }
static void row_all(void) { ct_all(wx()); }
static void row_any(void) { ct_any(wx()); }
static void row_all_dim(void) { ct_all_dim(wx(), 1, false); }
static void row_any_dim(void) { ct_any_dim(wx(), 0, true); }
static void row_linalg_vector_norm(void) { ct_linalg_vector_norm(wx(), 2.0, NULL, 0, false); }
static void row_allclose(void) { ct_allclose(wx(), wx(), 1e-5, 1e-8, false); }
static void row_equal(void) { ct_equal(wx(), wx()); }
/* sort, selection, uniques and binning (ops/sort.c) */
static ct_tensor *wl(void) /* (6) int64, non-negative */
{
    const int64_t v[6] = {2, 0, 1, 1, 3, 0}, n = 6;
    return ct_tensor_from_data(v, CT_INT64, &n, 1);
}
static void row_sort(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_sort(wx(), 1, true, false, &v, &i);
}
static void row_argsort(void) { ct_argsort(wx(), 0, false, true); }
static void row_msort(void) { ct_msort(wx()); }
static void row_topk(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_topk(wx(), 2, -1, true, true, &v, &i);
}
static void row_kthvalue(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_kthvalue(wx(), 2, 1, false, &v, &i);
}
static void row_median(void) { ct_median(wx()); }
static void row_median_dim(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_median_dim(wx(), 1, true, &v, &i);
}
static void row_nanmedian(void) { ct_nanmedian(wx()); }
static void row_nanmedian_dim(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_nanmedian_dim(wx(), 0, false, &v, &i);
}
static void row_mode(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_mode(wx(), -1, false, &v, &i);
}
static void row_quantile(void)
{
    const int64_t dim = 1;
    ct_quantile(wx(), ct_scalar_tensor(0.5, CT_FLOAT32), &dim, false, CT_QUANTILE_LINEAR);
}
static void row_nanquantile(void)
{
    ct_nanquantile(wx(), ct_scalar_tensor(0.25, CT_FLOAT32), NULL, true, CT_QUANTILE_NEAREST);
}
static void row_unique(void)
{
    ct_tensor *inv = NULL, *cnt = NULL;
    ct_unique(wl(), true, &inv, &cnt);
}
static void row_unique_consecutive(void) { ct_unique_consecutive(wl(), NULL, NULL); }
static void row_isin(void) { ct_isin(wl(), wv(), false, false); }
static void row_searchsorted(void) { ct_searchsorted(wv(), wx(), false, true, NULL); }
static void row_bucketize(void) { ct_bucketize(wx(), wv(), true, false); }
static void row_bincount(void) { ct_bincount(wl(), NULL, 0); }
static void row_histc(void) { ct_histc(wx(), 4, 0, 0); }
/* reductions: issue 7, second slice (reduce2) */
static void row_prod(void) { ct_prod(wx()); }
static void row_prod_dim(void) { ct_prod_dim(wx(), 1, true); }
static void row_cumsum(void) { ct_cumsum(wx(), 1, CT_DTYPE_DEFAULT); }
static void row_cumprod(void) { ct_cumprod(wx(), 0, CT_FLOAT64); }
static void row_cummax(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_cummax(wx(), 1, &v, &i);
}
static void row_cummin(void)
{
    ct_tensor *v = NULL, *i = NULL;
    ct_cummin(wx(), 0, &v, &i);
}
static void row_logcumsumexp(void) { ct_logcumsumexp(wx(), 1); }
static void row_nansum(void) { ct_nansum(wx(), d10, 1, false); }
static void row_nanmean(void) { ct_nanmean(wx(), NULL, 0, false); }
static void row_var_mean(void)
{
    ct_tensor *v = NULL, *m = NULL;
    ct_var_mean(wx(), d10, 1, 1.0, false, &v, &m);
}
static void row_std_mean(void)
{
    ct_tensor *v = NULL, *m = NULL;
    ct_std_mean(wx(), NULL, 0, 0.0, true, &v, &m);
}
static void row_aminmax(void)
{
    ct_tensor *lo = NULL, *hi = NULL;
    ct_aminmax(wx(), d10, false, &lo, &hi);
}
static void row_count_nonzero(void) { ct_count_nonzero(wx(), d10, 2); }
static void row_dist(void) { ct_dist(wx(), wx(), 3.0); }
static void row_cdist(void) { ct_cdist(wx(), wx(), 2.0, CT_CDIST_USE_MM); }
static void row_softmax(void) { ct_softmax(wx(), 1); }
static void row_log_softmax(void) { ct_log_softmax(wx(), 1); }
/* linear algebra */
static void row_mm(void) { ct_mm(wx(), ws()); }
static void row_bmm(void) { ct_bmm(ct_unsqueeze(ws(), 0), ct_unsqueeze(ws(), 0)); }
static void row_mv(void) { ct_mv(ws(), wv()); }
static void row_dot(void) { ct_dot(wv(), wv()); }
static void row_matmul(void) { ct_matmul(wx(), ws()); }
static void row_addmm(void) { ct_addmm(wv(), wx(), ws(), 1, 1); }
static void row_linear(void) { ct_linear(wx(), ws(), wv()); }
/* linear algebra, issue 7 (linalg T2) */
static void row_baddbmm(void)
{
    ct_baddbmm(wv(), ct_unsqueeze(ws(), 0), ct_unsqueeze(ws(), 0), 1, 1);
}
static void row_addbmm(void)
{
    ct_addbmm(wv(), ct_unsqueeze(ws(), 0), ct_unsqueeze(ws(), 0), 1, 1);
}
static void row_addmv(void) { ct_addmv(wv(), ws(), wv(), 0.5, 2); }
static void row_addr(void) { ct_addr(ws(), wv(), wv(), 1, 1); }
static void row_outer(void) { ct_outer(wv(), wv()); }
static void row_inner(void) { ct_inner(wx(), ws()); }
static void row_vdot(void) { ct_vdot(wv(), wv()); }
static void row_einsum(void)
{
    const ct_tensor *ops[2] = {wx(), ws()};
    ct_einsum("ij,jk->ik", ops, 2);
}
static void row_tensordot(void)
{
    const int64_t da = 1, db = 0;
    ct_tensordot(wx(), ws(), &da, 1, &db, 1);
}
static void row_kron(void) { ct_kron(wx(), wv()); }
static void row_trace(void) { ct_trace(ws()); }
/* torch.cross (its default dim) and torch.linalg.cross (dim -1) */
static void row_cross(void)
{
    const int64_t dim = -1;
    ct_cross(wx(), wx(), NULL);
    ct_cross(ws(), ws(), &dim);
}
static void row_linalg_multi_dot(void)
{
    const ct_tensor *ts[3] = {wx(), ws(), ws()};
    ct_linalg_multi_dot(ts, 3);
}
static void row_linalg_matrix_power(void) { ct_linalg_matrix_power(ws(), 5); }
static void row_linalg_matrix_exp(void) { ct_linalg_matrix_exp(ws()); }
/* linalg decompositions (ops/decomp.c) */
static void row_linalg_det(void) { ct_linalg_det(ws()); }
static void row_linalg_slogdet(void)
{
    ct_tensor *logabsdet = NULL;
    ct_linalg_slogdet(ws(), &logabsdet);
}
static void row_logdet(void) { ct_logdet(ct_mm(ws(), ct_t(ws()))); }
static void row_linalg_inv(void) { ct_linalg_inv(ws()); }
static void row_linalg_solve(void) { ct_linalg_solve(ws(), wv(), true); }
static void row_linalg_solve_triangular(void)
{
    ct_linalg_solve_triangular(ws(), ct_t(wx()), true, true, false);
}
static void row_linalg_cholesky(void) { ct_linalg_cholesky(ct_mm(ws(), ct_t(ws())), false); }
static void row_linalg_qr(void)
{
    ct_tensor *r = NULL;
    ct_linalg_qr(wx(), CT_QR_REDUCED, &r);
}
static void row_linalg_eigh(void)
{
    ct_tensor *v = NULL;
    ct_linalg_eigh(ws(), 'L', &v);
}
static void row_linalg_eigvalsh(void) { ct_linalg_eigvalsh(ws(), 'U'); }
static void row_linalg_svd(void)
{
    ct_tensor *s = NULL, *vh = NULL;
    ct_linalg_svd(wx(), true, &s, &vh);
}
static void row_linalg_svdvals(void) { ct_linalg_svdvals(wx()); }
static void row_linalg_matrix_norm(void) { ct_linalg_matrix_norm(wx(), "nuc", NULL, false); }
static void row_linalg_norm(void) { ct_linalg_norm(wx(), NULL, NULL, 0, false); }
/* modules: Linear then ReLU in a Sequential run fused */
static void row_module_forward(void)
{
    ct_module *m = ct_sequential_new();
    ct_sequential_append(m, ct_linear_new(3, 3, true));
    ct_sequential_append(m, ct_relu_new());
    ct_module_forward(m, wx());
    ct_module_free(m);
}
/* losses */
static ct_tensor *wt(void) /* (2) int64 class indices */
{
    const int64_t v[2] = {0, 2}, n = 2;
    return ct_tensor_from_data(v, CT_INT64, &n, 1);
}
static void row_nll_loss(void) { ct_nll_loss(ct_log_softmax(wx(), 1), wt(), NULL); }
static void row_cross_entropy(void) { ct_cross_entropy(wx(), wt(), NULL); }
static void row_mse_loss(void) { ct_mse_loss(wx(), wx(), CT_REDUCTION_MEAN); }
static void row_l1_loss(void) { ct_l1_loss(wx(), wx(), CT_REDUCTION_MEAN); }
static void row_smooth_l1_loss(void) { ct_smooth_l1_loss(wx(), wx(), CT_REDUCTION_SUM, 1.0); }
static void row_huber_loss(void) { ct_huber_loss(wx(), wx(), CT_REDUCTION_NONE, 1.0); }
static void row_binary_cross_entropy(void)
{
    ct_binary_cross_entropy(ct_sigmoid(wx()), ct_sigmoid(wx()), NULL, CT_REDUCTION_MEAN);
}
static void row_binary_cross_entropy_with_logits(void)
{
    ct_binary_cross_entropy_with_logits(wx(), ct_sigmoid(wx()), NULL, NULL, CT_REDUCTION_MEAN);
}
static void row_kl_div(void) { ct_kl_div(wx(), wx(), CT_REDUCTION_BATCHMEAN, true); }
static void row_margin_ranking_loss(void)
{
    ct_margin_ranking_loss(wx(), wx(), wx(), 0.0, CT_REDUCTION_MEAN);
}
static void row_hinge_embedding_loss(void)
{
    ct_hinge_embedding_loss(wx(), wx(), 1.0, CT_REDUCTION_MEAN);
}
static void row_soft_margin_loss(void) { ct_soft_margin_loss(wx(), wx(), CT_REDUCTION_MEAN); }
static void row_cosine_embedding_loss(void)
{
    ct_cosine_embedding_loss(wx(), wx(), ct_ones(s23, 1, CT_FLOAT32), 0.0, CT_REDUCTION_MEAN);
}
static void row_multi_margin_loss(void)
{
    ct_multi_margin_loss(wx(), wt(), 1, 1.0, NULL, CT_REDUCTION_MEAN);
}
static void row_triplet_margin_loss(void)
{
    ct_triplet_margin_loss(wx(), wx(), wx(), 1.0, 2.0, 1e-6, false, CT_REDUCTION_MEAN);
}
static void row_poisson_nll_loss(void)
{
    ct_poisson_nll_loss(wx(), wx(), true, false, 1e-8, CT_REDUCTION_MEAN);
}
static void row_gaussian_nll_loss(void)
{
    ct_gaussian_nll_loss(wx(), wx(), wx(), false, 1e-6, CT_REDUCTION_MEAN);
}
/* convolutions (nn/conv.c): wx() as a (1, 2, 3) or (1, 1, 2, 3) input and weight */
static ct_tensor *wx3(void) { return ct_unsqueeze(wx(), 0); }
static ct_tensor *wx4(void) { return ct_unsqueeze(wx3(), 0); }
static void row_conv1d(void) { ct_conv1d(wx3(), wx3(), NULL, NULL); }
static void row_conv2d(void) { ct_conv2d(wx4(), wx4(), NULL, NULL); }
static void row_conv_transpose1d(void)
{
    ct_conv_transpose1d(wx3(), ct_unsqueeze(wx(), 1), NULL, NULL);
}
static void row_conv_transpose2d(void) { ct_conv_transpose2d(wx4(), wx4(), NULL, NULL); }
static void row_conv_backward(void)
{
    ct_backward(ct_sum(ct_conv1d(ct_requires_grad_(wx3(), true), wx3(), NULL, NULL)), NULL, false);
}
static ct_tensor *wx5(void) { return ct_unsqueeze(wx4(), 0); }
static void row_conv3d(void) { ct_conv3d(wx5(), wx5(), NULL, NULL); }
static void row_conv_transpose3d(void) { ct_conv_transpose3d(wx5(), wx5(), NULL, NULL); }
static const int64_t k12[2] = {1, 2}, o14[2] = {1, 4};
static void row_unfold(void) { ct_unfold(wx4(), k12, NULL); }
static void row_fold(void) { ct_fold(ct_unsqueeze(wx(), 0), o14, k12, NULL); }

/* factories */
static void row_empty(void) { ct_empty(s23, 2, CT_FLOAT32); }
static void row_zeros(void) { ct_zeros(s23, 2, CT_FLOAT32); }
static void row_ones(void) { ct_ones(s23, 2, CT_FLOAT32); }
static void row_full(void) { ct_full(s23, 2, 1.5, CT_FLOAT32); }
static void row_scalar_tensor(void) { ct_scalar_tensor(1.5, CT_FLOAT32); }
static void row_empty_like(void) { ct_empty_like(wx()); }
static void row_zeros_like(void) { ct_zeros_like(wx()); }
static void row_ones_like(void) { ct_ones_like(wx()); }
static void row_full_like(void) { ct_full_like(wx(), 2); }
static void row_tensor_from_data(void) { wx(); }
static void row_arange(void) { ct_arange(0, 5, 1, CT_FLOAT32); }
static void row_linspace(void) { ct_linspace(0, 1, 5, CT_FLOAT32); }
static void row_eye(void) { ct_eye(3, -1, CT_FLOAT32); }
/* creation T2 (issue 7) */
static void row_logspace(void) { ct_logspace(0, 1, 5, 10, CT_FLOAT32); }
static void row_empty_strided(void) { ct_empty_strided(s23, s23, 2, CT_FLOAT32); }
static void row_new_empty(void) { ct_new_empty(wx(), s23, 2, CT_DTYPE_DEFAULT); }
static void row_new_zeros(void) { ct_new_zeros(wx(), s23, 2, CT_DTYPE_DEFAULT); }
static void row_new_ones(void) { ct_new_ones(wx(), s23, 2, CT_DTYPE_DEFAULT); }
static void row_new_full(void) { ct_new_full(wx(), s23, 2, 2, CT_DTYPE_DEFAULT); }
static void row_tril_indices(void) { ct_tril_indices(3, 3, 0, CT_DTYPE_DEFAULT); }
static void row_triu_indices(void) { ct_triu_indices(3, 3, 0, CT_DTYPE_DEFAULT); }
/* random */
static void row_rand(void) { ct_rand(s23, 2, CT_FLOAT32, NULL); }
static void row_randn(void) { ct_randn(s23, 2, CT_FLOAT32, NULL); }
static void row_randint(void) { ct_randint(0, 10, s23, 2, CT_INT64, NULL); }
static void row_randperm(void) { ct_randperm(5, NULL); }
static void row_rand_like(void) { ct_rand_like(wx(), NULL); }
static void row_randn_like(void) { ct_randn_like(wx(), NULL); }
static void row_uniform_(void) { ct_uniform_(wx(), 0, 1, NULL); }
static void row_normal_(void) { ct_normal_(wx(), 0, 1, NULL); }
static void row_bernoulli_(void) { ct_bernoulli_(wx(), 0.5, NULL); }
static void row_random_(void) { ct_random_(ct_to_dtype(wx(), CT_INT64), NULL); }
static void row_randint_like(void) { ct_randint_like(wx(), 0, 5, NULL); }
static void row_exponential_(void) { ct_exponential_(wx(), 1, NULL); }
static void row_cauchy_(void) { ct_cauchy_(wx(), 0, 1, NULL); }
static void row_log_normal_(void) { ct_log_normal_(wx(), 1, 2, NULL); }
static void row_geometric_(void) { ct_geometric_(wx(), 0.5, NULL); }
static void row_normal(void) { ct_normal(wx(), ct_ones(s23, 2, CT_FLOAT32), NULL); }
static void row_multinomial(void) { ct_multinomial(wx(), 2, true, NULL); }
/* optimizers: one step of each */
static void row_step(int which)
{
    ct_tensor *p = ct_requires_grad_(wx(), true);
    ct_set_grad(p, wx());
    ct_optimizer *o = NULL;
    if (which == 0) {
        ct_sgd_opts s = ct_sgd_defaults();
        s.lr = 0.1;
        o = ct_sgd_new(&p, 1, &s);
    } else if (which < 3) {
        o = which == 1 ? ct_adam_new(&p, 1, NULL) : ct_adamw_new(&p, 1, NULL);
    } else {
        o = which == 3   ? ct_rmsprop_new(&p, 1, NULL)
            : which == 4 ? ct_adagrad_new(&p, 1, NULL)
            : which == 5 ? ct_adadelta_new(&p, 1, NULL)
            : which == 6 ? ct_adamax_new(&p, 1, NULL)
            : which == 7 ? ct_nadam_new(&p, 1, NULL)
                         : ct_radam_new(&p, 1, NULL);
    }
    ct_optimizer_step(o);
    ct_optimizer_free(o);
}
static void row_step_sgd(void) { row_step(0); }
static void row_step_adam(void) { row_step(1); }
static void row_step_adamw(void) { row_step(2); }
static void row_step_optim2(void)
{
    for (int which = 3; which < 9; which++) {
        row_step(which);
    }
}

/* abs, and its backward (sign) */
static void row_abs(void)
{
    ct_backward(ct_abs(ct_requires_grad_(wx(), true)), wx(), false);
}
/* the backward ops of relu, sigmoid and tanh */
static void row_backward(void)
{
    ct_backward(ct_relu(ct_requires_grad_(wx(), true)), wx(), false);
    ct_backward(ct_sigmoid(ct_requires_grad_(wx(), true)), wx(), false);
    ct_backward(ct_tanh(ct_requires_grad_(wx(), true)), wx(), false);
    ct_backward(ct_softmax(ct_requires_grad_(wx(), true), 1), wx(), false);
    ct_backward(ct_log_softmax(ct_requires_grad_(wx(), true), 1), wx(), false);
    ct_backward(ct_select(ct_requires_grad_(wx(), true), 0, 1), wv(), false);
    ct_backward(ct_narrow(ct_requires_grad_(wx(), true), 0, 1, 1), ct_narrow(wx(), 0, 0, 1), false);
    ct_backward(ct_cross_entropy(ct_requires_grad_(wx(), true), wt(), NULL), NULL, false);
    ct_backward(ct_diagonal(ct_requires_grad_(wx(), true), 0, 0, 1), ct_narrow(wv(), 0, 0, 2),
                false);
}
/* copy_ on one device, and across two */
static void row_copy_across(void)
{
    ct_copy_(ct_to_device(wx(), fake_device()), wx());
}

/* pointwise ops of issue 7's second slice */
#define ROW_UNARY(F) static void row_##F(void) { ct_##F(wx()); }
#define ROW_BINARY(F) static void row_##F(void) { ct_##F(wx(), wx()); }
#define ROW_INT(F) static void row_##F(void) { ct_##F(wi(), wi()); }
ROW_UNARY(sign)
ROW_UNARY(sgn)
ROW_UNARY(expm1)
ROW_UNARY(exp2)
ROW_UNARY(log2)
ROW_UNARY(log10)
ROW_UNARY(tan)
ROW_UNARY(asin)
ROW_UNARY(acos)
ROW_UNARY(atan)
ROW_UNARY(sinh)
ROW_UNARY(cosh)
ROW_UNARY(asinh)
ROW_UNARY(acosh)
ROW_UNARY(atanh)
ROW_UNARY(erfc)
ROW_UNARY(erfinv)
ROW_UNARY(floor)
ROW_UNARY(ceil)
ROW_UNARY(round)
ROW_UNARY(trunc)
ROW_UNARY(frac)
ROW_UNARY(signbit)
ROW_UNARY(isposinf)
ROW_UNARY(isneginf)
ROW_UNARY(isreal)
ROW_UNARY(floor_)
ROW_UNARY(expm1_)
ROW_UNARY(exp2_)
ROW_UNARY(log2_)
ROW_UNARY(log10_)
ROW_UNARY(tan_)
ROW_UNARY(asin_)
ROW_UNARY(acos_)
ROW_UNARY(atan_)
ROW_UNARY(sinh_)
ROW_UNARY(cosh_)
ROW_UNARY(asinh_)
ROW_UNARY(acosh_)
ROW_UNARY(atanh_)
ROW_UNARY(erfc_)
ROW_UNARY(erfinv_)
ROW_UNARY(ceil_)
ROW_UNARY(round_)
ROW_UNARY(trunc_)
ROW_UNARY(frac_)
ROW_BINARY(hypot)
ROW_BINARY(atan2)
ROW_BINARY(logaddexp)
ROW_BINARY(logaddexp2)
ROW_BINARY(xlogy)
ROW_BINARY(fmax)
ROW_BINARY(fmin)
ROW_BINARY(fmod)
ROW_BINARY(remainder)
ROW_BINARY(floor_divide)
ROW_BINARY(fmod_)
ROW_BINARY(remainder_)
ROW_INT(bitwise_and)
ROW_INT(bitwise_or)
ROW_INT(bitwise_xor)
ROW_INT(bitwise_left_shift)
ROW_INT(bitwise_right_shift)
#undef ROW_UNARY
#undef ROW_BINARY
#undef ROW_INT
static void row_bitwise_not(void) { ct_bitwise_not(wi()); }
static void row_sign_(void) { ct_sign_(wx()); }
static void row_sgn_(void) { ct_sgn_(wx()); }
static void row_bitwise_not_(void) { ct_bitwise_not_(wi()); }
static void row_logit_(void) { ct_logit_(ct_mul_scalar(wx(), 0.25), -1); }
static void row_floor_divide_(void) { ct_floor_divide_(wx(), wx()); }
static void row_atan2_(void) { ct_atan2_(wx(), wx()); }
static void row_xlogy_(void) { ct_xlogy_(wx(), wx()); }
static void row_bitwise_and_(void) { ct_bitwise_and_(wi(), wi()); }
static void row_bitwise_or_(void) { ct_bitwise_or_(wi(), wi()); }
static void row_bitwise_xor_(void) { ct_bitwise_xor_(wi(), wi()); }
static void row_bitwise_left_shift_(void) { ct_bitwise_left_shift_(wi(), wi()); }
static void row_bitwise_right_shift_(void) { ct_bitwise_right_shift_(wi(), wi()); }
static void row_logical_xor_(void) { ct_logical_xor_(wb(), wb()); }
static void row_logical_xor(void) { ct_logical_xor(wb(), wb()); }
static void row_nan_to_num(void) { ct_nan_to_num(wx(), 0, NULL, NULL); }
static void row_nan_to_num_(void) { ct_nan_to_num_(wx(), 0, NULL, NULL); }
static void row_logit(void) { ct_logit(wx(), 0.25); }
static void row_isclose(void) { ct_isclose(wx(), wx(), 1e-5, 1e-8, false); }
static void row_foreach_add_(void)
{
    ct_tensor *s[2] = {wx(), wx()};
    const ct_tensor *o[2] = {wx(), wx()};
    ct_foreach_add_(s, 2, o, 2, 1.0);
}
static void row_foreach_mul_(void)
{
    ct_tensor *s[2] = {wx(), wx()};
    const ct_tensor *o[2] = {wx(), wx()};
    ct_foreach_mul_(s, 2, o, 2);
}
static void row_foreach_lerp_(void)
{
    ct_tensor *s[2] = {wx(), wx()};
    const ct_tensor *o[2] = {wx(), wx()};
    ct_foreach_lerp_(s, 2, o, 2, 0.5);
}
static void row_foreach_zero_(void)
{
    ct_tensor *s[2] = {wx(), wx()};
    ct_foreach_zero_(s, 2);
}
static void row_foreach_sqrt(void)
{
    const ct_tensor *s[2] = {wx(), wx()};
    ct_tensor *out[2];
    ct_foreach_sqrt(s, 2, out, 2);
}

/* pooling, padding, upsampling (issue 8): wp() is (1, 2, 3) */
static ct_tensor *wp(void) { return ct_unsqueeze(wx(), 0); }
static const int64_t w12[2] = {1, 2};
static void row_max_pool2d(void) { ct_max_pool2d(wp(), w12, NULL); }
static void row_max_pool2d_with_indices(void)
{
    ct_max_pool2d_with_indices(wp(), w12, NULL, NULL, NULL);
}
static void row_max_pool1d(void) { ct_max_pool1d(wx(), 2, NULL); }
static void row_avg_pool2d(void) { ct_avg_pool2d(wp(), w12, NULL); }
static void row_avg_pool1d(void) { ct_avg_pool1d(wx(), 2, NULL); }
static void row_adaptive_avg_pool2d(void) { ct_adaptive_avg_pool2d(wp(), w12); }
static void row_adaptive_avg_pool1d(void) { ct_adaptive_avg_pool1d(wx(), 2); }
static void row_adaptive_max_pool2d(void) { ct_adaptive_max_pool2d(wp(), w12, NULL); }
/* the 3-D ops on wp3() (1, 1, 2, 3) */
static ct_tensor *wp3(void) { return ct_unsqueeze(wp(), 0); }
static const int64_t w112[3] = {1, 1, 2};
static void row_max_pool3d(void) { ct_max_pool3d(wp3(), w112, NULL); }
static void row_max_pool3d_with_indices(void)
{
    ct_max_pool3d_with_indices(wp3(), w112, NULL, NULL, NULL);
}
static void row_avg_pool3d(void) { ct_avg_pool3d(wp3(), w112, NULL); }
static void row_adaptive_avg_pool3d(void) { ct_adaptive_avg_pool3d(wp3(), w112); }
static void row_adaptive_max_pool3d(void) { ct_adaptive_max_pool3d(wp3(), w112, NULL); }
static void row_lp_pool1d(void) { ct_lp_pool1d(wp(), 2, 2, 0, false); }
static void row_lp_pool2d(void) { ct_lp_pool2d(wp(), 2, w12, NULL, false); }
static void row_lp_pool3d(void) { ct_lp_pool3d(wp3(), 2, w112, NULL, false); }
static void row_max_unpool1d(void)
{
    ct_max_unpool1d(wp(), ct_to_dtype(ct_zeros_like(wp()), CT_INT64), 1, 0, 0, 0);
}
static void row_max_unpool2d(void)
{
    ct_max_unpool2d(wp(), ct_to_dtype(ct_zeros_like(wp()), CT_INT64), w12, NULL, NULL, NULL);
}
static void row_max_unpool3d(void)
{
    ct_max_unpool3d(wp3(), ct_to_dtype(ct_zeros_like(wp3()), CT_INT64), w112, NULL, NULL, NULL);
}
static void row_pad(void) { ct_pad(wx(), w12, 2, CT_PAD_REFLECT, 0); }
/* mode m on (1, 2, 3) or (1, 1, 2, 3) */
static void row_interp(ct_interpolate_mode m, bool four)
{
    ct_interpolate_opts o;
    memset(&o, 0, sizeof o);
    o.mode = m;
    o.scale_factor[0] = 2;
    ct_interpolate(four ? ct_unsqueeze(wp(), 0) : wp(), &o);
}
static void row_interp_nearest1d(void) { row_interp(CT_INTERPOLATE_NEAREST, false); }
static void row_interp_nearest2d(void) { row_interp(CT_INTERPOLATE_NEAREST, true); }
static void row_interp_exact1d(void) { row_interp(CT_INTERPOLATE_NEAREST_EXACT, false); }
static void row_interp_exact2d(void) { row_interp(CT_INTERPOLATE_NEAREST_EXACT, true); }
static void row_interp_linear(void) { row_interp(CT_INTERPOLATE_LINEAR, false); }
static void row_interp_bilinear(void) { row_interp(CT_INTERPOLATE_BILINEAR, true); }
static void row_pixel_shuffle(void)
{
    const int64_t s[4] = {1, 4, 1, 1};
    ct_pixel_shuffle(ct_ones(s, 4, CT_FLOAT32), 2);
}
static void row_pixel_unshuffle(void)
{
    const int64_t s[4] = {1, 1, 2, 2};
    ct_pixel_unshuffle(ct_ones(s, 4, CT_FLOAT32), 2);
}
/* nn/distance.c */
static void row_one_hot(void) { ct_one_hot(ct_to_dtype(wx(), CT_INT64), -1); }
static void row_normalize(void) { ct_normalize(wx(), 2, 1, 1e-12); }
static void row_cosine_similarity(void) { ct_cosine_similarity(wx(), wx(), 1, 1e-8); }
static void row_pairwise_distance(void) { ct_pairwise_distance(wx(), wx(), 2, 1e-6, false); }
static void row_pdist(void) { ct_pdist(wx(), 2); }
static void row_bilinear(void)
{
    const int64_t s[3] = {2, 3, 3};
    ct_bilinear(wx(), wx(), ct_ones(s, 3, CT_FLOAT32), NULL);
}
/* the pooling backward ops */
static void row_backward_pool(void)
{
    ct_tensor *x[8];
    for (int k = 0; k < 8; k++) {
        x[k] = ct_requires_grad_(k < 4 ? wp() : wp3(), true);
    }
    ct_backward(ct_sum(ct_max_pool2d(x[0], w12, NULL)), NULL, false);
    ct_backward(ct_sum(ct_avg_pool2d(x[1], w12, NULL)), NULL, false);
    ct_backward(ct_sum(ct_adaptive_avg_pool2d(x[2], w12)), NULL, false);
    ct_backward(ct_sum(ct_adaptive_max_pool2d(x[3], w12, NULL)), NULL, false);
    ct_backward(ct_sum(ct_max_pool3d(x[4], w112, NULL)), NULL, false);
    ct_backward(ct_sum(ct_avg_pool3d(x[5], w112, NULL)), NULL, false);
    ct_backward(ct_sum(ct_adaptive_avg_pool3d(x[6], w112)), NULL, false);
    ct_backward(ct_sum(ct_adaptive_max_pool3d(x[7], w112, NULL)), NULL, false);
}
/* nn/norm.c and nn/activation.c */
static ct_tensor *wn(void) /* (2, 3, 2) float32 */
{
    const float v[12] = {0.5f, -1, 1.5f, 2, -2.5f, 3, 0.25f, 1, -0.75f, 2.5f, 1.25f, -3};
    const int64_t s[3] = {2, 3, 2};
    return ct_tensor_from_data(v, CT_FLOAT32, s, 3);
}
static void row_batch_norm(void)
{
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.training = true;
    ct_batch_norm(wn(), NULL, NULL, &o);
}
static void row_layer_norm(void)
{
    const int64_t k = 2;
    ct_layer_norm(wn(), &k, 1, NULL, NULL, 1e-5);
}
static void row_group_norm(void) { ct_group_norm(wn(), 3, NULL, NULL, 1e-5); }
static void row_instance_norm(void) { ct_instance_norm(wn(), NULL, NULL, NULL); }
static void row_rms_norm(void)
{
    const int64_t k = 2;
    ct_rms_norm(wn(), &k, 1, NULL, NAN);
}
static void row_dropout(void) { ct_dropout(wx(), 0.5, true); }
static void row_dropout2d(void) { ct_dropout2d(wn(), 0.5, true); }
static void row_gelu(void) { ct_gelu(wx(), CT_GELU_NONE); }
static void row_gelu_tanh(void) { ct_gelu(wx(), CT_GELU_TANH); }
static void row_leaky_relu(void) { ct_leaky_relu(wx(), 0.01); }
static void row_elu(void) { ct_elu(wx(), 1); }
static void row_celu(void) { ct_celu(wx(), 1); }
static void row_softplus(void) { ct_softplus(wx(), 1, 20); }
static void row_hardtanh(void) { ct_hardtanh(wx(), -1, 1); }
static void row_softshrink(void) { ct_softshrink(wx(), 0.5); }
static void row_hardshrink(void) { ct_hardshrink(wx(), 0.5); }
static void row_threshold(void) { ct_threshold(wx(), 1, 0); }
static void row_softmin(void) { ct_softmin(wx(), 1); }
static void row_glu(void) { ct_glu(wn(), 2); }
static void row_prelu(void)
{
    const int64_t one = 1;
    ct_prelu(wx(), ct_full(&one, 1, 0.25, CT_FLOAT32));
}
static void row_rrelu(void) { ct_rrelu(wx(), 0.1, 0.3, false); }
static void row_rrelu_train(void) { ct_rrelu(ct_neg(wx()), 0.1, 0.3, true); }
#define ROW_NN(F) static void row_##F(void) { ct_##F(wx()); }
ROW_NN(silu)
ROW_NN(selu)
ROW_NN(hardswish)
ROW_NN(hardsigmoid)
ROW_NN(relu6)
ROW_NN(mish)
ROW_NN(logsigmoid)
ROW_NN(softsign)
ROW_NN(tanhshrink)
#undef ROW_NN
/* nn/embedding.c */
static ct_tensor *wemb_idx(void) /* (2, 2) int64 */
{
    const int64_t v[4] = {0, 2, 2, 4}, s[2] = {2, 2};
    return ct_tensor_from_data(v, CT_INT64, s, 2);
}
static ct_tensor *wemb(void) /* (5, 3) float32 */
{
    const int64_t s[2] = {5, 3};
    return ct_ones(s, 2, CT_FLOAT32);
}
static void row_embedding(void)
{
    ct_embedding_opts o = ct_embedding_defaults();
    o.max_norm = 1;
    ct_embedding(wemb_idx(), wemb(), &o);
}
static void row_embedding_bag(void)
{
    ct_embedding_bag_opts o = ct_embedding_bag_defaults();
    o.max_norm = 1;
    ct_embedding_bag(wemb_idx(), wemb(), NULL, NULL, &o);
}
static void row_backward_embedding(void)
{
    ct_backward(ct_sum(ct_embedding(wemb_idx(), ct_requires_grad_(wemb(), true), NULL)), NULL,
                false);
}
/* the backward ops of batch norm, layer norm and the activations */
static void row_backward_nn(void)
{
    const int64_t k = 2;
    ct_batch_norm_opts o = ct_batch_norm_defaults();
    o.training = true;
    ct_backward(ct_batch_norm(ct_requires_grad_(wn(), true), NULL, NULL, &o), wn(), false);
    ct_backward(ct_layer_norm(ct_requires_grad_(wn(), true), &k, 1, NULL, NULL, 1e-5), wn(),
                false);
    ct_tensor *(*unary[7])(const ct_tensor *) = {ct_silu, ct_selu, ct_hardswish, ct_hardsigmoid,
                                                 ct_relu6, ct_mish, ct_logsigmoid};
    for (int i = 0; i < 7; i++) {
        ct_backward(unary[i](ct_requires_grad_(wx(), true)), wx(), false);
    }
    ct_backward(ct_gelu(ct_requires_grad_(wx(), true), CT_GELU_NONE), wx(), false);
    ct_backward(ct_gelu(ct_requires_grad_(wx(), true), CT_GELU_TANH), wx(), false);
    ct_backward(ct_leaky_relu(ct_requires_grad_(wx(), true), 0.1), wx(), false);
    ct_backward(ct_softplus(ct_requires_grad_(wx(), true), 1, 20), wx(), false);
    ct_backward(ct_softshrink(ct_requires_grad_(wx(), true), 0.5), wx(), false);
    ct_backward(ct_hardshrink(ct_requires_grad_(wx(), true), 0.5), wx(), false);
    ct_backward(ct_threshold(ct_requires_grad_(wx(), true), 1, 0), wx(), false);
}

/* nn/attention.c: the fused op (through the public composite), its backward, the dropout path */
static void row_scaled_dot_product_attention(void)
{
    ct_scaled_dot_product_attention_opts o = ct_scaled_dot_product_attention_defaults();
    o.is_causal = true;
    ct_scaled_dot_product_attention(wn(), wn(), wn(), NULL, &o);
    o.dropout_p = 0.5;
    ct_scaled_dot_product_attention(wn(), wn(), wn(), NULL, &o);
}
static void row_backward_attention(void)
{
    ct_tensor *q = ct_requires_grad_(wn(), true);
    ct_backward(ct_scaled_dot_product_attention(q, wn(), wn(), NULL, NULL), wn(), false);
}

typedef struct api_row {
    const char *fn;
    void (*call)(void);
} api_row;
#define ROW(F) {"ct_" #F, row_##F}
static const api_row api_rows[] = {
    /* pointwise */
    ROW(add), ROW(add_alpha), ROW(add_scalar), ROW(add_), ROW(sub), ROW(sub_scalar), ROW(sub_),
    ROW(mul), ROW(mul_scalar), ROW(mul_), ROW(div), ROW(div_scalar), ROW(div_), ROW(pow),
    ROW(pow_scalar), ROW(maximum), ROW(minimum), ROW(eq), ROW(eq_scalar), ROW(ne), ROW(lt),
    ROW(lt_scalar), ROW(le), ROW(gt), ROW(gt_scalar), ROW(ge), ROW(logical_and), ROW(logical_or),
    ROW(logical_not), ROW(neg), ROW(abs), ROW(exp), ROW(log), ROW(log1p), ROW(sqrt), ROW(rsqrt),
    ROW(sin), ROW(cos), ROW(sigmoid), ROW(tanh), ROW(relu), ROW(square), ROW(reciprocal),
    ROW(relu_), ROW(clamp), ROW(where), ROW(fill_), ROW(zero_), ROW(clone), ROW(to_dtype),
    ROW(to_device), ROW(pin_memory), ROW(cpu), ROW(backward), {"ct_copy_", row_copy_across}, {"ct_copy_", row_copy_},
    {"ct_pow_scalar", row_pow_scalar_int},
    ROW(erf), ROW(isnan), ROW(isinf), ROW(isfinite), ROW(neg_), ROW(abs_), ROW(exp_), ROW(log_),
    ROW(sqrt_), ROW(sigmoid_), ROW(tanh_), ROW(pow_), ROW(clamp_),
    ROW(addcmul), ROW(addcmul_), ROW(addcdiv), ROW(addcdiv_),
    ROW(lerp), ROW(lerp_), ROW(lerp_scalar), ROW(lerp_scalar_),
    ROW(div_mode), ROW(bernoulli),
    /* pointwise, issue 7's second slice */
    ROW(sign_), ROW(sgn_), ROW(bitwise_not_), ROW(logit_), ROW(floor_divide_), ROW(atan2_),
    ROW(xlogy_), ROW(bitwise_and_), ROW(bitwise_or_), ROW(bitwise_xor_), ROW(bitwise_left_shift_),
    ROW(bitwise_right_shift_), ROW(logical_xor_),
    ROW(expm1_), ROW(exp2_), ROW(log2_), ROW(log10_), ROW(tan_), ROW(asin_), ROW(acos_), ROW(atan_),
    ROW(sinh_), ROW(cosh_), ROW(asinh_), ROW(acosh_), ROW(atanh_), ROW(erfc_), ROW(erfinv_),
    ROW(sign), ROW(sgn), ROW(expm1), ROW(exp2), ROW(log2), ROW(log10), ROW(tan), ROW(asin),
    ROW(acos), ROW(atan), ROW(sinh), ROW(cosh), ROW(asinh), ROW(acosh), ROW(atanh), ROW(erfc),
    ROW(erfinv), ROW(floor), ROW(ceil), ROW(round), ROW(trunc), ROW(frac), ROW(signbit),
    ROW(isposinf), ROW(isneginf), ROW(isreal), ROW(floor_), ROW(ceil_), ROW(round_), ROW(trunc_),
    ROW(frac_), ROW(hypot), ROW(atan2), ROW(logaddexp), ROW(logaddexp2), ROW(xlogy), ROW(fmax),
    ROW(fmin), ROW(fmod), ROW(remainder), ROW(floor_divide), ROW(fmod_), ROW(remainder_),
    ROW(bitwise_and), ROW(bitwise_or), ROW(bitwise_xor), ROW(bitwise_left_shift),
    ROW(bitwise_right_shift), ROW(bitwise_not), ROW(logical_xor), ROW(nan_to_num),
    ROW(nan_to_num_), ROW(logit), ROW(isclose), ROW(foreach_add_), ROW(foreach_mul_),
    ROW(foreach_lerp_), ROW(foreach_zero_), ROW(foreach_sqrt),
    /* views */
    ROW(alias), ROW(detach), ROW(contiguous), ROW(view), ROW(reshape), ROW(flatten), ROW(expand),
    ROW(permute), ROW(transpose), ROW(t), ROW(narrow), ROW(select), ROW(squeeze), ROW(squeeze_dim),
    ROW(unsqueeze), ROW(cat), ROW(stack),
    ROW(view_as), ROW(reshape_as), ROW(expand_as), ROW(unflatten), ROW(mt), ROW(broadcast_to),
    ROW(broadcast_tensors), ROW(slice), ROW(split), ROW(split_with_sizes), ROW(chunk), ROW(tril),
    ROW(triu),
    /* indexing */
    ROW(gather), ROW(index_select), ROW(scatter), ROW(scatter_), ROW(scatter_add),
    ROW(scatter_add_), ROW(index_add), ROW(index_add_), ROW(masked_fill), ROW(masked_fill_),
    /* issue 7, second slice */
    ROW(repeat), ROW(tile), ROW(repeat_interleave), ROW(flip), ROW(fliplr), ROW(flipud), ROW(roll),
    ROW(rot90), ROW(movedim), ROW(diagonal), ROW(diag), ROW(diag_embed), ROW(diagflat),
    ROW(as_strided), ROW(unfold_view), ROW(hstack), ROW(vstack), ROW(dstack), ROW(column_stack),
    ROW(unbind), ROW(tensor_split), ROW(tensor_split_indices), ROW(hsplit), ROW(vsplit),
    ROW(dsplit), ROW(nonzero), ROW(argwhere), ROW(index), ROW(index_put), ROW(index_put_),
    ROW(masked_select), ROW(masked_scatter), ROW(masked_scatter_), ROW(index_fill_),
    ROW(index_copy_), ROW(take), ROW(take_along_dim), ROW(scatter_reduce), ROW(scatter_reduce_),
    /* reductions, softmax */
    ROW(sum), ROW(sum_dim), ROW(sum_dims), ROW(sum_to_size), ROW(mean), ROW(mean_dim), ROW(max),
    ROW(min), ROW(max_dim), ROW(min_dim), ROW(argmax), ROW(argmin), ROW(argmax_dim),
    ROW(argmin_dim), ROW(softmax), ROW(log_softmax),
    ROW(amax), ROW(amin), ROW(logsumexp), ROW(var), ROW(std), ROW(var_dim), ROW(std_dim),
    ROW(all), ROW(any), ROW(all_dim), ROW(any_dim), ROW(linalg_vector_norm), ROW(allclose),
    ROW(equal),
    ROW(sort), ROW(argsort), ROW(msort), ROW(topk), ROW(kthvalue), ROW(median), ROW(median_dim),
    ROW(nanmedian), ROW(nanmedian_dim), ROW(mode), ROW(quantile), ROW(nanquantile), ROW(unique),
    ROW(unique_consecutive), ROW(isin), ROW(searchsorted), ROW(bucketize), ROW(bincount),
    ROW(histc),
    ROW(prod), ROW(prod_dim), ROW(cumsum), ROW(cumprod), ROW(cummax), ROW(cummin),
    ROW(logcumsumexp), ROW(nansum), ROW(nanmean), ROW(var_mean), ROW(std_mean), ROW(aminmax),
    ROW(count_nonzero), ROW(dist), ROW(cdist),
    /* linear algebra, modules, losses */
    ROW(mm), ROW(bmm), ROW(mv), ROW(dot), ROW(matmul), ROW(addmm), ROW(linear), ROW(module_forward),
    ROW(baddbmm), ROW(addbmm), ROW(addmv), ROW(addr), ROW(outer), ROW(inner), ROW(vdot),
    ROW(einsum), ROW(tensordot), ROW(kron), ROW(trace), ROW(cross), ROW(linalg_multi_dot),
    ROW(linalg_matrix_power), ROW(linalg_matrix_exp),
    ROW(nll_loss), ROW(cross_entropy), ROW(mse_loss), ROW(l1_loss), ROW(smooth_l1_loss),
    ROW(huber_loss), ROW(binary_cross_entropy), ROW(binary_cross_entropy_with_logits), ROW(kl_div),
    ROW(margin_ranking_loss), ROW(hinge_embedding_loss), ROW(soft_margin_loss),
    ROW(cosine_embedding_loss), ROW(multi_margin_loss), ROW(triplet_margin_loss),
    ROW(poisson_nll_loss), ROW(gaussian_nll_loss),
    ROW(nll_loss), ROW(cross_entropy), ROW(mse_loss),
    ROW(conv1d), ROW(conv2d), ROW(conv_transpose1d), ROW(conv_transpose2d),
    {"ct_backward", row_conv_backward}, ROW(conv3d), ROW(conv_transpose3d), ROW(unfold),
    ROW(fold),
    /* nn/norm.c, nn/activation.c */
    ROW(batch_norm), ROW(layer_norm), ROW(group_norm), ROW(instance_norm), ROW(rms_norm),
    ROW(dropout), ROW(dropout2d), ROW(gelu), {"ct_gelu", row_gelu_tanh}, ROW(silu),
    ROW(leaky_relu), ROW(elu), ROW(selu), ROW(celu), ROW(softplus), ROW(hardswish),
    ROW(hardsigmoid), ROW(hardtanh), ROW(relu6), ROW(mish), ROW(logsigmoid), ROW(softsign),
    ROW(tanhshrink), ROW(softshrink), ROW(hardshrink), ROW(threshold), ROW(softmin), ROW(glu),
    ROW(prelu), ROW(rrelu), {"ct_rrelu", row_rrelu_train}, {"ct_backward", row_backward_nn},
    /* nn/embedding.c */
    ROW(embedding), ROW(embedding_bag), {"ct_backward", row_backward_embedding},
    ROW(scaled_dot_product_attention), {"ct_backward", row_backward_attention},
    /* linalg decompositions */
    ROW(linalg_det), ROW(linalg_slogdet), ROW(logdet), ROW(linalg_inv), ROW(linalg_solve),
    ROW(linalg_solve_triangular), ROW(linalg_cholesky), ROW(linalg_qr), ROW(linalg_eigh),
    ROW(linalg_eigvalsh), ROW(linalg_svd), ROW(linalg_svdvals), ROW(linalg_matrix_norm),
    ROW(linalg_norm),
    /* factories, random */
    ROW(empty), ROW(zeros), ROW(ones), ROW(full), ROW(scalar_tensor), ROW(empty_like),
    ROW(zeros_like), ROW(ones_like), ROW(full_like), ROW(tensor_from_data), ROW(arange),
    ROW(linspace), ROW(eye), ROW(rand), ROW(randn), ROW(randint), ROW(randperm), ROW(rand_like),
    ROW(randn_like), ROW(uniform_), ROW(normal_), ROW(bernoulli_), ROW(random_),
    ROW(randint_like), ROW(exponential_), ROW(cauchy_), ROW(log_normal_), ROW(geometric_),
    ROW(normal), ROW(multinomial),
    ROW(normal),
    /* creation T2 (issue 7) */
    ROW(logspace), ROW(empty_strided), ROW(new_empty), ROW(new_zeros), ROW(new_ones),
    ROW(new_full), ROW(tril_indices), ROW(triu_indices),
    /* optimizers */
    {"ct_optimizer_step", row_step_sgd}, {"ct_optimizer_step", row_step_adam},
    {"ct_optimizer_step", row_step_adamw},
    /* pooling, padding, upsampling (issue 8) */
    ROW(max_pool2d), ROW(max_pool2d_with_indices), ROW(max_pool1d), ROW(avg_pool2d),
    ROW(avg_pool1d), ROW(adaptive_avg_pool2d), ROW(adaptive_avg_pool1d), ROW(adaptive_max_pool2d),
    ROW(max_pool3d), ROW(max_pool3d_with_indices), ROW(avg_pool3d), ROW(adaptive_avg_pool3d),
    ROW(adaptive_max_pool3d), ROW(lp_pool1d), ROW(lp_pool2d), ROW(lp_pool3d),
    ROW(max_unpool1d), ROW(max_unpool2d), ROW(max_unpool3d),
    ROW(pad), ROW(pixel_shuffle), ROW(pixel_unshuffle), {"ct_backward", row_backward_pool},
    {"ct_interpolate", row_interp_nearest1d}, {"ct_interpolate", row_interp_nearest2d},
    {"ct_interpolate", row_interp_exact1d}, {"ct_interpolate", row_interp_exact2d},
    {"ct_interpolate", row_interp_linear}, {"ct_interpolate", row_interp_bilinear},
    {"ct_optimizer_step", row_step_optim2},
    /* nn/distance.c (issue 8) */
    ROW(one_hot), ROW(normalize), ROW(cosine_similarity), ROW(pairwise_distance), ROW(pdist),
    ROW(bilinear),
};
#undef ROW
#define N_ROWS ((int)(sizeof api_rows / sizeof api_rows[0]))

typedef struct walk_seen {
    const ct_op *const *ops;
    int n_ops;
    unsigned char *seen; /* [row][op] */
    int row;
} walk_seen;

static void walk_after(void *user, ct_op_call *c)
{
    walk_seen *w = (walk_seen *)user;
    for (int k = 0; k < w->n_ops; k++) {
        if (w->ops[k] == c->op) {
            w->seen[w->row * w->n_ops + k] = 1;
        }
    }
}

/* Whether some row of public function fn (len chars) saw op k. */
static bool walk_reached(const walk_seen *w, const char *fn, size_t len, int k, bool *has_row)
{
    bool reached = false;
    for (int r = 0; r < N_ROWS; r++) {
        if (strlen(api_rows[r].fn) == len && !strncmp(api_rows[r].fn, fn, len)) {
            *has_row = true;
            reached = reached || w->seen[r * w->n_ops + k];
        }
    }
    return reached;
}

/* Whether row r saw a descriptor whose api names the row's function. */
static bool walk_row_named(const walk_seen *w, int r)
{
    size_t len = strlen(api_rows[r].fn);
    for (int k = 0; k < w->n_ops; k++) {
        for (const char *p = w->ops[k]->api; w->seen[r * w->n_ops + k] && p && *p;) {
            size_t n = strcspn(p, " ");
            if (n == len && !strncmp(p, api_rows[r].fn, len)) {
                return true;
            }
            p += n + (p[n] == ' ');
        }
    }
    return false;
}

static void test_registry_walk(void)
{
    fake_register();
    walk_seen w;
    w.ops = ct_op_registry(&w.n_ops);
    w.seen = (unsigned char *)calloc((size_t)N_ROWS * (size_t)w.n_ops, 1);
    ct_dispatch_hook h = {NULL, walk_after, &w};
    for (w.row = 0; w.row < N_ROWS; w.row++) {
        ct_scope_begin();
        CHECK(ct_dispatch_hook_push(&h) == CT_OK);
        api_rows[w.row].call();
        CHECK(ct_dispatch_hook_pop() == CT_OK);
        ct_scope_end();
        CHECK_MSG(!ct_error(), "%s: %s", api_rows[w.row].fn, ct_error());
        ct_error_clear();
        CHECK_MSG(walk_row_named(&w, w.row), "%s reached no descriptor that names it",
                  api_rows[w.row].fn);
    }
    for (int k = 0; k < w.n_ops; k++) {
        const char *api = w.ops[k]->api;
        int named = 0;
        for (const char *p = api; p && *p;) {
            size_t len = strcspn(p, " ");
            if (len > 3 && !strncmp(p, "ct_", 3)) {
                bool has_row = false;
                named++;
                bool ok = walk_reached(&w, p, len, k, &has_row);
                CHECK_MSG(has_row, "%s (%s) has no row in the registry walk", w.ops[k]->name,
                          api);
                CHECK_MSG(!has_row || ok, "%.*s does not reach %s (%s)", (int)len, p,
                          w.ops[k]->name, w.ops[k]->schema);
            }
            p += len + (p[len] == ' ');
        }
        CHECK_MSG(named > 0, "%s names no public function", w.ops[k]->name);
    }
    free(w.seen);
    fake_unregister();
}

void test_dispatch(void)
{
    RUN(test_fake_device_lookup);
    RUN(test_fake_device_not_implemented);
    RUN(test_fake_device_default);
    RUN(test_fake_device_different_devices);
    RUN(test_fake_device_copies);
    RUN(test_fake_device_autograd);
    RUN(test_pin_memory);
    RUN(test_pin_memory_dataloader);
    RUN(test_capture_quickstart_step);
    RUN(test_hook_replaces_outputs);
    RUN(test_hook_push_errors);
    RUN(test_registry_walk);
    RUN(test_op_find);
    RUN(test_backend_register_errors);
}
