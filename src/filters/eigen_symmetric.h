/* Internal: eigenvalues of symmetric 2x2 and 3x3 matrices, sorted descending, bit for bit the same on the CPU and
 * the GPU. Plain C that nvcc also compiles for the device (VL_HOST_DEVICE). Only +, -, x, / and sqrt are used,
 * each of which IEEE 754 rounds correctly on both sides, every step through the vl_* helpers below (on the device
 * the explicit round-to-nearest intrinsics, which nvcc never fuses into FMAs), and no transcendental function
 * (the C library's and CUDA's acos or cos may differ by an ulp, and an ulp on a split threshold sends a voxel
 * down another branch). The files that include this header are also compiled without FMA contraction on both
 * sides (CMakeLists.txt: -ffp-contract=off for src/filters, --fmad=false for cuda/filters). */
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

static inline VL_HOST_DEVICE double vl_sub(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

static inline VL_HOST_DEVICE double vl_div(double a, double b)
{
#ifdef __CUDA_ARCH__
    return __ddiv_rn(a, b);
#else
    return a / b;
#endif
}

static inline VL_HOST_DEVICE double vl_sqrt(double a)
{
#ifdef __CUDA_ARCH__
    return __dsqrt_rn(a);
#else
    return sqrt(a);
#endif
}

/* [[a, b], [b, c]] */
static inline VL_HOST_DEVICE void vl_eigen2(double a, double b, double c, double out[2])
{
    const double mean = vl_mul(0.5, vl_add(a, c)), half = vl_mul(0.5, vl_sub(a, c));
    const double radius = vl_sqrt(vl_add(vl_mul(half, half), vl_mul(b, b)));
    out[0] = vl_add(mean, radius);
    out[1] = vl_sub(mean, radius);
}

/* A cyclic Jacobi sweep of a 3x3 matrix converges quadratically; it ends far sooner (every off-diagonal entry
 * exactly 0), this only bounds the loop. */
#define VL_JACOBI_MAX_SWEEPS 32

/* One Jacobi rotation in the (p, q) plane that makes a_pq zero; a_rp and a_rq are the entries of the third row r.
 * t = tan of the angle is the smaller root of t^2 + 2 theta t - 1 = 0 with theta = (a_qq - a_pp) / 2 a_pq. */
static inline VL_HOST_DEVICE void vl_jacobi_rotate(double *app, double *aqq, double *apq, double *arp, double *arq)
{
    if (*apq == 0)
        return;
    const double g = vl_mul(100, fabs(*apq));
    if (vl_add(fabs(*app), g) == fabs(*app) && vl_add(fabs(*aqq), g) == fabs(*aqq)) {
        *apq = 0; /* below an ulp of both diagonal entries: the rotation would not change them */
        return;
    }
    const double h = vl_sub(*aqq, *app);
    double t;
    if (vl_add(fabs(h), g) == fabs(h)) {
        t = vl_div(*apq, h); /* theta^2 would overflow; t = 1 / 2 theta to working precision */
    } else {
        const double theta = vl_div(vl_mul(0.5, h), *apq);
        t = vl_div(1, vl_add(fabs(theta), vl_sqrt(vl_add(vl_mul(theta, theta), 1))));
        if (theta < 0)
            t = -t;
    }
    const double c = vl_div(1, vl_sqrt(vl_add(vl_mul(t, t), 1))), s = vl_mul(t, c);
    const double tau = vl_div(s, vl_add(1, c)), shift = vl_mul(t, *apq);
    *app = vl_sub(*app, shift);
    *aqq = vl_add(*aqq, shift);
    *apq = 0;
    const double rp = *arp, rq = *arq;
    *arp = vl_sub(rp, vl_mul(s, vl_add(rq, vl_mul(rp, tau))));
    *arq = vl_add(rq, vl_mul(s, vl_sub(rp, vl_mul(rq, tau))));
}

/* [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]: cyclic Jacobi rotations until every off-diagonal entry is 0 (each
 * test reads values both backends compute identically, so both stop after the same rotation). Accurate relative
 * to the matrix norm, also for repeated eigenvalues. */
static inline VL_HOST_DEVICE void vl_eigen3(double xx, double xy, double xz, double yy, double yz, double zz,
                                            double out[3])
{
    double d0 = xx, d1 = yy, d2 = zz, a01 = xy, a02 = xz, a12 = yz;
    for (int sweep = 0; sweep < VL_JACOBI_MAX_SWEEPS && (a01 != 0 || a02 != 0 || a12 != 0); sweep++) {
        vl_jacobi_rotate(&d0, &d1, &a01, &a02, &a12); /* (0, 1); row 2 holds a20, a21 */
        vl_jacobi_rotate(&d0, &d2, &a02, &a01, &a12); /* (0, 2); row 1 holds a10, a12 */
        vl_jacobi_rotate(&d1, &d2, &a12, &a01, &a02); /* (1, 2); row 0 holds a01, a02 */
    }
    double t;
    if (d0 < d1) { t = d0; d0 = d1; d1 = t; }
    if (d1 < d2) { t = d1; d1 = d2; d2 = t; }
    if (d0 < d1) { t = d0; d0 = d1; d1 = t; }
    out[0] = d0;
    out[1] = d1;
    out[2] = d2;
}

#endif
