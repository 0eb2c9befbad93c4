/* core/rng.h - random number generation (torch.Generator, torch.random).
 *
 * The CPU engine is mt19937 seeded as PyTorch's CPU generator, and every sampler follows
 * PyTorch's CPU kernel draw for draw, so a seed gives bit-identical values to
 * torch.manual_seed(seed) followed by the same calls: rand/uniform_, randn/normal_ (any mean
 * and std), randint (any range, up to 2^64 - 1 wide), randperm (any n), bernoulli_ and
 * random_. Non-contiguous tensors are filled in memory order, as PyTorch's TensorIterator
 * does. The float32 normal_ of 16 or more contiguous elements reproduces the AVX2 kernel that
 * x86-64 builds of PyTorch run (on AVX2 and AVX-512 CPUs alike); PyTorch builds without it
 * (ARM, or ATEN_CPU_CAPABILITY=default) compute those values with libm and differ in the last
 * bits. float64 normal_ uses the C library's log, sin and cos as PyTorch does, so it matches a
 * PyTorch running on the same C library. Results do not depend on compiler flags.
 * A generator argument may be NULL: the default generator is used.
 * Thread safety: each call holds its generator's lock while it draws (PyTorch's
 * CPUGeneratorImpl::mutex_), so generators, the default one included, may be shared between
 * threads: every call's draws stay consecutive in the stream, and threads that share a
 * generator get an interleaving of whole calls that depends on scheduling. Seed a generator
 * per thread for reproducible multi-threaded streams.
 */
typedef struct ct_generator ct_generator;

/* A new generator seeded with 67280421310721 (PyTorch's default seed); free with
   ct_generator_free. Mirrors: torch.Generator(). */
CTORCH_API ct_generator *ct_generator_new(void);
/* NULL is a no-op. */
CTORCH_API void ct_generator_free(ct_generator *g);
/* Reseeds g (NULL: the default generator). Mirrors: Generator.manual_seed. */
CTORCH_API void ct_generator_manual_seed(ct_generator *g, uint64_t seed);
/* The seed last set on g. Mirrors: Generator.initial_seed. */
CTORCH_API uint64_t ct_generator_initial_seed(const ct_generator *g);
/* The process-wide default CPU generator (borrowed). Mirrors: torch.default_generator. */
CTORCH_API ct_generator *ct_default_generator(void);
/* Seeds the default generator. Mirrors: torch.manual_seed. */
CTORCH_API void ct_manual_seed(uint64_t seed);

/* Uniform on [0, 1). Float dtypes only. Mirrors: torch.rand. */
CTORCH_API ct_tensor *ct_rand(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g);
/* Standard normal. Float dtypes only. Mirrors: torch.randn. */
CTORCH_API ct_tensor *ct_randn(const int64_t *sizes, int ndim, ct_dtype dtype, ct_generator *g);
/* Integers uniform in [low, high) (dtype DEFAULT means int64; any dtype). Errors: CT_ERR_VALUE
   "random_ expects 'from' to be less than 'to', but got from=5 >= to=5", or "from is out
   of bounds for signed char" when an integer dtype cannot hold low or high - 1. For float
   dtypes, bounds beyond 2^24 (float32) or 2^53 (float64) move inward to representable values
   as PyTorch's do. Mirrors: torch.randint. */
CTORCH_API ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim,
                                 ct_dtype dtype, ct_generator *g);
/* A random permutation of 0..n-1 (int64). Mirrors: torch.randperm. */
CTORCH_API ct_tensor *ct_randperm(int64_t n, ct_generator *g);
/* Same shape, dtype and device as t. Mirrors: torch.rand_like / torch.randn_like. */
CTORCH_API ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g);
CTORCH_API ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g);
/* Fills self in place from U(from, to). Errors: CT_ERR_VALUE when from > to. Mirrors:
   Tensor.uniform_. */
CTORCH_API ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g);
/* Fills self in place from N(mean, std^2). Mirrors: Tensor.normal_. */
CTORCH_API ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g);
/* Draws 0/1 with probability p into self's dtype. Mirrors: Tensor.bernoulli_(p). */
CTORCH_API ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g);
/* A tensor of input's shape and dtype (contiguous) of 0/1 draws, 1 with probability input[i],
   bit-identical to torch.bernoulli(input, generator=g) on the CPU generator: one draw per
   element in row-major order, of 24 random bits for float32 and 53 for float64 (g NULL: the
   default generator). Gradient: zeros. Errors: CT_ERR_VALUE "Expected p_in >= 0 && p_in <= 1
   to be true, but got false." for a probability outside [0, 1] or NaN (the draws before it
   are spent, as in PyTorch); CT_ERR_DTYPE "\"bernoulli\" not implemented for 'Long'" for
   integer input. Mirrors: torch.bernoulli(input). */
CTORCH_API ct_tensor *ct_bernoulli(const ct_tensor *input, ct_generator *g);
/* A tensor of input's shape and dtype (contiguous) of Poisson draws with rates input[i],
   bit-identical to torch.poisson(input, generator=g) on the CPU generator: per element in
   row-major order, PyTorch's sample_poisson on the rate as a double (rate >= 10: Hoermann's
   transformed rejection, two 53-bit uniforms a try; 0 < rate < 10: uniforms multiplied until
   the product falls to exp(-rate); 0: no draw), cast to input's dtype (g NULL: the default
   generator). An infinite rate gives -2^63, as PyTorch on x86. Gradient: zeros.
   Errors: CT_ERR_VALUE "invalid Poisson rate, expected rate to be non-negative" for a
   negative or NaN rate (the draws before it are spent, as in PyTorch); CT_ERR_DTYPE
   "\"poisson\" not implemented for 'Long'" for integer input. Mirrors: torch.poisson(input). */
CTORCH_API ct_tensor *ct_poisson(const ct_tensor *input, ct_generator *g);
/* Fills self in place with integers uniform on [0, 2^63 - 1] (int64), [0, max] (narrower
   integers), {0, 1} (bool), [0, 2^24] (float32) or [0, 2^53] (float64), any dtype.
   Returns self; NULL + error for a NULL, non-CPU or grad-requiring leaf tensor.
   Mirrors: Tensor.random_() without from/to. */
CTORCH_API ct_tensor *ct_random_(ct_tensor *self, ct_generator *g);
/* Fill self in place, one double per element in memory order cast to self's dtype, as
   PyTorch's CPU kernels (bit-identical): exponential_ -log1p(-u) / lambd (lambd > 0),
   cauchy_ median + sigma * tan(pi * (u - 0.5)) (sigma > 0), log_normal_ exp(N(mean, std^2))
   (std > 0), geometric_ ceil(log(u) / log1p(-p)) (0 < p < 1; any dtype but bool), u uniform
   on [0, 1) from 53 random bits. Returns self. Errors: CT_ERR_VALUE "exponential_ expects
   lambda > 0.0, but found lambda=0" (and the same for sigma, std, "geometric_ expects p to be
   in (0, 1), but got p=1"); CT_ERR_DTYPE "Exponential distribution is a continuous
   probability distribution. dtype must be a floating point but you specified Long" for
   integer self; CT_ERR_AUTOGRAD for a leaf that requires grad. Mirrors: Tensor.exponential_,
   Tensor.cauchy_, Tensor.log_normal_, Tensor.geometric_. */
CTORCH_API ct_tensor *ct_exponential_(ct_tensor *self, double lambd, ct_generator *g);
CTORCH_API ct_tensor *ct_cauchy_(ct_tensor *self, double median, double sigma, ct_generator *g);
CTORCH_API ct_tensor *ct_log_normal_(ct_tensor *self, double mean, double std, ct_generator *g);
CTORCH_API ct_tensor *ct_geometric_(ct_tensor *self, double p, ct_generator *g);
/* Normal draws with per-element mean and std (broadcast together), in mean's dtype (floating
   point), as PyTorch computes them: standard normal draws (normal_(0, 1)) multiplied by std,
   then mean added. A 0-dim mean or std gives torch.normal(tensor, float)'s shape. Gradient:
   zeros for both (PyTorch's NormalBackward3). Errors: CT_ERR_VALUE "normal expects all
   elements of std >= 0.0"; CT_ERR_SHAPE when mean and std do not broadcast; CT_ERR_DTYPE for
   an integer mean. Mirrors: torch.normal(mean, std, generator=g). */
CTORCH_API ct_tensor *ct_normal(const ct_tensor *mean, const ct_tensor *std, ct_generator *g);
/* num_samples category indices per row of input (1-D (C,) or 2-D (R, C) of non-negative
   weights, floating point, not necessarily summing to 1): int64 (num_samples,) or
   (R, num_samples), bit-identical to PyTorch's CPU kernel. With replacement (and more than
   one sample) each draw is one uniform double searched in the row's normalized cumulative
   weights; without replacement (or one sample) the indices of the num_samples largest of
   input / q with q ~ Exponential(1) drawn in input's shape and (dense) layout, largest first,
   equal values in the order of PyTorch's CPU topk (libstdc++'s nth_element). Errors:
   CT_ERR_VALUE "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
   "cannot sample n_sample <= 0 samples", "probability tensor contains either `inf`, `nan`
   or element < 0" (without replacement), "invalid multinomial distribution (encountering
   probability entry < 0)" / "(... = infinity or NaN)" (with), "invalid multinomial
   distribution (sum of probabilities <= 0)"; CT_ERR_SHAPE "prob_dist must be 1 or 2 dim"; CT_ERR_DTYPE for integer input.
   Mirrors: torch.multinomial(input, num_samples, replacement=False, generator=g). */
CTORCH_API ct_tensor *ct_multinomial(const ct_tensor *input, int64_t num_samples,
                                     bool replacement, ct_generator *g);
/* Integers uniform in [low, high) of t's shape, dtype and device, drawn as ct_randint.
   Errors: as ct_randint. Mirrors: torch.randint_like(t, low, high). */
CTORCH_API ct_tensor *ct_randint_like(const ct_tensor *t, int64_t low, int64_t high,
                                      ct_generator *g);

/* The default generator's seed. Mirrors: torch.initial_seed. */
CTORCH_API uint64_t ct_initial_seed(void);
/* Seeds the default generator with 64 bits of operating-system entropy (/dev/urandom; the
   clock without it) and returns the seed. Mirrors: torch.seed. */
CTORCH_API uint64_t ct_seed(void);
/* Bytes of torch.get_rng_state(): PyTorch's CPUGeneratorImplState layout of a 64-bit machine. */
#define CT_RNG_STATE_SIZE 5056
/* The default generator's state as a new uint8 tensor of CT_RNG_STATE_SIZE bytes, laid out as
   PyTorch's, so states move between ctorch and PyTorch (torch.get_rng_state().numpy()).
   Mirrors: torch.get_rng_state. */
CTORCH_API ct_tensor *ct_get_rng_state(void);
/* Restores the default generator from a state of ct_get_rng_state or PyTorch (5056 bytes, or
   the legacy 5048). Errors: CT_ERR_DTYPE for a tensor that is not contiguous uint8;
   CT_ERR_VALUE "Expected either a CPUGeneratorImplStateLegacy of size 5048 or a
   CPUGeneratorImplState of size 5056 but found the input RNG state size to be 7", or a
   corrupted position. Mirrors: torch.set_rng_state. */
CTORCH_API ct_status ct_set_rng_state(const ct_tensor *state);
/* Saves the default generator's stream; ct_fork_rng_end restores it, so draws in between
   leave no trace. Nests up to 16 deep (process-wide: pair them on one thread). Errors:
   CT_ERR_STATE past 16, or for an end without a begin. Mirrors: torch.random.fork_rng()
   (CPU only: ctorch_cuda.h forks the CUDA generators). */
CTORCH_API ct_status ct_fork_rng_begin(void);
CTORCH_API ct_status ct_fork_rng_end(void);
/* Deterministic mode. Every ctorch kernel is deterministic (results identical for any
   thread count), so no op raises PyTorch's "does not have a deterministic implementation"
   error; the mode makes ct_empty and the other uninitialized factories fill their memory
   (NaN for floating point, the largest value for integers), as PyTorch's
   fill_uninitialized_memory does. Mirrors: torch.use_deterministic_algorithms(mode,
   warn_only), torch.are_deterministic_algorithms_enabled,
   torch.is_deterministic_algorithms_warn_only_enabled. */
CTORCH_API void ct_use_deterministic_algorithms(bool mode, bool warn_only);
CTORCH_API bool ct_are_deterministic_algorithms_enabled(void);
CTORCH_API bool ct_is_deterministic_algorithms_warn_only_enabled(void);
