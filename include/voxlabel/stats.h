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
    uint32_t class_id;             /* the component's class when the labels come from a class map (0 otherwise) */
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
    double surface_area_crofton_mm2; /* Crofton estimate over 13 lattice directions (docs/csv.md) */
    double sphericity_crofton;     /* pi^(1/3) (6 volume_mm3)^(2/3) / surface_area_crofton_mm2 */
    double intensity_std;          /* population standard deviation (1/N), as scipy.ndimage.standard_deviation */
    double intensity_sum;
    double intensity_median;       /* exact: middle value, or the mean of the two middle values */
    double weighted_centroid_voxel[3]; /* sum(v * index) / sum(v), 0-based (MATLAB WeightedCentroid - 1) */
    double weighted_centroid_lps[3];
    double surface_area_itk_mm2;   /* ITK Perimeter: the same crossings with ITK's fixed (isotropic) weights */
    double roundness;              /* ITK Roundness: area of the ball of equal volume / surface_area_itk_mm2 */
    double equivalent_ellipsoid_diameter_mm[3]; /* ITK EquivalentEllipsoidDiameter, for principal_moments_mm2 */
    double matlab_eigenvectors[9]; /* MATLAB EigenVectors: row-major, column c for matlab_eigenvalues[c] */
    double matlab_orientation_deg[3]; /* MATLAB Orientation [roll pitch yaw] from matlab_eigenvectors (csv.md) */

    /* ---- extras: full level, each group only when its VL_STATS_EXTRA_* bit is set, else NaN ---- */
    double euler_number;           /* EULER: objects - tunnels + cavities at options.connectivity (6 or 26) */
    double perimeter_on_border_mm2;  /* VOXEL: faces on the volume's boundary (ITK PerimeterOnBorder) */
    double perimeter_on_border_ratio; /* VOXEL: perimeter_on_border_mm2 / surface_area_itk_mm2 (ITK) */
    double intensity_skewness;     /* VOXEL with intensity: m3 / m2^1.5 (population, scipy.stats.skew) */
    double intensity_kurtosis;     /* VOXEL with intensity: m4 / m2^2 - 3 (excess, scipy.stats.kurtosis) */
    double surface_area_mm2;       /* SURFACE: faces weighted by the smoothed surface normal (docs/csv.md) */
    double sphericity;             /* SURFACE: pi^(1/3) (6 volume_mm3)^(2/3) / surface_area_mm2 */
    double convex_hull_vertices;   /* HULL: vertices of the convex hull of the voxel corners */
    double convex_volume_voxels;   /* HULL: its volume in voxel units (exact) */
    double convex_volume_mm3;      /* HULL: the same in mm^3 */
    double solidity;               /* HULL: voxels / convex_volume_voxels */
    double feret_max_mm;           /* HULL: largest distance between two hull vertices (corners), mm */
    double feret_max_a_lps[3], feret_max_b_lps[3];
    double feret_min_mm;           /* HULL: smallest width over the hull's face normals, mm */
    double feret_min_a_lps[3], feret_min_b_lps[3]; /* a hull vertex and its foot on the opposite face */
    double obb_centre_lps[3];      /* HULL: box of the hull along principal_axes (ITK OrientedBoundingBox) */
    double obb_size_mm[3];         /* along principal axis 1, 2, 3 */
} vl_component_stats;

/* Groups of expensive full-level columns, computed on the CPU from the label volume for either backend. */
enum {
    VL_STATS_EXTRA_HULL = 1,  /* convex hull, convex volume, solidity, Feret diameters, oriented box */
    VL_STATS_EXTRA_EULER = 2, /* Euler number */
    VL_STATS_EXTRA_VOXEL = 4, /* perimeter on border, intensity skewness and kurtosis */
    VL_STATS_EXTRA_SURFACE = 8, /* surface area from normal-weighted faces, and the sphericity from it */
    VL_STATS_EXTRA_ALL = 15
};

/* The convex hull of every component, as vertices (vl_stats_options.hulls). */
typedef struct vl_convex_hulls {
    uint32_t count;            /* components: label k has vertices offset[k-1] .. offset[k] - 1 */
    uint64_t *offset;          /* count + 1 entries */
    int64_t (*corner)[3];      /* vertices as voxel-corner indices: corner c is the point c - 1/2 in voxel
                                * index space (voxel i spans i - 1/2 .. i + 1/2), MATLAB's c + 1/2 */
} vl_convex_hulls;

void vl_convex_hulls_free(vl_convex_hulls *hulls);
/* CSV: label, MATLAB's 1-based x, y, z of each vertex (as regionprops3's ConvexHull rows) and its LPS mm. */
vl_status vl_convex_hulls_write_csv(const char *path, const vl_convex_hulls *hulls, const vl_geometry *geometry,
                                    int force);

typedef struct vl_stats_options {
    vl_stats_level level;    /* default VL_STATS_BASIC */
    vl_device device;        /* default AUTO on GPU 0 */
    vl_device_outcome *outcome; /* when not NULL, filled with where the statistics ran */
    int threads;             /* CPU threads; 0 = all online cores */
    unsigned extras;         /* VL_STATS_EXTRA_* groups computed at the full level; default all */
    int connectivity;        /* of the labelling, for the Euler number: 6, 18 or 26 (default 26) */
    vl_convex_hulls *hulls;  /* when not NULL and the hull group runs: filled with every hull's vertices */
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
    const char *columns;     /* comma-separated column names to write, in that order (NULL: the level's) */
    int class_column;        /* write `class` (vl_component_stats.class_id) after `label`: components of a class map */
    const char *const *class_names; /* with class_column: class_names[c - 1] names class c for c <= class_name_count,
                                     * and a `class_name` text column follows `class` (NULL: no such column) */
    uint32_t class_name_count;
} vl_csv_options;

/* Checks a --columns list: every name must exist. Sets *level to the level the named columns need and
 * *extras to the VL_STATS_EXTRA_* groups they need. */
vl_status vl_stats_columns_parse(const char *list, vl_stats_level *level, unsigned *extras);

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
