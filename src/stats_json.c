/* Per-component JSON: an array of flat objects with the CSV's column names (NaN becomes null). */
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "stats_columns.h"
#include "status.h"

vl_status vl_component_stats_write_json(const char *path, const vl_component_stats *stats, uint32_t count,
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
    int failed = fputs("[", out) == EOF;
    /* The keys ("name": ) are formatted once; each object is built in one buffer and written with one call. */
    enum { key_size = 48 };
    char keys[sizeof columns / sizeof columns[0]][key_size];
    size_t key_length[sizeof columns / sizeof columns[0]];
    for (size_t c = 0; c < n; c++)
        key_length[c] = (size_t)snprintf(keys[c], key_size, "%s\"%s\": ", c ? ", " : "", columns[c]->name);
    char line[sizeof columns / sizeof columns[0] * (key_size + 34) + 8];
    for (uint32_t k = 0; k < count && !failed; k++) {
        size_t length = (size_t)snprintf(line, 8, "%s", k ? ",\n {" : "\n {");
        for (size_t c = 0; c < n; c++) {
            memcpy(line + length, keys[c], key_length[c]);
            length += key_length[c];
            length += vl_stats_column_format(line + length, columns[c], &stats[k], "null");
        }
        line[length++] = '}';
        failed |= fwrite(line, 1, length, out) != length;
    }
    fputs("\n]\n", out); /* a failed write shows in ferror when the stream is closed */
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}
