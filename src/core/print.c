/* core/print.c - PyTorch's repr of a tensor (torch/_tensor_str.py), step for step.
 *
 * Passes over the elements that will be shown (all of them, or with summarization the
 * edgeitems at each end of every dimension) find the format as PyTorch's _Formatter does
 * (int_mode and sci_mode from the range of the values, then the column width); a last pass
 * writes the text as _tensor_str_with_formatter / _vector_str do, and _add_suffixes ends it.
 * Values are read through ct__load_f64 / ct__load_i64, so every dtype prints.
 */
#include "internal.h"
#include "scope.h"
#include "print.h"
#include "../ops/pointwise.h"
#include "../autograd/autograd.h"

#include <stdarg.h>
#include <stdio.h>

CT__GLUE_BEGIN

#define CT__PRINT_MAX_PRECISION 64
#define CT__PRINT_ELEM_BYTES 400 /* "%.64f" of DBL_MAX: 309 digits, the point and 64 decimals */

static ct_printoptions ct__print_opts = {4, 1000, 3, 80, CT_SCI_MODE_AUTO};

ct_printoptions ct_get_printoptions(void) { return ct__print_opts; }

ct_status ct_set_printoptions(const char *profile, const ct_printoptions *opts)
{
    const char *op = "ct_set_printoptions";
    ct_printoptions o = ct__print_opts;
    if (profile && strcmp(profile, "default") == 0) {
        o.precision = 4, o.threshold = 1000, o.edgeitems = 3, o.linewidth = 80;
    } else if (profile && strcmp(profile, "short") == 0) {
        o.precision = 2, o.threshold = 1000, o.edgeitems = 2, o.linewidth = 80;
    } else if (profile && strcmp(profile, "full") == 0) {
        o.precision = 4, o.threshold = INFINITY, o.edgeitems = 3, o.linewidth = 80;
    } else if (profile) {
        return ct__fail(CT_ERR_VALUE, op,
                        "profile must be \"default\", \"short\" or \"full\" but got \"%s\"",
                        profile);
    }
    o.sci_mode = CT_SCI_MODE_AUTO;
    if (opts) {
        o = *opts;
    }
    if (o.precision < 0 || o.precision > CT__PRINT_MAX_PRECISION) {
        return ct__fail(CT_ERR_VALUE, op, "precision must be in [0, %d] but got %d",
                        CT__PRINT_MAX_PRECISION, o.precision);
    }
    if (isnan(o.threshold) || o.edgeitems < 0 || o.linewidth < 0) {
        return ct__fail(CT_ERR_VALUE, op,
                        "expected a threshold that is not NaN and non-negative edgeitems and "
                        "linewidth, but got threshold=%g, edgeitems=%d, linewidth=%d",
                        o.threshold, o.edgeitems, o.linewidth);
    }
    if (o.sci_mode < CT_SCI_MODE_AUTO || o.sci_mode > CT_SCI_MODE_ON) {
        return ct__fail(CT_ERR_VALUE, op, "%d is not a valid value for sci_mode",
                        (int)o.sci_mode);
    }
    ct__print_opts = o;
    return CT_OK;
}

/* ---- the output buffer: snprintf semantics, counting what did not fit -------------- */
typedef struct ct__sbuf {
    char *buf;
    size_t cap, len;
    size_t line_start; /* where the last line begins: after the last newline, or 0 */
} ct__sbuf;

/* Appends printf's text (at most CT__PRINT_ELEM_BYTES + 127 characters at once). */
static void ct__sbuf_put(ct__sbuf *b, const char *fmt, ...)
{
    char s[CT__PRINT_ELEM_BYTES + 128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    for (int i = 0; i < n && s[i]; i++) {
        if (b->len + 1 < b->cap) {
            b->buf[b->len] = s[i];
            b->buf[b->len + 1] = '\0';
        }
        b->len++;
        b->line_start = s[i] == '\n' ? b->len : b->line_start;
    }
}

static void ct__sbuf_spaces(ct__sbuf *b, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        ct__sbuf_put(b, " ");
    }
}

/* ---- the printer: options, the tensor and its formatter (PyTorch's _Formatter) ----- */
typedef struct ct__printer {
    ct__sbuf out;
    ct_printoptions o;
    const ct_tensor *t;
    bool summarize;
    bool floating, int_mode, sci;
    int width;
    double min_abs, max_abs; /* of the shown nonzero finite values */
    int64_t n_finite;        /* how many shown values are nonzero and finite */
} ct__printer;

typedef void (*ct__print_visit_fn)(ct__printer *p, const char *elem);

/* Calls fn for each element shown, in order, from dimension dim of the block at ptr. With
   summarization a dimension longer than 2 * edgeitems shows its first and last edgeitems
   entries, and nothing when edgeitems is 0 (PyTorch's get_summarized_data). */
static void ct__print_visit(ct__printer *p, int dim, const char *ptr, ct__print_visit_fn fn)
{
    const ct_tensor *t = p->t;
    if (dim == t->ndim) {
        fn(p, ptr);
        return;
    }
    int64_t size = t->sizes[dim], edge = p->o.edgeitems;
    size_t step = (size_t)t->strides[dim] * ct_dtype_size(t->dtype);
    bool cut = p->summarize && size > 2 * edge;
    if (p->summarize && edge == 0) {
        return;
    }
    for (int64_t i = 0; i < size; i++) {
        if (cut && i == edge) {
            i = size - edge;
        }
        ct__print_visit(p, dim + 1, ptr + (ptrdiff_t)i * (ptrdiff_t)step, fn);
    }
}

static double ct__print_value(const ct__printer *p, const char *elem)
{
    return ct__load_f64(elem, p->t->dtype);
}

/* The text of a value without padding, as _Formatter.format writes it. */
static int ct__print_format(const ct__printer *p, const char *elem, char *s)
{
    ct_dtype d = p->t->dtype;
    if (d == CT_BOOL) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%s", *elem ? "True" : "False");
    }
    if (!p->floating) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%lld", (long long)ct__load_i64(elem, d));
    }
    double v = ct__print_value(p, elem);
    if (isnan(v) || isinf(v)) { /* Python: "nan", "inf", "-inf" whatever the format */
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    }
    if (p->sci) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%.*e", p->o.precision, v);
    }
    if (p->int_mode) {
        return snprintf(s, CT__PRINT_ELEM_BYTES, "%.0f.", v);
    }
    return snprintf(s, CT__PRINT_ELEM_BYTES, "%.*f", p->o.precision, v);
}

/* First pass over floats: the range of the nonzero finite values and whether all are
   integral. */
static void ct__print_scan(ct__printer *p, const char *elem)
{
    double v = ct__print_value(p, elem);
    if (v == 0 || isnan(v) || isinf(v)) {
        return;
    }
    double a = fabs(v);
    p->min_abs = p->n_finite == 0 || a < p->min_abs ? a : p->min_abs;
    p->max_abs = p->n_finite == 0 || a > p->max_abs ? a : p->max_abs;
    p->int_mode = p->int_mode && v == ceil(v);
    p->n_finite++;
}

/* Second pass: the widest text (floats: of the nonzero finite values only). */
static void ct__print_measure(ct__printer *p, const char *elem)
{
    if (p->floating) {
        double v = ct__print_value(p, elem);
        if (v == 0 || isnan(v) || isinf(v)) {
            return;
        }
    }
    char s[CT__PRINT_ELEM_BYTES];
    int w = ct__print_format(p, elem, s);
    p->width = w > p->width ? w : p->width;
}

/* PyTorch's _Formatter.__init__. */
static void ct__print_formatter(ct__printer *p)
{
    p->floating = ct_dtype_is_floating_point(p->t->dtype);
    p->int_mode = true;
    p->sci = false;
    p->width = 1;
    if (p->floating) {
        p->n_finite = 0;
        ct__print_visit(p, 0, ct__data(p->t), ct__print_scan);
        if (p->n_finite == 0) {
            return;
        }
        p->sci = p->o.sci_mode == CT_SCI_MODE_AUTO
                     ? p->max_abs / p->min_abs > 1000.0 || p->max_abs > 1.0e8 ||
                           p->min_abs < 1.0e-4
                     : p->o.sci_mode == CT_SCI_MODE_ON;
    }
    ct__print_visit(p, 0, ct__data(p->t), ct__print_measure);
}

/* Emits one value right-aligned to the column width. */
static void ct__print_elem(ct__printer *p, const char *elem)
{
    char s[CT__PRINT_ELEM_BYTES];
    int w = ct__print_format(p, elem, s);
    ct__sbuf_spaces(&p->out, p->width - w);
    ct__sbuf_put(&p->out, "%s", s);
}

/* PyTorch's _vector_str: items of width + 2 characters, as many per line as fit in
   linewidth - indent (at least one), lines joined by ",\n" and indent + 1 spaces. */
static void ct__print_vector(ct__printer *p, const char *ptr, int64_t indent)
{
    const ct_tensor *t = p->t;
    int64_t size = t->sizes[t->ndim - 1], edge = p->o.edgeitems;
    size_t step = (size_t)t->strides[t->ndim - 1] * ct_dtype_size(t->dtype);
    int64_t per_line = (p->o.linewidth - indent) / (p->width + 2);
    per_line = per_line > 1 ? per_line : 1;
    ct__sbuf_put(&p->out, "[");
    if (p->summarize && edge == 0) {
        ct__sbuf_put(&p->out, "...]");
        return;
    }
    bool cut = p->summarize && size > 2 * edge;
    int64_t n_items = cut ? 2 * edge + 1 : size;
    for (int64_t k = 0; k < n_items; k++) {
        if (k > 0 && k % per_line == 0) {
            ct__sbuf_put(&p->out, ",\n");
            ct__sbuf_spaces(&p->out, indent + 1);
        } else if (k > 0) {
            ct__sbuf_put(&p->out, ", ");
        }
        if (cut && k == edge) {
            ct__sbuf_put(&p->out, " ...");
            continue;
        }
        int64_t i = cut && k > edge ? size - (n_items - k) : k;
        ct__print_elem(p, ptr + (ptrdiff_t)i * (ptrdiff_t)step);
    }
    ct__sbuf_put(&p->out, "]");
}

/* PyTorch's _tensor_str_with_formatter from dimension dim: slices joined by ",", one
   newline per remaining dimension beyond the first and indent + 1 spaces. */
static void ct__print_block(ct__printer *p, int dim, const char *ptr, int64_t indent)
{
    const ct_tensor *t = p->t;
    if (dim == t->ndim) {
        ct__print_elem(p, ptr);
        return;
    }
    if (dim == t->ndim - 1) {
        ct__print_vector(p, ptr, indent);
        return;
    }
    int64_t size = t->sizes[dim], edge = p->o.edgeitems;
    size_t step = (size_t)t->strides[dim] * ct_dtype_size(t->dtype);
    bool cut = p->summarize && size > 2 * edge;
    ct__sbuf_put(&p->out, "[");
    for (int64_t i = 0; i < size; i++) {
        if (i > 0) {
            ct__sbuf_put(&p->out, ",");
            for (int k = dim; k < t->ndim - 1; k++) {
                ct__sbuf_put(&p->out, "\n");
            }
            ct__sbuf_spaces(&p->out, indent + 1);
        }
        if (cut && i == edge) {
            ct__sbuf_put(&p->out, "...");
            i = size - edge - 1;
            continue;
        }
        ct__print_block(p, dim + 1, ptr + (ptrdiff_t)i * (ptrdiff_t)step, indent + 1);
    }
    ct__sbuf_put(&p->out, "]");
}

/* ---- suffixes (PyTorch's _add_suffixes) -------------------------------------------- */
typedef struct ct__suffixes {
    char text[4][96];
    int n;
} ct__suffixes;

static char *ct__suffix_new(ct__suffixes *s) { return s->text[s->n++]; }

/* "size=(2, 0)", "size=(5,)" or "size=()", as str(tuple(shape)). */
static void ct__suffix_size(ct__suffixes *s, const ct_tensor *t)
{
    char *d = ct__suffix_new(s);
    size_t used = (size_t)snprintf(d, sizeof s->text[0], "size=(");
    for (int i = 0; i < t->ndim && used < sizeof s->text[0]; i++) {
        used += (size_t)snprintf(d + used, sizeof s->text[0] - used, i ? ", %lld" : "%lld",
                                 (long long)t->sizes[i]);
    }
    if (used < sizeof s->text[0]) {
        snprintf(d + used, sizeof s->text[0] - used, t->ndim == 1 ? ",)" : ")");
    }
}

static void ct__suffix_dtype(ct__suffixes *s, ct_dtype d)
{
    snprintf(ct__suffix_new(s), sizeof s->text[0], "dtype=torch.%s", ct_dtype_name(d));
}

/* The suffixes of t (the original tensor: its device and autograd state) whose values are
   in c (t, or its copy on the CPU). */
static void ct__print_suffixes(const ct__printer *p, const ct_tensor *t, ct__suffixes *s)
{
    ct_device dev = t->storage->device, dflt_dev = ct_get_default_device();
    if (dev.type != dflt_dev.type || dev.index != dflt_dev.index) {
        char name[32];
        snprintf(ct__suffix_new(s), sizeof s->text[0], "device='%s'",
                 ct__device_str(dev, name, sizeof name));
    }
    ct_dtype dflt = ct_get_default_dtype();
    if (ct__numel(t->sizes, t->ndim) == 0) {
        if (t->ndim != 1) {
            ct__suffix_size(s, t);
        }
        if (t->dtype != dflt) {
            ct__suffix_dtype(s, t->dtype);
        }
    } else {
        if (p->o.edgeitems == 0) {
            ct__suffix_size(s, t);
        }
        if (t->dtype != dflt && t->dtype != CT_INT64 && t->dtype != CT_BOOL) {
            ct__suffix_dtype(s, t->dtype);
        }
    }
    if (t->grad_fn) {
        snprintf(ct__suffix_new(s), sizeof s->text[0], "grad_fn=<%s>",
                 ct__node_name(t->grad_fn));
    } else if (t->requires_grad) {
        snprintf(ct__suffix_new(s), sizeof s->text[0], "requires_grad=True");
    }
}

/* Appends the suffixes: ", suffix" while the last line (counted as its length + 2, as
   PyTorch does) stays within linewidth, else ",\n" and 7 spaces (len("tensor(")). */
static void ct__print_add_suffixes(ct__printer *p, const ct__suffixes *s)
{
    int64_t line = (int64_t)(p->out.len - p->out.line_start) + 2;
    for (int k = 0; k < s->n; k++) {
        int64_t n = (int64_t)strlen(s->text[k]);
        if (line + n + 2 > p->o.linewidth) {
            ct__sbuf_put(&p->out, ",\n       %s", s->text[k]);
            line = 7 + n;
        } else {
            ct__sbuf_put(&p->out, ", %s", s->text[k]);
            line += n + 2;
        }
    }
    ct__sbuf_put(&p->out, ")");
}

/* ---- entry points ------------------------------------------------------------------ */
/* PyTorch's _tensor_str: the values of c (a CPU tensor) at indent len("tensor("). */
static void ct__print_values(ct__printer *p, const ct_tensor *c)
{
    p->t = c;
    if (ct__numel(c->sizes, c->ndim) == 0) {
        ct__sbuf_put(&p->out, "[]");
        return;
    }
    p->summarize = (double)ct__numel(c->sizes, c->ndim) > p->o.threshold;
    ct__print_formatter(p);
    ct__print_block(p, 0, ct__data(c), 7);
}

size_t ct_to_string(const ct_tensor *t, char *buf, size_t n)
{
    const char *op = "ct_to_string";
    if (buf && n > 0) {
        buf[0] = '\0';
    }
    if (ct__null(op, t)) {
        return 0;
    }
    ct__printer p;
    memset(&p, 0, sizeof p);
    p.out.buf = buf;
    p.out.cap = buf ? n : 0;
    p.o = ct__print_opts;
    ct_scope_begin();
    ct_no_grad_begin();
    const ct_tensor *c = t->storage->device.type == CT_CPU ? t : ct_cpu(t);
    ct_no_grad_end();
    if (c) {
        ct__sbuf_put(&p.out, "tensor(");
        ct__print_values(&p, c);
        ct__suffixes s;
        s.n = 0;
        ct__print_suffixes(&p, t, &s);
        ct__print_add_suffixes(&p, &s);
    }
    ct_scope_end();
    return p.out.len;
}

#ifndef CTORCH_NO_STDIO
void ct_print(const ct_tensor *t, FILE *f)
{
    const char *op = "ct_print";
    if (ct__null(op, t) || ct__null(op, f)) {
        return;
    }
    size_t n = ct_to_string(t, NULL, 0) + 1;
    char *s = (char *)ct__malloc(n);
    if (!s) {
        ct__fail(CT_ERR_OOM, op, "out of memory formatting a tensor of %lld elements",
                 (long long)ct__numel(t->sizes, t->ndim));
        return;
    }
    ct_to_string(t, s, n);
    fprintf(f, "%s\n", s);
    ct__free(s);
}
#endif

#undef CT__PRINT_MAX_PRECISION
#undef CT__PRINT_ELEM_BYTES
CT__GLUE_END
