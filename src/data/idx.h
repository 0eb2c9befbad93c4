/* data/idx.h - the IDX format of MNIST, Fashion-MNIST, KMNIST and EMNIST.
 *
 * An IDX file is: two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
 * 0x0D float32, 0x0E float64), the number of dimensions (1..8), one big-endian uint32 size per
 * dimension (outermost first), then the elements in row-major order, big-endian. Readers
 * validate every field and length before use: hostile input gives an error, never a crash,
 * and never an allocation larger than the data actually present.
 */

#ifndef CTORCH_NO_STDIO
/* Reads an IDX file into a contiguous tensor of the file's shape and dtype. A path ending in
   ".gz" is decompressed with zlib when the implementation is built with CTORCH_ZLIB (link
   -lz); the other paths are read as they are.
   Shapes: the header's, e.g. images (N, 28, 28) and labels (N) for MNIST.
   dtypes: uint8 -> CT_UINT8, int8 -> CT_INT8, int16 -> CT_INT16, int32 -> CT_INT32,
   float32 -> CT_FLOAT32, float64 -> CT_FLOAT64 (converted to host byte order).
   Returns: a new tensor, owned by the current scope; NULL on error.
   Errors: CT_ERR_IO (cannot open or read, with the path and the system's reason);
   CT_ERR_FORMAT (short header, magic bytes not 0 0, unknown type code, 0 or more than 8
   dimensions, sizes that overflow, data shorter or longer than the header declares, e.g.
   "ct_idx_load: truncated file: header declares 60000x28x28 uint8 (47040000 bytes) but 1000
   bytes follow in 'x'"); CT_ERR_UNSUPPORTED for ".gz" without CTORCH_ZLIB; CT_ERR_OOM.
   Mirrors: torchvision.datasets.mnist.read_sn3_pascalvincent_tensor. */
CTORCH_API ct_tensor *ct_idx_load(const char *path);
#endif

/* Parses an uncompressed IDX image held in memory (copies the elements; data may be freed
   afterwards). Shapes, dtypes and errors as ct_idx_load, with "ct_idx_load_buffer" in the
   messages; data may be NULL only when nbytes is 0.
   Returns: a new tensor, owned by the current scope; NULL on error.
   Mirrors: torchvision.datasets.mnist.read_sn3_pascalvincent_tensor. */
CTORCH_API ct_tensor *ct_idx_load_buffer(const void *data, size_t nbytes);
