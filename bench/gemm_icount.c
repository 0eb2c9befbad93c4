/* bench/gemm_icount.c - the float32 GEMM whose instructions `make arm-icount` counts under qemu
 * (tools/arm_icount runs it built with and without CTORCH_NO_SIMD, i.e. the NEON and the
 * portable micro-kernels).
 * Usage: gemm_icount REPS
 * Computes C = A @ B (M, K) @ (K, N) REPS times on one thread (the difference between two
 * REPS counts is the instructions of REPS products alone), then addmm(C, A, B, 0.5, 2) once,
 * and prints "M N K HASH": HASH an FNV-1a hash of both results' bytes, equal between the two
 * builds when their results are bit-identical. M, N and K are not multiples of the register
 * tiles, so the edge tiles are in the hash too. Exit status 1 on an error.
 */
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"
#include <stdio.h>
#include <stdlib.h>

#define M 70
#define N 52
#define K 100

/* FNV-1a over n bytes, continuing from h */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211u;
    }
    return h;
}

/* a (rows, cols) float32 tensor of values in [-1, 1) from a linear congruential generator */
static ct_tensor *filled(int64_t rows, int64_t cols, uint32_t seed)
{
    float *v = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    if (!v) {
        return NULL;
    }
    for (int64_t i = 0; i < rows * cols; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
    int64_t sizes[2] = {rows, cols};
    ct_tensor *t = ct_tensor_from_data(v, CT_FLOAT32, sizes, 2);
    free(v);
    return t;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    ct_set_num_threads(1);
    ct_tensor *a = filled(M, K, 1u), *b = filled(K, N, 2u), *c = NULL, *d = NULL;
    for (int r = 0; r < reps; r++) {
        ct_release(c);
        c = ct_mm(a, b);
    }
    d = ct_addmm(c, a, b, 0.5, 2.0);
    if (!c || !d) {
        fprintf(stderr, "gemm_icount: %s\n", ct_error());
        return 1;
    }
    uint64_t h = fnv1a(14695981039346656037u, ct_data_ptr(c), M * N * sizeof(float));
    h = fnv1a(h, ct_data_ptr(d), M * N * sizeof(float));
    printf("%d %d %d %016llx\n", M, N, K, (unsigned long long)h);
    ct_release(a);
    ct_release(b);
    ct_release(c);
    ct_release(d);
    return 0;
}
