/* bench/bench_dist.c - ct_dist_all_reduce's bus bandwidth beside Open MPI's own MPI_Allreduce,
 * float32 SUM, 1 KB to 256 MB, in the same run (`make dist-bench`: mpirun -np 2).
 *
 *     mpicc -std=c11 -O2 -march=native -pthread bench/bench_dist.c -lm -o build/bench_dist
 *     mpirun -np 2 ./build/bench_dist [max_bytes]
 *
 * For each size the two are timed alternately (a barrier before each call), the minimum of the
 * repeats kept; bus bandwidth = 2 (n - 1) / n * bytes / time, as nccl-tests report it.
 * Expected output: one line per size with both times, both bandwidths and their ratio.
 */
#define CTORCH_IMPLEMENTATION
#define CTORCH_DIST_IMPLEMENTATION
#include "../ctorch.h"
#include "../ctorch_dist.h"

#include <stdio.h>
#include <stdlib.h>

/* Seconds of one ctorch all_reduce of t (or, ct NULL, of MPI_Allreduce on buf). */
static double timed(ct_tensor *t, float *buf, int n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    if (t) {
        ct_dist_all_reduce(t, CT_REDUCE_SUM, NULL, NULL);
    } else {
        MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - start;
}

int main(int argc, char **argv)
{
    int64_t max_bytes = argc > 1 ? atoll(argv[1]) : INT64_C(256) << 20;
    if (ct_dist_init_process_group("mpi", NULL) != CT_OK) {
        return 1;
    }
    int rank = ct_dist_get_rank(NULL), world = ct_dist_get_world_size(NULL);
    if (rank == 0) {
        printf("all_reduce float32 SUM, %d processes: ctorch vs MPI_Allreduce (minimum of the "
               "repeats)\n%10s %12s %12s %12s %12s %8s\n", world, "bytes", "ct_us", "mpi_us",
               "ct_busGB/s", "mpi_busGB/s", "ct/mpi");
    }
    for (int64_t bytes = 1024; bytes <= max_bytes; bytes *= 4) {
        int64_t n = bytes / 4;
        ct_tensor *t = ct_ones(&n, 1, CT_FLOAT32);
        float *buf = (float *)malloc((size_t)bytes);
        for (int64_t i = 0; i < n; i++) {
            buf[i] = 1.0f;
        }
        int reps = bytes <= (INT64_C(1) << 20) ? 50 : bytes <= (INT64_C(16) << 20) ? 10 : 3;
        double best_ct = 1e30, best_mpi = 1e30;
        timed(t, buf, (int)n); /* warm-up of both */
        timed(NULL, buf, (int)n);
        for (int r = 0; r < reps; r++) {
            double a = timed(t, buf, (int)n), b = timed(NULL, buf, (int)n);
            best_ct = a < best_ct ? a : best_ct;
            best_mpi = b < best_mpi ? b : best_mpi;
        }
        /* both ranks agree on the slowest rank's minimum */
        double best[2] = {best_ct, best_mpi}, worst[2];
        MPI_Allreduce(best, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        double factor = 2.0 * (world - 1) / world * (double)bytes / 1e9;
        if (rank == 0) {
            printf("%10lld %12.1f %12.1f %12.2f %12.2f %8.2f\n", (long long)bytes,
                   worst[0] * 1e6, worst[1] * 1e6, factor / worst[0], factor / worst[1],
                   worst[0] / worst[1]);
        }
        ct_free(t);
        free(buf);
    }
    ct_dist_destroy_process_group(NULL);
    return ct_error() ? 1 : 0;
}
