/* Internal: the table of CSV / JSON columns (src/stats/stats_columns.c), shared by both writers so that they
 * always agree with each other and with docs/csv.md. */
#ifndef VL_STATS_COLUMNS_H
#define VL_STATS_COLUMNS_H

#include <stddef.h>
#include <stdio.h>

#include "voxlabel/stats.h"

typedef struct vl_stats_column {
    const char *name;
    int level;      /* VL_STATS_BASIC or VL_STATS_FULL */
    int intensity;  /* needs an intensity volume */
    int matlab;     /* only with --matlab */
    unsigned extra; /* the VL_STATS_EXTRA_* group that computes it (0: the sums' finaliser) */
    int kind;       /* how the value is read from vl_component_stats (stats_columns.c) */
    size_t offset;
} vl_stats_column;

/* Columns selected by `options` (NULL: the defaults), in output order; returns how many were written to
 * `columns`. */
size_t vl_stats_columns_select(const vl_csv_options *options, const vl_stats_column **columns, size_t capacity);

/* Formats the column's value for `stats` into `out` (at least 32 bytes): an integer, a double with 12
 * significant digits (printf's %.12g), or `missing` for NaN. Returns the length written. */
size_t vl_stats_column_format(char *out, const vl_stats_column *column, const vl_component_stats *stats,
                              const char *missing);

/* A text column's value for `stats` (the class name; "" for a class without one), or NULL for a numeric
 * column, which vl_stats_column_format writes. */
const char *vl_stats_column_text(const vl_stats_column *column, const vl_component_stats *stats,
                                 const vl_csv_options *options);

/* Text columns hold at most this many bytes (a DICOM LO value is 64 characters). */
enum { VL_STATS_TEXT_MAX = 64 };

/* The column's value for `stats` as a number, as the CSV shows it: returns 1 and sets *integer for the integer
 * kinds (-1 for an index of an absent label), 0 and sets *real for the others (NaN where the cell is empty). */
int vl_stats_column_value(const vl_stats_column *column, const vl_component_stats *stats, int64_t *integer,
                          double *real);

/* Formats table row `row` into `line` (room for row_capacity bytes) and returns its length. */
typedef struct vl_row_writer {
    size_t (*format)(const void *context, uint32_t row, char *line);
    const void *context;
    size_t row_capacity;
} vl_row_writer;

/* Writes a table atomically to `path` (src/stats/stats_rows.c): `head`, rows 0..count-1 formatted on every core
 * and written in order, then `tail`. */
vl_status vl_write_table(const char *path, int force, const char *head, uint32_t count, const vl_row_writer *writer,
                         const char *tail);

#endif
