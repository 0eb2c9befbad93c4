/* nn/safetensors.h - checkpoints in the safetensors format (ct_save / ct_load).
 *
 * File layout: an 8-byte little-endian header length N; N bytes of JSON
 *     {"__metadata__":{"k":"v",...},"name":{"dtype":"F32","shape":[2,3],"data_offsets":[b,e]},...}
 * padded with spaces to a multiple of 8; then the data section, where each tensor's bytes are
 * [b, e) (little-endian, C order). Dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL (ctorch's
 * ten dtypes). ct_save writes what safetensors.torch.save_file writes for the same tensors and
 * metadata, byte for byte: tensors ordered by dtype (I64 F64 F32 I32 BF16 F16 I16 I8 U8 BOOL)
 * then by name, compact JSON, "__metadata__" first with sorted keys.
 *
 * Loaders check everything before use, as the safetensors library does: the header length
 * (at most 100,000,000 bytes, within the file), UTF-8, the JSON (strings, escapes, nesting),
 * keys (no duplicates, each tensor's "dtype", "shape" and "data_offsets" exactly once), the
 * dtype, the shape (at most CT_MAX_DIMS dims, no overflow), and the offsets: sorted by begin
 * they must tile the data section exactly (no hole, no overlap, end >= begin, each tensor's
 * bytes = numel * itemsize). Every failure is an error naming the problem, never a crash.
 * Loaded state_dicts hold the tensors in the order of their data, then the metadata as
 * string entries (ct_state_dict_get_int / _double parse them). Big-endian hosts:
 * CT_ERR_UNSUPPORTED.
 */

/* Writes sd as a safetensors file into buf: tensor entries as tensors (any strides, CPU),
   int, double and string entries into "__metadata__" (ints in decimal, doubles in the
   shortest form that reads back exactly). buf may be NULL: the size needed is returned and
   nothing is written. Returns: the file size in bytes (also when n is too small, in which
   case nothing is written); 0 on error. Errors: CT_ERR_NULL_ARG; CT_ERR_DEVICE for a non-CPU
   tensor; CT_ERR_VALUE for a key or string that is not valid UTF-8 or the key
   "__metadata__"; CT_ERR_UNSUPPORTED on a big-endian host.
   Mirrors: safetensors.torch.save(tensors, metadata). */
CTORCH_API size_t ct_save_buffer(const ct_state_dict *sd, void *buf, size_t n);
/* Parses a safetensors file held in memory; the tensors are copied (data may be unaligned
   and freed afterwards). Returns: a new ct_state_dict (ct_state_dict_free), tensors
   contiguous leaves; NULL on error. Errors: CT_ERR_NULL_ARG; CT_ERR_FORMAT for the checks
   above ("ct_load_buffer: header length 4096 exceeds the 120 bytes left in the file",
   "ct_load_buffer: invalid JSON header: unterminated string at header byte 37",
   "ct_load_buffer: tensor 'b': data_offsets [8, 20] leave a hole or overlap: expected it
   to begin at 16"); CT_ERR_DTYPE for a dtype ctorch lacks ("U16") or does not know;
   CT_ERR_UNSUPPORTED for more than CT_MAX_DIMS dims and big-endian hosts; CT_ERR_OOM.
   Mirrors: safetensors.torch.load(data). */
CTORCH_API ct_state_dict *ct_load_buffer(const void *data, size_t nbytes);

#ifndef CTORCH_NO_STDIO
/* Writes sd to path as ct_save_buffer (the file is replaced). Returns: CT_OK or the error
   code. Errors: as ct_save_buffer; CT_ERR_IO when the file cannot be written.
   Mirrors: safetensors.torch.save_file(tensors, path, metadata) / torch.save. */
CTORCH_API ct_status ct_save(const ct_state_dict *sd, const char *path);
/* Reads the safetensors file at path: the header, then each tensor's bytes straight into its
   own (aligned) storage. Returns: a new ct_state_dict, or NULL. Errors: as ct_load_buffer;
   CT_ERR_IO when the file cannot be opened or read ("ct_load: No such file or directory:
   'x.safetensors'"). Mirrors: safetensors.torch.load_file(path) / torch.load. */
CTORCH_API ct_state_dict *ct_load(const char *path);
/* As ct_load, but the tensors borrow a private (copy-on-write) memory mapping of the file
   where the OS has mmap (POSIX): nothing is read until used, and writing a tensor never
   writes the file. The mapping lives until the last tensor over it is freed (it outlives
   the state_dict as long as a tensor is retained); the file may be deleted meanwhile.
   Tensors whose bytes are not aligned to their element size are copied. Without mmap (or
   when mapping fails) it reads as ct_load does. Returns and Errors: as ct_load.
   Mirrors: torch.load(path, mmap=True) / safetensors.safe_open. */
CTORCH_API ct_state_dict *ct_load_mmap(const char *path);
/* A training checkpoint: one ct_state_dict holding the model's, optimizer's and scheduler's
   state and counters under prefixed keys, e.g.
       ct_checkpoint_dict *ck = ct_state_dict_new();
       ct_state_dict_update(ck, model_sd, "model.");      // tensors, shared
       ct_state_dict_update(ck, optim_sd, "optim.");      // tensors and numbers
       ct_state_dict_set_int(ck, "epoch", epoch);
       ct_checkpoint_dict_save(ck, "ckpt.safetensors");
   and back: ck = ct_checkpoint_dict_load(path); sd = ct_state_dict_select(ck, "model.");
   ct_module_load_state_dict(model, sd, true, NULL); ct_state_dict_get_int(ck, "epoch", &e).
   Mirrors: torch.save({"model": ..., "optimizer": ..., "epoch": ...}, path). */
typedef ct_state_dict ct_checkpoint_dict;
/* Writes ckpt to path (ct_save: tensors as tensors, numbers and strings as metadata).
   Returns and Errors: as ct_save. */
CTORCH_API ct_status ct_checkpoint_dict_save(const ct_checkpoint_dict *ckpt, const char *path);
/* Reads a checkpoint (ct_load: numbers come back as strings that ct_state_dict_get_int and
   ct_state_dict_get_double read). Returns and Errors: as ct_load. */
CTORCH_API ct_checkpoint_dict *ct_checkpoint_dict_load(const char *path);
/* Saves m's state_dict to path (ct_module_state_dict + ct_save). Returns: CT_OK or the
   error code. Mirrors: save_file(model.state_dict(), path). */
CTORCH_API ct_status ct_module_save(const ct_module *m, const char *path);
/* Loads path into m (ct_load + ct_module_load_state_dict(m, sd, strict, keys)). Returns and
   Errors: as those two. Mirrors: model.load_state_dict(load_file(path), strict). */
CTORCH_API ct_status ct_module_load(ct_module *m, const char *path, bool strict,
                                    ct_incompatible_keys *keys);
#endif
