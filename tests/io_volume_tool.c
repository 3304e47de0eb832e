/* Test helper for the Python oracles of the volume readers and writers.
 *   io_volume_tool fixture OUT CORNERS [sheared|flipped]  writes a 5x4x3 label volume with a rotated geometry
 *                                                 (optionally sheared, or left-handed: slices against the normal) to OUT and the LPS position of each of the 8 corner
 *                                                 voxel centres (vl_geometry_index_to_lps) to CORNERS, one per line
 *   io_volume_tool dump FILE [MAT_XY]             prints dtype, dims, geometry and every voxel value (x fastest) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/io.h"

static int fixture(const char *out_path, const char *corners_path, int sheared, int flipped)
{
    vl_volume v;
    const vl_status created = vl_volume_create(&v, 5, 4, 3, VL_U32);
    CHECK(created == VL_OK, "cannot allocate the fixture");
    if (created != VL_OK)
        return 1;
    for (int64_t i = 0; i < vl_volume_voxels(&v); i++)
        ((uint32_t *)v.data)[i] = (uint32_t)(i % 7);
    /* Row and column directions rotated about two axes; the slice step tilted off their normal when sheared. */
    const double a = 0.4, b = -0.25;
    const double row[3] = {cos(a), sin(a) * cos(b), sin(a) * sin(b)};
    const double col[3] = {-sin(a), cos(a) * cos(b), cos(a) * sin(b)};
    double normal[3] = {row[1] * col[2] - row[2] * col[1], row[2] * col[0] - row[0] * col[2],
                        row[0] * col[1] - row[1] * col[0]};
    double slice[3];
    for (int r = 0; r < 3; r++)
        slice[r] = (flipped ? -normal[r] : normal[r]) + (sheared ? 0.3 * col[r] : 0.0);
    double length = sqrt(slice[0] * slice[0] + slice[1] * slice[1] + slice[2] * slice[2]);
    for (int r = 0; r < 3; r++) {
        v.geometry.direction[3 * r] = row[r];
        v.geometry.direction[3 * r + 1] = col[r];
        v.geometry.direction[3 * r + 2] = slice[r] / length;
    }
    v.geometry.spacing[0] = 0.48828125;
    v.geometry.spacing[1] = 0.6;
    v.geometry.spacing[2] = 2.5;
    v.geometry.origin[0] = -123.5;
    v.geometry.origin[1] = -15.640970;
    v.geometry.origin[2] = 142.345192;
    vl_write_options options;
    vl_write_options_default(&options);
    options.force = 1;
    options.is_label_map = 1;
    const vl_status written = vl_write_volume(out_path, &v, &options);
    CHECK(written == VL_OK, "write %s", out_path);
    FILE *corners = fopen(corners_path, "w");
    CHECK(corners != NULL, "cannot write %s", corners_path);
    if (written != VL_OK || !corners) {
        vl_volume_free(&v);
        return 1;
    }
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < 2; i++) {
                double lps[3], index[3] = {i * (v.nx - 1.0), j * (v.ny - 1.0), k * (v.nz - 1.0)};
                vl_geometry_index_to_lps(&v.geometry, index[0], index[1], index[2], lps);
                fprintf(corners, "%g %g %g %.9f %.9f %.9f\n", index[0], index[1], index[2], lps[0], lps[1], lps[2]);
            }
    CHECK(fclose(corners) == 0, "cannot write %s", corners_path);
    vl_volume_free(&v);
    return failures != 0;
}

static int dump(const char *path, int mat_xy)
{
    vl_read_options options;
    vl_read_options_default(&options);
    options.mat_xy = mat_xy;
    vl_volume v;
    vl_status status = vl_read_volume(path, &options, &v);
    if (status != VL_OK) {
        printf("error %d %s\n", vl_status_exit_code(status), vl_last_error());
        return 0;
    }
    printf("dtype %s\ndims %lld %lld %lld\n", vl_dtype_name(v.dtype), (long long)v.nx, (long long)v.ny,
           (long long)v.nz);
    const vl_geometry *g = &v.geometry;
    printf("origin %.9g %.9g %.9g\nspacing %.9g %.9g %.9g\ndirection", g->origin[0], g->origin[1], g->origin[2],
           g->spacing[0], g->spacing[1], g->spacing[2]);
    for (int i = 0; i < 9; i++)
        printf(" %.9g", g->direction[i]);
    printf("\nvalues");
    for (int64_t i = 0; i < vl_volume_voxels(&v); i++)
        printf(" %.17g", vl_volume_value(&v, i));
    printf("\n");
    vl_volume_free(&v);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "fixture") == 0)
        return fixture(argv[2], argv[3], argc > 4 && strcmp(argv[4], "sheared") == 0,
                       argc > 4 && strcmp(argv[4], "flipped") == 0);
    if (argc >= 3 && strcmp(argv[1], "dump") == 0)
        return dump(argv[2], argc > 3 && atoi(argv[3]) != 0);
    fprintf(stderr, "usage: io_volume_tool fixture OUT CORNERS [sheared|flipped] | dump FILE [MAT_XY]\n");
    return 2;
}
