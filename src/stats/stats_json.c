/* Per-component JSON: an array of flat objects with the CSV's column names (NaN becomes null). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats_columns.h"
#include "voxlabel/error.h"

enum { key_size = 48, max_columns = 256 };

typedef struct json_rows {
    size_t count;
    const vl_component_stats *stats;
    vl_csv_options options;
    const vl_stats_column *columns[max_columns];
    char keys[max_columns][key_size]; /* ("name": ), formatted once */
    size_t key_length[max_columns];
} json_rows;

/* A JSON string of at most VL_STATS_TEXT_MAX bytes of `text`: quotes, backslashes and control characters
 * escaped (6 bytes at most each). */
static size_t format_json_text(char *out, const char *text)
{
    size_t length = 0;
    out[length++] = '"';
    for (size_t i = 0; text[i] && i < VL_STATS_TEXT_MAX; i++) {
        const unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') {
            out[length++] = '\\';
            out[length++] = (char)c;
        } else if (c < 0x20) {
            length += (size_t)snprintf(out + length, 7, "\\u%04x", c);
        } else {
            out[length++] = (char)c;
        }
    }
    out[length++] = '"';
    return length;
}

static size_t format_json_row(const void *context, uint32_t row, char *line)
{
    const json_rows *rows = context;
    size_t length = row ? 4 : 3;
    memcpy(line, row ? ",\n {" : "\n {", length);
    for (size_t c = 0; c < rows->count; c++) {
        memcpy(line + length, rows->keys[c], rows->key_length[c]);
        length += rows->key_length[c];
        const char *text = vl_stats_column_text(rows->columns[c], &rows->stats[row], &rows->options);
        length += text ? format_json_text(line + length, text)
                       : vl_stats_column_format(line + length, rows->columns[c], &rows->stats[row], "null");
    }
    line[length++] = '}';
    return length;
}

vl_status vl_component_stats_write_json(const char *path, const vl_component_stats *stats, uint32_t count,
                                        const vl_csv_options *options)
{
    json_rows *rows = malloc(sizeof *rows);
    if (!rows)
        return vl_fail(VL_ERR_MEMORY, "stats: no memory for the JSON writer");
    rows->stats = stats;
    if (options)
        rows->options = *options;
    else
        vl_csv_options_default(&rows->options);
    rows->count = vl_stats_columns_select(&rows->options, rows->columns, max_columns);
    for (size_t c = 0; c < rows->count; c++)
        rows->key_length[c] =
            (size_t)snprintf(rows->keys[c], key_size, "%s\"%s\": ", c ? ", " : "", rows->columns[c]->name);
    const vl_row_writer writer = {format_json_row, rows, rows->count * (key_size + 6 * VL_STATS_TEXT_MAX + 2) + 8};
    const vl_status status = vl_write_table(path, rows->options.force, "[", count, &writer, "\n]\n");
    free(rows);
    return status;
}
