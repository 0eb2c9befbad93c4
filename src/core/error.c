/* core/error.c - the sticky thread-local first error. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static CT__THREAD_LOCAL ct_status ct__error_code_tl = CT_OK;
static CT__THREAD_LOCAL char ct__error_msg_tl[512];
static ct_error_handler ct__error_handler_fn = NULL;
static void *ct__error_handler_user = NULL;

const char *ct_status_str(ct_status code)
{
    switch (code) {
#define CT__X(c, name, text) case c: return name;
        CT_STATUS_LIST(CT__X)
#undef CT__X
    default: return "unknown";
    }
}

const char *ct_error(void) { return ct__error_code_tl == CT_OK ? NULL : ct__error_msg_tl; }

ct_status ct_error_code(void) { return ct__error_code_tl; }

void ct_error_clear(void)
{
    ct__error_code_tl = CT_OK;
    ct__error_msg_tl[0] = '\0';
}

void ct_set_error_handler(ct_error_handler fn, void *user_data)
{
    ct__error_handler_fn = fn;
    ct__error_handler_user = user_data;
}

/* With no handler installed, each recorded first error goes to stderr, as an uncaught
   exception would (nothing under CTORCH_NO_STDIO). */
static void ct__error_print_default(const char *message)
{
#ifdef CTORCH_NO_STDIO
    (void)message;
#else
    fprintf(stderr, "ctorch error: %s\n", message);
#endif
}

ct_status ct__fail(ct_status code, const char *op, const char *fmt, ...)
{
    if (ct__error_code_tl != CT_OK) {
        return code; /* keep the first error */
    }
    int n = snprintf(ct__error_msg_tl, sizeof ct__error_msg_tl, "%s: ", op);
    if (n < 0 || n >= (int)sizeof ct__error_msg_tl) {
        n = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ct__error_msg_tl + n, sizeof ct__error_msg_tl - (size_t)n, fmt, ap);
    va_end(ap);
    ct__error_code_tl = code;
    if (ct__error_handler_fn) {
        ct__error_handler_fn(code, ct__error_msg_tl, ct__error_handler_user);
    } else {
        ct__error_print_default(ct__error_msg_tl);
    }
    return code;
}

ct_status ct_error_set(ct_status code, const char *op, const char *message)
{
    if (!op || !message) {
        return ct__fail(CT_ERR_NULL_ARG, "ct_error_set", "op and message must not be NULL");
    }
    if (code <= CT_OK || code >= CT_STATUS_COUNT) {
        return ct__fail(CT_ERR_VALUE, "ct_error_set", "code %d is not an error code", (int)code);
    }
    return ct__fail(code, op, "%s", message);
}
