/* ops/scan.h - cumulative (scan) ops along one dim.
 *
 * Shapes: the result has the input's shape; element i along dim combines elements 0..i. A
 * 0-dim input is scanned as one element (dim -1 or 0). Dtypes: cumsum / cumprod of bool and
 * integers give int64 unless a dtype is asked for (CT_DTYPE_DEFAULT stands for PyTorch's
 * dtype=None); logcumsumexp needs a float input; cummax / cummin keep the input's dtype and
 * give int64 indices. Each line is scanned in order as PyTorch's CPU kernels do: float32 sums,
 * products and log-add-exps accumulate in double, int64 ones wrap on overflow; cummax /
 * cummin take the later element on ties and NaN propagates (its index is the latest NaN's).
 * Returns: new tensors owned by the current scope. Errors: CT_ERR_INDEX for a dim out of
 * range; CT_ERR_DTYPE for a dtype outside ct_dtype or a non-float logcumsumexp input.
 * Determinism: lines are independent, so results are the same for any thread count.
 */

/* Cumulative sum along dim, in dtype (CT_DTYPE_DEFAULT: the input's, int64 for bool and
   integers; the input is converted first). Gradient: the reversed cumulative sum of the
   gradient. Mirrors: torch.cumsum(input, dim, dtype=dtype). */
CTORCH_API ct_tensor *ct_cumsum(const ct_tensor *input, int64_t dim, ct_dtype dtype);
/* Cumulative product along dim, dtype as ct_cumsum. The gradient is exact with zeros in the
   input (PyTorch's cumprod_backward). Mirrors: torch.cumprod(input, dim, dtype=dtype). */
CTORCH_API ct_tensor *ct_cumprod(const ct_tensor *input, int64_t dim, ct_dtype dtype);
/* Running maximum / minimum along dim: values (the input's dtype) and the int64 index where
   each was found (either out pointer may be NULL). The gradient goes to those indices.
   Returns CT_OK or the error code. Mirrors: torch.cummax(input, dim) / torch.cummin. */
CTORCH_API ct_status ct_cummax(const ct_tensor *input, int64_t dim, ct_tensor **values,
                               ct_tensor **indices);
CTORCH_API ct_status ct_cummin(const ct_tensor *input, int64_t dim, ct_tensor **values,
                               ct_tensor **indices);
/* log(cumsum(exp(input))) along dim without overflow (float input). Error: CT_ERR_DTYPE for
   other dtypes ("\"logcumsumexp\" not implemented for 'Long'").
   Mirrors: torch.logcumsumexp(input, dim). */
CTORCH_API ct_tensor *ct_logcumsumexp(const ct_tensor *input, int64_t dim);
