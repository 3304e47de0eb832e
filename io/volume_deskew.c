/* Undoing a sheared slice axis (gantry tilt): the same voxels on the un-sheared grid whose z axis is the
 * slice normal, so that a reader which keeps only orthonormal axes (ITK's NIfTI reader, hence 3D Slicer)
 * places every voxel where the sheared grid put it.
 *
 * The sheared grid puts voxel (i, j, k) at O + i*sx*X + j*sy*Y + k*Z, with X, Y the orthonormal in-plane axes
 * and Z the slice step. Writing Z = a*sx*X + b*sy*Y + s*N (N the unit normal on Z's side, s = Z . N > 0), the
 * un-sheared grid O + i*sx*X + j*sy*Y + k*s*N has its slice k in the plane of native slice k, shifted in that
 * plane by (k*a, k*b) pixels. So each output slice is native slice k sampled at (i - k*a, j - k*b): no
 * interpolation between slices, the slice positions are exact. */
#include <math.h>
#include <string.h>

#include "voxlabel/io.h"

static double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Column c of the direction matrix. */
static void axis_of(const vl_geometry *g, int c, double axis[3])
{
    for (int r = 0; r < 3; r++)
        axis[r] = g->direction[3 * r + c];
}

/* The unit normal of the x and y axes on the z axis's side, and the z axis's cosine with it. */
static double slice_normal(const vl_geometry *g, double normal[3])
{
    double x[3], y[3], z[3];
    axis_of(g, 0, x), axis_of(g, 1, y), axis_of(g, 2, z);
    normal[0] = x[1] * y[2] - x[2] * y[1];
    normal[1] = x[2] * y[0] - x[0] * y[2];
    normal[2] = x[0] * y[1] - x[1] * y[0];
    double length = sqrt(dot3(normal, normal));
    if (!(length > 0))
        return 1.0;
    for (int r = 0; r < 3; r++)
        normal[r] /= length;
    double cosine = dot3(normal, z);
    if (cosine < 0)
        for (int r = 0; r < 3; r++)
            normal[r] = -normal[r];
    return fabs(cosine);
}

double vl_geometry_shear_degrees(const vl_geometry *geometry)
{
    double normal[3];
    double cosine = fmin(1.0, slice_normal(geometry, normal));
    return acos(cosine) * 180.0 / 3.14159265358979323846;
}

/* Bilinear sample of slice k at fractional pixel (u, v); `fill` outside the slice. */
static double bilinear(const vl_volume *in, int64_t k, double u, double v, double fill)
{
    if (!(u >= 0 && v >= 0 && u <= (double)(in->nx - 1) && v <= (double)(in->ny - 1)))
        return fill;
    int64_t u0 = (int64_t)floor(u), v0 = (int64_t)floor(v);
    int64_t u1 = u0 + 1 < in->nx ? u0 + 1 : u0, v1 = v0 + 1 < in->ny ? v0 + 1 : v0;
    double fu = u - (double)u0, fv = v - (double)v0;
    int64_t base = k * in->nx * in->ny;
    double top = (1 - fu) * vl_volume_value(in, base + v0 * in->nx + u0) + fu * vl_volume_value(in, base + v0 * in->nx + u1);
    double bottom =
        (1 - fu) * vl_volume_value(in, base + v1 * in->nx + u0) + fu * vl_volume_value(in, base + v1 * in->nx + u1);
    return (1 - fv) * top + fv * bottom;
}

static double nearest(const vl_volume *in, int64_t k, double u, double v, double fill)
{
    double ru = floor(u + 0.5), rv = floor(v + 0.5);
    if (!(ru >= 0 && rv >= 0 && ru <= (double)(in->nx - 1) && rv <= (double)(in->ny - 1)))
        return fill;
    return vl_volume_value(in, k * in->nx * in->ny + (int64_t)rv * in->nx + (int64_t)ru);
}

static void store(vl_volume *out, int64_t index, double value)
{
    switch (out->dtype) {
    case VL_U8: ((uint8_t *)out->data)[index] = (uint8_t)value; break;
    case VL_I16: ((int16_t *)out->data)[index] = (int16_t)lrint(value); break;
    case VL_U16: ((uint16_t *)out->data)[index] = (uint16_t)value; break;
    case VL_U32: ((uint32_t *)out->data)[index] = (uint32_t)value; break;
    case VL_F32: ((float *)out->data)[index] = (float)value; break;
    }
}

static double minimum_value(const vl_volume *volume)
{
    int64_t count = vl_volume_voxels(volume);
    double lowest = count ? vl_volume_value(volume, 0) : 0;
    for (int64_t i = 1; i < count; i++) {
        double v = vl_volume_value(volume, i);
        if (v < lowest)
            lowest = v;
    }
    return lowest;
}

vl_status vl_volume_deskew(const vl_volume *in, vl_volume *out)
{
    memset(out, 0, sizeof *out);
    const vl_geometry *g = &in->geometry;
    double x[3], y[3], z[3], normal[3];
    axis_of(g, 0, x), axis_of(g, 1, y), axis_of(g, 2, z);
    if (fabs(dot3(x, y)) > 1e-6)
        return vl_fail(VL_ERR_INPUT, "the x and y axes are not orthogonal (%.6f): the grid cannot be deskewed",
                       dot3(x, y));
    slice_normal(g, normal);
    double step[3];
    for (int r = 0; r < 3; r++)
        step[r] = z[r] * g->spacing[2];
    const double shift_x = dot3(step, x) / g->spacing[0], shift_y = dot3(step, y) / g->spacing[1];
    const double normal_step = dot3(step, normal);
    if (!(normal_step > 0))
        return vl_fail(VL_ERR_INPUT, "the slice axis lies in the slice plane: the grid cannot be deskewed");
    vl_status status = vl_volume_create_uninitialised(out, in->nx, in->ny, in->nz, in->dtype);
    if (status != VL_OK)
        return status;
    /* Label maps and masks (unsigned types) keep their values: nearest neighbour, 0 outside. Intensities
     * (I16, F32) are interpolated bilinearly, the volume's minimum outside (air, or the padding value). */
    const int interpolate = in->dtype == VL_I16 || in->dtype == VL_F32;
    const double fill = interpolate ? minimum_value(in) : 0.0;
    for (int64_t k = 0; k < in->nz; k++)
        for (int64_t j = 0; j < in->ny; j++)
            for (int64_t i = 0; i < in->nx; i++) {
                double u = (double)i - (double)k * shift_x, v = (double)j - (double)k * shift_y;
                double value = interpolate ? bilinear(in, k, u, v, fill) : nearest(in, k, u, v, fill);
                store(out, i + in->nx * (j + in->ny * k), value);
            }
    out->geometry = *g;
    out->geometry.spacing[2] = normal_step;
    for (int r = 0; r < 3; r++)
        out->geometry.direction[3 * r + 2] = normal[r];
    return VL_OK;
}
