/* SIFT on the GPU, after Kumar et al.'s method, computing what the CPU reference (src/features/sift_cpu.c)
 * computes:
 *   - a volume's slices go through in batches: every kernel covers all slices of a batch (grid z), so a
 *     batch is one launch chain, not one per slice; two batches are in flight on their own streams, so the
 *     host finishes one batch's keypoints while the device builds the next one's pyramid (the work the host
 *     waits for runs at the highest stream priority, the pyramids at the lowest), and the batch after next
 *     is queued before the host waits for a batch's descriptors;
 *   - launch shapes come from the occupancy calculator for each kernel (cudaOccupancyMaxPotentialBlockSize,
 *     with the shared memory a block size implies for the two-pass blur), computed once per device; the
 *     fused blur's shape is fixed by its register blocking;
 *   - each Gaussian level is one kernel: the source tile and its halo are staged in shared memory, the
 *     horizontal pass goes to a second shared tile and the vertical pass reads it, each thread computing
 *     several outputs from a register window (two passes through global memory only for kernels wider
 *     than 16); the DoG pyramid is not stored for detection: the extremum scan and the refinement take
 *     DoG samples as differences of Gaussian levels, the very floats the stored DoG holds (the blur writes
 *     DoG levels beside the Gaussian ones only for vl_sift_pyramid);
 *   - the 26-neighbour extremum test is a running max/min without data-dependent branches
 *     (vl_sift_extremum_test), slid down a column so each sample costs 12 loads rather than 27,
 *     and the survivors are appended with one atomic per warp (ballot + popc);
 *   - refinement: the CPU's code (src/features/sift_math.h); orientation histograms and descriptors: one
 *     warp per candidate or keypoint, samples spread over the lanes, histogram bins owned by lanes.
 * Bit-identity: this file is compiled without multiply-add contraction (CMakeLists.txt), the blur sums run
 * in the CPU's order, each histogram bin adds its samples in the CPU's order, the descriptor norms use the
 * one reduction tree both backends share, and transcendental functions go through double (sift_math.h);
 * keypoints are then put in the documented order on the host by the CPU's own vl_sift_finish_keypoints. */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "core/cuda_check.h"
#include "features/sift_internal.h"

__constant__ vl_sift_plan plan_c;

#define VERTICAL_ROWS_PER_THREAD 4
#define BATCH_MAX 32

typedef struct gpu_candidate {
    int32_t slice, layer, row, col;
} gpu_candidate;

typedef struct gpu_keypoint {
    vl_sift_keypoint keypoint;  /* doubled-input pixels until finished on the host */
    int32_t octave, layer;
} gpu_keypoint;

/* ---- kernels ---------------------------------------------------------------------------------------- */

template <typename T>
__global__ static void normalise_kernel(const T *__restrict__ in, float *__restrict__ out, int64_t n, float offset,
                                        float scale)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        out[i] = ((float)in[i] - offset) * scale;
}

/* 2x bilinear enlargement, the CPU's two passes fused: each output combines two horizontally interpolated
 * samples with the same float operations in the same order. Grid: x over columns, y over rows (strided),
 * z over slices, so no index is divided. */
__global__ static void upsample_kernel(const float *__restrict__ in, float *__restrict__ out, int64_t w, int64_t h)
{
    const int64_t w2 = 2 * w, h2 = 2 * h, b = blockIdx.z;
    const int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (x >= w2)
        return;
    const int64_t xi = x >> 1;
    int64_t left = (x & 1) ? xi : xi - 1, right = (x & 1) ? xi + 1 : xi;
    left = left < 0 ? 0 : left;
    right = right >= w ? w - 1 : right;
    const float ax = (x & 1) ? 0.75f : 0.25f, bx = (x & 1) ? 0.25f : 0.75f;
    const float *s = in + b * w * h;
    for (int64_t y = blockIdx.y; y < h2; y += gridDim.y) {
        int64_t yi = y >> 1;
        int64_t top = (y & 1) ? yi : yi - 1, bottom = (y & 1) ? yi + 1 : yi;
        top = top < 0 ? 0 : top;
        bottom = bottom >= h ? h - 1 : bottom;
        float ay = (y & 1) ? 0.75f : 0.25f, by = (y & 1) ? 0.25f : 0.75f;
        float r0 = s[top * w + left] * ax + s[top * w + right] * bx;
        float r1 = s[bottom * w + left] * ax + s[bottom * w + right] * bx;
        out[b * w2 * h2 + y * w2 + x] = r0 * ay + r1 * by;
    }
}

/* Both passes in one kernel for kernels of radius R <= FUSED_RADIUS_MAX (one instantiation per radius, so
 * that the sample windows live in registers): a block of 32 x 8 threads computes a FUSED_TILE_W x
 * FUSED_TILE_H tile. It stages the source tile with its halo (reflect-101) in shared memory; the horizontal
 * pass covers the tile's rows and halo rows, each thread 4 adjacent outputs from one window of 4 + 2R
 * samples read as float4, into a second shared array; the vertical pass gives each thread 8 consecutive
 * rows of one column from one window of 8 + 2R samples. Each output is the two-pass kernels' float sum in
 * the same order (centre tap, then taps 1..R on sample pairs), and the intermediate never goes through
 * global memory. When `dog` is set it also writes the DoG level dst - src from the staged centre sample. */
#define FUSED_TILE_W 32
#define FUSED_TILE_H 64
#define FUSED_ROWS_PER_THREAD 8 /* FUSED_TILE_H / blockDim.y */
#define FUSED_RADIUS_MAX 16

template <int R>
__global__ static void __launch_bounds__(FUSED_TILE_W * FUSED_TILE_H / FUSED_ROWS_PER_THREAD)
blur_fused_kernel(const float *__restrict__ src, float *__restrict__ dst, int64_t w, int64_t h, int64_t src_stride,
                  int64_t dst_stride, int level, float *__restrict__ dog, int64_t dog_stride)
{
    constexpr int threads = FUSED_TILE_W * FUSED_TILE_H / FUSED_ROWS_PER_THREAD;
    constexpr int used_w = FUSED_TILE_W + 2 * R;     /* columns x0 - R .. x0 + 31 + R */
    constexpr int in_w = (used_w + 3) / 4 * 4;       /* rows padded to whole float4 */
    constexpr int in_h = FUSED_TILE_H + 2 * R;       /* rows y0 - R .. y0 + 63 + R */
    constexpr int row_window = (4 + 2 * R + 3) / 4 * 4;
    constexpr int col_window = FUSED_ROWS_PER_THREAD + 2 * R;
    __shared__ __align__(16) float in[in_h * in_w];
    __shared__ __align__(16) float mid[in_h * FUSED_TILE_W];
    float taps[R + 1];
#pragma unroll
    for (int k = 0; k <= R; k++)
        taps[k] = plan_c.kernel[level][k];
    const int tid = threadIdx.y * FUSED_TILE_W + threadIdx.x;
    const int64_t x0 = (int64_t)blockIdx.x * FUSED_TILE_W, y0 = (int64_t)blockIdx.y * FUSED_TILE_H;
    const int64_t b = blockIdx.z;
    const float *plane = src + b * src_stride;
    /* A warp stages whole rows: one row index per row, one column index per sample. */
    for (int i = threadIdx.y; i < in_h; i += threads / FUSED_TILE_W) {
        const float *row = plane + vl_sift_reflect101(y0 - R + i, h) * w;
        for (int j = threadIdx.x; j < in_w; j += FUSED_TILE_W)
            in[i * in_w + j] = j < used_w ? row[vl_sift_reflect101(x0 - R + j, w)] : 0.f;
    }
    __syncthreads();
    /* Horizontal: unit u = row i, outputs 4q .. 4q + 3 (tile columns), centred on in columns 4q + e + R. */
    for (int u = tid; u < in_h * (FUSED_TILE_W / 4); u += threads) {
        const int i = u / (FUSED_TILE_W / 4), q = u - i * (FUSED_TILE_W / 4);
        const float4 *row = reinterpret_cast<const float4 *>(in + i * in_w + 4 * q);
        float window[row_window];
#pragma unroll
        for (int v = 0; v < row_window / 4; v++) {
            const float4 f = row[v];
            window[4 * v] = f.x;
            window[4 * v + 1] = f.y;
            window[4 * v + 2] = f.z;
            window[4 * v + 3] = f.w;
        }
        float out[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float sum = taps[0] * window[e + R];
#pragma unroll
            for (int k = 1; k <= R; k++)
                sum += taps[k] * (window[e + R - k] + window[e + R + k]);
            out[e] = sum;
        }
        *reinterpret_cast<float4 *>(mid + i * FUSED_TILE_W + 4 * q) = make_float4(out[0], out[1], out[2], out[3]);
    }
    __syncthreads();
    /* Vertical: column tx, tile rows j0 .. j0 + 7, centred on mid rows j0 + o + R. */
    const int tx = threadIdx.x, j0 = threadIdx.y * FUSED_ROWS_PER_THREAD;
    const int64_t x = x0 + tx;
    if (x >= w)
        return;
    float window[col_window];
#pragma unroll
    for (int m = 0; m < col_window; m++)
        window[m] = mid[(j0 + m) * FUSED_TILE_W + tx];
#pragma unroll
    for (int o = 0; o < FUSED_ROWS_PER_THREAD; o++) {
        const int64_t y = y0 + j0 + o;
        if (y >= h)
            break;
        float sum = taps[0] * window[o + R];
#pragma unroll
        for (int k = 1; k <= R; k++)
            sum += taps[k] * (window[o + R - k] + window[o + R + k]);
        dst[b * dst_stride + y * w + x] = sum;
        if (dog)
            dog[b * dog_stride + y * w + x] = sum - in[(j0 + o + R) * in_w + tx + R];
    }
}

typedef void (*blur_fused_fn)(const float *, float *, int64_t, int64_t, int64_t, int64_t, int, float *, int64_t);

/* The fused blur for radius r (0 .. FUSED_RADIUS_MAX), or NULL beyond. */
template <int R>
static blur_fused_fn blur_fused_for(int r)
{
    return r == R ? blur_fused_kernel<R> : blur_fused_for<R - 1>(r);
}

template <>
blur_fused_fn blur_fused_for<-1>(int)
{
    return NULL;
}

/* Wider kernels, in two passes through `scratch`:
 * Horizontal pass: a block computes blockDim.x outputs of one row from a shared copy of the row segment
 * and its halo (reflect-101 at the ends). */
__global__ static void blur_rows_kernel(const float *__restrict__ src, float *__restrict__ dst, int64_t w, int64_t h,
                                        int64_t src_stride, int64_t dst_stride, int level)
{
    extern __shared__ float segment[];
    const int r = plan_c.radius[level];
    const float *taps = plan_c.kernel[level];
    const int64_t x0 = (int64_t)blockIdx.x * blockDim.x;
    const int64_t b = blockIdx.z;
    for (int64_t y = blockIdx.y; y < h; y += gridDim.y) {
        const float *row = src + b * src_stride + y * w;
        for (int i = threadIdx.x; i < (int)blockDim.x + 2 * r; i += blockDim.x)
            segment[i] = row[vl_sift_reflect101(x0 - r + i, w)];
        __syncthreads();
        int64_t x = x0 + threadIdx.x;
        if (x < w) {
            const float *s = segment + threadIdx.x + r;
            float sum = taps[0] * s[0];
            for (int k = 1; k <= r; k++)
                sum += taps[k] * (s[-k] + s[k]);
            dst[b * dst_stride + y * w + x] = sum;
        }
        __syncthreads();
    }
}

/* Vertical pass: a block of 32 x blockDim.y threads computes a strip of 32 columns x
 * blockDim.y * VERTICAL_ROWS_PER_THREAD rows from a shared copy of the strip and its halo rows. When `dog`
 * is set, it also writes the DoG level dst - below (below: the level this one was blurred from, same
 * stride), so no separate pass reads both levels again. */
__global__ static void blur_cols_kernel(const float *__restrict__ src, float *__restrict__ dst, int64_t w, int64_t h,
                                        int64_t src_stride, int64_t dst_stride, int level,
                                        const float *__restrict__ below, float *__restrict__ dog, int64_t dog_stride)
{
    extern __shared__ float strip[];
    const int r = plan_c.radius[level];
    const float *taps = plan_c.kernel[level];
    const int rows = blockDim.y * VERTICAL_ROWS_PER_THREAD, tile_rows = rows + 2 * r;
    const int64_t x = (int64_t)blockIdx.x * 32 + threadIdx.x, y0 = (int64_t)blockIdx.y * rows, b = blockIdx.z;
    const float *plane = src + b * src_stride;
    for (int i = threadIdx.y; i < tile_rows; i += blockDim.y)
        strip[i * 32 + threadIdx.x] = x < w ? plane[vl_sift_reflect101(y0 - r + i, h) * w + x] : 0.f;
    __syncthreads();
    if (x >= w)
        return;
    for (int j = 0; j < VERTICAL_ROWS_PER_THREAD; j++) {
        int t = threadIdx.y + j * blockDim.y;
        int64_t y = y0 + t;
        if (y >= h)
            break;
        const float *c = strip + (t + r) * 32 + threadIdx.x;
        float sum = taps[0] * c[0];
        for (int k = 1; k <= r; k++)
            sum += taps[k] * (c[-k * 32] + c[k * 32]);
        dst[b * dst_stride + y * w + x] = sum;
        if (dog)
            dog[b * dog_stride + y * w + x] = sum - below[b * dst_stride + y * w + x];
    }
}

/* Nearest-neighbour halving; grid as the enlargement's. */
__global__ static void downsample_kernel(const float *__restrict__ src, int64_t sw, int64_t sh, float *__restrict__ dst,
                                         int64_t dw, int64_t dh, int64_t slice_stride)
{
    const int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, b = blockIdx.z;
    if (x >= dw)
        return;
    const double fx = 1. / ((double)dw / sw), fy = 1. / ((double)dh / sh);
    int64_t sx = (int64_t)floor(x * fx);
    sx = sx > sw - 1 ? sw - 1 : sx;
    for (int64_t y = blockIdx.y; y < dh; y += gridDim.y) {
        int64_t sy = (int64_t)floor(y * fy);
        sy = sy > sh - 1 ? sh - 1 : sy;
        dst[b * slice_stride + y * dw + x] = src[b * slice_stride + sy * sw + sx];
    }
}

/* The extremum scan: a thread walks EXTREMA_ROWS rows of one interior column of an inner DoG layer, keeping
 * the maximum and minimum of the 3 x 3 samples of the three DoG levels for the rows above, at and below
 * the current one, so each row costs 12 loads (3 columns of the 4 Gaussian levels whose differences are
 * the 3 DoG levels; the DoG pyramid is not stored) instead of the 27 of a 3 x 3 x 3 test. Blocks of 32 x
 * blockDim.y threads (a warp is 32 adjacent columns); grid x over columns, y over row strips, z over
 * (slice, layer). The test is branch-free (vl_sift_extremum_test) and survivors are appended with one
 * atomicAdd per warp. */
#define EXTREMA_ROWS 16

/* Maximum and minimum of samples i - 1, i, i + 1 of the three DoG levels g1 - g0, g2 - g1, g3 - g2 (the
 * stored DoG's differences); centre gets the middle level's sample i. */
static __device__ __forceinline__ void extrema_row(const float *__restrict__ g0, const float *__restrict__ g1,
                                                   const float *__restrict__ g2, const float *__restrict__ g3,
                                                   int64_t i, float *hi, float *lo, float *centre)
{
    const float a0 = g0[i - 1], a1 = g0[i], a2 = g0[i + 1];
    const float b0 = g1[i - 1], b1 = g1[i], b2 = g1[i + 1];
    const float d0 = g2[i - 1], d1 = g2[i], d2 = g2[i + 1];
    const float e0 = g3[i - 1], e1 = g3[i], e2 = g3[i + 1];
    const float p0 = b0 - a0, p1 = b1 - a1, p2 = b2 - a2;
    const float c0 = d0 - b0, c1 = d1 - b1, c2 = d2 - b2;
    const float n0 = e0 - d0, n1 = e1 - d1, n2 = e2 - d2;
    *hi = vl_sift_max(vl_sift_max(vl_sift_max(p0, p1), vl_sift_max(p2, c0)),
                      vl_sift_max(vl_sift_max(c1, c2), vl_sift_max(vl_sift_max(n0, n1), n2)));
    *lo = vl_sift_min(vl_sift_min(vl_sift_min(p0, p1), vl_sift_min(p2, c0)),
                      vl_sift_min(vl_sift_min(c1, c2), vl_sift_min(vl_sift_min(n0, n1), n2)));
    *centre = c1;
}

__global__ static void extrema_kernel(const float *__restrict__ gauss, int octave, int64_t gauss_stride,
                                      gpu_candidate *candidates, unsigned int *count, unsigned int capacity)
{
    const int64_t w = plan_c.w[octave], h = plan_c.h[octave], n = w * h;
    const int layer = 1 + (int)(blockIdx.z % plan_c.layers), b = (int)(blockIdx.z / plan_c.layers);
    const int64_t c = VL_SIFT_IMG_BORDER + (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int valid = c < w - VL_SIFT_IMG_BORDER;
    const int64_t column = valid ? c : VL_SIFT_IMG_BORDER; /* lanes past the edge read a valid column */
    const int64_t first = VL_SIFT_IMG_BORDER + ((int64_t)blockIdx.y * blockDim.y + threadIdx.y) * EXTREMA_ROWS;
    const int64_t end = first + EXTREMA_ROWS < h - VL_SIFT_IMG_BORDER ? first + EXTREMA_ROWS : h - VL_SIFT_IMG_BORDER;
    if (first >= end)
        return; /* the whole warp: first depends on threadIdx.y only */
    const float *base = gauss + b * gauss_stride + plan_c.gauss_offset[octave];
    const float *g0 = base + (layer - 1) * n, *g1 = base + layer * n, *g2 = base + (layer + 1) * n,
                *g3 = base + (layer + 2) * n;
    const float threshold = plan_c.scan_threshold;
    const unsigned lane = threadIdx.x;
    float hi_above, lo_above, hi_here, lo_here, v_here, unused;
    extrema_row(g0, g1, g2, g3, (first - 1) * w + column, &hi_above, &lo_above, &unused);
    extrema_row(g0, g1, g2, g3, first * w + column, &hi_here, &lo_here, &v_here);
    for (int64_t r = first; r < end; r++) {
        float hi_below, lo_below, v_below;
        extrema_row(g0, g1, g2, g3, (r + 1) * w + column, &hi_below, &lo_below, &v_below);
        const float hi = vl_sift_max(vl_sift_max(hi_above, hi_here), hi_below);
        const float lo = vl_sift_min(vl_sift_min(lo_above, lo_here), lo_below);
        const int hit = valid & vl_sift_extremum_test(v_here, hi, lo, threshold);
        const unsigned ballot = __ballot_sync(0xffffffffu, hit);
        if (ballot) {
            const int leader = __ffs(ballot) - 1;
            unsigned slot0 = 0;
            if ((int)lane == leader)
                slot0 = atomicAdd(count, (unsigned)__popc(ballot));
            slot0 = __shfl_sync(0xffffffffu, slot0, leader);
            const unsigned slot = slot0 + __popc(ballot & ((1u << lane) - 1));
            if (hit && slot < capacity)
                candidates[slot] = gpu_candidate{b, layer, (int32_t)r, (int32_t)c};
        }
        hi_above = hi_here;
        lo_above = lo_here;
        hi_here = hi_below;
        lo_here = lo_below;
        v_here = v_below;
    }
}

/* Warp-per-item kernels: at most this many warps per block (their shared memory is sized for it). */
#define WARPS_PER_BLOCK_MAX 8
#define FULL_WARP 0xffffffffu

/* One warp per candidate: refinement, contrast and edge tests (every lane the same, vl_sift_refine), then
 * the orientation histogram with the samples spread over the lanes, 32 at a time in row-major order. Lane
 * L owns bins L and L + 32 and adds the samples of its bins in that order, so each bin is the CPU's sum.
 * One keypoint per peak. The candidate count is read on the device (the extremum scan's counter, at most
 * the list's capacity), so the launch needs no round trip to the host: its warps stride over the list. */
__global__ static void orient_kernel(const float *__restrict__ gauss, int octave, int64_t gauss_stride,
                                     const gpu_candidate *candidates,
                                     const unsigned int *candidates_found, unsigned int candidate_capacity,
                                     gpu_keypoint *keypoints, unsigned int *count, unsigned int capacity)
{
    __shared__ float bins[WARPS_PER_BLOCK_MAX][VL_SIFT_ORI_BINS];
    const unsigned int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
    const unsigned int warps = gridDim.x * (blockDim.x >> 5);
    float *temp = bins[warp_in_block];
    const int64_t w = plan_c.w[octave], h = plan_c.h[octave], n = w * h;
    const unsigned int candidate_count =
        *candidates_found < candidate_capacity ? *candidates_found : candidate_capacity;
    for (unsigned int item = blockIdx.x * (blockDim.x >> 5) + warp_in_block; item < candidate_count; item += warps) {
        const gpu_candidate cand = candidates[item];
        const float *levels[VL_SIFT_MAX_LEVELS];
        const float *gauss_octave = gauss + cand.slice * gauss_stride + plan_c.gauss_offset[octave];
        for (int l = 0; l < plan_c.gauss_levels; l++)
            levels[l] = gauss_octave + l * n;
        vl_sift_candidate c;
        if (!vl_sift_refine(levels, w, h, octave, cand.layer, cand.row, cand.col, plan_c.layers,
                            plan_c.contrast_threshold, plan_c.edge_threshold, plan_c.sigma, &c))
            continue;
        const float *level = levels[c.layer];
        const float scale_octave = c.size * 0.5f / (float)(1 << octave);
        const int radius = vl_sift_round(VL_SIFT_ORI_RADIUS * scale_octave);
        const float sigma = VL_SIFT_ORI_SIG_FACTOR * scale_octave;
        const float expf_scale = -1.f / (2.f * sigma * sigma);
        const int side = 2 * radius + 1, samples = side * side;
        float own_low = 0.f, own_high = 0.f;  /* bins lane and lane + 32 */
        for (int first = 0; first < samples; first += 32) {
            const int s = first + (int)lane;
            int bin = -1;
            float value = 0.f;
            if (s < samples && !vl_sift_orientation_sample(level, w, h, c.row, c.col, s / side - radius,
                                                           s % side - radius, expf_scale, &bin, &value))
                bin = -1;
            for (unsigned int pending = __ballot_sync(FULL_WARP, bin >= 0); pending; pending &= pending - 1) {
                const int t = __ffs(pending) - 1;
                const int b = __shfl_sync(FULL_WARP, bin, t);
                const float v = __shfl_sync(FULL_WARP, value, t);
                if (b == (int)lane)
                    own_low += v;
                if (b == (int)lane + 32)
                    own_high += v;
            }
        }
        temp[lane] = own_low;
        if (lane + 32 < VL_SIFT_ORI_BINS)
            temp[lane + 32] = own_high;
        __syncwarp();
        const float smooth_low = vl_sift_orientation_smoothed(temp, (int)lane);
        const float smooth_high =
            lane + 32 < VL_SIFT_ORI_BINS ? vl_sift_orientation_smoothed(temp, (int)lane + 32) : smooth_low;
        /* The maximum of finite non-negative values does not depend on the order it is taken in. */
        float peak = vl_sift_max(smooth_low, smooth_high);
        for (int offset = 16; offset >= 1; offset >>= 1)
            peak = vl_sift_max(peak, __shfl_xor_sync(FULL_WARP, peak, offset));
        __syncwarp();
        temp[lane] = smooth_low;
        if (lane + 32 < VL_SIFT_ORI_BINS)
            temp[lane + 32] = smooth_high;
        __syncwarp();
        const float threshold = peak * VL_SIFT_ORI_PEAK_RATIO;
        for (int j = (int)lane; j < VL_SIFT_ORI_BINS; j += 32) {
            float angle = vl_sift_peak_angle(temp, j, threshold);
            if (angle < 0)
                continue;
            unsigned slot = atomicAdd(count, 1u);
            if (slot < capacity) {
                gpu_keypoint k;
                k.keypoint = vl_sift_keypoint{c.x, c.y, c.size, angle, c.response, c.octave_packed, cand.slice};
                k.octave = octave;
                k.layer = c.layer;
                keypoints[slot] = k;
            }
        }
        __syncwarp();
    }
}

/* One warp per finished keypoint (input pixels): its descriptor from its Gaussian level. The samples are
 * spread over the lanes 32 at a time in row-major order; lane L owns cell L / 2 of the 4 x 4 inner cells
 * and, of its 10 orientation bins, 0-3 and 8-9 (L even) or 4-7 (L odd), and adds the shares of its bins
 * in sample order, so each bin is the CPU's sum. After folding bins 8-9 into 0-1, lane L holds values
 * 4L..4L+3 of the descriptor, the layout vl_sift_descriptor_sum_squares reduces. */
__global__ static void descriptor_kernel(const float *__restrict__ gauss, int64_t gauss_stride,
                                         const gpu_keypoint *keypoints, unsigned int count, float *descriptors)
{
    __shared__ float shares[WARPS_PER_BLOCK_MAX][32][9];  /* 9: rows of 8 shares padded against bank conflicts */
    const unsigned int lane = threadIdx.x & 31, warp_in_block = threadIdx.x >> 5;
    const unsigned int warps = gridDim.x * (blockDim.x >> 5);
    float(*share)[9] = shares[warp_in_block];
    const int cell_row = (int)(lane >> 3), cell_col = (int)((lane >> 1) & 3), odd = (int)(lane & 1);
    /* label[m]: the orientation bin accumulator m holds, -1 for none. */
    int label[6];
    for (int m = 0; m < 6; m++)
        label[m] = m < 4 ? m + 4 * odd : odd ? -1 : m + 4;
    for (unsigned int item = blockIdx.x * (blockDim.x >> 5) + warp_in_block; item < count; item += warps) {
        const gpu_keypoint k = keypoints[item];
        const int o = k.octave;
        const int64_t w = plan_c.w[o], h = plan_c.h[o];
        const float *level = gauss + k.keypoint.slice * gauss_stride + plan_c.gauss_offset[o] + k.layer * w * h;
        const float scale = 2.f / (float)(1 << o);
        float angle = 360.f - k.keypoint.angle;
        if (fabsf(angle - 360.f) < VL_SIFT_FLT_EPSILON)
            angle = 0.f;
        const vl_sift_descr_geometry g = vl_sift_descriptor_geometry(
            w, h, k.keypoint.x * scale, k.keypoint.y * scale, angle, k.keypoint.size * scale * 0.5f);
        const int side = 2 * g.radius + 1, samples = side * side;
        float acc[6] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        for (int first = 0; first < samples; first += 32) {
            const int s = first + (int)lane;
            int r0 = 0, c0 = 0, o0 = 0, found = 0;
            float v[8];
            if (s < samples)
                found = vl_sift_descriptor_sample(level, w, h, &g, s / side - g.radius, s % side - g.radius, &r0,
                                                  &c0, &o0, v);
            if (found)
                for (int m = 0; m < 8; m++)
                    share[lane][m] = v[m];
            const int where = (r0 + 1) | ((c0 + 1) << 4) | (o0 << 8);
            const unsigned int pending_all = __ballot_sync(FULL_WARP, found);
            __syncwarp();
            for (unsigned int pending = pending_all; pending; pending &= pending - 1) {
                const int t = __ffs(pending) - 1;
                const int at = __shfl_sync(FULL_WARP, where, t);
                const int dr = cell_row - ((at & 15) - 1), dc = cell_col - (((at >> 4) & 15) - 1);
                if (dr < 0 || dr > 1 || dc < 0 || dc > 1)
                    continue;
                const int bin = at >> 8, pair = (dr * 2 + dc) * 2;
                const float low = share[t][pair], high = share[t][pair + 1];
                for (int m = 0; m < 6; m++) {
                    if (label[m] == bin)
                        acc[m] += low;
                    if (label[m] == bin + 1)
                        acc[m] += high;
                }
            }
            __syncwarp();
        }
        if (!odd) {
            acc[0] += acc[4];
            acc[1] += acc[5];
        }
        float norm2 = acc[0] * acc[0];
        norm2 += acc[1] * acc[1];
        norm2 += acc[2] * acc[2];
        norm2 += acc[3] * acc[3];
        for (int offset = 16; offset >= 1; offset >>= 1)
            norm2 = norm2 + __shfl_xor_sync(FULL_WARP, norm2, offset);
        const float threshold = sqrtf(norm2) * VL_SIFT_DESCR_MAG_THR;
        for (int m = 0; m < 4; m++)
            acc[m] = fminf(acc[m], threshold);
        norm2 = acc[0] * acc[0];
        norm2 += acc[1] * acc[1];
        norm2 += acc[2] * acc[2];
        norm2 += acc[3] * acc[3];
        for (int offset = 16; offset >= 1; offset >>= 1)
            norm2 = norm2 + __shfl_xor_sync(FULL_WARP, norm2, offset);
        const float factor = VL_SIFT_DESCR_INT_FACTOR / fmaxf(sqrtf(norm2), VL_SIFT_FLT_EPSILON);
        float *dst = descriptors + (int64_t)item * VL_SIFT_DESCRIPTOR_SIZE + 4 * lane;
        for (int m = 0; m < 4; m++)
            dst[m] = vl_sift_descriptor_quantise(acc[m], factor);
    }
}

/* ---- launch shapes ---------------------------------------------------------------------------------- */

/* Threads per block for each kernel, from the occupancy calculator; the blur kernels' choice depends on
 * the radius through their shared memory, so they are sized per pyramid level. */
typedef struct launch_shapes {
    int upsample, downsample, extrema, orient, descriptor, normalise;  /* extrema: blockDim.y of 32-wide blocks */
    int orient_grid;  /* blocks of the orientation kernel resident on the device at once */
    int rows[VL_SIFT_MAX_LEVELS], cols[VL_SIFT_MAX_LEVELS];  /* cols: blockDim.y of 32-wide blocks */
    blur_fused_fn fused[VL_SIFT_MAX_LEVELS];  /* the fused blur of each level; NULL: two passes */
} launch_shapes;

struct row_shared_bytes {
    int radius;
    __host__ __device__ size_t operator()(int block) const { return (size_t)(block + 2 * radius) * sizeof(float); }
};

struct col_shared_bytes {
    int radius;
    __host__ __device__ size_t operator()(int block) const
    {
        return (size_t)32 * ((block / 32) * VERTICAL_ROWS_PER_THREAD + 2 * radius) * sizeof(float);
    }
};

template <typename K>
static int occupancy_block(K kernel, int limit = 0)
{
    int grid = 0, block = 256;
    if (cudaOccupancyMaxPotentialBlockSize(&grid, &block, kernel, 0, limit) != cudaSuccess || block < 32)
        block = limit && limit < 256 ? limit : 256;
    return block / 32 * 32;
}

static vl_status choose_shapes(const vl_sift_plan *plan, launch_shapes *shapes)
{
    shapes->upsample = occupancy_block(upsample_kernel);
    shapes->downsample = occupancy_block(downsample_kernel);
    shapes->extrema = occupancy_block(extrema_kernel) / 32;
    shapes->orient = occupancy_block(orient_kernel, 32 * WARPS_PER_BLOCK_MAX);
    shapes->descriptor = occupancy_block(descriptor_kernel, 32 * WARPS_PER_BLOCK_MAX);
    shapes->normalise = occupancy_block(normalise_kernel<float>);
    int device = 0, processors = 0, per_processor = 0;
    VL_CUDA_TRY(cudaGetDevice(&device), "querying the device");
    VL_CUDA_TRY(cudaDeviceGetAttribute(&processors, cudaDevAttrMultiProcessorCount, device), "querying the device");
    VL_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_processor, orient_kernel, shapes->orient, 0),
                "sizing the orientation kernel");
    shapes->orient_grid = (processors > 0 ? processors : 1) * (per_processor > 0 ? per_processor : 1);
    for (int level = 0; level < plan->gauss_levels; level++) {
        int grid = 0, block = 0;
        /* The fused blur's shape is fixed by its register blocking (32 x 8 threads, 8 rows each). */
        shapes->fused[level] = blur_fused_for<FUSED_RADIUS_MAX>(plan->radius[level]);
        if (shapes->fused[level])
            continue;
        VL_CUDA_TRY(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, blur_rows_kernel,
                                                                    row_shared_bytes{plan->radius[level]}, 1024),
                    "sizing the row blur");
        shapes->rows[level] = block < 32 ? 32 : block;
        VL_CUDA_TRY(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, blur_cols_kernel,
                                                                    col_shared_bytes{plan->radius[level]}, 1024),
                    "sizing the column blur");
        shapes->cols[level] = block < 32 ? 1 : block / 32;
        /* Wide kernels (large sigma) must still fit the 48 KiB a block gets without opting in. */
        while (shapes->cols[level] > 1 && col_shared_bytes{plan->radius[level]}(32 * shapes->cols[level]) > 48 * 1024)
            shapes->cols[level] /= 2;
    }
    return VL_OK;
}

static unsigned int grid_for(int64_t items, int block)
{
    int64_t blocks = (items + block - 1) / block;
    return (unsigned int)(blocks < 1 ? 1 : blocks > 65535 * 16 ? 65535 * 16 : blocks);
}

/* ---- the pyramid of a batch ------------------------------------------------------------------------- */

/* One batch of slices on the device, with its own streams: two batches are in flight, so that the host
 * finishes one batch's keypoints while the device builds the next one's pyramid. The upload and the
 * pyramid go on `stream`, at the lowest priority; the detection and the descriptors, which the host waits
 * for, go on `urgent`, at the highest, after the event `built`: their blocks are scheduled ahead of the
 * other batch's pyramid blocks rather than behind them. */
typedef struct gpu_batch {
    cudaStream_t stream, urgent;
    cudaEvent_t built;      /* on `stream`, after the pyramid */
    cudaEvent_t described;  /* on `urgent`, after the descriptors and their copy to the host */
    float *input;      /* slices x w x h, normalised */
    float *doubled;    /* slices x 4wh */
    float *scratch;    /* slices x 4wh, the horizontal pass's output (kernels wider than the fused blur's) */
    float *gauss;      /* the Gaussian pyramids; their DoG levels are taken as differences where needed */
    void *raw;         /* slices of the volume as stored */
    gpu_candidate *candidates;
    gpu_keypoint *keypoints;
    float *descriptors;
    unsigned int *counters;       /* [0] keypoints, [1 + o] candidates of octave o */
    unsigned int *host_counters;  /* pinned: the counters as copied at the end of the detection */
    /* Pinned host buffers kept for every batch this one carries, grown when a batch needs more: the raw
     * keypoints as detected, the finished keypoints sent back, and their descriptors. */
    gpu_keypoint *host_raw, *host_ordered;
    float *host_descriptors;
    size_t host_raw_bytes, host_ordered_bytes, host_descriptor_bytes;
    unsigned int candidate_capacity, keypoint_capacity, descriptor_capacity;
    int slices;
    /* The finished keypoints of the batch being described, per slice, until appended to the output; the
     * next batch on these buffers may be queued meanwhile, so they keep their own slice count. */
    vl_sift_list *lists;
    int list_slices;
} gpu_batch;

static void free_lists(gpu_batch *batch)
{
    for (int b = 0; batch->lists && b < batch->list_slices; b++)
        vl_sift_list_free(&batch->lists[b]);
    free(batch->lists);
    batch->lists = NULL;
    batch->list_slices = 0;
}

static void batch_free(gpu_batch *batch)
{
    if (batch->stream)
        cudaStreamSynchronize(batch->stream);
    if (batch->urgent)
        cudaStreamSynchronize(batch->urgent);
    cudaFree(batch->input);
    cudaFree(batch->doubled);
    cudaFree(batch->scratch);
    cudaFree(batch->gauss);
    cudaFree(batch->raw);
    cudaFree(batch->candidates);
    cudaFree(batch->keypoints);
    cudaFree(batch->descriptors);
    cudaFree(batch->counters);
    if (batch->host_counters)
        cudaFreeHost(batch->host_counters);
    if (batch->host_raw)
        cudaFreeHost(batch->host_raw);
    if (batch->host_ordered)
        cudaFreeHost(batch->host_ordered);
    if (batch->host_descriptors)
        cudaFreeHost(batch->host_descriptors);
    if (batch->stream)
        cudaStreamDestroy(batch->stream);
    if (batch->urgent)
        cudaStreamDestroy(batch->urgent);
    if (batch->built)
        cudaEventDestroy(batch->built);
    if (batch->described)
        cudaEventDestroy(batch->described);
    free_lists(batch);
    memset(batch, 0, sizeof *batch);
}

/* dst = src blurred with the plan's kernel `level`, for every slice of the batch in one launch (two for
 * kernels wider than the fused one's limit); slices lie src_stride / dst_stride floats apart. When `dog` is
 * set, the DoG level dst - src goes there (slices dog_stride apart). */
static vl_status blur_level(const vl_sift_plan *plan, const launch_shapes *shapes, gpu_batch *batch, int level,
                            const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t w,
                            int64_t h, float *dog, int64_t dog_stride)
{
    int r = plan->radius[level], slices = batch->slices;
    cudaStream_t stream = batch->stream;
    if (shapes->fused[level]) {
        dim3 grid((unsigned)((w + FUSED_TILE_W - 1) / FUSED_TILE_W), (unsigned)((h + FUSED_TILE_H - 1) / FUSED_TILE_H),
                  (unsigned)slices);
        shapes->fused[level]<<<grid, dim3(FUSED_TILE_W, FUSED_TILE_H / FUSED_ROWS_PER_THREAD), 0, stream>>>(
            src, dst, w, h, src_stride, dst_stride, level, dog, dog_stride);
        VL_CUDA_TRY(cudaGetLastError(), "launching the Gaussian blur");
        return VL_OK;
    }
    int block = shapes->rows[level];
    dim3 grid_rows((unsigned)((w + block - 1) / block), (unsigned)(h < 65535 ? h : 65535), (unsigned)slices);
    blur_rows_kernel<<<grid_rows, block, (size_t)(block + 2 * r) * sizeof(float), stream>>>(
        src, batch->scratch, w, h, src_stride, w * h, level);
    int by = shapes->cols[level];
    int rows = by * VERTICAL_ROWS_PER_THREAD;
    dim3 grid_cols((unsigned)((w + 31) / 32), (unsigned)((h + rows - 1) / rows), (unsigned)slices);
    blur_cols_kernel<<<grid_cols, dim3(32, by), (size_t)32 * (rows + 2 * r) * sizeof(float), stream>>>(
        batch->scratch, dst, w, h, w * h, dst_stride, level, dog ? src : NULL, dog, dog_stride);
    VL_CUDA_TRY(cudaGetLastError(), "launching the Gaussian blur");
    return VL_OK;
}

/* Gaussian pyramids of batch->slices normalised images in batch->input (queued on its stream), and their
 * DoG pyramids into `dog` (plan->dog_floats per slice) when it is set. */
static vl_status build_pyramids(const vl_sift_plan *plan, const launch_shapes *shapes, gpu_batch *batch, float *dog)
{
    int slices = batch->slices;
    cudaStream_t stream = batch->stream;
    int64_t w0 = plan->w[0], h0 = plan->h[0];
    dim3 grid_up((unsigned)((w0 + shapes->upsample - 1) / shapes->upsample), (unsigned)(h0 < 65535 ? h0 : 65535),
                 (unsigned)slices);
    upsample_kernel<<<grid_up, shapes->upsample, 0, stream>>>(batch->input, batch->doubled, plan->width,
                                                              plan->height);
    VL_CUDA_TRY(cudaGetLastError(), "launching the enlargement");
    for (int o = 0; o < plan->octaves; o++) {
        int64_t w = plan->w[o], h = plan->h[o], n = w * h;
        float *level = batch->gauss + plan->gauss_offset[o];
        vl_status status = VL_OK;
        if (o == 0) {
            status = blur_level(plan, shapes, batch, 0, batch->doubled, n, level, plan->gauss_floats, w, h, NULL, 0);
        } else {
            int64_t pw = plan->w[o - 1], ph = plan->h[o - 1];
            dim3 grid_down((unsigned)((w + shapes->downsample - 1) / shapes->downsample),
                           (unsigned)(h < 65535 ? h : 65535), (unsigned)slices);
            downsample_kernel<<<grid_down, shapes->downsample, 0, stream>>>(
                batch->gauss + plan->gauss_offset[o - 1] + plan->layers * pw * ph, pw, ph, level, w, h,
                plan->gauss_floats);
            VL_CUDA_TRY(cudaGetLastError(), "launching the halving");
        }
        /* Level i, and DoG level i - 1 = level i - level i - 1 in the same pass when asked for. */
        for (int i = 1; i < plan->gauss_levels && status == VL_OK; i++)
            status = blur_level(plan, shapes, batch, i, level + (i - 1) * n, plan->gauss_floats, level + i * n,
                                plan->gauss_floats, w, h, dog ? dog + plan->dog_offset[o] + (i - 1) * n : NULL,
                                plan->dog_floats);
        if (status != VL_OK)
            return status;
    }
    return VL_OK;
}

/* ---- host side ---------------------------------------------------------------------------------------- */

static vl_status upload_plan(const vl_sift_plan *plan, launch_shapes *shapes)
{
    VL_CUDA_TRY(cudaMemcpyToSymbol(plan_c, plan, sizeof *plan), "uploading the SIFT plan");
    return choose_shapes(plan, shapes);
}

/* Whether some level's kernel is too wide for the fused blur, so the two passes need their scratch. */
static int needs_scratch(const vl_sift_plan *plan)
{
    for (int level = 0; level < plan->gauss_levels; level++)
        if (plan->radius[level] > FUSED_RADIUS_MAX)
            return 1;
    return 0;
}

/* Device bytes one slice of a batch needs. */
static int64_t bytes_per_slice(const vl_sift_plan *plan, size_t sample_bytes)
{
    int64_t pixels = plan->width * plan->height, doubled = plan->w[0] * plan->h[0];
    return (int64_t)sizeof(float) *
               (pixels + (1 + needs_scratch(plan)) * doubled + plan->gauss_floats) +
           (int64_t)sample_bytes * pixels + (int64_t)(sizeof(gpu_candidate) + sizeof(gpu_keypoint)) * (pixels / 4);
}

/* Makes the pinned host buffer *buffer hold at least `bytes` (its contents are not kept); it grows to a
 * quarter more, so that later batches rarely grow it again. The caller has waited for every copy that
 * uses the buffer. */
static vl_status ensure_pinned(void **buffer, size_t *capacity, size_t bytes, const char *what)
{
    if (*buffer && bytes <= *capacity)
        return VL_OK;
    if (*buffer)
        cudaFreeHost(*buffer);
    *buffer = NULL;
    *capacity = 0;
    size_t room = bytes + bytes / 4;
    VL_CUDA_TRY(cudaMallocHost(buffer, room), what);
    *capacity = room;
    return VL_OK;
}

static vl_status ensure_lists(gpu_batch *batch, unsigned int candidates, unsigned int keypoints)
{
    if (!batch->candidates || candidates > batch->candidate_capacity) {
        cudaFree(batch->candidates);
        batch->candidates = NULL;
        batch->candidate_capacity = candidates > batch->candidate_capacity ? candidates : batch->candidate_capacity;
        VL_CUDA_TRY(cudaMalloc((void **)&batch->candidates, sizeof(gpu_candidate) * batch->candidate_capacity),
                    "allocating candidates");
    }
    if (!batch->keypoints || keypoints > batch->keypoint_capacity) {
        cudaFree(batch->keypoints);
        batch->keypoints = NULL;
        batch->keypoint_capacity = keypoints > batch->keypoint_capacity ? keypoints : batch->keypoint_capacity;
        VL_CUDA_TRY(cudaMalloc((void **)&batch->keypoints, sizeof(gpu_keypoint) * batch->keypoint_capacity),
                    "allocating keypoints");
    }
    return VL_OK;
}

static vl_status batch_allocate(const vl_sift_plan *plan, int slices, size_t sample_bytes, gpu_batch *batch)
{
    memset(batch, 0, sizeof *batch);
    batch->slices = slices;
    int64_t pixels = plan->width * plan->height, doubled = plan->w[0] * plan->h[0];
    /* Candidates and keypoints: a quarter of the input pixels per slice is far above what images give;
     * a batch that overflows is detected and rerun with room for what it found. */
    batch->candidate_capacity = (unsigned int)(slices * (pixels / 4 + 1024));
    batch->keypoint_capacity = batch->candidate_capacity;
    int least = 0, greatest = 0;
    VL_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest), "querying stream priorities");
    VL_CUDA_TRY(cudaStreamCreateWithPriority(&batch->stream, cudaStreamDefault, least), "creating a stream");
    VL_CUDA_TRY(cudaStreamCreateWithPriority(&batch->urgent, cudaStreamDefault, greatest), "creating a stream");
    VL_CUDA_TRY(cudaEventCreateWithFlags(&batch->built, cudaEventDisableTiming), "creating an event");
    VL_CUDA_TRY(cudaEventCreateWithFlags(&batch->described, cudaEventDisableTiming), "creating an event");
    VL_CUDA_TRY(cudaMalloc((void **)&batch->input, sizeof(float) * pixels * slices), "allocating the inputs");
    VL_CUDA_TRY(cudaMalloc((void **)&batch->doubled, sizeof(float) * doubled * slices), "allocating the pyramid");
    if (needs_scratch(plan))
        VL_CUDA_TRY(cudaMalloc((void **)&batch->scratch, sizeof(float) * doubled * slices), "allocating the pyramid");
    VL_CUDA_TRY(cudaMalloc((void **)&batch->gauss, sizeof(float) * plan->gauss_floats * slices), "allocating the pyramid");
    if (sample_bytes)
        VL_CUDA_TRY(cudaMalloc(&batch->raw, sample_bytes * pixels * slices), "allocating the slices");
    VL_CUDA_TRY(cudaMalloc((void **)&batch->counters, (1 + VL_SIFT_MAX_OCTAVES) * sizeof(unsigned int)),
                "allocating counters");
    VL_CUDA_TRY(cudaMallocHost((void **)&batch->host_counters, (1 + VL_SIFT_MAX_OCTAVES) * sizeof(unsigned int)),
                "allocating counters");
    return ensure_lists(batch, 0, 0);
}

/* Queues, after the pyramid, the extremum scan and the orientation kernel of every octave on the batch's
 * urgent stream, then the copy of the counters to the host; nothing waits. */
static vl_status detect_launch(const vl_sift_plan *plan, const launch_shapes *shapes, gpu_batch *batch)
{
    cudaStream_t stream = batch->urgent;
    VL_CUDA_TRY(cudaEventRecord(batch->built, batch->stream), "ordering the detection");
    VL_CUDA_TRY(cudaStreamWaitEvent(stream, batch->built, 0), "ordering the detection");
    VL_CUDA_TRY(cudaMemsetAsync(batch->counters, 0, (1 + plan->octaves) * sizeof(unsigned int), stream),
                "clearing counters");
    for (int o = 0; o < plan->octaves; o++) {
        if (plan->w[o] <= 2 * VL_SIFT_IMG_BORDER || plan->h[o] <= 2 * VL_SIFT_IMG_BORDER)
            continue;
        int64_t iw = plan->w[o] - 2 * VL_SIFT_IMG_BORDER, ih = plan->h[o] - 2 * VL_SIFT_IMG_BORDER;
        int by = shapes->extrema;
        int64_t strip = (int64_t)by * EXTREMA_ROWS;
        dim3 grid_scan((unsigned)((iw + 31) / 32), (unsigned)((ih + strip - 1) / strip),
                       (unsigned)(plan->layers * batch->slices));
        extrema_kernel<<<grid_scan, dim3(32, by), 0, stream>>>(batch->gauss, o, plan->gauss_floats,
                                                               batch->candidates, batch->counters + 1 + o,
                                                               batch->candidate_capacity);
        VL_CUDA_TRY(cudaGetLastError(), "launching the extremum scan");
        orient_kernel<<<shapes->orient_grid, shapes->orient, 0, stream>>>(
            batch->gauss, o, plan->gauss_floats, batch->candidates, batch->counters + 1 + o,
            batch->candidate_capacity, batch->keypoints, batch->counters, batch->keypoint_capacity);
        VL_CUDA_TRY(cudaGetLastError(), "launching the orientation kernel");
    }
    VL_CUDA_TRY(cudaMemcpyAsync(batch->host_counters, batch->counters, (1 + plan->octaves) * sizeof(unsigned int),
                                cudaMemcpyDeviceToHost, stream),
                "reading the counters");
    return VL_OK;
}

/* Waits for the batch's detection and brings its raw keypoints (doubled-input pixels, any order) to the
 * host, into the batch's pinned buffer; a detection that overflowed a list is rerun with room for what it
 * found. */
static vl_status detect_collect(const vl_sift_plan *plan, const launch_shapes *shapes, gpu_batch *batch,
                                gpu_keypoint **host, unsigned int *host_count)
{
    *host = NULL;
    *host_count = 0;
    for (;;) {
        VL_CUDA_TRY(cudaStreamSynchronize(batch->urgent), "detecting keypoints");
        unsigned int candidates = 0, keypoints = batch->host_counters[0];
        for (int o = 0; o < plan->octaves; o++)
            candidates = batch->host_counters[1 + o] > candidates ? batch->host_counters[1 + o] : candidates;
        if (candidates <= batch->candidate_capacity && keypoints <= batch->keypoint_capacity)
            break;
        vl_status status = ensure_lists(batch, candidates, keypoints);
        if (status == VL_OK)
            status = detect_launch(plan, shapes, batch);
        if (status != VL_OK)
            return status;
    }
    unsigned int count = batch->host_counters[0];
    if (!count)
        return VL_OK;
    vl_status status = ensure_pinned((void **)&batch->host_raw, &batch->host_raw_bytes,
                                     sizeof(gpu_keypoint) * count, "allocating keypoints on the host");
    if (status != VL_OK)
        return status;
    VL_CUDA_TRY(cudaMemcpyAsync(batch->host_raw, batch->keypoints, sizeof(gpu_keypoint) * count,
                                cudaMemcpyDeviceToHost, batch->urgent),
                "reading keypoints");
    VL_CUDA_TRY(cudaStreamSynchronize(batch->urgent), "reading keypoints");
    *host = batch->host_raw;
    *host_count = count;
    return VL_OK;
}

/* Finishes the batch's keypoints per slice on the host (the CPU's order) into batch->lists, and queues their
 * descriptors on the device and the copy back, then the event `described`; nothing waits. */
static vl_status describe_batch(const vl_sift_plan *plan, const launch_shapes *shapes, gpu_batch *batch,
                                const gpu_keypoint *raw, unsigned int raw_count, int max_keypoints)
{
    vl_status status = VL_OK;
    batch->list_slices = batch->slices;
    batch->lists = (vl_sift_list *)calloc((size_t)batch->list_slices, sizeof *batch->lists);
    if (!batch->lists)
        return vl_fail(VL_ERR_MEMORY, "sift: out of memory");
    vl_sift_list *lists = batch->lists;
    for (unsigned int i = 0; i < raw_count && status == VL_OK; i++) {
        vl_sift_found found = {raw[i].keypoint, raw[i].octave, raw[i].layer};
        status = vl_sift_list_push(&lists[raw[i].keypoint.slice], &found);
    }
    unsigned int finished = 0;
    for (int b = 0; b < batch->list_slices && status == VL_OK; b++) {
        vl_sift_finish_keypoints(&lists[b], max_keypoints);
        finished += (unsigned int)lists[b].count;
    }
    size_t room = finished ? finished : 1;
    if (status == VL_OK)
        status = ensure_pinned((void **)&batch->host_ordered, &batch->host_ordered_bytes,
                               sizeof(gpu_keypoint) * room, "allocating keypoints on the host");
    if (status == VL_OK)
        status = ensure_pinned((void **)&batch->host_descriptors, &batch->host_descriptor_bytes,
                               sizeof(float) * VL_SIFT_DESCRIPTOR_SIZE * room, "allocating descriptors on the host");
    gpu_keypoint *ordered = batch->host_ordered;
    unsigned int k = 0;
    for (int b = 0; b < batch->list_slices && status == VL_OK; b++)
        for (int64_t i = 0; i < lists[b].count; i++, k++) {
            ordered[k].keypoint = lists[b].items[i].keypoint;
            ordered[k].keypoint.slice = b;
            ordered[k].octave = lists[b].items[i].octave;
            ordered[k].layer = lists[b].items[i].layer;
        }
    if (status == VL_OK && finished) {
        status = ensure_lists(batch, 0, finished);
        if (status == VL_OK && finished > batch->descriptor_capacity) {
            /* Room for a quarter more than this batch found, so that later batches rarely grow it (a device
             * allocation waits for the other batch's work too). */
            unsigned int capacity = finished + finished / 4;
            cudaFree(batch->descriptors);
            batch->descriptors = NULL;
            batch->descriptor_capacity = 0;
            cudaError_t error =
                cudaMalloc((void **)&batch->descriptors, sizeof(float) * VL_SIFT_DESCRIPTOR_SIZE * capacity);
            if (error != cudaSuccess)
                status = vl_cuda_failure(error, "allocating descriptors");
            else
                batch->descriptor_capacity = capacity;
        }
        cudaError_t error = cudaSuccess;
        if (status == VL_OK)
            error = cudaMemcpyAsync(batch->keypoints, ordered, sizeof *ordered * finished, cudaMemcpyHostToDevice,
                                    batch->urgent);
        if (status == VL_OK && error == cudaSuccess) {
            descriptor_kernel<<<grid_for((int64_t)finished * 32, shapes->descriptor), shapes->descriptor, 0,
                                batch->urgent>>>(batch->gauss, plan->gauss_floats, batch->keypoints, finished,
                                                 batch->descriptors);
            error = cudaGetLastError();
        }
        if (status == VL_OK && error == cudaSuccess)
            error = cudaMemcpyAsync(batch->host_descriptors, batch->descriptors,
                                    sizeof(float) * VL_SIFT_DESCRIPTOR_SIZE * finished, cudaMemcpyDeviceToHost,
                                    batch->urgent);
        if (status == VL_OK && error != cudaSuccess)
            status = vl_cuda_failure(error, "computing descriptors");
    }
    if (status == VL_OK)
        VL_CUDA_TRY(cudaEventRecord(batch->described, batch->urgent), "ordering the descriptors");
    return status;
}

/* Waits for the descriptors of describe_batch, appends the batch's keypoints slice by slice to `out` and
 * frees its lists; `first_slice` is the batch's first slice in the volume. */
static vl_status append_batch(gpu_batch *batch, int64_t first_slice, vl_sift_features *out)
{
    cudaError_t error = cudaEventSynchronize(batch->described);
    vl_status status = error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "computing descriptors");
    int64_t k = 0;
    for (int b = 0; b < batch->list_slices && status == VL_OK; b++) {
        status = vl_sift_append_slice(out, first_slice + b, &batch->lists[b],
                                      batch->host_descriptors + (size_t)k * VL_SIFT_DESCRIPTOR_SIZE);
        k += batch->lists[b].count;
    }
    free_lists(batch);
    return status;
}

/* Queues the upload and normalisation of slices [first, first + batch->slices) of the volume, or of the one
 * image, on the batch's stream. */
static vl_status load_batch(const vl_sift_plan *plan, const launch_shapes *shapes, const float *image,
                            const vl_volume *volume, int64_t first, gpu_batch *batch)
{
    int64_t pixels = plan->width * plan->height, n = pixels * batch->slices;
    cudaStream_t stream = batch->stream;
    unsigned int grid = grid_for(n, shapes->normalise);
    float offset = plan->input_offset, scale = plan->input_scale;
    if (!volume) {
        VL_CUDA_TRY(cudaMemcpyAsync(batch->input, image, sizeof(float) * pixels, cudaMemcpyHostToDevice, stream),
                    "uploading");
        normalise_kernel<float><<<grid, shapes->normalise, 0, stream>>>(batch->input, batch->input, n, offset, scale);
        VL_CUDA_TRY(cudaGetLastError(), "launching the normalisation");
        return VL_OK;
    }
    size_t sample = vl_dtype_size(volume->dtype);
    VL_CUDA_TRY(cudaMemcpyAsync(batch->raw, (const char *)volume->data + (size_t)(first * pixels) * sample,
                                sample * n, cudaMemcpyHostToDevice, stream),
                "uploading slices");
    switch (volume->dtype) {
    case VL_U8: normalise_kernel<uint8_t><<<grid, shapes->normalise, 0, stream>>>((const uint8_t *)batch->raw, batch->input, n, offset, scale); break;
    case VL_I16: normalise_kernel<int16_t><<<grid, shapes->normalise, 0, stream>>>((const int16_t *)batch->raw, batch->input, n, offset, scale); break;
    case VL_U16: normalise_kernel<uint16_t><<<grid, shapes->normalise, 0, stream>>>((const uint16_t *)batch->raw, batch->input, n, offset, scale); break;
    case VL_U32: normalise_kernel<uint32_t><<<grid, shapes->normalise, 0, stream>>>((const uint32_t *)batch->raw, batch->input, n, offset, scale); break;
    case VL_F32: normalise_kernel<float><<<grid, shapes->normalise, 0, stream>>>((const float *)batch->raw, batch->input, n, offset, scale); break;
    }
    VL_CUDA_TRY(cudaGetLastError(), "launching the normalisation");
    return VL_OK;
}

/* Queues everything of one batch up to its keypoints: upload, pyramid, detection. With `after`, the pyramid
 * waits for that event: the descriptors of the previous batch on these buffers read its pyramid (the upload
 * and normalisation write only the inputs, which the descriptors do not read). */
static vl_status start_batch(const vl_sift_plan *plan, const launch_shapes *shapes, const float *image,
                             const vl_volume *volume, int64_t first, int slices, gpu_batch *batch,
                             cudaEvent_t after)
{
    batch->slices = slices;
    vl_status status = load_batch(plan, shapes, image, volume, first, batch);
    if (status == VL_OK && after)
        VL_CUDA_TRY(cudaStreamWaitEvent(batch->stream, after, 0), "ordering the pyramid");
    if (status == VL_OK)
        status = build_pyramids(plan, shapes, batch, NULL);
    if (status == VL_OK)
        status = detect_launch(plan, shapes, batch);
    return status;
}

/* Slices per batch: two batches in flight within the caller's budget, or within half the free device
 * memory, at most BATCH_MAX each; one batch when that holds every slice. */
static int batch_slices(const vl_sift_plan *plan, int64_t slices, size_t sample_bytes, uint64_t budget)
{
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess)
        free_bytes = 0;
    uint64_t usable = budget ? budget : free_bytes / 2;
    int64_t fit = (int64_t)usable / bytes_per_slice(plan, sample_bytes);
    if (fit >= slices && slices <= BATCH_MAX)
        return (int)slices;
    fit /= 2;
    if (fit < 1)
        fit = 1;
    if (fit > BATCH_MAX)
        fit = BATCH_MAX;
    return (int)(fit < slices ? fit : slices);
}

extern "C" vl_status vl_sift_run_gpu(const vl_sift_plan *plan, const float *image, const vl_volume *volume,
                                     const vl_sift_options *options, const vl_progress *progress,
                                     vl_sift_features *out, int gpu_index, uint64_t gpu_memory)
{
    vl_status status = vl_cuda_select(gpu_index);
    if (status != VL_OK)
        return status;
    launch_shapes shapes;
    status = upload_plan(plan, &shapes);
    if (status != VL_OK)
        return status;
    int64_t slices = volume ? volume->nz : 1;
    size_t sample_bytes = volume ? vl_dtype_size(volume->dtype) : 0;
    int per_batch = batch_slices(plan, slices, sample_bytes, gpu_memory);
    int64_t batches = (slices + per_batch - 1) / per_batch;
    gpu_batch batch[2];
    memset(batch, 0, sizeof batch);
    status = batch_allocate(plan, per_batch, sample_bytes, &batch[0]);
    if (status == VL_OK && batches > 1)
        status = batch_allocate(plan, per_batch, sample_bytes, &batch[1]);
    for (int64_t k = 0; k < 2 && k < batches && status == VL_OK; k++)
        status = start_batch(plan, &shapes, image, volume, k * per_batch,
                             (int)(slices - k * per_batch < per_batch ? slices - k * per_batch : per_batch),
                             &batch[k], NULL);
    /* Batch k + 1 is in flight while batch k is finished on the host, and batch k + 2 is queued on batch k's
     * buffers (its pyramid after batch k's descriptors) before the host waits for those descriptors. */
    for (int64_t k = 0; k < batches && status == VL_OK; k++) {
        gpu_batch *current = &batch[k & 1];
        int64_t first = k * per_batch, later = first + 2 * (int64_t)per_batch;
        int done = current->slices;
        gpu_keypoint *raw = NULL;
        unsigned int raw_count = 0;
        status = detect_collect(plan, &shapes, current, &raw, &raw_count);
        if (status == VL_OK)
            status = describe_batch(plan, &shapes, current, raw, raw_count, options->max_keypoints);
        if (status == VL_OK && later < slices)
            status = start_batch(plan, &shapes, image, volume, later,
                                 (int)(slices - later < per_batch ? slices - later : per_batch), current,
                                 current->described);
        if (status == VL_OK)
            status = append_batch(current, first, out);
        vl_progress_report(progress, "sift", (double)(first + done) / (double)slices);
    }
    batch_free(&batch[0]);
    batch_free(&batch[1]);
    return status;
}

extern "C" vl_status vl_sift_pyramid_gpu(const vl_sift_plan *plan, const float *image, float *gauss, float *dog,
                                         int gpu_index)
{
    vl_status status = vl_cuda_select(gpu_index);
    if (status != VL_OK)
        return status;
    launch_shapes shapes;
    status = upload_plan(plan, &shapes);
    gpu_batch batch;
    memset(&batch, 0, sizeof batch);
    float *device_dog = NULL;
    if (status == VL_OK)
        status = batch_allocate(plan, 1, 0, &batch);
    if (status == VL_OK) {
        cudaError_t error = cudaMalloc((void **)&device_dog, sizeof(float) * plan->dog_floats);
        status = error == cudaSuccess ? VL_OK : vl_cuda_failure(error, "allocating the DoG pyramid");
    }
    if (status == VL_OK) {
        /* `image` is already normalised: upload it as is. */
        cudaError_t error = cudaMemcpyAsync(batch.input, image, sizeof(float) * plan->width * plan->height,
                                            cudaMemcpyHostToDevice, batch.stream);
        status = error == cudaSuccess ? build_pyramids(plan, &shapes, &batch, device_dog)
                                      : vl_cuda_failure(error, "uploading");
    }
    if (status == VL_OK) {
        cudaError_t error = cudaMemcpyAsync(gauss, batch.gauss, sizeof(float) * plan->gauss_floats,
                                            cudaMemcpyDeviceToHost, batch.stream);
        if (error == cudaSuccess)
            error = cudaMemcpyAsync(dog, device_dog, sizeof(float) * plan->dog_floats, cudaMemcpyDeviceToHost,
                                    batch.stream);
        if (error == cudaSuccess)
            error = cudaStreamSynchronize(batch.stream);
        if (error != cudaSuccess)
            status = vl_cuda_failure(error, "reading the pyramid");
    }
    batch_free(&batch);
    cudaFree(device_dog);
    return status;
}
