/* data/reader_internal.h - private: the bytes of a file for the readers (data/npy.c,
 * data/npz.c, data/csv.c). A file is memory-mapped read-only where the OS has mmap (POSIX,
 * unless CTORCH_NO_MMAP), else read into memory; the readers then parse the bytes exactly as
 * their _buffer variants do, so both paths share every check. */

/* What a .npy header says (data/npy.c): dtype, shape, order, and where the data begins. */
typedef struct ct__npy_info {
    char descr[32]; /* as the file spells it, for messages */
    ct_dtype dtype;
    bool fortran_order;
    bool swap; /* the file's byte order differs from the host's */
    int ndim;
    int64_t sizes[CT_MAX_DIMS];
    size_t data_offset;  /* preamble + header */
    uint64_t data_bytes; /* numel * itemsize */
} ct__npy_info;

/* Parses the preamble and header of the .npy bytes b[0..n) into info (n may end anywhere
   after the header: the data is not looked at); checks the dtype and that the shape's byte
   count fits. Returns: false after CT_ERR_FORMAT / CT_ERR_DTYPE / CT_ERR_UNSUPPORTED. */
CT__INTERNAL bool ct__npy_read_header(const char *op, const unsigned char *b, size_t n,
                                      ct__npy_info *info);
/* A new unscoped tensor from the whole .npy file b[0..n) (ct_npy_load_buffer's checks and
   conversions), or NULL after an error. */
CT__INTERNAL ct_tensor *ct__npy_parse(const char *op, const unsigned char *b, size_t n);

#ifndef CTORCH_NO_STDIO
typedef struct ct__file_bytes {
    const unsigned char *data; /* the file's bytes ("" for an empty file); writable (a
                                  private copy-on-write mapping, or heap) unless empty */
    size_t nbytes;
    void *map;  /* the mapping to unmap, or NULL */
    char *heap; /* the bytes read into memory, or NULL */
    int refs;   /* ct__file_share: the references of the tensors over the bytes */
} ct__file_bytes;

/* Makes the bytes of the file at path readable in fb. Returns: false after CT_ERR_NULL_ARG,
   CT_ERR_IO ("op: No such file or directory: 'x.csv'", "op: Is a directory: 'x'") or
   CT_ERR_OOM; then fb needs no close. */
CT__INTERNAL bool ct__file_open(const char *op, const char *path, ct__file_bytes *fb);
/* Unmaps or frees what ct__file_open made. */
CT__INTERNAL void ct__file_close(ct__file_bytes *fb);
/* ct__file_open into a new shared ct__file_bytes with one reference (the caller's), for
   tensors that borrow the bytes; NULL after an error. */
CT__INTERNAL ct__file_bytes *ct__file_share(const char *op, const char *path);
/* Drops a reference to the shared bytes ctx (a storage deleter: data is unused); the last
   one closes and frees them. */
CT__INTERNAL void ct__file_unshare(void *data, void *ctx);
/* A new unscoped contiguous tensor of dtype and sizes over the shared bytes fb->data + offset
   (the caller checked the bounds and the alignment); it holds a reference to fb. NULL after
   CT_ERR_OOM. */
CT__INTERNAL ct_tensor *ct__file_borrow(const char *op, ct__file_bytes *fb, size_t offset,
                                        ct_dtype dtype, const int64_t *sizes, int ndim);
#endif
