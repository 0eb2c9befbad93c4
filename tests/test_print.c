/* tests/test_print.c - ct_to_string / ct_print byte for byte against PyTorch's repr
 * (tools/gen_golden_print.py, tests/golden/print_golden.h): float/int/bool dtypes, fixed,
 * integer and scientific formats, nan/inf, 0-dim and empty tensors, summarization, wrapping,
 * suffixes, non-contiguous layouts and print options; then snprintf semantics, ct_print,
 * and the options' errors.
 */
#include "test.h"

#include <stdlib.h>

#include "golden/print_golden.h"

#define N_CASES ((int)(sizeof ct_print_cases / sizeof ct_print_cases[0]))

/* The case's tensor: its base from the values (or the pattern) in float64, cast to the
   dtype, then transposed or stepped, then made a leaf requiring grad or squared. */
static ct_tensor *case_tensor(const ct_print_case *c)
{
    int64_t n = ct_test_numel(c->sizes, c->ndim);
    double *v = (double *)malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t k = 0; k < n; k++) {
        const double *p = c->pattern;
        v[k] = c->values ? c->values[k]
                         : (double)((k * (int64_t)p[0]) % (int64_t)p[1] - (int64_t)p[2]) * p[3];
    }
    ct_tensor *t = ct_to_dtype(ct_tensor_from_data(v, CT_FLOAT64, c->sizes, c->ndim), c->dtype);
    free(v);
    if (c->layout == 1) {
        t = ct_transpose(t, -2, -1);
    } else if (c->layout == 2) {
        t = ct_slice(t, -1, 0, c->sizes[c->ndim - 1], 2);
    }
    if (c->grad) {
        t = ct_requires_grad_(ct_detach(t), true);
    }
    return c->grad == 2 ? ct_mul(t, t) : t;
}

static void test_print_golden(void)
{
    CHECK(N_CASES == 107); /* catches a case the generator dropped */
    for (int i = 0; i < N_CASES; i++) {
        const ct_print_case *c = &ct_print_cases[i];
        ct_scope_begin();
        CHECK(ct_set_printoptions(c->profile, c->profile ? NULL : &c->opts) == CT_OK);
        CHECK(ct_set_default_dtype(c->default_f64 ? CT_FLOAT64 : CT_FLOAT32) == CT_OK);
        ct_tensor *t = case_tensor(c);
        size_t n = ct_to_string(t, NULL, 0);
        char *s = (char *)malloc(n + 1);
        CHECK(ct_to_string(t, s, n + 1) == n);
        CHECK_MSG(strcmp(s, c->repr) == 0, "%s:\n got: %s\nwant: %s", c->name, s, c->repr);
        free(s);
        ct_set_default_dtype(CT_FLOAT32);
        ct_set_printoptions("default", NULL);
        ct_scope_end();
    }
}

/* snprintf semantics: the full length whatever n, truncated NUL-terminated text. */
static void test_print_truncation(void)
{
    const float d[4] = {0.1f, -2, 3, 4};
    const int64_t s[2] = {2, 2};
    const char *want = "tensor([[ 0.1000, -2.0000],\n        [ 3.0000,  4.0000]])";
    ct_tensor *t = ct_tensor_from_data(d, CT_FLOAT32, s, 2);
    char buf[80];
    memset(buf, 'x', sizeof buf);
    CHECK(ct_to_string(t, buf, 8) == strlen(want));
    CHECK(strcmp(buf, "tensor(") == 0 && buf[8] == 'x');
    CHECK(ct_to_string(t, buf, 1) == strlen(want) && buf[0] == '\0');
    memset(buf, 'x', sizeof buf);
    CHECK(ct_to_string(t, buf, 0) == strlen(want) && buf[0] == 'x');
    CHECK(ct_to_string(t, buf, sizeof buf) == strlen(want) && strcmp(buf, want) == 0);
    ct_free(t);
}

/* ct_print writes the repr and a newline. */
static void test_print_file(void)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) {
        return;
    }
    ct_tensor *t = ct_arange(0, 3, 1, CT_INT64);
    ct_print(t, f);
    rewind(f);
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    CHECK(n == strlen("tensor([0, 1, 2])\n") && strcmp(buf, "tensor([0, 1, 2])\n") == 0);
    fclose(f);
    ct_free(t);
}

/* The options: read back, profiles, sci_mode reset, and the rejected values. */
static void test_print_options(void)
{
    ct_printoptions o = ct_get_printoptions();
    CHECK(o.precision == 4 && o.threshold == 1000 && o.edgeitems == 3 && o.linewidth == 80 &&
          o.sci_mode == CT_SCI_MODE_AUTO);
    o.sci_mode = CT_SCI_MODE_ON;
    o.precision = 6;
    CHECK(ct_set_printoptions(NULL, &o) == CT_OK);
    CHECK(ct_get_printoptions().precision == 6 && ct_get_printoptions().sci_mode == CT_SCI_MODE_ON);
    CHECK(ct_set_printoptions("short", NULL) == CT_OK); /* sci_mode back to AUTO */
    o = ct_get_printoptions();
    CHECK(o.precision == 2 && o.edgeitems == 2 && o.sci_mode == CT_SCI_MODE_AUTO);
    CHECK(ct_set_printoptions("full", NULL) == CT_OK);
    CHECK(isinf(ct_get_printoptions().threshold) && ct_get_printoptions().precision == 4);
    CHECK(ct_set_printoptions("long", NULL) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "profile must be \"default\", \"short\" or \"full\" but got");
    o = ct_get_printoptions();
    o.precision = -1;
    CHECK(ct_set_printoptions(NULL, &o) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "precision must be in [0, 64] but got -1");
    o.precision = 4;
    o.threshold = NAN;
    CHECK(ct_set_printoptions(NULL, &o) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "threshold=nan");
    o.threshold = 10;
    o.edgeitems = -2;
    CHECK(ct_set_printoptions(NULL, &o) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "edgeitems=-2");
    o.edgeitems = 3;
    o.sci_mode = (ct_sci_mode)7;
    CHECK(ct_set_printoptions(NULL, &o) == CT_ERR_VALUE);
    CHECK_ERROR(CT_ERR_VALUE, "7 is not a valid value for sci_mode");
    CHECK(isinf(ct_get_printoptions().threshold)); /* nothing changed by the errors */
    CHECK(ct_set_printoptions("default", NULL) == CT_OK);
}

/* int64 beyond 2^53 prints exactly; precision 64 of the largest doubles fits (PyTorch's
   repr of [1.5e308, 0.5] at precision 64, sci_mode False: 796 characters). */
static void test_print_extremes(void)
{
    const int64_t v[2] = {INT64_MAX, -5};
    const int64_t s[1] = {2};
    ct_tensor *t = ct_tensor_from_data(v, CT_INT64, s, 1);
    char buf[128];
    ct_to_string(t, buf, sizeof buf);
    CHECK(strcmp(buf, "tensor([9223372036854775807,                  -5])") == 0);
    ct_free(t);
    ct_printoptions o = ct_get_printoptions();
    o.precision = 64;
    o.sci_mode = CT_SCI_MODE_OFF;
    CHECK(ct_set_printoptions(NULL, &o) == CT_OK);
    const double big[2] = {1.5e308, 0.5};
    t = ct_tensor_from_data(big, CT_FLOAT64, s, 1);
    char *text = (char *)malloc(800);
    CHECK(ct_to_string(t, text, 800) == 796);
    CHECK(strncmp(text, "tensor([150000000000", 20) == 0);
    const char *tail = "0000],\n       dtype=torch.float64)";
    CHECK(strcmp(text + 796 - strlen(tail), tail) == 0);
    free(text);
    ct_free(t);
    ct_set_printoptions("default", NULL);
}

void test_print(void)
{
    RUN(test_print_golden);
    RUN(test_print_truncation);
    RUN(test_print_file);
    RUN(test_print_options);
    RUN(test_print_extremes);
}
