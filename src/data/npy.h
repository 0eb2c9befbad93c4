/* data/npy.h - NumPy's .npy format: one array per file (numpy.load / numpy.save).
 *
 * Format versions 1.0, 2.0 and 3.0 (headers up to 65535 bytes); 0 to CT_MAX_DIMS dims (0-d
 * and empty arrays included); C order, and Fortran order (fortran_order True: transposed on
 * load into a C-ordered tensor of the same shape). Dtypes (numpy descr -> ctorch), in either
 * byte order ('<' little, '>' big, '|' or '=' the host's; converted to the host's on load):
 * f4 float32, f8 float64, f2 float16, i8 int64, i4 int32, i2 int16, i1 int8, u1 uint8, b1 bool.
 * numpy has no bfloat16, and ctorch no u2/u4/u8, complex, string or structured dtypes: those
 * are CT_ERR_DTYPE. The loader validates every length and offset before use, so a corrupt
 * or hostile file gives an error, never a crash.
 */

/* Parses a whole .npy file held in memory (copies the data; data may be unaligned).
   Shapes: the array's shape, outermost first (also for fortran_order files). Dtypes: as the
   table above; bool bytes other than 0 are read as true.
   Returns: a new contiguous tensor (a leaf), owned by the current scope; NULL on error.
   Errors: CT_ERR_NULL_ARG for a NULL data with nbytes > 0; CT_ERR_FORMAT for a bad magic
   string, a truncated file, a header length beyond the file or over 65535 bytes, a malformed
   header dict (missing, repeated or unknown keys, bad values), a bad shape or a data size that
   differs from the shape's ("ct_npy_load_buffer: data has 40 bytes but shape [3, 4] of
   float32 needs 48 (truncated file)"); CT_ERR_DTYPE for a descr not in the table ('<u4',
   '<c8', '<U3', structured); CT_ERR_UNSUPPORTED for format versions other than 1.0-3.0 and
   more than CT_MAX_DIMS dims.
   Mirrors: numpy.load(io.BytesIO(data)). */
CTORCH_API ct_tensor *ct_npy_load_buffer(const void *data, size_t nbytes);

/* Writes t (any strides, CPU) as a .npy file into buf, byte for byte what numpy.save
   writes (format 1.0, header padded to 64 bytes). buf may be NULL: the size needed is
   returned and nothing is written.
   Returns: the size of the file in bytes (also when n is too small, in which case nothing
   is written); 0 on error.
   Errors: CT_ERR_NULL_ARG for a NULL t; CT_ERR_DEVICE for a non-CPU tensor.
   Mirrors: numpy.save(io.BytesIO(), t.numpy()). */
CTORCH_API size_t ct_npy_save_buffer(const ct_tensor *t, void *buf, size_t n);

#ifndef CTORCH_NO_STDIO
/* Reads the .npy file at path: memory-mapped where the OS has mmap (unless CTORCH_NO_MMAP),
   else read; the tensor is a copy either way. Shapes, dtypes and Errors as
   ct_npy_load_buffer, plus CT_ERR_IO when the file cannot be opened or read
   ("ct_npy_load: No such file or directory: 'x.npy'") and CT_ERR_OOM.
   Returns: a new tensor, owned by the current scope; NULL on error.
   Mirrors: numpy.load(path). */
CTORCH_API ct_tensor *ct_npy_load(const char *path);
/* As ct_npy_load, but the tensor borrows a private copy-on-write memory mapping of the file
   where the OS has mmap (unless CTORCH_NO_MMAP; else the bytes read into memory): nothing is
   read until used, and writing to the tensor never writes the file. The mapping lives until
   the tensor (and every view of it) is freed; the file may be deleted meanwhile. Arrays that
   need converting (the other byte order, fortran_order, bool, misaligned data) are copied
   as ct_npy_load copies them. Returns and Errors: as ct_npy_load (with "ct_npy_load_mmap").
   Mirrors: numpy.load(path, mmap_mode='c'). */
CTORCH_API ct_tensor *ct_npy_load_mmap(const char *path);
/* Writes t (any strides, CPU) to path as numpy.save does (format 1.0); the file is
   replaced. Returns: CT_OK or the error code. Errors: CT_ERR_NULL_ARG; CT_ERR_DEVICE;
   CT_ERR_IO when the file cannot be opened or written. Mirrors: numpy.save(path, a). */
CTORCH_API ct_status ct_npy_save(const char *path, const ct_tensor *t);
#endif
