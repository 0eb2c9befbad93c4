/* nn/state_dict.h - ct_state_dict: an ordered map from names to tensors and numbers, the unit
 * of saving (PyTorch's state_dict OrderedDict).
 *
 * Entries keep their insertion order; setting an existing key replaces its value in place
 * (its position is kept, as an OrderedDict's). A value is a tensor (the dict holds a
 * reference: a module's state_dict shares the parameters' storage, as PyTorch's detached
 * tensors do), an integer, a double or a string.
 *
 * Nested state (an optimizer's state_dict, a scheduler's, a training checkpoint) is written
 * under dotted keys, e.g. "model.0.weight", "optim.state.0.exp_avg" (tensors),
 * "optim.state.0.step", "optim.param_groups.0.lr", "sched.last_epoch", "epoch" (numbers).
 * ct_save writes tensors as safetensors tensors and numbers and strings into the file's
 * "__metadata__" (numbers as decimal text, doubles in the shortest form that reads back
 * exactly); ct_load returns them as string entries, which ct_state_dict_get_int and
 * ct_state_dict_get_double parse. ct_state_dict_update and ct_state_dict_select put several
 * state_dicts into one checkpoint under prefixes and take them out again.
 */
typedef struct ct_state_dict ct_state_dict;

/* The kind of a state_dict value. */
typedef enum ct_state_kind {
    CT_STATE_NONE = 0, /* no such entry */
    CT_STATE_TENSOR,
    CT_STATE_INT,
    CT_STATE_DOUBLE,
    CT_STATE_STRING
} ct_state_kind;

/* A new empty state_dict. Returns: a new ct_state_dict, freed with ct_state_dict_free; NULL
   on CT_ERR_OOM. Mirrors: collections.OrderedDict(). */
CTORCH_API ct_state_dict *ct_state_dict_new(void);
/* Frees sd and drops its references to its tensors. NULL is a no-op. */
CTORCH_API void ct_state_dict_free(ct_state_dict *sd);
/* Sets sd[key] = tensor (sd takes a reference; the tensor is not copied). Returns: CT_OK or
   the error code. Errors: CT_ERR_NULL_ARG; CT_ERR_VALUE for an empty key; CT_ERR_OOM.
   Mirrors: state_dict[key] = tensor. */
CTORCH_API ct_status ct_state_dict_set(ct_state_dict *sd, const char *key, ct_tensor *tensor);
/* Sets sd[key] to an integer, a double or a copy of a string (as ct_state_dict_set). */
CTORCH_API ct_status ct_state_dict_set_int(ct_state_dict *sd, const char *key, int64_t value);
CTORCH_API ct_status ct_state_dict_set_double(ct_state_dict *sd, const char *key, double value);
CTORCH_API ct_status ct_state_dict_set_string(ct_state_dict *sd, const char *key,
                                              const char *value);
/* The tensor sd[key] (borrowed: valid until the entry is replaced or removed or sd freed),
   or NULL (no error recorded) when key is absent or holds no tensor. Errors:
   CT_ERR_NULL_ARG. Mirrors: state_dict.get(key). */
CTORCH_API ct_tensor *ct_state_dict_get(const ct_state_dict *sd, const char *key);
/* Reads sd[key] as an integer into *value: an int entry, or a string entry holding a decimal
   integer (from ct_load). Returns: whether it was found and converted (no error recorded
   otherwise). Errors: CT_ERR_NULL_ARG. */
CTORCH_API bool ct_state_dict_get_int(const ct_state_dict *sd, const char *key, int64_t *value);
/* Reads sd[key] as a double into *value: a double or int entry, or a string entry holding a
   number (from ct_load). Returns: whether it was found and converted. Errors:
   CT_ERR_NULL_ARG. */
CTORCH_API bool ct_state_dict_get_double(const ct_state_dict *sd, const char *key,
                                         double *value);
/* The string sd[key] (borrowed, as ct_state_dict_get), or NULL when key is absent or holds
   no string. Errors: CT_ERR_NULL_ARG. */
CTORCH_API const char *ct_state_dict_get_string(const ct_state_dict *sd, const char *key);
/* Whether sd has key. Mirrors: key in state_dict. */
CTORCH_API bool ct_state_dict_contains(const ct_state_dict *sd, const char *key);
/* Removes sd[key] (dropping its tensor reference). Returns: CT_OK; CT_ERR_INDEX when key is
   absent ("ct_state_dict_remove: KeyError: 'x'"). Mirrors: state_dict.pop(key). */
CTORCH_API ct_status ct_state_dict_remove(ct_state_dict *sd, const char *key);
/* The number of entries. Mirrors: len(state_dict). */
CTORCH_API int64_t ct_state_dict_len(const ct_state_dict *sd);
/* The key of the i-th entry in order (borrowed), or NULL when i is out of range. Iterate
   with ct_state_dict_len, then ct_state_dict_kind / ct_state_dict_get... on the key.
   Mirrors: list(state_dict.keys())[i]. */
CTORCH_API const char *ct_state_dict_key(const ct_state_dict *sd, int64_t i);
/* The kind of sd[key]; CT_STATE_NONE when absent. */
CTORCH_API ct_state_kind ct_state_dict_kind(const ct_state_dict *sd, const char *key);
/* Sets sd[prefix + key] for every entry of other, in its order (tensors shared, as
   ct_state_dict_set; strings copied); prefix may be NULL. Returns: CT_OK or the error code.
   Mirrors: sd.update({prefix + k: v for k, v in other.items()}). */
CTORCH_API ct_status ct_state_dict_update(ct_state_dict *sd, const ct_state_dict *other,
                                          const char *prefix);
/* The entries of sd whose keys start with prefix, the prefix removed, in order (tensors
   shared): a checkpoint's model part for ct_module_load_state_dict. Returns: a new
   ct_state_dict, or NULL. Mirrors: {k[len(prefix):]: v for k, v in sd.items() if
   k.startswith(prefix)}. */
CTORCH_API ct_state_dict *ct_state_dict_select(const ct_state_dict *sd, const char *prefix);
