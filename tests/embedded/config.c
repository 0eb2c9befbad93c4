/* tests/embedded/config.c - one embedded configuration, compiled and run by make test-embedded
 * with any of -DCTORCH_NO_STDIO, -DCTORCH_NO_THREADS, -DCTORCH_NO_AUTOGRAD (gcc and clang, C
 * and C++). Exit status 0 when the build behaves as its configuration says:
 *   CTORCH_NO_STDIO     the interface includes no <stdio.h> (the recipe also checks that the
 *                       implementation calls no FILE function: snprintf is all it uses)
 *   CTORCH_NO_THREADS   one thread (the recipe also checks that no pthread symbol is linked)
 *   CTORCH_NO_AUTOGRAD  no tensor can require grad and backward fails, both with
 *                       CT_ERR_UNSUPPORTED; inference ops work
 * Without CTORCH_NO_AUTOGRAD it checks that a gradient is computed, so the program fails
 * in every configuration that does not do what it claims. */
#include "../../ctorch.h"
#if defined(CTORCH_NO_STDIO) && defined(EOF)
#error "CTORCH_NO_STDIO: ctorch.h's interface included <stdio.h>"
#endif
#define CTORCH_IMPLEMENTATION
#include "../../ctorch.h"

#include <string.h>

/* y = sum(x * w) for x = [1, 2, 3], w = [4, 5, 6]: 32, and dy/dw = x. */
static int check_ops_and_autograd(void)
{
    int bad = 0;
    ct_scope_begin();
    ct_tensor *x = ct_arange(1, 4, 1, CT_FLOAT32), *w = ct_arange(4, 7, 1, CT_FLOAT32);
    bad |= ct_item(ct_sum(ct_mul(x, w))) != 32.0;
    ct_tensor *r = ct_requires_grad_(w, true);
#ifdef CTORCH_NO_AUTOGRAD
    bad |= r != NULL || ct_error_code() != CT_ERR_UNSUPPORTED ||
           !strstr(ct_error(), "CTORCH_NO_AUTOGRAD");
    ct_error_clear();
    bad |= ct_backward(ct_sum(ct_mul(x, w)), NULL, false) != CT_ERR_UNSUPPORTED;
    ct_error_clear();
#else
    bad |= r != w || ct_backward(ct_sum(ct_mul(x, w)), NULL, false) != CT_OK;
    const ct_tensor *g = ct_grad(w);
    bad |= !g || ct_numel(g) != 3 || ((const float *)ct_data_ptr(g))[2] != 3.0f;
#endif
    ct_scope_end();
    return bad || ct_error() != NULL;
}

int main(void)
{
    int bad = check_ops_and_autograd();
#ifdef CTORCH_NO_THREADS
    bad |= ct_get_num_threads() != 1;
#endif
    return bad;
}
