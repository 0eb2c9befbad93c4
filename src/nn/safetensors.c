/* nn/safetensors.c - the safetensors reader and writer (ct_save / ct_load).
 *
 * Reading: the 8-byte header length, then the header through a bounded JSON cursor that
 * never reads past its end and accepts exactly the safetensors schema; then the offsets are
 * validated as the safetensors library does (sorted by begin, they tile the data section)
 * before any tensor is made. Writing: save_file's order and compact JSON, padded to 8.
 */
#include "../core/internal.h"
#include "../core/scope.h"
#include "../ops/view.h"
#include "state_dict.h"
#include "module.h"
#include "safetensors.h"

#include <stdio.h>
#ifndef CTORCH_NO_STDIO
#include <errno.h>
#include "../data/reader_internal.h"
#endif

CT__GLUE_BEGIN

#define CT__ST_HEADER_MAX 100000000u /* the safetensors library's MAX_HEADER_SIZE */
#define CT__ST_ALIGN 8               /* the header is padded with spaces to a multiple of 8 */

/* safetensors' dtype names in ctorch's enum order (index 0 unused), and each dtype's place in
   safetensors' Dtype enum (BOOL < U8 < I8 < I16 < F16 < BF16 < I32 < F32 < F64 < I64), by
   which save_file orders tensors (descending). */
static const char *const ct__st_dtype_names[CT_DTYPE_COUNT] = {
    NULL, "BOOL", "U8", "I8", "I16", "I32", "I64", "F32", "F64", "F16", "BF16",
};
static const int ct__st_dtype_rank[CT_DTYPE_COUNT] = {0, 0, 1, 2, 3, 6, 9, 7, 8, 4, 5};

static CT__UNUSED bool ct__st_little_endian(const char *op)
{
    uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    if (first != 1) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "safetensors files on big-endian hosts");
    }
    return first == 1;
}

/* The offset of the first byte of s[0..n) that is not valid UTF-8 (RFC 3629: no overlong
   forms, no surrogates, at most U+10FFFF), or n. */
static CT__UNUSED size_t ct__st_utf8_bad(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (len == 0 || n - i < len) {
            return i;
        }
        unsigned lo = 0x80, hi = 0xbf; /* the allowed range of the second byte */
        if (c == 0xe0) {
            lo = 0xa0;
        } else if (c == 0xed) {
            hi = 0x9f;
        } else if (c == 0xf0) {
            lo = 0x90;
        } else if (c == 0xf4) {
            hi = 0x8f;
        }
        for (size_t k = 1; k < len; k++) {
            unsigned b = s[i + k];
            if (k == 1 ? b < lo || b > hi : (b & 0xc0) != 0x80) {
                return i;
            }
        }
        i += len;
    }
    return n;
}

/* ---- the parsed header -------------------------------------------------------------- */
typedef struct ct__st_entry {
    char *name;
    ct_dtype dtype;
    int ndim;
    int64_t sizes[CT_MAX_DIMS];
    uint64_t begin, end;
} ct__st_entry;

typedef struct ct__st_header {
    ct__st_entry *tensors;
    int64_t n, cap;
    char **meta; /* key, value, key, value ... */
    int64_t n_meta, meta_cap;
    bool has_meta;
} ct__st_header;

static CT__UNUSED void ct__st_header_free(ct__st_header *h)
{
    for (int64_t i = 0; i < h->n; i++) {
        ct__free(h->tensors[i].name);
    }
    for (int64_t i = 0; i < 2 * h->n_meta; i++) {
        ct__free(h->meta[i]);
    }
    ct__free(h->tensors);
    ct__free(h->meta);
}

/* Grows *items (of elem bytes each) to hold one more; false + CT_ERR_OOM. */
static CT__UNUSED bool ct__st_grow(const char *op, void **items, int64_t len, int64_t *cap,
                                   size_t elem)
{
    if (len < *cap) {
        return true;
    }
    int64_t c = *cap ? *cap * 2 : 16;
    void *p = ct__realloc(*items, elem * (size_t)c);
    if (!p) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return false;
    }
    *items = p;
    *cap = c;
    return true;
}

/* ---- JSON --------------------------------------------------------------------------- */
typedef struct ct__st_json {
    const char *p, *begin, *end;
    const char *op;
} ct__st_json;

static CT__UNUSED bool ct__st_bad(ct__st_json *c, const char *what)
{
    ct__fail(CT_ERR_FORMAT, c->op, "invalid JSON header: %s at header byte %ld", what,
             (long)(c->p - c->begin));
    return false;
}

/* Skips whitespace; true when the next character is ch (not consumed). */
static CT__UNUSED bool ct__st_peek(ct__st_json *c, char ch)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) {
        c->p++;
    }
    return c->p < c->end && *c->p == ch;
}

static CT__UNUSED bool ct__st_expect(ct__st_json *c, char ch, const char *what)
{
    if (!ct__st_peek(c, ch)) {
        return ct__st_bad(c, what);
    }
    c->p++;
    return true;
}

/* After a member or element: ',' (true, *more) or the closing character (true, !*more). */
static CT__UNUSED bool ct__st_next(ct__st_json *c, char close, bool *more, const char *what)
{
    if (ct__st_peek(c, ',')) {
        c->p++;
        *more = true;
        return true;
    }
    if (ct__st_peek(c, close)) {
        c->p++;
        *more = false;
        return true;
    }
    return ct__st_bad(c, what);
}

static CT__UNUSED int ct__st_hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char h = p[i];
        int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

static CT__UNUSED size_t ct__st_put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decodes the escape at c->p (after the backslash, before close) into out; its length, or 0
   after an error. */
static CT__UNUSED size_t ct__st_escape(ct__st_json *c, const char *close, char *out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *hit = c->p < close && *c->p ? strchr(from, *c->p) : NULL;
    if (hit) {
        c->p++;
        *out = to[hit - from];
        return 1;
    }
    if (c->p >= close || *c->p != 'u' || close - c->p < 5) {
        ct__st_bad(c, "invalid escape in a string");
        return 0;
    }
    int cp = ct__st_hex4(c->p + 1);
    if (cp < 0) {
        ct__st_bad(c, "invalid \\u escape");
        return 0;
    }
    c->p += 5;
    uint32_t code = (uint32_t)cp;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        int lo = close - c->p >= 6 && c->p[0] == '\\' && c->p[1] == 'u' ? ct__st_hex4(c->p + 2)
                                                                         : -1;
        if (lo < 0xdc00 || lo > 0xdfff) {
            ct__st_bad(c, "lone leading surrogate in a \\u escape");
        return 0;
        }
        c->p += 6;
        code = 0x10000 + (((uint32_t)cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
        ct__st_bad(c, "lone trailing surrogate in a \\u escape");
        return 0;
    } else if (cp == 0) {
        ct__st_bad(c, "\\u0000 in a string");
        return 0;
    }
    return ct__st_put_utf8(out, code);
}

/* A JSON string, decoded into a new NUL-terminated buffer (ct__free), or NULL. */
static CT__UNUSED char *ct__st_string(ct__st_json *c, const char *what)
{
    if (!ct__st_expect(c, '"', what)) {
        return NULL;
    }
    const char *close = c->p;
    while (close < c->end && *close != '"') {
        close += *close == '\\' && close + 1 < c->end ? 2 : 1;
    }
    if (close >= c->end) {
        ct__st_bad(c, "unterminated string");
        return NULL;
    }
    /* escapes only shrink: the raw length bounds the decoded one */
    char *out = (char *)ct__malloc((size_t)(close - c->p) + 1);
    if (!out) {
        ct__fail(CT_ERR_OOM, c->op, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (c->p < close) {
        unsigned char ch = (unsigned char)*c->p;
        size_t k = 1;
        if (ch < 0x20) {
            ct__st_bad(c, "control character in a string");
            k = 0;
        } else if (ch == '\\') {
            c->p++;
            k = ct__st_escape(c, close, out + n);
        } else {
            out[n] = (char)ch;
            c->p++;
        }
        if (k == 0) {
            ct__free(out);
            return NULL;
        }
        n += k;
    }
    c->p++; /* the closing quote */
    out[n] = '\0';
    return out;
}

/* A non-negative integer <= max (JSON: no sign, fraction, exponent or leading zeros). */
static CT__UNUSED bool ct__st_uint(ct__st_json *c, uint64_t max, uint64_t *out)
{
    ct__st_peek(c, '0'); /* skips whitespace */
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') {
        return ct__st_bad(c, "expected a non-negative integer");
    }
    if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9') {
        return ct__st_bad(c, "integer with a leading zero");
    }
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        uint64_t d = (uint64_t)(*c->p - '0');
        if (v > (max - d) / 10) {
            return ct__st_bad(c, "integer out of range");
        }
        v = v * 10 + d;
        c->p++;
    }
    if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')) {
        return ct__st_bad(c, "expected a non-negative integer");
    }
    *out = v;
    return true;
}

/* "[a, b, ...]" of at most cap integers <= max into out; *n their count. */
static CT__UNUSED bool ct__st_uint_array(ct__st_json *c, uint64_t max, uint64_t *out, int cap,
                                         int *n, const char *name)
{
    if (!ct__st_expect(c, '[', "expected '['")) {
        return false;
    }
    *n = 0;
    if (ct__st_peek(c, ']')) {
        c->p++;
        return true;
    }
    for (bool more = true; more;) {
        if (*n == cap) {
            if (cap == CT_MAX_DIMS) {
                ct__fail(CT_ERR_UNSUPPORTED, c->op, "tensor '%s' has more than %d dimensions",
                         name, CT_MAX_DIMS);
                return false;
            }
            return ct__st_bad(c, "data_offsets must hold 2 integers");
        }
        if (!ct__st_uint(c, max, &out[(*n)++]) ||
            !ct__st_next(c, ']', &more, "expected ',' or ']'")) {
            return false;
        }
    }
    return true;
}

static CT__UNUSED ct_dtype ct__st_dtype_of(const char *name)
{
    for (int d = 1; d < CT_DTYPE_COUNT; d++) {
        if (strcmp(name, ct__st_dtype_names[d]) == 0) {
            return (ct_dtype)d;
        }
    }
    return CT_DTYPE_DEFAULT;
}

/* The value of one field of a tensor's info: k 0 "dtype", 1 "shape", 2 "data_offsets". */
static CT__UNUSED bool ct__st_field(ct__st_json *c, int k, ct__st_entry *e)
{
    uint64_t v[CT_MAX_DIMS];
    int n;
    if (k == 0) {
        char *s = ct__st_string(c, "expected a string for 'dtype'");
        if (!s) {
            return false;
        }
        e->dtype = ct__st_dtype_of(s);
        if (e->dtype == CT_DTYPE_DEFAULT) {
            ct__fail(CT_ERR_DTYPE, c->op, "tensor '%s' has dtype '%.40s', which ctorch does not "
                     "support (F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)", e->name, s);
        }
        ct__free(s);
        return e->dtype != CT_DTYPE_DEFAULT;
    }
    if (k == 1) {
        if (!ct__st_uint_array(c, (uint64_t)INT64_MAX, v, CT_MAX_DIMS, &n, e->name)) {
            return false;
        }
        e->ndim = n;
        for (int i = 0; i < n; i++) {
            e->sizes[i] = (int64_t)v[i];
        }
        return true;
    }
    if (!ct__st_uint_array(c, UINT64_MAX, v, 2, &n, e->name)) {
        return false;
    }
    if (n != 2) {
        return ct__st_bad(c, "data_offsets must hold 2 integers");
    }
    e->begin = v[0];
    e->end = v[1];
    return true;
}

/* {"dtype": "F32", "shape": [..], "data_offsets": [b, e]}, each field exactly once. */
static CT__UNUSED bool ct__st_tensor_info(ct__st_json *c, ct__st_entry *e)
{
    static const char *const fields[3] = {"dtype", "shape", "data_offsets"};
    bool seen[3] = {false, false, false};
    if (!ct__st_expect(c, '{', "expected '{' to open a tensor's info")) {
        return false;
    }
    bool more = !ct__st_peek(c, '}');
    if (!more) {
        c->p++;
    }
    while (more) {
        char *key = ct__st_string(c, "expected a field name");
        if (!key) {
            return false;
        }
        int k = 0;
        while (k < 3 && strcmp(key, fields[k]) != 0) {
            k++;
        }
        if (k == 3 || seen[k]) {
            ct__fail(CT_ERR_FORMAT, c->op, "tensor '%s': %s field '%.40s'", e->name,
                     k == 3 ? "unknown" : "duplicate", key);
        }
        ct__free(key);
        if (k == 3 || seen[k]) {
            return false;
        }
        seen[k] = true;
        if (!ct__st_expect(c, ':', "expected ':'") || !ct__st_field(c, k, e) ||
            !ct__st_next(c, '}', &more, "expected ',' or '}'")) {
            return false;
        }
    }
    for (int k = 0; k < 3; k++) {
        if (!seen[k]) {
            ct__fail(CT_ERR_FORMAT, c->op, "tensor '%s': missing field '%s'", e->name,
                     fields[k]);
            return false;
        }
    }
    return true;
}

/* "__metadata__": null or {"key": "value", ...} with unique keys. */
static CT__UNUSED bool ct__st_metadata(ct__st_json *c, ct__st_header *h)
{
    if (h->has_meta) {
        ct__fail(CT_ERR_FORMAT, c->op, "duplicate key '__metadata__'");
        return false;
    }
    h->has_meta = true;
    if (ct__st_peek(c, 'n')) {
        if (c->end - c->p < 4 || memcmp(c->p, "null", 4) != 0) {
            return ct__st_bad(c, "expected an object or null for '__metadata__'");
        }
        c->p += 4;
        return true;
    }
    if (!ct__st_expect(c, '{', "expected an object or null for '__metadata__'")) {
        return false;
    }
    bool more = !ct__st_peek(c, '}');
    if (!more) {
        c->p++;
    }
    while (more) {
        if (!ct__st_grow(c->op, (void **)&h->meta, 2 * h->n_meta + 2, &h->meta_cap,
                         sizeof(char *))) {
            return false;
        }
        char *key = ct__st_string(c, "expected a metadata key");
        char *value = key && ct__st_expect(c, ':', "expected ':'")
                          ? ct__st_string(c, "metadata values must be strings") : NULL;
        if (!value) {
            ct__free(key);
            return false;
        }
        h->meta[2 * h->n_meta] = key;
        h->meta[2 * h->n_meta + 1] = value;
        h->n_meta++;
        for (int64_t i = 0; i + 1 < h->n_meta; i++) {
            if (strcmp(h->meta[2 * i], key) == 0) {
                ct__fail(CT_ERR_FORMAT, c->op, "duplicate metadata key '%.80s'", key);
                return false;
            }
        }
        if (!ct__st_next(c, '}', &more, "expected ',' or '}'")) {
            return false;
        }
    }
    return true;
}

/* The whole header: {"__metadata__": ..., "name": {...}, ...} then only whitespace. */
static CT__UNUSED bool ct__st_parse_json(ct__st_json *c, ct__st_header *h)
{
    if (!ct__st_expect(c, '{', "expected '{'")) {
        return false;
    }
    bool more = !ct__st_peek(c, '}');
    if (!more) {
        c->p++;
    }
    while (more) {
        char *key = ct__st_string(c, "expected a tensor name");
        if (!key) {
            return false;
        }
        if (!ct__st_expect(c, ':', "expected ':'")) {
            ct__free(key);
            return false;
        }
        bool ok;
        if (strcmp(key, "__metadata__") == 0) {
            ct__free(key);
            ok = ct__st_metadata(c, h);
        } else if (!ct__st_grow(c->op, (void **)&h->tensors, h->n, &h->cap,
                                sizeof(ct__st_entry))) {
            ct__free(key);
            return false;
        } else {
            ct__st_entry *e = &h->tensors[h->n++];
            memset(e, 0, sizeof *e);
            e->name = key;
            ok = ct__st_tensor_info(c, e);
        }
        if (!ok || !ct__st_next(c, '}', &more, "expected ',' or '}'")) {
            return false;
        }
    }
    if (ct__st_peek(c, '\0') || c->p != c->end) {
        return ct__st_bad(c, "unexpected characters after the JSON object");
    }
    return true;
}

/* ---- validation --------------------------------------------------------------------- */
static int ct__st_by_name(const void *a, const void *b)
{
    return strcmp(((const ct__st_entry *)a)->name, ((const ct__st_entry *)b)->name);
}

static int ct__st_by_offsets(const void *a, const void *b)
{
    const ct__st_entry *x = (const ct__st_entry *)a, *y = (const ct__st_entry *)b;
    if (x->begin != y->begin) {
        return x->begin < y->begin ? -1 : 1;
    }
    return x->end < y->end ? -1 : x->end > y->end ? 1 : 0;
}

/* The byte count of e's shape, or false when it overflows. */
static CT__UNUSED bool ct__st_nbytes(const ct__st_entry *e, uint64_t *out)
{
    uint64_t es = ct_dtype_size(e->dtype), n = es;
    for (int i = 0; i < e->ndim; i++) {
        uint64_t s = (uint64_t)e->sizes[i];
        if (s == 0) {
            *out = 0;
            return true;
        }
        if (n > (uint64_t)INT64_MAX / s) {
            return false;
        }
        n *= s;
    }
    *out = n;
    return true;
}

/* Names unique; offsets, in begin order, tile [0, data_len) exactly; sizes match shapes.
   Leaves the tensors in offset order. */
static CT__UNUSED bool ct__st_validate(const char *op, ct__st_header *h, uint64_t data_len)
{
    if (h->n > 1) {
        qsort(h->tensors, (size_t)h->n, sizeof(ct__st_entry), ct__st_by_name);
    }
    for (int64_t i = 0; i + 1 < h->n; i++) {
        if (strcmp(h->tensors[i].name, h->tensors[i + 1].name) == 0) {
            ct__fail(CT_ERR_FORMAT, op, "duplicate tensor name '%.80s'", h->tensors[i].name);
            return false;
        }
    }
    if (h->n > 1) {
        qsort(h->tensors, (size_t)h->n, sizeof(ct__st_entry), ct__st_by_offsets);
    }
    uint64_t pos = 0;
    for (int64_t i = 0; i < h->n; i++) {
        const ct__st_entry *e = &h->tensors[i];
        unsigned long long b = e->begin, en = e->end;
        uint64_t need = 0;
        char shape[200];
        if (en < b || en > data_len) {
            ct__fail(CT_ERR_FORMAT, op, "tensor '%.80s': data_offsets [%llu, %llu] %s", e->name,
                     b, en, en < b ? "end before they begin" : "are past the end of the data");
            return false;
        }
        if (b != pos) {
            ct__fail(CT_ERR_FORMAT, op, "tensor '%.80s': data_offsets [%llu, %llu] leave a hole "
                     "or overlap: expected it to begin at %llu", e->name, b, en,
                     (unsigned long long)pos);
            return false;
        }
        ct__shape_str(e->sizes, e->ndim, shape, sizeof shape);
        if (!ct__st_nbytes(e, &need)) {
            ct__fail(CT_ERR_FORMAT, op, "tensor '%.80s': shape %s of %s overflows", e->name,
                     shape, ct__st_dtype_names[e->dtype]);
            return false;
        }
        if (need != en - b) {
            ct__fail(CT_ERR_FORMAT, op, "tensor '%.80s': shape %s of %s needs %llu bytes but "
                     "data_offsets [%llu, %llu] hold %llu", e->name, shape,
                     ct__st_dtype_names[e->dtype], (unsigned long long)need, b, en, en - b);
            return false;
        }
        pos = e->end;
    }
    if (pos != data_len) {
        ct__fail(CT_ERR_FORMAT, op, "the tensors' data ends at byte %llu of the %llu-byte data "
                 "section", (unsigned long long)pos, (unsigned long long)data_len);
        return false;
    }
    return true;
}

/* Reads the 8-byte header length from b and checks it against the file size. */
static CT__UNUSED bool ct__st_preamble(const char *op, const unsigned char *b, uint64_t file_len,
                                       uint64_t *hlen)
{
    if (file_len < 8) {
        ct__fail(CT_ERR_FORMAT, op, "file of %llu bytes is shorter than the 8-byte header "
                 "length (truncated or not a safetensors file)", (unsigned long long)file_len);
        return false;
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) {
        n = (n << 8) | b[i];
    }
    if (n > CT__ST_HEADER_MAX) {
        ct__fail(CT_ERR_FORMAT, op, "header length %llu is larger than the limit of %u bytes",
                 (unsigned long long)n, CT__ST_HEADER_MAX);
        return false;
    }
    if (n > file_len - 8) {
        ct__fail(CT_ERR_FORMAT, op, "header length %llu exceeds the %llu bytes left in the file "
                 "(truncated or corrupt)", (unsigned long long)n,
                 (unsigned long long)(file_len - 8));
        return false;
    }
    *hlen = n;
    return true;
}

/* Parses and validates header bytes hdr[0..hlen) for a data section of data_len bytes. */
static CT__UNUSED bool ct__st_parse(const char *op, const char *hdr, size_t hlen,
                                    uint64_t data_len, ct__st_header *h)
{
    memset(h, 0, sizeof *h);
    if (!ct__st_little_endian(op)) {
        return false;
    }
    size_t bad = ct__st_utf8_bad((const unsigned char *)hdr, hlen);
    if (bad < hlen) {
        ct__fail(CT_ERR_FORMAT, op, "header is not valid UTF-8 (at header byte %zu)", bad);
        return false;
    }
    ct__st_json c = {hdr, hdr, hdr + hlen, op};
    if (ct__st_parse_json(&c, h) && ct__st_validate(op, h, data_len)) {
        return true;
    }
    ct__st_header_free(h);
    return false;
}

/* ---- building the state_dict -------------------------------------------------------- */
/* Makes the tensor of e (a new reference, not in a scope), or NULL after an error. */
typedef ct_tensor *(*ct__st_make_fn)(const char *op, const ct__st_entry *e, void *ctx);

static CT__UNUSED void ct__st_fix_bool(const ct_tensor *t)
{
    if (t->dtype != CT_BOOL) {
        return;
    }
    char *p = ct__data(t);
    int64_t n = ct__numel(t->sizes, t->ndim);
    for (int64_t i = 0; i < n; i++) {
        if (p[i] != 0 && p[i] != 1) {
            p[i] = 1; /* only 0 and 1 are valid bool bytes */
        }
    }
}

/* The tensors (data order), then the metadata as strings; frees h. */
static CT__UNUSED ct_state_dict *ct__st_build(const char *op, ct__st_header *h,
                                              ct__st_make_fn make, void *ctx)
{
    ct_state_dict *sd = ct_state_dict_new();
    bool ok = sd != NULL;
    for (int64_t i = 0; ok && i < h->n; i++) {
        ct_tensor *t = make(op, &h->tensors[i], ctx);
        ok = t && ct_state_dict_set(sd, h->tensors[i].name, t) == CT_OK;
        ct__release(t);
    }
    for (int64_t i = 0; ok && i < h->n_meta; i++) {
        ok = ct_state_dict_set_string(sd, h->meta[2 * i], h->meta[2 * i + 1]) == CT_OK;
    }
    ct__st_header_free(h);
    if (!ok) {
        ct_state_dict_free(sd);
        return NULL;
    }
    return sd;
}

/* make: a copy of the bytes at data + begin (ctx: the data section). */
static CT__UNUSED ct_tensor *ct__st_make_copy(const char *op, const ct__st_entry *e, void *ctx)
{
    ct_tensor *t = ct__tensor_new(op, e->sizes, e->ndim, e->dtype);
    if (t && e->end > e->begin) {
        memcpy(ct__data(t), (const char *)ctx + e->begin, (size_t)(e->end - e->begin));
        ct__st_fix_bool(t);
    }
    return t;
}

ct_state_dict *ct_load_buffer(const void *data, size_t nbytes)
{
    const char *op = "ct_load_buffer";
    if (ct__null(op, data)) {
        return NULL;
    }
    const char *b = (const char *)data;
    uint64_t hlen;
    ct__st_header h;
    if (!ct__st_preamble(op, (const unsigned char *)b, nbytes, &hlen) ||
        !ct__st_parse(op, b + 8, (size_t)hlen, nbytes - 8 - hlen, &h)) {
        return NULL;
    }
    return ct__st_build(op, &h, ct__st_make_copy, (void *)(uintptr_t)(b + 8 + hlen));
}

/* ---- writing ------------------------------------------------------------------------ */
typedef struct ct__st_buf {
    char *p;
    size_t len, cap;
    bool oom;
} ct__st_buf;

static CT__UNUSED void ct__st_put(ct__st_buf *b, const char *s, size_t n)
{
    if (b->oom) {
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) {
            cap *= 2;
        }
        char *p = (char *)ct__realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static CT__UNUSED void ct__st_puts(ct__st_buf *b, const char *s)
{
    ct__st_put(b, s, strlen(s));
}

/* s as a JSON string, escaped as serde_json does. */
static CT__UNUSED void ct__st_put_string(ct__st_buf *b, const char *s)
{
    ct__st_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        const char *named = *p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\b' ? "\\b"
                          : *p == '\f' ? "\\f" : *p == '\n' ? "\\n" : *p == '\r' ? "\\r"
                          : *p == '\t' ? "\\t" : NULL;
        if (named) {
            ct__st_puts(b, named);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            ct__st_puts(b, esc);
        } else {
            ct__st_put(b, (const char *)p, 1);
        }
    }
    ct__st_put(b, "\"", 1);
}

/* One entry of the state_dict being saved. */
typedef struct ct__st_item {
    const char *key;
    ct_tensor *tensor; /* NULL for metadata */
    char text[32];     /* metadata: an int or double as text */
    const char *value; /* metadata: a string entry's (NULL: text) */
} ct__st_item;

static int ct__st_save_order(const void *a, const void *b)
{
    const ct__st_item *x = (const ct__st_item *)a, *y = (const ct__st_item *)b;
    if (!x->tensor != !y->tensor) {
        return x->tensor ? 1 : -1; /* metadata first */
    }
    if (x->tensor) {
        int rx = ct__st_dtype_rank[x->tensor->dtype], ry = ct__st_dtype_rank[y->tensor->dtype];
        if (rx != ry) {
            return ry - rx;
        }
    }
    return strcmp(x->key, y->key);
}

/* The shortest %g form of v that reads back as v. */
static CT__UNUSED void ct__st_double_text(double v, char *out, size_t n)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, v);
        if (strtod(out, NULL) == v || v != v) {
            return;
        }
    }
}

static CT__UNUSED bool ct__st_check_text(const char *op, const char *what, const char *s)
{
    size_t n = strlen(s);
    if (ct__st_utf8_bad((const unsigned char *)s, n) < n) {
        ct__fail(CT_ERR_VALUE, op, "%s '%.80s' is not valid UTF-8", what, s);
        return false;
    }
    return true;
}

/* The entries of sd in file order (metadata first), checked; NULL after an error. */
static CT__UNUSED ct__st_item *ct__st_items(const char *op, const ct_state_dict *sd, int64_t *n)
{
    *n = ct_state_dict_len(sd);
    ct__st_item *items = (ct__st_item *)ct__calloc(sizeof(ct__st_item) * (size_t)(*n + 1));
    if (!items) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < *n; i++) {
        ct__st_item *it = &items[i];
        it->key = ct_state_dict_key(sd, i);
        ct_state_kind kind = ct_state_dict_kind(sd, it->key);
        it->tensor = kind == CT_STATE_TENSOR ? ct_state_dict_get(sd, it->key) : NULL;
        it->value = kind == CT_STATE_STRING ? ct_state_dict_get_string(sd, it->key) : NULL;
        int64_t iv;
        double dv;
        if (kind == CT_STATE_INT && ct_state_dict_get_int(sd, it->key, &iv)) {
            snprintf(it->text, sizeof it->text, "%lld", (long long)iv);
        } else if (kind == CT_STATE_DOUBLE && ct_state_dict_get_double(sd, it->key, &dv)) {
            ct__st_double_text(dv, it->text, sizeof it->text);
        }
        bool reserved = strcmp(it->key, "__metadata__") == 0;
        if (reserved) {
            ct__fail(CT_ERR_VALUE, op, "the key '__metadata__' is reserved by the format");
        }
        if (reserved || !ct__st_check_text(op, "key", it->key) ||
            (it->value && !ct__st_check_text(op, "metadata value", it->value)) ||
            (it->tensor && !ct__check_cpu(op, it->tensor))) {
            ct__free(items);
            return NULL;
        }
    }
    qsort(items, (size_t)*n, sizeof(ct__st_item), ct__st_save_order);
    return items;
}

/* The padded header of items into b; *data_len the data section's size. */
static CT__UNUSED void ct__st_header_json(const ct__st_item *items, int64_t n, ct__st_buf *b,
                                          uint64_t *data_len)
{
    char num[64];
    uint64_t pos = 0;
    int64_t i = 0;
    ct__st_put(b, "{", 1);
    if (n > 0 && !items[0].tensor) {
        ct__st_puts(b, "\"__metadata__\":{");
        for (; i < n && !items[i].tensor; i++) {
            ct__st_puts(b, i ? "," : "");
            ct__st_put_string(b, items[i].key);
            ct__st_put(b, ":", 1);
            ct__st_put_string(b, items[i].value ? items[i].value : items[i].text);
        }
        ct__st_puts(b, i < n ? "}," : "}");
    }
    for (int64_t k = i; k < n; k++) {
        const ct_tensor *t = items[k].tensor;
        uint64_t bytes = (uint64_t)ct__numel(t->sizes, t->ndim) * ct_dtype_size(t->dtype);
        ct__st_puts(b, k > i ? "," : "");
        ct__st_put_string(b, items[k].key);
        ct__st_puts(b, ":{\"dtype\":");
        ct__st_put_string(b, ct__st_dtype_names[t->dtype]);
        ct__st_puts(b, ",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            snprintf(num, sizeof num, d ? ",%lld" : "%lld", (long long)t->sizes[d]);
            ct__st_puts(b, num);
        }
        snprintf(num, sizeof num, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)pos,
                 (unsigned long long)(pos + bytes));
        ct__st_puts(b, num);
        pos += bytes;
    }
    ct__st_put(b, "}", 1);
    while (b->len % CT__ST_ALIGN) {
        ct__st_put(b, " ", 1);
    }
    *data_len = pos;
}

/* Everything a save needs: the ordered items and the padded header; false after an error. */
typedef struct ct__st_plan {
    ct__st_item *items;
    int64_t n;
    ct__st_buf header;
    uint64_t data_len;
} ct__st_plan;

static CT__UNUSED bool ct__st_plan_make(const char *op, const ct_state_dict *sd, ct__st_plan *p)
{
    memset(p, 0, sizeof *p);
    if (ct__null(op, sd) || !ct__st_little_endian(op)) {
        return false;
    }
    p->items = ct__st_items(op, sd, &p->n);
    if (!p->items) {
        return false;
    }
    ct__st_header_json(p->items, p->n, &p->header, &p->data_len);
    if (p->header.oom) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        ct__free(p->items);
        ct__free(p->header.p);
        return false;
    }
    return true;
}

static CT__UNUSED void ct__st_plan_free(ct__st_plan *p)
{
    ct__free(p->items);
    ct__free(p->header.p);
}

/* Calls write(ctx, bytes, n) for the 8-byte length, the header and each tensor's bytes (C
   order); false when a write fails or an op fails. */
static CT__UNUSED bool ct__st_emit(const ct__st_plan *p,
                                   bool (*write)(void *ctx, const void *bytes, size_t n),
                                   void *ctx)
{
    unsigned char len8[8];
    uint64_t hl = p->header.len;
    for (int i = 0; i < 8; i++) {
        len8[i] = (unsigned char)(hl >> (8 * i));
    }
    bool ok = write(ctx, len8, 8) && write(ctx, p->header.p, p->header.len);
    for (int64_t i = 0; ok && i < p->n; i++) {
        const ct_tensor *t = p->items[i].tensor;
        if (!t || ct__numel(t->sizes, t->ndim) == 0) {
            continue;
        }
        ct_scope_begin();
        ct_tensor *c = ct_contiguous(t);
        ok = c && write(ctx, ct__data(c), (size_t)ct__numel(c->sizes, c->ndim) *
                                              ct_dtype_size(c->dtype));
        ct_scope_end();
    }
    return ok;
}

static CT__UNUSED bool ct__st_write_mem(void *ctx, const void *bytes, size_t n)
{
    char **out = (char **)ctx;
    memcpy(*out, bytes, n);
    *out += n;
    return true;
}

size_t ct_save_buffer(const ct_state_dict *sd, void *buf, size_t n)
{
    const char *op = "ct_save_buffer";
    ct__st_plan p;
    if (!ct__st_plan_make(op, sd, &p)) {
        return 0;
    }
    size_t total = 8 + p.header.len + (size_t)p.data_len;
    char *out = (char *)buf;
    bool ok = !buf || n < total || ct__st_emit(&p, ct__st_write_mem, &out);
    ct__st_plan_free(&p);
    return ok ? total : 0;
}

#ifndef CTORCH_NO_STDIO
static CT__UNUSED bool ct__st_write_file(void *ctx, const void *bytes, size_t n)
{
    return fwrite(bytes, 1, n, (FILE *)ctx) == n;
}

ct_status ct_save(const ct_state_dict *sd, const char *path)
{
    const char *op = "ct_save";
    ct__st_plan p;
    if (ct__null(op, path) || !ct__st_plan_make(op, sd, &p)) {
        return ct_error_code();
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        ct__st_plan_free(&p);
        return ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
    }
    bool clean = ct_error_code() == CT_OK;
    bool ok = ct__st_emit(&p, ct__st_write_file, f);
    ok = fclose(f) == 0 && ok;
    ct__st_plan_free(&p);
    if (!ok && clean && ct_error_code() != CT_OK) {
        return ct_error_code();
    }
    return ok ? CT_OK : ct__fail(CT_ERR_IO, op, "could not write '%s'", path);
}

/* The file's header, parsed and validated; f is left at the data section. */
static CT__UNUSED bool ct__st_read_header(const char *op, FILE *f, const char *path,
                                          ct__st_header *h)
{
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    unsigned char len8[8];
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        ct__fail(CT_ERR_IO, op, "could not read '%s': %s", path, strerror(errno));
        return false;
    }
    size_t got = fread(len8, 1, 8, f);
    uint64_t hlen;
    if (!ct__st_preamble(op, len8, got < 8 ? got : (uint64_t)size, &hlen)) {
        return false;
    }
    char *hdr = (char *)ct__malloc((size_t)hlen + 1);
    if (!hdr) {
        ct__fail(CT_ERR_OOM, op, "not enough memory for the %llu-byte header of '%s'",
                 (unsigned long long)hlen, path);
        return false;
    }
    bool ok = fread(hdr, 1, (size_t)hlen, f) == (size_t)hlen;
    if (!ok) {
        ct__fail(CT_ERR_IO, op, "could not read '%s': unexpected end of file", path);
    }
    ok = ok && ct__st_parse(op, hdr, (size_t)hlen, (uint64_t)size - 8 - hlen, h);
    ct__free(hdr);
    return ok;
}

typedef struct ct__st_reader {
    FILE *f;
    const char *path;
} ct__st_reader;

/* make: the next tensor's bytes read from the file (the data is in offset order). */
static CT__UNUSED ct_tensor *ct__st_make_read(const char *op, const ct__st_entry *e, void *ctx)
{
    ct__st_reader *r = (ct__st_reader *)ctx;
    ct_tensor *t = ct__tensor_new(op, e->sizes, e->ndim, e->dtype);
    size_t n = (size_t)(e->end - e->begin);
    if (t && n && fread(ct__data(t), 1, n, r->f) != n) {
        ct__fail(CT_ERR_IO, op, "could not read '%s': unexpected end of file", r->path);
        ct__release(t);
        return NULL;
    }
    if (t) {
        ct__st_fix_bool(t);
    }
    return t;
}

static CT__UNUSED ct_state_dict *ct__st_load_file(const char *op, const char *path)
{
    if (ct__null(op, path)) {
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
        return NULL;
    }
    ct__st_header h;
    ct_state_dict *sd = NULL;
    if (ct__st_read_header(op, f, path, &h)) {
        ct__st_reader r = {f, path};
        sd = ct__st_build(op, &h, ct__st_make_read, &r);
    }
    fclose(f);
    return sd;
}

ct_state_dict *ct_load(const char *path)
{
    return ct__st_load_file("ct_load", path);
}

/* make: a tensor borrowing the shared file bytes (copied when its bytes are misaligned). */
typedef struct ct__st_shared {
    ct__file_bytes *fb;
    size_t data; /* offset of the data section */
} ct__st_shared;

static ct_tensor *ct__st_make_borrowed(const char *op, const ct__st_entry *e, void *ctx)
{
    const ct__st_shared *sh = (const ct__st_shared *)ctx;
    const unsigned char *data = sh->fb->data + sh->data;
    if ((uintptr_t)(data + e->begin) % ct_dtype_size(e->dtype) != 0) {
        return ct__st_make_copy(op, e, (void *)(uintptr_t)data);
    }
    ct_tensor *t = ct__file_borrow(op, sh->fb, sh->data + (size_t)e->begin, e->dtype, e->sizes,
                                   e->ndim);
    if (t) {
        ct__st_fix_bool(t);
    }
    return t;
}

ct_state_dict *ct_load_mmap(const char *path)
{
    const char *op = "ct_load_mmap";
    ct__file_bytes *fb = ct__file_share(op, path);
    if (!fb) {
        return NULL;
    }
    uint64_t hlen;
    ct__st_header h;
    ct_state_dict *sd = NULL;
    if (ct__st_preamble(op, fb->data, fb->nbytes, &hlen) &&
        ct__st_parse(op, (const char *)fb->data + 8, (size_t)hlen, fb->nbytes - 8 - hlen, &h)) {
        ct__st_shared sh = {fb, 8 + (size_t)hlen};
        sd = ct__st_build(op, &h, ct__st_make_borrowed, &sh);
    }
    ct__file_unshare(NULL, fb); /* the loader's reference */
    return sd;
}

ct_status ct_checkpoint_dict_save(const ct_checkpoint_dict *ckpt, const char *path)
{
    return ct_save(ckpt, path);
}

ct_checkpoint_dict *ct_checkpoint_dict_load(const char *path)
{
    return ct__st_load_file("ct_checkpoint_dict_load", path);
}

ct_status ct_module_save(const ct_module *m, const char *path)
{
    const char *op = "ct_module_save";
    if (ct__null(op, m) || ct__null(op, path)) {
        return ct_error_code();
    }
    ct_state_dict *sd = ct_module_state_dict(m);
    ct_status st = sd ? ct_save(sd, path) : ct_error_code();
    ct_state_dict_free(sd);
    return st;
}

ct_status ct_module_load(ct_module *m, const char *path, bool strict, ct_incompatible_keys *keys)
{
    const char *op = "ct_module_load";
    if (ct__null(op, m) || ct__null(op, path)) {
        return ct_error_code();
    }
    ct_state_dict *sd = ct_load(path);
    ct_status st = sd ? ct_module_load_state_dict(m, sd, strict, keys) : ct_error_code();
    ct_state_dict_free(sd);
    return st;
}
#endif

#undef CT__ST_HEADER_MAX
#undef CT__ST_ALIGN
CT__GLUE_END
