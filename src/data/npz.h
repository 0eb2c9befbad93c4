/* data/npz.h - NumPy's .npz archives: named arrays in a zip file (numpy.savez and
 * numpy.savez_compressed; numpy.load).
 *
 * An .npz is a zip archive with one .npy member per array ("x.npy" holds the array named
 * "x"). Read: stored (method 0) and deflated (method 8, through zlib: CTORCH_ZLIB) members,
 * zip64 records as numpy writes them (zip64 extra fields in local headers; the zip64 end of
 * central directory record and locator, and zip64 central extra fields, of archives over
 * 4 GiB or 65535 members); each member's .npy as ct_npy_load_buffer reads it (every dtype,
 * byte order and Fortran order). Not read: encryption, other compression methods,
 * multi-disk archives, members not named *.npy (numpy returns those as bytes).
 *
 * Every offset and size is checked against the archive before it is used: the end of central
 * directory record (found by its signature within the last 65557 bytes, its comment ending at
 * the end of the data), the central directory (inside the archive, before the end record,
 * entries that fill it exactly), each local header (inside the archive, before the central
 * directory, its signature, method, name, CRC and sizes equal to the central entry's), member
 * data that neither leaves the archive nor overlaps another member's, and the CRC-32 of each
 * member. Zip bombs: a deflated member may not declare more than 1032 bytes per compressed
 * byte (deflate's largest ratio), its declared size must equal what its .npy header needs
 * (checked after inflating at most 64 KiB), and inflation stops at the declared size.
 */

/* Parses an .npz archive held in memory; the arrays are copied (data may be freed after).
   Shapes and dtypes: each array's, as ct_npy_load_buffer.
   Returns: a new ct_state_dict (ct_state_dict_free) mapping each member's name without
   ".npy" to its tensor (a contiguous leaf), in the central directory's order (numpy's
   NpzFile.files); NULL on error.
   Errors: CT_ERR_NULL_ARG for NULL data with nbytes > 0; CT_ERR_FORMAT for a file that is
   not a zip archive ("ct_npz_load_buffer: File is not a zip file: no end of central
   directory record"), offsets or sizes outside the archive ("central directory at offset
   4096 with 120 bytes ends past the 530 bytes before the end record"), a local header that
   differs from its central entry, overlapping members, a bad CRC-32 ("Bad CRC-32 for file
   'a.npy'"), a member name with control characters, not ending in ".npy" or repeated, a
   declared size that lies (zip bomb), a corrupt deflate stream, and every .npy error of
   ct_npy_load_buffer, prefixed with the member's name ("ct_npz_load_buffer: 'a.npy': data
   has 8 bytes but shape [3] of <f4 needs 12 (truncated file)"); CT_ERR_DTYPE as
   ct_npy_load_buffer; CT_ERR_UNSUPPORTED for encrypted members, compression methods other
   than stored and deflate, multi-disk archives, and deflated members without CTORCH_ZLIB;
   CT_ERR_OOM.
   Mirrors: dict(numpy.load(io.BytesIO(data))). */
CTORCH_API ct_state_dict *ct_npz_load_buffer(const void *data, size_t nbytes);

#ifndef CTORCH_NO_STDIO
/* Reads the .npz file at path: memory-mapped where the OS has mmap (unless CTORCH_NO_MMAP),
   else read; the tensors are copies either way. Returns and Errors: as ct_npz_load_buffer
   (with "ct_npz_load"), plus CT_ERR_IO when the file cannot be opened or read
   ("ct_npz_load: No such file or directory: 'x.npz'"). Mirrors: dict(numpy.load(path)). */
CTORCH_API ct_state_dict *ct_npz_load(const char *path);
#endif
