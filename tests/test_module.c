/* tests/test_module.c - the module system: buffers, traversals in PyTorch's order
 * (tools/gen_fixture_safetensors.py -> tests/golden/module_golden.h), state_dict and
 * load_state_dict with PyTorch's messages, requires_grad_, apply, to, hooks, containers and a
 * user module with several inputs and outputs.
 */
#include "test.h"
#include "golden/module_golden.h"

/* ---- the tool's Net, built the same way ------------------------------------------------ */
static ct_tensor *test_module_identity(ct_module *m, const ct_tensor *x)
{
    (void)m;
    return ct_alias(x);
}

/* Block: fc = Linear(3, 3), buffers scale (arange(3.)), tmp (non-persistent), count (int64 7) */
static ct_module *test_block_new(void)
{
    const int64_t one = 1;
    ct_module *b = ct_module_new("Block", test_module_identity, NULL, NULL);
    ct_module_register_module(b, "fc", ct_linear_new(3, 3, true));
    ct_scope_begin();
    ct_module_register_buffer(b, "scale", ct_arange(0, 3, 1, CT_FLOAT32));
    ct_module_register_buffer_persistent(b, "tmp", ct_zeros(&one, 1, CT_FLOAT32), false);
    ct_module_register_buffer(b, "count", ct_scalar_tensor(7, CT_INT64));
    ct_scope_end();
    return b;
}

/* Net after manual_seed(seed): w, blocks = ModuleList([Block(), Block()]),
   head = Sequential(Linear(3, 2), ReLU()), buffer b0 registered last (test_safetensors.c
   saves and loads it too). */
ct_module *test_net_new(uint64_t seed);
ct_module *test_net_new(uint64_t seed)
{
    const int64_t two = 2;
    ct_manual_seed(seed);
    ct_module *net = ct_module_new("Net", test_module_identity, NULL, NULL);
    ct_scope_begin();
    ct_module_register_parameter(net, "w", ct_parameter(ct_ones(&two, 1, CT_FLOAT32), true));
    ct_module *blocks = ct_module_list_new();
    ct_module_list_append(blocks, test_block_new());
    ct_module_list_append(blocks, test_block_new());
    ct_module_register_module(net, "blocks", blocks);
    ct_module *head = ct_sequential_new();
    ct_sequential_append(head, ct_linear_new(3, 2, true));
    ct_sequential_append(head, ct_relu_new());
    ct_module_register_module(net, "head", head);
    ct_module_register_buffer(net, "b0", ct_zeros(&two, 1, CT_FLOAT32));
    ct_scope_end();
    CHECK(ct_error() == NULL);
    return net;
}

/* Checks names[0..n) == want[0..n_want). */
static void test_check_names(const char *what, char **names, int64_t n, const char *const *want,
                             int64_t n_want)
{
    CHECK_MSG(n == n_want, "%s: %lld names, PyTorch has %lld", what, (long long)n,
              (long long)n_want);
    for (int64_t i = 0; i < n && i < n_want; i++) {
        CHECK_MSG(strcmp(names[i], want[i]) == 0, "%s[%lld] = '%s', PyTorch's '%s'", what,
                  (long long)i, names[i], want[i]);
    }
}

#define TEST_N(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static void test_module_names_match_pytorch(void)
{
    ct_module *net = test_net_new(1);
    char buf[16][48];
    char *names[16];
    for (int i = 0; i < 16; i++) {
        names[i] = buf[i];
    }
    int64_t n = ct_module_named_parameters(net, names, sizeof buf[0], NULL, 16);
    test_check_names("named_parameters", names, n, g_net_param_names, TEST_N(g_net_param_names));
    n = ct_module_named_buffers(net, names, sizeof buf[0], NULL, 16);
    test_check_names("named_buffers", names, n, g_net_buffer_names, TEST_N(g_net_buffer_names));
    ct_module *mods[16];
    n = ct_module_named_modules(net, names, sizeof buf[0], mods, 16);
    test_check_names("named_modules", names, n, g_net_module_names, TEST_N(g_net_module_names));
    CHECK(mods[0] == net && mods[1] == ct_module_get_submodule(net, "blocks"));
    CHECK(mods[5] == ct_module_get_submodule(net, "blocks.1.fc"));
    CHECK(strcmp(ct_module_name(mods[5]), "Linear") == 0);
    ct_state_dict *sd = ct_module_state_dict(net);
    n = ct_state_dict_len(sd);
    for (int64_t i = 0; i < n && i < 16; i++) {
        snprintf(names[i], sizeof buf[0], "%s", ct_state_dict_key(sd, i));
    }
    test_check_names("state_dict", names, n, g_net_state_keys, TEST_N(g_net_state_keys));
    ct_state_dict_free(sd);
    /* buffers: all 7 (the non-persistent ones too); children: the direct ones */
    ct_tensor *bufs[8];
    CHECK(ct_module_buffers(net, bufs, 8) == 7);
    CHECK(bufs[3] == ct_module_get_parameter(net, "blocks.0.count"));
    ct_module *kids[4];
    CHECK(ct_module_children(net, kids, 4) == 2);
    CHECK(kids[1] == ct_module_get_submodule(net, "head"));
    CHECK(ct_module_children(net, NULL, 0) == 2);
    CHECK(ct_module_get_submodule(net, "") == net);
    CHECK(ct_module_get_submodule(net, "blocks.2") == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "ModuleList has no attribute `2`");
    ct_module_free(net);
}

static void test_module_state_dict_shares_storage(void)
{
    ct_module *net = test_net_new(1);
    ct_state_dict *sd = ct_module_state_dict(net);
    ct_tensor *w = ct_state_dict_get(sd, "w");
    ct_tensor *param = ct_module_get_parameter(net, "w");
    CHECK(w && w != param && ct_data_ptr(w) == ct_data_ptr(param));
    CHECK(!ct_requires_grad(w) && ct_requires_grad(param)); /* detached, as PyTorch's */
    CHECK(ct_tensor_dtype(ct_state_dict_get(sd, "blocks.0.count")) == CT_INT64);
    CHECK(!ct_state_dict_contains(sd, "blocks.0.tmp"));
    ct_state_dict_free(sd);
    ct_module_free(net);
}

static void test_load_state_dict_strict_errors(void)
{
    /* PyTorch 2.15's message for Sequential(Linear(4, 4)).load_state_dict(
       {'0.weight': zeros(3, 4), 'x': zeros(1)}) */
    static const char want[] =
        "Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "
        "\"0.bias\". \n\tUnexpected key(s) in state_dict: \"x\". \n\tsize mismatch for "
        "0.weight: copying a param with shape torch.Size([3, 4]) from checkpoint, the shape in "
        "current model is torch.Size([4, 4]).";
    const int64_t s34[2] = {3, 4}, one = 1;
    ct_module *seq = ct_sequential_new();
    ct_sequential_append(seq, ct_linear_new(4, 4, true));
    ct_scope_begin();
    ct_state_dict *sd = ct_state_dict_new();
    ct_state_dict_set(sd, "0.weight", ct_zeros(s34, 2, CT_FLOAT32));
    ct_state_dict_set(sd, "x", ct_zeros(&one, 1, CT_FLOAT32));
    ct_incompatible_keys keys;
    CHECK(ct_module_load_state_dict(seq, sd, true, &keys) == CT_ERR_VALUE);
    CHECK_MSG(ct_error() && strstr(ct_error(), want), "message: %s", ct_error());
    ct_error_clear();
    CHECK(keys.n_missing == 1 && strcmp(keys.missing_keys[0], "0.bias") == 0);
    CHECK(keys.n_unexpected == 1 && strcmp(keys.unexpected_keys[0], "x") == 0);
    ct_incompatible_keys_free(&keys);
    CHECK(keys.n_missing == 0 && keys.missing_keys == NULL);
    /* non-strict: a size mismatch is still an error; missing and unexpected are not */
    CHECK(ct_module_load_state_dict(seq, sd, false, NULL) == CT_ERR_VALUE);
    CHECK_MSG(ct_error() && strstr(ct_error(), "for Sequential:\n\tsize mismatch for 0.weight"),
              "message: %s", ct_error());
    ct_error_clear();
    /* a number where a tensor belongs */
    ct_state_dict_set_int(sd, "0.weight", 3);
    CHECK(ct_module_load_state_dict(seq, sd, false, NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "\n\tWhile copying the parameter named \"0.weight\", expected "
                "torch.Tensor or Tensor-like object from checkpoint but received <class 'int'>");
    ct_state_dict_free(sd);
    ct_scope_end();
    ct_module_free(seq);
}

static void test_load_state_dict_non_strict(void)
{
    /* PyTorch: load_state_dict({'0.weight': float64 (4, 4), 'x', '0', '0.bias.z'},
       strict=False) -> missing ['0.bias'], unexpected ['x', '0', '0.bias.z']; the weight
       is copied and converted */
    const int64_t s44[2] = {4, 4}, one = 1;
    ct_module *seq = ct_sequential_new();
    ct_sequential_append(seq, ct_linear_new(4, 4, true));
    ct_scope_begin();
    ct_state_dict *sd = ct_state_dict_new();
    ct_state_dict_set(sd, "0.weight", ct_full(s44, 2, 0.1, CT_FLOAT64));
    ct_state_dict_set(sd, "x", ct_zeros(&one, 1, CT_FLOAT32));
    ct_state_dict_set(sd, "0", ct_zeros(&one, 1, CT_FLOAT32));
    ct_state_dict_set(sd, "0.bias.z", ct_zeros(&one, 1, CT_FLOAT32));
    ct_incompatible_keys keys;
    CHECK(ct_module_load_state_dict(seq, sd, false, &keys) == CT_OK);
    CHECK(keys.n_missing == 1 && strcmp(keys.missing_keys[0], "0.bias") == 0);
    CHECK(keys.n_unexpected == 3);
    if (keys.n_unexpected == 3) {
        CHECK(strcmp(keys.unexpected_keys[0], "x") == 0);
        CHECK(strcmp(keys.unexpected_keys[1], "0") == 0);
        CHECK(strcmp(keys.unexpected_keys[2], "0.bias.z") == 0);
    }
    ct_incompatible_keys_free(&keys);
    ct_tensor *w = ct_module_get_parameter(seq, "0.weight");
    CHECK(ct_tensor_dtype(w) == CT_FLOAT32 && ct_requires_grad(w) && ct_is_leaf(w));
    CHECK(((const float *)ct_data_ptr(w))[5] == 0.1f);
    ct_state_dict_free(sd);
    /* all keys matched; a 0-dim parameter takes a [1] tensor (0.3 checkpoints) */
    ct_module *m = ct_module_new("Scalar", test_module_identity, NULL, NULL);
    ct_module_register_parameter(m, "s", ct_zeros(NULL, 0, CT_FLOAT32));
    sd = ct_state_dict_new();
    ct_state_dict_set(sd, "s", ct_full(&one, 1, 2.5, CT_FLOAT32));
    CHECK(ct_module_load_state_dict(m, sd, true, &keys) == CT_OK);
    CHECK(keys.n_missing == 0 && keys.n_unexpected == 0);
    CHECK(ct_item(ct_module_get_parameter(m, "s")) == 2.5);
    ct_state_dict_free(sd);
    ct_module_free(m);
    ct_scope_end();
    ct_module_free(seq);
}

/* Net's state_dict loads into another Net: every parameter and buffer takes its value. */
static void test_load_state_dict_round_trip(void)
{
    ct_module *a = test_net_new(1), *b = test_net_new(2);
    ct_scope_begin();
    ct_tensor *count = ct_module_get_parameter(a, "blocks.1.count");
    ct_fill_(count, 11.0);
    ct_state_dict *sd = ct_module_state_dict(a);
    CHECK(ct_module_load_state_dict(b, sd, true, NULL) == CT_OK);
    ct_tensor *pa[8], *pb[8];
    int64_t n = ct_module_parameters(a, pa, 8);
    CHECK(n == 7 && ct_module_parameters(b, pb, 8) == 7);
    for (int64_t i = 0; i < n; i++) {
        CHECK(ct_item(ct_all(ct_eq(pa[i], pb[i]))) == 1.0);
        CHECK(ct_data_ptr(pa[i]) != ct_data_ptr(pb[i]));
    }
    CHECK(ct_item_int64(ct_module_get_parameter(b, "blocks.1.count")) == 11);
    ct_state_dict_free(sd);
    ct_scope_end();
    ct_module_free(a);
    ct_module_free(b);
}

static void test_module_requires_grad_apply(void)
{
    ct_module *net = test_net_new(1);
    CHECK(ct_module_requires_grad_(net, false) == net);
    ct_tensor *p[8];
    int64_t n = ct_module_parameters(net, p, 8);
    for (int64_t i = 0; i < n; i++) {
        CHECK(!ct_requires_grad(p[i]));
    }
    ct_module_requires_grad_(ct_module_get_submodule(net, "head"), true);
    CHECK(ct_requires_grad(p[5]) && ct_requires_grad(p[6]) && !ct_requires_grad(p[0]));
    ct_error_clear();
    CHECK(ct_error() == NULL);
    ct_module_free(net);
}

typedef struct test_visits {
    char order[256];
} test_visits;

static void test_record_visit(ct_module *m, void *user)
{
    test_visits *v = (test_visits *)user;
    size_t n = strlen(v->order);
    snprintf(v->order + n, sizeof v->order - n, "%s ", ct_module_name(m));
}

static void test_module_apply_order(void)
{
    /* PyTorch's apply: children first, then the module (post-order) */
    ct_module *net = test_net_new(1);
    test_visits v;
    v.order[0] = '\0';
    CHECK(ct_module_apply(net, test_record_visit, &v) == net);
    CHECK_MSG(strcmp(v.order, "Linear Block Linear Block ModuleList Linear ReLU Sequential Net ")
                  == 0, "order: %s", v.order);
    ct_module_free(net);
}

static void test_module_to_dtype(void)
{
    ct_module *net = test_net_new(1);
    ct_scope_begin();
    ct_tensor *w = ct_module_get_parameter(net, "blocks.0.fc.weight");
    double before = ct_item(ct_sum(ct_to_dtype(w, CT_FLOAT64)));
    ct_tensor *x = ct_ones(ct_sizes(w) + 1, 1, CT_FLOAT32);
    ct_backward(ct_sum(ct_linear_forward(ct_module_get_submodule(net, "blocks.0.fc"), x)), NULL,
                false);
    CHECK(ct_grad(w) && ct_tensor_dtype(ct_grad(w)) == CT_FLOAT32);
    CHECK(ct_module_to(net, CT_FLOAT64) == net);
    CHECK(ct_module_get_parameter(net, "blocks.0.fc.weight") == w); /* the same object */
    CHECK(ct_tensor_dtype(w) == CT_FLOAT64 && ct_requires_grad(w) && ct_is_leaf(w));
    CHECK(ct_tensor_dtype(ct_grad(w)) == CT_FLOAT64);
    CHECK(ct_item(ct_sum(w)) == before);
    CHECK(ct_tensor_dtype(ct_module_get_parameter(net, "blocks.0.tmp")) == CT_FLOAT64);
    CHECK(ct_tensor_dtype(ct_module_get_parameter(net, "blocks.0.count")) == CT_INT64);
    CHECK(ct_item_int64(ct_module_get_parameter(net, "blocks.0.count")) == 7);
    /* the module still computes, in float64 */
    ct_tensor *y = ct_module_forward(ct_module_get_submodule(net, "head"),
                                     ct_ones(ct_sizes(w) + 1, 1, CT_FLOAT64));
    CHECK(y && ct_tensor_dtype(y) == CT_FLOAT64);
    CHECK(ct_module_to(net, CT_INT64) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "nn.Module.to only accepts floating point or complex dtypes, "
                "but got desired dtype=torch.int64");
    ct_scope_end();
    ct_module_free(net);
}

/* ---- hooks -------------------------------------------------------------------------- */
typedef struct test_hook_log {
    char calls[64];
    const ct_tensor *seen_input;
} test_hook_log;

static void test_log(test_hook_log *log, const char *s)
{
    size_t n = strlen(log->calls);
    snprintf(log->calls + n, sizeof log->calls - n, "%s", s);
}

static ct_tensor *test_pre_double(ct_module *m, const ct_tensor *x, void *user)
{
    (void)m;
    test_log((test_hook_log *)user, "p");
    return ct_mul_scalar(x, 2.0);
}

static ct_tensor *test_pre_keep(ct_module *m, const ct_tensor *x, void *user)
{
    (void)m;
    (void)x;
    test_log((test_hook_log *)user, "k");
    return NULL;
}

static ct_tensor *test_post_add(ct_module *m, const ct_tensor *x, const ct_tensor *y, void *user)
{
    test_hook_log *log = (test_hook_log *)user;
    (void)m;
    log->seen_input = x;
    test_log(log, "h");
    return ct_add_scalar(y, 100.0);
}

static ct_tensor *test_post_fail(ct_module *m, const ct_tensor *x, const ct_tensor *y, void *user)
{
    (void)m;
    (void)y;
    test_log((test_hook_log *)user, "f");
    return ct_reshape(x, NULL, 0); /* a (3,) input cannot become 0-dim: an error */
}

static void test_module_forward_hooks(void)
{
    const int64_t three = 3;
    test_hook_log log;
    memset(&log, 0, sizeof log);
    ct_module *relu = ct_relu_new();
    ct_scope_begin();
    ct_tensor *x = ct_arange(-1, 2, 1, CT_FLOAT32); /* -1, 0, 1 */
    ct_hook_handle h1 = ct_module_register_forward_pre_hook(relu, test_pre_double, &log);
    ct_hook_handle h2 = ct_module_register_forward_pre_hook(relu, test_pre_keep, &log);
    ct_hook_handle h3 = ct_module_register_forward_hook(relu, test_post_add, &log);
    CHECK(h1.module == relu && h1.id > 0 && h2.id != h1.id && h3.id != h2.id);
    ct_tensor *y = ct_module_forward(relu, x); /* relu(2x) + 100 */
    static const double want[3] = {100, 100, 102};
    CHECK_TENSOR(y, want, 3, 0, 0);
    CHECK(strcmp(log.calls, "pkh") == 0);
    CHECK(log.seen_input != x); /* the forward hook sees the pre-hook's replacement */
    /* inside a Sequential (no Linear+ReLU fusion around a hooked module) */
    ct_module *seq = ct_sequential_new();
    ct_sequential_append(seq, ct_linear_new(3, 3, false));
    ct_tensor *wt = ct_module_get_parameter(seq, "0.weight");
    ct_no_grad_begin();
    ct_copy_(wt, ct_eye(3, 3, CT_FLOAT32));
    ct_no_grad_end();
    ct_sequential_append(seq, ct_relu_new());
    ct_hook_handle hs = ct_module_register_forward_hook(ct_module_child(seq, 1), test_post_add,
                                                        &log);
    static const double want_seq[3] = {100, 100, 101}, plain[3] = {0, 0, 1};
    CHECK_TENSOR(ct_module_forward(seq, x), want_seq, 3, 0, 0);
    ct_hook_handle_remove(&hs);
    CHECK_TENSOR(ct_module_forward(seq, x), plain, 3, 0, 0);
    ct_module_free(seq);
    /* removal, twice (a no-op) */
    ct_hook_handle_remove(&h1);
    ct_hook_handle_remove(&h1);
    CHECK(h1.id == 0);
    log.calls[0] = '\0';
    CHECK_TENSOR(ct_module_forward(relu, x), want_seq, 3, 0, 0);
    CHECK(strcmp(log.calls, "kh") == 0);
    /* a hook's error stops the call */
    ct_hook_handle hf = ct_module_register_forward_hook(relu, test_post_fail, &log);
    CHECK(ct_module_forward(relu, x) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_reshape");
    ct_hook_handle_remove(&hf);
    ct_hook_handle_remove(&h2);
    ct_hook_handle_remove(&h3);
    CHECK_TENSOR(ct_module_forward(relu, x), plain, 3, 0, 0);
    (void)three;
    ct_scope_end();
    ct_module_free(relu);
}

typedef struct test_bw_log {
    int calls;
    bool had_input;
    ct_tensor *grad_input, *grad_output; /* retained copies */
    double scale;                        /* replacement: grad_input * scale (0: keep) */
} test_bw_log;

static ct_tensor *test_bw_hook(ct_module *m, const ct_tensor *gi, const ct_tensor *go, void *user)
{
    test_bw_log *log = (test_bw_log *)user;
    (void)m;
    log->calls++;
    log->had_input = gi != NULL;
    ct_release(log->grad_input);
    ct_release(log->grad_output);
    log->grad_input = gi ? ct_retain(ct_clone(gi)) : NULL;
    log->grad_output = ct_retain(ct_clone(go));
    return gi && log->scale != 0 ? ct_mul_scalar(gi, log->scale) : NULL;
}

/* Module.register_full_backward_hook: grad_output is d loss / d y, grad_input d loss / d x
   (= grad_output @ W for a Linear); a returned tensor replaces grad_input. */
static void test_module_full_backward_hook(void)
{
    const int64_t xs[2] = {4, 3}, gs[2] = {4, 2};
    test_bw_log log;
    memset(&log, 0, sizeof log);
    ct_manual_seed(0);
    ct_module *lin = ct_linear_new(3, 2, true);
    ct_hook_handle h = ct_module_register_full_backward_hook(lin, test_bw_hook, &log);
    ct_scope_begin();
    ct_tensor *gy = ct_reshape(ct_arange(0, 8, 1, CT_FLOAT32), gs, 2);
    ct_tensor *w = ct_module_get_parameter(lin, "weight");
    for (int pass = 0; pass < 3; pass++) {
        log.scale = pass == 1 ? 2.0 : 0.0;
        ct_tensor *x = ct_requires_grad_(ct_ones(xs, 2, CT_FLOAT32), pass < 2);
        ct_tensor *y = ct_module_forward(lin, x);
        CHECK(ct_backward(ct_sum(ct_mul(y, gy)), NULL, false) == CT_OK);
        CHECK(log.calls == pass + 1 && log.had_input == (pass < 2));
        CHECK(log.grad_output && ct_item(ct_all(ct_eq(log.grad_output, gy))) == 1.0);
        ct_tensor *want = ct_matmul(gy, w);
        if (pass < 2) {
            CHECK(log.grad_input && ct_item(ct_all(ct_eq(log.grad_input, want))) == 1.0);
            ct_tensor *xg = ct_grad(x);
            CHECK(xg && ct_item(ct_all(ct_eq(xg, ct_mul_scalar(want, pass ? 2.0 : 1.0)))) == 1.0);
        }
    }
    ct_hook_handle_remove(&h);
    ct_tensor *x = ct_requires_grad_(ct_ones(xs, 2, CT_FLOAT32), true);
    ct_backward(ct_sum(ct_module_forward(lin, x)), NULL, false);
    CHECK(log.calls == 3);
    ct_release(log.grad_input);
    ct_release(log.grad_output);
    ct_scope_end();
    ct_module_free(lin);
}

/* ---- containers --------------------------------------------------------------------- */
static void test_module_containers(void)
{
    const int64_t two = 2;
    ct_module *list = ct_module_list_new();
    CHECK(ct_module_list_append(list, ct_relu_new()) == list);
    CHECK(ct_module_list_append(list, ct_linear_new(2, 2, true)) == list);
    CHECK(ct_module_num_children(list) == 2 && ct_module_get_parameter(list, "1.bias"));
    ct_scope_begin();
    CHECK(ct_module_forward(list, ct_ones(&two, 1, CT_FLOAT32)) == NULL);
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "Module [ModuleList] is missing the required \"forward\" "
                "function");
    ct_module *dict = ct_module_dict_new();
    CHECK(ct_module_dict_set(dict, "act", ct_relu_new()) == CT_OK);
    CHECK(ct_module_dict_set(dict, "fc", ct_linear_new(2, 2, true)) == CT_OK);
    CHECK(ct_module_dict_set(dict, "act", ct_tanh_new()) == CT_OK); /* replaced in place */
    CHECK(strcmp(ct_module_name(ct_module_dict_get(dict, "act")), "Tanh") == 0);
    CHECK(ct_module_child(dict, 0) == ct_module_dict_get(dict, "act"));
    CHECK(ct_module_dict_get(dict, "nope") == NULL && ct_error() == NULL);
    CHECK(ct_module_dict_set(dict, "a.b", ct_relu_new()) == CT_ERR_VALUE);
    ct_error_clear();
    ct_module *plist = ct_parameter_list_new();
    CHECK(ct_parameter_list_append(plist, ct_zeros(&two, 1, CT_FLOAT32)) == CT_OK);
    CHECK(ct_parameter_list_append(plist, ct_ones(&two, 1, CT_FLOAT32)) == CT_OK);
    CHECK(ct_module_parameters(plist, NULL, 0) == 2);
    CHECK(ct_requires_grad(ct_module_get_parameter(plist, "1")));
    ct_module_register_module(dict, "params", plist);
    ct_state_dict *sd = ct_module_state_dict(dict);
    CHECK(ct_state_dict_len(sd) == 4);
    CHECK(strcmp(ct_state_dict_key(sd, 3), "params.1") == 0);
    ct_state_dict_free(sd);
    /* ct_parameter shares the data's storage; requires_grad on a non-float fails */
    ct_tensor *data = ct_ones(&two, 1, CT_FLOAT32);
    ct_tensor *p = ct_parameter(data, true);
    CHECK(p && ct_requires_grad(p) && ct_is_leaf(p) && ct_data_ptr(p) == ct_data_ptr(data));
    CHECK(!ct_requires_grad(ct_parameter(data, false)));
    CHECK(ct_parameter(ct_ones(&two, 1, CT_INT64), true) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "only Tensors of floating point dtype can require gradients");
    ct_scope_end();
    ct_module_free(dict);
    ct_module_free(list);
}

/* ---- a user module with two inputs and two outputs (the pattern of module.h) ------------ */
static ct_tensor *my_block_forward(ct_module *m, const ct_tensor *a, const ct_tensor *b,
                                   ct_tensor **out2)
{
    ct_tensor *h = ct_module_forward(ct_module_get_submodule(m, "fc"), a);
    ct_tensor *out = ct_mul(ct_add(h, b), ct_module_get_parameter(m, "scale"));
    *out2 = ct_relu(out);
    return out;
}

static ct_tensor *my_block_single(ct_module *m, const ct_tensor *x)
{
    ct_tensor *unused;
    return my_block_forward(m, x, x, &unused);
}

static ct_module *my_block_new(int64_t n)
{
    ct_module *m = ct_module_new("MyBlock", my_block_single, NULL, NULL);
    ct_module_register_module(m, "fc", ct_linear_new(n, n, true));
    ct_scope_begin();
    ct_module_register_buffer(m, "scale", ct_full(&n, 1, 2.0, CT_FLOAT32));
    ct_scope_end();
    return m;
}

static void test_module_multi_input_user_module(void)
{
    const int64_t shape[2] = {2, 3};
    ct_manual_seed(0);
    ct_module *m = my_block_new(3);
    ct_scope_begin();
    ct_tensor *a = ct_randn(shape, 2, CT_FLOAT32, NULL), *b = ct_randn(shape, 2, CT_FLOAT32, NULL);
    ct_tensor *out2 = NULL;
    ct_tensor *out = my_block_forward(m, a, b, &out2);
    ct_module *fc = ct_module_get_submodule(m, "fc");
    ct_tensor *want = ct_mul_scalar(ct_add(ct_linear_forward(fc, a), b), 2.0);
    CHECK(out && out2 && ct_item(ct_all(ct_eq(out, want))) == 1.0);
    CHECK(ct_item(ct_all(ct_eq(out2, ct_relu(want)))) == 1.0);
    /* backward reaches the submodule's parameters */
    ct_backward(ct_sum(out2), NULL, false);
    CHECK(ct_grad(ct_module_get_parameter(m, "fc.weight")) != NULL);
    /* one input through ct_module_forward, as in a Sequential */
    CHECK(ct_module_forward(m, a) != NULL);
    ct_state_dict *sd = ct_module_state_dict(m);
    CHECK(ct_state_dict_len(sd) == 3 && strcmp(ct_state_dict_key(sd, 0), "scale") == 0);
    ct_state_dict_free(sd);
    ct_scope_end();
    ct_module_free(m);
}

static void test_state_dict_container(void)
{
    const int64_t two = 2;
    ct_state_dict *sd = ct_state_dict_new();
    ct_scope_begin();
    ct_tensor *t = ct_ones(&two, 1, CT_FLOAT32);
    CHECK(ct_state_dict_set(sd, "b", t) == CT_OK);
    CHECK(ct_state_dict_set_int(sd, "a.step", 12) == CT_OK);
    CHECK(ct_state_dict_set_double(sd, "a.lr", 0.1) == CT_OK);
    CHECK(ct_state_dict_set_string(sd, "name", "adam") == CT_OK);
    CHECK(ct_state_dict_set(sd, "b", t) == CT_OK); /* replacing with itself keeps it alive */
    CHECK(ct_state_dict_len(sd) == 4 && strcmp(ct_state_dict_key(sd, 0), "b") == 0);
    CHECK(ct_state_dict_get(sd, "b") == t && ct_state_dict_get(sd, "a.step") == NULL);
    int64_t iv = 0;
    double dv = 0;
    CHECK(ct_state_dict_get_int(sd, "a.step", &iv) && iv == 12);
    CHECK(ct_state_dict_get_double(sd, "a.lr", &dv) && dv == 0.1);
    CHECK(ct_state_dict_get_double(sd, "a.step", &dv) && dv == 12.0);
    CHECK(!ct_state_dict_get_int(sd, "a.lr", &iv) && !ct_state_dict_get_int(sd, "name", &iv));
    CHECK(strcmp(ct_state_dict_get_string(sd, "name"), "adam") == 0);
    CHECK(ct_state_dict_kind(sd, "a.lr") == CT_STATE_DOUBLE);
    CHECK(ct_state_dict_kind(sd, "zz") == CT_STATE_NONE);
    CHECK(ct_state_dict_set_int(sd, "b", 3) == CT_OK); /* a tensor replaced by a number */
    CHECK(ct_state_dict_kind(sd, "b") == CT_STATE_INT);
    CHECK(strcmp(ct_state_dict_key(sd, 0), "b") == 0);
    CHECK(ct_state_dict_set_string(sd, "n2", "17") == CT_OK);
    CHECK(ct_state_dict_get_int(sd, "n2", &iv) && iv == 17);
    CHECK(ct_state_dict_remove(sd, "a.step") == CT_OK && ct_state_dict_len(sd) == 4);
    CHECK(strcmp(ct_state_dict_key(sd, 1), "a.lr") == 0 && ct_state_dict_key(sd, 9) == NULL);
    CHECK(ct_state_dict_remove(sd, "a.step") == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "KeyError: 'a.step'");
    CHECK(ct_state_dict_set_int(sd, "", 1) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "keys must not be empty");
    ct_scope_end();
    ct_state_dict_free(sd);
}

void test_module(void)
{
    RUN(test_module_names_match_pytorch);
    RUN(test_module_state_dict_shares_storage);
    RUN(test_load_state_dict_strict_errors);
    RUN(test_load_state_dict_non_strict);
    RUN(test_load_state_dict_round_trip);
    RUN(test_module_requires_grad_apply);
    RUN(test_module_apply_order);
    RUN(test_module_to_dtype);
    RUN(test_module_forward_hooks);
    RUN(test_module_full_backward_hook);
    RUN(test_module_containers);
    RUN(test_module_multi_input_user_module);
    RUN(test_state_dict_container);
}
