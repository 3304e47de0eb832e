/* Internal: eigenvalues of symmetric 2x2 and 3x3 matrices in closed form, sorted descending. Plain C that
 * nvcc also compiles for the device (VL_HOST_DEVICE). Products and sums go through vl_mul/vl_add, which on
 * the device are the round-to-nearest intrinsics: nvcc may not fuse them into FMAs, so both backends round
 * every step alike (only acos and cos may differ by an ulp between the C library and CUDA). */
#ifndef VL_EIGEN_SYMMETRIC_H
#define VL_EIGEN_SYMMETRIC_H
#include <math.h>

#ifdef __CUDACC__
#define VL_HOST_DEVICE __host__ __device__
#else
#define VL_HOST_DEVICE
#endif

static inline VL_HOST_DEVICE double vl_mul(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

static inline VL_HOST_DEVICE double vl_add(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

/* [[a, b], [b, c]] */
static inline VL_HOST_DEVICE void vl_eigen2(double a, double b, double c, double out[2])
{
    const double mean = vl_mul(0.5, vl_add(a, c)), half = vl_mul(0.5, a - c);
    const double radius = sqrt(vl_add(vl_mul(half, half), vl_mul(b, b)));
    out[0] = vl_add(mean, radius);
    out[1] = mean - radius;
}

/* [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]: the trigonometric solution on the deviatoric part, scaled so
 * that its accuracy is relative to the matrix norm. */
static inline VL_HOST_DEVICE void vl_eigen3(double xx, double xy, double xz, double yy, double yz, double zz,
                                            double out[3])
{
    const double q = vl_add(vl_add(xx, yy), zz) / 3;
    const double off = vl_add(vl_add(vl_mul(xy, xy), vl_mul(xz, xz)), vl_mul(yz, yz));
    const double a = xx - q, b = yy - q, c = zz - q;
    const double p2 = vl_add(vl_add(vl_add(vl_mul(a, a), vl_mul(b, b)), vl_mul(c, c)), vl_mul(2, off));
    if (p2 <= vl_mul(1e-300, vl_add(vl_mul(q, q), 1e-300))) {
        out[0] = out[1] = out[2] = q;
        return;
    }
    const double p = sqrt(p2 / 6);
    const double ia = a / p, ib = b / p, ic = c / p, ixy = xy / p, ixz = xz / p, iyz = yz / p;
    /* r = det(B) / 2 with B = (A - qI) / p, in [-1, 1] up to rounding */
    const double m0 = vl_mul(ia, vl_mul(ib, ic) - vl_mul(iyz, iyz));
    const double m1 = vl_mul(ixy, vl_mul(ixy, ic) - vl_mul(iyz, ixz));
    const double m2 = vl_mul(ixz, vl_mul(ixy, iyz) - vl_mul(ib, ixz));
    double r = vl_mul(0.5, vl_add(m0 - m1, m2));
    r = r < -1 ? -1 : r > 1 ? 1 : r;
    const double phi = acos(r) / 3;
    const double two_pi_3 = 2.0943951023931954923;
    const double e0 = vl_add(q, vl_mul(vl_mul(2, p), cos(phi)));
    const double e2 = vl_add(q, vl_mul(vl_mul(2, p), cos(vl_add(phi, two_pi_3))));
    out[0] = e0;
    out[2] = e2;
    out[1] = vl_mul(3, q) - e0 - e2;
    /* rounding can leave the middle one a hair outside its neighbours */
    if (out[1] > out[0]) { double t = out[0]; out[0] = out[1]; out[1] = t; }
    if (out[2] > out[1]) { double t = out[1]; out[1] = out[2]; out[2] = t; }
}

#endif
