/* shapes.csv: one row per (slice, 2D label); the column dictionary is in docs/stages2d.md. */
#include <stdio.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "voxlabel/shape.h"

static const char *const moment_names[10] = {"m00", "m10", "m01", "m20", "m11", "m02", "m30", "m21", "m12", "m03"};
static const char *const central_names[7] = {"20", "11", "02", "30", "21", "12", "03"};

static void write_header(FILE *out, const vl_shape_table *table)
{
    fputs("slice,label", out);
    if (table->has_label3d)
        fputs(",label3d", out);
    fputs(",first_x,first_y,area,perimeter_weighted,perimeter_crofton,centroid_x,centroid_y,bbox_left,bbox_top,"
          "bbox_width,bbox_height,orientation,eccentricity,major_axis,minor_axis,circularity,convex_area,solidity,"
          "extent,euler_number",
          out);
    for (int i = 0; i < 10; i++)
        fprintf(out, ",%s", moment_names[i]);
    for (int i = 0; i < 7; i++)
        fprintf(out, ",mu%s", central_names[i]);
    for (int i = 0; i < 7; i++)
        fprintf(out, ",nu%s", central_names[i]);
    for (int i = 0; i < 7; i++)
        fprintf(out, ",hu%d", i + 1);
    if (table->has_reference)
        fputs(",jm_reference", out);
    for (int i = 0; i < VL_SHAPE_HISTOGRAM_BINS; i++)
        fprintf(out, ",hist_%03d", i);
    fputc('\n', out);
}

static void write_row(FILE *out, const vl_shape_table *table, const vl_shape_row *r)
{
    fprintf(out, "%lld,%u", (long long)r->slice, r->label);
    if (table->has_label3d)
        fprintf(out, ",%u", r->label3d);
    fprintf(out, ",%lld,%lld,%lld,%.17g,%.17g,%.17g,%.17g,%lld,%lld,%lld,%lld,%.17g,%.17g,%.17g,%.17g,%.17g,%lld,%.17g,"
                 "%.17g,%d",
            (long long)r->first_x, (long long)r->first_y, (long long)r->area, r->perimeter_weighted,
            r->perimeter_crofton, r->centroid_x, r->centroid_y, (long long)r->bbox_left, (long long)r->bbox_top,
            (long long)r->bbox_width, (long long)r->bbox_height, r->orientation, r->eccentricity, r->major_axis,
            r->minor_axis, r->circularity, (long long)r->convex_area, r->solidity, r->extent, r->euler_number);
    for (int i = 0; i < 10; i++)
        fprintf(out, ",%.17g", r->m[i]);
    for (int i = 0; i < 7; i++)
        fprintf(out, ",%.17g", r->mu[i]);
    for (int i = 0; i < 7; i++)
        fprintf(out, ",%.17g", r->nu[i]);
    for (int i = 0; i < 7; i++)
        fprintf(out, ",%.17g", r->hu[i]);
    if (table->has_reference)
        fprintf(out, ",%.17g", r->jm_reference);
    for (int i = 0; i < VL_SHAPE_HISTOGRAM_BINS; i++)
        fprintf(out, ",%.17g", r->histogram[i]);
    fputc('\n', out);
}

vl_status vl_shape_write_csv(const char *path, const vl_shape_table *table, int force)
{
    vl_atomic_file output;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&output, path, force, "w", &out);
    if (status != VL_OK)
        return status;
    write_header(out, table);
    for (int64_t i = 0; i < table->count; i++)
        write_row(out, table, &table->rows[i]);
    return vl_atomic_file_close_stream(&output, out, VL_OK);
}
