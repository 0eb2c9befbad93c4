/* data/reader_internal.h - private: the bytes of a file for the readers (data/npy.c,
 * data/npz.c, data/csv.c). A file is memory-mapped read-only where the OS has mmap (POSIX,
 * unless CTORCH_NO_MMAP), else read into memory; the readers then parse the bytes exactly as
 * their _buffer variants do, so both paths share every check. */
#ifndef CTORCH_NO_STDIO
typedef struct ct__file_bytes {
    const unsigned char *data; /* the file's bytes ("" for an empty file) */
    size_t nbytes;
    void *map;  /* the mapping to unmap, or NULL */
    char *heap; /* the bytes read into memory, or NULL */
} ct__file_bytes;

/* Makes the bytes of the file at path readable in fb. Returns: false after CT_ERR_NULL_ARG,
   CT_ERR_IO ("op: No such file or directory: 'x.csv'", "op: Is a directory: 'x'") or
   CT_ERR_OOM; then fb needs no close. */
CT__INTERNAL bool ct__file_open(const char *op, const char *path, ct__file_bytes *fb);
/* Unmaps or frees what ct__file_open made. */
CT__INTERNAL void ct__file_close(ct__file_bytes *fb);
#endif
