/* data/csv.h - CSV files as tensors: numeric columns, a label column, column names.
 *
 * Format (RFC 4180, as Python's csv module and pandas.read_csv read it): records end with
 * "\n", "\r\n" or "\r"; fields are separated by the delimiter; a field that begins with the
 * quote character is quoted: it may hold delimiters, line breaks and doubled quotes ("" is
 * one "), and must be followed by a delimiter or the end of the record. Blank lines are
 * skipped (pandas' skip_blank_lines) and a leading UTF-8 byte order mark is ignored. Every
 * record must have as many fields as the first (the header). Limits: a field holds at most
 * CT_CSV_MAX_FIELD_BYTES bytes (after unquoting); no NUL bytes.
 *
 * Values: numeric fields are decimal numbers ("1", "-2.5e3", ".5", "inf", "nan", any case),
 * optionally surrounded by spaces or tabs, converted as Python's float() (strtod, correctly
 * rounded; "C" numeric locale) and then rounded to the column's dtype as numpy.loadtxt does.
 * Missing values are empty (or blank) fields and pandas' default NA tokens ("NA", "N/A",
 * "NaN", "nan", "-NaN", "-nan", "NULL", "null", "None", "n/a", "<NA>", "#N/A", "#N/A N/A",
 * "#NA", "-1.#IND", "-1.#QNAN", "1.#IND", "1.#QNAN"): NaN in float columns, or an error
 * (ct_csv_opts.missing). Integer columns (int64) take "[+-]digits" only.
 */
#define CT_CSV_MAX_FIELD_BYTES 65536

/* What a missing value becomes. */
typedef enum ct_csv_missing {
    CT_CSV_MISSING_NAN = 0, /* NaN (float columns; an error in int64 columns) */
    CT_CSV_MISSING_ERROR    /* an error naming the line and column */
} ct_csv_missing;

/* Options of ct_csv_load (NULL = ct_csv_defaults()).
   field            default        meaning
   header           true           the first record names the columns; false: the columns
                                   are named "0", "1", ... (pandas header=None)
   delimiter        ','            field separator (not the quote, '\r' or '\n')
   quotechar        '"'            quote character; '\0' turns quoting off
   dtype            CT_FLOAT32     dtype of `data`: CT_FLOAT32 or CT_FLOAT64
   label            NULL           name of the label column, read into `labels` (int64)
   int64_columns    NULL, 0        names of columns read as integers into `int64_data`
   skip_columns     NULL, 0        names of columns not read (text columns, ids)
   missing          CT_CSV_MISSING_NAN */
typedef struct ct_csv_opts {
    bool header;
    char delimiter;
    char quotechar;
    ct_dtype dtype;
    const char *label;
    const char *const *int64_columns;
    int64_t num_int64_columns;
    const char *const *skip_columns;
    int64_t num_skip_columns;
    ct_csv_missing missing;
} ct_csv_opts;

/* The defaults above. Mirrors: pandas.read_csv's defaults (header=0, sep=',',
   quotechar='"'). */
CTORCH_API ct_csv_opts ct_csv_defaults(void);

/* A loaded CSV file; free with ct_csv_free (which frees the tensors it holds: ct_retain one
   to keep it longer). Every other column, in file order, is in `data`. */
typedef struct ct_csv {
    int64_t rows;              /* data records (blank lines and the header not counted) */
    ct_tensor *data;           /* (rows, num_columns) float32 or float64 */
    int64_t num_columns;
    char **columns;            /* the names of data's columns */
    ct_tensor *int64_data;     /* (rows, num_int64_columns) int64, or NULL when none */
    int64_t num_int64_columns;
    char **int64_columns;      /* their names, in file order */
    ct_tensor *labels;         /* (rows,) int64 class ids, or NULL without opts.label */
    int64_t num_classes;       /* string labels: the number of distinct strings, else 0 */
    char **classes;            /* string labels: classes[id] is the string of class id, in
                                  sorted (byte) order; NULL for integer labels */
} ct_csv;

/* Parses CSV text held in memory (data may be freed afterwards).
   Shapes: data (rows, num_columns), int64_data (rows, num_int64_columns), labels (rows).
   dtypes: data opts->dtype; int64_data and labels int64. Labels: when every label field is
   an integer ("[+-]digits") the labels are those integers (num_classes 0, classes NULL);
   otherwise each distinct string (spaces and tabs around it removed) is a class, numbered in
   sorted byte order (classes lists them: numpy.unique(labels, return_inverse=True)).
   Returns: a new ct_csv, or NULL on error.
   Errors (lines and columns counted from 1, the header being line 1): CT_ERR_NULL_ARG;
   CT_ERR_VALUE for bad options (dtype, delimiter, a named column that does not exist:
   "ct_csv_load_buffer: no column named 'y' (columns: a, b)"); CT_ERR_FORMAT for an empty
   file, ragged rows ("Expected 4 fields in line 7, saw 3"), an overlong field ("field at
   line 2, column 3 is longer than CT_CSV_MAX_FIELD_BYTES (65536 bytes)"), an unterminated
   quote ("unterminated quoted field starting at line 5, column 1 (EOF inside string)"), a
   character after a closing quote, a NUL byte ("embedded NUL byte at line 3, column 2"), a
   field that is not a number ("could not convert string 'abc' to float32 at line 3, column 2
   ('x')"), a missing value under CT_CSV_MISSING_ERROR, in an int64 column or in the label
   column; CT_ERR_OOM.
   Mirrors: pandas.read_csv(io.StringIO(text)) split into features and label /
   numpy.loadtxt(..., delimiter=',', skiprows=1). */
CTORCH_API ct_csv *ct_csv_load_buffer(const void *data, size_t nbytes, const ct_csv_opts *opts);

#ifndef CTORCH_NO_STDIO
/* Reads the CSV file at path (memory-mapped where the OS has mmap, unless CTORCH_NO_MMAP).
   Returns and Errors: as ct_csv_load_buffer (with "ct_csv_load"), plus CT_ERR_IO when the
   file cannot be opened or read ("ct_csv_load: No such file or directory: 'x.csv'").
   Mirrors: pandas.read_csv(path). */
CTORCH_API ct_csv *ct_csv_load(const char *path, const ct_csv_opts *opts);
#endif

/* Frees csv, its names and its tensors (the caller's ct_retain-ed references stay valid).
   NULL is a no-op. */
CTORCH_API void ct_csv_free(ct_csv *csv);
