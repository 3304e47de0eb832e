/* voxlabel: comparing a labelling with a reference (MATLAB bwlabeln output, another tool's labels), and a
 * component table with a MATLAB regionprops3 table exported by writetable.
 *
 * Label verdicts:
 *   VL_COMPARE_IDENTICAL       every voxel has the same label;
 *   VL_COMPARE_SAME_PARTITION  the same components (same voxel sets, background alike), numbered differently;
 *                              the numbering rule of each side is identified when it is one of voxlabel's
 *                              orders (docs/design.md §4), possibly with z, y or both reversed, else "arbitrary permutation";
 *   VL_COMPARE_DIFFERENT       the components themselves differ. */
#ifndef VOXLABEL_COMPARE_H
#define VOXLABEL_COMPARE_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_compare_verdict {
    VL_COMPARE_IDENTICAL = 0,
    VL_COMPARE_SAME_PARTITION = 1,
    VL_COMPARE_DIFFERENT = 2
} vl_compare_verdict;

/* The verdict's name: "identical", "same partition, different numbering", "different". */
const char *vl_compare_verdict_name(vl_compare_verdict verdict);

enum { VL_COMPARE_MAX_SHOWN = 10 };

typedef struct vl_compare_difference {
    int64_t x, y, z;          /* 0-based voxel index (x = column, y = row, z = slice) */
    uint32_t ours, reference; /* the two labels there */
} vl_compare_difference;

typedef struct vl_compare_result {
    vl_compare_verdict verdict;
    int64_t voxels;                  /* voxels compared */
    uint32_t ours_components;        /* distinct nonzero labels */
    uint32_t reference_components;
    int64_t differing_voxels;        /* voxels whose labels differ as numbers */
    /* For DIFFERENT: voxels outside the best one-to-one matching of components (a component pair counts as
     * matched when each is the other's largest overlap), so renumbering alone adds nothing here. */
    int64_t unmatched_voxels;
    int64_t foreground_mismatch;     /* voxels that are background on one side only */
    uint32_t reference_split;        /* reference components covered by two or more of ours */
    uint32_t ours_merged;            /* our components covering two or more reference components */
    uint32_t ours_unmatched;         /* our components with no matched reference component (e.g. extra ones) */
    uint32_t reference_unmatched;    /* reference components with no matched component of ours (e.g. missing) */
    /* For SAME_PARTITION: "raster (matlab-xy) vs column-major (matlab) order", "arbitrary permutation", ... */
    char ours_rule[96];
    char reference_rule[96];
    char mapping_rule[256];
    /* The first voxels (x fastest) outside the matching (DIFFERENT) or whose numbers differ (SAME_PARTITION). */
    int shown;
    vl_compare_difference first[VL_COMPARE_MAX_SHOWN];
} vl_compare_result;

/* Compares two label volumes of equal dimensions. Any integer-valued voxel type is accepted (u8, u16, u32,
 * non-negative i16 or f32). VL_ERR_INPUT for different dimensions (naming a transposition or a z-flip when
 * that is what the shapes suggest) or for negative or fractional labels. */
vl_status vl_compare_labels(const vl_volume *ours, const vl_volume *reference, vl_compare_result *result);

/* ---- component tables (CSV) ---- */

typedef struct vl_table_compare_options {
    double relative_tolerance;  /* default 1e-6 */
    double absolute_tolerance;  /* default 1e-6 */
} vl_table_compare_options;

typedef struct vl_table_column_report {
    char name[64];
    int64_t compared;           /* rows compared in this column */
    int64_t failing;            /* rows beyond tolerance */
    double max_abs_difference;
    int64_t worst_row;          /* 1-based data row of the largest difference, 0 when none */
} vl_table_column_report;

typedef struct vl_table_compare_result {
    vl_compare_verdict verdict;  /* IDENTICAL: all within tolerance; SAME_PARTITION: the same rows in another
                                    order (numbering differs); DIFFERENT otherwise */
    int64_t ours_rows, reference_rows;
    int columns;                 /* columns present in both tables (matched by name) and compared */
    vl_table_column_report *column; /* `columns` entries; free with vl_table_compare_result_free */
    char only_ours[512];         /* comma-separated names present in one table only (not compared) */
    char only_reference[512];
} vl_table_compare_result;

void vl_table_compare_options_default(vl_table_compare_options *options);
/* Reads two CSV files with a header row and compares the numeric columns they share, row k against row k
 * (row k = label k, as in regionprops3). VL_ERR_INPUT when a file is unreadable or no column is shared. */
vl_status vl_compare_tables(const char *ours_csv, const char *reference_csv, const vl_table_compare_options *options,
                            vl_table_compare_result *result);
void vl_table_compare_result_free(vl_table_compare_result *result);

#ifdef __cplusplus
}
#endif
#endif
