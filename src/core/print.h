/* core/print.h - tensors as text, in PyTorch's repr format (torch/_tensor_str.py).
 *
 * "tensor([[ 0.1000, -2.0000],\n        [ 3.0000,  4.0000]])": floats with `precision`
 * decimals, or "3." when every shown value is integral, or scientific notation ("1.0000e-05")
 * when the shown nonzero finite values span more than 1000x, exceed 1e8 or go below 1e-4
 * (PyTorch's _Formatter); columns aligned to the widest value; rows wrapped at `linewidth`;
 * past `threshold` elements only `edgeitems` items at each end of every dimension, with
 * "..."; suffixes ", dtype=torch.float64" (dtypes other than the default float dtype, int64
 * and bool), ", device='privateuseone:0'" (devices other than the default), ",
 * size=(0, 3)" (empty tensors that are not 1-D), ", grad_fn=<MulBackward0>" or ",
 * requires_grad=True".
 */

/* sci_mode of ct_printoptions. */
typedef enum ct_sci_mode {
    CT_SCI_MODE_AUTO = 0, /* PyTorch's None: chosen per tensor from its values */
    CT_SCI_MODE_OFF,      /* False: fixed-point always */
    CT_SCI_MODE_ON        /* True: scientific notation always */
} ct_sci_mode;

/* The print options (global, as PyTorch's). Read them with ct_get_printoptions, change
   fields, write them back with ct_set_printoptions.
   | field     | default | meaning                                                       |
   | precision | 4       | digits after the decimal point (0..64)                        |
   | threshold | 1000    | more elements than this are summarized (INFINITY: never)      |
   | edgeitems | 3       | items kept at each end of a summarized dimension (>= 0)       |
   | linewidth | 80      | characters per line before wrapping (>= 0)                    |
   | sci_mode  | AUTO    | scientific notation: chosen per tensor, off or on             | */
typedef struct ct_printoptions {
    int precision;
    double threshold;
    int edgeitems;
    int linewidth;
    ct_sci_mode sci_mode;
} ct_printoptions;

/* Sets the print options: first the profile, if not NULL ("default": precision 4,
   threshold 1000, edgeitems 3, linewidth 80; "short": precision 2, edgeitems 2; "full":
   threshold INFINITY), then every field of opts, if not NULL. As in PyTorch, sci_mode goes
   back to AUTO when opts is NULL. Returns CT_OK. Errors (nothing changed): CT_ERR_VALUE for
   an unknown profile (PyTorch ignores it), a field out of the ranges above or a NaN
   threshold. Thread safety: set options before printing from other threads.
   Mirrors: torch.set_printoptions. */
CTORCH_API ct_status ct_set_printoptions(const char *profile, const ct_printoptions *opts);
/* The current print options. Mirrors: torch._tensor_str.get_printoptions. */
CTORCH_API ct_printoptions ct_get_printoptions(void);

#ifndef CTORCH_NO_STDIO
/* Writes t's repr and a newline to f (print(t) in Python). A tensor on another device is
   copied to the CPU first. Errors: CT_ERR_NULL_ARG for a NULL t or f (nothing printed);
   CT_ERR_OOM. Mirrors: print(tensor). */
CTORCH_API void ct_print(const ct_tensor *t, FILE *f);
#endif
/* Writes t's repr into buf (at most n bytes, NUL-terminated, as snprintf) and returns its
   full length (excluding the NUL), so ct_to_string(t, NULL, 0) sizes the buffer (buf NULL:
   n is ignored, nothing written). A tensor on another device is copied to the CPU first.
   Errors: CT_ERR_NULL_ARG for a NULL t (returns 0, buf ""); the copy's errors.
   Mirrors: repr(tensor). */
CTORCH_API size_t ct_to_string(const ct_tensor *t, char *buf, size_t n);
