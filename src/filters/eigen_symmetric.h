/* Internal: eigenvalues of symmetric 2x2 (float32) and 3x3 (float32 in and out, double inside) matrices, sorted
 * descending, bit for bit the same on the CPU and the GPU. Plain C that nvcc also compiles for the device
 * (VL_HOST_DEVICE). Only +, -, x, / and sqrt are used, each of which IEEE 754 rounds correctly on both sides,
 * every step through the vl_f* and vl_d* helpers below (on the device the explicit round-to-nearest intrinsics,
 * which nvcc never fuses into FMAs), and no transcendental
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

/* vl_fmul, vl_fadd, vl_fsub, vl_fdiv (float) and vl_dmul, vl_dadd, vl_dsub, vl_ddiv (double): one operation,
 * rounded to nearest once; on the device the explicit intrinsic, which nvcc never contracts into an FMA. */
#ifdef __CUDA_ARCH__
#define VL_ROUNDED_OP(type, name, op, intrinsic) \
    static inline VL_HOST_DEVICE type name(type a, type b) { return intrinsic(a, b); }
#else
#define VL_ROUNDED_OP(type, name, op, intrinsic) \
    static inline VL_HOST_DEVICE type name(type a, type b) { return a op b; }
#endif
VL_ROUNDED_OP(float, vl_fmul, *, __fmul_rn)
VL_ROUNDED_OP(float, vl_fadd, +, __fadd_rn)
VL_ROUNDED_OP(float, vl_fsub, -, __fsub_rn)
VL_ROUNDED_OP(float, vl_fdiv, /, __fdiv_rn)
VL_ROUNDED_OP(double, vl_dmul, *, __dmul_rn)
VL_ROUNDED_OP(double, vl_dadd, +, __dadd_rn)
VL_ROUNDED_OP(double, vl_dsub, -, __dsub_rn)
VL_ROUNDED_OP(double, vl_ddiv, /, __ddiv_rn)
#undef VL_ROUNDED_OP

static inline VL_HOST_DEVICE float vl_fsqrt(float a)
{
#ifdef __CUDA_ARCH__
    return __fsqrt_rn(a);
#else
    return sqrtf(a);
#endif
}

static inline VL_HOST_DEVICE double vl_dsqrt(double a)
{
#ifdef __CUDA_ARCH__
    return __dsqrt_rn(a);
#else
    return sqrt(a);
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

/* Newton steps for the largest root of 4 c^3 - 3 c = r, r in [0, 1] (c = cos(acos(r) / 3) in [cos 30deg, 1]):
 * from the chord through its ends (at most 0.007 off), each step squares the error times at most 2, so the fourth
 * is at double rounding. The cubic's slope there is at least 6: the root is well conditioned in r. */
#define VL_EIGEN3_NEWTON_STEPS 4

/* [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]] in closed form, in double: with q the mean of the diagonal and
 * p^2 = |A - qI|^2 / 6 (Frobenius norm), the eigenvalues are
 * q + p b for the roots b of b^3 - 3 b = 2 r, r = det(A - qI) / 2 p^3, i.e. b = 2 c, -c +- sqrt(3) s with c the
 * largest root of 4 c^3 - 3 c = |r| (Newton, no trigonometric function), s = sqrt(1 - c^2), negated for r < 0.
 * The float32 entries are exact in double, squares and products cannot overflow or underflow there, and the
 * double result is within a few double ulps of the norm before it is rounded to float32 once: accurate to about
 * an ulp of the norm, repeated eigenvalues included (c away from the cubic's double root at 1/2). */
static inline VL_HOST_DEVICE void vl_eigen3(float xx, float xy, float xz, float yy, float yz, float zz, float out[3])
{
    const double off = vl_dadd(vl_dadd(vl_dmul(xy, xy), vl_dmul(xz, xz)), vl_dmul(yz, yz));
    if (off == 0) {
        float d0 = xx, d1 = yy, d2 = zz, t;
        if (d0 < d1) { t = d0; d0 = d1; d1 = t; }
        if (d1 < d2) { t = d1; d1 = d2; d2 = t; }
        if (d0 < d1) { t = d0; d0 = d1; d1 = t; }
        out[0] = d0;
        out[1] = d1;
        out[2] = d2;
        return;
    }
    const double q = vl_dmul(vl_dadd(vl_dadd(xx, yy), zz), 1.0 / 3.0);
    const double a = vl_dsub(xx, q), b = vl_dsub(yy, q), c = vl_dsub(zz, q);
    const double p2 = vl_dmul(vl_dadd(vl_dadd(vl_dadd(vl_dmul(a, a), vl_dmul(b, b)), vl_dmul(c, c)), vl_dmul(2, off)),
                              1.0 / 6.0);
    const double p = vl_dsqrt(p2);
    /* det(A - qI) by the first row */
    const double det = vl_dadd(vl_dsub(vl_dmul(a, vl_dsub(vl_dmul(b, c), vl_dmul(yz, yz))),
                                       vl_dmul(xy, vl_dsub(vl_dmul(xy, c), vl_dmul(yz, xz)))),
                               vl_dmul(xz, vl_dsub(vl_dmul(xy, yz), vl_dmul(b, xz))));
    double r = vl_ddiv(det, vl_dmul(vl_dmul(2, p2), p));
    const int negative = r < 0;
    r = fabs(r);
    if (r > 1)
        r = 1;
    double root = vl_dadd(0.8660254037844386, vl_dmul(0.1339745962155614, r));
    for (int k = 0; k < VL_EIGEN3_NEWTON_STEPS; k++) {
        const double square = vl_dmul(root, root);
        const double f = vl_dsub(vl_dmul(root, vl_dsub(vl_dmul(4, square), 3)), r);
        root = vl_dsub(root, vl_ddiv(f, vl_dsub(vl_dmul(12, square), 3)));
    }
    const double s = vl_dmul(1.7320508075688772, vl_dsqrt(vl_dmul(vl_dsub(1, root), vl_dadd(1, root))));
    double b0 = vl_dmul(2, root), b1 = vl_dsub(s, root), b2 = vl_dsub(vl_dsub(0, root), s);
    if (negative) {
        const double t = b0;
        b0 = vl_dsub(0, b2);
        b1 = vl_dsub(0, b1);
        b2 = vl_dsub(0, t);
    }
    out[0] = (float)vl_dadd(q, vl_dmul(p, b0));
    out[1] = (float)vl_dadd(q, vl_dmul(p, b1));
    out[2] = (float)vl_dadd(q, vl_dmul(p, b2));
}

#endif
