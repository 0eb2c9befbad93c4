/* fuzz/fuzz_csv.c - libFuzzer target: ct_csv_load_buffer on arbitrary bytes (make fuzz). The
   first byte picks options (label column "a" or none, float64, missing values as errors, no
   header, ';' as delimiter) so that every path of the reader is reached. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ct_csv_opts o = ct_csv_defaults();
    const char *ints[1] = {"b"};
    if (size > 0) {
        uint8_t k = data[0];
        o.label = k & 1 ? "a" : NULL;
        o.dtype = k & 2 ? CT_FLOAT64 : CT_FLOAT32;
        o.missing = k & 4 ? CT_CSV_MISSING_ERROR : CT_CSV_MISSING_NAN;
        o.header = !(k & 8);
        o.delimiter = k & 16 ? ';' : ',';
        o.int64_columns = ints;
        o.num_int64_columns = k & 32 ? 1 : 0;
        data++;
        size--;
    }
    fuzz_begin();
    ct_csv_free(ct_csv_load_buffer(data, size, &o));
    fuzz_end();
    return 0;
}
