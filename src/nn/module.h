/* nn/module.h - modules (torch.nn.Module): parameters, buffers, submodules, train/eval.
 *
 * All modules share the ct_module type. A module owns its parameters (leaf tensors that
 * require grad), its buffers and its submodules; ct_module_free releases them all.
 * Parameters are created as float32 on the CPU with PyTorch's default initialization,
 * drawn from the default generator (so ct_manual_seed(s) followed by the same constructors
 * gives PyTorch's initial weights for torch.manual_seed(s)).
 * Names are dotted paths in registration order ("0.weight", "2.bias").
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
/* Runs the module's forward on input. Errors: as the module's ops; CT_ERR_NULL_ARG.
   Mirrors: Module.__call__. */
CTORCH_API ct_tensor *ct_module_forward(ct_module *m, const ct_tensor *input);
/* The module's type name ("Linear", "Sequential", ...). */
CTORCH_API const char *ct_module_name(const ct_module *m);
/* The user data given to ct_module_new. */
CTORCH_API void *ct_module_user(const ct_module *m);

/* Registers a parameter (the module takes a reference; it is marked requires_grad). Names
   must be unique within m and contain no '.'. Mirrors: Module.register_parameter. */
CTORCH_API ct_status ct_module_register_parameter(ct_module *m, const char *name, ct_tensor *param);
/* Registers a buffer (state that is not a parameter, e.g. running_mean). Mirrors:
   Module.register_buffer. */
CTORCH_API ct_status ct_module_register_buffer(ct_module *m, const char *name, ct_tensor *buffer);
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

/* ---- layers ------------------------------------------------------------------------- */
/* y = x @ weight^T + bias. weight (out_features, in_features) and bias (out_features) from
   U(-1/sqrt(in_features), 1/sqrt(in_features)) (kaiming_uniform_ with a = sqrt(5)).
   Shapes: input (*, in_features) -> (*, out_features). Errors: CT_ERR_VALUE for sizes < 0.
   Mirrors: torch.nn.Linear(in_features, out_features, bias). */
CTORCH_API ct_module *ct_linear_new(int64_t in_features, int64_t out_features, bool bias);
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
