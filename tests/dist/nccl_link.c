/* tests/dist/nccl_link.c - ctorch_dist.h with its NCCL backend (CTORCH_DIST_NCCL) compiles and
 * links against NCCL and the CUDA runtime (`make dist-nccl`, run by CI; no GPU needed). It
 * prints NCCL's version and the number of GPUs, and fails unless the NCCL backend is built in.
 */
#define CTORCH_IMPLEMENTATION
#define CTORCH_DIST_IMPLEMENTATION
#define CTORCH_DIST_NCCL
#include "../../ctorch.h"
#include "../../ctorch_dist.h"

#include <stdio.h>

int main(void)
{
    int devices = 0;
    bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    printf("ctorch_dist.h with NCCL %d.%d.%d: linked; %d GPU(s)\n", NCCL_MAJOR, NCCL_MINOR,
           NCCL_PATCH, gpu ? devices : 0);
    return ct_dist_is_nccl_available() ? 0 : 1;
}
