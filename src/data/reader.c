/* data/reader.c - the bytes of a file for the readers: mmap where the OS has it, else fread.
 *
 * A regular file is mapped private and copy-on-write (nothing is read until the parser
 * touches it; writing to a tensor over the mapping never writes the file); an empty file, a
 * pipe, or a build with CTORCH_NO_MMAP or without POSIX reads the file into memory, growing
 * the buffer geometrically.
 */
#include "../core/internal.h"
#include "reader_internal.h"

#ifndef CTORCH_NO_STDIO
#include <errno.h>
#include <stdio.h>
#if (defined(__unix__) || defined(__APPLE__)) && !defined(CTORCH_NO_MMAP)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define CT__READER_MMAP 1
#endif

CT__GLUE_BEGIN

/* Reads f to its end into fb->heap. */
static CT__UNUSED bool ct__file_read_all(const char *op, const char *path, FILE *f,
                                         ct__file_bytes *fb)
{
    size_t cap = (size_t)1 << 16, len = 0;
    char *data = (char *)ct__malloc(cap);
    for (;;) {
        if (!data) {
            ct__fail(CT_ERR_OOM, op, "not enough memory to read '%s'", path);
            return false;
        }
        len += fread(data + len, 1, cap - len, f);
        if (len < cap || cap > SIZE_MAX / 2) {
            break;
        }
        cap *= 2;
        char *grown = (char *)ct__realloc(data, cap);
        if (!grown) {
            ct__free(data);
        }
        data = grown;
    }
    if (ferror(f)) {
        ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno ? errno : EIO), path);
        ct__free(data);
        return false;
    }
    fb->heap = data;
    fb->data = (const unsigned char *)data;
    fb->nbytes = len;
    return true;
}

#ifdef CT__READER_MMAP
/* Maps a regular non-empty file; true with fb->map unset when it should be read instead. */
static CT__UNUSED bool ct__file_map(const char *op, const char *path, ct__file_bytes *fb)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
        return false;
    }
    struct stat st;
    bool ok = fstat(fd, &st) == 0;
    int err = errno;
    if (ok && S_ISDIR(st.st_mode)) {
        ok = false;
        err = EISDIR;
    }
    if (ok && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= (uint64_t)SIZE_MAX) {
        void *addr = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
                          0);
        if (addr != MAP_FAILED) {
            fb->map = addr;
            fb->data = (const unsigned char *)addr;
            fb->nbytes = (size_t)st.st_size;
        }
    }
    close(fd);
    if (!ok) {
        ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(err), path);
    }
    return ok;
}
#endif

bool ct__file_open(const char *op, const char *path, ct__file_bytes *fb)
{
    memset(fb, 0, sizeof *fb);
    if (ct__null(op, path)) {
        return false;
    }
#ifdef CT__READER_MMAP
    if (!ct__file_map(op, path, fb)) {
        return false;
    }
    if (fb->map) {
        return true;
    }
#endif
    FILE *f = fopen(path, "rb");
    if (!f) {
        ct__fail(CT_ERR_IO, op, "%s: '%s'", strerror(errno), path);
        return false;
    }
    bool ok = ct__file_read_all(op, path, f, fb);
    fclose(f);
    return ok;
}

void ct__file_close(ct__file_bytes *fb)
{
#ifdef CT__READER_MMAP
    if (fb->map) {
        munmap(fb->map, fb->nbytes);
    }
#endif
    ct__free(fb->heap);
    memset(fb, 0, sizeof *fb);
}

ct__file_bytes *ct__file_share(const char *op, const char *path)
{
    ct__file_bytes *fb = (ct__file_bytes *)ct__calloc(sizeof(ct__file_bytes));
    if (!fb) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    if (!ct__file_open(op, path, fb)) {
        ct__free(fb);
        return NULL;
    }
    fb->refs = 1;
    return fb;
}

void ct__file_unshare(void *data, void *ctx)
{
    ct__file_bytes *fb = (ct__file_bytes *)ctx;
    (void)data;
    if (CT__ATOMIC_ADD(&fb->refs, -1) == 0) {
        ct__file_close(fb);
        ct__free(fb);
    }
}

ct_tensor *ct__file_borrow(const char *op, ct__file_bytes *fb, size_t offset, ct_dtype dtype,
                           const int64_t *sizes, int ndim)
{
    ct_storage *s = (ct_storage *)ct__calloc(sizeof(ct_storage));
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
        return NULL;
    }
    CT__ATOMIC_ADD(&fb->refs, 1);
    s->data = (void *)(uintptr_t)(fb->data + offset);
    s->nbytes = (size_t)ct__numel(sizes, ndim) * ct_dtype_size(dtype);
    s->refcount = 1;
    s->device = ct_device_cpu();
    s->borrowed = true;
    s->deleter = ct__file_unshare;
    s->deleter_ctx = fb;
    int64_t strides[CT_MAX_DIMS];
    ct__contiguous_strides(sizes, ndim, strides);
    ct_tensor *t = ct__tensor_over(s, dtype, sizes, strides, ndim, 0);
    ct__storage_release(s);
    if (!t) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    return t;
}

#ifdef CT__READER_MMAP
#undef CT__READER_MMAP
#endif
CT__GLUE_END
#endif
