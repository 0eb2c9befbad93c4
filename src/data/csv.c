/* data/csv.c - the CSV reader: a bounded RFC 4180 tokenizer and two passes over the text.
 *
 * Pass 1 reads the header (the column names) and counts the records, checking the structure
 * (field counts, quotes, field lengths, NUL bytes); pass 2 converts every field into tensors
 * sized from pass 1. Each field is unquoted into one scratch buffer of CT_CSV_MAX_FIELD_BYTES
 * + 1 bytes; the tokenizer never reads past the end of the text.
 */
#include "../core/internal.h"
#include "reader_internal.h"
#include "csv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

CT__GLUE_BEGIN

/* The kind of each column. */
enum { CT__CSV_DATA, CT__CSV_INT64, CT__CSV_LABEL, CT__CSV_SKIP };

typedef struct ct__csv_reader {
    const char *op;
    const unsigned char *p, *end;
    char delim, quote;
    int64_t line;  /* line of p, from 1 */
    char *field;   /* the last field, unquoted and NUL-terminated */
    size_t len;
} ct__csv_reader;

/* Appends c to the field; false (error) past the limit. */
static CT__UNUSED bool ct__csv_put(ct__csv_reader *r, unsigned char c, int64_t line, int64_t col)
{
    if (c == 0) {
        ct__fail(CT_ERR_FORMAT, r->op, "embedded NUL byte at line %lld, column %lld",
                 (long long)r->line, (long long)col);
        return false;
    }
    if (r->len == CT_CSV_MAX_FIELD_BYTES) {
        ct__fail(CT_ERR_FORMAT, r->op, "field at line %lld, column %lld is longer than "
                 "CT_CSV_MAX_FIELD_BYTES (%d bytes)", (long long)line, (long long)col,
                 CT_CSV_MAX_FIELD_BYTES);
        return false;
    }
    r->field[r->len++] = (char)c;
    return true;
}

/* Consumes a record end at p ("\n", "\r\n" or "\r") when there is one. */
static CT__UNUSED bool ct__csv_eol(ct__csv_reader *r)
{
    if (r->p < r->end && (*r->p == '\n' || *r->p == '\r')) {
        if (*r->p++ == '\r' && r->p < r->end && *r->p == '\n') {
            r->p++;
        }
        r->line++;
        return true;
    }
    return r->p == r->end;
}

/* Reads field col (from 1) of the record at p into r->field. Returns 1 when another field
   follows, 0 at the end of the record, -1 after an error. */
static CT__UNUSED int ct__csv_field(ct__csv_reader *r, int64_t col)
{
    int64_t line = r->line;
    r->len = 0;
    if (r->quote && r->p < r->end && *r->p == (unsigned char)r->quote) {
        r->p++;
        for (;;) {
            if (r->p == r->end) {
                ct__fail(CT_ERR_FORMAT, r->op, "unterminated quoted field starting at line "
                         "%lld, column %lld (EOF inside string)", (long long)line,
                         (long long)col);
                return -1;
            }
            unsigned char c = *r->p++;
            if (c == (unsigned char)r->quote) {
                if (r->p == r->end || *r->p != (unsigned char)r->quote) {
                    break;
                }
                r->p++;
            } else if (c == '\n') {
                r->line++;
            }
            if (!ct__csv_put(r, c, line, col)) {
                return -1;
            }
        }
        r->field[r->len] = '\0';
        if (r->p < r->end && *r->p == (unsigned char)r->delim) {
            r->p++;
            return 1;
        }
        if (ct__csv_eol(r)) {
            return 0;
        }
        ct__fail(CT_ERR_FORMAT, r->op, "'%c' expected after the closing quote of the field at "
                 "line %lld, column %lld, found '%c'", r->delim, (long long)r->line,
                 (long long)col, *r->p >= 32 && *r->p < 127 ? *r->p : '?');
        return -1;
    }
    while (r->p < r->end && *r->p != '\n' && *r->p != '\r') {
        unsigned char c = *r->p++;
        if (c == (unsigned char)r->delim) {
            r->field[r->len] = '\0';
            return 1;
        }
        if (!ct__csv_put(r, c, line, col)) {
            return -1;
        }
    }
    r->field[r->len] = '\0';
    ct__csv_eol(r);
    return 0;
}

/* Skips blank lines; false at the end of the text. */
static CT__UNUSED bool ct__csv_next_record(ct__csv_reader *r)
{
    while (r->p < r->end && (*r->p == '\n' || *r->p == '\r')) {
        ct__csv_eol(r);
    }
    return r->p < r->end;
}

/* ---- values ------------------------------------------------------------------------- */
static const char *const ct__csv_na[] = {
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
};

/* Trims spaces and tabs around the field in place; returns its start (NUL-terminated). */
static CT__UNUSED char *ct__csv_trim(char *s, size_t *n)
{
    size_t b = 0, e = *n;
    while (b < e && (s[b] == ' ' || s[b] == '\t')) {
        b++;
    }
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) {
        e--;
    }
    s[e] = '\0';
    *n = e - b;
    return s + b;
}

static CT__UNUSED bool ct__csv_is_na(const char *s)
{
    for (size_t i = 0; i < sizeof ct__csv_na / sizeof ct__csv_na[0]; i++) {
        if (strcmp(s, ct__csv_na[i]) == 0) {
            return true;
        }
    }
    return false;
}

static CT__UNUSED size_t ct__csv_digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        n++;
    }
    return n;
}

/* Whether s (trimmed) is a decimal float literal as Python's float() reads one: digits with
   an optional point and exponent, or inf / infinity / nan, with an optional sign. */
static CT__UNUSED bool ct__csv_float_syntax(const char *s)
{
    s += *s == '+' || *s == '-';
    const char *words[3] = {"inf", "infinity", "nan"};
    for (int w = 0; w < 3; w++) {
        size_t k = 0;
        while (words[w][k] && (s[k] | 0x20) == words[w][k]) {
            k++;
        }
        if (!words[w][k] && !s[k]) {
            return true;
        }
    }
    size_t whole = ct__csv_digits(s), frac = 0;
    s += whole;
    if (*s == '.') {
        frac = ct__csv_digits(++s);
        s += frac;
    }
    if (whole + frac == 0) {
        return false;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        size_t ex = ct__csv_digits(s);
        if (ex == 0) {
            return false;
        }
        s += ex;
    }
    return *s == '\0';
}

/* v rounded to float32 (to nearest, ties to even) as a cast does with subnormals kept, also on
   threads that flush subnormals to zero (ct_set_flush_denormal). */
static CT__UNUSED float ct__csv_to_float(double v)
{
    if (!(fabs(v) < 0x1p-126) || v == 0) {
        return (float)v;
    }
    uint32_t bits = (uint32_t)nearbyint(fabs(v) * 0x1p149); /* exact scaling; <= 2^23 */
    bits |= v < 0 ? 0x80000000u : 0;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Whether s (trimmed) is "[+-]digits" within int64; the value in *v. */
static CT__UNUSED bool ct__csv_int(const char *s, int64_t *v)
{
    bool neg = *s == '-';
    s += *s == '+' || *s == '-';
    if (!*s) {
        return false;
    }
    uint64_t acc = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || acc > (limit - (uint64_t)(*s - '0')) / 10) {
            return false;
        }
        acc = acc * 10 + (uint64_t)(*s - '0');
    }
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return true;
}

/* ---- the load ----------------------------------------------------------------------- */
typedef struct ct__csv_load {
    ct__csv_reader r;
    const ct_csv_opts *opts;
    int64_t ncols;
    char **names;  /* ncols names */
    int *kind;     /* ncols kinds */
    int64_t *pos;  /* each column's index in its tensor */
    ct_csv *out;
    char *arena;   /* label strings, NUL-separated */
    size_t arena_len, arena_cap;
    int64_t *label_at; /* each row's label offset in arena */
    int64_t line;      /* the line where the record being converted begins */
    bool label_strings;
} ct__csv_load;

static CT__UNUSED char *ct__csv_strdup(const char *s, size_t n)
{
    char *c = (char *)ct__malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

/* Reads the header (or, without one, counts the first record's fields) into names. */
static CT__UNUSED bool ct__csv_header(ct__csv_load *L)
{
    ct__csv_reader *r = &L->r;
    if (!ct__csv_next_record(r)) {
        ct__fail(CT_ERR_FORMAT, r->op, "no columns to parse from file: the file is empty");
        return false;
    }
    const unsigned char *start = r->p;
    int64_t line = r->line, cap = 0;
    for (int more = 1; more == 1;) {
        more = ct__csv_field(r, L->ncols + 1);
        if (more < 0) {
            return false;
        }
        if (L->ncols == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = (char **)ct__realloc(L->names, (size_t)cap * sizeof(char *));
            if (!grown) {
                ct__fail(CT_ERR_OOM, r->op, "out of memory");
                return false;
            }
            L->names = grown;
        }
        char num[24];
        int nn = snprintf(num, sizeof num, "%lld", (long long)L->ncols);
        L->names[L->ncols] = L->opts->header ? ct__csv_strdup(r->field, r->len)
                                             : ct__csv_strdup(num, (size_t)nn);
        if (!L->names[L->ncols++]) {
            ct__fail(CT_ERR_OOM, r->op, "out of memory");
            return false;
        }
    }
    if (!L->opts->header) {
        r->p = start;
        r->line = line;
    }
    return true;
}

/* The index of the column named name, or -1 after CT_ERR_VALUE. */
static CT__UNUSED int64_t ct__csv_find(ct__csv_load *L, const char *name)
{
    for (int64_t c = 0; name && c < L->ncols; c++) {
        if (strcmp(L->names[c], name) == 0) {
            return c;
        }
    }
    char list[200] = "";
    for (int64_t c = 0; c < L->ncols && strlen(list) < 150; c++) {
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%.40s", c ? ", " : "",
                 L->names[c]);
    }
    ct__fail(CT_ERR_VALUE, L->r.op, "no column named '%.100s' (columns: %s)",
             name ? name : "(null)", list);
    return -1;
}

/* Sets each column's kind from the options. */
static CT__UNUSED bool ct__csv_kinds(ct__csv_load *L)
{
    const ct_csv_opts *o = L->opts;
    L->kind = (int *)ct__calloc((size_t)L->ncols * sizeof(int));
    L->pos = (int64_t *)ct__calloc((size_t)L->ncols * sizeof(int64_t));
    if (!L->kind || !L->pos) {
        ct__fail(CT_ERR_OOM, L->r.op, "out of memory");
        return false;
    }
    for (int64_t i = 0; i < o->num_skip_columns + o->num_int64_columns; i++) {
        bool skip = i < o->num_skip_columns;
        int64_t c = ct__csv_find(L, skip ? o->skip_columns[i]
                                         : o->int64_columns[i - o->num_skip_columns]);
        if (c < 0) {
            return false;
        }
        L->kind[c] = skip ? CT__CSV_SKIP : CT__CSV_INT64;
    }
    if (o->label) {
        int64_t c = ct__csv_find(L, o->label);
        if (c < 0) {
            return false;
        }
        L->kind[c] = CT__CSV_LABEL;
    }
    return true;
}

/* Copies the names of the columns of kind k into a new array *names (*n of them, freed by
   ct_csv_free also after a failure); sets pos. */
static CT__UNUSED bool ct__csv_names_of(ct__csv_load *L, int k, char ***names, int64_t *n)
{
    *n = 0;
    *names = (char **)ct__calloc((size_t)(L->ncols ? L->ncols : 1) * sizeof(char *));
    for (int64_t c = 0; *names && c < L->ncols; c++) {
        if (L->kind[c] == k) {
            L->pos[c] = *n;
            (*names)[*n] = ct__csv_strdup(L->names[c], strlen(L->names[c]));
            if (!(*names)[(*n)++]) {
                return false;
            }
        }
    }
    return *names != NULL;
}

/* The message tail " at line L, column C ('name')". */
#define CT__CSV_AT(L, c) (long long)(L)->line, (long long)((c) + 1), (L)->names[c]

/* Converts the field of column c, row row (pass 2). */
static CT__UNUSED bool ct__csv_store(ct__csv_load *L, int64_t c, int64_t row)
{
    ct__csv_reader *r = &L->r;
    size_t n = r->len;
    char *s = ct__csv_trim(r->field, &n);
    int kind = L->kind[c];
    bool na = ct__csv_is_na(s);
    const char *what = kind == CT__CSV_DATA ? ct_dtype_name(L->opts->dtype) : "int64";
    if (na && (kind == CT__CSV_LABEL || kind == CT__CSV_INT64 ||
               L->opts->missing == CT_CSV_MISSING_ERROR)) {
        ct__fail(CT_ERR_FORMAT, r->op, "missing value%s at line %lld, column %lld ('%.100s')",
                 kind == CT__CSV_LABEL ? " in the label column" : kind == CT__CSV_INT64 ?
                 " in an int64 column" : "", CT__CSV_AT(L, c));
        return false;
    }
    if (kind == CT__CSV_DATA) {
        if (!na && !ct__csv_float_syntax(s)) {
            ct__fail(CT_ERR_FORMAT, r->op, "could not convert string '%.60s' to %s at line "
                     "%lld, column %lld ('%.100s')", s, what, CT__CSV_AT(L, c));
            return false;
        }
        double v = na ? (double)NAN : strtod(s, NULL);
        int64_t at = row * L->out->num_columns + L->pos[c];
        if (L->opts->dtype == CT_FLOAT32) {
            ((float *)ct__data(L->out->data))[at] = ct__csv_to_float(v);
        } else {
            ((double *)ct__data(L->out->data))[at] = v;
        }
        return true;
    }
    int64_t v = 0;
    bool is_int = ct__csv_int(s, &v);
    if (kind == CT__CSV_INT64) {
        if (!is_int) {
            ct__fail(CT_ERR_FORMAT, r->op, "could not convert string '%.60s' to int64 at line "
                     "%lld, column %lld ('%.100s')", s, CT__CSV_AT(L, c));
            return false;
        }
        ((int64_t *)ct__data(L->out->int64_data))[row * L->out->num_int64_columns + L->pos[c]] =
            v;
        return true;
    }
    ((int64_t *)ct__data(L->out->labels))[row] = v; /* the label, kept as (trimmed) text too */
    L->label_strings = L->label_strings || !is_int;
    if (L->arena_len + n + 1 > L->arena_cap) {
        size_t cap = 2 * L->arena_cap + n + 1;
        char *grown = (char *)ct__realloc(L->arena, cap);
        if (!grown) {
            ct__fail(CT_ERR_OOM, r->op, "out of memory");
            return false;
        }
        L->arena = grown;
        L->arena_cap = cap;
    }
    L->label_at[row] = (int64_t)L->arena_len;
    memcpy(L->arena + L->arena_len, s, n + 1);
    L->arena_len += n + 1;
    return true;
}

/* Walks every record after the header: pass 1 (store false) counts them and checks the
   structure; pass 2 converts the fields. */
static CT__UNUSED bool ct__csv_pass(ct__csv_load *L, bool store, int64_t *rows)
{
    ct__csv_reader *r = &L->r;
    int64_t row = 0;
    while (ct__csv_next_record(r)) {
        int64_t line = r->line, c = 0;
        L->line = line;
        for (int more = 1; more == 1; c++) {
            more = ct__csv_field(r, c + 1);
            if (more < 0) {
                return false;
            }
            if (store && c < L->ncols && L->kind[c] != CT__CSV_SKIP &&
                !ct__csv_store(L, c, row)) {
                return false;
            }
        }
        if (c != L->ncols) {
            ct__fail(CT_ERR_FORMAT, r->op, "Error tokenizing data: Expected %lld fields in "
                     "line %lld, saw %lld", (long long)L->ncols, (long long)line, (long long)c);
            return false;
        }
        row++;
    }
    *rows = row;
    return true;
}

typedef struct ct__csv_label {
    const char *s;
    int64_t row;
} ct__csv_label;

static CT__UNUSED int ct__csv_label_cmp(const void *a, const void *b)
{
    const ct__csv_label *x = (const ct__csv_label *)a, *y = (const ct__csv_label *)b;
    int c = strcmp(x->s, y->s);
    return c ? c : (x->row > y->row) - (x->row < y->row);
}

/* String labels: classes in sorted order, labels[row] = the class id of the row's string. */
static CT__UNUSED bool ct__csv_classes(ct__csv_load *L)
{
    int64_t rows = L->out->rows;
    ct__csv_label *v = (ct__csv_label *)ct__malloc((size_t)(rows ? rows : 1) * sizeof *v);
    L->out->classes = (char **)ct__calloc((size_t)(rows ? rows : 1) * sizeof(char *));
    if (!v || !L->out->classes) {
        ct__free(v);
        ct__fail(CT_ERR_OOM, L->r.op, "out of memory");
        return false;
    }
    for (int64_t i = 0; i < rows; i++) {
        v[i].s = L->arena + L->label_at[i];
        v[i].row = i;
    }
    qsort(v, (size_t)rows, sizeof *v, ct__csv_label_cmp);
    int64_t *labels = (int64_t *)ct__data(L->out->labels);
    bool ok = true;
    for (int64_t i = 0; ok && i < rows; i++) {
        if (i == 0 || strcmp(v[i].s, v[i - 1].s) != 0) {
            char *name = ct__csv_strdup(v[i].s, strlen(v[i].s));
            ok = name != NULL;
            L->out->classes[L->out->num_classes++] = name;
        }
        labels[v[i].row] = L->out->num_classes - 1;
    }
    ct__free(v);
    if (!ok) {
        ct__fail(CT_ERR_OOM, L->r.op, "out of memory");
    }
    return ok;
}

/* Allocates the result's tensors and name lists for `rows` records. */
static CT__UNUSED bool ct__csv_alloc(ct__csv_load *L, int64_t rows)
{
    ct_csv *o = L->out;
    o->rows = rows;
    if (!ct__csv_names_of(L, CT__CSV_DATA, &o->columns, &o->num_columns) ||
        !ct__csv_names_of(L, CT__CSV_INT64, &o->int64_columns, &o->num_int64_columns)) {
        ct__fail(CT_ERR_OOM, L->r.op, "out of memory");
        return false;
    }
    int64_t sizes[2] = {rows, o->num_columns};
    o->data = ct__tensor_new(L->r.op, sizes, 2, L->opts->dtype);
    if (!o->data) {
        return false;
    }
    if (o->num_int64_columns) {
        sizes[1] = o->num_int64_columns;
        if (!(o->int64_data = ct__tensor_new(L->r.op, sizes, 2, CT_INT64))) {
            return false;
        }
    }
    if (L->opts->label) {
        L->label_at = (int64_t *)ct__malloc((size_t)(rows ? rows : 1) * sizeof(int64_t));
        if (!L->label_at || !(o->labels = ct__tensor_new(L->r.op, sizes, 1, CT_INT64))) {
            ct__fail(CT_ERR_OOM, L->r.op, "out of memory");
            return false;
        }
    }
    return true;
}

static CT__UNUSED bool ct__csv_check_opts(const char *op, const ct_csv_opts *o)
{
    if (o->dtype != CT_FLOAT32 && o->dtype != CT_FLOAT64) {
        ct__fail(CT_ERR_VALUE, op, "dtype must be float32 or float64, got %s",
                 ct_dtype_name(o->dtype));
        return false;
    }
    if (o->delimiter == '\0' || o->delimiter == '\n' || o->delimiter == '\r' ||
        o->delimiter == o->quotechar || o->quotechar == '\n' || o->quotechar == '\r') {
        ct__fail(CT_ERR_VALUE, op, "bad delimiter or quotechar (0x%02x, 0x%02x): the delimiter "
                 "must be a character other than the quote and line breaks",
                 (unsigned char)o->delimiter, (unsigned char)o->quotechar);
        return false;
    }
    if (o->num_int64_columns < 0 || o->num_skip_columns < 0 ||
        (o->num_int64_columns && !o->int64_columns) || (o->num_skip_columns && !o->skip_columns) ||
        (unsigned)o->missing > CT_CSV_MISSING_ERROR) {
        ct__fail(CT_ERR_VALUE, op, "bad column lists or missing value mode");
        return false;
    }
    return true;
}

static CT__UNUSED ct_csv *ct__csv_parse(const char *op, const unsigned char *b, size_t n,
                                        const ct_csv_opts *opts)
{
    ct_csv_opts defaults = ct_csv_defaults();
    ct__csv_load L;
    memset(&L, 0, sizeof L);
    L.opts = opts ? opts : &defaults;
    if (!ct__csv_check_opts(op, L.opts)) {
        return NULL;
    }
    size_t bom = n >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    L.r.op = op;
    L.r.p = b + bom;
    L.r.end = b + n;
    L.r.delim = L.opts->delimiter;
    L.r.quote = L.opts->quotechar;
    L.r.line = 1;
    L.r.field = (char *)ct__malloc(CT_CSV_MAX_FIELD_BYTES + 1);
    L.out = (ct_csv *)ct__calloc(sizeof(ct_csv));
    int64_t rows = 0;
    bool ok = L.r.field && L.out;
    if (!ok) {
        ct__fail(CT_ERR_OOM, op, "out of memory");
    }
    ok = ok && ct__csv_header(&L) && ct__csv_kinds(&L);
    ct__csv_reader first = L.r;
    ok = ok && ct__csv_pass(&L, false, &rows) && ct__csv_alloc(&L, rows);
    L.r = first;
    ok = ok && ct__csv_pass(&L, true, &rows) && (!L.label_strings || ct__csv_classes(&L));
    for (int64_t c = 0; c < L.ncols; c++) {
        ct__free(L.names[c]);
    }
    ct__free(L.names);
    ct__free(L.kind);
    ct__free(L.pos);
    ct__free(L.arena);
    ct__free(L.label_at);
    ct__free(L.r.field);
    if (!ok) {
        ct_csv_free(L.out);
        return NULL;
    }
    return L.out;
}

ct_csv_opts ct_csv_defaults(void)
{
    ct_csv_opts o;
    memset(&o, 0, sizeof o);
    o.header = true;
    o.delimiter = ',';
    o.quotechar = '"';
    o.dtype = CT_FLOAT32;
    return o;
}

ct_csv *ct_csv_load_buffer(const void *data, size_t nbytes, const ct_csv_opts *opts)
{
    if (nbytes > 0 && ct__null("ct_csv_load_buffer", data)) {
        return NULL;
    }
    return ct__csv_parse("ct_csv_load_buffer", (const unsigned char *)(nbytes ? data : ""),
                         nbytes, opts);
}

#ifndef CTORCH_NO_STDIO
ct_csv *ct_csv_load(const char *path, const ct_csv_opts *opts)
{
    ct__file_bytes fb;
    if (!ct__file_open("ct_csv_load", path, &fb)) {
        return NULL;
    }
    ct_csv *csv = ct__csv_parse("ct_csv_load", fb.data, fb.nbytes, opts);
    ct__file_close(&fb);
    return csv;
}
#endif

static CT__UNUSED void ct__csv_free_names(char **names, int64_t n)
{
    for (int64_t i = 0; names && i < n; i++) {
        ct__free(names[i]);
    }
    ct__free(names);
}

void ct_csv_free(ct_csv *csv)
{
    if (!csv) {
        return;
    }
    ct__release(csv->data);
    ct__release(csv->int64_data);
    ct__release(csv->labels);
    ct__csv_free_names(csv->columns, csv->num_columns);
    ct__csv_free_names(csv->int64_columns, csv->num_int64_columns);
    ct__csv_free_names(csv->classes, csv->num_classes);
    ct__free(csv);
}

#undef CT__CSV_AT
CT__GLUE_END
