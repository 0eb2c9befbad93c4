/* core/debug.h - the CTORCH_DEBUG build: lifetime mistakes caught with a clear message.
 *
 * Build the implementation TU with -DCTORCH_DEBUG to catch what the release build cannot
 * see (slower; for development):
 *   - every tensor handle given to a public function is checked: a freed tensor (after
 *     ct_free, after the end of its scope, after ct_optimizer_zero_grad(set_to_none) for
 *     a .grad, after its module or optimizer was freed) or a pointer that is not a tensor
 *     ctorch made is rejected with CT_ERR_STATE and a message naming the op that created
 *     the tensor, e.g. "ct_item: tensor argument was freed (created by ct_nll_loss) ...";
 *   - freed memory is poisoned (all bits set: NaN in float32/float64, -1 in integers) and
 *     held in a bounded quarantine (256 MiB) instead of the cache, so a stale pointer reads
 *     NaN rather than plausible old values and its handle stays recognizable;
 *   - a double ct_free, or ct_free on a tensor the caller does not own (a module's
 *     parameter, a .grad, optimizer state, a tensor whose scope ended), is reported and
 *     ignored instead of corrupting the owner;
 *   - at exit, the tensors never freed are listed with the op that made them
 *     (ct_debug_report).
 */

#ifndef CTORCH_NO_STDIO
/* Writes the leak report of CTORCH_DEBUG builds to f: the number of live tensors and, per
   creating op, how many of them it made. Runs at exit on stderr when tensors are still live.
   Returns: the number of live tensors, or -1 when f is NULL (CT_ERR_NULL_ARG) or the build
   lacks CTORCH_DEBUG (CT_ERR_UNSUPPORTED). Thread safety: safe from any thread. */
CTORCH_API int64_t ct_debug_report(FILE *f);
#endif
