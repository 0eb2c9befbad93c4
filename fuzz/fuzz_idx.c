/* fuzz/fuzz_idx.c - libFuzzer target: ct_idx_load_buffer on arbitrary bytes (make fuzz). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_begin();
    (void)ct_idx_load_buffer(data, size);
    fuzz_end();
    return 0;
}
