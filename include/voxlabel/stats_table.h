/* voxlabel: component statistics as columns, for callers that hold tables rather than rows (Python, R,
 * Arrow). The columns, their names, order and units are exactly those of the CSV writer (docs/csv.md). */
#ifndef VOXLABEL_STATS_TABLE_H
#define VOXLABEL_STATS_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_stats_column_type {
    VL_COLUMN_INT64 = 0,  /* labels, counts and voxel indices; -1 for an index of a label absent from the volume */
    VL_COLUMN_FLOAT64     /* everything else; NaN where the CSV leaves the cell empty */
} vl_stats_column_type;

/* Number of columns `options` selects (NULL: the defaults), in the CSV's order. */
size_t vl_stats_table_column_count(const vl_csv_options *options);

/* Name and type of selected column `column` (0-based); NULL when `column` is out of range. */
const char *vl_stats_table_column(const vl_csv_options *options, size_t column, vl_stats_column_type *type);

/* Writes column `column` of the `count` entries of `stats` into `out`: `count` int64_t or double values
 * according to the column's type. VL_ERR_ARGUMENT when `column` is out of range. */
vl_status vl_stats_table_fill(const vl_component_stats *stats, uint32_t count, const vl_csv_options *options,
                              size_t column, void *out);

#ifdef __cplusplus
}
#endif
#endif
