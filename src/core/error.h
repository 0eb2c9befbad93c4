/* core/error.h - status codes and the sticky, thread-local first error (DESIGN §4).
 *
 * An op that fails returns NULL (or a nonzero ct_status) and records the first error; an
 * op given a NULL input returns NULL without a new message. Check once after a block:
 *     if (ct_error()) { puts(ct_error()); ct_error_clear(); }
 * Until an error handler is installed, each first error is also printed to stderr
 * ("ctorch error: ct_<op>: ..."), so a mistake is never silent.
 */

/* X(code, name, default text): the one list of status codes. */
#define CT_STATUS_LIST(X)                                                                  \
    X(CT_OK, "ok", "no error")                                                              \
    X(CT_ERR_NULL_ARG, "null_arg", "an argument was NULL")                                  \
    X(CT_ERR_SHAPE, "shape", "shapes do not match")                                         \
    X(CT_ERR_DTYPE, "dtype", "unsupported or mismatched dtype")                             \
    X(CT_ERR_DEVICE, "device", "tensors are on different or unsupported devices")           \
    X(CT_ERR_INDEX, "index", "index or dimension out of range")                             \
    X(CT_ERR_VALUE, "value", "invalid argument value")                                      \
    X(CT_ERR_OOM, "oom", "out of memory")                                                   \
    X(CT_ERR_AUTOGRAD, "autograd", "autograd error")                                        \
    X(CT_ERR_IO, "io", "file could not be opened or read")                                  \
    X(CT_ERR_FORMAT, "format", "malformed or truncated file")                               \
    X(CT_ERR_UNSUPPORTED, "unsupported", "feature not enabled in this build")               \
    X(CT_ERR_STATE, "state", "call not valid in the current state")                        \
    X(CT_ERR_DIST, "dist", "a collective failed or timed out")

typedef enum ct_status {
#define CT__X(code, name, text) code,
    CT_STATUS_LIST(CT__X)
#undef CT__X
    CT_STATUS_COUNT
} ct_status;

/* The stable short name of a status code, e.g. "shape"; "unknown" for other values.
   Mirrors: the exception type of a PyTorch RuntimeError. */
CTORCH_API const char *ct_status_str(ct_status code);
/* The first error message recorded on this thread since the last ct_error_clear(), or NULL.
   Messages read "ct_<op>: <facts>". Thread safety: per thread. */
CTORCH_API const char *ct_error(void);
/* Aliases of ct_error and ct_error_clear under ../shared/API.md's names. */
#define ct_last_error ct_error
#define ct_clear_error ct_error_clear
/* The status code of the first recorded error on this thread (CT_OK if none). */
CTORCH_API ct_status ct_error_code(void);
/* Forgets this thread's recorded error. */
CTORCH_API void ct_error_clear(void);
/* Records "<op>: <message>" with code as this thread's error when none is pending, as ctorch's
   own ops do (the handler, or the stderr print, sees it); for libraries built on ctorch
   (ctorch_dist.h). Returns code. Errors: CT_ERR_NULL_ARG (recorded instead) when op or message
   is NULL, CT_ERR_VALUE when code is CT_OK or unknown. Mirrors: TORCH_CHECK raising c10::Error. */
CTORCH_API ct_status ct_error_set(ct_status code, const char *op, const char *message);

/* Called once per recorded error (the first one of a block) with its code and message. */
typedef void (*ct_error_handler)(ct_status code, const char *message, void *user_data);
/* Installs a process-wide handler; the examples abort from it. With no handler (the start,
   or after ct_set_error_handler(NULL, NULL)) each thread's first error is printed to stderr
   when it is recorded, as an uncaught exception would be:
       ctorch error: ct_cross_entropy: expected scalar type Long but found Int
   once per error (again only after ct_error_clear). Installing any handler, even one that
   does nothing, turns the print off. Under CTORCH_NO_STDIO nothing is printed.
   Thread safety: call before starting threads that use ctorch. */
CTORCH_API void ct_set_error_handler(ct_error_handler fn, void *user_data);
