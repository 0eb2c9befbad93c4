/* tests/test_safetensors.c - ct_save / ct_load against files safetensors.torch.save_file wrote
 * (tools/gen_fixture_safetensors.py -> tests/golden/safetensors/): the same values loaded,
 * the same bytes written; every dtype round trip; the mmap path; hostile files.
 */
#include "test.h"
#include "golden/module_golden.h"

#include <stdlib.h>

#define ST_DIR "golden/safetensors/"
#define ST_TMP "../build/test_safetensors.tmp"

ct_module *test_net_new(uint64_t seed); /* tests/test_module.c: the tool's Net */

static unsigned char *st_read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    *n = 0;
    if (!f) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = (unsigned char *)malloc((size_t)(len > 0 ? len : 1));
    *n = buf ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    return buf;
}

/* ct_save_buffer(sd) has exactly the bytes of the file at path. */
static void st_check_same_bytes(const ct_state_dict *sd, const char *path)
{
    size_t n_file;
    unsigned char *file = st_read_file(path, &n_file);
    CHECK_MSG(file != NULL, "cannot read %s (run tools/gen_fixture_safetensors.py)", path);
    size_t n = ct_save_buffer(sd, NULL, 0);
    unsigned char *mine = (unsigned char *)malloc(n ? n : 1);
    CHECK(ct_save_buffer(sd, mine, n) == n);
    CHECK_MSG(file && n == n_file && memcmp(mine, file, n) == 0,
              "%s: ctorch writes %zu bytes, safetensors wrote %zu (or they differ)", path, n,
              n_file);
    free(mine);
    free(file);
}

/* Every tensor of a equals the one of the same name in b (same dtype and values). */
static void st_check_equal(const ct_state_dict *a, const ct_state_dict *b)
{
    CHECK(ct_state_dict_len(a) == ct_state_dict_len(b));
    ct_scope_begin();
    for (int64_t i = 0; i < ct_state_dict_len(a); i++) {
        const char *k = ct_state_dict_key(a, i);
        ct_tensor *x = ct_state_dict_get(a, k), *y = ct_state_dict_get(b, k);
        if (!x) {
            CHECK_MSG(ct_state_dict_kind(b, k) != CT_STATE_NONE, "%s missing", k);
            continue;
        }
        CHECK_MSG(y && ct_tensor_dtype(x) == ct_tensor_dtype(y), "%s: dtype", k);
        CHECK_MSG(y && ct_numel(x) == ct_numel(y) && ct_dim(x) == ct_dim(y), "%s: shape", k);
        if (y && ct_numel(x) > 0 && ct_tensor_dtype(x) == ct_tensor_dtype(y)) {
            ct_tensor *cx = ct_contiguous(x), *cy = ct_contiguous(y);
            CHECK_MSG(memcmp(ct_data_ptr(cx), ct_data_ptr(cy), ct_nbytes(cx)) == 0, "%s: values",
                      k);
        }
    }
    ct_scope_end();
}

/* PyTorch's Sequential(Linear(4, 3), ReLU(), Linear(3, 2)) after manual_seed(0): ctorch's has
   the same initial weights, so its state_dict saves to the same bytes; the file loads into a
   model built from another seed, through each loader. */
static void test_safetensors_mlp_matches_pytorch(void)
{
    ct_module *m[2];
    for (int k = 0; k < 2; k++) {
        ct_manual_seed(k ? 5 : 0);
        m[k] = ct_sequential_new();
        ct_sequential_append(m[k], ct_linear_new(4, 3, true));
        ct_sequential_append(m[k], ct_relu_new());
        ct_sequential_append(m[k], ct_linear_new(3, 2, true));
    }
    ct_state_dict *want = ct_module_state_dict(m[0]);
    st_check_same_bytes(want, ST_DIR "mlp.safetensors");
    for (int loader = 0; loader < 3; loader++) {
        ct_state_dict *sd = loader == 0 ? ct_load(ST_DIR "mlp.safetensors")
                          : loader == 1 ? ct_load_mmap(ST_DIR "mlp.safetensors") : NULL;
        if (loader == 2) {
            size_t n;
            unsigned char *bytes = st_read_file(ST_DIR "mlp.safetensors", &n);
            sd = bytes ? ct_load_buffer(bytes, n) : NULL;
            free(bytes);
        }
        CHECK_MSG(sd != NULL, "loader %d: %s", loader, ct_error() ? ct_error() : "");
        ct_error_clear();
        /* the file's order: by dtype, then name */
        CHECK(sd && strcmp(ct_state_dict_key(sd, 0), "0.bias") == 0);
        CHECK(ct_module_load_state_dict(m[1], sd, true, NULL) == CT_OK);
        ct_state_dict *got = ct_module_state_dict(m[1]);
        st_check_equal(want, got);
        ct_state_dict_free(got);
        ct_state_dict_free(sd);
        ct_no_grad_begin();
        ct_fill_(ct_module_get_parameter(m[1], "2.bias"), 0.0); /* the next loader sets it */
        ct_no_grad_end();
    }
    ct_state_dict_free(want);
    ct_module_free(m[0]);
    ct_module_free(m[1]);
}

/* The tool's Net (parameters, float and int64 buffers, a non-persistent one) with metadata
   {"format": "pt"}: the same bytes; loading sets every entry; ct_module_save's file is read
   back by ct_module_load. */
static void test_safetensors_nested_matches_pytorch(void)
{
    ct_module *a = test_net_new(1), *b = test_net_new(3);
    ct_state_dict *want = ct_module_state_dict(a);
    ct_state_dict_set_string(want, "format", "pt");
    st_check_same_bytes(want, ST_DIR "nested.safetensors");
    ct_state_dict *sd = ct_load_mmap(ST_DIR "nested.safetensors");
    CHECK(sd && strcmp(ct_state_dict_get_string(sd, "format"), "pt") == 0);
    ct_incompatible_keys keys;
    CHECK(ct_module_load_state_dict(b, sd, false, &keys) == CT_OK);
    CHECK(keys.n_missing == 0 && keys.n_unexpected == 1); /* the metadata entry */
    CHECK(keys.n_unexpected == 1 && strcmp(keys.unexpected_keys[0], "format") == 0);
    ct_incompatible_keys_free(&keys);
    ct_state_dict_free(sd);
    ct_state_dict *got = ct_module_state_dict(b);
    ct_state_dict_set_string(got, "format", "pt");
    st_check_equal(want, got);
    ct_state_dict_free(got);
    /* ct_module_save / ct_module_load */
    ct_module *c = test_net_new(4);
    CHECK(ct_module_save(a, ST_TMP) == CT_OK);
    CHECK(ct_module_load(c, ST_TMP, true, NULL) == CT_OK);
    got = ct_module_state_dict(c);
    ct_state_dict_set_string(got, "format", "pt");
    st_check_equal(want, got);
    ct_state_dict_free(got);
    remove(ST_TMP);
    ct_state_dict_free(want);
    ct_module_free(a);
    ct_module_free(b);
    ct_module_free(c);
}

/* One tensor of each dtype, a 0-dim and an empty one, and escaped metadata: PyTorch's values;
   written back, the same bytes. */
static void test_safetensors_dtypes_file(void)
{
    static const char note[] = "a \"quoted\"\ttab\xc3\xa9\\/\x01\n\xe2\x82\xac\xf0\x9f\x98\x80";
    static const ct_dtype dtypes[10] = {CT_BFLOAT16, CT_BOOL, CT_FLOAT16, CT_FLOAT32, CT_FLOAT64,
                                        CT_INT16, CT_INT32, CT_INT64, CT_INT8, CT_UINT8};
    ct_state_dict *sd = ct_load(ST_DIR "dtypes.safetensors");
    CHECK_MSG(sd != NULL, "%s", ct_error() ? ct_error() : "");
    if (!sd) {
        ct_error_clear();
        return;
    }
    CHECK(ct_state_dict_len(sd) == 13);
    CHECK(strcmp(ct_state_dict_get_string(sd, "note"), note) == 0);
    ct_scope_begin();
    for (int i = 0; i < 10; i++) {
        ct_tensor *t = ct_state_dict_get(sd, g_dtype_keys[i]);
        CHECK_MSG(t && ct_tensor_dtype(t) == dtypes[i], "%s", g_dtype_keys[i]);
        CHECK(t && ct_dim(t) == 2 && ct_size(t, 0) == 2 && ct_size(t, 1) == 3);
        CHECK_TENSOR(ct_to_dtype(t, CT_FLOAT64), g_dtype_values + 6 * i, 6, 0, 0);
    }
    ct_tensor *s = ct_state_dict_get(sd, "scalar"), *e = ct_state_dict_get(sd, "empty");
    CHECK(s && ct_dim(s) == 0 && ct_item(s) == 2.5);
    CHECK(e && ct_dim(e) == 2 && ct_size(e, 0) == 0 && ct_size(e, 1) == 3);
    ct_scope_end();
    st_check_same_bytes(sd, ST_DIR "dtypes.safetensors");
    ct_state_dict_free(sd);
}

/* Every dtype, a transposed (non-contiguous) tensor and numbers, through the buffer, ct_save
   + ct_load and ct_load_mmap: the same tensors, and numbers back exactly. */
static void test_safetensors_round_trip(void)
{
    static const ct_dtype dtypes[10] = {CT_BOOL, CT_UINT8, CT_INT8, CT_INT16, CT_INT32,
                                        CT_INT64, CT_FLOAT32, CT_FLOAT64, CT_FLOAT16, CT_BFLOAT16};
    const int64_t shape[2] = {3, 5};
    ct_state_dict *sd = ct_state_dict_new();
    ct_scope_begin();
    for (int i = 0; i < 10; i++) {
        char key[32];
        snprintf(key, sizeof key, "layer.%d.%s", i, ct_dtype_name(dtypes[i]));
        ct_tensor *v = ct_add_scalar(ct_mul_scalar(ct_randn(shape, 2, CT_FLOAT64, NULL), 30), 3);
        ct_state_dict_set(sd, key, ct_to_dtype(dtypes[i] == CT_UINT8 ? ct_abs(v) : v, dtypes[i]));
    }
    ct_state_dict_set(sd, "t.transposed", ct_transpose(ct_randn(shape, 2, CT_FLOAT32, NULL), 0, 1));
    ct_state_dict_set_int(sd, "step", -9007199254740993LL);
    ct_state_dict_set_double(sd, "lr", 0.1);
    ct_state_dict_set_double(sd, "tiny", -2.5e-300);
    ct_state_dict_set_string(sd, "z", "");
    size_t n = ct_save_buffer(sd, NULL, 0);
    CHECK(n > 0);
    unsigned char *buf = (unsigned char *)malloc(n);
    CHECK(ct_save_buffer(sd, buf, n - 1) == n); /* too small: the size, nothing written */
    CHECK(ct_save_buffer(sd, buf, n) == n);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) {
        hlen = (hlen << 8) | buf[i];
    }
    CHECK(hlen % 8 == 0 && hlen < n && buf[8] == '{');
    CHECK(hlen < n && (buf[8 + hlen - 1] == '}' || buf[8 + hlen - 1] == ' '));
    ct_state_dict *back[3];
    back[0] = ct_load_buffer(buf, n);
    CHECK(ct_save(sd, ST_TMP) == CT_OK);
    back[1] = ct_load(ST_TMP);
    back[2] = ct_load_mmap(ST_TMP);
    remove(ST_TMP); /* the mapping outlives the file's name */
    for (int k = 0; k < 3; k++) {
        CHECK_MSG(back[k] != NULL, "loader %d", k);
        if (!back[k]) {
            continue;
        }
        st_check_equal(sd, back[k]);
        int64_t step = 0;
        double lr = 0, tiny = 0;
        CHECK(ct_state_dict_get_int(back[k], "step", &step) && step == -9007199254740993LL);
        CHECK(ct_state_dict_get_double(back[k], "lr", &lr) && lr == 0.1);
        CHECK(ct_state_dict_get_double(back[k], "tiny", &tiny) && tiny == -2.5e-300);
        CHECK(strcmp(ct_state_dict_get_string(back[k], "z"), "") == 0);
        /* saved again: the same bytes (metadata keys sorted) */
        size_t n2 = ct_save_buffer(back[k], NULL, 0);
        unsigned char *buf2 = (unsigned char *)malloc(n2);
        CHECK(n2 == n && ct_save_buffer(back[k], buf2, n2) == n && memcmp(buf, buf2, n) == 0);
        free(buf2);
        ct_state_dict_free(back[k]);
    }
    ct_scope_end();
    free(buf);
    ct_state_dict_free(sd);
}

/* ct_load_mmap's tensors borrow the mapping: they outlive the state_dict, writing them does
   not write the file, and they work as any tensor (autograd included). */
static void test_safetensors_mmap_lifetime(void)
{
    const int64_t shape[2] = {4, 4};
    ct_state_dict *sd = ct_state_dict_new();
    ct_scope_begin();
    ct_state_dict_set(sd, "w", ct_full(shape, 2, 1.5, CT_FLOAT32));
    CHECK(ct_save(sd, ST_TMP) == CT_OK);
    ct_scope_end();
    ct_state_dict_free(sd);
    sd = ct_load_mmap(ST_TMP);
    ct_tensor *w = ct_retain(ct_state_dict_get(sd, "w"));
    ct_state_dict_free(sd);
    CHECK(w && ((const float *)ct_data_ptr(w))[15] == 1.5f);
    ct_fill_(w, 4.0);
    ct_scope_begin();
    ct_requires_grad_(w, true);
    ct_backward(ct_sum(ct_mul(w, w)), NULL, false);
    CHECK(ct_grad(w) && ct_item(ct_sum(ct_grad(w))) == 16 * 8.0);
    ct_scope_end();
    ct_release(w);
    sd = ct_load(ST_TMP); /* the file still holds 1.5 */
    ct_scope_begin();
    CHECK(sd && ct_item(ct_sum(ct_state_dict_get(sd, "w"))) == 16 * 1.5);
    ct_scope_end();
    ct_state_dict_free(sd);
    remove(ST_TMP);
}

/* A checkpoint of a model's state, an optimizer-like entry and counters: saved, loaded, and
   the model part restored into another model. */
static void test_safetensors_checkpoint(void)
{
    ct_module *a = test_net_new(1), *b = test_net_new(2);
    ct_checkpoint_dict *ck = ct_state_dict_new();
    ct_state_dict *model = ct_module_state_dict(a);
    CHECK(ct_state_dict_update(ck, model, "model.") == CT_OK);
    ct_scope_begin();
    ct_state_dict_set(ck, "optim.state.0.exp_avg", ct_zeros_like(ct_state_dict_get(model, "w")));
    ct_scope_end();
    ct_state_dict_set_int(ck, "optim.state.0.step", 12);
    ct_state_dict_set_double(ck, "optim.param_groups.0.lr", 3e-4);
    ct_state_dict_set_int(ck, "epoch", 4);
    CHECK(ct_state_dict_len(ck) == 16);
    CHECK(ct_checkpoint_dict_save(ck, ST_TMP) == CT_OK);
    ct_checkpoint_dict *back = ct_checkpoint_dict_load(ST_TMP);
    remove(ST_TMP);
    ct_state_dict *sel = ct_state_dict_select(back, "model.");
    CHECK(sel && ct_state_dict_len(sel) == 12);
    CHECK(sel && strcmp(ct_state_dict_key(sel, 0), "blocks.0.count") == 0);
    CHECK(ct_module_load_state_dict(b, sel, true, NULL) == CT_OK);
    ct_state_dict *got = ct_module_state_dict(b);
    st_check_equal(model, got);
    int64_t epoch = 0, step = 0;
    double lr = 0;
    CHECK(ct_state_dict_get_int(back, "epoch", &epoch) && epoch == 4);
    CHECK(ct_state_dict_get_int(back, "optim.state.0.step", &step) && step == 12);
    CHECK(ct_state_dict_get_double(back, "optim.param_groups.0.lr", &lr) && lr == 3e-4);
    CHECK(ct_state_dict_get(back, "optim.state.0.exp_avg") != NULL);
    /* update of a dict with itself: every entry again, under the prefix */
    CHECK(ct_state_dict_update(got, got, "copy.") == CT_OK && ct_state_dict_len(got) == 24);
    CHECK(ct_state_dict_get(got, "copy.w") == ct_state_dict_get(got, "w"));
    ct_state_dict_free(got);
    ct_state_dict_free(sel);
    ct_state_dict_free(back);
    ct_state_dict_free(model);
    ct_state_dict_free(ck);
    ct_module_free(a);
    ct_module_free(b);
}

static void test_safetensors_save_errors(void)
{
    const int64_t two = 2;
    ct_state_dict *sd = ct_state_dict_new();
    ct_scope_begin();
    ct_state_dict_set(sd, "__metadata__", ct_ones(&two, 1, CT_FLOAT32));
    CHECK(ct_save_buffer(sd, NULL, 0) == 0);
    CHECK_ERROR(CT_ERR_VALUE, "'__metadata__' is reserved");
    ct_state_dict_remove(sd, "__metadata__");
    ct_state_dict_set_string(sd, "bad\xff", "x");
    CHECK(ct_save_buffer(sd, NULL, 0) == 0);
    CHECK_ERROR(CT_ERR_VALUE, "is not valid UTF-8");
    ct_state_dict_remove(sd, "bad\xff");
    ct_state_dict_set_string(sd, "ok", "bad\xc3");
    CHECK(ct_save(sd, ST_TMP) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "metadata value");
    ct_state_dict_remove(sd, "ok");
    CHECK(ct_save(sd, "/nonexistent-ctorch-dir/x.safetensors") == CT_ERR_IO);
    CHECK_ERROR(CT_ERR_IO, "/nonexistent-ctorch-dir/x.safetensors");
    CHECK(ct_load("/nonexistent-ctorch-dir/x.safetensors") == NULL);
    CHECK_ERROR(CT_ERR_IO, "No such file or directory");
    CHECK(ct_load_mmap("/nonexistent-ctorch-dir/x.safetensors") == NULL);
    CHECK_ERROR(CT_ERR_IO, "ct_load_mmap");
    ct_scope_end();
    ct_state_dict_free(sd);
}

/* ---- hostile files ------------------------------------------------------------------ */
/* A file: the 8-byte length of header (or hlen_override when nonzero), header, then data_len
   zero bytes. */
static unsigned char *st_make(const char *header, uint64_t hlen_override, size_t data_len,
                              size_t *n)
{
    size_t h = strlen(header);
    uint64_t hl = hlen_override ? hlen_override : h;
    *n = 8 + h + data_len;
    unsigned char *b = (unsigned char *)calloc(*n, 1);
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(hl >> (8 * i));
    }
    memcpy(b + 8, header, h);
    return b;
}

typedef struct st_hostile {
    const char *header;
    uint64_t hlen; /* 0: the header's length */
    size_t data_len;
    ct_status code;
    const char *msg;
} st_hostile;

#define F32A "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}"
static const st_hostile st_cases[] = {
    {"{" F32A "}", 4096, 8, CT_ERR_FORMAT, "header length 4096 exceeds the 62 bytes left"},
    {"{" F32A "}", 100000001, 8, CT_ERR_FORMAT, "larger than the limit of 100000000 bytes"},
    {"{\"a\xff\":{}}", 0, 0, CT_ERR_FORMAT, "header is not valid UTF-8 (at header byte 3)"},
    {"{\"a\xed\xa0\x80\":{}}", 0, 0, CT_ERR_FORMAT, "not valid UTF-8"},
    {"{\"a\xc0\xaf\":{}}", 0, 0, CT_ERR_FORMAT, "not valid UTF-8"},
    {"{\"a\":{\"dtype\":\"F32\"", 0, 0, CT_ERR_FORMAT, "invalid JSON header: expected ','"},
    {"{\"a", 0, 0, CT_ERR_FORMAT, "unterminated string at header byte 2"},
    {"{\"a\\", 0, 0, CT_ERR_FORMAT, "unterminated string"},
    {"", 0, 0, CT_ERR_FORMAT, "expected '{'"},
    {"[]", 0, 0, CT_ERR_FORMAT, "expected '{' at header byte 0"},
    {"{}x", 0, 0, CT_ERR_FORMAT, "unexpected characters after the JSON object"},
    {"{\"a\":5}", 0, 0, CT_ERR_FORMAT, "expected '{' to open a tensor's info"},
    {"{" F32A "," F32A "}", 0, 8, CT_ERR_FORMAT, "duplicate tensor name 'a'"},
    {"{\"__metadata__\":{},\"__metadata__\":null}", 0, 0, CT_ERR_FORMAT,
     "duplicate key '__metadata__'"},
    {"{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, 0, CT_ERR_FORMAT,
     "duplicate metadata key 'k'"},
    {"{\"__metadata__\":{\"k\":1}}", 0, 0, CT_ERR_FORMAT, "metadata values must be strings"},
    {"{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", 0, 0, CT_ERR_FORMAT,
     "tensor 'a': duplicate field 'dtype'"},
    {"{\"a\":{\"dtype\":\"F32\",\"offsets\":[0,8]}}", 0, 0, CT_ERR_FORMAT,
     "tensor 'a': unknown field 'offsets'"},
    {"{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,8]}}", 0, 8, CT_ERR_FORMAT,
     "tensor 'a': missing field 'shape'"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,100]}}", 0, 8, CT_ERR_FORMAT,
     "tensor 'a': data_offsets [0, 100] are past the end of the data"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 0, 8, CT_ERR_FORMAT,
     "data_offsets [8, 0] end before they begin"},
    {"{" F32A ",\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 0, 12,
     CT_ERR_FORMAT, "tensor 'b': data_offsets [4, 12] leave a hole or overlap: expected it to "
     "begin at 8"},
    {"{" F32A ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[12,16]}}", 0, 16,
     CT_ERR_FORMAT, "tensor 'b': data_offsets [12, 16] leave a hole or overlap"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 0, 8, CT_ERR_FORMAT,
     "tensor 'a': shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4611686018427387904],"
     "\"data_offsets\":[0,8]}}", 0, 8, CT_ERR_FORMAT, "overflows"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,8]}}", 0,
     8, CT_ERR_FORMAT, "integer out of range"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,99999999999999999999]}}", 0,
     8, CT_ERR_FORMAT, "integer out of range"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 0, 8, CT_ERR_FORMAT,
     "expected a non-negative integer"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 0, 8, CT_ERR_FORMAT,
     "expected a non-negative integer"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[02],\"data_offsets\":[0,8]}}", 0, 8, CT_ERR_FORMAT,
     "integer with a leading zero"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4,8]}}", 0, 8, CT_ERR_FORMAT,
     "data_offsets must hold 2 integers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,2],\"data_offsets\":[0,8]}}", 0, 8,
     CT_ERR_UNSUPPORTED, "tensor 'a' has more than 8 dimensions"},
    {"{\"a\":{\"dtype\":\"U16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 0, 4, CT_ERR_DTYPE,
     "tensor 'a' has dtype 'U16', which ctorch does not support"},
    {"{\"a\":{\"dtype\":\"F7\",\"shape\":[2],\"data_offsets\":[0,4]}}", 0, 4, CT_ERR_DTYPE,
     "dtype 'F7'"},
    {"{" F32A "}", 0, 12, CT_ERR_FORMAT,
     "the tensors' data ends at byte 8 of the 12-byte data section"},
    {"{\"\\ud800\":{}}", 0, 0, CT_ERR_FORMAT, "lone leading surrogate"},
    {"{\"\\udc00\":{}}", 0, 0, CT_ERR_FORMAT, "lone trailing surrogate"},
    {"{\"\\u0000\":{}}", 0, 0, CT_ERR_FORMAT, "\\u0000 in a string"},
    {"{\"\\uzz00\":{}}", 0, 0, CT_ERR_FORMAT, "invalid \\u escape"},
    {"{\"\\q\":{}}", 0, 0, CT_ERR_FORMAT, "invalid escape in a string"},
    {"{\"a\nb\":{}}", 0, 0, CT_ERR_FORMAT, "control character in a string"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},}", 0, 8, CT_ERR_FORMAT,
     "expected a tensor name"},
};

static void test_safetensors_hostile_files(void)
{
    for (size_t i = 0; i < sizeof st_cases / sizeof st_cases[0]; i++) {
        const st_hostile *c = &st_cases[i];
        size_t n;
        unsigned char *b = st_make(c->header, c->hlen, c->data_len, &n);
        ct_state_dict *sd = ct_load_buffer(b, n);
        CHECK_MSG(sd == NULL, "case %zu loaded", i);
        ct_state_dict_free(sd);
        CHECK_MSG(ct_error_code() == c->code && ct_error() && strstr(ct_error(), c->msg),
                  "case %zu: %s (%s), want %s '%s'", i, ct_status_str(ct_error_code()),
                  ct_error() ? ct_error() : "no error", ct_status_str(c->code), c->msg);
        ct_error_clear();
        free(b);
    }
    /* the same checks through the file loaders */
    size_t n;
    unsigned char *b = st_make(st_cases[0].header, st_cases[0].hlen, st_cases[0].data_len, &n);
    FILE *f = fopen(ST_TMP, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) {
        fclose(f);
    }
    CHECK(ct_load(ST_TMP) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "ct_load: header length 4096 exceeds");
    CHECK(ct_load_mmap(ST_TMP) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "ct_load_mmap: header length 4096 exceeds");
    free(b);
    /* shorter than the 8-byte length */
    CHECK(ct_load_buffer("abc", 3) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "file of 3 bytes is shorter than the 8-byte header length");
    f = fopen(ST_TMP, "wb");
    CHECK(f && fwrite("abc", 1, 3, f) == 3);
    if (f) {
        fclose(f);
    }
    CHECK(ct_load(ST_TMP) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "file of 3 bytes");
    CHECK(ct_load_mmap(ST_TMP) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "file of 3 bytes");
    remove(ST_TMP);
    /* acceptable: whitespace around the JSON, null metadata, an empty file, a leading space */
    b = st_make(" { \"__metadata__\" : null , " F32A " }  ", 0, 8, &n);
    ct_state_dict *sd = ct_load_buffer(b, n);
    CHECK_MSG(sd && ct_state_dict_len(sd) == 1, "%s", ct_error() ? ct_error() : "");
    ct_error_clear();
    ct_state_dict_free(sd);
    free(b);
}

/* Every truncation of a valid file fails; every single-byte change of its header gives an
   error or a valid state_dict, never a crash (ASan/UBSan under make sanitize). */
static void test_safetensors_mutations(void)
{
    size_t n;
    unsigned char *file = st_read_file(ST_DIR "nested.safetensors", &n);
    CHECK(file != NULL && n > 8);
    if (!file) {
        return;
    }
    for (size_t len = 0; len < n; len++) {
        ct_state_dict *sd = ct_load_buffer(file, len);
        CHECK_MSG(sd == NULL && ct_error_code() == CT_ERR_FORMAT, "truncated at %zu", len);
        ct_state_dict_free(sd);
        ct_error_clear();
    }
    size_t hend = 8 + (size_t)file[0] + ((size_t)file[1] << 8);
    static const unsigned char flips[4] = {0x01, 0x20, 0x80, 0xff};
    int loaded = 0;
    for (size_t i = 0; i < hend && i < n; i++) {
        for (int k = 0; k < 4; k++) {
            file[i] ^= flips[k];
            ct_state_dict *sd = ct_load_buffer(file, n);
            CHECK_MSG(sd != NULL || ct_error() != NULL, "byte %zu ^ %02x", i, flips[k]);
            loaded += sd != NULL;
            ct_state_dict_free(sd);
            ct_error_clear();
            file[i] ^= flips[k];
        }
    }
    CHECK(loaded > 0); /* e.g. a changed letter of a name */
    free(file);
}

void test_safetensors(void)
{
    RUN(test_safetensors_mlp_matches_pytorch);
    RUN(test_safetensors_nested_matches_pytorch);
    RUN(test_safetensors_dtypes_file);
    RUN(test_safetensors_round_trip);
    RUN(test_safetensors_mmap_lifetime);
    RUN(test_safetensors_checkpoint);
    RUN(test_safetensors_save_errors);
    RUN(test_safetensors_hostile_files);
    RUN(test_safetensors_mutations);
}
