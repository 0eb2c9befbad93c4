/* ops/decomp.h - torch.linalg's decompositions (LU, Cholesky, QR, symmetric eigen, SVD) and
 * what is built on them: det, slogdet, logdet, inv, solve, solve_triangular, matrix_norm,
 * norm.
 *
 * Shapes: A (*, m, n), * any batch dims: every matrix of the batch is independent (the batch
 * runs on the thread pool). Dtypes: float32 and float64, results in the input's dtype; other
 * dtypes fail with CT_ERR_DTYPE "linalg.inv: Expected a floating point or complex tensor as
 * input. Got Long". Results are new tensors owned by the current scope; a function with
 * several results returns the first and writes the others to out-pointers (each may be NULL:
 * that result is dropped). Gradients as PyTorch's derivatives.yaml, written with ctorch ops.
 * Backends: OpenBLAS's LAPACK (getrf, getrs, potrf, geqrf, orgqr, syevd, gesdd) when built with
 * CTORCH_OPENBLAS or CTORCH_LAPACK (link -lopenblas), else portable C that computes in float64
 * (blocked LU with the GEMM, Cholesky, Householder QR, Householder tridiagonalization +
 * implicit QL, QR + one-sided Jacobi SVD). Determinism: bit-exact across thread counts for a
 * given build; the two backends differ in rounding and in the signs of eigenvectors and
 * singular vectors (which are defined up to sign, as in PyTorch).
 */

/* Determinant. Shapes: A (*, n, n) -> (*). Gradient: det * A^-T (A must be invertible there).
   Errors: CT_ERR_SHAPE "linalg.det: A must be batches of square matrices, but they are 2 by 3
   matrices", "linalg.det: The input tensor A must have at least 2 dimensions."; CT_ERR_DTYPE.
   Mirrors: torch.linalg.det. */
CTORCH_API ct_tensor *ct_linalg_det(const ct_tensor *A);
/* Sign (-1, 0 or 1) and log |det| of A (*, n, n) -> (*) each (a singular A: sign 0,
   logabsdet -inf). Returns sign; logabsdet through the out-pointer (may be NULL). Gradient
   of logabsdet: A^-T; sign has none. Errors as ct_linalg_det. Mirrors: torch.linalg.slogdet. */
CTORCH_API ct_tensor *ct_linalg_slogdet(const ct_tensor *A, ct_tensor **logabsdet);
/* log det A (*, n, n) -> (*): NaN for a negative determinant, -inf for a singular A.
   Mirrors: torch.logdet. */
CTORCH_API ct_tensor *ct_logdet(const ct_tensor *A);
/* Inverse of A (*, n, n). Gradient: -A^-T grad A^-T. Errors: CT_ERR_VALUE "linalg.inv: The
   diagonal element 2 is zero, the inversion could not be completed because the input matrix is
   singular." (batched: "linalg.inv: (Batch element 1): The diagonal ..."); CT_ERR_SHAPE,
   CT_ERR_DTYPE as ct_linalg_det. Mirrors: torch.linalg.inv. */
CTORCH_API ct_tensor *ct_linalg_inv(const ct_tensor *A);
/* X with A X = B (left) or X A = B (!left). Shapes: A (*, n, n); B (*, n, k) -> X (*, n, k)
   (left; !left: B (*, k, n)), batch dims broadcast; B (n) or B (*, n) with A's batch shape is a
   vector (left only) -> X (*, n). Gradient: gB = solve(A^T, g), gA = -gB X^T (left). Errors:
   CT_ERR_VALUE "torch.linalg.solve: The solver failed because the input matrix is singular.";
   CT_ERR_SHAPE "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and
   4x2)"; CT_ERR_DTYPE "linalg.solve: Expected A and B to have the same dtype, but found A of
   type Float and B of type Double instead". Mirrors: torch.linalg.solve(A, B, left=left). */
CTORCH_API ct_tensor *ct_linalg_solve(const ct_tensor *A, const ct_tensor *B, bool left);
/* X with T X = B (left) or X T = B (!left), T the upper (upper) or lower triangle of A, with
   ones on its diagonal when unitriangular (the other elements of A are not read). Shapes:
   A (*, n, n), B (*, n, k) (left) or (*, k, n), batch dims broadcast. A zero on T's diagonal
   gives inf/NaN, as PyTorch (no check). Errors: CT_ERR_SHAPE, CT_ERR_DTYPE as ct_linalg_solve.
   Mirrors: torch.linalg.solve_triangular(A, B, upper=upper, left=left,
   unitriangular=unitriangular). */
CTORCH_API ct_tensor *ct_linalg_solve_triangular(const ct_tensor *A, const ct_tensor *B,
                                                 bool upper, bool left, bool unitriangular);
/* Cholesky factor of a symmetric positive-definite A (*, n, n): L lower with A = L L^T (only
   A's lower triangle is read), or with upper U = L^T (A's upper triangle read). Gradient:
   PyTorch's symmetric one (Murray 2016). Errors: CT_ERR_VALUE "linalg.cholesky: The
   factorization could not be completed because the input is not positive-definite (the leading
   minor of order 2 is not positive-definite)."; CT_ERR_SHAPE, CT_ERR_DTYPE.
   Mirrors: torch.linalg.cholesky(A, upper=upper). */
CTORCH_API ct_tensor *ct_linalg_cholesky(const ct_tensor *A, bool upper);

/* linalg.qr's mode: which factors, of which shapes (k = min(m, n)). */
typedef enum ct_qr_mode {
    CT_QR_REDUCED = 0, /* 'reduced' (PyTorch's default): Q (*, m, k), R (*, k, n) */
    CT_QR_COMPLETE,    /* 'complete': Q (*, m, m), R (*, m, n) */
    CT_QR_R            /* 'r': R (*, k, n) only; Q is an empty tensor (0) */
} ct_qr_mode;
/* QR decomposition A = Q R (Householder: Q orthonormal columns, R upper triangular, with
   LAPACK's signs, as PyTorch). Shapes: A (*, m, n). Returns Q; R through the out-pointer.
   Gradient as PyTorch (not for mode 'r', nor 'complete' with m > n: the backward fails with
   PyTorch's message). Errors: CT_ERR_VALUE for a mode out of range; CT_ERR_SHAPE, CT_ERR_DTYPE.
   Mirrors: torch.linalg.qr(A, mode). */
CTORCH_API ct_tensor *ct_linalg_qr(const ct_tensor *A, ct_qr_mode mode, ct_tensor **R);
/* Eigenvalues (ascending, (*, n)) and eigenvectors (columns, (*, n, n)) of the symmetric
   matrix whose lower (uplo 'L', PyTorch's default) or upper ('U') triangle is A's. Returns the
   eigenvalues; the eigenvectors through the out-pointer. Each eigenvector is defined up to
   sign. Gradient as PyTorch (symmetric; assumes distinct eigenvalues for the eigenvectors'
   part). Errors: CT_ERR_VALUE "linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got
   X"; CT_ERR_SHAPE, CT_ERR_DTYPE. Mirrors: torch.linalg.eigh(A, UPLO). */
CTORCH_API ct_tensor *ct_linalg_eigh(const ct_tensor *A, char uplo, ct_tensor **eigenvectors);
/* The eigenvalues of ct_linalg_eigh (*, n). Mirrors: torch.linalg.eigvalsh(A, UPLO). */
CTORCH_API ct_tensor *ct_linalg_eigvalsh(const ct_tensor *A, char uplo);
/* Singular value decomposition A = U diag(S) Vh, S (*, k) descending, k = min(m, n);
   full_matrices (PyTorch's default): U (*, m, m), Vh (*, n, n), else U (*, m, k), Vh (*, k, n).
   Returns U; S and Vh through out-pointers. Each pair of singular vectors is defined up to a
   common sign. Gradient as PyTorch (gauge-invariant: assumes distinct nonzero singular values
   for the vectors' part). Errors: CT_ERR_SHAPE, CT_ERR_DTYPE.
   Mirrors: torch.linalg.svd(A, full_matrices). */
CTORCH_API ct_tensor *ct_linalg_svd(const ct_tensor *A, bool full_matrices, ct_tensor **S,
                                    ct_tensor **Vh);
/* The singular values of A (*, m, n) -> (*, k), descending. Mirrors: torch.linalg.svdvals. */
CTORCH_API ct_tensor *ct_linalg_svdvals(const ct_tensor *A);
/* Matrix norm over the two dims dim (NULL: {-2, -1}) of A; ord (NULL: "fro") is PyTorch's,
   as text: "fro", "nuc", "inf", "-inf", "1", "-1", "2", "-2" (2/-2/nuc from the singular
   values). Shapes: A (*, m, n) -> (*), or with keepdim the two dims kept as 1. Errors:
   CT_ERR_VALUE "linalg.matrix_norm: Order 3 not supported."; CT_ERR_SHAPE "linalg.matrix_norm:
   dims must be different. Got (1, 1)", "linalg.matrix_norm: The input tensor A must have at
   least 2 dimensions."; CT_ERR_INDEX; CT_ERR_DTYPE.
   Mirrors: torch.linalg.matrix_norm(A, ord, dim, keepdim). */
CTORCH_API ct_tensor *ct_linalg_matrix_norm(const ct_tensor *A, const char *ord,
                                            const int64_t *dim, bool keepdim);
/* Vector or matrix norm as torch.linalg.norm: ord NULL (None) is the 2-norm of the elements
   over dims (n == 0: all); a numeric ord ("2", "0.5", "inf", ...) with one dim, or no dims and a
   1-D A, is ct_linalg_vector_norm's; "fro"/"nuc", or a numeric ord with two dims or no dims and
   a 2-D A, is ct_linalg_matrix_norm's. Errors: CT_ERR_SHAPE "linalg.norm: If dim is specified,
   it must be of length 1 or 2. Got [0, 1, 2]", "linalg.norm: If dim is not specified but ord
   is, the input must be 1D or 2D. Got 3D."; CT_ERR_VALUE "linalg.norm: Order abc not
   supported."; those of the vector and matrix norms.
   Mirrors: torch.linalg.norm(A, ord, dim, keepdim). */
CTORCH_API ct_tensor *ct_linalg_norm(const ct_tensor *A, const char *ord, const int64_t *dims,
                                     int n, bool keepdim);
