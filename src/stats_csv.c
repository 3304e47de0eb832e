/* components.csv: a header line, then one row per component; columns from src/stats_columns.c. */
#include <stdio.h>

#include "atomic_file.h"
#include "stats_columns.h"
#include "status.h"

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
    int failed = 0;
    for (size_t c = 0; c < n; c++)
        failed |= fprintf(out, "%s%s", c ? "," : "", columns[c]->name) < 0;
    failed |= fputc('\n', out) == EOF;
    /* Each row is formatted into one buffer (at most 32 bytes a field) and written with one call. */
    char line[sizeof columns / sizeof columns[0] * 34 + 2];
    for (uint32_t k = 0; k < count && !failed; k++) {
        size_t length = 0;
        for (size_t c = 0; c < n; c++) {
            if (c)
                line[length++] = ',';
            length += vl_stats_column_format(line + length, columns[c], &stats[k], "");
        }
        line[length++] = '\n';
        failed |= fwrite(line, 1, length, out) != length;
    }
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}
