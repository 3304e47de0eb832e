/* hulls.csv (voxlabel stats --hull FILE): every vertex of every component's convex hull, one per line, with
 * the component's label, MATLAB's 1-based [x y z] (as regionprops3's ConvexHull rows) and LPS mm. */
#include <stdio.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/stats.h"

vl_status vl_convex_hulls_write_csv(const char *path, const vl_convex_hulls *hulls, const vl_geometry *geometry,
                                    int force)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, force, "w", &out);
    if (status != VL_OK)
        return status;
    fputs("label,x,y,z,l_mm,p_mm,s_mm\n", out);
    for (uint32_t k = 0; k < hulls->count; k++)
        for (uint64_t v = hulls->offset[k]; v < hulls->offset[k + 1]; v++) {
            const int64_t *c = hulls->corner[v];
            double lps[3];
            vl_geometry_index_to_lps(geometry, (double)c[0] - 0.5, (double)c[1] - 0.5, (double)c[2] - 0.5, lps);
            fprintf(out, "%u,%.1f,%.1f,%.1f,%.12g,%.12g,%.12g\n", k + 1, (double)c[0] + 0.5, (double)c[1] + 0.5,
                    (double)c[2] + 0.5, lps[0], lps[1], lps[2]);
        }
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}
