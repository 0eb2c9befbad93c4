/* ops/linalg.h - matrix products on the packed GEMM (ops/gemm.c) or cblas.
 *
 * Dtypes: float32, float64, float16/bfloat16 (float32 accumulation, rounded once; bfloat16
 * mm, addmm, linear and bmm run AMX or AVX512-BF16 kernels where the CPU has them, found at
 * run time, ops/gemm_lowp.c: like PyTorch's, their last bits differ between CPUs with AMX,
 * AVX512-BF16 or neither) and the integer dtypes uint8, int8, int16, int32, int64 (both
 * operands the same dtype; the result has it). Integer
 * products are PyTorch's CPU integer GEMM: sums and products wrap modulo 2^bits (C++ integer
 * arithmetic as PyTorch's, without its undefined behaviour), no autograd. bool is rejected
 * as PyTorch's kernels do: CT_ERR_DTYPE "\"addmm_impl_cpu_\" not implemented for 'Bool'"
 * ("bmm" for ct_bmm, "addmv_impl_cpu" for ct_mv, "dot" for ct_dot and 1-D ct_matmul).
 * Results are new tensors owned by the current scope. Determinism: bit-exact across runs and
 * thread counts for a given build (each output tile is computed by one thread in a fixed
 * order of K blocks; integer results are exact modulo 2^bits).
 */

/* Product with PyTorch's rules: 1-D @ 1-D -> dot (0-D); 2-D @ 2-D -> mm; 1-D @ 2-D and
   2-D @ 1-D -> vector; N-D -> batched with broadcast batch dims.
   Errors: CT_ERR_SHAPE "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
   "size mismatch, got input (2), mat (2x3), vec (4)", "inconsistent tensor size, expected
   tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements
   respectively"; CT_ERR_DTYPE "expected m1 and m2 to have the same dtype, but got: float
   != double" (integer dtypes by their C++ names: "long int != float"). Mirrors:
   torch.matmul. */
CTORCH_API ct_tensor *ct_matmul(const ct_tensor *input, const ct_tensor *other);
/* (n, m) @ (m, p) -> (n, p), no broadcasting. Mirrors: torch.mm. */
CTORCH_API ct_tensor *ct_mm(const ct_tensor *input, const ct_tensor *mat2);
/* (b, n, m) @ (b, m, p) -> (b, n, p). Error: "Expected size for first two dimensions of batch2
   tensor to be: [b, m] but got: [b2, m2]." Mirrors: torch.bmm. */
CTORCH_API ct_tensor *ct_bmm(const ct_tensor *input, const ct_tensor *mat2);
/* beta * input + alpha * (mat1 @ mat2); input broadcasts to (n, p). Integer dtypes take beta
   and alpha as PyTorch's Scalar::to<T>: truncated toward zero and in T's range (an integral
   value down to -255 for uint8), else CT_ERR_VALUE "value cannot be converted to type int8_t
   without overflow" (also for ct_baddbmm, ct_addbmm, ct_addmv). Mirrors: torch.addmm. */
CTORCH_API ct_tensor *ct_addmm(const ct_tensor *input, const ct_tensor *mat1, const ct_tensor *mat2,
                               double beta, double alpha);
/* (n, m) @ (m) -> (n). Mirrors: torch.mv. */
CTORCH_API ct_tensor *ct_mv(const ct_tensor *input, const ct_tensor *vec);
/* Dot product of two 1-D tensors (0-D). Mirrors: torch.dot. */
CTORCH_API ct_tensor *ct_dot(const ct_tensor *input, const ct_tensor *other);
/* y = x @ weight^T + bias. Shapes: input (*, in_features), weight (out_features,
   in_features), bias (out_features) or NULL; output (*, out_features).
   Mirrors: torch.nn.functional.linear. */
CTORCH_API ct_tensor *ct_linear(const ct_tensor *input, const ct_tensor *weight,
                                const ct_tensor *bias);

/* ---- issue 7, linalg T2: products with accumulation, contractions, matrix functions ----
 * Dtypes: the GEMM-backed ops (baddbmm, addbmm, addmv, inner, vdot, einsum of two or more
 * operands, tensordot, multi_dot, matrix_power with n >= 2) take the dtypes of ct_mm, integers
 * included (wrapping, as PyTorch's CPU), and reject bool with PyTorch's kernel's words:
 * CT_ERR_DTYPE "\"bmm\" not implemented for 'Bool'" (einsum), "\"baddbmm\" ...", "\"dot\" ..."
 * (vdot), "\"addmv_impl_cpu\" ..." (addmv), "\"addmm_impl_cpu_\" ..." (the others); matrix_exp
 * takes floats only; outer, addr, kron, trace and cross are pointwise or reductions and take
 * every numeric dtype PyTorch takes. Results are
 * new tensors owned by the current scope. Determinism: as the GEMM (bit-exact for any thread
 * count). */

/* beta * input + alpha * (batch1 @ batch2), per batch. Shapes: batch1 (b, n, m), batch2
   (b, m, p), input broadcastable to (b, n, p); output (b, n, p). beta == 0 ignores input's
   values (NaN and inf included), as PyTorch. Gradient: BaddbmmBackward0. PyTorch's defaults
   are beta = alpha = 1. Errors: CT_ERR_SHAPE "batch1 must be a 3D tensor", "Expected size for
   first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].", "The expanded size
   of the tensor (5) must match the existing size (6) at non-singleton dimension 2.  Target
   sizes: [2, 3, 5].  Tensor sizes: [2, 3, 6]"; CT_ERR_DTYPE "Input dtypes must be the same,
   got: input double, batch1: float, batch2: float", "expected scalar type Float but found
   Double", "\"baddbmm\" not implemented for 'Bool'". Mirrors: torch.baddbmm. */
CTORCH_API ct_tensor *ct_baddbmm(const ct_tensor *input, const ct_tensor *batch1,
                                 const ct_tensor *batch2, double beta, double alpha);
/* beta * input + alpha * sum_b batch1[b] @ batch2[b]. Shapes: batch1 (b, n, m), batch2
   (b, m, p), input broadcastable to (n, p); output (n, p) (b == 0: beta * input). beta == 0
   ignores input's values. Gradient: AddbmmBackward0. Errors: CT_ERR_SHAPE "batch1 and batch2
   must have same number of batches, got 2 and 3", "Incompatible matrix sizes for bmm (3x4 and
   5x5)", the expand error of ct_baddbmm; CT_ERR_DTYPE "self and mat2 must have the same dtype,
   but got Double and Float". Mirrors: torch.addbmm. */
CTORCH_API ct_tensor *ct_addbmm(const ct_tensor *input, const ct_tensor *batch1,
                                const ct_tensor *batch2, double beta, double alpha);
/* beta * input + alpha * (mat @ vec). Shapes: mat (n, m), vec (m), input (n), (1) or 0-D;
   output (n). beta == 0 ignores input's values. Gradient: AddmvBackward0. Errors:
   CT_ERR_SHAPE "vector + matrix @ vector expected, got 1, 1, 1", "size mismatch, got input
   (3), mat (3x4), vec (5)"; CT_ERR_DTYPE "addmv input tensors must have the same dtype, but
   got Float, Float, and Double". Mirrors: torch.addmv. */
CTORCH_API ct_tensor *ct_addmv(const ct_tensor *input, const ct_tensor *mat, const ct_tensor *vec,
                               double beta, double alpha);
/* beta * input + alpha * outer(vec1, vec2). Shapes: vec1 (n), vec2 (m), input broadcastable
   to (n, m); output (n, m). Dtypes: any numeric and bool, promoted over the three (bool:
   (beta && input) || (alpha && vec1 && vec2)); beta == 0 ignores input's values. Gradient:
   through the ops it is built from (beta == 0: none for input; PyTorch's is zeros). Errors:
   CT_ERR_SHAPE "addr: Expected 1-D argument vec1, but got 2-D", the expand error; CT_ERR_VALUE "For integral input tensors, argument beta
   must not be a floating point number." (a non-integral beta or alpha with an integer result).
   Mirrors: torch.addr. */
CTORCH_API ct_tensor *ct_addr(const ct_tensor *input, const ct_tensor *vec1,
                              const ct_tensor *vec2, double beta, double alpha);
/* Outer product: out[i][j] = input[i] * vec2[j]. Shapes: input (n), vec2 (m); output (n, m).
   Dtypes: any, promoted. Errors: CT_ERR_SHAPE "outer: Expected 1-D argument self, but got
   2-D". Mirrors: torch.outer (torch.ger). */
CTORCH_API ct_tensor *ct_outer(const ct_tensor *input, const ct_tensor *vec2);
/* Sum over the last dimension of input * other: input (*a, k), other (*b, k) -> (*a, *b); a
   0-D operand multiplies. Errors: CT_ERR_SHAPE "inner() the last dimension must match on both
   input tensors but got shapes [3, 4] and [2, 5]"; CT_ERR_DTYPE "both inputs should have same
   dtype". Mirrors: torch.inner. */
CTORCH_API ct_tensor *ct_inner(const ct_tensor *input, const ct_tensor *other);
/* Dot product of two 1-D tensors of one dtype, the first conjugated (real dtypes: ct_dot);
   0-D result. Errors: CT_ERR_SHAPE "1D tensors expected, but got 2D and 1D tensors",
   "inconsistent tensor size, expected tensor [3] and src [5] to have the same number of
   elements, but got 3 and 5 elements respectively"; CT_ERR_DTYPE "dot : expected both vectors
   to have same dtype, but found Float and Double". Mirrors: torch.vdot. */
CTORCH_API ct_tensor *ct_vdot(const ct_tensor *input, const ct_tensor *other);
/* Einstein summation: equation "ij,jk->ik" over n operands of one dtype. Subscripts a-z and
   A-Z, spaces ignored, "..." for broadcast dimensions; a subscript repeated in an operand
   takes its diagonal; without "->" the output is the ellipsis dimensions then the subscripts
   seen once, in alphabetical order (A-Z before a-z); subscripts not in the output are summed;
   labelled dimensions of size 1 broadcast. Operands are contracted left to right, each pair
   with one ct_bmm, or ct_mul when it sums nothing (PyTorch's sumproduct_pair; PyTorch without
   opt_einsum), so bool operands work where nothing is summed. At most 8
   (CT_MAX_DIMS) distinct output and summed dimensions. Errors (CT_ERR_VALUE for the equation,
   CT_ERR_SHAPE for sizes), in PyTorch's words: "einsum(): fewer operands were provided than
   specified in the equation", "einsum(): invalid subscript given at index 1 in the equation
   string, subscripts must be in [a-zA-Z]", "einsum(): the number of subscripts in the
   equation (3) does not match the number of dimensions (2) for operand 0 and no ellipsis was
   given", "einsum(): output subscript l does not appear in the equation for any input
   operand", "einsum(): subscript j has size 3 for operand 1 which does not broadcast with
   previously seen size 4", ...; CT_ERR_DTYPE "expected scalar type Float but found Double".
   Mirrors: torch.einsum. */
CTORCH_API ct_tensor *ct_einsum(const char *equation, const ct_tensor *const *operands, int n);
/* Contracts dims_a of a with dims_b of b (na == nb pairs; a size-1 dimension broadcasts):
   output (free dims of a, free dims of b); the lists are never NULL (CT_ERR_NULL_ARG), also
   when empty (the outer product). torch.tensordot(a, b, dims=k) is dims_a = the last
   k dims of a, dims_b = the first k of b. Errors: CT_ERR_VALUE "both dimension lists should
   have same length"; CT_ERR_SHAPE "contracted dimensions need to match, but first has size 3
   in dim 0 and second has size 4 in dim 0", "dim 1 appears multiple times in the list of
   dims"; CT_ERR_DTYPE "both inputs should have same dtype"; CT_ERR_INDEX for a dim out of
   range. Mirrors: torch.tensordot (aten::tensordot). */
CTORCH_API ct_tensor *ct_tensordot(const ct_tensor *a, const ct_tensor *b, const int64_t *dims_a,
                                   int na, const int64_t *dims_b, int nb);
/* Kronecker product: input (a0, a1, ...) and other (b0, b1, ...), the shorter padded with
   leading 1s, give (a0*b0, a1*b1, ...). Any dtype, promoted. Operands of at most 4 dims
   (CT_MAX_DIMS / 2; CT_ERR_SHAPE beyond). Mirrors: torch.kron. */
CTORCH_API ct_tensor *ct_kron(const ct_tensor *input, const ct_tensor *other);
/* Sum of the main diagonal of a 2-D input (0-D; integer inputs give int64). Errors:
   CT_ERR_SHAPE "trace: expected a matrix, but got tensor with dim 3"; CT_ERR_DTYPE "\"trace\"
   not implemented for 'Bool'". Mirrors: torch.trace. */
CTORCH_API ct_tensor *ct_trace(const ct_tensor *input);
/* Cross product of 3-vectors along *dim (inputs of one dtype and the same number of dims,
   broadcast). dim NULL: torch.cross's default, the first dimension of input of size 3; pass
   -1 for torch.linalg.cross. Errors: CT_ERR_SHAPE "linalg.cross: inputs must have the same
   number of dimensions.", "linalg.cross: inputs dimension 1 must have length 3. Got 4 and 4",
   "no dimension of size 3 in input"; CT_ERR_DTYPE "expected scalar type Float but found
   Double"; CT_ERR_INDEX for dim. Mirrors: torch.cross, torch.linalg.cross. */
CTORCH_API ct_tensor *ct_cross(const ct_tensor *input, const ct_tensor *other, const int64_t *dim);
/* Product of n >= 2 matrices in the cheapest order (PyTorch's: cost p*q*r per product,
   dynamic programming for n >= 4). The first may be 1-D (a row), the last 1-D (a column),
   the others 2-D; the output drops the 1-D ends' dims. Errors: CT_ERR_VALUE "multi_dot():
   expected at least 2 tensors but got 1"; CT_ERR_SHAPE "multi_dot(): the first tensor must be
   1D or 2D but got 3D", "multi_dot(): tensor 1 must be 2D but got 1D", "multi_dot(): tensors 0
   and 1 with shapes [3, 4] and [5, 5] cannot be multiplied"; CT_ERR_DTYPE "multi_dot(): all
   tensors must have be the same dtype but tensor 0 is float and tensor 1 double".
   Mirrors: torch.linalg.multi_dot. */
CTORCH_API ct_tensor *ct_linalg_multi_dot(const ct_tensor *const *tensors, int n);
/* The precision of float32 matrix products: "highest" (the default), "high" or "medium".
   On the CPU it changes nothing (float32 GEMMs always accumulate in float32), as PyTorch's
   CPU; CUDA backends read it. Process-wide, not synchronized (set it before starting
   threads). Errors: CT_ERR_VALUE "low is not one of 'highest', 'high', or 'medium'; the
   current setFloat32MatmulPrecision call has no effect" (PyTorch warns instead).
   Mirrors: torch.set_float32_matmul_precision. */
CTORCH_API ct_status ct_set_float32_matmul_precision(const char *precision);
/* The current float32 matmul precision ("highest", "high" or "medium"; a static string).
   Mirrors: torch.get_float32_matmul_precision. */
CTORCH_API const char *ct_get_float32_matmul_precision(void);
/* A^n for square matrices A (*, m, m): n == 0 the identity (any dtype), 1 a copy, 2 and 3 by
   ct_matmul, larger n by binary powering (PyTorch's order of products); n < 0 the power -n
   of ct_linalg_inv(A) (float only). Errors: those of ct_linalg_inv for n < 0; CT_ERR_SHAPE
   "linalg.matrix_power: The input tensor A must have at least 2 dimensions.",
   "linalg.matrix_power: A must be batches of square matrices, but they are 3 by 4 matrices".
   Mirrors: torch.linalg.matrix_power. */
CTORCH_API ct_tensor *ct_linalg_matrix_power(const ct_tensor *A, int64_t n);
/* Matrix exponential of square float matrices A (*, m, m), PyTorch's algorithm (Bader,
   Blanes, Casas 2019: Taylor polynomials of degree 1, 2, 4, 8, 12 or 18 by the 1-norm for a
   single matrix, degree 18 with scaling and squaring for batches and large norms), so the
   numbers match. Gradient: LinalgMatrixExpBackward0, exp([[A^T, G], [0, A^T]]) top right
   block (differentiable again). Errors: CT_ERR_SHAPE as ct_linalg_matrix_power's with
   "linalg.matrix_exp"; CT_ERR_DTYPE "linalg.matrix_exp: Expected a floating point or complex
   tensor as input. Got Int". Mirrors: torch.linalg.matrix_exp. */
CTORCH_API ct_tensor *ct_linalg_matrix_exp(const ct_tensor *A);
