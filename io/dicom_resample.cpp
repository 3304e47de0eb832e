/* Resampling (the `resample` policy): like dcm2niix's _Eq and _Tilt outputs, one uniform, orthogonal
 * grid. Because every native slice shares the row and column axes, the in-plane offset of a native slice
 * relative to the output grid is one constant shift per slice, so each output slice is two bilinear
 * lookups with fixed fractional offsets and one blend. */
#include <cmath>
#include <cstring>

#include "dicom_resample.h"
#include "voxlabel/error.h"

namespace {

template <typename T>
double bilinear(const T *slice, int64_t nx, int64_t ny, double u, double v, double fill, bool &inside)
{
    double fu = std::floor(u), fv = std::floor(v);
    int64_t i = (int64_t)fu, j = (int64_t)fv;
    double a = u - fu, b = v - fv;
    /* Points within half a voxel of the edge clamp to it; beyond that they are outside the slice. */
    if (u < -0.5 || v < -0.5 || u > (double)nx - 0.5 || v > (double)ny - 0.5) {
        inside = false;
        return fill;
    }
    inside = true;
    int64_t i0 = std::max<int64_t>(0, std::min(i, nx - 1)), i1 = std::max<int64_t>(0, std::min(i + 1, nx - 1));
    int64_t j0 = std::max<int64_t>(0, std::min(j, ny - 1)), j1 = std::max<int64_t>(0, std::min(j + 1, ny - 1));
    double top = (1 - a) * slice[j0 * nx + i0] + a * slice[j0 * nx + i1];
    double bottom = (1 - a) * slice[j1 * nx + i0] + a * slice[j1 * nx + i1];
    return (1 - b) * top + b * bottom;
}

template <typename T>
void resample_slices(const vl_volume *native, const vl_dicom_stack &stack,
                     const std::vector<std::array<double, 3>> &origins, double step, double fill, vl_volume *out)
{
    const int64_t nx = native->nx, ny = native->ny, n = native->nz;
    const double dx = native->geometry.spacing[0], dy = native->geometry.spacing[1];
    const T *source = (const T *)native->data;
    T *target = (T *)out->data;
    int64_t s = 0;
    for (int64_t k = 0; k < out->nz; k++) {
        double d = stack.positions[0] + (double)k * step;
        while (s + 2 < n && stack.positions[(size_t)s + 1] < d)
            s++;
        int64_t s1 = n > 1 ? s + 1 : s;
        double span = stack.positions[(size_t)s1] - stack.positions[(size_t)s];
        double t = span > 0 ? std::min(1.0, std::max(0.0, (d - stack.positions[(size_t)s]) / span)) : 0.0;
        double shift_u[2], shift_v[2];
        for (int m = 0; m < 2; m++) {
            const std::array<double, 3> &o = origins[(size_t)(m ? s1 : s)];
            double delta[3] = {origins[0][0] - o[0], origins[0][1] - o[1], origins[0][2] - o[2]};
            shift_u[m] = (delta[0] * stack.row[0] + delta[1] * stack.row[1] + delta[2] * stack.row[2]) / dx;
            shift_v[m] = (delta[0] * stack.column[0] + delta[1] * stack.column[1] + delta[2] * stack.column[2]) / dy;
        }
        const T *lower = source + s * nx * ny, *upper = source + s1 * nx * ny;
        T *slice = target + k * nx * ny;
        for (int64_t j = 0; j < ny; j++)
            for (int64_t i = 0; i < nx; i++) {
                bool in0, in1;
                double v0 = bilinear(lower, nx, ny, (double)i + shift_u[0], (double)j + shift_v[0], fill, in0);
                double v1 = bilinear(upper, nx, ny, (double)i + shift_u[1], (double)j + shift_v[1], fill, in1);
                /* A slice with no weight may lie outside without making the point outside. */
                bool inside = (in0 || t >= 1.0) && (in1 || t <= 0.0);
                double value = !inside ? fill : t <= 0.0 ? v0 : t >= 1.0 ? v1 : (1 - t) * v0 + t * v1;
                if constexpr (std::is_same<T, int16_t>::value)
                    slice[j * nx + i] = (int16_t)std::lround(std::max(-32768.0, std::min(32767.0, value)));
                else
                    slice[j * nx + i] = (T)value;
            }
    }
}

} // namespace

vl_status vl_dicom_resample(const vl_volume *native, const vl_dicom_stack &stack,
                            const std::vector<std::array<double, 3>> &origins, double step, double fill,
                            vl_volume *out)
{
    double extent = stack.positions.back() - stack.positions.front();
    if (!(step > 0))
        return vl_fail(VL_ERR_INPUT, "resampling: no positive slice step");
    int64_t nz = (int64_t)std::floor(extent / step + 1e-6) + 1;
    vl_status status = vl_volume_create_uninitialised(out, native->nx, native->ny, nz, native->dtype);
    if (status != VL_OK)
        return status;
    vl_geometry &g = out->geometry;
    g = native->geometry;
    for (int r = 0; r < 3; r++) {
        g.origin[r] = origins[0][r];
        g.direction[3 * r + 0] = stack.row[r];
        g.direction[3 * r + 1] = stack.column[r];
        g.direction[3 * r + 2] = stack.normal[r];
    }
    g.spacing[2] = step;
    if (native->dtype == VL_I16)
        resample_slices<int16_t>(native, stack, origins, step, fill, out);
    else
        resample_slices<float>(native, stack, origins, step, fill, out);
    return VL_OK;
}
