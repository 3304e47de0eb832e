/* The CSV / JSON column table: one line per column, documented one for one in docs/csv.md. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format_number.h"
#include "stats/stats_columns.h"

enum {
    KIND_U32,          /* uint32_t */
    KIND_U64,          /* uint64_t */
    KIND_I64,          /* int64_t */
    KIND_F64,          /* double */
    KIND_F64_PLUS_ONE, /* double, 0-based index shown 1-based (MATLAB) */
    KIND_BOX_CORNER,   /* int64_t bbox_min[axis] shown as MATLAB's lower corner: min + 1 - 0.5 */
    KIND_BOX_WIDTH     /* int64_t bbox_min[axis]: max - min + 1 */
};

#define F(member) offsetof(vl_component_stats, member)
#define BASIC VL_STATS_BASIC
#define FULL VL_STATS_FULL

static const vl_stats_column columns[] = {
    {"label", BASIC, 0, 0, KIND_U32, F(label)},
    {"voxels", BASIC, 0, 0, KIND_U64, F(voxels)},
    {"volume_mm3", BASIC, 0, 0, KIND_F64, F(volume_mm3)},
    {"centroid_x", BASIC, 0, 0, KIND_F64, F(centroid_voxel[0])},
    {"centroid_y", BASIC, 0, 0, KIND_F64, F(centroid_voxel[1])},
    {"centroid_z", BASIC, 0, 0, KIND_F64, F(centroid_voxel[2])},
    {"centroid_l_mm", BASIC, 0, 0, KIND_F64, F(centroid_lps[0])},
    {"centroid_p_mm", BASIC, 0, 0, KIND_F64, F(centroid_lps[1])},
    {"centroid_s_mm", BASIC, 0, 0, KIND_F64, F(centroid_lps[2])},
    {"bbox_min_x", BASIC, 0, 0, KIND_I64, F(bbox_min[0])},
    {"bbox_min_y", BASIC, 0, 0, KIND_I64, F(bbox_min[1])},
    {"bbox_min_z", BASIC, 0, 0, KIND_I64, F(bbox_min[2])},
    {"bbox_max_x", BASIC, 0, 0, KIND_I64, F(bbox_max[0])},
    {"bbox_max_y", BASIC, 0, 0, KIND_I64, F(bbox_max[1])},
    {"bbox_max_z", BASIC, 0, 0, KIND_I64, F(bbox_max[2])},
    {"hu_mean", BASIC, 1, 0, KIND_F64, F(intensity_mean)},
    {"hu_min", BASIC, 1, 0, KIND_F64, F(intensity_min)},
    {"hu_max", BASIC, 1, 0, KIND_F64, F(intensity_max)},

    {"border_voxels", FULL, 0, 0, KIND_U64, F(border_voxels)},
    {"slice_first", FULL, 0, 0, KIND_I64, F(bbox_min[2])},
    {"slice_last", FULL, 0, 0, KIND_I64, F(bbox_max[2])},
    {"bbox_size_x_mm", FULL, 0, 0, KIND_F64, F(bbox_extent_mm[0])},
    {"bbox_size_y_mm", FULL, 0, 0, KIND_F64, F(bbox_extent_mm[1])},
    {"bbox_size_z_mm", FULL, 0, 0, KIND_F64, F(bbox_extent_mm[2])},
    {"equivalent_diameter_mm", FULL, 0, 0, KIND_F64, F(equivalent_diameter_mm)},
    {"extent", FULL, 0, 0, KIND_F64, F(extent)},
    {"principal_moment_1_mm2", FULL, 0, 0, KIND_F64, F(principal_moments_mm2[0])},
    {"principal_moment_2_mm2", FULL, 0, 0, KIND_F64, F(principal_moments_mm2[1])},
    {"principal_moment_3_mm2", FULL, 0, 0, KIND_F64, F(principal_moments_mm2[2])},
    {"principal_axis_1_l", FULL, 0, 0, KIND_F64, F(principal_axes[0])},
    {"principal_axis_1_p", FULL, 0, 0, KIND_F64, F(principal_axes[3])},
    {"principal_axis_1_s", FULL, 0, 0, KIND_F64, F(principal_axes[6])},
    {"principal_axis_2_l", FULL, 0, 0, KIND_F64, F(principal_axes[1])},
    {"principal_axis_2_p", FULL, 0, 0, KIND_F64, F(principal_axes[4])},
    {"principal_axis_2_s", FULL, 0, 0, KIND_F64, F(principal_axes[7])},
    {"principal_axis_3_l", FULL, 0, 0, KIND_F64, F(principal_axes[2])},
    {"principal_axis_3_p", FULL, 0, 0, KIND_F64, F(principal_axes[5])},
    {"principal_axis_3_s", FULL, 0, 0, KIND_F64, F(principal_axes[8])},
    {"matlab_eigenvalue_1", FULL, 0, 0, KIND_F64, F(matlab_eigenvalues[0])},
    {"matlab_eigenvalue_2", FULL, 0, 0, KIND_F64, F(matlab_eigenvalues[1])},
    {"matlab_eigenvalue_3", FULL, 0, 0, KIND_F64, F(matlab_eigenvalues[2])},
    {"principal_axis_length_1", FULL, 0, 0, KIND_F64, F(matlab_axis_length[0])},
    {"principal_axis_length_2", FULL, 0, 0, KIND_F64, F(matlab_axis_length[1])},
    {"principal_axis_length_3", FULL, 0, 0, KIND_F64, F(matlab_axis_length[2])},
    {"principal_axis_length_old_1", FULL, 0, 0, KIND_F64, F(matlab_axis_length_old[0])},
    {"principal_axis_length_old_2", FULL, 0, 0, KIND_F64, F(matlab_axis_length_old[1])},
    {"principal_axis_length_old_3", FULL, 0, 0, KIND_F64, F(matlab_axis_length_old[2])},
    {"elongation", FULL, 0, 0, KIND_F64, F(elongation)},
    {"flatness", FULL, 0, 0, KIND_F64, F(flatness)},
    {"surface_faces", FULL, 0, 0, KIND_U64, F(surface_faces)},
    {"surface_area_faces_mm2", FULL, 0, 0, KIND_F64, F(surface_area_faces_mm2)},
    {"surface_area_mm2", FULL, 0, 0, KIND_F64, F(surface_area_mm2)},
    {"sphericity", FULL, 0, 0, KIND_F64, F(sphericity)},
    {"hu_std", FULL, 1, 0, KIND_F64, F(intensity_std)},
    {"hu_sum", FULL, 1, 0, KIND_F64, F(intensity_sum)},
    {"hu_median", FULL, 1, 0, KIND_F64, F(intensity_median)},
    {"weighted_centroid_x", FULL, 1, 0, KIND_F64, F(weighted_centroid_voxel[0])},
    {"weighted_centroid_y", FULL, 1, 0, KIND_F64, F(weighted_centroid_voxel[1])},
    {"weighted_centroid_z", FULL, 1, 0, KIND_F64, F(weighted_centroid_voxel[2])},
    {"weighted_centroid_l_mm", FULL, 1, 0, KIND_F64, F(weighted_centroid_lps[0])},
    {"weighted_centroid_p_mm", FULL, 1, 0, KIND_F64, F(weighted_centroid_lps[1])},
    {"weighted_centroid_s_mm", FULL, 1, 0, KIND_F64, F(weighted_centroid_lps[2])},

    /* regionprops3 conventions: 1-based [x y z], half-voxel box corners, as writetable names split columns. */
    {"Volume", BASIC, 0, 1, KIND_U64, F(voxels)},
    {"Centroid_1", BASIC, 0, 1, KIND_F64_PLUS_ONE, F(centroid_voxel[0])},
    {"Centroid_2", BASIC, 0, 1, KIND_F64_PLUS_ONE, F(centroid_voxel[1])},
    {"Centroid_3", BASIC, 0, 1, KIND_F64_PLUS_ONE, F(centroid_voxel[2])},
    {"BoundingBox_1", BASIC, 0, 1, KIND_BOX_CORNER, F(bbox_min[0])},
    {"BoundingBox_2", BASIC, 0, 1, KIND_BOX_CORNER, F(bbox_min[1])},
    {"BoundingBox_3", BASIC, 0, 1, KIND_BOX_CORNER, F(bbox_min[2])},
    {"BoundingBox_4", BASIC, 0, 1, KIND_BOX_WIDTH, F(bbox_min[0])},
    {"BoundingBox_5", BASIC, 0, 1, KIND_BOX_WIDTH, F(bbox_min[1])},
    {"BoundingBox_6", BASIC, 0, 1, KIND_BOX_WIDTH, F(bbox_min[2])},
    {"EquivDiameter", BASIC, 0, 1, KIND_F64, F(equivalent_diameter_voxels)},
    {"Extent", BASIC, 0, 1, KIND_F64, F(extent)},
    {"MinIntensity", BASIC, 1, 1, KIND_F64, F(intensity_min)},
    {"MaxIntensity", BASIC, 1, 1, KIND_F64, F(intensity_max)},
    {"MeanIntensity", BASIC, 1, 1, KIND_F64, F(intensity_mean)},
    {"WeightedCentroid_1", BASIC, 1, 1, KIND_F64_PLUS_ONE, F(weighted_centroid_voxel[0])},
    {"WeightedCentroid_2", BASIC, 1, 1, KIND_F64_PLUS_ONE, F(weighted_centroid_voxel[1])},
    {"WeightedCentroid_3", BASIC, 1, 1, KIND_F64_PLUS_ONE, F(weighted_centroid_voxel[2])},
    {"EigenValues_1", FULL, 0, 1, KIND_F64, F(matlab_eigenvalues[0])},
    {"EigenValues_2", FULL, 0, 1, KIND_F64, F(matlab_eigenvalues[1])},
    {"EigenValues_3", FULL, 0, 1, KIND_F64, F(matlab_eigenvalues[2])},
    {"PrincipalAxisLength_1", FULL, 0, 1, KIND_F64, F(matlab_axis_length[0])},
    {"PrincipalAxisLength_2", FULL, 0, 1, KIND_F64, F(matlab_axis_length[1])},
    {"PrincipalAxisLength_3", FULL, 0, 1, KIND_F64, F(matlab_axis_length[2])},
};

size_t vl_stats_columns_select(const vl_csv_options *options, const vl_stats_column **selected, size_t capacity)
{
    vl_csv_options defaults;
    if (!options) {
        vl_csv_options_default(&defaults);
        options = &defaults;
    }
    size_t n = 0;
    for (size_t i = 0; i < sizeof columns / sizeof columns[0] && n < capacity; i++) {
        const vl_stats_column *c = &columns[i];
        if ((c->level == VL_STATS_FULL && options->level != VL_STATS_FULL) || (c->intensity && !options->intensity) ||
            (c->matlab && !options->matlab_columns))
            continue;
        selected[n++] = c;
    }
    return n;
}

static size_t format_text(char *out, const char *text)
{
    size_t n = 0;
    while (text[n]) {
        out[n] = text[n];
        n++;
    }
    return n;
}

static size_t format_double(char *out, double value, const char *missing)
{
    return isnan(value) || isinf(value) ? format_text(out, missing) : vl_format_g12(out, value);
}

size_t vl_stats_column_format(char *out, const vl_stats_column *column, const vl_component_stats *stats,
                              const char *missing)
{
    const char *at = (const char *)stats + column->offset;
    const int present = stats->voxels > 0;
    switch (column->kind) {
    case KIND_U32: return vl_format_unsigned(out, *(const uint32_t *)at);
    case KIND_U64: return vl_format_unsigned(out, *(const uint64_t *)at);
    case KIND_I64: return present ? vl_format_signed(out, *(const int64_t *)at) : format_text(out, missing);
    case KIND_F64: return format_double(out, *(const double *)at, missing);
    case KIND_F64_PLUS_ONE: return format_double(out, *(const double *)at + 1, missing);
    case KIND_BOX_CORNER: return format_double(out, present ? (double)*(const int64_t *)at + 0.5 : NAN, missing);
    case KIND_BOX_WIDTH: {
        const int64_t min = *(const int64_t *)at;
        const int64_t max = *(const int64_t *)(at + offsetof(vl_component_stats, bbox_max) -
                                               offsetof(vl_component_stats, bbox_min));
        return vl_format_unsigned(out, present ? (unsigned long long)(max - min + 1) : 0);
    }
    }
    return 0;
}

int vl_stats_column_value(const vl_stats_column *column, const vl_component_stats *stats, int64_t *integer,
                          double *real)
{
    const char *at = (const char *)stats + column->offset;
    const int present = stats->voxels > 0;
    switch (column->kind) {
    case KIND_U32: *integer = *(const uint32_t *)at; return 1;
    case KIND_U64: *integer = (int64_t)*(const uint64_t *)at; return 1;
    case KIND_I64: *integer = present ? *(const int64_t *)at : -1; return 1;
    case KIND_BOX_WIDTH: {
        const int64_t min = *(const int64_t *)at;
        const int64_t max = *(const int64_t *)(at + offsetof(vl_component_stats, bbox_max) -
                                               offsetof(vl_component_stats, bbox_min));
        *integer = present ? max - min + 1 : 0;
        return 1;
    }
    case KIND_F64: *real = *(const double *)at; return 0;
    case KIND_F64_PLUS_ONE: *real = *(const double *)at + 1; return 0;
    case KIND_BOX_CORNER: *real = present ? (double)*(const int64_t *)at + 0.5 : NAN; return 0;
    }
    *real = NAN;
    return 0;
}
