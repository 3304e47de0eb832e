/* components.csv: a header line, then one row per component; columns from src/stats/stats_columns.c. */
#include <stdio.h>

#include "stats/stats_columns.h"

typedef struct csv_rows {
    const vl_stats_column *const *columns;
    size_t count;
    const vl_component_stats *stats;
    const vl_csv_options *options;
} csv_rows;

/* A text field in double quotes, inner quotes doubled, at most VL_STATS_TEXT_MAX bytes of it. */
static size_t format_csv_text(char *out, const char *text)
{
    size_t length = 0;
    out[length++] = '"';
    for (size_t i = 0; text[i] && i < VL_STATS_TEXT_MAX; i++) {
        if (text[i] == '"')
            out[length++] = '"';
        out[length++] = text[i];
    }
    out[length++] = '"';
    return length;
}

static size_t format_csv_row(const void *context, uint32_t row, char *line)
{
    const csv_rows *rows = context;
    size_t length = 0;
    for (size_t c = 0; c < rows->count; c++) {
        if (c)
            line[length++] = ',';
        const char *text = vl_stats_column_text(rows->columns[c], &rows->stats[row], rows->options);
        length += text ? format_csv_text(line + length, text)
                       : vl_stats_column_format(line + length, rows->columns[c], &rows->stats[row], "");
    }
    line[length++] = '\n';
    return length;
}

vl_status vl_component_stats_write_csv(const char *path, const vl_component_stats *stats, uint32_t count,
                                       const vl_csv_options *options)
{
    const vl_stats_column *columns[256];
    const size_t n = vl_stats_columns_select(options, columns, sizeof columns / sizeof columns[0]);
    char head[sizeof columns / sizeof columns[0] * 48 + 2];
    size_t length = 0;
    for (size_t c = 0; c < n; c++)
        length += (size_t)snprintf(head + length, sizeof head - length, "%s%s", c ? "," : "", columns[c]->name);
    snprintf(head + length, sizeof head - length, "\n");
    /* At most 32 bytes a numeric field, 2 * VL_STATS_TEXT_MAX + 2 a text one, a separator each and the newline. */
    vl_csv_options defaults;
    if (!options) {
        vl_csv_options_default(&defaults);
        options = &defaults;
    }
    const csv_rows rows = {columns, n, stats, options};
    const vl_row_writer writer = {format_csv_row, &rows, n * (2 * VL_STATS_TEXT_MAX + 3) + 2};
    return vl_write_table(path, options->force, head, count, &writer, "");
}
