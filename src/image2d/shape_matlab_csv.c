/* shapes.csv in MATLAB regionprops conventions (voxlabel shapes --matlab): regionprops' names and order
 * (as writetable splits vectors: Centroid_1, Centroid_2, ...), 1-based slice and pixel coordinates (pixel
 * centres at integers, box corners at half-integers), degrees. Columns in docs/stages2d.md. */
#include <math.h>
#include <stdio.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "voxlabel/shape.h"

static const double pi = 3.14159265358979323846;

/* MATLAB Circularity since R2023a: 4 pi Area / Perimeter^2 corrected by (1 - 0.5 / r)^2 with
 * r = Perimeter / (2 pi) + 0.5, at most 1. */
static double circularity(const vl_shape_row *r)
{
    if (!(r->matlab_perimeter > 0))
        return NAN;
    const double raw = 4 * pi * (double)r->area / (r->matlab_perimeter * r->matlab_perimeter);
    const double radius = r->matlab_perimeter / (2 * pi) + 0.5;
    const double corrected = raw * (1 - 0.5 / radius) * (1 - 0.5 / radius);
    return corrected < 1 ? corrected : 1;
}

vl_status vl_shape_write_matlab_csv(const char *path, const vl_shape_table *table, int force)
{
    vl_atomic_file output;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&output, path, force, "w", &out);
    if (status != VL_OK)
        return status;
    fprintf(out, "Slice,Label%s,Area,Centroid_1,Centroid_2,BoundingBox_1,BoundingBox_2,BoundingBox_3,BoundingBox_4,"
                 "MajorAxisLength,MinorAxisLength,Eccentricity,Orientation,ConvexArea,Circularity,EulerNumber,"
                 "EquivDiameter,Solidity,Extent,Perimeter\n",
            table->has_label3d ? ",Label3D" : "");
    for (int64_t i = 0; i < table->count; i++) {
        const vl_shape_row *r = &table->rows[i];
        fprintf(out, "%lld,%u", (long long)r->slice + 1, r->label);
        if (table->has_label3d)
            fprintf(out, ",%u", r->label3d);
        const double c = circularity(r);
        fprintf(out, ",%lld,%.17g,%.17g,%.17g,%.17g,%lld,%lld,%.17g,%.17g,%.17g,%.17g,%lld,", (long long)r->area,
                r->centroid_x + 1, r->centroid_y + 1, (double)r->bbox_left + 0.5, (double)r->bbox_top + 0.5,
                (long long)r->bbox_width, (long long)r->bbox_height, r->matlab_major_axis, r->matlab_minor_axis,
                r->matlab_eccentricity, r->matlab_orientation, (long long)r->matlab_convex_area);
        if (!isnan(c))
            fprintf(out, "%.17g", c);
        fprintf(out, ",%d,%.17g,%.17g,%.17g,%.17g\n", r->euler_number, sqrt(4 * (double)r->area / pi),
                r->matlab_solidity, r->extent, r->matlab_perimeter);
    }
    return vl_atomic_file_close_stream(&output, out, VL_OK);
}
