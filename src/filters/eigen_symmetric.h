/* Internal: eigenvalues of symmetric 2x2 and 3x3 matrices in closed form, sorted descending. Plain C that
 * nvcc also compiles for the device (VL_HOST_DEVICE), so both backends evaluate the same formulas. */
#ifndef VL_EIGEN_SYMMETRIC_H
#define VL_EIGEN_SYMMETRIC_H
#include <math.h>

#ifdef __CUDACC__
#define VL_HOST_DEVICE __host__ __device__
#else
#define VL_HOST_DEVICE
#endif

/* [[a, b], [b, c]] */
static inline VL_HOST_DEVICE void vl_eigen2(double a, double b, double c, double out[2])
{
    const double mean = 0.5 * (a + c), half = 0.5 * (a - c);
    const double radius = sqrt(half * half + b * b);
    out[0] = mean + radius;
    out[1] = mean - radius;
}

/* [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]: the trigonometric solution on the deviatoric part, scaled so
 * that its accuracy is relative to the matrix norm. */
static inline VL_HOST_DEVICE void vl_eigen3(double xx, double xy, double xz, double yy, double yz, double zz,
                                            double out[3])
{
    const double q = (xx + yy + zz) / 3;
    const double off = xy * xy + xz * xz + yz * yz;
    const double a = xx - q, b = yy - q, c = zz - q;
    const double p2 = a * a + b * b + c * c + 2 * off;
    if (p2 <= 1e-300 * (q * q + 1e-300)) {
        out[0] = out[1] = out[2] = q;
        return;
    }
    const double p = sqrt(p2 / 6);
    const double ia = a / p, ib = b / p, ic = c / p, ixy = xy / p, ixz = xz / p, iyz = yz / p;
    /* r = det(B) / 2 with B = (A - qI) / p, in [-1, 1] up to rounding */
    double r = 0.5 * (ia * (ib * ic - iyz * iyz) - ixy * (ixy * ic - iyz * ixz) + ixz * (ixy * iyz - ib * ixz));
    r = r < -1 ? -1 : r > 1 ? 1 : r;
    const double phi = acos(r) / 3;
    const double two_pi_3 = 2.0943951023931954923;
    const double e0 = q + 2 * p * cos(phi);
    const double e2 = q + 2 * p * cos(phi + two_pi_3);
    out[0] = e0;
    out[2] = e2;
    out[1] = 3 * q - e0 - e2;
    /* rounding can leave the middle one a hair outside its neighbours */
    if (out[1] > out[0]) { double t = out[0]; out[0] = out[1]; out[1] = t; }
    if (out[2] > out[1]) { double t = out[1]; out[1] = out[2]; out[2] = t; }
}

#endif
