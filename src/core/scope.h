/* core/scope.h - scopes: the lifetime of the tensors ops return (DESIGN §3).
 *
 * Every tensor an op returns belongs to the innermost open scope; ct_scope_end releases
 * them all. A training step is one scope, so nested expressions never leak:
 *     ct_scope_begin();
 *     ct_tensor *loss = ct_cross_entropy(ct_module_forward(model, x), y, NULL);
 *     ct_backward(loss, NULL, false);
 *     ct_scope_end();
 * Scopes are per thread and nest up to 64 deep.
 */

/* Opens a scope. Returns CT_ERR_STATE when 64 scopes are already open. */
CTORCH_API ct_status ct_scope_begin(void);
/* Releases every tensor created since the matching ct_scope_begin (memory is freed when no
   graph, module or .grad still refers to it). Invalidates: pointers to those tensors (keep
   one with ct_keep or ct_retain first). Returns CT_ERR_STATE when no scope is open. */
CTORCH_API ct_status ct_scope_end(void);
/* Moves t from its scope to the enclosing one (or to the caller, who then calls ct_free,
   when t's scope is the outermost). Returns t; NULL for NULL (CT_ERR_NULL_ARG unless an
   error is pending, so ct_keep(op(...)) passes a failed op's NULL through). */
CTORCH_API ct_tensor *ct_keep(ct_tensor *t);
/* Number of open scopes on this thread. */
CTORCH_API int ct_scope_depth(void);
