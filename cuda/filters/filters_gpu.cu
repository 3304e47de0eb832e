/* The filter bank on the device (filters_gpu.cuh), mirroring src/filters/filters_cpu.c step by step. */
#include <stdlib.h>
#include <string.h>

#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "filters/eigen_symmetric.h"
#include "filters/filters_gpu.cuh"

namespace {

struct dbox {
    int64_t lo[3], hi[3];
};

struct dfield {
    dbox box;
    double *v;
};

struct dkernel {
    int radius;
    double *w; /* device */
};

/* [axis][order] at one sigma */
struct dkernel_set {
    dkernel k[3][3];
    int64_t radius[3];
};

int64_t size_of(const dbox &b, int a) { return b.hi[a] - b.lo[a]; }
int64_t voxels_of(const dbox &b) { return size_of(b, 0) * size_of(b, 1) * size_of(b, 2); }

dbox grow(const dbox &b, const int64_t r[3], const int64_t n[3])
{
    dbox g;
    for (int a = 0; a < 3; a++) {
        g.lo[a] = b.lo[a] - r[a] < 0 ? 0 : b.lo[a] - r[a];
        g.hi[a] = b.hi[a] + r[a] > n[a] ? n[a] : b.hi[a] + r[a];
    }
    return g;
}

__device__ int64_t reflect(int64_t i, int64_t n)
{
    if (i >= 0 && i < n) /* inside: no 64-bit modulo per tap */
        return i;
    const int64_t period = 2 * n;
    int64_t m = i % period;
    if (m < 0)
        m += period;
    return m < n ? m : period - 1 - m;
}

/* Outputs per thread along the pass axis: each input value read once serves them all. */
const int PASS_OUTPUTS = 4;

/* out[p] = sum_{x=-r..r} w[r + x] * in[reflect(p_axis - x)], in that order, each product and sum rounded on its
 * own, as the CPU's line loop. A thread computes PASS_OUTPUTS consecutive outputs along the axis: where none of
 * their taps leaves the volume it walks the input line once, from the last tap down to the first, adding each
 * value to every output whose window holds it (so each output still sums x = -r .. r in order); near the
 * volume's border each output takes the reflected taps one by one. I: index type of the output box. */
template <typename I>
__global__ void pass_kernel(const double *in, dbox in_box, double *out, dbox out_box, int axis, const double *w,
                            int r, int64_t n_axis)
{
    __shared__ double weights[2 * VL_KERNEL_MAX_RADIUS + 1];
    for (int k = threadIdx.x; k <= 2 * r; k += blockDim.x)
        weights[k] = w[k];
    __syncthreads();
    I size[3], groups[3];
    for (int a = 0; a < 3; a++)
        groups[a] = size[a] = (I)(out_box.hi[a] - out_box.lo[a]);
    groups[axis] = (size[axis] + PASS_OUTPUTS - 1) / PASS_OUTPUTS;
    const I total = groups[0] * groups[1] * groups[2];
    const int64_t in_sx = in_box.hi[0] - in_box.lo[0], in_sy = in_box.hi[1] - in_box.lo[1];
    const int64_t stride[3] = {1, in_sx, in_sx * in_sy};
    const int64_t out_step = axis == 0 ? 1 : axis == 1 ? (int64_t)size[0] : (int64_t)size[0] * size[1];
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x) {
        I c[3];
        c[0] = i % groups[0];
        const I rest = i / groups[0];
        c[1] = rest % groups[1];
        c[2] = rest / groups[1];
        c[axis] *= PASS_OUTPUTS;
        const int count = size[axis] - c[axis] < (I)PASS_OUTPUTS ? (int)(size[axis] - c[axis]) : PASS_OUTPUTS;
        int64_t p[3], base = 0;
        for (int a = 0; a < 3; a++) {
            p[a] = out_box.lo[a] + (int64_t)c[a];
            if (a != axis)
                base += (p[a] - in_box.lo[a]) * stride[a];
        }
        double *target = out + (int64_t)c[0] + (int64_t)size[0] * ((int64_t)c[1] + (int64_t)size[1] * c[2]);
        const int64_t first = p[axis] - r, last = p[axis] + count - 1 + r;
        if (first >= 0 && last < n_axis) {
            double sum[PASS_OUTPUTS];
            for (int j = 0; j < PASS_OUTPUTS; j++)
                sum[j] = 0;
            const int64_t step = stride[axis];
            const double *source = in + base + (last - in_box.lo[axis]) * step;
            /* k-th value read: position last - k, tap j - count + 1 + k of output j (tap 0 is x = -r); for k in
             * [count - 1, 2 r] every output's tap is in its window, so that stretch needs no test */
            const int full_from = count - 1, full_to = 2 * r, end = count - 1 + 2 * r;
            int k = 0;
            for (; k < full_from || (k <= end && count < PASS_OUTPUTS); k++, source -= step) {
                const double v = *source;
#pragma unroll
                for (int j = 0; j < PASS_OUTPUTS; j++) {
                    const int tap = j - count + 1 + k;
                    if (j < count && tap >= 0 && tap <= 2 * r)
                        sum[j] = __dadd_rn(sum[j], __dmul_rn(weights[tap], v));
                }
            }
            for (; k <= full_to; k++, source -= step) {
                const double v = *source;
#pragma unroll
                for (int j = 0; j < PASS_OUTPUTS; j++)
                    sum[j] = __dadd_rn(sum[j], __dmul_rn(weights[j - (PASS_OUTPUTS - 1) + k], v));
            }
            for (; k <= end; k++, source -= step) {
                const double v = *source;
#pragma unroll
                for (int j = 0; j < PASS_OUTPUTS; j++) {
                    const int tap = j - count + 1 + k;
                    if (j < count && tap >= 0 && tap <= 2 * r)
                        sum[j] = __dadd_rn(sum[j], __dmul_rn(weights[tap], v));
                }
            }
#pragma unroll
            for (int j = 0; j < PASS_OUTPUTS; j++)
                if (j < count)
                    target[j * out_step] = sum[j];
        } else {
            for (int j = 0; j < count; j++) {
                double sum = 0;
                for (int x = -r; x <= r; x++) {
                    int64_t q = p[axis] + j - x;
                    /* one reflection covers [-n, 2 n); beyond, the periodic rule */
                    q = q < -n_axis || q >= 2 * n_axis ? reflect(q, n_axis)
                        : q < 0                          ? -q - 1
                        : q >= n_axis                    ? 2 * n_axis - 1 - q
                                                         : q;
                    sum = __dadd_rn(sum, __dmul_rn(weights[r + x], in[base + (q - in_box.lo[axis]) * stride[axis]]));
                }
                target[j * out_step] = sum;
            }
        }
    }
}

int blocks_for(int64_t n)
{
    const int64_t blocks = (n + 255) / 256;
    return blocks > 65535 * 8 ? 65535 * 8 : blocks < 1 ? 1 : (int)blocks;
}

} // namespace

struct vl_gpu_filters {
    vl_filter_bank bank;
    int64_t n[3];
    double spacing[3];
    dfield image;
    dkernel_set *sets;   /* per sigma: sigma, DoG sigma, structure inner sigma */
    double *scratch_host;
};

namespace {

cudaError_t kernel_make(dkernel *k, double sigma_voxels, int order, double truncate)
{
    double host[2 * VL_KERNEL_MAX_RADIUS + 1];
    if (sigma_voxels == 0) {
        k->radius = 0;
        host[0] = order == 0 ? 1 : 0;
    } else {
        k->radius = vl_gaussian_radius(sigma_voxels, truncate);
        vl_gaussian_kernel(sigma_voxels, order, k->radius, host);
    }
    const size_t bytes = sizeof(double) * (size_t)(2 * k->radius + 1);
    cudaError_t error = cudaMalloc(&k->w, bytes);
    return error != cudaSuccess ? error : cudaMemcpy(k->w, host, bytes, cudaMemcpyHostToDevice);
}

cudaError_t kernel_set_make(dkernel_set *ks, const vl_gpu_filters *f, double sigma_mm)
{
    memset(ks, 0, sizeof *ks);
    for (int a = 0; a < 3; a++)
        for (int o = 0; o < 3; o++) {
            const double sigma_voxels = a < f->bank.dims ? sigma_mm / f->spacing[a] : 0;
            const cudaError_t error = kernel_make(&ks->k[a][o], sigma_voxels, o, f->bank.truncate);
            if (error != cudaSuccess)
                return error;
            ks->radius[a] = ks->k[a][0].radius;
        }
    return cudaSuccess;
}

void kernel_set_free(dkernel_set *ks)
{
    for (int a = 0; a < 3; a++)
        for (int o = 0; o < 3; o++)
            cudaFree(ks->k[a][o].w);
}

struct tile_context {
    const vl_gpu_filters *f;
    cudaStream_t stream;
};

cudaError_t field_alloc(const tile_context &cx, dfield *f, const dbox &box)
{
    f->box = box;
    return cudaMallocAsync(&f->v, sizeof(double) * (size_t)voxels_of(box) + 8, cx.stream);
}

void field_free(const tile_context &cx, dfield *f)
{
    if (f->v)
        cudaFreeAsync(f->v, cx.stream);
    f->v = NULL;
}

cudaError_t pass(const tile_context &cx, const dfield &in, dfield &out, int axis, const dkernel &k)
{
    /* a thread per PASS_OUTPUTS outputs; 32-bit indices when the box allows */
    const int64_t total = voxels_of(out.box) / PASS_OUTPUTS + voxels_of(out.box) / size_of(out.box, axis) + 1;
    if (voxels_of(out.box) < ((int64_t)1 << 31))
        pass_kernel<uint32_t><<<blocks_for(total), 256, 0, cx.stream>>>(in.v, in.box, out.v, out.box, axis, k.w,
                                                                        k.radius, cx.f->n[axis]);
    else
        pass_kernel<uint64_t><<<blocks_for(total), 256, 0, cx.stream>>>(in.v, in.box, out.v, out.box, axis, k.w,
                                                                        k.radius, cx.f->n[axis]);
    return cudaGetLastError();
}

cudaError_t x_pass(const tile_context &cx, const dfield &in, const dbox &out_box, const dkernel &kx,
                   const int64_t r[3], dfield *out)
{
    const int64_t grow_yz[3] = {0, r[1], r[2]};
    cudaError_t e = field_alloc(cx, out, grow(out_box, grow_yz, cx.f->n));
    return e != cudaSuccess ? e : pass(cx, in, *out, 0, kx);
}

cudaError_t yz_pass(const tile_context &cx, const dfield &xf, const dbox &out_box, const dkernel &ky,
                    const dkernel &kz, dfield *out)
{
    cudaError_t e;
    if (cx.f->bank.dims == 2) {
        e = field_alloc(cx, out, out_box);
        return e != cudaSuccess ? e : pass(cx, xf, *out, 1, ky);
    }
    const int64_t grow_z[3] = {0, 0, kz.radius};
    dfield yf = {};
    e = field_alloc(cx, &yf, grow(out_box, grow_z, cx.f->n));
    if (e == cudaSuccess)
        e = pass(cx, xf, yf, 1, ky);
    if (e == cudaSuccess)
        e = field_alloc(cx, out, out_box);
    if (e == cudaSuccess)
        e = pass(cx, yf, *out, 2, kz);
    field_free(cx, &yf);
    return e;
}

/* The (ox, oy, oz) derivative of `in` on out_box: the x pass kept in xcache[ox] and, in 3D when ycache is given,
 * the y pass after it in ycache[ox][oy] (derivatives that differ only in z order share both). */
cudaError_t derivative(const tile_context &cx, const dfield &in, const dbox &out_box, const dkernel_set &ks,
                       dfield xcache[3], dfield (*ycache)[3], int ox, int oy, int oz, dfield *out)
{
    cudaError_t e;
    if (!xcache[ox].v && (e = x_pass(cx, in, out_box, ks.k[0][ox], ks.radius, &xcache[ox])) != cudaSuccess)
        return e;
    if (!ycache || cx.f->bank.dims == 2)
        return yz_pass(cx, xcache[ox], out_box, ks.k[1][oy], ks.k[2][oz], out);
    dfield &yf = ycache[ox][oy];
    if (!yf.v) {
        const int64_t grow_z[3] = {0, 0, ks.radius[2]};
        if ((e = field_alloc(cx, &yf, grow(out_box, grow_z, cx.f->n))) != cudaSuccess ||
            (e = pass(cx, xcache[ox], yf, 1, ks.k[1][oy])) != cudaSuccess)
            return e;
    }
    if ((e = field_alloc(cx, out, out_box)) != cudaSuccess)
        return e;
    return pass(cx, yf, *out, 2, ks.k[2][oz]);
}

/* Per-voxel combinations, in the CPU's order of operations. */
struct combine_args {
    const double *d[10];
    double sp[3];
    int dims;
    int64_t voxels;
    float *out;         /* first channel of the family */
};

__global__ void store_kernel(const double *v, float *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (float)v[i];
}

__global__ void log_kernel(combine_args a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.voxels; i += (int64_t)gridDim.x * blockDim.x) {
        double sum = 0;
        for (int k = 0; k < a.dims; k++)
            sum = __dadd_rn(sum, a.d[4 + k][i] / __dmul_rn(a.sp[k], a.sp[k]));
        a.out[i] = (float)sum;
    }
}

__global__ void gradient_kernel(combine_args a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.voxels; i += (int64_t)gridDim.x * blockDim.x) {
        double sum = 0;
        for (int k = 0; k < a.dims; k++) {
            const double g = a.d[1 + k][i] / a.sp[k];
            sum = __dadd_rn(sum, __dmul_rn(g, g));
        }
        a.out[i] = (float)sqrt(sum);
    }
}

__global__ void difference_kernel(const double *a, const double *b, float *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = (float)(a[i] - b[i]);
}

__global__ void product_kernel(const double *a, const double *b, double scale, double *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = __dmul_rn(__dmul_rn(a[i], b[i]), scale);
}

/* structure tensor: d[0..5] = xx, xy, xz, yy, yz, zz (smoothed products) */
__global__ void structure_kernel(combine_args a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.voxels; i += (int64_t)gridDim.x * blockDim.x) {
        double e[3];
        if (a.dims == 2)
            vl_eigen2(a.d[0][i], a.d[1][i], a.d[3][i], e);
        else
            vl_eigen3(a.d[0][i], a.d[1][i], a.d[2][i], a.d[3][i], a.d[4][i], a.d[5][i], e);
        for (int c = 0; c < a.dims; c++)
            a.out[c * a.voxels + i] = (float)e[c];
    }
}

__global__ void hessian_kernel(combine_args a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.voxels; i += (int64_t)gridDim.x * blockDim.x) {
        double e[3];
        const double *sp = a.sp;
        const double xx = a.d[4][i] / __dmul_rn(sp[0], sp[0]), yy = a.d[5][i] / __dmul_rn(sp[1], sp[1]),
                     xy = a.d[7][i] / __dmul_rn(sp[0], sp[1]);
        if (a.dims == 2)
            vl_eigen2(xx, xy, yy, e);
        else
            vl_eigen3(xx, xy, a.d[8][i] / __dmul_rn(sp[0], sp[2]), yy, a.d[9][i] / __dmul_rn(sp[1], sp[2]),
                      a.d[6][i] / __dmul_rn(sp[2], sp[2]), e);
        for (int c = 0; c < a.dims; c++)
            a.out[c * a.voxels + i] = (float)e[c];
    }
}

__global__ void offset_kernel(const double *image, int64_t nx, int64_t ny, int64_t nz, dbox box, int ux, int uy,
                              int uz, int vx, int vy, int vz, float *out)
{
    const int64_t sx = box.hi[0] - box.lo[0], sy = box.hi[1] - box.lo[1];
    const int64_t total = sx * sy * (box.hi[2] - box.lo[2]);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = box.lo[0] + i % sx, y = box.lo[1] + (i / sx) % sy, z = box.lo[2] + i / (sx * sy);
        const int64_t a = reflect(x + ux, nx) + nx * (reflect(y + uy, ny) + ny * reflect(z + uz, nz));
        const int64_t b = reflect(x + vx, nx) + nx * (reflect(y + vy, ny) + ny * reflect(z + vz, nz));
        out[i] = (float)(image[a] - image[b]);
    }
}

#define TRY(call)                           \
    do {                                    \
        if ((error = (call)) != cudaSuccess) \
            goto done;                      \
    } while (0)

/* The channels of sigma s (sets[3 s .. 3 s + 2]: sigma, DoG sigma, structure inner sigma). */
cudaError_t sigma_channels(const tile_context &cx, int s, const dbox &box, float *channels, int *channel)
{
    const vl_gpu_filters *f = cx.f;
    const unsigned families = f->bank.families[s];
    const int dims = f->bank.dims;
    const int64_t voxels = voxels_of(box);
    const dkernel_set &ks = f->sets[3 * s], &dog = f->sets[3 * s + 1], &inner = f->sets[3 * s + 2];
    static const int orders[10][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0},
                                      {0, 2, 0}, {0, 0, 2}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}};
    int need[10] = {0};
    need[0] = (families & (VL_FAMILY_SMOOTHING | VL_FAMILY_DOG)) != 0;
    for (int a = 0; a < dims; a++) {
        need[1 + a] = (families & VL_FAMILY_GRADIENT) != 0;
        need[4 + a] = (families & (VL_FAMILY_LOG | VL_FAMILY_HESSIAN)) != 0;
    }
    need[7] = (families & VL_FAMILY_HESSIAN) != 0;
    need[8] = need[9] = dims == 3 && need[7];
    dfield d[10] = {}, xc[3] = {}, yc[3][3] = {}, dog_x[3] = {}, smooth = {}, g[3] = {}, xi[3] = {}, tensor[6] = {};
    cudaError_t error = cudaSuccess;
    const int blocks = blocks_for(voxels);
    combine_args args = {};
    args.dims = dims;
    args.voxels = voxels;
    for (int a = 0; a < 3; a++)
        args.sp[a] = f->spacing[a];
    for (int i = 0; i < 10; i++)
        if (need[i])
            TRY(derivative(cx, f->image, box, ks, xc, yc, orders[i][0], orders[i][1], orders[i][2], &d[i]));
    for (int o = 0; o < 3; o++) {
        field_free(cx, &xc[o]);
        for (int q = 0; q < 3; q++)
            field_free(cx, &yc[o][q]);
    }
    for (int i = 0; i < 10; i++)
        args.d[i] = d[i].v;
    if (families & VL_FAMILY_SMOOTHING) {
        store_kernel<<<blocks, 256, 0, cx.stream>>>(d[0].v, channels + (int64_t)(*channel)++ * voxels, voxels);
        TRY(cudaGetLastError());
    }
    if (families & VL_FAMILY_LOG) {
        args.out = channels + (int64_t)(*channel)++ * voxels;
        log_kernel<<<blocks, 256, 0, cx.stream>>>(args);
        TRY(cudaGetLastError());
    }
    if (families & VL_FAMILY_GRADIENT) {
        args.out = channels + (int64_t)(*channel)++ * voxels;
        gradient_kernel<<<blocks, 256, 0, cx.stream>>>(args);
        TRY(cudaGetLastError());
    }
    if (families & VL_FAMILY_DOG) {
        TRY(derivative(cx, f->image, box, dog, dog_x, NULL, 0, 0, 0, &smooth));
        difference_kernel<<<blocks, 256, 0, cx.stream>>>(d[0].v, smooth.v, channels + (int64_t)(*channel)++ * voxels,
                                                         voxels);
        TRY(cudaGetLastError());
    }
    if (families & VL_FAMILY_STRUCTURE) {
        const dbox grown = grow(box, ks.radius, f->n);
        const int64_t grown_voxels = voxels_of(grown);
        for (int a = 0; a < dims; a++)
            TRY(derivative(cx, f->image, grown, inner, xi, NULL, a == 0, a == 1, a == 2, &g[a]));
        static const int pair[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
        for (int p = 0; p < 6; p++) {
            const int a = pair[p][0], b = pair[p][1];
            if (a >= dims || b >= dims)
                continue;
            dfield product = {}, px[3] = {};
            error = field_alloc(cx, &product, grown);
            if (error == cudaSuccess) {
                product_kernel<<<blocks_for(grown_voxels), 256, 0, cx.stream>>>(
                    g[a].v, g[b].v, 1 / (f->spacing[a] * f->spacing[b]), product.v, grown_voxels);
                error = cudaGetLastError();
            }
            if (error == cudaSuccess)
                error = derivative(cx, product, box, ks, px, NULL, 0, 0, 0, &tensor[p]);
            field_free(cx, &product);
            field_free(cx, &px[0]);
            if (error != cudaSuccess)
                goto done;
        }
        combine_args t = args;
        for (int p = 0; p < 6; p++)
            t.d[p] = tensor[p].v;
        t.out = channels + (int64_t)(*channel) * voxels;
        *channel += dims;
        structure_kernel<<<blocks, 256, 0, cx.stream>>>(t);
        TRY(cudaGetLastError());
    }
    if (families & VL_FAMILY_HESSIAN) {
        args.out = channels + (int64_t)(*channel) * voxels;
        *channel += dims;
        hessian_kernel<<<blocks, 256, 0, cx.stream>>>(args);
        TRY(cudaGetLastError());
    }
done:
    for (int i = 0; i < 10; i++)
        field_free(cx, &d[i]);
    for (int o = 0; o < 3; o++) {
        field_free(cx, &xc[o]);
        for (int q = 0; q < 3; q++)
            field_free(cx, &yc[o][q]);
        field_free(cx, &dog_x[o]);
        field_free(cx, &xi[o]);
        field_free(cx, &g[o]);
    }
    for (int p = 0; p < 6; p++)
        field_free(cx, &tensor[p]);
    field_free(cx, &smooth);
    return error;
}

__global__ void widen_kernel(const void *data, vl_dtype dtype, double *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        double v = 0;
        switch (dtype) {
        case VL_U8: v = ((const uint8_t *)data)[i]; break;
        case VL_I16: v = ((const int16_t *)data)[i]; break;
        case VL_U16: v = ((const uint16_t *)data)[i]; break;
        case VL_U32: v = ((const uint32_t *)data)[i]; break;
        case VL_F32: v = ((const float *)data)[i]; break;
        }
        out[i] = v;
    }
}

} // namespace

vl_status vl_gpu_filters_create(const vl_volume *image, const vl_filter_bank *bank, vl_gpu_filters **out)
{
    *out = NULL;
    vl_gpu_filters *f = (vl_gpu_filters *)calloc(1, sizeof *f);
    if (!f)
        return vl_fail(VL_ERR_MEMORY, "gpu filters: out of host memory");
    f->bank = *bank;
    f->n[0] = image->nx, f->n[1] = image->ny, f->n[2] = image->nz;
    for (int a = 0; a < 3; a++)
        f->spacing[a] = image->geometry.spacing[a];
    f->image.box = dbox{{0, 0, 0}, {image->nx, image->ny, image->nz}};
    const int64_t voxels = vl_volume_voxels(image);
    const size_t raw_bytes = (size_t)voxels * vl_dtype_size(image->dtype);
    void *raw = NULL;
    cudaError_t error = cudaMalloc(&f->image.v, sizeof(double) * (size_t)voxels);
    if (error == cudaSuccess)
        error = cudaMalloc(&raw, raw_bytes);
    if (error == cudaSuccess)
        error = vl_gpu_upload(raw, image->data, raw_bytes);
    if (error == cudaSuccess) {
        widen_kernel<<<blocks_for(voxels), 256>>>(raw, image->dtype, f->image.v, voxels);
        error = cudaGetLastError();
    }
    if (error == cudaSuccess)
        error = cudaDeviceSynchronize();
    cudaFree(raw);
    if (error == cudaSuccess && !(f->sets = (dkernel_set *)calloc((size_t)(3 * bank->sigma_count), sizeof(dkernel_set))))
        error = cudaErrorMemoryAllocation;
    for (int s = 0; error == cudaSuccess && s < bank->sigma_count; s++) {
        error = kernel_set_make(&f->sets[3 * s], f, bank->sigmas[s]);
        if (error == cudaSuccess)
            error = kernel_set_make(&f->sets[3 * s + 1], f, bank->sigmas[s] * bank->dog_ratio);
        if (error == cudaSuccess)
            error = kernel_set_make(&f->sets[3 * s + 2], f, bank->sigmas[s] * bank->st_inner_ratio);
    }
    if (error != cudaSuccess) {
        vl_gpu_filters_destroy(f);
        return vl_cuda_failure(error, "uploading the image and filter kernels");
    }
    *out = f;
    return VL_OK;
}

void vl_gpu_filters_destroy(vl_gpu_filters *f)
{
    if (!f)
        return;
    cudaFree(f->image.v);
    if (f->sets)
        for (int s = 0; s < 3 * f->bank.sigma_count; s++)
            kernel_set_free(&f->sets[s]);
    free(f->sets);
    free(f);
}

vl_status vl_gpu_filters_box(vl_gpu_filters *f, const vl_box *box, float *channels, cudaStream_t stream)
{
    const tile_context cx = {f, stream};
    const dbox b = {{box->lo[0], box->lo[1], box->lo[2]}, {box->hi[0], box->hi[1], box->hi[2]}};
    int channel = 0;
    for (int s = 0; s < f->bank.sigma_count; s++) {
        const cudaError_t error = sigma_channels(cx, s, b, channels, &channel);
        if (error != cudaSuccess)
            return vl_cuda_failure(error, "filter bank on a tile");
    }
    const int64_t voxels = voxels_of(b);
    for (int k = 0; k < f->bank.offset_count; k++) {
        const int32_t *o = f->bank.offsets[k];
        offset_kernel<<<blocks_for(voxels), 256, 0, stream>>>(f->image.v, f->n[0], f->n[1], f->n[2], b, o[0], o[1],
                                                              o[2], o[3], o[4], o[5],
                                                              channels + (int64_t)(channel + k) * voxels);
    }
    const cudaError_t error = cudaGetLastError();
    return error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "offset features on a tile");
}

vl_status vl_filters_compute_box_gpu(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box,
                                     float *channels)
{
    vl_gpu_filters *f = NULL;
    vl_status status = vl_gpu_filters_create(image, bank, &f);
    if (status != VL_OK)
        return status;
    const int64_t voxels = (box->hi[0] - box->lo[0]) * (box->hi[1] - box->lo[1]) * (box->hi[2] - box->lo[2]);
    const size_t bytes = sizeof(float) * (size_t)voxels * (size_t)vl_filter_bank_channels(bank);
    float *device = NULL;
    cudaStream_t stream = NULL;
    cudaError_t error = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (error == cudaSuccess)
        error = cudaMalloc(&device, bytes);
    if (error == cudaSuccess && (status = vl_gpu_filters_box(f, box, device, stream)) == VL_OK) {
        error = cudaMemcpyAsync(channels, device, bytes, cudaMemcpyDeviceToHost, stream);
        if (error == cudaSuccess)
            error = cudaStreamSynchronize(stream);
    }
    cudaFree(device);
    if (stream)
        cudaStreamDestroy(stream);
    vl_gpu_filters_destroy(f);
    if (status == VL_OK && error != cudaSuccess)
        status = vl_cuda_failure(error, "filter bank on a box");
    return status;
}
