/* Geometry checks and construction shared by the formats that store an affine (NIfTI, NRRD, MHA). */
#include <math.h>
#include <string.h>

#include "voxlabel/error.h"
#include "volume_helpers.h"

int vl_geometry_is_valid(const vl_geometry *g)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(g->origin[i]) || !isfinite(g->spacing[i]) || g->spacing[i] <= 0.0)
            return 0;
    for (int i = 0; i < 9; i++)
        if (!isfinite(g->direction[i]))
            return 0;
    return vl_geometry_voxel_volume(g) > 0.0;
}

vl_status vl_geometry_from_axes(const double axes[9], const double origin[3], vl_geometry *geometry, const char *what)
{
    vl_geometry g;
    memset(&g, 0, sizeof g);
    for (int c = 0; c < 3; c++) {
        double length = sqrt(axes[c] * axes[c] + axes[3 + c] * axes[3 + c] + axes[6 + c] * axes[6 + c]);
        if (!isfinite(length) || length <= 0.0)
            return vl_fail(VL_ERR_INPUT, "%s: axis %d of the voxel-to-world matrix has zero or invalid length", what, c);
        g.spacing[c] = length;
        for (int r = 0; r < 3; r++)
            g.direction[3 * r + c] = axes[3 * r + c] / length;
        g.origin[c] = origin[c];
    }
    if (!vl_geometry_is_valid(&g))
        return vl_fail(VL_ERR_INPUT, "%s: the voxel-to-world matrix is singular or not finite", what);
    *geometry = g;
    return VL_OK;
}
