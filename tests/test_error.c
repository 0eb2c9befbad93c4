/* tests/test_error.c - the first error is visible without a handler (issue 6): with no
 * handler installed ctorch prints each thread's first error to stderr once; any handler,
 * even a silent one, turns the print off.
 */
#define _POSIX_C_SOURCE 200809L /* dup, dup2, pread */
#include "test.h"

#include <stdlib.h>
#include <unistd.h>

/* Runs fn with stderr redirected into a temporary file; returns what it wrote (malloc'd). */
static char *capture_stderr(void (*fn)(void))
{
    FILE *tmp = tmpfile();
    if (!tmp) {
        return NULL;
    }
    fflush(stderr);
    int saved = dup(fileno(stderr));
    dup2(fileno(tmp), fileno(stderr));
    fn();
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);
    int fd = fileno(tmp);
    off_t n = lseek(fd, 0, SEEK_END);
    char *text = (char *)calloc((size_t)(n > 0 ? n : 0) + 1, 1);
    if (text && n > 0 && pread(fd, text, (size_t)n, 0) != (ssize_t)n) {
        text[0] = '\0';
    }
    fclose(tmp);
    return text;
}

/* The new user's mistake from the issue: int32 labels to cross-entropy, twice. */
static void cross_entropy_int32_labels(void)
{
    ct_scope_begin();
    int64_t xs[2] = {2, 3}, ts[1] = {2};
    ct_tensor *x = ct_zeros(xs, 2, CT_FLOAT32);
    ct_tensor *t = ct_zeros(ts, 1, CT_INT32);
    ct_cross_entropy(x, t, NULL);
    ct_cross_entropy(x, t, NULL); /* the error is pending: no second print */
    ct_scope_end();
}

static void cross_entropy_twice_with_clear(void)
{
    cross_entropy_int32_labels();
    ct_error_clear();
    cross_entropy_int32_labels();
}

static void test_first_error_printed_without_handler(void)
{
    ct_set_error_handler(NULL, NULL);
    char *text = capture_stderr(cross_entropy_int32_labels);
    ct_test_install_silent_handler();
    CHECK_ERROR(CT_ERR_DTYPE, "ct_cross_entropy");
    CHECK(text != NULL);
    const char *want = "ctorch error: ct_cross_entropy: expected scalar type Long but found Int\n";
    CHECK_MSG(text && strcmp(text, want) == 0, "stderr was '%s', want '%s'", text ? text : "",
              want);
    free(text);
}

static void test_first_error_printed_again_after_clear(void)
{
    ct_set_error_handler(NULL, NULL);
    char *text = capture_stderr(cross_entropy_twice_with_clear);
    ct_test_install_silent_handler();
    CHECK_ERROR(CT_ERR_DTYPE, "ct_cross_entropy");
    const char *line = "ctorch error: ct_cross_entropy: expected scalar type Long but found Int\n";
    size_t n = strlen(line);
    CHECK_MSG(text && strlen(text) == 2 * n && strncmp(text, line, n) == 0 &&
                  strcmp(text + n, line) == 0,
              "stderr was '%s'", text ? text : "");
    free(text);
}

static void test_silent_handler_turns_print_off(void)
{
    char *text = capture_stderr(cross_entropy_int32_labels); /* the runner's silent handler */
    CHECK_ERROR(CT_ERR_DTYPE, "ct_cross_entropy");
    CHECK_MSG(text && text[0] == '\0', "stderr was '%s', want nothing", text ? text : "");
    free(text);
}

void test_error(void)
{
    RUN(test_first_error_printed_without_handler);
    RUN(test_first_error_printed_again_after_clear);
    RUN(test_silent_handler_turns_print_off);
}
