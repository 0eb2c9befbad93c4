/* fuzz/fuzz_npz.c - libFuzzer target: ct_npz_load_buffer on arbitrary bytes (make fuzz). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_begin();
    ct_state_dict_free(ct_npz_load_buffer(data, size));
    fuzz_end();
    return 0;
}
