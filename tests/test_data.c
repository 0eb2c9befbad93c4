/* tests/test_data.c - the IDX reader (shipped Fashion-MNIST subset, gzip, hostile input, fuzz),
 * datasets (TensorDataset, custom vtables, Subset, random_split) and the DataLoader (batch
 * counts, shuffling, PyTorch's orders and RNG stream, gathered values).
 * Expected values come from Python (tools/make_subset.py's files read with open()/gzip, and
 * torch.utils.data for the orders; tools/gen_golden_rng.py for whole epochs). Tests run from
 * tests/, so the data is ../data/.
 */
#include "test.h"
#include "golden/rng_golden.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#ifdef CTORCH_ZLIB
#include <zlib.h>
#endif

#define FMNIST "../data/fashion-mnist/"
#define FMNIST_FULL "/usr/share/datasets/fashion-mnist/"

/* ---- helpers ------------------------------------------------------------------------------ */
/* Writes a big-endian IDX header for type/ndim/sizes into b; returns its length. */
static size_t idx_header(unsigned char *b, int type, int ndim, const uint32_t *sizes)
{
    b[0] = 0;
    b[1] = 0;
    b[2] = (unsigned char)type;
    b[3] = (unsigned char)ndim;
    for (int d = 0; d < ndim; d++) {
        b[4 + 4 * d] = (unsigned char)(sizes[d] >> 24);
        b[5 + 4 * d] = (unsigned char)(sizes[d] >> 16);
        b[6 + 4 * d] = (unsigned char)(sizes[d] >> 8);
        b[7 + 4 * d] = (unsigned char)sizes[d];
    }
    return 4 + 4 * (size_t)ndim;
}

/* A temporary file name in the current directory, unique enough for concurrent runs. */
static void tmp_name(char *buf, size_t n, const char *suffix)
{
    static unsigned counter = 0;
    unsigned long salt = (unsigned long)time(NULL) ^ (unsigned long)(uintptr_t)&counter ^
                         (unsigned long)clock();
    snprintf(buf, n, "ct_test_data_%lx_%u%s", salt, counter++, suffix);
}

static bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        return false;
    }
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

#ifdef CTORCH_ZLIB
static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
    }
    return f != NULL;
}
#endif

/* ---- IDX: the shipped subset --------------------------------------------------------------- */
static void test_data_idx_subset(void)
{
    ct_scope_begin();
    ct_tensor *x = ct_idx_load(FMNIST "train-images-idx3-ubyte");
    ct_tensor *y = ct_idx_load(FMNIST "train-labels-idx1-ubyte");
    ct_tensor *tx = ct_idx_load(FMNIST "t10k-images-idx3-ubyte");
    ct_tensor *ty = ct_idx_load(FMNIST "t10k-labels-idx1-ubyte");
    CHECK_MSG(x && y && tx && ty, "load failed: %s", ct_error() ? ct_error() : "?");
    if (x && y && tx && ty) {
        CHECK(ct_dim(x) == 3 && ct_size(x, 0) == 3000 && ct_size(x, 1) == 28 &&
              ct_size(x, 2) == 28);
        CHECK(ct_tensor_dtype(x) == CT_UINT8 && ct_is_contiguous(x));
        CHECK(ct_dim(y) == 1 && ct_size(y, 0) == 3000 && ct_tensor_dtype(y) == CT_UINT8);
        CHECK(ct_size(tx, 0) == 1000 && ct_size(ty, 0) == 1000);
        const uint8_t *px = (const uint8_t *)ct_data_ptr(x);
        /* values read with Python: data[16 + i*784 + r*28 + c] */
        CHECK(px[0 * 784 + 14 * 28 + 14] == 217);
        CHECK(px[0 * 784 + 10 * 28 + 20] == 210);
        CHECK(px[1 * 784 + 5 * 28 + 7] == 204);
        CHECK(px[2999 * 784 + 13 * 28 + 13] == 1);
        int64_t sum = 0;
        for (int64_t i = 0; i < ct_numel(x); i++) {
            sum += px[i];
        }
        CHECK(sum == 170623628);
        const uint8_t *py = (const uint8_t *)ct_data_ptr(y);
        const uint8_t first[10] = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
        CHECK(memcmp(py, first, 10) == 0);
        int64_t lsum = 0;
        bool in_range = true;
        for (int64_t i = 0; i < 3000; i++) {
            in_range = in_range && py[i] <= 9;
            lsum += py[i];
        }
        CHECK(in_range && lsum == 13472);
        const uint8_t *ptx = (const uint8_t *)ct_data_ptr(tx);
        const uint8_t *pty = (const uint8_t *)ct_data_ptr(ty);
        CHECK(ptx[14 * 28 + 14] == 110 && ptx[999 * 784 + 14 * 28 + 14] == 200);
        CHECK(pty[0] == 9 && pty[1] == 2 && pty[2] == 1 && pty[3] == 1 && pty[4] == 6);
    }
    ct_scope_end();
}

/* ---- IDX: gzip ----------------------------------------------------------------------------- */
#ifdef CTORCH_ZLIB
static bool write_gz(const char *path, const void *data, size_t n)
{
    gzFile gz = gzopen(path, "wb");
    if (!gz) {
        return false;
    }
    bool ok = gzwrite(gz, data, (unsigned)n) == (int)n;
    return gzclose(gz) == Z_OK && ok;
}
#endif

static void test_data_idx_gzip(void)
{
    ct_scope_begin();
#ifdef CTORCH_ZLIB
    if (file_exists(FMNIST_FULL "train-labels-idx1-ubyte.gz")) {
        ct_tensor *y = ct_idx_load(FMNIST_FULL "train-labels-idx1-ubyte.gz");
        ct_tensor *x = ct_idx_load(FMNIST_FULL "train-images-idx3-ubyte.gz");
        CHECK_MSG(x && y, "load failed: %s", ct_error() ? ct_error() : "?");
        if (x && y) {
            CHECK(ct_size(x, 0) == 60000 && ct_size(x, 1) == 28 && ct_size(x, 2) == 28);
            CHECK(ct_tensor_dtype(x) == CT_UINT8 && ct_size(y, 0) == 60000);
            CHECK(((const uint8_t *)ct_data_ptr(x))[30000 * 784 + 10 * 28 + 10] == 169);
            const uint8_t *py = (const uint8_t *)ct_data_ptr(y);
            int64_t lsum = 0;
            for (int64_t i = 0; i < 60000; i++) {
                lsum += py[i];
            }
            CHECK(lsum == 270000 && py[59999] == 5);
        }
    } else {
        printf("  note: %s not found; skipping the full Fashion-MNIST .gz check\n", FMNIST_FULL);
    }
    /* gzip files written here: valid, truncated, trailing, corrupt */
    unsigned char buf[64];
    uint32_t sz[2] = {2, 3};
    size_t h = idx_header(buf, 0x0B, 2, sz);
    for (int i = 0; i < 6; i++) { /* int16 values -3..2, big-endian */
        int v = i - 3;
        buf[h + 2 * i] = (unsigned char)((unsigned)v >> 8);
        buf[h + 2 * i + 1] = (unsigned char)v;
    }
    char path[128];
    tmp_name(path, sizeof path, ".gz");
    CHECK(write_gz(path, buf, h + 12));
    ct_tensor *t = ct_idx_load(path);
    double want[6] = {-3, -2, -1, 0, 1, 2};
    CHECK(t && ct_tensor_dtype(t) == CT_INT16 && ct_dim(t) == 2);
    CHECK_TENSOR(t, want, 6, 0, 0);
    CHECK(write_gz(path, buf, h + 11));
    CHECK(ct_idx_load(path) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "truncated file: header declares 2x3 int16 (12 bytes) but 11 "
                               "bytes follow in '");
    CHECK(write_gz(path, buf, h + 12 + 5));
    CHECK(ct_idx_load(path) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "trailing data: header declares 2x3 int16 (12 bytes) but 17");
    /* a corrupt stream: a valid gzip file cut in half */
    unsigned char big[4096];
    for (size_t i = 0; i < sizeof big; i++) {
        big[i] = (unsigned char)(i * 7919u >> 3);
    }
    uint32_t bs[1] = {(uint32_t)(sizeof big - 8)};
    idx_header(big, 0x08, 1, bs);
    CHECK(write_gz(path, big, sizeof big));
    FILE *f = fopen(path, "rb");
    unsigned char gzbytes[8192];
    size_t n = f ? fread(gzbytes, 1, sizeof gzbytes, f) : 0;
    if (f) {
        fclose(f);
    }
    CHECK(n > 40);
    CHECK(write_file(path, gzbytes, n / 2));
    CHECK(ct_idx_load(path) == NULL);
    CHECK(ct_error_code() == CT_ERR_FORMAT);
    ct_error_clear();
    remove(path);
#else
    CHECK(ct_idx_load(FMNIST "train-labels-idx1-ubyte.gz") == NULL);
    CHECK_ERROR(CT_ERR_UNSUPPORTED, "ct_idx_load: reading gzip files needs zlib: define "
                                    "CTORCH_ZLIB and link -lz (or gunzip the file)");
#endif
    ct_scope_end();
}

/* ---- IDX: every dtype, host byte order ----------------------------------------------------- */
static void test_data_idx_dtypes(void)
{
    ct_scope_begin();
    unsigned char b[64];
    uint32_t two[1] = {2};
    size_t h = idx_header(b, 0x09, 1, two); /* int8: -3, 100 */
    b[h] = 0xFD;
    b[h + 1] = 100;
    ct_tensor *t = ct_idx_load_buffer(b, h + 2);
    double w8[2] = {-3, 100};
    CHECK(t && ct_tensor_dtype(t) == CT_INT8);
    CHECK_TENSOR(t, w8, 2, 0, 0);
    h = idx_header(b, 0x0C, 1, two); /* int32: -100000, 0x01020304 */
    const unsigned char i32[8] = {0xFF, 0xFE, 0x79, 0x60, 0x01, 0x02, 0x03, 0x04};
    memcpy(b + h, i32, 8);
    t = ct_idx_load_buffer(b, h + 8);
    double w32[2] = {-100000, 16909060};
    CHECK(t && ct_tensor_dtype(t) == CT_INT32);
    CHECK_TENSOR(t, w32, 2, 0, 0);
    h = idx_header(b, 0x0D, 1, two); /* float32: 1.5, -0.25 */
    const unsigned char f32[8] = {0x3F, 0xC0, 0, 0, 0xBE, 0x80, 0, 0};
    memcpy(b + h, f32, 8);
    t = ct_idx_load_buffer(b, h + 8);
    double wf[2] = {1.5, -0.25};
    CHECK(t && ct_tensor_dtype(t) == CT_FLOAT32);
    CHECK_TENSOR(t, wf, 2, 0, 0);
    h = idx_header(b, 0x0E, 1, two); /* float64: -2.25, 1e300 */
    const unsigned char f64[16] = {0xC0, 0x02, 0, 0, 0, 0, 0, 0,
                                   0x7E, 0x37, 0xE4, 0x3C, 0x88, 0x00, 0x75, 0x9C};
    memcpy(b + h, f64, 16);
    t = ct_idx_load_buffer(b, h + 16);
    double wd[2] = {-2.25, 1e300};
    CHECK(t && ct_tensor_dtype(t) == CT_FLOAT64);
    CHECK_TENSOR(t, wd, 2, 0, 0);
    uint32_t empty[3] = {0, 28, 28}; /* zero samples is valid */
    h = idx_header(b, 0x08, 3, empty);
    t = ct_idx_load_buffer(b, h);
    CHECK(t && ct_numel(t) == 0 && ct_size(t, 1) == 28);
    ct_scope_end();
}

/* ---- IDX: hostile input -------------------------------------------------------------------- */
static void test_data_idx_hostile(void)
{
    ct_scope_begin();
    unsigned char b[128];
    memset(b, 0, sizeof b);
    uint32_t s3[3] = {60000, 28, 28};
    size_t h = idx_header(b, 0x08, 3, s3);
    CHECK(ct_idx_load_buffer(b, 3) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "ct_idx_load_buffer: truncated file: 3 bytes, shorter than the "
                               "4-byte IDX header");
    CHECK(ct_idx_load_buffer(b, 0) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "truncated file: 0 bytes");
    CHECK(ct_idx_load_buffer(b, 10) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "truncated header: 3 dimensions need a 16-byte header but the "
                               "file has 10 bytes");
    CHECK(ct_idx_load_buffer(b, h + 100) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "truncated file: header declares 60000x28x28 uint8 (47040000 "
                               "bytes) but 100 bytes follow");
    uint32_t s2[2] = {2, 3};
    h = idx_header(b, 0x08, 2, s2);
    CHECK(ct_idx_load_buffer(b, h + 7) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "trailing data: header declares 2x3 uint8 (6 bytes) but 7 bytes "
                               "follow");
    CHECK(ct_idx_load_buffer(b, h + 6) != NULL);
    b[1] = 8;
    CHECK(ct_idx_load_buffer(b, h + 6) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "not an IDX file: magic bytes 0x00 0x08, expected 0x00 0x00");
    b[0] = 0x1f;
    b[1] = 0x8b;
    CHECK(ct_idx_load_buffer(b, h + 6) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "gzip-compressed");
    b[0] = b[1] = 0;
    b[2] = 0x0A;
    CHECK(ct_idx_load_buffer(b, h + 6) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "unknown IDX type code 0x0a");
    b[2] = 0x08;
    b[3] = 0;
    CHECK(ct_idx_load_buffer(b, h + 6) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "IDX header declares 0 dimensions, expected 1 to 8");
    b[3] = 9;
    CHECK(ct_idx_load_buffer(b, sizeof b) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "IDX header declares 9 dimensions, expected 1 to 8");
    b[3] = 255;
    CHECK(ct_idx_load_buffer(b, sizeof b) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "255 dimensions");
    uint32_t huge[8] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu,
                        0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
    h = idx_header(b, 0x0E, 8, huge);
    CHECK(ct_idx_load_buffer(b, h + 8) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "header declares 4294967295x4294967295x4294967295x4294967295x"
                               "4294967295x4294967295x4294967295x4294967295 float64, more "
                               "elements than a tensor can hold");
    uint32_t big2[2] = {0x80000000u, 0x40000000u}; /* 2^61 int32: bytes overflow */
    h = idx_header(b, 0x0C, 2, big2);
    CHECK(ct_idx_load_buffer(b, h) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "more elements than a tensor can hold");
    uint32_t big1[2] = {0xFFFFFFFFu, 0x10000u}; /* 2^48 bytes declared, 4 present */
    h = idx_header(b, 0x08, 2, big1);
    CHECK(ct_idx_load_buffer(b, h + 4) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "header declares 4294967295x65536 uint8 (281474976645120 bytes) "
                               "but 4 bytes follow");
    uint32_t zero_huge[3] = {0, 0xFFFFFFFFu, 0xFFFFFFFFu}; /* 0 elements, but absurd strides */
    h = idx_header(b, 0x08, 3, zero_huge);
    CHECK(ct_idx_load_buffer(b, h) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "header declares 0x4294967295x4294967295 uint8, more elements");
    CHECK(ct_idx_load_buffer(NULL, 16) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_idx_load_buffer");
    ct_scope_end();
}

static void test_data_idx_files(void)
{
    ct_scope_begin();
    CHECK(ct_idx_load("../data/no-such-dir/train-images-idx3-ubyte") == NULL);
    CHECK_ERROR(CT_ERR_IO,
                "ct_idx_load: cannot open '../data/no-such-dir/train-images-idx3-ubyte': ");
    CHECK(ct_idx_load("no-such-file.gz") == NULL);
    CHECK_MSG(ct_error_code() == CT_ERR_IO || ct_error_code() == CT_ERR_UNSUPPORTED, "got %s",
              ct_status_str(ct_error_code()));
    ct_error_clear();
    CHECK(ct_idx_load(NULL) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_idx_load");
    /* files on disk: truncated, trailing, empty */
    unsigned char b[64];
    uint32_t s[3] = {2, 2, 2};
    size_t h = idx_header(b, 0x08, 3, s);
    for (int i = 0; i < 8; i++) {
        b[h + i] = (unsigned char)(10 * i);
    }
    char path[128];
    tmp_name(path, sizeof path, ".idx");
    CHECK(write_file(path, b, h + 8));
    ct_tensor *t = ct_idx_load(path);
    double want[8] = {0, 10, 20, 30, 40, 50, 60, 70};
    CHECK_TENSOR(t, want, 8, 0, 0);
    CHECK(write_file(path, b, h + 5));
    CHECK(ct_idx_load(path) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "ct_idx_load: truncated file: header declares 2x2x2 uint8 (8 "
                               "bytes) but 5 bytes follow in 'ct_test_data_");
    CHECK(write_file(path, b, h + 9));
    CHECK(ct_idx_load(path) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "trailing data: header declares 2x2x2 uint8 (8 bytes) but 9");
    CHECK(write_file(path, b, 0));
    CHECK(ct_idx_load(path) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "truncated file: 0 bytes, shorter than the 4-byte IDX header");
    CHECK(write_file(path, b, 9));
    CHECK(ct_idx_load(path) == NULL);
    CHECK_ERROR(CT_ERR_FORMAT, "truncated header");
    remove(path);
    ct_scope_end();
}

/* 2000 random mutations, truncations and extensions of valid IDX buffers: never a crash, never
   a leak, and a success always means the lengths agree. */
static void test_data_idx_fuzz(void)
{
    unsigned char base[2][64];
    size_t base_len[2];
    uint32_t s1[2] = {3, 4};
    base_len[0] = idx_header(base[0], 0x0B, 2, s1) + 24;
    uint32_t s2[3] = {2, 2, 3};
    base_len[1] = idx_header(base[1], 0x0D, 3, s2) + 48;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 4; i < base_len[k]; i++) {
            if (i >= 4 + 4 * (size_t)base[k][3]) {
                base[k][i] = (unsigned char)(i * 37u);
            }
        }
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    int ok = 0, rejected = 0;
    ct_scope_begin();
    for (int iter = 0; iter < 2000; iter++) {
        int k = iter & 1;
        unsigned char buf[96];
        memcpy(buf, base[k], base_len[k]);
        size_t len = base_len[k];
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(rng >> 33);
        int mutations = 1 + (int)(r % 4);
        for (int m = 0; m < mutations; m++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            r = (uint32_t)(rng >> 33);
            size_t span = (r & 1) && len > 20 ? 20 : len; /* favour the header */
            size_t at = span ? (r >> 8) % span : 0;
            if (at >= len && (r >> 4) % 5 != 3) {
                continue; /* nothing left to mutate */
            }
            switch ((r >> 4) % 5) {
            case 0: buf[at] = (unsigned char)(r >> 24); break;
            case 1: buf[at] ^= (unsigned char)(1u << ((r >> 24) % 8)); break;
            case 2: len = at; break; /* truncate */
            case 3: /* extend with garbage */
                while (len < sizeof buf && (r & 3)) {
                    buf[len++] = (unsigned char)r;
                    r >>= 2;
                }
                break;
            default: buf[at] = (r & 2) ? 0xFF : 0x00; break;
            }
        }
        ct_tensor *t = ct_idx_load_buffer(buf, len);
        if (t) {
            size_t header = 4 + 4 * (size_t)buf[3];
            CHECK(header + ct_nbytes(t) == len);
            ok++;
        } else {
            CHECK(ct_error_code() == CT_ERR_FORMAT);
            ct_error_clear();
            rejected++;
        }
        if (iter % 100 == 99) { /* keep the scope small */
            ct_scope_end();
            ct_scope_begin();
        }
    }
    ct_scope_end();
    CHECK(ok > 0 && rejected > 1000);
}

/* ---- datasets ------------------------------------------------------------------------------ */
/* x (n, 3, 2) float32 with x[i] = 100 i + (0..5), y (n) int64 with y[i] = 1000 + i */
static ct_dataset *make_xy(int64_t n, ct_tensor **xo, ct_tensor **yo)
{
    int64_t sx[3] = {n, 3, 2};
    ct_tensor *x = ct_empty(sx, 3, CT_FLOAT32), *y = ct_arange(1000, 1000 + (double)n, 1, CT_INT64);
    if (!x || !y) {
        return NULL;
    }
    float *px = (float *)ct_data_ptr(x);
    for (int64_t i = 0; i < n; i++) {
        for (int j = 0; j < 6; j++) {
            px[i * 6 + j] = (float)(100 * i + j);
        }
    }
    if (xo) {
        *xo = x;
    }
    if (yo) {
        *yo = y;
    }
    ct_tensor *ts[2] = {x, y};
    return ct_tensor_dataset_new(ts, 2);
}

static void test_data_tensor_dataset(void)
{
    ct_scope_begin();
    ct_tensor *x, *y;
    ct_dataset *ds = make_xy(5, &x, &y);
    CHECK(ds && ct_dataset_len(ds) == 5 && ds->n_fields == 2 && ct_dataset_is_tensor_dataset(ds));
    ct_tensor *f[2];
    CHECK(ct_dataset_get(ds, 3, f) == CT_OK);
    double wx[6] = {300, 301, 302, 303, 304, 305}, wy[1] = {1003};
    CHECK(ct_dim(f[0]) == 2 && ct_size(f[0], 0) == 3 && ct_dim(f[1]) == 0);
    CHECK_TENSOR(f[0], wx, 6, 0, 0);
    CHECK_TENSOR(f[1], wy, 1, 0, 0);
    CHECK(ct_dataset_get(ds, -1, f) == CT_OK && ct_item(f[1]) == 1004);
    CHECK(ct_dataset_get(ds, 5, f) == CT_ERR_INDEX && !f[0] && !f[1]);
    CHECK_ERROR(CT_ERR_INDEX, "ct_dataset_get: index 5 is out of bounds for dimension 0 with "
                              "size 5");
    int64_t idx[3] = {4, 0, -2};
    CHECK(ct_dataset_get_batch(ds, idx, 3, f) == CT_OK);
    CHECK(ct_size(f[0], 0) == 3 && ct_tensor_dtype(f[1]) == CT_INT64);
    double wb[3] = {1004, 1000, 1003};
    CHECK_TENSOR(f[1], wb, 3, 0, 0);
    int64_t bad[2] = {0, 9};
    CHECK(ct_dataset_get_batch(ds, bad, 2, f) == CT_ERR_INDEX);
    CHECK_ERROR(CT_ERR_INDEX, "index 9 is out of bounds");
    CHECK(ct_dataset_get_batch(ds, idx, 0, f) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "expected at least one index");
    /* the dataset retains its tensors: they outlive the scope that made them */
    ct_scope_end();
    ct_scope_begin();
    CHECK(ct_dataset_get(ds, 1, f) == CT_OK && ct_item(f[1]) == 1001);
    ct_dataset_free(ds);
    /* errors */
    int64_t s4[1] = {4}, s5[2] = {5, 2};
    ct_tensor *ts[2] = {ct_zeros(s4, 1, CT_FLOAT32), ct_zeros(s5, 2, CT_FLOAT32)};
    CHECK(ct_tensor_dataset_new(ts, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "ct_tensor_dataset_new: Size mismatch between tensors");
    ts[1] = ct_scalar_tensor(1, CT_FLOAT32);
    CHECK(ct_tensor_dataset_new(ts, 2) == NULL);
    CHECK_ERROR(CT_ERR_SHAPE, "0-dimensional");
    CHECK(ct_tensor_dataset_new(ts, 0) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "expected 1 to 16 tensors, got 0");
    ts[1] = NULL;
    CHECK(ct_tensor_dataset_new(ts, 2) == NULL);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_tensor_dataset_new");
    ct_dataset_free(NULL);
    ct_scope_end();
}

/* A user dataset without get_batch: sample i = (i * [1, 2], i % 3 as int64); index 13 fails. */
static int64_t sq_len(const ct_dataset *ds)
{
    return *(const int64_t *)ds->user;
}

static ct_status sq_get(const ct_dataset *ds, int64_t i, ct_tensor **fields)
{
    (void)ds;
    if (i == 13) {
        ct_tensor *a = ct_zeros(NULL, 0, CT_FLOAT32); /* a temporary that must not leak */
        (void)a;
        return ct_error_code() ? ct_error_code() : CT_ERR_VALUE;
    }
    int64_t two = 2;
    ct_tensor *v = ct_mul_scalar(ct_arange(1, 3, 1, CT_FLOAT32), (double)i);
    fields[0] = ct_reshape(v, &two, 1);
    fields[1] = ct_scalar_tensor((double)(i % 3), CT_INT64);
    return CT_OK;
}

static void test_data_custom_dataset(void)
{
    ct_scope_begin();
    int64_t n = 20;
    ct_dataset ds = {sq_len, sq_get, NULL, NULL, 2, &n};
    CHECK(ct_dataset_len(&ds) == 20 && !ct_dataset_is_tensor_dataset(&ds));
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 4;
    ct_dataloader *dl = ct_dataloader_new(&ds, &o);
    ct_tensor *b[2];
    CHECK(ct_dataloader_next(dl, b) && ct_dataloader_next(dl, b));
    double w0[8] = {4, 8, 5, 10, 6, 12, 7, 14}, w1[4] = {1, 2, 0, 1};
    CHECK(ct_dim(b[0]) == 2 && ct_size(b[0], 0) == 4 && ct_size(b[0], 1) == 2);
    CHECK_TENSOR(b[0], w0, 8, 0, 0);
    CHECK(ct_tensor_dtype(b[1]) == CT_INT64);
    CHECK_TENSOR(b[1], w1, 4, 0, 0);
    CHECK(ct_dataloader_next(dl, b));  /* 8..11 */
    CHECK(!ct_dataloader_next(dl, b)); /* 12..15 holds the failing sample 13 */
    CHECK(!b[0] && !b[1]);
    CHECK(ct_error_code() == CT_ERR_VALUE && strstr(ct_error(), "ct_dataset_get_batch"));
    ct_error_clear();
    ct_dataloader_free(dl);
    ct_dataset bad = {sq_len, NULL, NULL, NULL, 2, &n};
    CHECK(ct_dataloader_new(&bad, NULL) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "callbacks must not be NULL");
    ct_scope_end();
}

static void test_data_subset_random_split(void)
{
    ct_scope_begin();
    ct_dataset *ds = make_xy(10, NULL, NULL);
    int64_t idx[3] = {7, 2, 7};
    ct_dataset *sub = ct_subset_new(ds, idx, 3);
    CHECK(sub && ct_dataset_len(sub) == 3 && sub->n_fields == 2);
    ct_tensor *f[2];
    CHECK(ct_dataset_get(sub, 1, f) == CT_OK && ct_item(f[1]) == 1002);
    int64_t all[3] = {0, 1, 2};
    CHECK(ct_dataset_get_batch(sub, all, 3, f) == CT_OK);
    double want[3] = {1007, 1002, 1007};
    CHECK_TENSOR(f[1], want, 3, 0, 0);
    int64_t out_of_range[1] = {10};
    CHECK(ct_subset_new(ds, out_of_range, 1) == NULL);
    CHECK_ERROR(CT_ERR_INDEX, "ct_subset_new: index 10 is out of bounds for dimension 0 with "
                              "size 10");
    /* PyTorch: random_split(range(10), [3, 7], generator=Generator().manual_seed(42))
       -> [2, 6, 1] and [8, 4, 5, 0, 9, 3, 7] */
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 42);
    int64_t lengths[2] = {3, 7};
    ct_dataset *parts[2];
    CHECK(ct_random_split(ds, lengths, 2, g, parts) == CT_OK);
    CHECK(ct_dataset_len(parts[0]) == 3 && ct_dataset_len(parts[1]) == 7);
    int64_t seven[7] = {0, 1, 2, 3, 4, 5, 6};
    CHECK(ct_dataset_get_batch(parts[0], seven, 3, f) == CT_OK);
    double w0[3] = {1002, 1006, 1001};
    CHECK_TENSOR(f[1], w0, 3, 0, 0);
    CHECK(ct_dataset_get_batch(parts[1], seven, 7, f) == CT_OK);
    double w1[7] = {1008, 1004, 1005, 1000, 1009, 1003, 1007};
    CHECK_TENSOR(f[1], w1, 7, 0, 0);
    ct_dataset_free(parts[0]);
    ct_dataset_free(parts[1]);
    int64_t wrong[2] = {3, 6};
    CHECK(ct_random_split(ds, wrong, 2, g, parts) == CT_ERR_VALUE && !parts[0] && !parts[1]);
    CHECK_ERROR(CT_ERR_VALUE, "Sum of input lengths does not equal the length of the input "
                              "dataset!");
    ct_generator_free(g);
    ct_dataset_free(sub);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* ---- DataLoader ---------------------------------------------------------------------------- */
static void test_data_loader_batches(void)
{
    ct_scope_begin();
    ct_dataset *ds = make_xy(10, NULL, NULL);
    ct_dataloader_opts o = ct_dataloader_defaults();
    CHECK(o.batch_size == 1 && !o.shuffle && !o.drop_last && o.generator == NULL);
    ct_dataloader *dl = ct_dataloader_new(ds, NULL);
    CHECK(ct_dataloader_len(dl) == 10);
    ct_dataloader_free(dl);
    o.batch_size = 4;
    dl = ct_dataloader_new(ds, &o);
    CHECK(ct_dataloader_len(dl) == 3);
    for (int epoch = 0; epoch < 2; epoch++) {
        int64_t sizes[4] = {0, 0, 0, 0}, count = 0;
        ct_tensor *b[2];
        while (ct_dataloader_next(dl, b) && count < 4) {
            sizes[count] = ct_size(b[0], 0);
            CHECK(ct_item(ct_select(b[1], 0, 0)) == 1000 + 4 * (double)count);
            count++;
        }
        CHECK(count == 3 && sizes[0] == 4 && sizes[1] == 4 && sizes[2] == 2);
        CHECK(!b[0] && !b[1]);
    }
    ct_dataloader_free(dl);
    o.drop_last = true;
    dl = ct_dataloader_new(ds, &o);
    CHECK(ct_dataloader_len(dl) == 2);
    ct_tensor *b[2];
    int count = 0;
    while (ct_dataloader_next(dl, b)) {
        CHECK(ct_size(b[0], 0) == 4 && ct_size(b[1], 0) == 4);
        count++;
    }
    CHECK(count == 2);
    /* reset mid-epoch starts over */
    CHECK(ct_dataloader_next(dl, b) && ct_item(ct_select(b[1], 0, 0)) == 1000);
    ct_dataloader_reset(dl);
    CHECK(ct_dataloader_next(dl, b) && ct_item(ct_select(b[1], 0, 0)) == 1000);
    ct_dataloader_free(dl);
    o.batch_size = 5;
    dl = ct_dataloader_new(ds, &o); /* exact multiple */
    CHECK(ct_dataloader_len(dl) == 2);
    ct_dataloader_free(dl);
    o.batch_size = 0;
    CHECK(ct_dataloader_new(ds, &o) == NULL);
    CHECK_ERROR(CT_ERR_VALUE, "batch_size should be a positive integer value, but got "
                              "batch_size=0");
    CHECK(ct_dataloader_len(NULL) == -1);
    CHECK_ERROR(CT_ERR_NULL_ARG, "ct_dataloader_len");
    ct_dataloader_free(NULL);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* Runs one epoch, writing the label-derived sample ids in order into ids; returns the count. */
static int64_t epoch_ids(ct_dataloader *dl, int64_t *ids, int64_t cap)
{
    int64_t count = 0;
    ct_tensor *b[2];
    ct_scope_begin();
    while (ct_dataloader_next(dl, b)) {
        const int64_t *y = (const int64_t *)ct_data_ptr(b[1]);
        for (int64_t k = 0; k < ct_size(b[1], 0) && count < cap; k++) {
            ids[count++] = y[k] - 1000;
        }
    }
    ct_scope_end();
    return count;
}

static void test_data_loader_shuffle(void)
{
    ct_scope_begin();
    ct_dataset *ds = make_xy(100, NULL, NULL);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 7);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 7;
    o.shuffle = true;
    o.generator = g;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    int64_t a[100], b[100], c[100];
    CHECK(epoch_ids(dl, a, 100) == 100);
    CHECK(epoch_ids(dl, b, 100) == 100);
    int seen_a[100] = {0}, seen_b[100] = {0};
    for (int i = 0; i < 100; i++) {
        if (a[i] >= 0 && a[i] < 100 && b[i] >= 0 && b[i] < 100) {
            seen_a[a[i]]++;
            seen_b[b[i]]++;
        }
    }
    bool once = true;
    for (int i = 0; i < 100; i++) {
        once = once && seen_a[i] == 1 && seen_b[i] == 1;
    }
    CHECK(once);
    CHECK(memcmp(a, b, sizeof a) != 0); /* a new order each epoch */
    ct_generator_manual_seed(g, 7);     /* the same seed gives the same order */
    ct_dataloader_reset(dl);
    CHECK(epoch_ids(dl, c, 100) == 100 && memcmp(a, c, sizeof a) == 0);
    ct_dataloader_free(dl);
    ct_generator_free(g);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* Every index of several epochs equals PyTorch's DataLoader order (tools/gen_golden_rng.py):
   DataLoader(TensorDataset(arange(100)), 7, shuffle=True, drop_last) after manual_seed(s), with
   the default generator (generator NULL, as the quickstart) and with an explicit one; then the
   generator continues as PyTorch's (the bits of rand(1)). */
static void test_data_loader_rng_order_matches_pytorch(void)
{
    const int n = (int)(sizeof rng_golden_loaders / sizeof rng_golden_loaders[0]);
    CHECK(n == 12);
    for (int k = 0; k < n; k++) {
        const rng_golden_loader *want = &rng_golden_loaders[k];
        ct_scope_begin();
        ct_dataset *ds = make_xy(RNG_LOADER_N, NULL, NULL);
        ct_manual_seed(want->seed);
        ct_generator *g = want->use_default ? NULL : ct_generator_new();
        ct_generator_manual_seed(g, want->seed); /* NULL: the default generator again */
        ct_dataloader_opts o = ct_dataloader_defaults();
        o.batch_size = RNG_LOADER_BATCH;
        o.shuffle = true;
        o.drop_last = want->drop_last;
        o.generator = g;
        ct_dataloader *dl = ct_dataloader_new(ds, &o);
        for (int e = 0; e < RNG_LOADER_EPOCHS; e++) {
            int64_t ids[RNG_LOADER_N];
            int64_t count = epoch_ids(dl, ids, RNG_LOADER_N);
            CHECK_MSG(count == want->count &&
                          memcmp(ids, want->order[e], sizeof(int64_t) * (size_t)count) == 0,
                      "seed %llu, %s generator, drop_last %d: epoch %d differs from PyTorch's",
                      (unsigned long long)want->seed, want->use_default ? "default" : "explicit",
                      (int)want->drop_last, e);
        }
        float after = (float)ct_item(ct_rand(NULL, 0, CT_FLOAT32, g));
        uint32_t bits;
        memcpy(&bits, &after, sizeof bits);
        CHECK(bits == want->after);
        ct_dataloader_free(dl);
        ct_generator_free(g);
        ct_dataset_free(ds);
        ct_scope_end();
    }
}

static void test_data_loader_pytorch_order(void)
{
    ct_scope_begin();
    ct_dataset *ds = make_xy(10, NULL, NULL);
    ct_generator *g = ct_generator_new();
    ct_generator_manual_seed(g, 42);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 4;
    o.shuffle = true;
    o.generator = g;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    /* PyTorch: DataLoader(TensorDataset(arange(10)), 4, shuffle=True,
       generator=Generator().manual_seed(42)) -> [[6,5,4,0],[8,9,2,1],[3,7]], then
       [[3,6,5,8],[9,4,2,0],[7,1]] */
    int64_t a[10], b[10];
    const int64_t ta[10] = {6, 5, 4, 0, 8, 9, 2, 1, 3, 7};
    const int64_t tb[10] = {3, 6, 5, 8, 9, 4, 2, 0, 7, 1};
    CHECK(epoch_ids(dl, a, 10) == 10 && memcmp(a, ta, sizeof ta) == 0);
    CHECK(epoch_ids(dl, b, 10) == 10 && memcmp(b, tb, sizeof tb) == 0);
    ct_dataloader_free(dl);
    ct_generator_free(g);
    /* the default generator advances as PyTorch's: torch.manual_seed(0), one epoch, rand(1) */
    o.generator = NULL;
    o.shuffle = false;
    ct_manual_seed(0);
    dl = ct_dataloader_new(ds, &o);
    CHECK(epoch_ids(dl, a, 10) == 10);
    CHECK_NEAR(ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL)), 0.08847743272781372, 1e-7);
    ct_dataloader_free(dl);
    o.shuffle = true;
    ct_manual_seed(0);
    dl = ct_dataloader_new(ds, &o);
    CHECK(epoch_ids(dl, a, 10) == 10);
    CHECK_NEAR(ct_item(ct_rand(NULL, 0, CT_FLOAT32, NULL)), 0.30742281675338745, 1e-7);
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_scope_end();
}

static void test_data_loader_values(void)
{
    ct_scope_begin();
    ct_tensor *x, *y;
    ct_dataset *ds = make_xy(50, &x, &y);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 16;
    o.shuffle = true;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    ct_tensor *b[2];
    int64_t rows = 0;
    bool equal = true;
    while (ct_dataloader_next(dl, b)) {
        CHECK(ct_tensor_dtype(b[0]) == CT_FLOAT32 && ct_tensor_dtype(b[1]) == CT_INT64);
        CHECK(ct_is_contiguous(b[0]) && ct_dim(b[0]) == 3 && ct_size(b[0], 1) == 3 &&
              ct_size(b[0], 2) == 2);
        const float *bx = (const float *)ct_data_ptr(b[0]);
        const int64_t *by = (const int64_t *)ct_data_ptr(b[1]);
        for (int64_t k = 0; k < ct_size(b[0], 0); k++) {
            int64_t i = by[k] - 1000;
            equal = equal && memcmp(bx + 6 * k, (const float *)ct_data_ptr(x) + 6 * i,
                                    6 * sizeof(float)) == 0;
            rows++;
        }
    }
    CHECK(equal && rows == 50);
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    /* non-contiguous rows (a transposed source) take the strided path */
    int64_t s[2] = {3, 4};
    ct_tensor *m = ct_reshape(ct_arange(0, 12, 1, CT_FLOAT64), s, 2); /* m[i][j] = 4 i + j */
    ct_tensor *mt = ct_t(m);                                         /* (4, 3): mt[j][i] */
    ct_tensor *ts[1] = {mt};
    ds = ct_tensor_dataset_new(ts, 1);
    int64_t idx[2] = {3, 1};
    CHECK(ct_dataset_get_batch(ds, idx, 2, b) == CT_OK);
    double want[6] = {3, 7, 11, 1, 5, 9};
    CHECK(ct_is_contiguous(b[0]));
    CHECK_TENSOR(b[0], want, 6, 0, 0);
    ct_dataset_free(ds);
    ct_scope_end();
}

/* The shipped Fashion-MNIST subset through a loader, as the quickstart example does. */
static void test_data_loader_fashion_mnist(void)
{
    ct_scope_begin();
    ct_tensor *x = ct_idx_load(FMNIST "train-images-idx3-ubyte");
    ct_tensor *y = ct_to_dtype(ct_idx_load(FMNIST "train-labels-idx1-ubyte"), CT_INT64);
    ct_tensor *ts[2] = {x, y};
    ct_dataset *ds = ct_tensor_dataset_new(ts, 2);
    CHECK(ds != NULL);
    ct_dataloader_opts o = ct_dataloader_defaults();
    o.batch_size = 64;
    o.shuffle = true;
    ct_dataloader *dl = ct_dataloader_new(ds, &o);
    CHECK(ct_dataloader_len(dl) == 47);
    int64_t batches = 0, samples = 0, label_sum = 0;
    ct_tensor *b[2];
    while (ct_dataloader_next(dl, b)) {
        ct_scope_begin();
        CHECK(ct_tensor_dtype(b[0]) == CT_UINT8 && ct_size(b[0], 1) == 28);
        const int64_t *by = (const int64_t *)ct_data_ptr(b[1]);
        for (int64_t k = 0; k < ct_size(b[1], 0); k++) {
            label_sum += by[k];
        }
        samples += ct_size(b[0], 0);
        batches++;
        ct_scope_end();
    }
    CHECK(batches == 47 && samples == 3000 && label_sum == 13472);
    ct_dataloader_free(dl);
    ct_dataset_free(ds);
    ct_scope_end();
}

void test_data(void)
{
    RUN(test_data_idx_subset);
    RUN(test_data_idx_gzip);
    RUN(test_data_idx_dtypes);
    RUN(test_data_idx_hostile);
    RUN(test_data_idx_files);
    RUN(test_data_idx_fuzz);
    RUN(test_data_tensor_dataset);
    RUN(test_data_custom_dataset);
    RUN(test_data_subset_random_split);
    RUN(test_data_loader_batches);
    RUN(test_data_loader_shuffle);
    RUN(test_data_loader_pytorch_order);
    RUN(test_data_loader_rng_order_matches_pytorch);
    RUN(test_data_loader_values);
    RUN(test_data_loader_fashion_mnist);
}
