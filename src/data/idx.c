/* data/idx.c - the IDX reader (MNIST family): validate the header, then a big-endian copy.
 *
 * Layout: magic [0, 0, type, ndim], ndim big-endian uint32 sizes, then numel * item bytes of
 * big-endian elements. Every length is checked before it is used: the data must be exactly
 * as long as the header declares (no truncation, no trailing bytes), and no buffer is sized
 * from the header beyond what the input has shown to hold.
 */
#include "../core/internal.h"
#include "idx.h"

#ifndef CTORCH_NO_STDIO
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#endif
#ifdef CTORCH_ZLIB
#include <zlib.h>

#endif
CT__GLUE_BEGIN

#define CT__IDX_MAX_HEADER (4 + 4 * CT_MAX_DIMS)
/* The streaming reader grows its buffer from this size as data arrives. */
#define CT__IDX_CHUNK ((size_t)1 << 20)
/* " in 'path'" appended to messages about files ("%s%s%s"). */
#define CT__IDX_IN(path) (path) ? " in '" : "", (path) ? (path) : "", (path) ? "'" : ""

typedef struct ct__idx_header {
    ct_dtype dtype;
    size_t item_bytes;
    int ndim;
    size_t header_bytes; /* 4 + 4 * ndim */
    int64_t sizes[CT_MAX_DIMS];
    uint64_t data_bytes;
    char desc[160]; /* "60000x28x28 uint8" */
} ct__idx_header;

static void ct__idx_append(char *buf, size_t cap, const char *s)
{
    size_t n = strlen(buf);
    while (*s && n + 1 < cap) {
        buf[n++] = *s++;
    }
    buf[n] = '\0';
}

static void ct__idx_append_u64(char *buf, size_t cap, uint64_t v)
{
    char tmp[24];
    int i = (int)sizeof tmp - 1;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    ct__idx_append(buf, cap, tmp + i);
}

/* Checks the 4 magic bytes; sets dtype, item_bytes, ndim and header_bytes. */
static bool ct__idx_magic(const char *op, const char *path, const unsigned char *b, size_t avail,
                          ct__idx_header *h)
{
    if (avail < 4) {
        ct__fail(CT_ERR_FORMAT, op, "truncated file: %zu bytes, shorter than the 4-byte IDX "
                 "header%s%s%s", avail, CT__IDX_IN(path));
        return false;
    }
    if (b[0] != 0 || b[1] != 0) {
        if (b[0] == 0x1f && b[1] == 0x8b) {
            ct__fail(CT_ERR_FORMAT, op, "not an IDX file: the data is gzip-compressed (magic "
                     "0x1f 0x8b); gunzip it, or load a path ending in .gz with CTORCH_ZLIB%s%s%s",
                     CT__IDX_IN(path));
        } else {
            ct__fail(CT_ERR_FORMAT, op, "not an IDX file: magic bytes 0x%02x 0x%02x, expected "
                     "0x00 0x00%s%s%s", b[0], b[1], CT__IDX_IN(path));
        }
        return false;
    }
    switch (b[2]) {
    case 0x08: h->dtype = CT_UINT8; break;
    case 0x09: h->dtype = CT_INT8; break;
    case 0x0B: h->dtype = CT_INT16; break;
    case 0x0C: h->dtype = CT_INT32; break;
    case 0x0D: h->dtype = CT_FLOAT32; break;
    case 0x0E: h->dtype = CT_FLOAT64; break;
    default:
        ct__fail(CT_ERR_FORMAT, op, "unknown IDX type code 0x%02x (expected 0x08 uint8, 0x09 "
                 "int8, 0x0B int16, 0x0C int32, 0x0D float32 or 0x0E float64)%s%s%s", b[2],
                 CT__IDX_IN(path));
        return false;
    }
    h->item_bytes = ct_dtype_size(h->dtype);
    h->ndim = b[3];
    if (h->ndim == 0 || h->ndim > CT_MAX_DIMS) {
        ct__fail(CT_ERR_FORMAT, op, "IDX header declares %d dimensions, expected 1 to %d%s%s%s",
                 h->ndim, CT_MAX_DIMS, CT__IDX_IN(path));
        return false;
    }
    h->header_bytes = 4 + 4 * (size_t)h->ndim;
    return true;
}

/* Reads the sizes (b holds avail bytes from the start of the file); sets sizes, data_bytes
   and desc. */
static bool ct__idx_sizes(const char *op, const char *path, const unsigned char *b, size_t avail,
                          ct__idx_header *h)
{
    if (avail < h->header_bytes) {
        ct__fail(CT_ERR_FORMAT, op, "truncated header: %d dimensions need a %zu-byte header but "
                 "the file has %zu bytes%s%s%s", h->ndim, h->header_bytes, avail,
                 CT__IDX_IN(path));
        return false;
    }
    /* at most INT64_MAX / 16 elements, as ct_empty (on every platform: where size_t is
       32 bits a larger declared size fails the length check or the allocation) */
    uint64_t limit = (uint64_t)INT64_MAX / 16;
    /* the product of the non-zero sizes must fit too: strides are computed from it */
    uint64_t numel = 1;
    bool zero = false, overflow = false;
    h->desc[0] = '\0';
    for (int d = 0; d < h->ndim; d++) {
        const unsigned char *p = b + 4 + 4 * d;
        uint64_t v = ((uint64_t)p[0] << 24) | ((uint64_t)p[1] << 16) | ((uint64_t)p[2] << 8) |
                     (uint64_t)p[3];
        h->sizes[d] = (int64_t)v;
        zero = zero || v == 0;
        if (v != 0 && numel > limit / v) {
            overflow = true;
        } else if (v != 0) {
            numel *= v;
        }
        if (d > 0) {
            ct__idx_append(h->desc, sizeof h->desc, "x");
        }
        ct__idx_append_u64(h->desc, sizeof h->desc, v);
    }
    ct__idx_append(h->desc, sizeof h->desc, " ");
    ct__idx_append(h->desc, sizeof h->desc, ct_dtype_name(h->dtype));
    if (overflow) {
        ct__fail(CT_ERR_FORMAT, op, "header declares %s, more elements than a tensor can "
                 "hold%s%s%s", h->desc, CT__IDX_IN(path));
        return false;
    }
    h->data_bytes = zero ? 0 : numel * h->item_bytes;
    return true;
}

/* Fails unless exactly data_bytes follow the header. `more`: at least that many follow. */
static bool ct__idx_length(const char *op, const char *path, const ct__idx_header *h,
                           uint64_t follow, bool more)
{
    if (follow == h->data_bytes && !more) {
        return true;
    }
    ct__fail(CT_ERR_FORMAT, op, "%s: header declares %s (%llu bytes) but %s%llu bytes "
             "follow%s%s%s", follow < h->data_bytes ? "truncated file" : "trailing data",
             h->desc, (unsigned long long)h->data_bytes, more ? "at least " : "",
             (unsigned long long)follow, CT__IDX_IN(path));
    return false;
}

/* Converts n bytes of big-endian items to host order from src into dst (may be equal). */
static void ct__idx_decode(char *dst, const unsigned char *src, uint64_t n, size_t item)
{
    const uint16_t one = 1;
    bool little = *(const unsigned char *)&one == 1;
    if (item == 1 || !little) {
        if (dst != (const char *)src && n) {
            memcpy(dst, src, (size_t)n);
        }
        return;
    }
    for (uint64_t i = 0; i < n; i += item) {
        unsigned char tmp[8];
        for (size_t k = 0; k < item; k++) {
            tmp[k] = src[i + item - 1 - k];
        }
        memcpy(dst + i, tmp, item);
    }
}

ct_tensor *ct_idx_load_buffer(const void *data, size_t nbytes)
{
    const char *op = "ct_idx_load_buffer";
    if (nbytes && ct__null(op, data)) {
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)data;
    ct__idx_header h;
    if (!ct__idx_magic(op, NULL, b, nbytes, &h) || !ct__idx_sizes(op, NULL, b, nbytes, &h) ||
        !ct__idx_length(op, NULL, &h, (uint64_t)(nbytes - h.header_bytes), false)) {
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(op, h.sizes, h.ndim, h.dtype);
    if (!t) {
        return NULL;
    }
    ct__idx_decode(ct__data(t), b + h.header_bytes, h.data_bytes, h.item_bytes);
    return ct__scoped(t);
}

#ifndef CTORCH_NO_STDIO
/* A byte source: fread or gzread. read returns the bytes read (0 at the end) and sets *err
   (after recording the error) on failure. */
typedef struct ct__idx_source {
    const char *op, *path;
    FILE *f;
#ifdef CTORCH_ZLIB
    gzFile gz;
#endif
} ct__idx_source;

static size_t ct__idx_read(ct__idx_source *s, void *buf, size_t n, bool *err)
{
#ifdef CTORCH_ZLIB
    if (s->gz) {
        size_t total = 0;
        while (total < n) {
            size_t want = n - total < (size_t)INT_MAX ? n - total : (size_t)INT_MAX;
            int got = gzread(s->gz, (char *)buf + total, (unsigned)want);
            if (got < 0) {
                int zerr = Z_OK;
                const char *msg = gzerror(s->gz, &zerr);
                ct__fail(zerr == Z_ERRNO ? CT_ERR_IO : CT_ERR_FORMAT, s->op,
                         "cannot decompress '%s': %s", s->path,
                         zerr == Z_ERRNO ? strerror(errno) : msg);
                *err = true;
                return total;
            }
            if (got == 0) {
                break;
            }
            total += (size_t)got;
        }
        return total;
    }
#endif
    size_t got = fread(buf, 1, n, s->f);
    if (got < n && ferror(s->f)) {
        ct__fail(CT_ERR_IO, s->op, "cannot read '%s': %s", s->path, strerror(errno));
        *err = true;
    }
    return got;
}

/* The bytes left in a seekable plain file, or -1 when unknown. */
static int64_t ct__idx_remaining(ct__idx_source *s)
{
#ifdef CTORCH_ZLIB
    if (s->gz) {
        return -1;
    }
#endif
    long here = ftell(s->f);
    if (here < 0 || fseek(s->f, 0, SEEK_END) != 0) {
        return -1;
    }
    long end = ftell(s->f);
    if (fseek(s->f, here, SEEK_SET) != 0) {
        return -1;
    }
    return end >= here ? (int64_t)(end - here) : -1;
}

/* Reads the data of unknown length into a buffer grown as bytes arrive (never beyond
   data_bytes), then checks that nothing follows. */
static ct_tensor *ct__idx_read_stream(ct__idx_source *s, const ct__idx_header *h)
{
    size_t want = (size_t)h->data_bytes, cap = want < CT__IDX_CHUNK ? want : CT__IDX_CHUNK;
    unsigned char *buf = (unsigned char *)ct__malloc(cap ? cap : 1);
    size_t len = 0;
    bool err = false;
    if (!buf) {
        ct__fail(CT_ERR_OOM, s->op, "out of memory reading '%s'", s->path);
        return NULL;
    }
    while (len < want) {
        if (len == cap) {
            size_t next = cap > want / 2 ? want : cap * 2;
            unsigned char *grown = (unsigned char *)ct__realloc(buf, next);
            if (!grown) {
                ct__free(buf);
                ct__fail(CT_ERR_OOM, s->op, "out of memory reading '%s' (%zu bytes)", s->path,
                         next);
                return NULL;
            }
            buf = grown;
            cap = next;
        }
        size_t got = ct__idx_read(s, buf + len, cap - len, &err);
        len += got;
        if (err || got == 0) {
            break;
        }
    }
    uint64_t extra = 0;
    unsigned char scratch[4096];
    while (!err && len == want && extra < CT__IDX_CHUNK) { /* count trailing bytes */
        size_t got = ct__idx_read(s, scratch, sizeof scratch, &err);
        if (got == 0) {
            break;
        }
        extra += got;
    }
    ct_tensor *t = NULL;
    if (!err && ct__idx_length(s->op, s->path, h, len + extra, extra >= CT__IDX_CHUNK)) {
        t = ct__tensor_new(s->op, h->sizes, h->ndim, h->dtype);
        if (t) {
            ct__idx_decode(ct__data(t), buf, h->data_bytes, h->item_bytes);
        }
    }
    ct__free(buf);
    return t;
}

static ct_tensor *ct__idx_read_source(ct__idx_source *s)
{
    unsigned char hb[CT__IDX_MAX_HEADER];
    ct__idx_header h;
    bool err = false;
    size_t got = ct__idx_read(s, hb, 4, &err);
    if (err || !ct__idx_magic(s->op, s->path, hb, got, &h)) {
        return NULL;
    }
    got += ct__idx_read(s, hb + 4, h.header_bytes - 4, &err);
    if (err || !ct__idx_sizes(s->op, s->path, hb, got, &h)) {
        return NULL;
    }
    int64_t remaining = ct__idx_remaining(s);
    if (remaining < 0) {
        return ct__idx_read_stream(s, &h);
    }
    if (!ct__idx_length(s->op, s->path, &h, (uint64_t)remaining, false)) {
        return NULL;
    }
    ct_tensor *t = ct__tensor_new(s->op, h.sizes, h.ndim, h.dtype);
    if (!t) {
        return NULL;
    }
    got = ct__idx_read(s, ct__data(t), (size_t)h.data_bytes, &err);
    if (!err && got != h.data_bytes) { /* the file shrank since it was measured */
        ct__idx_length(s->op, s->path, &h, got, false);
        err = true;
    }
    if (err) {
        ct__release(t);
        return NULL;
    }
    ct__idx_decode(ct__data(t), (const unsigned char *)ct__data(t), h.data_bytes, h.item_bytes);
    return t;
}

ct_tensor *ct_idx_load(const char *path)
{
    const char *op = "ct_idx_load";
    if (ct__null(op, path)) {
        return NULL;
    }
    size_t n = strlen(path);
    bool gz = n >= 3 && strcmp(path + n - 3, ".gz") == 0;
#ifndef CTORCH_ZLIB
    if (gz) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "reading gzip files needs zlib: define CTORCH_ZLIB and "
                 "link -lz (or gunzip the file) ('%s')", path);
        return NULL;
    }
#endif
    ct__idx_source s;
    memset(&s, 0, sizeof s);
    s.op = op;
    s.path = path;
    s.f = fopen(path, "rb"); /* also for .gz: a clear message when the file is missing */
    if (!s.f) {
        ct__fail(CT_ERR_IO, op, "cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    ct_tensor *t = NULL;
    if (gz) {
        fclose(s.f);
        s.f = NULL;
#ifdef CTORCH_ZLIB
        s.gz = gzopen(path, "rb");
        if (!s.gz) {
            ct__fail(CT_ERR_IO, op, "cannot open '%s': %s", path,
                     errno ? strerror(errno) : "zlib could not allocate its state");
            return NULL;
        }
        t = ct__idx_read_source(&s);
        gzclose(s.gz);
#endif
        return ct__scoped(t);
    }
    t = ct__idx_read_source(&s);
    fclose(s.f);
    return ct__scoped(t);
}
#endif /* CTORCH_NO_STDIO */

#undef CT__IDX_MAX_HEADER
#undef CT__IDX_CHUNK
#undef CT__IDX_IN
CT__GLUE_END
