/* fuzz/fuzz.h - shared by the libFuzzer targets fuzz/fuzz_<reader>.c (make fuzz): each feeds
 * the input to one reader from memory; a crash, a sanitizer report or a leak is a finding.
 * Errors are expected (most inputs are hostile): a silent handler drops them.
 */
#include "../ctorch.h"

#include <stddef.h>
#include <stdint.h>

static void fuzz_silent(ct_status code, const char *message, void *user_data)
{
    (void)code;
    (void)message;
    (void)user_data;
}

/* Installs the silent handler and opens a scope for the reader's tensors. */
static void fuzz_begin(void)
{
    ct_set_error_handler(fuzz_silent, NULL);
    ct_scope_begin();
}

/* Frees the scope's tensors and forgets the error. */
static void fuzz_end(void)
{
    ct_scope_end();
    ct_error_clear();
}
