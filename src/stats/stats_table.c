/* Component statistics as columns (include/voxlabel/stats_table.h), read through the CSV's column table so
 * that names, order and values never drift from the CSV. */
#include <stdint.h>

#include "stats/stats_columns.h"
#include "voxlabel/stats_table.h"

enum { TABLE_CAPACITY = 256 };

/* The numeric columns of the selection: a table column is an int64 or float64 array. */
static size_t selected_columns(const vl_csv_options *options, const vl_stats_column **columns)
{
    const size_t selected = vl_stats_columns_select(options, columns, TABLE_CAPACITY);
    const vl_component_stats probe = {0};
    size_t n = 0;
    for (size_t c = 0; c < selected; c++)
        if (!vl_stats_column_text(columns[c], &probe, options))
            columns[n++] = columns[c];
    return n;
}

size_t vl_stats_table_column_count(const vl_csv_options *options)
{
    const vl_stats_column *columns[TABLE_CAPACITY];
    return selected_columns(options, columns);
}

const char *vl_stats_table_column(const vl_csv_options *options, size_t column, vl_stats_column_type *type)
{
    const vl_stats_column *columns[TABLE_CAPACITY];
    if (column >= selected_columns(options, columns))
        return NULL;
    if (type) {
        vl_component_stats probe = {0};
        int64_t integer;
        double real;
        *type = vl_stats_column_value(columns[column], &probe, &integer, &real) ? VL_COLUMN_INT64 : VL_COLUMN_FLOAT64;
    }
    return columns[column]->name;
}

vl_status vl_stats_table_fill(const vl_component_stats *stats, uint32_t count, const vl_csv_options *options,
                              size_t column, void *out)
{
    const vl_stats_column *columns[TABLE_CAPACITY];
    size_t n = selected_columns(options, columns);
    if (column >= n)
        return vl_fail(VL_ERR_ARGUMENT, "statistics: column %zu of %zu does not exist", column, n);
    for (uint32_t row = 0; row < count; row++) {
        int64_t integer = 0;
        double real = 0;
        if (vl_stats_column_value(columns[column], &stats[row], &integer, &real))
            ((int64_t *)out)[row] = integer;
        else
            ((double *)out)[row] = real;
    }
    return VL_OK;
}
