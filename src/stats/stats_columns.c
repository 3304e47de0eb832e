/* The CSV / JSON column table: one line per column, documented one for one in docs/csv.md. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format_number.h"
#include "stats/stats_columns.h"
#include "voxlabel/error.h"

enum {
    KIND_U32,          /* uint32_t */
    KIND_CLASS,        /* uint32_t, a class map's class: only with vl_csv_options.class_column */
    KIND_CLASS_NAME,   /* text: the name of class_id, only with vl_csv_options.class_names */
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
#define HULL VL_STATS_EXTRA_HULL
#define EULER VL_STATS_EXTRA_EULER
#define VOXEL VL_STATS_EXTRA_VOXEL
#define SURFACE VL_STATS_EXTRA_SURFACE

static const vl_stats_column columns[] = {
    {"label", BASIC, 0, 0, 0, KIND_U32, F(label)},
    {"class", BASIC, 0, 0, 0, KIND_CLASS, F(class_id)},
    {"class_name", BASIC, 0, 0, 0, KIND_CLASS_NAME, F(class_id)},
    {"voxels", BASIC, 0, 0, 0, KIND_U64, F(voxels)},
    {"volume_mm3", BASIC, 0, 0, 0, KIND_F64, F(volume_mm3)},
    {"centroid_x", BASIC, 0, 0, 0, KIND_F64, F(centroid_voxel[0])},
    {"centroid_y", BASIC, 0, 0, 0, KIND_F64, F(centroid_voxel[1])},
    {"centroid_z", BASIC, 0, 0, 0, KIND_F64, F(centroid_voxel[2])},
    {"centroid_l_mm", BASIC, 0, 0, 0, KIND_F64, F(centroid_lps[0])},
    {"centroid_p_mm", BASIC, 0, 0, 0, KIND_F64, F(centroid_lps[1])},
    {"centroid_s_mm", BASIC, 0, 0, 0, KIND_F64, F(centroid_lps[2])},
    {"bbox_min_x", BASIC, 0, 0, 0, KIND_I64, F(bbox_min[0])},
    {"bbox_min_y", BASIC, 0, 0, 0, KIND_I64, F(bbox_min[1])},
    {"bbox_min_z", BASIC, 0, 0, 0, KIND_I64, F(bbox_min[2])},
    {"bbox_max_x", BASIC, 0, 0, 0, KIND_I64, F(bbox_max[0])},
    {"bbox_max_y", BASIC, 0, 0, 0, KIND_I64, F(bbox_max[1])},
    {"bbox_max_z", BASIC, 0, 0, 0, KIND_I64, F(bbox_max[2])},
    {"hu_mean", BASIC, 1, 0, 0, KIND_F64, F(intensity_mean)},
    {"hu_min", BASIC, 1, 0, 0, KIND_F64, F(intensity_min)},
    {"hu_max", BASIC, 1, 0, 0, KIND_F64, F(intensity_max)},

    {"border_voxels", FULL, 0, 0, 0, KIND_U64, F(border_voxels)},
    {"slice_first", FULL, 0, 0, 0, KIND_I64, F(bbox_min[2])},
    {"slice_last", FULL, 0, 0, 0, KIND_I64, F(bbox_max[2])},
    {"bbox_size_x_mm", FULL, 0, 0, 0, KIND_F64, F(bbox_extent_mm[0])},
    {"bbox_size_y_mm", FULL, 0, 0, 0, KIND_F64, F(bbox_extent_mm[1])},
    {"bbox_size_z_mm", FULL, 0, 0, 0, KIND_F64, F(bbox_extent_mm[2])},
    {"equivalent_diameter_mm", FULL, 0, 0, 0, KIND_F64, F(equivalent_diameter_mm)},
    {"extent", FULL, 0, 0, 0, KIND_F64, F(extent)},
    {"principal_moment_1_mm2", FULL, 0, 0, 0, KIND_F64, F(principal_moments_mm2[0])},
    {"principal_moment_2_mm2", FULL, 0, 0, 0, KIND_F64, F(principal_moments_mm2[1])},
    {"principal_moment_3_mm2", FULL, 0, 0, 0, KIND_F64, F(principal_moments_mm2[2])},
    {"principal_axis_1_l", FULL, 0, 0, 0, KIND_F64, F(principal_axes[0])},
    {"principal_axis_1_p", FULL, 0, 0, 0, KIND_F64, F(principal_axes[3])},
    {"principal_axis_1_s", FULL, 0, 0, 0, KIND_F64, F(principal_axes[6])},
    {"principal_axis_2_l", FULL, 0, 0, 0, KIND_F64, F(principal_axes[1])},
    {"principal_axis_2_p", FULL, 0, 0, 0, KIND_F64, F(principal_axes[4])},
    {"principal_axis_2_s", FULL, 0, 0, 0, KIND_F64, F(principal_axes[7])},
    {"principal_axis_3_l", FULL, 0, 0, 0, KIND_F64, F(principal_axes[2])},
    {"principal_axis_3_p", FULL, 0, 0, 0, KIND_F64, F(principal_axes[5])},
    {"principal_axis_3_s", FULL, 0, 0, 0, KIND_F64, F(principal_axes[8])},
    {"matlab_eigenvalue_1", FULL, 0, 0, 0, KIND_F64, F(matlab_eigenvalues[0])},
    {"matlab_eigenvalue_2", FULL, 0, 0, 0, KIND_F64, F(matlab_eigenvalues[1])},
    {"matlab_eigenvalue_3", FULL, 0, 0, 0, KIND_F64, F(matlab_eigenvalues[2])},
    {"principal_axis_length_1", FULL, 0, 0, 0, KIND_F64, F(matlab_axis_length[0])},
    {"principal_axis_length_2", FULL, 0, 0, 0, KIND_F64, F(matlab_axis_length[1])},
    {"principal_axis_length_3", FULL, 0, 0, 0, KIND_F64, F(matlab_axis_length[2])},
    {"principal_axis_length_old_1", FULL, 0, 0, 0, KIND_F64, F(matlab_axis_length_old[0])},
    {"principal_axis_length_old_2", FULL, 0, 0, 0, KIND_F64, F(matlab_axis_length_old[1])},
    {"principal_axis_length_old_3", FULL, 0, 0, 0, KIND_F64, F(matlab_axis_length_old[2])},
    {"elongation", FULL, 0, 0, 0, KIND_F64, F(elongation)},
    {"flatness", FULL, 0, 0, 0, KIND_F64, F(flatness)},
    {"surface_faces", FULL, 0, 0, 0, KIND_U64, F(surface_faces)},
    {"surface_area_faces_mm2", FULL, 0, 0, 0, KIND_F64, F(surface_area_faces_mm2)},
    {"surface_area_mm2", FULL, 0, 0, SURFACE, KIND_F64, F(surface_area_mm2)},
    {"sphericity", FULL, 0, 0, SURFACE, KIND_F64, F(sphericity)},
    {"surface_area_crofton_mm2", FULL, 0, 0, 0, KIND_F64, F(surface_area_crofton_mm2)},
    {"sphericity_crofton", FULL, 0, 0, 0, KIND_F64, F(sphericity_crofton)},
    {"surface_area_itk_mm2", FULL, 0, 0, 0, KIND_F64, F(surface_area_itk_mm2)},
    {"roundness", FULL, 0, 0, 0, KIND_F64, F(roundness)},
    {"equivalent_ellipsoid_diameter_1_mm", FULL, 0, 0, 0, KIND_F64, F(equivalent_ellipsoid_diameter_mm[0])},
    {"equivalent_ellipsoid_diameter_2_mm", FULL, 0, 0, 0, KIND_F64, F(equivalent_ellipsoid_diameter_mm[1])},
    {"equivalent_ellipsoid_diameter_3_mm", FULL, 0, 0, 0, KIND_F64, F(equivalent_ellipsoid_diameter_mm[2])},
    {"perimeter_on_border_mm2", FULL, 0, 0, VOXEL, KIND_F64, F(perimeter_on_border_mm2)},
    {"perimeter_on_border_ratio", FULL, 0, 0, VOXEL, KIND_F64, F(perimeter_on_border_ratio)},
    {"euler_number", FULL, 0, 0, EULER, KIND_F64, F(euler_number)},
    {"convex_volume_mm3", FULL, 0, 0, HULL, KIND_F64, F(convex_volume_mm3)},
    {"convex_volume_voxels", FULL, 0, 0, HULL, KIND_F64, F(convex_volume_voxels)},
    {"solidity", FULL, 0, 0, HULL, KIND_F64, F(solidity)},
    {"convex_hull_vertices", FULL, 0, 0, HULL, KIND_F64, F(convex_hull_vertices)},
    {"feret_max_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_mm)},
    {"feret_max_a_l_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_a_lps[0])},
    {"feret_max_a_p_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_a_lps[1])},
    {"feret_max_a_s_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_a_lps[2])},
    {"feret_max_b_l_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_b_lps[0])},
    {"feret_max_b_p_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_b_lps[1])},
    {"feret_max_b_s_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_max_b_lps[2])},
    {"feret_min_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_mm)},
    {"feret_min_a_l_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_a_lps[0])},
    {"feret_min_a_p_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_a_lps[1])},
    {"feret_min_a_s_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_a_lps[2])},
    {"feret_min_b_l_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_b_lps[0])},
    {"feret_min_b_p_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_b_lps[1])},
    {"feret_min_b_s_mm", FULL, 0, 0, HULL, KIND_F64, F(feret_min_b_lps[2])},
    {"obb_centre_l_mm", FULL, 0, 0, HULL, KIND_F64, F(obb_centre_lps[0])},
    {"obb_centre_p_mm", FULL, 0, 0, HULL, KIND_F64, F(obb_centre_lps[1])},
    {"obb_centre_s_mm", FULL, 0, 0, HULL, KIND_F64, F(obb_centre_lps[2])},
    {"obb_size_1_mm", FULL, 0, 0, HULL, KIND_F64, F(obb_size_mm[0])},
    {"obb_size_2_mm", FULL, 0, 0, HULL, KIND_F64, F(obb_size_mm[1])},
    {"obb_size_3_mm", FULL, 0, 0, HULL, KIND_F64, F(obb_size_mm[2])},
    {"hu_std", FULL, 1, 0, 0, KIND_F64, F(intensity_std)},
    {"hu_sum", FULL, 1, 0, 0, KIND_F64, F(intensity_sum)},
    {"hu_median", FULL, 1, 0, 0, KIND_F64, F(intensity_median)},
    {"weighted_centroid_x", FULL, 1, 0, 0, KIND_F64, F(weighted_centroid_voxel[0])},
    {"weighted_centroid_y", FULL, 1, 0, 0, KIND_F64, F(weighted_centroid_voxel[1])},
    {"weighted_centroid_z", FULL, 1, 0, 0, KIND_F64, F(weighted_centroid_voxel[2])},
    {"weighted_centroid_l_mm", FULL, 1, 0, 0, KIND_F64, F(weighted_centroid_lps[0])},
    {"weighted_centroid_p_mm", FULL, 1, 0, 0, KIND_F64, F(weighted_centroid_lps[1])},
    {"weighted_centroid_s_mm", FULL, 1, 0, 0, KIND_F64, F(weighted_centroid_lps[2])},
    {"hu_skewness", FULL, 1, 0, VOXEL, KIND_F64, F(intensity_skewness)},
    {"hu_kurtosis", FULL, 1, 0, VOXEL, KIND_F64, F(intensity_kurtosis)},

    /* regionprops3 conventions, in its table's order: 1-based [x y z], half-voxel box corners, and the names
     * writetable gives the columns of a multi-column variable (matrices column by column). */
    {"Volume", BASIC, 0, 1, 0, KIND_U64, F(voxels)},
    {"Centroid_1", BASIC, 0, 1, 0, KIND_F64_PLUS_ONE, F(centroid_voxel[0])},
    {"Centroid_2", BASIC, 0, 1, 0, KIND_F64_PLUS_ONE, F(centroid_voxel[1])},
    {"Centroid_3", BASIC, 0, 1, 0, KIND_F64_PLUS_ONE, F(centroid_voxel[2])},
    {"BoundingBox_1", BASIC, 0, 1, 0, KIND_BOX_CORNER, F(bbox_min[0])},
    {"BoundingBox_2", BASIC, 0, 1, 0, KIND_BOX_CORNER, F(bbox_min[1])},
    {"BoundingBox_3", BASIC, 0, 1, 0, KIND_BOX_CORNER, F(bbox_min[2])},
    {"BoundingBox_4", BASIC, 0, 1, 0, KIND_BOX_WIDTH, F(bbox_min[0])},
    {"BoundingBox_5", BASIC, 0, 1, 0, KIND_BOX_WIDTH, F(bbox_min[1])},
    {"BoundingBox_6", BASIC, 0, 1, 0, KIND_BOX_WIDTH, F(bbox_min[2])},
    {"EquivDiameter", BASIC, 0, 1, 0, KIND_F64, F(equivalent_diameter_voxels)},
    {"Extent", BASIC, 0, 1, 0, KIND_F64, F(extent)},
    {"PrincipalAxisLength_1", FULL, 0, 1, 0, KIND_F64, F(matlab_axis_length[0])},
    {"PrincipalAxisLength_2", FULL, 0, 1, 0, KIND_F64, F(matlab_axis_length[1])},
    {"PrincipalAxisLength_3", FULL, 0, 1, 0, KIND_F64, F(matlab_axis_length[2])},
    {"Orientation_1", FULL, 0, 1, 0, KIND_F64, F(matlab_orientation_deg[0])},
    {"Orientation_2", FULL, 0, 1, 0, KIND_F64, F(matlab_orientation_deg[1])},
    {"Orientation_3", FULL, 0, 1, 0, KIND_F64, F(matlab_orientation_deg[2])},
    {"EigenVectors_1", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[0])},
    {"EigenVectors_2", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[3])},
    {"EigenVectors_3", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[6])},
    {"EigenVectors_4", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[1])},
    {"EigenVectors_5", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[4])},
    {"EigenVectors_6", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[7])},
    {"EigenVectors_7", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[2])},
    {"EigenVectors_8", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[5])},
    {"EigenVectors_9", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvectors[8])},
    {"EigenValues_1", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvalues[0])},
    {"EigenValues_2", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvalues[1])},
    {"EigenValues_3", FULL, 0, 1, 0, KIND_F64, F(matlab_eigenvalues[2])},
    {"ConvexVolume", FULL, 0, 1, HULL, KIND_F64, F(convex_volume_voxels)},
    {"Solidity", FULL, 0, 1, HULL, KIND_F64, F(solidity)},
    {"WeightedCentroid_1", BASIC, 1, 1, 0, KIND_F64_PLUS_ONE, F(weighted_centroid_voxel[0])},
    {"WeightedCentroid_2", BASIC, 1, 1, 0, KIND_F64_PLUS_ONE, F(weighted_centroid_voxel[1])},
    {"WeightedCentroid_3", BASIC, 1, 1, 0, KIND_F64_PLUS_ONE, F(weighted_centroid_voxel[2])},
    {"MeanIntensity", BASIC, 1, 1, 0, KIND_F64, F(intensity_mean)},
    {"MinIntensity", BASIC, 1, 1, 0, KIND_F64, F(intensity_min)},
    {"MaxIntensity", BASIC, 1, 1, 0, KIND_F64, F(intensity_max)},
};

static const vl_stats_column *column_named(const char *name, size_t length)
{
    for (size_t i = 0; i < sizeof columns / sizeof columns[0]; i++)
        if (strlen(columns[i].name) == length && strncmp(columns[i].name, name, length) == 0)
            return &columns[i];
    return NULL;
}

vl_status vl_stats_columns_parse(const char *list, vl_stats_level *level, unsigned *extras)
{
    *level = VL_STATS_BASIC;
    *extras = 0;
    if (!list || !*list)
        return vl_fail(VL_ERR_ARGUMENT, "--columns: empty list (give names such as label,voxels,feret_max_mm)");
    for (const char *name = list; *name;) {
        const size_t length = strcspn(name, ",");
        const vl_stats_column *c = column_named(name, length);
        if (!c)
            return vl_fail(VL_ERR_ARGUMENT, "--columns: no column named '%.*s' (docs/csv.md lists them)", (int)length,
                           name);
        if (c->level == VL_STATS_FULL)
            *level = VL_STATS_FULL;
        *extras |= c->extra;
        name += length + (name[length] == ',');
    }
    return VL_OK;
}

/* Whether the data behind a column exist: intensity columns need an intensity volume, `class` a class map and
 * `class_name` the classes' names. */
static int available(const vl_stats_column *c, const vl_csv_options *options)
{
    if (c->intensity && !options->intensity)
        return 0;
    if (c->kind == KIND_CLASS)
        return options->class_column;
    if (c->kind == KIND_CLASS_NAME)
        return options->class_column && options->class_names != NULL;
    return 1;
}

size_t vl_stats_columns_select(const vl_csv_options *options, const vl_stats_column **selected, size_t capacity)
{
    vl_csv_options defaults;
    if (!options) {
        vl_csv_options_default(&defaults);
        options = &defaults;
    }
    size_t n = 0;
    if (options->columns) {
        /* An explicit list, in its own order, of the columns whose data exist. */
        for (const char *name = options->columns; *name && n < capacity;) {
            const size_t length = strcspn(name, ",");
            const vl_stats_column *c = column_named(name, length);
            if (c && available(c, options))
                selected[n++] = c;
            name += length + (name[length] == ',');
        }
        return n;
    }
    for (size_t i = 0; i < sizeof columns / sizeof columns[0] && n < capacity; i++) {
        const vl_stats_column *c = &columns[i];
        if ((c->level == VL_STATS_FULL && options->level != VL_STATS_FULL) || (c->matlab && !options->matlab_columns) ||
            !available(c, options))
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

/* KIND_BOX_WIDTH: `at` points at bbox_min[axis]; bbox_max[axis] lies at the same distance into bbox_max. */
static int64_t box_width(const char *at)
{
    const int64_t min = *(const int64_t *)at;
    const int64_t max = *(const int64_t *)(at + offsetof(vl_component_stats, bbox_max) -
                                           offsetof(vl_component_stats, bbox_min));
    return max - min + 1;
}

size_t vl_stats_column_format(char *out, const vl_stats_column *column, const vl_component_stats *stats,
                              const char *missing)
{
    const char *at = (const char *)stats + column->offset;
    const int present = stats->voxels > 0;
    switch (column->kind) {
    case KIND_U32:
    case KIND_CLASS:
    case KIND_CLASS_NAME: return vl_format_unsigned(out, *(const uint32_t *)at);
    case KIND_U64: return vl_format_unsigned(out, *(const uint64_t *)at);
    case KIND_I64: return present ? vl_format_signed(out, *(const int64_t *)at) : format_text(out, missing);
    case KIND_F64: return format_double(out, *(const double *)at, missing);
    case KIND_F64_PLUS_ONE: return format_double(out, *(const double *)at + 1, missing);
    case KIND_BOX_CORNER: return format_double(out, present ? (double)*(const int64_t *)at + 0.5 : NAN, missing);
    case KIND_BOX_WIDTH: return vl_format_unsigned(out, present ? (unsigned long long)box_width(at) : 0);
    }
    return 0;
}

int vl_stats_column_value(const vl_stats_column *column, const vl_component_stats *stats, int64_t *integer,
                          double *real)
{
    const char *at = (const char *)stats + column->offset;
    const int present = stats->voxels > 0;
    switch (column->kind) {
    case KIND_U32:
    case KIND_CLASS:
    case KIND_CLASS_NAME: *integer = *(const uint32_t *)at; return 1;
    case KIND_U64: *integer = (int64_t)*(const uint64_t *)at; return 1;
    case KIND_I64: *integer = present ? *(const int64_t *)at : -1; return 1;
    case KIND_BOX_WIDTH: *integer = present ? box_width(at) : 0; return 1;
    case KIND_F64: *real = *(const double *)at; return 0;
    case KIND_F64_PLUS_ONE: *real = *(const double *)at + 1; return 0;
    case KIND_BOX_CORNER: *real = present ? (double)*(const int64_t *)at + 0.5 : NAN; return 0;
    }
    *real = NAN;
    return 0;
}

const char *vl_stats_column_text(const vl_stats_column *column, const vl_component_stats *stats,
                                 const vl_csv_options *options)
{
    if (column->kind != KIND_CLASS_NAME)
        return NULL;
    const uint32_t c = stats->class_id;
    return c >= 1 && c <= options->class_name_count && options->class_names[c - 1] ? options->class_names[c - 1] : "";
}
