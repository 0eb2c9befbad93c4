/* ops/linalg.h - matrix products on the packed GEMM (ops/gemm.c) or cblas.
 *
 * Dtypes: float32 and float64 (both operands the same dtype). Results are new tensors owned
 * by the current scope. Determinism: bit-exact across runs and thread counts for a given
 * build (each output tile is computed by one thread in a fixed order of K blocks).
 */

/* Product with PyTorch's rules: 1-D @ 1-D -> dot (0-D); 2-D @ 2-D -> mm; 1-D @ 2-D and
   2-D @ 1-D -> vector; N-D -> batched with broadcast batch dims.
   Errors: CT_ERR_SHAPE "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)",
   "size mismatch, got input (2), mat (2x3), vec (4)", "inconsistent tensor size, expected
   tensor [3] and src [4] to have the same number of elements, but got 3 and 4 elements
   respectively"; CT_ERR_DTYPE "expected m1 and m2 to have the same dtype, but got: float
   != double". Mirrors: torch.matmul. */
CTORCH_API ct_tensor *ct_matmul(const ct_tensor *input, const ct_tensor *other);
/* (n, m) @ (m, p) -> (n, p), no broadcasting. Mirrors: torch.mm. */
CTORCH_API ct_tensor *ct_mm(const ct_tensor *input, const ct_tensor *mat2);
/* (b, n, m) @ (b, m, p) -> (b, n, p). Error: "Expected size for first two dimensions of batch2
   tensor to be: [b, m] but got: [b2, m2]." Mirrors: torch.bmm. */
CTORCH_API ct_tensor *ct_bmm(const ct_tensor *input, const ct_tensor *mat2);
/* beta * input + alpha * (mat1 @ mat2); input broadcasts to (n, p). Mirrors: torch.addmm. */
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
