/* autograd/gradcheck.h - compares autograd's gradients with finite differences. */

/* The function under test: builds its output from the inputs with ctorch ops (new tensor,
   owned by the current scope). */
typedef ct_tensor *(*ct_gradcheck_fn)(ct_tensor *const *inputs, int n, void *user);

/* Options of ct_gradcheck (PyTorch's defaults, designed for float64 inputs):
   field  default  meaning
   eps    1e-6     finite-difference step
   atol   1e-5     absolute tolerance
   rtol   1e-3     relative tolerance (of the numerical value) */
typedef struct ct_gradcheck_opts {
    double eps, atol, rtol;
} ct_gradcheck_opts;

/* PyTorch's gradcheck defaults. */
CTORCH_API ct_gradcheck_opts ct_gradcheck_defaults(void);
/* Checks, for every input that requires grad, the analytical Jacobian (one backward per
   output element) against central differences (f(x+eps) - f(x-eps)) / 2eps, element by
   element with |a - n| <= atol + rtol * |n|. Inputs should be float64. opts NULL means
   defaults. Returns true when they match; false with a CT_ERR_AUTOGRAD error naming the
   input, the output and input element indices and both values ("Jacobian mismatch for
   output 0 with respect to input 1, numerical:3.0 analytical:2.0 at (output 4, input 2)"),
   or the error fn raised. Mirrors: torch.autograd.gradcheck. */
CTORCH_API bool ct_gradcheck(ct_gradcheck_fn fn, ct_tensor *const *inputs, int n, void *user,
                             const ct_gradcheck_opts *opts);
