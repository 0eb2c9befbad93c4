/* nn/distance.h - one-hot encoding, normalization, distances and the bilinear layer
 * (torch.nn.functional.one_hot, normalize, cosine_similarity, pairwise_distance, pdist,
 * bilinear; nn.CosineSimilarity, nn.PairwiseDistance, nn.Bilinear).
 *
 * Every op is a composite of ctorch's dispatched ops (norms, matmul, pointwise), written as
 * PyTorch's ATen or Python definition, so autograd comes from those ops (double backward
 * too) and results are bit-identical for any thread count. Float inputs (float32, float64;
 * float16/bfloat16 through the ops' float32 kernels); one_hot takes int64.
 * Returns: new tensors owned by the current scope; NULL after an error (NULL inputs
 * propagate).
 */

/* Encodes int64 class indices as one-hot vectors: out[..., k] = (input[...] == k).
   num_classes -1 infers max(input) + 1. Shapes: input (*) -> (*, num_classes). dtype: int64.
   Errors: CT_ERR_DTYPE "one_hot is only applicable to index tensor of type LongTensor.";
   CT_ERR_VALUE "Class values must be non-negative.", "Class values must be smaller than
   num_classes.", "Can not infer total number of classes from empty tensor." (empty input with
   num_classes <= 0). Mirrors: torch.nn.functional.one_hot(input, num_classes=-1). */
CTORCH_API ct_tensor *ct_one_hot(const ct_tensor *input, int64_t num_classes);

/* input / max(||input||_p along dim, eps) (PyTorch's defaults: p 2, dim 1, eps 1e-12).
   Shapes: input (*) -> the same. Errors: as ct_linalg_vector_norm (float input, a valid dim).
   Mirrors: torch.nn.functional.normalize(input, p, dim, eps). */
CTORCH_API ct_tensor *ct_normalize(const ct_tensor *input, double p, int64_t dim, double eps);

/* Cosine similarity along dim of x1 and x2 (broadcast), as PyTorch computes it since 2.0:
   sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps), dim), the norms clamped without
   gradient (PyTorch's no_grad clamp_min_ on a clone), so a zero vector gives 0 and a finite
   gradient. PyTorch's defaults: dim 1, eps 1e-8. Shapes: x1, x2 broadcast to (*) -> (*)
   without dim. dtypes: integer inputs are converted to the common dtype, which must be
   floating. Errors: CT_ERR_DTYPE "expected common dtype to be floating point, yet common
   dtype is Long"; CT_ERR_SHAPE when the shapes do not broadcast; CT_ERR_INDEX for dim.
   Mirrors: torch.nn.functional.cosine_similarity(x1, x2, dim, eps). */
CTORCH_API ct_tensor *ct_cosine_similarity(const ct_tensor *x1, const ct_tensor *x2, int64_t dim,
                                           double eps);

/* ||x1 - x2 + eps||_p over the last dim of the broadcast shape (PyTorch's defaults: p 2, eps
   1e-6, keepdim false). Shapes: x1, x2 broadcast to (*, D) -> (*) ((*, 1) with keepdim).
   Errors: as ct_sub and ct_linalg_vector_norm. Mirrors:
   torch.nn.functional.pairwise_distance(x1, x2, p, eps, keepdim). */
CTORCH_API ct_tensor *ct_pairwise_distance(const ct_tensor *x1, const ct_tensor *x2, double p,
                                           double eps, bool keepdim);

/* The p-norm distances between the rows of input, pair by pair: out[k] = ||input[i] -
   input[j]||_p for i < j in row-major order (the upper triangle of cdist(input, input)).
   PyTorch's default p is 2. Shapes: input (N, M) -> (N (N - 1) / 2). Memory: the pairs'
   differences, (N (N - 1) / 2, M) elements. Errors: CT_ERR_SHAPE "pdist only supports 2D
   tensors, got: 1D"; CT_ERR_VALUE "pdist only supports non-negative p values"; CT_ERR_DTYPE
   "pdist only supports floating-point dtypes", "\"pdist\" not implemented for 'BFloat16'"
   (float16: 'Half'; PyTorch's CPU kernel has neither, under autocast too).
   Mirrors: torch.nn.functional.pdist(input, p). */
CTORCH_API ct_tensor *ct_pdist(const ct_tensor *input, double p);

/* y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o] (one GEMM over
   the batch, then a product with input2 summed). bias may be NULL.
   Shapes: input1 (*, in1), input2 (*, in2), weight (out, in1, in2), bias (out) -> (*, out).
   Errors: CT_ERR_SHAPE "bilinear(): input dimensions do not match: got 2 and 3", "bilinear():
   input batch dimensions do not match at dim 0: got 5 and 6", "bilinear(): input1 size does
   not match weight size: got 3 but expected 2" (input2 likewise), "bilinear(): bias size does
   not match weight size: got 3 but expected 4", "number of dimensions must match" (weight not
   3-D). Mirrors: torch.nn.functional.bilinear(input1, input2, weight, bias). */
CTORCH_API ct_tensor *ct_bilinear(const ct_tensor *input1, const ct_tensor *input2,
                                  const ct_tensor *weight, const ct_tensor *bias);

/* ---- modules --------------------------------------------------------------------------------
 * Two-input modules: run them with their typed forwards (ct_module_forward with one input
 * fails with CT_ERR_VALUE). */

/* nn.Bilinear: parameters weight (out_features, in1_features, in2_features) and bias
   (out_features, when bias), float32, both from U(-1/sqrt(in1_features), 1/sqrt(in1_features))
   drawn in that order from the default generator (PyTorch's reset_parameters).
   Errors: CT_ERR_VALUE "in1_features must be > 0, but got (in1_features=0)"; CT_ERR_SHAPE
   "Trying to create tensor with negative dimension -1: [3, 2, -1]" for other negative sizes.
   Mirrors: torch.nn.Bilinear(in1_features, in2_features, out_features, bias=True). */
CTORCH_API ct_module *ct_bilinear_new(int64_t in1_features, int64_t in2_features,
                                      int64_t out_features, bool bias);
/* nn.CosineSimilarity (PyTorch's defaults: dim 1, eps 1e-8).
   Mirrors: torch.nn.CosineSimilarity(dim, eps). */
CTORCH_API ct_module *ct_cosine_similarity_new(int64_t dim, double eps);
/* nn.PairwiseDistance (PyTorch's defaults: p 2, eps 1e-6, keepdim false).
   Mirrors: torch.nn.PairwiseDistance(p, eps, keepdim). */
CTORCH_API ct_module *ct_pairwise_distance_new(double p, double eps, bool keepdim);
/* The typed forwards of the modules above: ct_bilinear / ct_cosine_similarity /
   ct_pairwise_distance with the module's parameters and options. Errors: CT_ERR_VALUE when m
   is not a module of that kind ("expected a Bilinear module, got Linear"); as the functions.
   Mirrors: Bilinear.forward, CosineSimilarity.forward, PairwiseDistance.forward. */
CTORCH_API ct_tensor *ct_bilinear_forward(ct_module *m, const ct_tensor *input1,
                                          const ct_tensor *input2);
CTORCH_API ct_tensor *ct_cosine_similarity_forward(ct_module *m, const ct_tensor *x1,
                                                   const ct_tensor *x2);
CTORCH_API ct_tensor *ct_pairwise_distance_forward(ct_module *m, const ct_tensor *x1,
                                                   const ct_tensor *x2);
