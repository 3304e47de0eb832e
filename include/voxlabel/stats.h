/* voxlabel: per-component statistics of a label volume, and their CSV / JSON tables.
 *
 * Every column, its unit and its formula is documented in docs/csv.md. Conventions:
 *   - voxel indices are 0-based (x, y, z) with x fastest, as in vl_volume; world positions are LPS mm
 *     through the labels volume's geometry (origin, spacing, direction, shear included);
 *   - one entry per label 1..count, entry [k-1] is label k; a label absent from the volume gets
 *     voxels = 0 and NaN for every average (as MATLAB regionprops3 gives a row for each label);
 *   - intensity fields are NaN when no intensity volume is given;
 *   - integer fields are identical between the CPU and the GPU; floating fields agree within the
 *     tolerance stated in docs/csv.md. */
#ifndef VOXLABEL_STATS_H
#define VOXLABEL_STATS_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/device.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_stats_level {
    VL_STATS_BASIC = 0,  /* size, centroid, bounding box, intensity min/max/mean: one pass */
    VL_STATS_FULL        /* everything below; a second pass only for the exact intensity median */
} vl_stats_level;

/* Number of lattice line directions used by the Crofton surface estimate (3 axes, 6 face and 4 body diagonals). */
#define VL_STATS_DIRECTIONS 13

typedef struct vl_component_stats {
    /* ---- basic ---- */
    uint32_t label;
    uint64_t voxels;
    double volume_mm3;             /* voxels * |det(direction * diag(spacing))| */
    double centroid_voxel[3];      /* mean 0-based index (x, y, z) */
    double centroid_lps[3];        /* centroid_voxel mapped through the geometry, mm */
    int64_t bbox_min[3];           /* inclusive, 0-based */
    int64_t bbox_max[3];
    double intensity_min, intensity_max, intensity_mean;

    /* ---- full ---- */
    uint64_t border_voxels;        /* voxels on a face of the volume (x, y or z at 0 or n-1) */
    double bbox_extent_mm[3];      /* (bbox_max - bbox_min + 1) * spacing, per axis */
    double equivalent_diameter_mm; /* (6 volume_mm3 / pi)^(1/3) */
    double equivalent_diameter_voxels; /* MATLAB EquivDiameter: (6 voxels / pi)^(1/3) */
    double extent;                 /* voxels / bounding-box voxels */
    double principal_moments_mm2[3]; /* eigenvalues of the population covariance of voxel centres in LPS mm,
                                      * descending (ITK PrincipalMoments, which ITK lists ascending) */
    double principal_axes[9];      /* row-major; column c is the unit LPS axis of principal_moments_mm2[c] */
    double matlab_eigenvalues[3];  /* MATLAB EigenValues: eigenvalues of the index covariance + 1/12, descending */
    double matlab_axis_length[3];  /* MATLAB PrincipalAxisLength, current documentation: 2 sqrt(5 lambda) */
    double matlab_axis_length_old[3]; /* the same in older releases (R2021a era): 4 sqrt(lambda) */
    double elongation;             /* sqrt(m1 / m2) of principal_moments_mm2 (ITK Elongation); 0 when m2 = 0 */
    double flatness;               /* sqrt(m2 / m3) (ITK Flatness); 0 when m3 = 0 */
    uint64_t surface_faces;        /* voxel faces shared with another label, background or outside */
    double surface_area_faces_mm2; /* those faces, each with its physical area */
    double surface_area_mm2;       /* Crofton estimate over 13 directions (docs/csv.md), smoother than faces */
    double sphericity;             /* pi^(1/3) (6 volume_mm3)^(2/3) / surface_area_mm2 */
    double intensity_std;          /* population standard deviation (1/N), as scipy.ndimage.standard_deviation */
    double intensity_sum;
    double intensity_median;       /* exact: middle value, or the mean of the two middle values */
    double weighted_centroid_voxel[3]; /* sum(v * index) / sum(v), 0-based (MATLAB WeightedCentroid - 1) */
    double weighted_centroid_lps[3];
} vl_component_stats;

typedef struct vl_stats_options {
    vl_stats_level level;    /* default VL_STATS_BASIC */
    vl_device device;        /* default AUTO on GPU 0 */
    vl_device_outcome *outcome; /* when not NULL, filled with where the statistics ran */
    int threads;             /* CPU threads; 0 = all online cores */
    vl_progress progress;
} vl_stats_options;

void vl_stats_options_default(vl_stats_options *options);
/* Parses "basic" or "full". */
vl_status vl_stats_level_parse(const char *text, vl_stats_level *level);

/* Measures labels 1..count of `labels` (U8, U16 or U32; a voxel above `count` is VL_ERR_INPUT).
 * `intensity` (any dtype, same dimensions; may be NULL) supplies the HU for the intensity fields.
 * On success *stats holds `count` entries (NULL when count is 0); free them with vl_component_stats_free. */
vl_status vl_component_stats_compute(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                     const vl_stats_options *options, vl_component_stats **stats);

/* Same, forcing the CPU reference (what VL_DEVICE_CPU runs). */
vl_status vl_component_stats_compute_cpu(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                         const vl_stats_options *options, vl_component_stats **stats);

void vl_component_stats_free(vl_component_stats *stats);

typedef struct vl_csv_options {
    vl_stats_level level;    /* which columns: basic, or basic + full */
    int matlab_columns;      /* add the regionprops3-convention columns (docs/csv.md) */
    int intensity;           /* write the intensity columns (set when an intensity volume was given) */
    int force;               /* replace an existing file */
} vl_csv_options;

void vl_csv_options_default(vl_csv_options *options);

/* One header line, then one row per entry. Written atomically (temporary file, then rename). */
vl_status vl_component_stats_write_csv(const char *path, const vl_component_stats *stats, uint32_t count,
                                       const vl_csv_options *options);
/* The same columns as a JSON array of objects, one per component (NaN written as null). */
vl_status vl_component_stats_write_json(const char *path, const vl_component_stats *stats, uint32_t count,
                                        const vl_csv_options *options);

#ifdef __cplusplus
}
#endif
#endif
