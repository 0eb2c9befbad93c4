/* tests/test_readers.c - the NPY, NPZ and CSV readers against files numpy writes
 * (tests/golden/readers_golden.h from tools/gen_golden_readers.py), and hostile inputs: each
 * rejected with its code and message, every truncation of a small file rejected, nothing
 * leaked (the runner's leak check).
 */
#include "test.h"

#include <stdlib.h>

#include "golden/readers_golden.h"

/* Whether t has the case's dtype, shape and (C-ordered, little-endian) bytes. */
static bool readers_matches(const ct_tensor *t, const readers_npy_case *c)
{
    return t && ct_tensor_dtype(t) == c->dtype && ct_test_has_shape(t, c->shape, c->ndim) &&
           ct_is_contiguous(t) && ct_nbytes(t) == c->want_len &&
           (c->want_len == 0 || !memcmp(ct_data_ptr(t), c->want, c->want_len));
}

static void test_readers_npy_numpy_files(void)
{
    size_t n = sizeof readers_npy / sizeof readers_npy[0];
    for (size_t i = 0; i < n; i++) {
        const readers_npy_case *c = &readers_npy[i];
        ct_scope_begin();
        ct_tensor *t = ct_npy_load_buffer(c->file, c->file_len);
        CHECK_MSG(readers_matches(t, c), "npy case %s: %s", c->name,
                  ct_error() ? ct_error() : "wrong dtype, shape or bytes");
        ct_error_clear();
        ct_scope_end();
    }
}

/* Every proper prefix of a file is rejected with an error (no crash, no leak). */
static void test_readers_npy_truncated(void)
{
    const readers_npy_case *c = &readers_npy[0];
    for (size_t k = 0; k < c->file_len; k++) {
        CHECK_MSG(ct_npy_load_buffer(c->file, k) == NULL && ct_error_code() == CT_ERR_FORMAT,
                  "prefix of %zu bytes: %s", k, ct_error() ? ct_error() : "accepted");
        ct_error_clear();
    }
}

/* A format 1.0 .npy file with header dict `dict` and data_bytes bytes 0, 1, 2, ... */
static size_t readers_make_npy(unsigned char *out, const char *dict, size_t data_bytes)
{
    size_t hl = strlen(dict);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(hl & 0xff);
    out[9] = (unsigned char)(hl >> 8);
    memcpy(out + 10, dict, hl);
    for (size_t i = 0; i < data_bytes; i++) {
        out[10 + hl + i] = (unsigned char)i;
    }
    return 10 + hl + data_bytes;
}

static void test_readers_npy_hostile(void)
{
    unsigned char b[256];
    size_t n = readers_make_npy(b, "{'descr': '>i4', 'fortran_order': True, 'shape': (3, 2), }",
                                20);
    CHECK(ct_npy_load_buffer(b, n) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "data has 20 bytes but shape [3, 2] (fortran_order) of >i4 "
                "needs 24 (truncated file)");
    n = readers_make_npy(b, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", 40);
    CHECK(ct_npy_load_buffer(b, n) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "data has 40 bytes but shape [2, 2] (fortran_order)");
    n = readers_make_npy(b, "{'descr': '>u2', 'fortran_order': False, 'shape': (2,), }", 4);
    CHECK(ct_npy_load_buffer(b, n) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "unsupported dtype descr '>u2'");
    n = readers_make_npy(b, "{'descr': '!f4', 'fortran_order': False, 'shape': (2,), }", 8);
    CHECK(ct_npy_load_buffer(b, n) == NULL);
    CHECK_ERROR(CT_ERR_DTYPE, "unsupported dtype descr '!f4'");
    /* '=' and '|' read in the host's order (numpy's meaning) */
    n = readers_make_npy(b, "{'descr': '=i2', 'fortran_order': True, 'shape': (2, 2), }", 8);
    ct_scope_begin();
    ct_tensor *t = ct_npy_load_buffer(b, n);
    const int16_t *v = t ? (const int16_t *)ct_data_ptr(t) : NULL;
    CHECK(v && v[0] == 0x0100 && v[1] == 0x0504 && v[2] == 0x0302 && v[3] == 0x0706);
    ct_scope_end();
    /* a format 2.0 header longer than the 65535-byte limit */
    memcpy(b, "\x93NUMPY\x02\x00\x00\x00\x01\x00", 12);
    CHECK(ct_npy_load_buffer(b, 12) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "header length 65536 exceeds the limit of 65535 bytes");
}

static void test_readers_npy_file(void)
{
    const readers_npy_case *c = &readers_npy[sizeof readers_npy / sizeof readers_npy[0] - 5];
    const char *path = "readers_fortran.tmp.npy";
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(c->file, 1, c->file_len, f) == c->file_len);
    if (f) {
        fclose(f);
    }
    ct_scope_begin();
    CHECK_MSG(readers_matches(ct_npy_load(path), c), "%s", c->name);
    ct_scope_end();
    remove(path);
    CHECK(ct_npy_load("golden/no_such_file.npy") == NULL);
    CHECK_ERROR(CT_ERR_IO, "ct_npy_load: No such file or directory: 'golden/no_such_file.npy'");
    CHECK(ct_npy_load("golden") == NULL);
    CHECK_ERROR(CT_ERR_IO, "Is a directory: 'golden'");
}

/* ct_npy_load_mmap: a native C-ordered array borrows the mapping (writes stay private, the
   tensor outlives the file's name); other arrays are converted copies. */
static void test_readers_npy_mmap(void)
{
    const char *path = "readers_mmap.tmp.npy";
    size_t n = sizeof readers_npy / sizeof readers_npy[0];
    for (size_t i = 0; i < n; i++) {
        const readers_npy_case *c = &readers_npy[i];
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(c->file, 1, c->file_len, f) == c->file_len);
        if (f) {
            fclose(f);
        }
        ct_tensor *t = ct_keep(ct_npy_load_mmap(path));
        CHECK_MSG(readers_matches(t, c), "npy case %s: %s", c->name,
                  ct_error() ? ct_error() : "wrong dtype, shape or bytes");
        ct_error_clear();
        if (t && c->want_len > 0) {
            ((unsigned char *)ct_data_ptr(t))[0] ^= 0x40; /* copy-on-write, never the file */
            ct_scope_begin();
            CHECK_MSG(readers_matches(ct_npy_load(path), c), "%s: the file changed", c->name);
            ct_scope_end();
        }
        remove(path);
        ct_scope_begin(); /* still readable after the file is gone */
        CHECK(t == NULL || ct_numel(ct_contiguous(t)) == ct_numel(t));
        ct_scope_end();
        ct_free(t);
    }
    CHECK(ct_npy_load_mmap("golden/no_such_file.npy") == NULL);
    CHECK_ERROR(CT_ERR_IO, "ct_npy_load_mmap: No such file or directory");
}

/* Checks an archive's members against readers_npz_members, in order. */
static void readers_check_npz(const ct_state_dict *sd, const char *what)
{
    size_t n = sizeof readers_npz_members / sizeof readers_npz_members[0];
    CHECK_MSG(sd && ct_state_dict_len(sd) == (int64_t)n, "%s: %s", what,
              ct_error() ? ct_error() : "wrong member count");
    ct_error_clear();
    for (size_t i = 0; sd && i < n; i++) {
        const readers_npy_case *c = &readers_npz_members[i];
        const char *key = ct_state_dict_key(sd, (int64_t)i);
        CHECK_MSG(key && strcmp(key, c->name) == 0, "%s: member %zu is '%s', want '%s'", what,
                  i, key ? key : "(none)", c->name);
        CHECK_MSG(readers_matches(ct_state_dict_get(sd, c->name), c), "%s: member %s", what,
                  c->name);
    }
}

static void test_readers_npz_numpy_files(void)
{
    ct_state_dict *sd = ct_npz_load_buffer(npz_stored, sizeof npz_stored);
    readers_check_npz(sd, "numpy.savez");
    ct_state_dict_free(sd);
    sd = ct_npz_load_buffer(npz_zip64, sizeof npz_zip64);
    readers_check_npz(sd, "zip64 end records");
    ct_state_dict_free(sd);
    sd = ct_npz_load_buffer(npz_deflated, sizeof npz_deflated);
#ifdef CTORCH_ZLIB
    readers_check_npz(sd, "numpy.savez_compressed");
#else
    CHECK(sd == NULL);
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "reading it needs zlib");
#endif
    ct_state_dict_free(sd);
    const char *path = "readers_npz.tmp.npz";
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(npz_stored, 1, sizeof npz_stored, f) == sizeof npz_stored);
    if (f) {
        fclose(f);
    }
    sd = ct_npz_load(path);
    readers_check_npz(sd, "ct_npz_load");
    ct_state_dict_free(sd);
    remove(path);
    CHECK(ct_npz_load("golden/no_such_file.npz") == NULL);
    CHECK_ERROR(CT_ERR_IO, "ct_npz_load: No such file or directory");
}

static void test_readers_npz_hostile(void)
{
    size_t n = sizeof readers_npz_bad / sizeof readers_npz_bad[0];
    for (size_t i = 0; i < n; i++) {
        const readers_bad_case *c = &readers_npz_bad[i];
        CHECK_MSG(ct_npz_load_buffer(c->file, c->file_len) == NULL, "%s accepted", c->name);
#ifndef CTORCH_ZLIB
        if (strncmp(c->name, "bomb", 4) == 0) {
            CHECK_ERROR(CT_ERR_UNSUPPORTED, "needs zlib");
            continue;
        }
#endif
        CHECK_MSG(ct_error_code() == c->code && ct_error() && strstr(ct_error(), c->msg),
                  "%s: '%s', want '%s'", c->name, ct_error() ? ct_error() : "(none)", c->msg);
        ct_error_clear();
    }
    for (size_t k = 0; k < sizeof npz_stored; k++) {
        CHECK_MSG(ct_npz_load_buffer(npz_stored, k) == NULL && ct_error_code() == CT_ERR_FORMAT,
                  "prefix of %zu bytes: %s", k, ct_error() ? ct_error() : "accepted");
        ct_error_clear();
    }
    CHECK(ct_npz_load_buffer("", 0) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "File is not a zip file");
    unsigned char bad_name[sizeof npz_stored];
    memcpy(bad_name, npz_stored, sizeof bad_name); /* a control character in the name */
    size_t cd = (size_t)npz_stored[sizeof npz_stored - 6] |
                (size_t)npz_stored[sizeof npz_stored - 5] << 8;
    bad_name[cd + 46] = '\t';
    CHECK(ct_npz_load_buffer(bad_name, sizeof bad_name) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "control character");
}

/* ---- CSV ---------------------------------------------------------------------------- */
static void readers_check_names(char **got, int64_t n, const char *const *want, const int *idx)
{
    for (int64_t i = 0; i < n; i++) {
        CHECK_MSG(strcmp(got[i], want[idx[i]]) == 0, "column %lld is '%s', want '%s'",
                  (long long)i, got[i], want[idx[i]]);
    }
}

static void test_readers_csv_golden(void)
{
    /* strings as labels (sorted: cat 0, dog 1), NaN for NA and empty, CRLF and blank lines */
    ct_csv_opts o = ct_csv_defaults();
    o.label = "label";
    ct_csv *c = ct_csv_load_buffer(csv_text_basic, strlen(csv_text_basic), &o);
    CHECK_MSG(c != NULL, "%s", ct_error() ? ct_error() : "");
    if (c) {
        int64_t shape[2] = {3, 3};
        double want[9];
        int idx[3] = {0, 1, 2};
        for (int r = 0; r < 3; r++) {
            for (int k = 0; k < 3; k++) {
                want[r * 3 + k] = csv_cells_basic[r * 4 + k];
            }
        }
        CHECK(c->rows == 3 && ct_test_has_shape(c->data, shape, 2) &&
              ct_tensor_dtype(c->data) == CT_FLOAT32);
        CHECK_TENSOR(c->data, want, 9, 0, 0);
        CHECK(c->num_columns == 3 && c->int64_data == NULL);
        readers_check_names(c->columns, c->num_columns, csv_header_basic, idx);
        const int64_t *lab = (const int64_t *)ct_data_ptr(c->labels);
        CHECK(c->num_classes == 2 && !strcmp(c->classes[0], "cat") &&
              !strcmp(c->classes[1], "dog") && lab[0] == 0 && lab[1] == 1 && lab[2] == 0);
    }
    ct_csv_free(c);
    /* integer labels, an int64 column, float64 */
    const char *ints[1] = {"y"};
    o = ct_csv_defaults();
    o.label = "cls";
    o.dtype = CT_FLOAT64;
    o.int64_columns = ints;
    o.num_int64_columns = 1;
    c = ct_csv_load_buffer(csv_text_ints, strlen(csv_text_ints), &o);
    CHECK_MSG(c != NULL, "%s", ct_error() ? ct_error() : "");
    if (c) {
        double want[3] = {csv_cells_ints[0], csv_cells_ints[3], csv_cells_ints[6]};
        const int64_t *y = (const int64_t *)ct_data_ptr(c->int64_data);
        const int64_t *lab = (const int64_t *)ct_data_ptr(c->labels);
        CHECK(ct_tensor_dtype(c->data) == CT_FLOAT64 && c->num_columns == 1);
        CHECK_TENSOR(c->data, want, 3, 0, 0);
        CHECK(c->num_int64_columns == 1 && !strcmp(c->int64_columns[0], "y") &&
              y[0] == (int64_t)csv_cells_ints[1] && y[1] == -20 && y[2] == 30);
        CHECK(c->num_classes == 0 && c->classes == NULL && lab[0] == 3 && lab[1] == 1 &&
              lab[2] == 3);
    }
    ct_csv_free(c);
    /* another delimiter, quoted fields with line breaks and delimiters, no final newline */
    o = ct_csv_defaults();
    o.delimiter = ';';
    c = ct_csv_load_buffer(csv_text_quoted, strlen(csv_text_quoted), &o);
    CHECK_MSG(c != NULL, "%s", ct_error() ? ct_error() : "");
    if (c) {
        int idx[2] = {0, 1};
        CHECK(c->rows == 2 && c->num_columns == 2);
        CHECK_TENSOR(c->data, csv_cells_quoted, 4, 0, 0);
        readers_check_names(c->columns, 2, csv_header_quoted, idx);
    }
    ct_csv_free(c);
}

/* float32 columns round as numpy.loadtxt(dtype=float32) does (subnormals, ties, spaces), bit
   for bit, whatever the thread's flush-to-zero mode (the runner's main thread flushes) */
static void test_readers_csv_float32_rounding(void)
{
    ct_csv *c = ct_csv_load_buffer(csv_text_round, strlen(csv_text_round), NULL);
    size_t n = sizeof csv_bits_round_f32 / sizeof csv_bits_round_f32[0];
    CHECK(c && c->rows == (int64_t)n && ct_tensor_dtype(c->data) == CT_FLOAT32);
    for (size_t i = 0; c && i < n; i++) {
        uint32_t bits;
        memcpy(&bits, (const float *)ct_data_ptr(c->data) + i, 4);
        CHECK_MSG(bits == csv_bits_round_f32[i], "value %zu: bits 0x%08x, want 0x%08x", i,
                  (unsigned)bits, (unsigned)csv_bits_round_f32[i]);
    }
    ct_csv_free(c);
}

static void test_readers_csv_options(void)
{
    const char text[] = "\xef\xbb\xbf" "1,x,2\n3,y,4\n";
    const char *skip[1] = {"1"};
    ct_csv_opts o = ct_csv_defaults();
    o.header = false;
    o.skip_columns = skip;
    o.num_skip_columns = 1;
    ct_csv *c = ct_csv_load_buffer(text, strlen(text), &o);
    double want[4] = {1, 2, 3, 4};
    CHECK(c && c->rows == 2 && c->num_columns == 2 && !strcmp(c->columns[0], "0") &&
          !strcmp(c->columns[1], "2"));
    CHECK_TENSOR(c ? c->data : NULL, want, 4, 0, 0);
    ct_csv_free(c);
    c = ct_csv_load_buffer("a\n", 2, NULL); /* a header without rows */
    CHECK(c && c->rows == 0 && ct_numel(c->data) == 0);
    ct_csv_free(c);
    ct_csv_free(NULL);
    const char *path = "readers_csv.tmp.csv";
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs(csv_text_ints, f) >= 0);
    if (f) {
        fclose(f);
    }
    c = ct_csv_load(path, NULL);
    CHECK(c && c->rows == 3 && c->num_columns == 3 && c->labels == NULL);
    ct_csv_free(c);
    remove(path);
    CHECK(ct_csv_load("golden/no_such_file.csv", NULL) == NULL);
    CHECK_ERROR(CT_ERR_IO, "ct_csv_load: No such file or directory");
}

#define CSV_REJECT(text, opts, code, substr)                                                \
    do {                                                                                    \
        CHECK(ct_csv_load_buffer(text, sizeof(text) - 1, opts) == NULL);                    \
        CHECK_ERROR(code, substr);                                                          \
    } while (0)

static void test_readers_csv_hostile(void)
{
    CSV_REJECT("a,b\n1,2\n3\n", NULL, CT_ERR_FORMAT, "Expected 2 fields in line 3, saw 1");
    CSV_REJECT("a,b\n1,2\n\n3,4,5\n", NULL, CT_ERR_FORMAT, "Expected 2 fields in line 4, saw 3");
    CSV_REJECT("a,b\n1,\"2\n3,4\n", NULL, CT_ERR_FORMAT,
               "unterminated quoted field starting at line 2, column 2 (EOF inside string)");
    CSV_REJECT("a,b\n1,\"2\"x\n", NULL, CT_ERR_FORMAT,
               "',' expected after the closing quote of the field at line 2, column 2");
    CSV_REJECT("a,b\n1,2\0\n", NULL, CT_ERR_FORMAT, "embedded NUL byte at line 2, column 2");
    CSV_REJECT("a,b\n1,2\n3,abc\n", NULL, CT_ERR_FORMAT,
               "could not convert string 'abc' to float32 at line 3, column 2 ('b')");
    CSV_REJECT("a,b\n1,0x10\n", NULL, CT_ERR_FORMAT, "could not convert string '0x10'");
    CSV_REJECT("a,b\n1,1e\n", NULL, CT_ERR_FORMAT, "could not convert string '1e'");
    CSV_REJECT("", NULL, CT_ERR_FORMAT, "the file is empty");
    ct_csv_opts o = ct_csv_defaults();
    o.missing = CT_CSV_MISSING_ERROR;
    CSV_REJECT("a,b\n1,2\n3,NA\n", &o, CT_ERR_FORMAT, "missing value at line 3, column 2 ('b')");
    o = ct_csv_defaults();
    o.label = "b";
    CSV_REJECT("a,b\n1,2\n3,\n", &o, CT_ERR_FORMAT, "missing value in the label column at line 3");
    o.label = "z";
    CSV_REJECT("a,b\n1,2\n", &o, CT_ERR_VALUE, "no column named 'z' (columns: a, b)");
    const char *ints[1] = {"a"};
    o = ct_csv_defaults();
    o.int64_columns = ints;
    o.num_int64_columns = 1;
    CSV_REJECT("a,b\n1.5,2\n", &o, CT_ERR_FORMAT, "could not convert string '1.5' to int64");
    CSV_REJECT("a,b\n99999999999999999999,2\n", &o, CT_ERR_FORMAT, "to int64 at line 2");
    o = ct_csv_defaults();
    o.dtype = CT_INT32;
    CSV_REJECT("a\n1\n", &o, CT_ERR_VALUE, "dtype must be float32 or float64");
    o = ct_csv_defaults();
    o.delimiter = '"';
    CSV_REJECT("a\n1\n", &o, CT_ERR_VALUE, "bad delimiter or quotechar");
    /* a field one byte over the limit, quoted and not */
    size_t n = CT_CSV_MAX_FIELD_BYTES + 8;
    char *big = (char *)malloc(n + 8);
    memcpy(big, "a\n\"", 3);
    memset(big + 3, '1', n);
    memcpy(big + 3 + n, "\"\n", 2);
    CHECK(ct_csv_load_buffer(big, n + 5, NULL) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "field at line 2, column 1 is longer than CT_CSV_MAX_FIELD_BYTES");
    CHECK(ct_csv_load_buffer(big + 3, n, NULL) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "is longer than CT_CSV_MAX_FIELD_BYTES (65536 bytes)");
    free(big);
    /* every truncation of a file: a result or an error, nothing else */
    o = ct_csv_defaults();
    o.label = "label";
    for (size_t k = 0; k < strlen(csv_text_basic); k++) {
        ct_csv *c = ct_csv_load_buffer(csv_text_basic, k, &o);
        CHECK(c != NULL || ct_error() != NULL);
        ct_csv_free(c);
        ct_error_clear();
    }
}

void test_readers(void)
{
    RUN(test_readers_npy_numpy_files);
    RUN(test_readers_npy_truncated);
    RUN(test_readers_npy_hostile);
    RUN(test_readers_npy_file);
    RUN(test_readers_npy_mmap);
    RUN(test_readers_npz_numpy_files);
    RUN(test_readers_npz_hostile);
    RUN(test_readers_csv_golden);
    RUN(test_readers_csv_float32_rounding);
    RUN(test_readers_csv_options);
    RUN(test_readers_csv_hostile);
}
