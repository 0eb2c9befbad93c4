/* data/npy.c - the .npy reader and writer (numpy.lib.format).
 *
 * File layout: magic "\x93NUMPY" (6 bytes), major, minor (1 byte each), header length
 * (uint16 LE for 1.0, uint32 LE for 2.0/3.0), the header (a Python dict literal with the
 * keys 'descr', 'fortran_order' and 'shape', padded with spaces and ended by '\n'), then
 * the raw C-ordered elements. Every length and offset is checked against nbytes before it
 * is used; the header parser reads through a bounded cursor and never past `end`.
 */
#include "../core/internal.h"
#include "reader_internal.h"

#include <stdio.h> /* snprintf; FILE only without CTORCH_NO_STDIO */
#ifndef CTORCH_NO_STDIO
#include <errno.h>

#endif
CT__GLUE_BEGIN

#define CT__NPY_MAGIC_LEN 6
#define CT__NPY_ALIGN 64
#define CT__NPY_GROWTH_DIGITS 21 /* numpy's GROWTH_AXIS_MAX_DIGITS */
#define CT__NPY_HEADER_MAX 512   /* the largest header ct_npy_save writes (8 dims) */
#define CT__NPY_HEADER_LIMIT 65535 /* the longest header read (numpy reads up to 10000) */

static const char ct__npy_magic[CT__NPY_MAGIC_LEN] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* numpy descr of each ctorch dtype as numpy.save writes it, in enum order (index 0 unused). */
static const char *const ct__npy_descr[CT_DTYPE_COUNT] = {
    NULL, "|b1", "|u1", "|i1", "<i2", "<i4", "<i8", "<f4", "<f8", "<f2", NULL, /* bfloat16: none */
};

static CT__UNUSED bool ct__npy_little_endian(void)
{
    uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Reverses the bytes of each of n elements of es bytes. */
static CT__UNUSED void ct__npy_swap(char *p, int64_t n, size_t es)
{
    for (int64_t k = 0; es > 1 && k < n; k++) {
        char *e = p + (size_t)k * es;
        for (size_t i = 0; i < es / 2; i++) {
            char c = e[i];
            e[i] = e[es - 1 - i];
            e[es - 1 - i] = c;
        }
    }
}

/* Copies elements [begin, begin + count) in C order of the strided array (base, sizes,
   strides in elements, ndim) into dst. */
static CT__UNUSED void ct__npy_gather_strided(const char *base, const int64_t *sizes,
                                              const int64_t *strides, int ndim, size_t es,
                                              int64_t begin, int64_t count, char *dst)
{
    int64_t idx[CT_MAX_DIMS];
    int64_t rest = begin;
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = rest % sizes[d];
        rest /= sizes[d];
    }
    for (int64_t k = 0; k < count; k++) {
        int64_t off = 0;
        for (int d = 0; d < ndim; d++) {
            off += idx[d] * strides[d];
        }
        memcpy(dst + (size_t)k * es, base + off * (int64_t)es, es);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < sizes[d]) {
                break;
            }
            idx[d] = 0;
        }
    }
}

/* ---- header parsing ----------------------------------------------------------------- */
typedef struct ct__npy_cursor {
    const char *p, *begin, *end;
    const char *op;
} ct__npy_cursor;

static CT__UNUSED void ct__npy_skip_ws(ct__npy_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) {
        c->p++;
    }
}

/* Fails with a CT_ERR_FORMAT naming the header offset of the cursor. */
static CT__UNUSED bool ct__npy_bad(ct__npy_cursor *c, const char *what)
{
    ct__fail(CT_ERR_FORMAT, c->op, "malformed header: %s at header byte %ld", what,
             (long)(c->p - c->begin));
    return false;
}

static CT__UNUSED bool ct__npy_expect(ct__npy_cursor *c, char ch, const char *what)
{
    ct__npy_skip_ws(c);
    if (c->p >= c->end || *c->p != ch) {
        return ct__npy_bad(c, what);
    }
    c->p++;
    return true;
}

/* A quoted string without escapes, copied into out (cap bytes, NUL-terminated). */
static CT__UNUSED bool ct__npy_string(ct__npy_cursor *c, char *out, size_t cap)
{
    ct__npy_skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) {
        return ct__npy_bad(c, "expected a quoted string");
    }
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n' || n + 1 >= cap) {
            return ct__npy_bad(c, "unsupported or overlong string");
        }
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) {
        return ct__npy_bad(c, "unterminated string");
    }
    c->p++;
    out[n] = '\0';
    return true;
}

/* True or False. */
static CT__UNUSED bool ct__npy_bool(ct__npy_cursor *c, bool *out)
{
    ct__npy_skip_ws(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = true;
        return true;
    }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = false;
        return true;
    }
    return ct__npy_bad(c, "expected True or False for 'fortran_order'");
}

/* A tuple of non-negative decimal integers: (), (3,), (3, 4) or (3, 4,); Python 2's 'L'
   suffix is accepted. More than CT_MAX_DIMS entries is CT_ERR_UNSUPPORTED. */
static CT__UNUSED bool ct__npy_shape(ct__npy_cursor *c, int64_t *sizes, int *ndim)
{
    if (!ct__npy_expect(c, '(', "expected '(' to open 'shape'")) {
        return false;
    }
    int n = 0;
    bool need_sep = false;
    for (;;) {
        ct__npy_skip_ws(c);
        if (c->p >= c->end) {
            return ct__npy_bad(c, "unterminated 'shape' tuple");
        }
        if (*c->p == ')') {
            if (n == 1 && need_sep) {
                return ct__npy_bad(c, "a one-element 'shape' needs a trailing comma");
            }
            c->p++;
            break;
        }
        if (need_sep) {
            if (*c->p != ',') {
                return ct__npy_bad(c, "expected ',' or ')' in 'shape'");
            }
            c->p++;
            need_sep = false;
            continue;
        }
        if (*c->p < '0' || *c->p > '9') {
            return ct__npy_bad(c, "'shape' entries must be non-negative integers");
        }
        int64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (INT64_MAX / 16) / 10) {
                return ct__npy_bad(c, "'shape' entry is too large");
            }
            v = v * 10 + (*c->p++ - '0');
        }
        if (c->p < c->end && *c->p == 'L') {
            c->p++;
        }
        if (n == CT_MAX_DIMS) {
            ct__fail(CT_ERR_UNSUPPORTED, c->op, "arrays with more than %d dimensions are not "
                     "supported", CT_MAX_DIMS);
            return false;
        }
        sizes[n++] = v;
        need_sep = true;
    }
    *ndim = n;
    return true;
}

typedef struct ct__npy_header {
    char descr[32];
    bool fortran_order;
    int64_t sizes[CT_MAX_DIMS];
    int ndim;
} ct__npy_header;

/* Parses "{'descr': ..., 'fortran_order': ..., 'shape': (...), }" followed by whitespace;
   each key exactly once, no other keys. */
static CT__UNUSED bool ct__npy_parse_header(ct__npy_cursor *c, ct__npy_header *h)
{
    bool seen[3] = {false, false, false};
    if (!ct__npy_expect(c, '{', "expected '{'")) {
        return false;
    }
    for (;;) {
        ct__npy_skip_ws(c);
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            break;
        }
        char key[32];
        if (!ct__npy_string(c, key, sizeof key) || !ct__npy_expect(c, ':', "expected ':'")) {
            return false;
        }
        int k = strcmp(key, "descr") == 0 ? 0 : strcmp(key, "fortran_order") == 0 ? 1
              : strcmp(key, "shape") == 0 ? 2 : -1;
        if (k < 0) {
            ct__fail(CT_ERR_FORMAT, c->op, "Header does not contain the correct keys: "
                     "unexpected key '%s'", key);
            return false;
        }
        if (seen[k]) {
            ct__fail(CT_ERR_FORMAT, c->op, "malformed header: key '%s' appears twice", key);
            return false;
        }
        seen[k] = true;
        bool ok;
        if (k == 0) {
            ct__npy_skip_ws(c);
            if (c->p < c->end && (*c->p == '[' || *c->p == '{')) {
                ct__fail(CT_ERR_DTYPE, c->op, "structured dtypes are not supported");
                return false;
            }
            ok = ct__npy_string(c, h->descr, sizeof h->descr);
        } else if (k == 1) {
            ok = ct__npy_bool(c, &h->fortran_order);
        } else {
            ok = ct__npy_shape(c, h->sizes, &h->ndim);
        }
        if (!ok) {
            return false;
        }
        ct__npy_skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
        } else if (!(c->p < c->end && *c->p == '}')) {
            return ct__npy_bad(c, "expected ',' or '}'");
        }
    }
    ct__npy_skip_ws(c);
    if (c->p != c->end) {
        return ct__npy_bad(c, "unexpected characters after '}'");
    }
    if (!seen[0] || !seen[1] || !seen[2]) {
        ct__fail(CT_ERR_FORMAT, c->op, "Header does not contain the correct keys: missing "
                 "'%s'", !seen[0] ? "descr" : !seen[1] ? "fortran_order" : "shape");
        return false;
    }
    return true;
}

/* The dtype of a descr ("<f4", ">i8", "|u1", "=f2"); *big: whether its bytes are big-endian
   ('|' and '=' are the host's order, as numpy reads them). CT_DTYPE_DEFAULT when unknown. */
static CT__UNUSED ct_dtype ct__npy_dtype_of(const char *descr, bool *big)
{
    char order = descr[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        return CT_DTYPE_DEFAULT;
    }
    *big = order == '>' || (order != '<' && !ct__npy_little_endian());
    for (int d = 1; d < CT_DTYPE_COUNT; d++) {
        if (ct__npy_descr[d] && strcmp(descr + 1, ct__npy_descr[d] + 1) == 0) {
            return (ct_dtype)d;
        }
    }
    return CT_DTYPE_DEFAULT;
}

static CT__UNUSED uint32_t ct__npy_le(const unsigned char *p, int n)
{
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* The preamble + header length of the .npy bytes b[0..n), n >= 12 or the whole file;
   0 after an error (bad magic, version, truncation). */
static CT__UNUSED size_t ct__npy_header_len(const char *op, const unsigned char *b, size_t n)
{
    if (n < CT__NPY_MAGIC_LEN + 2) {
        ct__fail(CT_ERR_FORMAT, op, "truncated file: %zu bytes is shorter than the .npy "
                 "preamble", n);
        return 0;
    }
    if (memcmp(b, ct__npy_magic, CT__NPY_MAGIC_LEN) != 0) {
        ct__fail(CT_ERR_FORMAT, op, "the magic string is not correct; expected "
                 "'\\x93NUMPY', got '\\x%02x%c%c%c%c%c'", b[0],
                 b[1] >= 32 && b[1] < 127 ? b[1] : '?', b[2] >= 32 && b[2] < 127 ? b[2] : '?',
                 b[3] >= 32 && b[3] < 127 ? b[3] : '?', b[4] >= 32 && b[4] < 127 ? b[4] : '?',
                 b[5] >= 32 && b[5] < 127 ? b[5] : '?');
        return 0;
    }
    int major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "we only support format version (1,0), (2,0), and "
                 "(3,0), not (%d, %d)", major, minor);
        return 0;
    }
    size_t len_bytes = major == 1 ? 2 : 4;
    size_t prefix = CT__NPY_MAGIC_LEN + 2 + len_bytes;
    if (n < prefix) {
        ct__fail(CT_ERR_FORMAT, op, "truncated file: %zu bytes is shorter than the %zu-byte "
                 "preamble of format %d.0", n, prefix, major);
        return 0;
    }
    size_t hlen = ct__npy_le(b + CT__NPY_MAGIC_LEN + 2, (int)len_bytes);
    if (hlen > CT__NPY_HEADER_LIMIT) {
        ct__fail(CT_ERR_FORMAT, op, "header length %zu exceeds the limit of %d bytes", hlen,
                 CT__NPY_HEADER_LIMIT);
        return 0;
    }
    return prefix + hlen;
}

bool ct__npy_read_header(const char *op, const unsigned char *b, size_t n,
                         ct__npy_info *info)
{
    size_t end = ct__npy_header_len(op, b, n);
    if (end == 0) {
        return false;
    }
    size_t prefix = b[6] == 1 ? CT__NPY_MAGIC_LEN + 4 : CT__NPY_MAGIC_LEN + 6;
    if (end > n) {
        ct__fail(CT_ERR_FORMAT, op, "header length %zu exceeds the %zu bytes left in the file "
                 "(truncated or corrupt)", end - prefix, n - prefix);
        return false;
    }
    ct__npy_cursor c;
    c.begin = c.p = (const char *)b + prefix;
    c.end = (const char *)b + end;
    c.op = op;
    ct__npy_header h;
    memset(&h, 0, sizeof h);
    if (!ct__npy_parse_header(&c, &h)) {
        return false;
    }
    bool big = false;
    info->dtype = ct__npy_dtype_of(h.descr, &big);
    if (info->dtype == CT_DTYPE_DEFAULT) {
        ct__fail(CT_ERR_DTYPE, op, "unsupported dtype descr '%s' (supported, in '<', '>' or "
                 "'|' order: f2 f4 f8 i1 i2 i4 i8 u1 b1)", h.descr);
        return false;
    }
    info->swap = big == ct__npy_little_endian();
    memcpy(info->descr, h.descr, sizeof h.descr);
    info->fortran_order = h.fortran_order;
    info->ndim = h.ndim;
    memcpy(info->sizes, h.sizes, sizeof h.sizes);
    info->data_offset = end;
    /* each size < 2^59 (parser); bound the product of the nonzero sizes so that strides
       and byte counts cannot overflow */
    uint64_t span = 1;
    bool empty = false;
    for (int i = 0; i < h.ndim; i++) {
        uint64_t s = (uint64_t)h.sizes[i];
        if (s == 0) {
            empty = true;
        } else if (span > (uint64_t)(INT64_MAX / 16) / s) {
            char buf[200];
            ct__fail(CT_ERR_FORMAT, op, "shape %s is too large",
                     ct__shape_str(h.sizes, h.ndim, buf, sizeof buf));
            return false;
        } else {
            span *= s;
        }
    }
    info->data_bytes = empty ? 0 : span * (uint64_t)ct_dtype_size(info->dtype);
    return true;
}

/* A new tensor from the data of a parsed header (src holds info->data_bytes bytes):
   Fortran order transposed into C order, bytes swapped into the host's order, bools as 0/1. */
static CT__UNUSED ct_tensor *ct__npy_decode(const char *op, const ct__npy_info *info,
                                            const unsigned char *src)
{
    ct_tensor *t = ct__tensor_new(op, info->sizes, info->ndim, info->dtype);
    if (!t || info->data_bytes == 0) {
        return t;
    }
    char *dst = ct__data(t);
    size_t es = ct_dtype_size(info->dtype);
    int64_t numel = (int64_t)(info->data_bytes / es);
    if (info->fortran_order && info->ndim > 1) {
        int64_t strides[CT_MAX_DIMS];
        strides[0] = 1;
        for (int d = 1; d < info->ndim; d++) {
            strides[d] = strides[d - 1] * info->sizes[d - 1];
        }
        ct__npy_gather_strided((const char *)src, info->sizes, strides, info->ndim, es, 0,
                               numel, dst);
    } else {
        memcpy(dst, src, (size_t)info->data_bytes);
    }
    if (info->swap) {
        ct__npy_swap(dst, numel, es);
    }
    if (info->dtype == CT_BOOL) {
        for (int64_t i = 0; i < numel; i++) {
            dst[i] = dst[i] != 0; /* only 0 and 1 are valid bool bytes */
        }
    }
    return t;
}

/* Parses the header of the whole .npy file b[0..n) and checks that exactly the shape's data
   follows it. */
static CT__UNUSED bool ct__npy_read_file(const char *op, const unsigned char *b, size_t n,
                                         ct__npy_info *info)
{
    if (!ct__npy_read_header(op, b, n, info)) {
        return false;
    }
    uint64_t have = (uint64_t)(n - info->data_offset);
    if (info->data_bytes != have) {
        char buf[200];
        ct__fail(CT_ERR_FORMAT, op, "data has %llu bytes but shape %s%s of %s needs %llu%s",
                 (unsigned long long)have, ct__shape_str(info->sizes, info->ndim, buf,
                 sizeof buf), info->fortran_order ? " (fortran_order)" : "", info->descr,
                 (unsigned long long)info->data_bytes, have < info->data_bytes ?
                 " (truncated file)" : "");
        return false;
    }
    return true;
}

ct_tensor *ct__npy_parse(const char *op, const unsigned char *b, size_t n)
{
    ct__npy_info info;
    return ct__npy_read_file(op, b, n, &info) ? ct__npy_decode(op, &info, b + info.data_offset)
                                              : NULL;
}

ct_tensor *ct_npy_load_buffer(const void *data, size_t nbytes)
{
    if (nbytes > 0 && ct__null("ct_npy_load_buffer", data)) {
        return NULL;
    }
    return ct__scoped(ct__npy_parse("ct_npy_load_buffer",
                                    (const unsigned char *)(nbytes ? data : ""), nbytes));
}

/* ---- writing ------------------------------------------------------------------------ */
/* Writes numpy.save's preamble and padded header for t into out; returns its length. */
static CT__UNUSED size_t ct__npy_header_bytes(const ct_tensor *t, char *out)
{
    char *h = out + CT__NPY_MAGIC_LEN + 4;
    size_t cap = CT__NPY_HEADER_MAX - CT__NPY_MAGIC_LEN - 4;
    int n = snprintf(h, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     ct__npy_descr[t->dtype]);
    for (int i = 0; i < t->ndim; i++) {
        n += snprintf(h + n, cap - (size_t)n, i ? ", %lld" : "%lld", (long long)t->sizes[i]);
    }
    n += snprintf(h + n, cap - (size_t)n, "%s), }", t->ndim == 1 ? "," : "");
    if (t->ndim > 0) {
        int digits = snprintf(NULL, 0, "%lld", (long long)t->sizes[0]);
        for (int i = digits; i < CT__NPY_GROWTH_DIGITS; i++) {
            h[n++] = ' ';
        }
    }
    size_t hlen = (size_t)n + 1;
    size_t pad = CT__NPY_ALIGN - ((CT__NPY_MAGIC_LEN + 4 + hlen) % CT__NPY_ALIGN);
    memset(h + n, ' ', pad);
    h[(size_t)n + pad] = '\n';
    hlen += pad;
    memcpy(out, ct__npy_magic, CT__NPY_MAGIC_LEN);
    out[6] = 1;
    out[7] = 0;
    out[8] = (char)(hlen & 0xff);
    out[9] = (char)(hlen >> 8);
    return CT__NPY_MAGIC_LEN + 4 + hlen;
}

/* Copies elements [begin, begin + count) of t in C order into dst (little-endian). */
static CT__UNUSED void ct__npy_gather(const ct_tensor *t, int64_t begin, int64_t count, char *dst)
{
    size_t es = ct_dtype_size(t->dtype);
    if (ct_is_contiguous(t)) {
        memcpy(dst, ct__data(t) + (size_t)begin * es, (size_t)count * es);
    } else {
        ct__npy_gather_strided(ct__data(t), t->sizes, t->strides, t->ndim, es, begin, count,
                               dst);
    }
    if (!ct__npy_little_endian()) {
        ct__npy_swap(dst, count, es);
    }
}

static CT__UNUSED bool ct__npy_check_saveable(const char *op, const ct_tensor *t)
{
    if (ct__null(op, t) || !ct__check_cpu(op, t)) {
        return false;
    }
    if (!ct__npy_descr[t->dtype]) {
        ct__fail(CT_ERR_DTYPE, op, "numpy has no dtype for %s", ct_dtype_name(t->dtype));
        return false;
    }
    return true;
}

size_t ct_npy_save_buffer(const ct_tensor *t, void *buf, size_t n)
{
    if (!ct__npy_check_saveable("ct_npy_save_buffer", t)) {
        return 0;
    }
    char header[CT__NPY_HEADER_MAX];
    size_t hbytes = ct__npy_header_bytes(t, header);
    int64_t numel = ct__numel(t->sizes, t->ndim);
    size_t total = hbytes + (size_t)numel * ct_dtype_size(t->dtype);
    if (buf && n >= total) {
        char *out = (char *)buf;
        memcpy(out, header, hbytes);
        if (numel > 0) {
            ct__npy_gather(t, 0, numel, out + hbytes);
        }
    }
    return total;
}

#ifndef CTORCH_NO_STDIO
ct_tensor *ct_npy_load(const char *path)
{
    ct__file_bytes fb;
    if (!ct__file_open("ct_npy_load", path, &fb)) {
        return NULL;
    }
    ct_tensor *t = ct__npy_parse("ct_npy_load", fb.data, fb.nbytes);
    ct__file_close(&fb);
    return ct__scoped(t);
}

ct_tensor *ct_npy_load_mmap(const char *path)
{
    const char *op = "ct_npy_load_mmap";
    ct__file_bytes *fb = ct__file_share(op, path);
    if (!fb) {
        return NULL;
    }
    ct__npy_info info;
    ct_tensor *t = NULL;
    if (ct__npy_read_file(op, fb->data, fb->nbytes, &info)) {
        const unsigned char *src = fb->data + info.data_offset;
        bool as_is = !info.swap && (!info.fortran_order || info.ndim < 2) &&
                     info.dtype != CT_BOOL && info.data_bytes > 0 &&
                     (uintptr_t)src % ct_dtype_size(info.dtype) == 0;
        t = as_is ? ct__file_borrow(op, fb, info.data_offset, info.dtype, info.sizes, info.ndim)
                  : ct__npy_decode(op, &info, src);
    }
    ct__file_unshare(NULL, fb);
    return ct__scoped(t);
}

ct_status ct_npy_save(const char *path, const ct_tensor *t)
{
    const char *op = "ct_npy_save";
    if (ct__null(op, path) || !ct__npy_check_saveable(op, t)) {
        return ct_error_code();
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        return ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
    }
    char header[CT__NPY_HEADER_MAX];
    size_t hbytes = ct__npy_header_bytes(t, header);
    bool ok = fwrite(header, 1, hbytes, f) == hbytes;
    int64_t numel = ct__numel(t->sizes, t->ndim);
    size_t es = ct_dtype_size(t->dtype);
    int64_t chunk = (int64_t)((size_t)1 << 20) / (int64_t)es;
    char *buf = numel > 0 ? (char *)ct__malloc((size_t)(numel < chunk ? numel : chunk) * es) : NULL;
    if (numel > 0 && !buf) {
        fclose(f);
        return ct__fail(CT_ERR_OOM, op, "not enough memory to write '%s'", path);
    }
    for (int64_t k = 0; ok && k < numel; k += chunk) {
        int64_t count = numel - k < chunk ? numel - k : chunk;
        ct__npy_gather(t, k, count, buf);
        ok = fwrite(buf, es, (size_t)count, f) == (size_t)count;
    }
    ct__free(buf);
    if (fclose(f) != 0) {
        ok = false;
    }
    if (!ok) {
        return ct__fail(CT_ERR_IO, op, "could not write '%s'", path);
    }
    return CT_OK;
}
#endif

#undef CT__NPY_MAGIC_LEN
#undef CT__NPY_ALIGN
#undef CT__NPY_GROWTH_DIGITS
#undef CT__NPY_HEADER_MAX
#undef CT__NPY_HEADER_LIMIT
CT__GLUE_END
