/* core/rng.h - random number generation (torch.Generator, torch.random).
 *
 * The CPU engine is mt19937 seeded as PyTorch's CPU generator, and the samplers follow
 * PyTorch's CPU algorithms, so a seed gives the same numbers as torch.manual_seed for
 * rand/uniform_, randint, randperm and randn/normal_ (to float rounding). A generator
 * argument may be NULL: the default generator is used.
 * Thread safety: a generator must not be used from two threads at once.
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
/* Integers uniform in [low, high) (dtype DEFAULT means int64). Errors: CT_ERR_VALUE
   "random_ expects 'from' to be less than 'to', but got from=5 >= to=5". Mirrors:
   torch.randint. */
CTORCH_API ct_tensor *ct_randint(int64_t low, int64_t high, const int64_t *sizes, int ndim,
                                 ct_dtype dtype, ct_generator *g);
/* A random permutation of 0..n-1 (int64). Mirrors: torch.randperm. */
CTORCH_API ct_tensor *ct_randperm(int64_t n, ct_generator *g);
/* Same shape and dtype as t. Mirrors: torch.rand_like / torch.randn_like. */
CTORCH_API ct_tensor *ct_rand_like(const ct_tensor *t, ct_generator *g);
CTORCH_API ct_tensor *ct_randn_like(const ct_tensor *t, ct_generator *g);
/* Fills self in place from U(from, to). Mirrors: Tensor.uniform_. */
CTORCH_API ct_tensor *ct_uniform_(ct_tensor *self, double from, double to, ct_generator *g);
/* Fills self in place from N(mean, std^2). Mirrors: Tensor.normal_. */
CTORCH_API ct_tensor *ct_normal_(ct_tensor *self, double mean, double std, ct_generator *g);
/* Draws 0/1 with probability p into self's dtype. Mirrors: Tensor.bernoulli_(p). */
CTORCH_API ct_tensor *ct_bernoulli_(ct_tensor *self, double p, ct_generator *g);
