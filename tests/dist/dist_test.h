/* tests/dist/dist_test.h - what test_dist.c and test_ddp.c share: the rank's failed-check
 * count, world size and rank, CHECK / CHECK_ERROR, and the silent error handler (tests look at
 * ct_error themselves). Included after ctorch.h and ctorch_dist.h. */
#include <stdio.h>
#include <string.h>

static int checks_failed, W, R; /* failed checks of the current test; world size; rank */

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "  rank %d: %s:%d: CHECK(%s)%s%s\n", R, __FILE__, __LINE__,     \
                    #cond, ct_error() ? " error: " : "", ct_error() ? ct_error() : "");     \
            checks_failed++;                                                                \
        }                                                                                   \
    } while (0)
/* The last call failed with code and a message containing text; clears the error. */
#define CHECK_ERROR(code, text)                                                             \
    do {                                                                                    \
        CHECK(ct_error_code() == (code) && ct_error() && strstr(ct_error(), (text)));       \
        ct_error_clear();                                                                   \
    } while (0)

static void silent(ct_status code, const char *message, void *user)
{
    (void)code;
    (void)message;
    (void)user;
}
