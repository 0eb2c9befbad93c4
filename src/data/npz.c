/* data/npz.c - the .npz reader: a bounded zip parser over the archive's bytes, then each
 * member's .npy through data/npy.c.
 *
 * Zip layout (PKWARE APPNOTE 6.3): local header + data per member, the central directory
 * (one entry per member: method, CRC, sizes, local header offset, name), the end of central
 * directory record (EOCD) with the directory's offset, size and entry count, and, for zip64,
 * a zip64 EOCD record and its locator before the EOCD. All integers are little-endian. Every
 * read goes through ct__npz_u16/u32/u64 on a range that has been checked first.
 */
#include "../core/internal.h"
#include "../nn/state_dict.h"
#include "reader_internal.h"
#include "npz.h"

#include <stdio.h> /* snprintf */
#ifdef CTORCH_ZLIB
#include <limits.h>
#include <zlib.h>
#endif

CT__GLUE_BEGIN

#define CT__NPZ_EOCD 22          /* end of central directory record */
#define CT__NPZ_LOC64 20         /* zip64 EOCD locator */
#define CT__NPZ_EOCD64 56        /* zip64 EOCD record */
#define CT__NPZ_CENTRAL 46       /* central directory entry, before name/extra/comment */
#define CT__NPZ_LOCAL 30         /* local header, before name/extra */
#define CT__NPZ_MAX_RATIO 1032u  /* deflate's largest expansion per compressed byte */
#define CT__NPZ_HEAD 65547u      /* the longest .npy preamble + header (12 + 65535) */

static CT__UNUSED uint64_t ct__npz_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}
#define ct__npz_u16(p) ((uint32_t)ct__npz_le((p), 2))
#define ct__npz_u32(p) ((uint32_t)ct__npz_le((p), 4))

/* One member as the central directory describes it. */
typedef struct ct__npz_member {
    const unsigned char *name;
    size_t name_len;
    uint32_t flags, method, crc;
    uint64_t csize, usize, offset; /* compressed and uncompressed sizes, local header */
    uint64_t data;                 /* offset of the member's data (from its local header) */
} ct__npz_member;

/* Where the central directory is. */
typedef struct ct__npz_dir {
    uint64_t count, size, offset;
    uint64_t end; /* where the records after it begin (zip64 EOCD or EOCD) */
} ct__npz_dir;

/* Finds the EOCD: the last signature within reach whose comment ends exactly at the end. */
static CT__UNUSED bool ct__npz_find_eocd(const char *op, const unsigned char *b, size_t n,
                                         size_t *at)
{
    if (n >= CT__NPZ_EOCD) {
        size_t lowest = n - CT__NPZ_EOCD > 65535 ? n - CT__NPZ_EOCD - 65535 : 0;
        for (size_t i = n - CT__NPZ_EOCD + 1; i-- > lowest;) {
            if (ct__npz_u32(b + i) == 0x06054b50u &&
                ct__npz_u16(b + i + 20) == n - i - CT__NPZ_EOCD) {
                *at = i;
                return true;
            }
        }
    }
    ct__fail(CT_ERR_FORMAT, op, "File is not a zip file: no end of central directory record "
             "in its %zu bytes", n);
    return false;
}

/* Reads the zip64 EOCD through the locator before the EOCD at `at`, when there is one. */
static CT__UNUSED bool ct__npz_zip64_dir(const char *op, const unsigned char *b, size_t at,
                                         ct__npz_dir *dir)
{
    if (at < CT__NPZ_LOC64 || ct__npz_u32(b + at - CT__NPZ_LOC64) != 0x07064b50u) {
        return true;
    }
    const unsigned char *loc = b + at - CT__NPZ_LOC64;
    uint64_t off = ct__npz_le(loc + 8, 8);
    if (ct__npz_u32(loc + 4) != 0 || ct__npz_u32(loc + 16) > 1) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "multi-disk zip archives are not supported");
        return false;
    }
    if (off > at - CT__NPZ_LOC64 || at - CT__NPZ_LOC64 - off < CT__NPZ_EOCD64 ||
        ct__npz_u32(b + off) != 0x06064b50u) {
        ct__fail(CT_ERR_FORMAT, op, "zip64 end of central directory record at offset %llu is "
                 "not where its locator at offset %zu says", (unsigned long long)off,
                 at - CT__NPZ_LOC64);
        return false;
    }
    const unsigned char *r = b + off;
    if (ct__npz_u32(r + 16) != 0 || ct__npz_u32(r + 20) != 0 ||
        ct__npz_le(r + 24, 8) != ct__npz_le(r + 32, 8)) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "multi-disk zip archives are not supported");
        return false;
    }
    dir->count = ct__npz_le(r + 32, 8);
    dir->size = ct__npz_le(r + 40, 8);
    dir->offset = ct__npz_le(r + 48, 8);
    dir->end = off;
    return true;
}

/* Locates the central directory and checks that it lies inside the archive. */
static CT__UNUSED bool ct__npz_dir_of(const char *op, const unsigned char *b, size_t n,
                                      ct__npz_dir *dir)
{
    size_t at;
    if (!ct__npz_find_eocd(op, b, n, &at)) {
        return false;
    }
    const unsigned char *e = b + at;
    if (ct__npz_u16(e + 4) != 0 || ct__npz_u16(e + 6) != 0 ||
        ct__npz_u16(e + 8) != ct__npz_u16(e + 10)) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "multi-disk zip archives are not supported");
        return false;
    }
    dir->count = ct__npz_u16(e + 10);
    dir->size = ct__npz_u32(e + 12);
    dir->offset = ct__npz_u32(e + 16);
    dir->end = at;
    if (!ct__npz_zip64_dir(op, b, at, dir)) {
        return false;
    }
    if (dir->offset > dir->end || dir->size > dir->end - dir->offset) {
        ct__fail(CT_ERR_FORMAT, op, "central directory at offset %llu with %llu bytes ends "
                 "past the %llu bytes before the end record", (unsigned long long)dir->offset,
                 (unsigned long long)dir->size, (unsigned long long)dir->end);
        return false;
    }
    if (dir->count > dir->size / CT__NPZ_CENTRAL) {
        ct__fail(CT_ERR_FORMAT, op, "central directory of %llu bytes cannot hold the %llu "
                 "entries the end record declares", (unsigned long long)dir->size,
                 (unsigned long long)dir->count);
        return false;
    }
    return true;
}

/* Applies a zip64 extra field (id 1) of `extra` to the fields that are 0xffffffff: in order
   usize, csize, offset (local headers: usize and csize). */
static CT__UNUSED bool ct__npz_zip64_extra(const char *op, const unsigned char *extra,
                                           size_t len, uint64_t *fields[3])
{
    size_t i = 0;
    while (len - i >= 4) {
        uint32_t id = ct__npz_u16(extra + i), sz = ct__npz_u16(extra + i + 2);
        if (sz > len - i - 4) {
            break;
        }
        if (id == 1) {
            size_t at = i + 4;
            for (int k = 0; k < 3; k++) {
                if (!fields[k] || *fields[k] != 0xffffffffu) {
                    continue;
                }
                if (at + 8 > i + 4 + sz) {
                    ct__fail(CT_ERR_FORMAT, op, "zip64 extra field of %u bytes is too short "
                             "for the sizes it must hold", (unsigned)sz);
                    return false;
                }
                *fields[k] = ct__npz_le(extra + at, 8);
                at += 8;
            }
            return true;
        }
        i += 4 + sz;
    }
    for (int k = 0; k < 3; k++) {
        if (fields[k] && *fields[k] == 0xffffffffu) {
            ct__fail(CT_ERR_FORMAT, op, "a size or offset of 0xffffffff without its zip64 "
                     "extra field");
            return false;
        }
    }
    return true;
}

/* Fails unless name is a "<key>.npy" of printable characters (UTF-8 bytes allowed). */
static CT__UNUSED bool ct__npz_check_name(const char *op, const unsigned char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (name[i] < 0x20 || name[i] == 0x7f) {
            ct__fail(CT_ERR_FORMAT, op, "member name has a control character (byte 0x%02x at "
                     "%zu)", name[i], i);
            return false;
        }
    }
    if (len < 5 || memcmp(name + len - 4, ".npy", 4) != 0) {
        ct__fail(CT_ERR_FORMAT, op, "member '%.*s' is not a .npy array", (int)(len < 200 ? len
                 : 200), (const char *)name);
        return false;
    }
    return true;
}

/* Reads the central entry at *pos (advanced past it) into m. */
static CT__UNUSED bool ct__npz_central(const char *op, const unsigned char *b,
                                       const ct__npz_dir *dir, uint64_t *pos, ct__npz_member *m)
{
    uint64_t left = dir->offset + dir->size - *pos;
    const unsigned char *c = b + *pos;
    if (left < CT__NPZ_CENTRAL || ct__npz_u32(c) != 0x02014b50u) {
        ct__fail(CT_ERR_FORMAT, op, "bad central directory entry at offset %llu",
                 (unsigned long long)*pos);
        return false;
    }
    size_t nl = ct__npz_u16(c + 28), el = ct__npz_u16(c + 30), cl = ct__npz_u16(c + 32);
    if (left - CT__NPZ_CENTRAL < (uint64_t)nl + el + cl) {
        ct__fail(CT_ERR_FORMAT, op, "central directory entry at offset %llu runs past the "
                 "directory's end", (unsigned long long)*pos);
        return false;
    }
    m->flags = ct__npz_u16(c + 8);
    m->method = ct__npz_u16(c + 10);
    m->crc = ct__npz_u32(c + 16);
    m->csize = ct__npz_u32(c + 20);
    m->usize = ct__npz_u32(c + 24);
    m->offset = ct__npz_u32(c + 42);
    m->name = c + CT__NPZ_CENTRAL;
    m->name_len = nl;
    *pos += CT__NPZ_CENTRAL + nl + el + cl;
    uint64_t *fields[3] = {&m->usize, &m->csize, &m->offset};
    if (!ct__npz_zip64_extra(op, c + CT__NPZ_CENTRAL + nl, el, fields) ||
        !ct__npz_check_name(op, m->name, nl)) {
        return false;
    }
    if (m->flags & 0x41u) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "member '%.*s' is encrypted", (int)nl, (const char *)
                 m->name);
        return false;
    }
    if (m->method != 0 && m->method != 8) {
        ct__fail(CT_ERR_UNSUPPORTED, op, "member '%.*s' uses compression method %u (only "
                 "stored and deflated are supported)", (int)nl, (const char *)m->name,
                 (unsigned)m->method);
        return false;
    }
    return true;
}

/* Checks m's local header against its central entry and sets m->data. */
static CT__UNUSED bool ct__npz_local(const char *op, const unsigned char *b,
                                     const ct__npz_dir *dir, ct__npz_member *m)
{
    if (m->offset > dir->offset || dir->offset - m->offset < CT__NPZ_LOCAL ||
        ct__npz_u32(b + m->offset) != 0x04034b50u) {
        ct__fail(CT_ERR_FORMAT, op, "no local header at offset %llu (before the central "
                 "directory at %llu)", (unsigned long long)m->offset,
                 (unsigned long long)dir->offset);
        return false;
    }
    const unsigned char *l = b + m->offset;
    size_t nl = ct__npz_u16(l + 26), el = ct__npz_u16(l + 28);
    uint64_t room = dir->offset - m->offset - CT__NPZ_LOCAL;
    if ((uint64_t)nl + el > room || nl != m->name_len ||
        memcmp(l + CT__NPZ_LOCAL, m->name, nl) != 0 || ct__npz_u16(l + 8) != m->method) {
        ct__fail(CT_ERR_FORMAT, op, "local header at offset %llu does not match its central "
                 "directory entry (name, method or length)", (unsigned long long)m->offset);
        return false;
    }
    m->data = m->offset + CT__NPZ_LOCAL + nl + el;
    if (m->csize > dir->offset - m->data) {
        ct__fail(CT_ERR_FORMAT, op, "member data at offset %llu with %llu bytes runs into the "
                 "central directory at %llu", (unsigned long long)m->data,
                 (unsigned long long)m->csize, (unsigned long long)dir->offset);
        return false;
    }
    if (ct__npz_u16(l + 6) & 0x08u) {
        return true; /* sizes and CRC in a data descriptor: the central entry's hold */
    }
    uint64_t csize = ct__npz_u32(l + 18), usize = ct__npz_u32(l + 22);
    uint64_t *fields[3] = {&usize, &csize, NULL};
    if (!ct__npz_zip64_extra(op, l + CT__NPZ_LOCAL + nl, el, fields)) {
        return false;
    }
    if (ct__npz_u32(l + 14) != m->crc || csize != m->csize || usize != m->usize) {
        ct__fail(CT_ERR_FORMAT, op, "local header at offset %llu does not match its central "
                 "directory entry (CRC or sizes)", (unsigned long long)m->offset);
        return false;
    }
    return true;
}

static CT__UNUSED int ct__npz_by_offset(const void *a, const void *b)
{
    uint64_t x = ((const ct__npz_member *)a)->offset, y = ((const ct__npz_member *)b)->offset;
    return x < y ? -1 : x > y;
}

/* Fails when two members' [local header, data end) ranges overlap (m sorted by offset). */
static CT__UNUSED bool ct__npz_disjoint(const char *op, const ct__npz_member *m, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        if (m[i].offset < m[i - 1].data + m[i - 1].csize) {
            ct__fail(CT_ERR_FORMAT, op, "members at offsets %llu and %llu overlap",
                     (unsigned long long)m[i - 1].offset, (unsigned long long)m[i].offset);
            return false;
        }
    }
    return true;
}

/* The CRC-32 (ISO-HDLC, as zip) of p[0..n). */
static CT__UNUSED uint32_t ct__npz_crc32(const unsigned char *p, size_t n)
{
    uint32_t table[256];
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
        }
        table[i] = c;
    }
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    }
    return crc ^ 0xffffffffu;
}

#ifdef CTORCH_ZLIB
/* Inflates exactly n more bytes into out; *in / *left: the compressed bytes not yet fed. */
static CT__UNUSED bool ct__npz_inflate_n(const char *op, z_stream *zs, const unsigned char **in,
                                         uint64_t *left, unsigned char *out, size_t n)
{
    size_t done = 0;
    while (done < n) {
        zs->next_in = (Bytef *)(uintptr_t)*in;
        zs->avail_in = (uInt)(*left < UINT_MAX ? *left : UINT_MAX);
        zs->next_out = out + done;
        zs->avail_out = (uInt)(n - done < UINT_MAX ? n - done : UINT_MAX);
        uInt in_before = zs->avail_in, out_before = zs->avail_out;
        int ret = inflate(zs, Z_NO_FLUSH);
        *in += in_before - zs->avail_in;
        *left -= in_before - zs->avail_in;
        done += out_before - zs->avail_out;
        if (ret == Z_STREAM_END && done < n) {
            ct__fail(CT_ERR_FORMAT, op, "deflate stream ends before the declared size");
            return false;
        }
        if (ret != Z_OK && ret != Z_STREAM_END) {
            ct__fail(CT_ERR_FORMAT, op, "corrupt deflate stream: %s", zs->msg ? zs->msg :
                     *left == 0 ? "truncated" : "invalid data");
            return false;
        }
    }
    return true;
}

/* Inflates m into a new buffer of m->usize bytes: the .npy header first (at most
   CT__NPZ_HEAD bytes), whose byte count must equal m->usize, then the rest. */
static CT__UNUSED unsigned char *ct__npz_inflate(const char *op, const unsigned char *b,
                                                 const ct__npz_member *m)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
        ct__fail(CT_ERR_OOM, op, "zlib could not start inflating");
        return NULL;
    }
    const unsigned char *in = b + m->data;
    uint64_t left = m->csize;
    size_t head = m->usize < CT__NPZ_HEAD ? (size_t)m->usize : CT__NPZ_HEAD;
    unsigned char *out = (unsigned char *)ct__malloc(head ? head : 1);
    ct__npy_info info;
    bool ok = out && ct__npz_inflate_n(op, &zs, &in, &left, out, head) &&
              ct__npy_read_header(op, out, head, &info);
    if (ok && info.data_offset + info.data_bytes != m->usize) {
        ct__fail(CT_ERR_FORMAT, op, "declares %llu uncompressed bytes but its .npy header "
                 "needs %llu (zip bomb or corrupt archive)", (unsigned long long)m->usize,
                 (unsigned long long)(info.data_offset + info.data_bytes));
        ok = false;
    }
    if (ok && m->usize > head) {
        unsigned char *grown = (unsigned char *)ct__realloc(out, (size_t)m->usize);
        ok = grown != NULL;
        out = grown ? grown : out;
        ok = ok && ct__npz_inflate_n(op, &zs, &in, &left, out + head, (size_t)m->usize - head);
    }
    if (ok) { /* the stream must end here, with every compressed byte used */
        unsigned char extra;
        zs.next_in = (Bytef *)(uintptr_t)in;
        zs.avail_in = (uInt)(left < UINT_MAX ? left : UINT_MAX);
        zs.next_out = &extra;
        zs.avail_out = 1;
        int ret = inflate(&zs, Z_FINISH);
        if (ret != Z_STREAM_END || zs.avail_out != 1 || zs.avail_in != 0) {
            ct__fail(CT_ERR_FORMAT, op, "deflate stream holds more than the declared %llu "
                     "bytes or has trailing data", (unsigned long long)m->usize);
            ok = false;
        }
    }
    inflateEnd(&zs);
    if (!ok) {
        if (!out) {
            ct__fail(CT_ERR_OOM, op, "not enough memory to inflate %llu bytes",
                     (unsigned long long)m->usize);
        }
        ct__free(out);
        return NULL;
    }
    return out;
}
#endif

/* The tensor of member m (new, unscoped); op names the member. */
static CT__UNUSED ct_tensor *ct__npz_tensor(const char *op, const unsigned char *b,
                                            const ct__npz_member *m)
{
    if (m->method == 0) {
        if (m->csize != m->usize) {
            ct__fail(CT_ERR_FORMAT, op, "stored member has %llu compressed but %llu "
                     "uncompressed bytes", (unsigned long long)m->csize,
                     (unsigned long long)m->usize);
            return NULL;
        }
        if (ct__npz_crc32(b + m->data, (size_t)m->csize) != m->crc) {
            ct__fail(CT_ERR_FORMAT, op, "Bad CRC-32");
            return NULL;
        }
        return ct__npy_parse(op, b + m->data, (size_t)m->csize);
    }
#ifdef CTORCH_ZLIB
    if (m->usize / CT__NPZ_MAX_RATIO > m->csize) {
        ct__fail(CT_ERR_FORMAT, op, "declares %llu uncompressed bytes, more than %llu "
                 "compressed bytes can hold (deflate expands at most %u:1): zip bomb or corrupt "
                 "archive", (unsigned long long)m->usize, (unsigned long long)m->csize,
                 CT__NPZ_MAX_RATIO);
        return NULL;
    }
    unsigned char *raw = ct__npz_inflate(op, b, m);
    if (!raw) {
        return NULL;
    }
    ct_tensor *t = NULL;
    if (ct__npz_crc32(raw, (size_t)m->usize) != m->crc) {
        ct__fail(CT_ERR_FORMAT, op, "Bad CRC-32");
    } else {
        t = ct__npy_parse(op, raw, (size_t)m->usize);
    }
    ct__free(raw);
    return t;
#else
    (void)b;
    ct__fail(CT_ERR_UNSUPPORTED, op, "the member is deflate-compressed (numpy.savez_compressed): "
             "reading it needs zlib: define CTORCH_ZLIB and link -lz");
    return NULL;
#endif
}

/* Reads every member into sd, in central directory order. */
static CT__UNUSED bool ct__npz_members(const char *op, const unsigned char *b,
                                       const ct__npz_dir *dir, ct__npz_member *m,
                                       ct__npz_member *sorted, ct_state_dict *sd)
{
    uint64_t pos = dir->offset;
    for (uint64_t i = 0; i < dir->count; i++) {
        if (!ct__npz_central(op, b, dir, &pos, &m[i]) || !ct__npz_local(op, b, dir, &m[i])) {
            return false;
        }
    }
    if (pos != dir->offset + dir->size) {
        ct__fail(CT_ERR_FORMAT, op, "central directory has %llu bytes after its %llu entries",
                 (unsigned long long)(dir->offset + dir->size - pos),
                 (unsigned long long)dir->count);
        return false;
    }
    memcpy(sorted, m, (size_t)dir->count * sizeof *m);
    qsort(sorted, (size_t)dir->count, sizeof *m, ct__npz_by_offset);
    if (!ct__npz_disjoint(op, sorted, dir->count)) {
        return false;
    }
    for (uint64_t i = 0; i < dir->count; i++) {
        char key[256], member_op[320];
        int kl = (int)(m[i].name_len - 4 < sizeof key - 1 ? m[i].name_len - 4 : sizeof key - 1);
        snprintf(key, sizeof key, "%.*s", kl, (const char *)m[i].name);
        snprintf(member_op, sizeof member_op, "%s: '%.*s'", op, (int)(kl + 4 < 200 ? kl + 4 : 200),
                 (const char *)m[i].name);
        if (m[i].name_len - 4 > sizeof key - 1 || ct_state_dict_contains(sd, key)) {
            ct__fail(CT_ERR_FORMAT, member_op, "member name is %s",
                     ct_state_dict_contains(sd, key) ? "repeated" : "longer than 255 bytes");
            return false;
        }
        ct_tensor *t = ct__npz_tensor(member_op, b, &m[i]);
        bool ok = t && ct_state_dict_set(sd, key, t) == CT_OK;
        ct__release(t);
        if (!ok) {
            return false;
        }
    }
    return true;
}

static CT__UNUSED ct_state_dict *ct__npz_parse(const char *op, const unsigned char *b, size_t n)
{
    ct__npz_dir dir;
    if (!ct__npz_dir_of(op, b, n, &dir)) {
        return NULL;
    }
    size_t bytes = (size_t)dir.count * 2 * sizeof(ct__npz_member);
    ct__npz_member *m = (ct__npz_member *)ct__malloc(bytes ? bytes : 1);
    ct_state_dict *sd = ct_state_dict_new();
    if (!m || !sd) {
        ct__free(m);
        ct_state_dict_free(sd);
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (!ct__npz_members(op, b, &dir, m, m + dir.count, sd)) {
        ct_state_dict_free(sd);
        sd = NULL;
    }
    ct__free(m);
    return sd;
}

ct_state_dict *ct_npz_load_buffer(const void *data, size_t nbytes)
{
    if (nbytes > 0 && ct__null("ct_npz_load_buffer", data)) {
        return NULL;
    }
    return ct__npz_parse("ct_npz_load_buffer", (const unsigned char *)(nbytes ? data : ""),
                         nbytes);
}

#ifndef CTORCH_NO_STDIO
ct_state_dict *ct_npz_load(const char *path)
{
    ct__file_bytes fb;
    if (!ct__file_open("ct_npz_load", path, &fb)) {
        return NULL;
    }
    ct_state_dict *sd = ct__npz_parse("ct_npz_load", fb.data, fb.nbytes);
    ct__file_close(&fb);
    return sd;
}
#endif

#undef ct__npz_u16
#undef ct__npz_u32
#undef CT__NPZ_EOCD
#undef CT__NPZ_LOC64
#undef CT__NPZ_EOCD64
#undef CT__NPZ_CENTRAL
#undef CT__NPZ_LOCAL
#undef CT__NPZ_MAX_RATIO
#undef CT__NPZ_HEAD
CT__GLUE_END
