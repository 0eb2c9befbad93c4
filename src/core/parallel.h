/* core/parallel.h - intra-op thread settings (DESIGN §7).
 *
 * Intra-op work (large pointwise ops, reductions, GEMM) splits over ct_get_num_threads()
 * OpenMP threads when built with -fopenmp; otherwise everything runs serially.
 */

/* Sets the number of intra-op threads (n >= 1); takes precedence over the environment
   variables CTORCH_NUM_THREADS and OMP_NUM_THREADS. Returns CT_ERR_VALUE for n < 1.
   Mirrors: torch.set_num_threads. */
CTORCH_API ct_status ct_set_num_threads(int n);
/* The intra-op thread count: ct_set_num_threads's value, else CTORCH_NUM_THREADS, else
   OMP_NUM_THREADS, else the number of cores; 1 without OpenMP. Mirrors:
   torch.get_num_threads. */
CTORCH_API int ct_get_num_threads(void);
