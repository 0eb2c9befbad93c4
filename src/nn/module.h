/* nn/module.h - modules (torch.nn.Module): parameters, buffers, submodules, train/eval,
 * hooks, containers and state_dicts.
 *
 * All modules share the ct_module type. A module owns its parameters (leaf tensors that
 * require grad), its buffers and its submodules; ct_module_free releases them all.
 * Parameters are created as float32 on the CPU with PyTorch's default initialization,
 * drawn from the default generator (so ct_manual_seed(s) followed by the same constructors
 * gives PyTorch's initial weights for torch.manual_seed(s)).
 * Names are dotted paths in registration order ("0.weight", "2.bias"); every listing
 * (parameters, buffers, named_modules, state_dict) walks the modules in PyTorch's order: a
 * module's own entries, then each child's, recursively (pre-order).
 *
 * Writing a module (Mirrors: subclassing torch.nn.Module). Register the parameters, buffers
 * and submodules on a ct_module_new module; a single-input forward goes into ct_module_new
 * and runs through ct_module_forward (Module.__call__, with hooks). A module with several
 * inputs or outputs gets a typed forward, as ctorch's own layers (ct_linear_forward), which
 * looks its parts up by name and calls submodules:
 *
 *     // out = fc(a) + b; *out2 = relu(out) (several inputs, two outputs)
 *     ct_tensor *my_block_forward(ct_module *m, const ct_tensor *a, const ct_tensor *b,
 *                                 ct_tensor **out2)
 *     {
 *         ct_tensor *h = ct_module_forward(ct_module_get_submodule(m, "fc"), a);
 *         ct_tensor *out = ct_add(h, b);
 *         *out2 = ct_relu(out);
 *         return out;
 *     }
 *     ct_module *my_block_new(int64_t n)
 *     {
 *         ct_module *m = ct_module_new("MyBlock", my_block_single, NULL, NULL);
 *         ct_module_register_module(m, "fc", ct_linear_new(n, n, true));
 *         ct_module_register_buffer(m, "scale", ct_ones(&n, 1, CT_FLOAT32));
 *         return m;
 *     }
 *
 * where my_block_single(m, x) is the ct_module_forward_fn used when the module is called
 * with one input (inside a Sequential, say), e.g. my_block_forward(m, x, x, &unused).
 * Typed forwards are Module.forward: they do not run the module's hooks; ct_module_forward
 * does. tests/test_module.c builds such a module, saves and reloads it.
 */
typedef struct ct_module ct_module;

/* The forward function of a module type; returns a new tensor owned by the current scope. */
typedef ct_tensor *(*ct_module_forward_fn)(ct_module *m, const ct_tensor *input);

/* A new empty module of type name (at most 31 characters) for user-defined modules: the
   forward callback, and user data freed with user_free (may be NULL) by ct_module_free.
   Register parameters and submodules with the ct_module_register_* calls.
   Mirrors: subclassing torch.nn.Module. */
CTORCH_API ct_module *ct_module_new(const char *name, ct_module_forward_fn forward, void *user,
                                    void (*user_free)(void *user));
/* Frees m, its submodules, parameters (unless something else still holds them) and buffers.
   Invalidates: pointers from ct_module_get_parameter / ct_module_parameters / ct_module_child
   and the parameters' .grad, unless retained. NULL is a no-op. */
CTORCH_API void ct_module_free(ct_module *m);
/* Runs the module's forward pre-hooks, its forward on input, then its forward hooks.
   Returns: a new tensor owned by the current scope. Errors: as the module's ops and hooks;
   CT_ERR_NULL_ARG. Mirrors: Module.__call__. */
CTORCH_API ct_tensor *ct_module_forward(ct_module *m, const ct_tensor *input);
/* The module's type name ("Linear", "Sequential", ...). */
CTORCH_API const char *ct_module_name(const ct_module *m);
/* The user data given to ct_module_new. */
CTORCH_API void *ct_module_user(const ct_module *m);

/* Registers a parameter (the module takes a reference; it is marked requires_grad). Names
   must be unique within m and contain no '.'. Mirrors: Module.register_parameter. */
CTORCH_API ct_status ct_module_register_parameter(ct_module *m, const char *name, ct_tensor *param);
/* Registers a persistent buffer (state that is not a parameter, e.g. running_mean; saved in
   the state_dict); the module takes a reference. Mirrors: Module.register_buffer(name, t). */
CTORCH_API ct_status ct_module_register_buffer(ct_module *m, const char *name, ct_tensor *buffer);
/* Registers a buffer that is persistent (in the state_dict) or not (moved by ct_module_to and
   listed by ct_module_buffers, but not saved). Mirrors: Module.register_buffer(name, t,
   persistent). */
CTORCH_API ct_status ct_module_register_buffer_persistent(ct_module *m, const char *name,
                                                          ct_tensor *buffer, bool persistent);
/* Registers child as a submodule named name; m takes ownership of child. Mirrors:
   Module.add_module. */
CTORCH_API ct_status ct_module_register_module(ct_module *m, const char *name, ct_module *child);

/* The parameters of m and its submodules, recursively, in registration order: writes up to
   cap tensor pointers (borrowed, owned by the module) into params (which may be NULL) and
   returns the total count. Mirrors: Module.parameters. */
CTORCH_API int64_t ct_module_parameters(const ct_module *m, ct_tensor **params, int64_t cap);
/* As ct_module_parameters, also writing dotted names (into caller buffers names[i] of
   name_cap bytes each; either array may be NULL). Mirrors: Module.named_parameters. */
CTORCH_API int64_t ct_module_named_parameters(const ct_module *m, char **names, size_t name_cap,
                                              ct_tensor **params, int64_t cap);
/* The buffers (persistent and not) of m and its submodules, recursively, as
   ct_module_parameters. Mirrors: Module.buffers. */
CTORCH_API int64_t ct_module_buffers(const ct_module *m, ct_tensor **buffers, int64_t cap);
/* As ct_module_buffers, also writing dotted names, as ct_module_named_parameters.
   Mirrors: Module.named_buffers. */
CTORCH_API int64_t ct_module_named_buffers(const ct_module *m, char **names, size_t name_cap,
                                           ct_tensor **buffers, int64_t cap);
/* The direct submodules in registration order: writes up to cap pointers (borrowed) into
   children (which may be NULL) and returns the count. Mirrors: Module.children. */
CTORCH_API int64_t ct_module_children(const ct_module *m, ct_module **children, int64_t cap);
/* m and all its submodules, pre-order, with dotted names ("" for m itself, "0", "0.fc" ...):
   writes up to cap names (into caller buffers names[i] of name_cap bytes) and module pointers
   (borrowed); either array may be NULL. Returns: the total count. Mirrors:
   Module.named_modules / Module.modules. */
CTORCH_API int64_t ct_module_named_modules(const ct_module *m, char **names, size_t name_cap,
                                           ct_module **modules, int64_t cap);
/* The submodule at a dotted path ("" is m itself), borrowed. Errors: CT_ERR_VALUE
   "Linear has no attribute `x`". Mirrors: Module.get_submodule. */
CTORCH_API ct_module *ct_module_get_submodule(const ct_module *m, const char *target);
/* The parameter or buffer with the dotted name, or NULL (borrowed). Mirrors:
   Module.get_parameter. */
CTORCH_API ct_tensor *ct_module_get_parameter(const ct_module *m, const char *name);
/* The i-th direct submodule, or NULL (borrowed). Mirrors: Sequential[i]. */
CTORCH_API ct_module *ct_module_child(const ct_module *m, int64_t i);
/* Number of direct submodules. Mirrors: len(Sequential). */
CTORCH_API int64_t ct_module_num_children(const ct_module *m);
/* Sets training mode recursively (true: train, false: eval). Mirrors: Module.train(mode). */
CTORCH_API void ct_module_train(ct_module *m, bool mode);
/* Mirrors: Module.eval. */
CTORCH_API void ct_module_eval(ct_module *m);
/* Mirrors: Module.training. */
CTORCH_API bool ct_module_is_training(const ct_module *m);
/* Resets the gradients of all parameters: to NULL when set_to_none (PyTorch 2's default),
   else to zero in place. Invalidates (set_to_none): every .grad pointer taken with ct_grad.
   Mirrors: Module.zero_grad(set_to_none). */
CTORCH_API void ct_module_zero_grad(ct_module *m, bool set_to_none);

/* Sets requires_grad on every parameter of m (recursively): false freezes them. Returns: m.
   Mirrors: Module.requires_grad_(requires_grad). */
CTORCH_API ct_module *ct_module_requires_grad_(ct_module *m, bool requires_grad);
/* Calls fn(module, user) on every submodule and then on m (children first, as PyTorch), e.g.
   for a custom initialization. Returns: m. Mirrors: Module.apply(fn). */
CTORCH_API ct_module *ct_module_apply(ct_module *m, void (*fn)(ct_module *module, void *user),
                                      void *user);
/* Converts the floating-point parameters and buffers of m (recursively), and their .grad, to
   dtype in place: each keeps its tensor object (optimizers holding them stay valid), with new
   storage; integer and bool buffers (num_batches_tracked) are untouched. Returns: m, or NULL.
   Errors: CT_ERR_DTYPE "nn.Module.to only accepts floating point or complex dtypes, but got
   desired dtype=torch.int64". Invalidates: data pointers of the converted tensors.
   Mirrors: Module.to(dtype). */
CTORCH_API ct_module *ct_module_to(ct_module *m, ct_dtype dtype);

/* ---- hooks -------------------------------------------------------------------------- */
/* A forward pre-hook: runs before forward with its input; returns a new tensor (owned by the
   current scope) that replaces the input, or NULL to keep it. */
typedef ct_tensor *(*ct_forward_pre_hook)(ct_module *m, const ct_tensor *input, void *user);
/* A forward hook: runs after forward with the input forward got and its output; returns a
   new tensor that replaces the output, or NULL to keep it. */
typedef ct_tensor *(*ct_forward_hook)(ct_module *m, const ct_tensor *input,
                                      const ct_tensor *output, void *user);
/* What a hook registration returns; ct_hook_handle_remove takes the hook off again. Valid
   while its module lives. Mirrors: torch.utils.hooks.RemovableHandle. */
typedef struct ct_hook_handle {
    ct_module *module; /* NULL after an error */
    int64_t id;        /* > 0; 0 once removed */
} ct_hook_handle;
/* Registers a pre-hook run by ct_module_forward(m, ...) before m's forward, in registration
   order, each seeing the previous one's replacement. An error recorded by a hook stops the
   call (NULL). Returns: the handle; {NULL, 0} on error. Errors: CT_ERR_NULL_ARG; CT_ERR_OOM.
   Mirrors: Module.register_forward_pre_hook. */
CTORCH_API ct_hook_handle ct_module_register_forward_pre_hook(ct_module *m, ct_forward_pre_hook fn,
                                                              void *user);
/* Registers a hook run by ct_module_forward(m, ...) after m's forward, in registration
   order. Returns and Errors as ct_module_register_forward_pre_hook.
   Mirrors: Module.register_forward_hook. */
CTORCH_API ct_hook_handle ct_module_register_forward_hook(ct_module *m, ct_forward_hook fn,
                                                          void *user);
/* A full backward hook: runs when the gradients of the module's input (grad_input; NULL when
   the input does not require grad) and output (grad_output) of a ct_module_forward call have
   been computed; returns a new tensor that replaces grad_input, or NULL to keep it. */
typedef ct_tensor *(*ct_full_backward_hook)(ct_module *m, const ct_tensor *grad_input,
                                            const ct_tensor *grad_output, void *user);
/* Registers a full backward hook, run in registration order for every later
   ct_module_forward(m, ...) made with grad mode on (the input and output are wrapped in
   aliases carrying gradient hooks, as PyTorch's BackwardHook). m must outlive the backward
   passes of the graphs those calls recorded. Returns and Errors as
   ct_module_register_forward_pre_hook. Mirrors: Module.register_full_backward_hook. */
CTORCH_API ct_hook_handle ct_module_register_full_backward_hook(ct_module *m,
                                                                ct_full_backward_hook fn,
                                                                void *user);
/* Removes the hook; removing twice is a no-op. Mirrors: RemovableHandle.remove. */
CTORCH_API void ct_hook_handle_remove(ct_hook_handle *handle);

/* ---- containers --------------------------------------------------------------------- */
/* A new nn.Parameter: a leaf tensor sharing data's storage (no history), requiring grad when
   requires_grad. Returns: a new tensor owned by the current scope. Errors: CT_ERR_DTYPE
   when requires_grad and data is not floating point ("only Tensors of floating point dtype
   can require gradients"). Mirrors: torch.nn.Parameter(data,
   requires_grad). */
CTORCH_API ct_tensor *ct_parameter(const ct_tensor *data, bool requires_grad);
/* A list of submodules named "0", "1", ... (no forward of its own: ct_module_forward fails
   with CT_ERR_UNSUPPORTED "Module [ModuleList] is missing the required \"forward\" function").
   Mirrors: torch.nn.ModuleList. */
CTORCH_API ct_module *ct_module_list_new(void);
/* Appends child (ownership moves to list; freed on error). Returns: list, or NULL.
   Mirrors: ModuleList.append. */
CTORCH_API ct_module *ct_module_list_append(ct_module *list, ct_module *child);
/* A dict of submodules by name, in insertion order (no forward of its own).
   Mirrors: torch.nn.ModuleDict. */
CTORCH_API ct_module *ct_module_dict_new(void);
/* Sets dict[key] = child (ownership moves to dict; an existing child of that key is freed and
   replaced in place). Returns: CT_OK or the error code (child freed). Errors: CT_ERR_VALUE for
   keys with '.', empty or longer than 31 characters. Mirrors: ModuleDict.__setitem__. */
CTORCH_API ct_status ct_module_dict_set(ct_module *dict, const char *key, ct_module *child);
/* dict[key] (borrowed), or NULL when absent (no error). Mirrors: ModuleDict.get(key). */
CTORCH_API ct_module *ct_module_dict_get(const ct_module *dict, const char *key);
/* A list of parameters named "0", "1", ... Mirrors: torch.nn.ParameterList. */
CTORCH_API ct_module *ct_parameter_list_new(void);
/* Appends param (the list takes a reference and marks it requires_grad). Returns: CT_OK or
   the error code. Mirrors: ParameterList.append. */
CTORCH_API ct_status ct_parameter_list_append(ct_module *list, ct_tensor *param);

/* ---- state_dict --------------------------------------------------------------------- */
/* The parameters and persistent buffers of m and its submodules under PyTorch's dotted
   names and order (per module: parameters, then buffers, then each child's entries). The
   tensors share storage with the module's (detached aliases, as PyTorch's state_dict()):
   writing them writes the model; ct_save them to checkpoint.
   Returns: a new ct_state_dict (ct_state_dict_free), or NULL. Mirrors: Module.state_dict(). */
CTORCH_API ct_state_dict *ct_module_state_dict(const ct_module *m);
/* The keys ct_module_load_state_dict did not match (lists of names, in PyTorch's order). */
typedef struct ct_incompatible_keys {
    char **missing_keys; /* in the model, not in the state_dict */
    int64_t n_missing;
    char **unexpected_keys; /* in the state_dict, not in the model */
    int64_t n_unexpected;
} ct_incompatible_keys;
/* Frees the lists of keys (and zeroes it); NULL is a no-op. */
CTORCH_API void ct_incompatible_keys_free(ct_incompatible_keys *keys);
/* Copies sd's tensors into m's parameters and persistent buffers of the same dotted names, in
   place, without autograd; values are converted to the parameter's dtype (as copy_). A
   0-dim parameter accepts a [1] tensor. Entries that match are copied even when others fail.
   keys (may be NULL) receives the missing and unexpected keys, also when not strict (free
   with ct_incompatible_keys_free).
   Returns: CT_OK, or CT_ERR_VALUE with PyTorch's message (truncated to ct_error's 511 bytes):
   "Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: \"0.bias\".
   \n\tUnexpected key(s) in state_dict: \"x\". \n\tsize mismatch for 0.weight: copying a param
   with shape torch.Size([3, 4]) from checkpoint, the shape in current model is
   torch.Size([4, 4])." -- missing and unexpected keys are errors only when strict; size
   mismatches and non-tensor values ("While copying the parameter named \"w\", expected
   torch.Tensor or Tensor-like object from checkpoint but received <class 'int'>") always.
   Mirrors: Module.load_state_dict(state_dict, strict). */
CTORCH_API ct_status ct_module_load_state_dict(ct_module *m, const ct_state_dict *sd, bool strict,
                                               ct_incompatible_keys *keys);

/* ---- layers ------------------------------------------------------------------------- */
/* y = x @ weight^T + bias. weight (out_features, in_features) and bias (out_features) from
   U(-1/sqrt(in_features), 1/sqrt(in_features)) (kaiming_uniform_ with a = sqrt(5)).
   Shapes: input (*, in_features) -> (*, out_features). Errors: CT_ERR_VALUE for sizes < 0.
   Mirrors: torch.nn.Linear(in_features, out_features, bias). */
CTORCH_API ct_module *ct_linear_new(int64_t in_features, int64_t out_features, bool bias);
/* The typed forward of a ct_linear_new module (no hooks). Errors: CT_ERR_VALUE when m is not
   a Linear; as ct_linear. Mirrors: torch.nn.Linear.forward. */
CTORCH_API ct_tensor *ct_linear_forward(ct_module *m, const ct_tensor *input);
/* Chains its children's forwards in order. Mirrors: torch.nn.Sequential. */
CTORCH_API ct_module *ct_sequential_new(void);
/* Appends child (ownership moves to seq); named "0", "1", ... Returns seq. Mirrors:
   Sequential.append. */
CTORCH_API ct_module *ct_sequential_append(ct_module *seq, ct_module *child);
/* Flattens dims start_dim..end_dim (nn.Flatten's defaults are 1 and -1).
   Mirrors: torch.nn.Flatten. */
CTORCH_API ct_module *ct_flatten_new(int64_t start_dim, int64_t end_dim);
/* Mirrors: torch.nn.ReLU. */
CTORCH_API ct_module *ct_relu_new(void);
/* Mirrors: torch.nn.Identity. */
CTORCH_API ct_module *ct_identity_new(void);
/* Mirrors: torch.nn.Sigmoid / torch.nn.Tanh. */
CTORCH_API ct_module *ct_sigmoid_new(void);
CTORCH_API ct_module *ct_tanh_new(void);
