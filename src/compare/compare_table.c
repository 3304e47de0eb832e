/* Component-table comparison: our components CSV (with --matlab columns) against a MATLAB regionprops3 table
 * saved with writetable, which splits vector properties into Name_1, Name_2, ... columns. Columns are matched
 * by name, rows by position (row k = label k); a table whose rows only come in another order is reported as
 * the same components numbered differently. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/compare.h"

enum { TABLE_MAX_COLUMNS = 512, TABLE_MAX_LINE = 1 << 20 };

typedef struct csv_table {
    int columns;
    char names[TABLE_MAX_COLUMNS][64];
    int numeric[TABLE_MAX_COLUMNS];  /* every cell parsed as a number (NaN and empty cells allowed) */
    int64_t rows, capacity;
    double *cells;                   /* rows x columns */
} csv_table;

void vl_table_compare_options_default(vl_table_compare_options *options)
{
    options->relative_tolerance = 1e-6;
    options->absolute_tolerance = 1e-6;
}

void vl_table_compare_result_free(vl_table_compare_result *result)
{
    free(result->column);
    result->column = NULL;
}

/* Splits a CSV line in place (quotes removed; no embedded commas inside quotes are expected in these tables). */
static int split_fields(char *line, char **fields, int max_fields)
{
    int n = 0;
    char *p = line;
    size_t len = strlen(p);
    while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r'))
        p[--len] = '\0';
    while (n < max_fields) {
        char *end = strchr(p, ',');
        if (end)
            *end = '\0';
        while (*p == ' ')
            p++;
        size_t l = strlen(p);
        while (l > 0 && p[l - 1] == ' ')
            p[--l] = '\0';
        if (l >= 2 && p[0] == '"' && p[l - 1] == '"') {
            p[l - 1] = '\0';
            p++;
        }
        fields[n++] = p;
        if (!end)
            break;
        p = end + 1;
    }
    return n;
}

static int parse_cell(const char *text, double *value)
{
    if (*text == '\0' || strcmp(text, "NaN") == 0 || strcmp(text, "nan") == 0) {
        *value = NAN;
        return 1;
    }
    char *end;
    *value = strtod(text, &end);
    return *end == '\0';
}

static vl_status read_table(const char *path, csv_table *table)
{
    memset(table, 0, sizeof *table);
    FILE *in = fopen(path, "r");
    if (!in)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    char *line = malloc(TABLE_MAX_LINE);
    char **fields = malloc(TABLE_MAX_COLUMNS * sizeof(char *));
    vl_status status = line && fields ? VL_OK : vl_fail(VL_ERR_MEMORY, "%s: cannot allocate a line buffer", path);
    if (status == VL_OK && !fgets(line, TABLE_MAX_LINE, in))
        status = vl_fail(VL_ERR_INPUT, "%s: empty file (a CSV with a header row is expected)", path);
    if (status == VL_OK) {
        char *text = line;
        if ((unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb && (unsigned char)text[2] == 0xbf)
            text += 3; /* UTF-8 byte order mark, as some writetable versions emit */
        table->columns = split_fields(text, fields, TABLE_MAX_COLUMNS);
        for (int c = 0; c < table->columns; c++) {
            snprintf(table->names[c], sizeof table->names[c], "%s", fields[c]);
            table->numeric[c] = 1;
        }
    }
    while (status == VL_OK && fgets(line, TABLE_MAX_LINE, in)) {
        if (line[0] == '\n' || line[0] == '\r' || line[0] == '#')
            continue;
        int n = split_fields(line, fields, TABLE_MAX_COLUMNS);
        if (n != table->columns) {
            status = vl_fail(VL_ERR_INPUT, "%s: data row %lld has %d fields, the header %d", path,
                             (long long)table->rows + 1, n, table->columns);
            break;
        }
        if (table->rows == table->capacity) {
            int64_t capacity = table->capacity ? table->capacity * 2 : 256;
            double *grown = realloc(table->cells, (size_t)capacity * (size_t)table->columns * sizeof(double));
            if (!grown) {
                status = vl_fail(VL_ERR_MEMORY, "%s: cannot hold %lld rows", path, (long long)capacity);
                break;
            }
            table->cells = grown;
            table->capacity = capacity;
        }
        for (int c = 0; c < n; c++) {
            double value;
            if (!parse_cell(fields[c], &value)) {
                table->numeric[c] = 0;
                value = NAN;
            }
            table->cells[table->rows * table->columns + c] = value;
        }
        table->rows++;
    }
    free(line);
    free(fields);
    fclose(in);
    if (status != VL_OK) {
        free(table->cells);
        table->cells = NULL;
    }
    return status;
}

static int find_column(const csv_table *table, const char *name)
{
    for (int c = 0; c < table->columns; c++)
        if (strcmp(table->names[c], name) == 0)
            return c;
    return -1;
}

static int within(double a, double b, const vl_table_compare_options *options)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= options->absolute_tolerance + options->relative_tolerance * scale;
}

static void append_name(char *list, size_t size, const char *name)
{
    size_t used = strlen(list);
    if (used + strlen(name) + 3 < size)
        snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
}

/* Row sorting for the "same rows, other order" check: lexicographic on the shared columns (qsort has no
 * context argument in C11, hence the thread-local comparison state). */
static _Thread_local const double *sort_cells;
static _Thread_local const int *sort_columns;
static _Thread_local int sort_column_count, sort_stride;

static int compare_rows(const void *a, const void *b)
{
    const double *x = sort_cells + *(const int64_t *)a * sort_stride;
    const double *y = sort_cells + *(const int64_t *)b * sort_stride;
    for (int k = 0; k < sort_column_count; k++) {
        double u = x[sort_columns[k]], v = y[sort_columns[k]];
        if (u < v)
            return -1;
        if (u > v)
            return 1;
    }
    return 0;
}

static int64_t *sorted_rows(const csv_table *table, const int *columns, int count)
{
    int64_t *order = malloc((size_t)(table->rows ? table->rows : 1) * sizeof(int64_t));
    if (!order)
        return NULL;
    for (int64_t r = 0; r < table->rows; r++)
        order[r] = r;
    sort_cells = table->cells;
    sort_columns = columns;
    sort_column_count = count;
    sort_stride = table->columns;
    qsort(order, (size_t)table->rows, sizeof(int64_t), compare_rows);
    return order;
}

static int same_rows_reordered(const csv_table *ours, const csv_table *reference, const int *ours_columns,
                               const int *reference_columns, int count, const vl_table_compare_options *options)
{
    if (ours->rows != reference->rows)
        return 0;
    int64_t *a = sorted_rows(ours, ours_columns, count);
    int64_t *b = sorted_rows(reference, reference_columns, count);
    int same = a && b;
    for (int64_t r = 0; same && r < ours->rows; r++)
        for (int k = 0; k < count && same; k++)
            same = within(ours->cells[a[r] * ours->columns + ours_columns[k]],
                          reference->cells[b[r] * reference->columns + reference_columns[k]], options);
    free(a);
    free(b);
    return same;
}

vl_status vl_compare_tables(const char *ours_csv, const char *reference_csv, const vl_table_compare_options *options,
                            vl_table_compare_result *result)
{
    vl_table_compare_options defaults;
    if (!options) {
        vl_table_compare_options_default(&defaults);
        options = &defaults;
    }
    memset(result, 0, sizeof *result);
    csv_table *ours = calloc(1, sizeof *ours), *reference = calloc(1, sizeof *reference);
    int *ours_columns = malloc(TABLE_MAX_COLUMNS * sizeof(int)), *reference_columns = malloc(TABLE_MAX_COLUMNS * sizeof(int));
    vl_status status = ours && reference && ours_columns && reference_columns
                           ? VL_OK
                           : vl_fail(VL_ERR_MEMORY, "compare: cannot allocate the tables");
    if (status == VL_OK) {
        status = read_table(ours_csv, ours);
        if (status == VL_OK)
            status = read_table(reference_csv, reference);
    }
    int shared = 0;
    if (status == VL_OK) {
        for (int c = 0; c < ours->columns; c++) {
            int r = find_column(reference, ours->names[c]);
            if (r < 0)
                append_name(result->only_ours, sizeof result->only_ours, ours->names[c]);
            else if (ours->numeric[c] && reference->numeric[r]) {
                ours_columns[shared] = c;
                reference_columns[shared++] = r;
            }
        }
        for (int c = 0; c < reference->columns; c++)
            if (find_column(ours, reference->names[c]) < 0)
                append_name(result->only_reference, sizeof result->only_reference, reference->names[c]);
        if (shared == 0)
            status = vl_fail(VL_ERR_INPUT, "compare: %s and %s share no numeric column (MATLAB names such as Volume, "
                                           "Centroid_1 come from 'voxlabel stats --matlab')",
                             ours_csv, reference_csv);
    }
    if (status == VL_OK) {
        result->column = calloc((size_t)shared, sizeof *result->column);
        if (!result->column)
            status = vl_fail(VL_ERR_MEMORY, "compare: cannot allocate the column report");
    }
    if (status == VL_OK) {
        result->columns = shared;
        result->ours_rows = ours->rows;
        result->reference_rows = reference->rows;
        const int64_t rows = ours->rows < reference->rows ? ours->rows : reference->rows;
        int64_t failing = 0;
        for (int k = 0; k < shared; k++) {
            vl_table_column_report *report = &result->column[k];
            snprintf(report->name, sizeof report->name, "%s", ours->names[ours_columns[k]]);
            for (int64_t r = 0; r < rows; r++) {
                double a = ours->cells[r * ours->columns + ours_columns[k]];
                double b = reference->cells[r * reference->columns + reference_columns[k]];
                report->compared++;
                if (within(a, b, options))
                    continue;
                report->failing++;
                double difference = isnan(a) || isnan(b) ? INFINITY : fabs(a - b);
                if (report->worst_row == 0 || difference > report->max_abs_difference) {
                    report->max_abs_difference = difference;
                    report->worst_row = r + 1;
                }
            }
            failing += report->failing;
        }
        if (failing == 0 && ours->rows == reference->rows)
            result->verdict = VL_COMPARE_IDENTICAL;
        else if (same_rows_reordered(ours, reference, ours_columns, reference_columns, shared, options))
            result->verdict = VL_COMPARE_SAME_PARTITION;
        else
            result->verdict = VL_COMPARE_DIFFERENT;
    }
    if (ours)
        free(ours->cells);
    if (reference)
        free(reference->cells);
    free(ours);
    free(reference);
    free(ours_columns);
    free(reference_columns);
    if (status != VL_OK)
        vl_table_compare_result_free(result);
    return status;
}
