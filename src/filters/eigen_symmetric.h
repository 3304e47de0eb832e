/* Internal: eigenvalues of symmetric 2x2 and 3x3 matrices in float32, sorted descending, bit for bit the same on
 * the CPU and the GPU. Plain C that nvcc also compiles for the device (VL_HOST_DEVICE). Only +, -, x, / and sqrt
 * are used, each of which IEEE 754 rounds correctly on both sides, every step through the vl_f* helpers below (on
 * the device the explicit round-to-nearest intrinsics, which nvcc never fuses into FMAs), and no transcendental
 * function (the C library's and CUDA's acos or cos may differ by an ulp, and an ulp on a split threshold sends a
 * voxel down another branch). The files that include this header are also compiled without FMA contraction on
 * both sides (CMakeLists.txt: -ffp-contract=off for src/filters, --fmad=false for cuda/filters). */
#ifndef VL_EIGEN_SYMMETRIC_H
#define VL_EIGEN_SYMMETRIC_H
#include <math.h>

#ifdef __CUDACC__
#define VL_HOST_DEVICE __host__ __device__
#else
#define VL_HOST_DEVICE
#endif

static inline VL_HOST_DEVICE float vl_fmul(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

static inline VL_HOST_DEVICE float vl_fadd(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

static inline VL_HOST_DEVICE float vl_fsub(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

static inline VL_HOST_DEVICE float vl_fdiv(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

static inline VL_HOST_DEVICE float vl_fsqrt(float a)
{
#ifdef __CUDA_ARCH__
    return __fsqrt_rn(a);
#else
    return sqrtf(a);
#endif
}

/* [[a, b], [b, c]] */
static inline VL_HOST_DEVICE void vl_eigen2(float a, float b, float c, float out[2])
{
    const float mean = vl_fmul(0.5f, vl_fadd(a, c)), half = vl_fmul(0.5f, vl_fsub(a, c));
    const float radius = vl_fsqrt(vl_fadd(vl_fmul(half, half), vl_fmul(b, b)));
    out[0] = vl_fadd(mean, radius);
    out[1] = vl_fsub(mean, radius);
}

/* A cyclic Jacobi sweep of a 3x3 matrix converges quadratically; it ends far sooner (every off-diagonal entry
 * exactly 0), this only bounds the loop. */
#define VL_JACOBI_MAX_SWEEPS 32

/* One Jacobi rotation in the (p, q) plane that makes a_pq zero; a_rp and a_rq are the entries of the third row r.
 * t = tan of the angle is the smaller root of t^2 + 2 theta t - 1 = 0 with theta = (a_qq - a_pp) / 2 a_pq. */
static inline VL_HOST_DEVICE void vl_jacobi_rotate(float *app, float *aqq, float *apq, float *arp, float *arq)
{
    if (*apq == 0)
        return;
    const float g = vl_fmul(100, fabsf(*apq));
    if (vl_fadd(fabsf(*app), g) == fabsf(*app) && vl_fadd(fabsf(*aqq), g) == fabsf(*aqq)) {
        *apq = 0; /* below an ulp of both diagonal entries: the rotation would not change them */
        return;
    }
    const float h = vl_fsub(*aqq, *app);
    float t;
    if (vl_fadd(fabsf(h), g) == fabsf(h)) {
        t = vl_fdiv(*apq, h); /* theta^2 would overflow; t = 1 / 2 theta to working precision */
    } else {
        const float theta = vl_fdiv(vl_fmul(0.5f, h), *apq);
        t = vl_fdiv(1, vl_fadd(fabsf(theta), vl_fsqrt(vl_fadd(vl_fmul(theta, theta), 1))));
        if (theta < 0)
            t = -t;
    }
    const float c = vl_fdiv(1, vl_fsqrt(vl_fadd(vl_fmul(t, t), 1))), s = vl_fmul(t, c);
    const float tau = vl_fdiv(s, vl_fadd(1, c)), shift = vl_fmul(t, *apq);
    *app = vl_fsub(*app, shift);
    *aqq = vl_fadd(*aqq, shift);
    *apq = 0;
    const float rp = *arp, rq = *arq;
    *arp = vl_fsub(rp, vl_fmul(s, vl_fadd(rq, vl_fmul(rp, tau))));
    *arq = vl_fadd(rq, vl_fmul(s, vl_fsub(rp, vl_fmul(rq, tau))));
}

/* [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]: cyclic Jacobi rotations until every off-diagonal entry is 0 (each
 * test reads values both backends compute identically, so both stop after the same rotation). Accurate relative
 * to the matrix norm, also for repeated eigenvalues. */
static inline VL_HOST_DEVICE void vl_eigen3(float xx, float xy, float xz, float yy, float yz, float zz, float out[3])
{
    float d0 = xx, d1 = yy, d2 = zz, a01 = xy, a02 = xz, a12 = yz;
    for (int sweep = 0; sweep < VL_JACOBI_MAX_SWEEPS && (a01 != 0 || a02 != 0 || a12 != 0); sweep++) {
        vl_jacobi_rotate(&d0, &d1, &a01, &a02, &a12); /* (0, 1); row 2 holds a20, a21 */
        vl_jacobi_rotate(&d0, &d2, &a02, &a01, &a12); /* (0, 2); row 1 holds a10, a12 */
        vl_jacobi_rotate(&d1, &d2, &a12, &a01, &a02); /* (1, 2); row 0 holds a01, a02 */
    }
    float t;
    if (d0 < d1) { t = d0; d0 = d1; d1 = t; }
    if (d1 < d2) { t = d1; d1 = d2; d2 = t; }
    if (d0 < d1) { t = d0; d0 = d1; d1 = t; }
    out[0] = d0;
    out[1] = d1;
    out[2] = d2;
}

#endif
