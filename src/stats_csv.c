/* components.csv: a header line, then one row per component; columns from src/stats_columns.c. */
#include <stdio.h>

#include "atomic_file.h"
#include "stats_columns.h"
#include "status.h"

typedef struct csv_rows {
    const vl_stats_column *const *columns;
    size_t count;
    const vl_component_stats *stats;
} csv_rows;

static size_t format_csv_row(const void *context, uint32_t row, char *line)
{
    const csv_rows *rows = context;
    size_t length = 0;
    for (size_t c = 0; c < rows->count; c++) {
        if (c)
            line[length++] = ',';
        length += vl_stats_column_format(line + length, rows->columns[c], &rows->stats[row], "");
    }
    line[length++] = '\n';
    return length;
}

vl_status vl_component_stats_write_csv(const char *path, const vl_component_stats *stats, uint32_t count,
                                       const vl_csv_options *options)
{
    vl_csv_options defaults;
    if (!options) {
        vl_csv_options_default(&defaults);
        options = &defaults;
    }
    const vl_stats_column *columns[128];
    const size_t n = vl_stats_columns_select(options, columns, sizeof columns / sizeof columns[0]);
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, options->force, "w", &out);
    if (status != VL_OK)
        return status;
    char buffer[1 << 16];
    setvbuf(out, buffer, _IOFBF, sizeof buffer);
    for (size_t c = 0; c < n; c++)
        fprintf(out, "%s%s", c ? "," : "", columns[c]->name);
    fputc('\n', out);
    /* At most 32 bytes a field, a separator each and the newline. */
    const csv_rows rows = {columns, n, stats};
    const vl_row_writer writer = {format_csv_row, &rows, n * 33 + 2};
    status = vl_write_rows(out, count, &writer);
    return vl_atomic_file_close_stream(&file, out, status);
}
