/* The filter bank on the device (filters_gpu.cuh), pass for pass the CPU reference src/filters/filters_cpu.c.
 *
 * A pass is a correlation along one axis: out[p] = sum_j taps[j] * in[reflect(p - r + j)], a chain of __fmaf_rn in
 * increasing j, as the CPU's fmaf loop. Each thread computes several neighbouring outputs of a line from a window
 * of inputs held in registers (each input read once serves all of them), with the taps broadcast from shared
 * memory; one launch computes every order a later pass needs from the same input (the window read once for up
 * to three sets of taps). Passes along y and z give a warp 32 neighbouring x, so its reads are coalesced; passes
 * along x stage the row in shared memory. Derivatives share their first pass (z in 3D) by order and, in 3D, their
 * second pass (y) by pair of orders; the per-voxel steps are filter_voxel.h, the CPU's code. */
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "filters/filter_voxel.h"
#include "filters/filters_gpu.cuh"

namespace {

struct dbox {
    int64_t lo[3], hi[3];
};

struct dfield {
    dbox box;
    float *v;
};

struct dtaps {
    int radius;
    const float *k; /* device: 2 radius + 1 taps (vl_gaussian_taps) */
};

/* [axis][order] at one sigma; radius 0 on an axis the bank does not filter */
struct dtaps_set {
    dtaps k[3][3];
    int64_t radius[3];
};

__host__ __device__ int64_t size_of(const dbox &b, int a) { return b.hi[a] - b.lo[a]; }
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

/* scipy's 'reflect' for any i; one reflection without the modulo */
__device__ __forceinline__ int reflect(int i, int n)
{
    if (i >= 0 && i < n)
        return i;
    if (i >= -n && i < 0)
        return -i - 1;
    if (i >= n && i < 2 * n)
        return 2 * n - 1 - i;
    const int period = 2 * n;
    int m = i % period;
    if (m < 0)
        m += period;
    return m < n ? m : period - 1 - m;
}

/* Loads of each input a thread has in flight while staging rows (stage_rows): issued together, then stored, so
 * that a block waits on memory once per batch rather than once per value. */
const int STAGE_BATCH = 4;

/* rows[k * pitch + i] = input k's row value at x0 - r + i (reflected at the volume's border), i < count, k < INPUTS,
 * by `threads` threads from thread `self`: the values inside the volume as straight copies, STAGE_BATCH of each
 * input's in flight at once, the reflected ones on their own. src[k] is input k's row in the input box, whose first
 * x is in_lo. */
template <int INPUTS>
__device__ __forceinline__ void stage_rows(float *rows, int pitch, const float *const (&src)[INPUTS], int x0, int r,
                                           int count, int n_axis, int in_lo, int self, int threads)
{
    const int inside_lo = r - x0 > 0 ? r - x0 : 0, inside_hi = n_axis - x0 + r < count ? n_axis - x0 + r : count;
    const int shift = x0 - r - in_lo;
    for (int first = inside_lo + self; first < inside_hi; first += threads * STAGE_BATCH) {
        float v[INPUTS][STAGE_BATCH];
#pragma unroll
        for (int k = 0; k < INPUTS; k++)
#pragma unroll
            for (int b = 0; b < STAGE_BATCH; b++) {
                const int i = first + b * threads;
                v[k][b] = i < inside_hi ? __ldg(src[k] + shift + i) : 0.0f;
            }
#pragma unroll
        for (int k = 0; k < INPUTS; k++)
#pragma unroll
            for (int b = 0; b < STAGE_BATCH; b++) {
                const int i = first + b * threads;
                if (i < inside_hi)
                    rows[k * pitch + i] = v[k][b];
            }
    }
#pragma unroll
    for (int k = 0; k < INPUTS; k++) {
        for (int i = self; i < inside_lo; i += threads)
            rows[k * pitch + i] = src[k][reflect(x0 - r + i, n_axis) - in_lo];
        for (int i = inside_hi + self; i < count; i += threads)
            rows[k * pitch + i] = src[k][reflect(x0 - r + i, n_axis) - in_lo];
    }
}

/* Outputs per thread: along y or z (registers), along x (odd, so that a warp's reads of the shared row, that many
 * words apart, fall in 32 different banks; a block's segment covers a 512-voxel row). A segment is ROW_THREADS runs
 * of ROW_OUTPUTS voxels. The fused x passes have more chains a segment than a block has threads to spare (their
 * shared memory limits how many blocks a multiprocessor holds), so their threads take several runs in turn: the
 * structure tensor's 6 products (STRUCTURE_THREADS: two runs each), the derivatives' 10 chains (COMBINE_THREADS:
 * two runs each). */
const int LINE_OUTPUTS = 8;
const int ROW_OUTPUTS = 9;
const int ROW_THREADS = 64;
const int ROW_SEGMENT = ROW_THREADS * ROW_OUTPUTS;
const int STRUCTURE_THREADS = 3 * ROW_THREADS;
const int COMBINE_THREADS = 5 * ROW_THREADS;
const int MAX_ORDERS = 3;

/* Up to three results of one pass: the same input and axis, one set of taps each. */
struct pass_outputs {
    float *v[MAX_ORDERS];
    const float *taps[MAX_ORDERS];
};

/* acc[o][j] = sum_t taps[o][t] * v(j + t), t = 0 .. T - 1 in increasing order (a __fmaf_rn chain from 0), for K
 * neighbouring outputs j, where v(i) is the i-th value `next` returns. next is called T + K - 1 times, for
 * v(0), v(1) ... v(T + K - 2) in that order (what output K - 1 reads last), so that a caller reads its line
 * sequentially, without index arithmetic, and never past what the K outputs need. */
template <int NOUT, int K, typename Next>
__device__ __forceinline__ void correlate(const float *taps, int T, Next next, float (&acc)[NOUT][K])
{
#pragma unroll
    for (int o = 0; o < NOUT; o++)
#pragma unroll
        for (int j = 0; j < K; j++)
            acc[o][j] = 0;
    /* while taps t0 .. t0 + K - 1 are applied, win holds v(t0 .. t0 + 2K - 2) */
    float win[2 * K - 1];
#pragma unroll
    for (int i = 0; i < K - 1; i++)
        win[i] = next();
    int t0 = 0;
    for (; t0 + K <= T; t0 += K) {
#pragma unroll
        for (int i = 0; i < K; i++)
            win[K - 1 + i] = next();
#pragma unroll
        for (int tt = 0; tt < K; tt++)
#pragma unroll
            for (int o = 0; o < NOUT; o++) {
                const float w = taps[o * T + t0 + tt];
#pragma unroll
                for (int j = 0; j < K; j++)
                    acc[o][j] = __fmaf_rn(w, win[j + tt], acc[o][j]);
            }
#pragma unroll
        for (int i = 0; i < K - 1; i++)
            win[i] = win[K + i];
    }
    const int rest = T - t0; /* taps left, fewer than K: they read v(t0 .. t0 + K - 2 + rest) */
#pragma unroll
    for (int i = 0; i < K; i++)
        if (i < rest)
            win[K - 1 + i] = next();
#pragma unroll
    for (int tt = 0; tt < K; tt++)
        if (tt < rest)
#pragma unroll
            for (int o = 0; o < NOUT; o++) {
                const float w = taps[o * T + t0 + tt];
#pragma unroll
                for (int j = 0; j < K; j++)
                    acc[o][j] = __fmaf_rn(w, win[j + tt], acc[o][j]);
            }
}

template <int COUNT>
__device__ void load_taps(float *taps, const pass_outputs &outs, int T)
{
    const int threads = blockDim.x * blockDim.y, self = threadIdx.x + blockDim.x * threadIdx.y;
#pragma unroll
    for (int o = 0; o < COUNT; o++)
        for (int i = self; i < T; i += threads)
            taps[o * T + i] = outs.taps[o][i];
}

/* Work items (chunks of lines, row segments) a block takes in turn: its set-up (taps, geometry) is paid once for
 * several. */
const int ITEMS_PER_BLOCK = 4;

/* blocks (at most `limit`) for `items` work items, ITEMS_PER_BLOCK each */
unsigned blocks_for_items(int64_t items, int64_t limit)
{
    const int64_t blocks = (items + ITEMS_PER_BLOCK - 1) / ITEMS_PER_BLOCK;
    return (unsigned)(blocks < 1 ? 1 : blocks > limit ? limit : blocks);
}

/* The geometry of a pass along y or z (axis 1 or 2): thread (x, line) computes `outputs` neighbouring outputs of
 * one line; lines are the output box's rows along the pass axis, cut into chunks. Strides are those of the pass
 * axis (step) and of the other one (other), in the input box and in the output box. */
struct line_geometry {
    int sx, len, chunks, lines, in_lo, in_hi, out_lo;
    int64_t in_step, in_other, out_step, out_other, other_offset, x_offset;
};

__device__ __forceinline__ line_geometry line_geometry_of(const dbox &in_box, const dbox &out_box, int axis,
                                                          int outputs)
{
    const int other = 3 - axis;
    line_geometry g;
    g.sx = (int)size_of(out_box, 0);
    g.len = (int)size_of(out_box, axis);
    const int64_t in_plane = size_of(in_box, 0) * size_of(in_box, 1), out_plane = (int64_t)g.sx * size_of(out_box, 1);
    g.in_step = axis == 1 ? size_of(in_box, 0) : in_plane;
    g.in_other = axis == 1 ? in_plane : size_of(in_box, 0);
    g.out_step = axis == 1 ? g.sx : out_plane;
    g.out_other = axis == 1 ? out_plane : g.sx;
    g.chunks = (g.len + outputs - 1) / outputs;
    g.lines = g.chunks * (int)size_of(out_box, other);
    g.in_lo = (int)in_box.lo[axis];
    g.in_hi = (int)in_box.hi[axis];
    g.out_lo = (int)out_box.lo[axis];
    g.other_offset = out_box.lo[other] - in_box.lo[other];
    g.x_offset = out_box.lo[0] - in_box.lo[0];
    return g;
}

/* One chunk of a line: its first output p0 along the axis, how many outputs it has (the last chunk may be short),
 * where its line starts in the input (base) and where its first output goes (target). */
struct line_chunk {
    int p0, count;
    int64_t base, target;
};

__device__ __forceinline__ line_chunk line_chunk_of(const line_geometry &g, int x, int line, int outputs)
{
    const int chunk = line % g.chunks, ob = line / g.chunks;
    line_chunk c;
    c.p0 = g.out_lo + chunk * outputs;
    c.count = g.len - chunk * outputs < outputs ? g.len - chunk * outputs : outputs;
    c.base = g.x_offset + x + (g.other_offset + ob) * g.in_other;
    c.target = x + (int64_t)ob * g.out_other + (int64_t)(c.p0 - g.out_lo) * g.out_step;
    return c;
}

/* A pass along y or z (axis 1 or 2): thread (x, line) computes LINE_OUTPUTS neighbouring outputs of its line. */
template <int NOUT, int axis>
__global__ void __launch_bounds__(128) line_pass_kernel(const float *__restrict__ in, dbox in_box, pass_outputs outs,
                                                        dbox out_box, int r, int n_axis)
{
    extern __shared__ float taps[];
    const int T = 2 * r + 1;
    load_taps<NOUT>(taps, outs, T);
    __syncthreads();
    const line_geometry g = line_geometry_of(in_box, out_box, axis, LINE_OUTPUTS);
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= g.sx)
        return;
    for (int line = blockIdx.y * blockDim.y + threadIdx.y; line < g.lines; line += gridDim.y * blockDim.y) {
        const line_chunk c = line_chunk_of(g, x, line, LINE_OUTPUTS);
        const float *src = in + c.base;
        const int64_t step = g.in_step;
        const int last = c.count - 1 + 2 * r; /* the last index a real output reads */
        float acc[NOUT][LINE_OUTPUTS];
        if (c.p0 - r >= g.in_lo && c.p0 + LINE_OUTPUTS - 1 + r < g.in_hi) {
            /* every read inside the input box: no reflection, one step along the line per value */
            const float *at = src + (int64_t)(c.p0 - r - g.in_lo) * step;
            auto next = [&]() {
                const float v = __ldg(at);
                at += step;
                return v;
            };
            correlate<NOUT, LINE_OUTPUTS>(taps, T, next, acc);
        } else {
            int idx = 0;
            auto next = [&]() {
                const int q = reflect(c.p0 - r + (idx < last ? idx : last), n_axis);
                idx++;
                return __ldg(src + (int64_t)(q - g.in_lo) * step);
            };
            correlate<NOUT, LINE_OUTPUTS>(taps, T, next, acc);
        }
#pragma unroll
        for (int o = 0; o < NOUT; o++)
#pragma unroll
            for (int j = 0; j < LINE_OUTPUTS; j++)
                if (j < c.count)
                    outs.v[o][c.target + j * g.out_step] = acc[o][j];
    }
}

/* Work items of a pass along x on out_box: segments of ROW_SEGMENT outputs of each row (the last one of a row may
 * be shorter). */
__host__ __device__ __forceinline__ int row_segments_per_row(const dbox &out_box)
{
    return (int)((size_of(out_box, 0) + ROW_SEGMENT - 1) / ROW_SEGMENT);
}

__host__ __device__ __forceinline__ int64_t row_segment_count(const dbox &out_box)
{
    return size_of(out_box, 1) * size_of(out_box, 2) * row_segments_per_row(out_box);
}

/* Work item `work` of a pass along x: segment work % segments of output row work / segments. in_row is where the
 * row starts in the input box, out_first where the segment's first output goes in the output box. */
struct row_segment {
    int x0, span;
    int64_t in_row, out_first;
};

__device__ __forceinline__ row_segment row_segment_of(const dbox &in_box, const dbox &out_box, int64_t work)
{
    const int segment = ROW_SEGMENT, segments = row_segments_per_row(out_box);
    const int sx = (int)size_of(out_box, 0), sy = (int)size_of(out_box, 1);
    const int seg = (int)(work % segments);
    const int64_t line = work / segments;
    const int64_t y = out_box.lo[1] + line % sy, z = out_box.lo[2] + line / sy;
    const int64_t in_sx = size_of(in_box, 0), in_sy = size_of(in_box, 1);
    row_segment w;
    w.x0 = (int)out_box.lo[0] + seg * segment;
    w.span = sx - seg * segment < segment ? sx - seg * segment : segment;
    w.in_row = (y - in_box.lo[1]) * in_sx + (z - in_box.lo[2]) * in_sx * in_sy;
    w.out_first = (int64_t)seg * segment + line * sx;
    return w;
}

/* One run of a pass along x: the ROW_OUTPUTS neighbouring outputs from `first` of a row staged in shared memory
 * (stage_rows), for NOUT orders (taps of order o at taps + o * T), correlated as the line passes are; those inside
 * the segment's span stored at out[o * ROW_SEGMENT + first + j]. */
template <int NOUT>
__device__ __forceinline__ void row_run(const float *row, const float *taps, int T, int first, int span, float *out)
{
    const int count = span - first < ROW_OUTPUTS ? span - first : ROW_OUTPUTS;
    const float *mine = row + first;
    auto next = [&]() { return *mine++; };
    float acc[NOUT][ROW_OUTPUTS];
    correlate<NOUT, ROW_OUTPUTS>(taps, T, next, acc);
#pragma unroll
    for (int o = 0; o < NOUT; o++)
#pragma unroll
        for (int j = 0; j < ROW_OUTPUTS; j++)
            if (j < count)
                out[o * ROW_SEGMENT + first + j] = acc[o][j];
}

/* A pass along x: a block stages a segment of a row (and the reflected taps around it) in shared memory; thread t
 * computes ROW_OUTPUTS neighbouring outputs from it into shared memory, and the block writes the segment's
 * outputs with neighbouring threads on neighbouring voxels. */
template <int NOUT>
__global__ void __launch_bounds__(ROW_THREADS) row_pass_kernel(const float *__restrict__ in, dbox in_box,
                                                               pass_outputs outs, dbox out_box, int r, int n_axis)
{
    extern __shared__ float shared[];
    const int T = 2 * r + 1;
    /* the row segment with its taps, then ROW_OUTPUTS - 1 more words that the last outputs of a short segment
     * read (their results are not kept), then the results */
    float *taps = shared, *row = shared + NOUT * T, *result = row + ROW_SEGMENT + 2 * r + ROW_OUTPUTS - 1;
    load_taps<NOUT>(taps, outs, T);
    const int in_lo = (int)in_box.lo[0];
    for (int64_t work = blockIdx.x; work < row_segment_count(out_box); work += gridDim.x) {
        const row_segment w = row_segment_of(in_box, out_box, work);
        const int x0 = w.x0, span = w.span;
        const float *src = in + w.in_row;
        __syncthreads(); /* the previous segment's reads are done (and the taps are in place) */
        const float *const sources[1] = {src};
        stage_rows<1>(row, 0, sources, x0, r, span + 2 * r, n_axis, in_lo, threadIdx.x, ROW_THREADS);
        __syncthreads();
        const int first = threadIdx.x * ROW_OUTPUTS;
        if (first < span)
            row_run<NOUT>(row, taps, T, first, span, result);
        __syncthreads();
        const int64_t target = w.out_first;
#pragma unroll
        for (int o = 0; o < NOUT; o++)
            for (int i = threadIdx.x; i < span; i += ROW_THREADS)
                outs.v[o][target + i] = result[o * ROW_SEGMENT + i];
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
    vl_filter_scales scales;
    int axes[3];         /* filtered axes in pass order: z, y, x (3D) or y, x (2D) */
    dfield image;        /* float32 */
    float *taps;         /* every set's taps, one device buffer */
    dtaps_set *sets;     /* per sigma: sigma, DoG sigma, structure inner sigma */
    /* per sigma, 3D: the structure tensor's inner gradients (x, y, z) on the last box of whole planes, grown by
     * the outer z radius; the next box along z takes the planes they share from here instead of recomputing
     * them (a plane's values do not depend on the box) */
    dfield *gradients;
    /* vl_gpu_filters_select: per sigma the families none of whose channels is wanted, per offset 1 when unwanted */
    unsigned unwanted[VL_FILTER_MAX_SIGMAS];
    uint8_t offset_unwanted[VL_FILTER_MAX_OFFSETS];
};

namespace {

struct tile_context {
    vl_gpu_filters *f;
    cudaStream_t stream;
};

cudaError_t field_alloc(const tile_context &cx, dfield *f, const dbox &box)
{
    f->box = box;
    return cudaMallocAsync(&f->v, sizeof(float) * (size_t)voxels_of(box) + 16, cx.stream);
}

void field_free(const tile_context &cx, dfield *f)
{
    if (f->v)
        cudaFreeAsync(f->v, cx.stream);
    f->v = NULL;
}

/* line_pass_kernel<NOUT> along y (axis 1) or z (axis 2). */
template <int NOUT>
void line_pass(const tile_context &cx, dim3 grid, dim3 block, size_t shared, const dfield &in, const pass_outputs &po,
               const dbox &out_box, int axis, int r, int n_axis)
{
    if (axis == 1)
        line_pass_kernel<NOUT, 1><<<grid, block, shared, cx.stream>>>(in.v, in.box, po, out_box, r, n_axis);
    else
        line_pass_kernel<NOUT, 2><<<grid, block, shared, cx.stream>>>(in.v, in.box, po, out_box, r, n_axis);
}

/* outs[i] = in filtered along `axis` by ts's taps of orders[i], i < count, on out_box (the outputs allocated here). */
cudaError_t pass(const tile_context &cx, const dfield &in, int axis, const dtaps_set &ts, const int *orders, int count,
                 dfield *const *outs, const dbox &out_box)
{
    pass_outputs po = {};
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < count && e == cudaSuccess; i++) {
        e = field_alloc(cx, outs[i], out_box);
        po.v[i] = outs[i]->v;
        po.taps[i] = ts.k[axis][orders[i]].k;
    }
    if (e != cudaSuccess)
        return e;
    const int r = ts.k[axis][orders[0]].radius, T = 2 * r + 1;
    const int n_axis = (int)cx.f->n[axis];
    if (axis == 0) {
        const size_t shared =
            sizeof(float) * (size_t)(count * T + ROW_SEGMENT + 2 * r + ROW_OUTPUTS - 1 + count * ROW_SEGMENT);
        const unsigned blocks = blocks_for_items(row_segment_count(out_box), 1 << 20);
        switch (count) {
        case 1: row_pass_kernel<1><<<blocks, ROW_THREADS, shared, cx.stream>>>(in.v, in.box, po, out_box, r, n_axis); break;
        case 2: row_pass_kernel<2><<<blocks, ROW_THREADS, shared, cx.stream>>>(in.v, in.box, po, out_box, r, n_axis); break;
        default: row_pass_kernel<3><<<blocks, ROW_THREADS, shared, cx.stream>>>(in.v, in.box, po, out_box, r, n_axis); break;
        }
    } else {
        const size_t shared = sizeof(float) * (size_t)(count * T);
        const int other = 3 - axis;
        const int64_t lines = (size_of(out_box, axis) + LINE_OUTPUTS - 1) / LINE_OUTPUTS * size_of(out_box, other);
        const dim3 block(32, 4);
        const dim3 grid((unsigned)((size_of(out_box, 0) + 31) / 32), blocks_for_items((lines + 3) / 4, 65535));
        switch (count) {
        case 1: line_pass<1>(cx, grid, block, shared, in, po, out_box, axis, r, n_axis); break;
        case 2: line_pass<2>(cx, grid, block, shared, in, po, out_box, axis, r, n_axis); break;
        default: line_pass<3>(cx, grid, block, shared, in, po, out_box, axis, r, n_axis); break;
        }
    }
    return cudaGetLastError();
}

/* out_box grown by the radii of the passes after pass `stage` */
dbox grow_after(const tile_context &cx, const dbox &out_box, const dtaps_set &ts, int stage)
{
    int64_t r[3] = {0, 0, 0};
    for (int s = stage + 1; s < cx.f->bank.dims; s++)
        r[cx.f->axes[s]] = ts.radius[cx.f->axes[s]];
    return grow(out_box, r, cx.f->n);
}

/* A derivative asked of derivatives(): orders on x, y, z and where it goes. */
struct wanted {
    int order[3];
    dfield *out;
};

/* Every wanted derivative of `in` on out_box, sharing passes: one launch per distinct input of a pass, computing
 * every order the next stage needs from it. */
cudaError_t derivatives(const tile_context &cx, const dfield &in, const dbox &out_box, const dtaps_set &ts,
                        const wanted *w, int count)
{
    const int dims = cx.f->bank.dims;
    const int *ax = cx.f->axes;
    dfield first[3] = {}, second[3] = {};
    cudaError_t e = cudaSuccess;
    int orders[MAX_ORDERS], n = 0;
    dfield *outs[MAX_ORDERS];
    for (int o = 0; o < 3; o++) {
        int used = 0;
        for (int k = 0; k < count; k++)
            used |= w[k].order[ax[0]] == o;
        if (used)
            orders[n] = o, outs[n++] = &first[o];
    }
    e = pass(cx, in, ax[0], ts, orders, n, outs, grow_after(cx, out_box, ts, 0));
    for (int o0 = 0; o0 < 3 && e == cudaSuccess; o0++) {
        if (!first[o0].v)
            continue;
        if (dims == 2) {
            n = 0;
            for (int k = 0; k < count; k++)
                if (w[k].order[ax[0]] == o0)
                    orders[n] = w[k].order[ax[1]], outs[n++] = w[k].out;
            e = pass(cx, first[o0], ax[1], ts, orders, n, outs, out_box);
        } else {
            n = 0;
            for (int o1 = 0; o1 < 3; o1++) {
                int used = 0;
                for (int k = 0; k < count; k++)
                    used |= w[k].order[ax[0]] == o0 && w[k].order[ax[1]] == o1;
                if (used)
                    orders[n] = o1, outs[n++] = &second[o1];
            }
            e = pass(cx, first[o0], ax[1], ts, orders, n, outs, grow_after(cx, out_box, ts, 1));
            for (int o1 = 0; o1 < 3 && e == cudaSuccess; o1++) {
                if (!second[o1].v)
                    continue;
                n = 0;
                for (int k = 0; k < count; k++)
                    if (w[k].order[ax[0]] == o0 && w[k].order[ax[1]] == o1)
                        orders[n] = w[k].order[ax[2]], outs[n++] = w[k].out;
                e = pass(cx, second[o1], ax[2], ts, orders, n, outs, out_box);
            }
            for (int o1 = 0; o1 < 3; o1++)
                field_free(cx, &second[o1]);
        }
        field_free(cx, &first[o0]);
    }
    for (int o = 0; o < 3; o++) {
        field_free(cx, &first[o]);
        field_free(cx, &second[o]);
    }
    return e;
}

/* The per-voxel steps of one sigma (filter_voxel.h), every family's channels written at once. */
struct combine_args {
    const float *d[VL_D_COUNT];
    const float *dog;       /* G(dog_ratio sigma) * I; NULL when the DoG channel is unwanted (written 0) */
    vl_filter_scales scales;
    unsigned families;
    int64_t voxels;         /* of the box */
    int64_t channel_stride; /* from one channel to the next in `out` */
    float *out;             /* the sigma's first channel at the box's first voxel */
};

/* Voxel i's channels from its derivatives v (VL_D_* slots). */
template <int DIMS>
__device__ __forceinline__ void combine_voxel(const combine_args &a, int64_t i, const float *v)
{
    float *o = a.out + i;
    if (a.families & VL_FAMILY_SMOOTHING)
        *o = v[VL_D_SMOOTH], o += a.channel_stride;
    if (a.families & VL_FAMILY_LOG)
        *o = vl_voxel_log(&a.scales, DIMS, v + VL_D_XX), o += a.channel_stride;
    if (a.families & VL_FAMILY_GRADIENT)
        *o = vl_voxel_gradient(&a.scales, DIMS, v + VL_D_X), o += a.channel_stride;
    if (a.families & VL_FAMILY_DOG)
        *o = a.dog ? vl_fsub(v[VL_D_SMOOTH], a.dog[i]) : 0, o += a.channel_stride;
    if (a.families & VL_FAMILY_STRUCTURE)
        o += DIMS * a.channel_stride; /* structure_kernel's */
    if (a.families & VL_FAMILY_HESSIAN) {
        float e[3];
        vl_voxel_hessian(&a.scales, DIMS, v, e);
#pragma unroll
        for (int c = 0; c < DIMS; c++)
            *o = e[c], o += a.channel_stride;
    }
}

template <int DIMS>
__global__ void combine_kernel(combine_args a)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.voxels; i += (int64_t)gridDim.x * blockDim.x) {
        float v[VL_D_COUNT];
#pragma unroll
        for (int k = 0; k < VL_D_COUNT; k++)
            v[k] = a.d[k] ? a.d[k][i] : 0;
        combine_voxel<DIMS>(a, i, v);
    }
}

/* The last pass (along x) of every derivative fused with the per-voxel steps, when a sigma needs all of them:
 * the inputs are the y-pass results of the (z, y) order pairs (0,0) (0,1) (0,2) (1,0) (1,1) (2,0) in 3D, the first
 * passes of y orders 0, 1, 2 in 2D, all on the box grown along x; a block stages a row segment of each in shared
 * memory; its threads take the segment's chains (an input and an x order: COMBINE_CHAINS in 3D, the first 6 in 2D)
 * run by run, ROW_OUTPUTS voxels each (the same chains as row_pass_kernel), into shared memory; then the block takes
 * the per-voxel steps, one voxel per thread, and writes the channels. The derivatives never go to global memory. */
struct fused_inputs {
    const float *v[6];
};

const int COMBINE_CHAINS = 10;
/* chain c reads input combine_input[c] with the x taps of order combine_order[c] into derivative slot
 * combine_slot[c] */
__constant__ int combine_input[COMBINE_CHAINS] = {0, 0, 0, 1, 1, 2, 3, 3, 4, 5};
__constant__ int combine_order[COMBINE_CHAINS] = {0, 1, 2, 0, 1, 0, 0, 1, 0, 0};
__constant__ int combine_slot[COMBINE_CHAINS] = {VL_D_SMOOTH, VL_D_X,      VL_D_XX,     VL_D_X + 1, VL_D_XY,
                                                 VL_D_XX + 1, VL_D_X + 2, VL_D_XZ, VL_D_YZ,    VL_D_XX + 2};

template <int DIMS>
__global__ void __launch_bounds__(COMBINE_THREADS, 3) row_combine_kernel(fused_inputs in, dbox in_box,
                                                                        pass_outputs x_taps, combine_args a,
                                                                        dbox out_box, int r, int n_axis)
{
    const int inputs = DIMS == 3 ? 6 : 3, chains = DIMS == 3 ? COMBINE_CHAINS : 6;
    extern __shared__ float shared[];
    /* each input's row segment, padded as row_pass_kernel's */
    const int T = 2 * r + 1, pitch = ROW_SEGMENT + 2 * r + ROW_OUTPUTS - 1;
    /* taps of x orders 0, 1, 2; a row segment of each input; the segment's derivatives, slot after slot */
    float *taps = shared, *rows = shared + 3 * T, *derivative = rows + inputs * pitch;
    load_taps<3>(taps, x_taps, T);
    const int in_lo = (int)in_box.lo[0];
    for (int64_t work = blockIdx.x; work < row_segment_count(out_box); work += gridDim.x) {
        const row_segment w = row_segment_of(in_box, out_box, work);
        const int x0 = w.x0, span = w.span;
        const int64_t row_offset = w.in_row;
        __syncthreads(); /* the previous segment's reads are done (and the taps are in place) */
        const float *sources[inputs];
#pragma unroll
        for (int k = 0; k < inputs; k++)
            sources[k] = in.v[k] + row_offset;
        stage_rows<inputs>(rows, pitch, sources, x0, r, span + 2 * r, n_axis, in_lo, threadIdx.x, COMBINE_THREADS);
        __syncthreads();
        for (int run = threadIdx.x; run < chains * ROW_THREADS; run += COMBINE_THREADS) {
            const int c = run / ROW_THREADS, first = run % ROW_THREADS * ROW_OUTPUTS;
            if (first < span)
                row_run<1>(rows + combine_input[c] * pitch, taps + combine_order[c] * T, T, first, span,
                           derivative + combine_slot[c] * ROW_SEGMENT);
        }
        __syncthreads();
        /* the per-voxel steps, neighbouring threads on neighbouring voxels (coalesced reads and writes) */
        const int64_t base = w.out_first;
        for (int i = threadIdx.x; i < span; i += COMBINE_THREADS) {
            float v[VL_D_COUNT];
#pragma unroll
            for (int k = 0; k < VL_D_COUNT; k++)
                v[k] = DIMS == 3 || (k != VL_D_X + 2 && k != VL_D_XX + 2 && k != VL_D_XZ && k != VL_D_YZ)
                           ? derivative[k * ROW_SEGMENT + i]
                           : 0;
            combine_voxel<DIMS>(a, base + i, v);
        }
    }
}

/* The last pass (along x) of the structure tensor's outer smoothing fused with its eigenvalues: the inputs are the
 * products after their other passes (3D: slots xx, xy, xz, yy, yz, zz; 2D: xx, xy, yy), on the box grown along x.
 * A block stages a row segment of each; a thread smooths ROW_OUTPUTS neighbouring voxels of one input at a time
 * into shared memory (row_pass_kernel's chains), STRUCTURE_THREADS threads taking the inputs' ROW_THREADS runs of
 * voxels in turn; then the block takes the eigenvalues, one voxel per thread, and writes the family's channels
 * from `out` on, channel_stride apart. The smoothed tensor never goes to memory. */
template <int DIMS>
__global__ void __launch_bounds__(STRUCTURE_THREADS)
    structure_kernel(fused_inputs in, dbox in_box, pass_outputs x_taps, dbox out_box, int r, int n_axis, float *out,
                     int64_t channel_stride)
{
    const int P = DIMS == 3 ? 6 : 3;
    const int slot[3] = {0, 1, 3}; /* 2D: the input k's slot in vl_voxel_structure's entries */
    extern __shared__ float shared[];
    /* the taps; each input's row segment, padded as row_pass_kernel's; each input smoothed, segment after segment */
    const int T = 2 * r + 1, pitch = ROW_SEGMENT + 2 * r + ROW_OUTPUTS - 1;
    float *taps = shared, *rows = shared + T, *smoothed = rows + P * pitch;
    load_taps<1>(taps, x_taps, T);
    const int in_lo = (int)in_box.lo[0];
    for (int64_t work = blockIdx.x; work < row_segment_count(out_box); work += gridDim.x) {
        const row_segment w = row_segment_of(in_box, out_box, work);
        const int x0 = w.x0, span = w.span;
        __syncthreads(); /* the previous segment's reads are done (and the taps are in place) */
        const float *sources[P];
#pragma unroll
        for (int k = 0; k < P; k++)
            sources[k] = in.v[k] + w.in_row;
        stage_rows<P>(rows, pitch, sources, x0, r, span + 2 * r, n_axis, in_lo, threadIdx.x, STRUCTURE_THREADS);
        __syncthreads();
        for (int run = threadIdx.x; run < P * ROW_THREADS; run += STRUCTURE_THREADS) {
            const int k = run / ROW_THREADS, first = run % ROW_THREADS * ROW_OUTPUTS;
            if (first < span)
                row_run<1>(rows + k * pitch, taps, T, first, span, smoothed + k * ROW_SEGMENT);
        }
        __syncthreads();
        for (int i = threadIdx.x; i < span; i += STRUCTURE_THREADS) {
            float t[6] = {0, 0, 0, 0, 0, 0}, e[3];
#pragma unroll
            for (int k = 0; k < P; k++)
                t[DIMS == 3 ? k : slot[k]] = smoothed[k * ROW_SEGMENT + i];
            vl_voxel_structure(DIMS, t, e);
#pragma unroll
            for (int c = 0; c < DIMS; c++)
                out[c * channel_stride + w.out_first + i] = e[c];
        }
    }
}

/* The structure tensor's inner gradients and where its first smoothing pass of each product g_a g_b per mm^2
 * goes. */
struct product_args {
    const float *g[3];
    float *out[6];
    float per_mm2[6];
};

/* Outputs per thread of product_pass_kernel (each product keeps its own window of inputs in registers). */
const int PRODUCT_OUTPUTS = 4;

/* The first pass of the structure tensor's outer smoothing for every product at once, the products g_a g_b per
 * mm^2 (vl_voxel_product) formed as the inner gradients are read, so that they never go to memory; otherwise as
 * line_pass_kernel (axis 1 or 2, order 0 taps). Slots as product_args: xx, xy, xz, yy, yz, zz (2D: 0, 1, 3). */
template <int DIMS>
__global__ void __launch_bounds__(128) product_pass_kernel(product_args a, dbox in_box, dbox out_box, int axis,
                                                           const float *taps_global, int r, int n_axis)
{
    const int P = DIMS == 3 ? 6 : 3, K = PRODUCT_OUTPUTS;
    const int slot[6] = {0, 1, DIMS == 3 ? 2 : 3, 3, 4, 5};
    const int first_of[6] = {0, 0, DIMS == 3 ? 0 : 1, 1, 1, 2}, second_of[6] = {0, 1, DIMS == 3 ? 2 : 1, 1, 2, 2};
    extern __shared__ float taps[];
    const int T = 2 * r + 1;
    for (int i = threadIdx.x + blockDim.x * threadIdx.y; i < T; i += blockDim.x * blockDim.y)
        taps[i] = taps_global[i];
    __syncthreads();
    const line_geometry g = line_geometry_of(in_box, out_box, axis, K);
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= g.sx)
        return;
    float scale[P];
#pragma unroll
    for (int p = 0; p < P; p++)
        scale[p] = a.per_mm2[slot[p]];
    for (int line = blockIdx.y * blockDim.y + threadIdx.y; line < g.lines; line += gridDim.y * blockDim.y) {
        const line_chunk c = line_chunk_of(g, x, line, K);
        const int last = c.count - 1 + 2 * r;
        float acc[P][K];
        /* the chunk's values in order, as correlate() reads them: one step along the line each when every read
         * lies inside the input box, reflected at the volume's border otherwise (two versions of the loop, each
         * with one way to read) */
        auto run = [&](auto inside) {
            int64_t at = c.base + (int64_t)(c.p0 - r - g.in_lo) * g.in_step;
            int idx = 0;
            float win[P][2 * K - 1];
            auto load = [&](int into) {
                int64_t o = at;
                if (decltype(inside)::value) {
                    at += g.in_step;
                } else {
                    const int q = reflect(c.p0 - r + (idx < last ? idx : last), n_axis);
                    idx++;
                    o = c.base + (int64_t)(q - g.in_lo) * g.in_step;
                }
                float g[DIMS];
#pragma unroll
                for (int d = 0; d < DIMS; d++)
                    g[d] = __ldg(a.g[d] + o);
#pragma unroll
                for (int p = 0; p < P; p++)
                    win[p][into] = vl_voxel_product(g[first_of[p]], g[second_of[p]], scale[p]);
            };
            /* as correlate(): while taps t0 .. t0 + K - 1 are applied, win holds the values t0 .. t0 + 2K - 2 */
#pragma unroll
            for (int p = 0; p < P; p++)
#pragma unroll
                for (int j = 0; j < K; j++)
                    acc[p][j] = 0;
#pragma unroll
            for (int i = 0; i < K - 1; i++)
                load(i);
            int t0 = 0;
            for (; t0 + K <= T; t0 += K) {
#pragma unroll
                for (int i = 0; i < K; i++)
                    load(K - 1 + i);
#pragma unroll
                for (int tt = 0; tt < K; tt++) {
                    const float w = taps[t0 + tt];
#pragma unroll
                    for (int p = 0; p < P; p++)
#pragma unroll
                        for (int j = 0; j < K; j++)
                            acc[p][j] = __fmaf_rn(w, win[p][j + tt], acc[p][j]);
                }
#pragma unroll
                for (int p = 0; p < P; p++)
#pragma unroll
                    for (int i = 0; i < K - 1; i++)
                        win[p][i] = win[p][K + i];
            }
            const int rest = T - t0;
#pragma unroll
            for (int i = 0; i < K; i++)
                if (i < rest)
                    load(K - 1 + i);
#pragma unroll
            for (int tt = 0; tt < K; tt++)
                if (tt < rest) {
                    const float w = taps[t0 + tt];
#pragma unroll
                    for (int p = 0; p < P; p++)
#pragma unroll
                        for (int j = 0; j < K; j++)
                            acc[p][j] = __fmaf_rn(w, win[p][j + tt], acc[p][j]);
                }
        };
        if (c.p0 - r >= g.in_lo && c.p0 + K - 1 + r < g.in_hi)
            run(std::true_type{});
        else
            run(std::false_type{});
#pragma unroll
        for (int p = 0; p < P; p++)
#pragma unroll
            for (int j = 0; j < K; j++)
                if (j < c.count)
                    a.out[slot[p]][c.target + j * g.out_step] = acc[p][j];
    }
}

__global__ void offset_kernel(const float *image, int64_t nx, int64_t ny, int64_t nz, dbox box, int ux, int uy,
                              int uz, int vx, int vy, int vz, float *out)
{
    const int64_t sx = box.hi[0] - box.lo[0], sy = box.hi[1] - box.lo[1];
    const int64_t total = sx * sy * (box.hi[2] - box.lo[2]);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t x = box.lo[0] + i % sx, y = box.lo[1] + (i / sx) % sy, z = box.lo[2] + i / (sx * sy);
        const int64_t a = reflect((int)(x + ux), (int)nx) + nx * (reflect((int)(y + uy), (int)ny) + ny * reflect((int)(z + uz), (int)nz));
        const int64_t b = reflect((int)(x + vx), (int)nx) + nx * (reflect((int)(y + vy), (int)ny) + ny * reflect((int)(z + vz), (int)nz));
        out[i] = __double2float_rn(__dsub_rn((double)image[a], (double)image[b]));
    }
}

#define TRY(call)                           \
    do {                                    \
        if ((error = (call)) != cudaSuccess) \
            goto done;                      \
    } while (0)

/* The inputs of row_combine_kernel for `in` on out_box: 3D, the y passes of the (z, y) order pairs (0,0) (0,1)
 * (0,2) (1,0) (1,1) (2,0) after the z passes of orders 0, 1, 2; 2D, the y passes of orders 0, 1, 2. */
cudaError_t fused_inputs_make(const tile_context &cx, const dfield &in, const dbox &out_box, const dtaps_set &ts,
                              dfield fields[6])
{
    const int *ax = cx.f->axes;
    static const int all[3] = {0, 1, 2};
    dfield *outs[3];
    if (cx.f->bank.dims == 2) {
        for (int o = 0; o < 3; o++)
            outs[o] = &fields[o];
        return pass(cx, in, ax[0], ts, all, 3, outs, grow_after(cx, out_box, ts, 0));
    }
    dfield first[3] = {};
    for (int o = 0; o < 3; o++)
        outs[o] = &first[o];
    cudaError_t e = pass(cx, in, ax[0], ts, all, 3, outs, grow_after(cx, out_box, ts, 0));
    const dbox second = grow_after(cx, out_box, ts, 1);
    static const int start[3] = {0, 3, 5}, orders_of[3] = {3, 2, 1}; /* y orders per z order */
    for (int oz = 0; oz < 3 && e == cudaSuccess; oz++) {
        for (int o = 0; o < orders_of[oz]; o++)
            outs[o] = &fields[start[oz] + o];
        e = pass(cx, first[oz], ax[1], ts, all, orders_of[oz], outs, second);
        field_free(cx, &first[oz]);
    }
    for (int o = 0; o < 3; o++)
        field_free(cx, &first[o]);
    return e;
}

/* 1 when `b` spans whole x rows and y columns */
bool whole_planes(const vl_gpu_filters *f, const dbox &b)
{
    return b.lo[0] == 0 && b.hi[0] == f->n[0] && b.lo[1] == 0 && b.hi[1] == f->n[1];
}

/* The structure tensor's inner gradients of sigma s on `grown` into g[0 .. dims - 1]: the planes the kept
 * gradients of the previous box hold are copied, the others computed. */
cudaError_t inner_gradients(const tile_context &cx, int s, const dbox &grown, dfield g[3])
{
    vl_gpu_filters *f = cx.f;
    const int dims = f->bank.dims;
    const dtaps_set &inner = f->sets[3 * s + 2];
    const dfield *kept = f->gradients ? f->gradients + 3 * s : NULL;
    int64_t from = grown.lo[2]; /* planes below come from the kept gradients */
    if (kept && kept[0].v && whole_planes(f, grown) && whole_planes(f, kept[0].box) &&
        kept[0].box.lo[2] <= grown.lo[2] && kept[0].box.hi[2] > grown.lo[2])
        from = kept[0].box.hi[2] < grown.hi[2] ? kept[0].box.hi[2] : grown.hi[2];
    wanted gw[3];
    dfield fresh[3] = {};
    if (from == grown.lo[2]) {
        for (int a = 0; a < dims; a++)
            gw[a] = wanted{{a == 0, a == 1, a == 2}, &g[a]};
        return derivatives(cx, f->image, grown, inner, gw, dims);
    }
    const int64_t plane = f->n[0] * f->n[1];
    cudaError_t e = cudaSuccess;
    for (int a = 0; a < dims && e == cudaSuccess; a++) {
        e = field_alloc(cx, &g[a], grown);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(g[a].v, kept[a].v + (grown.lo[2] - kept[a].box.lo[2]) * plane,
                                sizeof(float) * (size_t)((from - grown.lo[2]) * plane), cudaMemcpyDeviceToDevice,
                                cx.stream);
    }
    if (e == cudaSuccess && from < grown.hi[2]) {
        dbox rest = grown;
        rest.lo[2] = from;
        for (int a = 0; a < dims; a++)
            gw[a] = wanted{{a == 0, a == 1, a == 2}, &fresh[a]};
        e = derivatives(cx, f->image, rest, inner, gw, dims);
        for (int a = 0; a < dims && e == cudaSuccess; a++)
            e = cudaMemcpyAsync(g[a].v + (from - grown.lo[2]) * plane, fresh[a].v,
                                sizeof(float) * (size_t)((grown.hi[2] - from) * plane), cudaMemcpyDeviceToDevice,
                                cx.stream);
    }
    for (int a = 0; a < 3; a++)
        field_free(cx, &fresh[a]);
    return e;
}

/* After the products: in 3D, boxes of whole planes keep their inner gradients for the next box (the previous
 * ones freed); otherwise they are freed. */
void keep_gradients(const tile_context &cx, int s, dfield g[3])
{
    vl_gpu_filters *f = cx.f;
    if (f->bank.dims == 3 && f->gradients && whole_planes(f, g[0].box)) {
        dfield *kept = f->gradients + 3 * s;
        for (int a = 0; a < 3; a++) {
            field_free(cx, &kept[a]);
            kept[a] = g[a];
            g[a].v = NULL;
        }
    }
    for (int a = 0; a < 3; a++)
        field_free(cx, &g[a]);
}

/* The structure tensor's eigenvalues on `box` (channel c at out + c * channel_stride) from the inner gradients g on
 * `grown`: the first pass of the outer smoothing forms the products as it reads (product_pass_kernel), the last
 * one takes the eigenvalues as it writes (structure_kernel). */
cudaError_t structure_eigenvalues(const tile_context &cx, const dtaps_set &ts, const dbox &grown, const dbox &box,
                                  const dfield g[3], float *out, int64_t channel_stride)
{
    const vl_gpu_filters *f = cx.f;
    const int dims = f->bank.dims;
    const int *ax = f->axes;
    static const int pair[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    static const int order0[1] = {0};
    const dbox region = grow_after(cx, box, ts, 0);
    dfield first[6] = {};
    product_args pa = {};
    cudaError_t e = cudaSuccess;
    for (int a = 0; a < dims; a++)
        pa.g[a] = g[a].v;
    for (int p = 0; p < 6 && e == cudaSuccess; p++) {
        if (pair[p][0] >= dims || pair[p][1] >= dims)
            continue;
        e = field_alloc(cx, &first[p], region);
        pa.out[p] = first[p].v;
        pa.per_mm2[p] = f->scales.per_mm2[pair[p][0]][pair[p][1]];
    }
    if (e == cudaSuccess) {
        const int axis = ax[0], other = 3 - axis;
        const dtaps &t = ts.k[axis][0];
        const int64_t lines = (size_of(region, axis) + PRODUCT_OUTPUTS - 1) / PRODUCT_OUTPUTS * size_of(region, other);
        const dim3 block(32, 4);
        const dim3 grid((unsigned)((size_of(region, 0) + 31) / 32), blocks_for_items((lines + 3) / 4, 65535));
        const size_t shared = sizeof(float) * (size_t)(2 * t.radius + 1);
        if (dims == 3)
            product_pass_kernel<3><<<grid, block, shared, cx.stream>>>(pa, grown, region, axis, t.k, t.radius,
                                                                        (int)f->n[axis]);
        else
            product_pass_kernel<2><<<grid, block, shared, cx.stream>>>(pa, grown, region, axis, t.k, t.radius,
                                                                        (int)f->n[axis]);
        e = cudaGetLastError();
    }
    /* each product before its last pass (3D: after the pass along y; 2D: the first pass's) */
    dfield before_x[6] = {};
    fused_inputs in = {};
    int inputs = 0;
    for (int p = 0; p < 6 && e == cudaSuccess; p++) {
        if (!first[p].v)
            continue;
        if (dims == 2) {
            before_x[p] = first[p];
            first[p].v = NULL;
        } else {
            dfield *mid = &before_x[p];
            e = pass(cx, first[p], ax[1], ts, order0, 1, &mid, grow_after(cx, box, ts, 1));
            field_free(cx, &first[p]);
        }
        in.v[inputs++] = before_x[p].v;
    }
    if (e == cudaSuccess) {
        const dtaps &t = ts.k[0][0];
        const size_t shared = sizeof(float) * (size_t)(2 * t.radius + 1 + inputs * (ROW_SEGMENT + 2 * t.radius +
                                                                                    ROW_OUTPUTS - 1 + ROW_SEGMENT));
        pass_outputs x_taps = {};
        x_taps.taps[0] = t.k;
        void (*kernel)(fused_inputs, dbox, pass_outputs, dbox, int, int, float *, int64_t) =
            dims == 3 ? structure_kernel<3> : structure_kernel<2>;
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared);
        if (e == cudaSuccess)
            kernel<<<blocks_for_items(row_segment_count(box), 1 << 20), STRUCTURE_THREADS, shared, cx.stream>>>(
                in, before_x[0].box, x_taps, box, t.radius, (int)f->n[0], out, channel_stride);
        if (e == cudaSuccess)
            e = cudaGetLastError();
    }
    for (int p = 0; p < 6; p++) {
        field_free(cx, &first[p]);
        field_free(cx, &before_x[p]);
    }
    return e;
}

/* The channels of sigma s (sets[3 s .. 3 s + 2]: sigma, DoG sigma, structure inner sigma) on `box`, channel c at
 * channels + c * channel_stride. */
cudaError_t sigma_channels(const tile_context &cx, int s, const dbox &box, float *channels, int64_t channel_stride,
                           int *channel)
{
    const vl_gpu_filters *f = cx.f;
    const unsigned families = f->bank.families[s];
    const int dims = f->bank.dims;
    const int64_t voxels = voxels_of(box);
    const dtaps_set &ts = f->sets[3 * s], &dog = f->sets[3 * s + 1];
    static const int orders[VL_D_COUNT][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0},
                                              {0, 2, 0}, {0, 0, 2}, {1, 1, 0}, {1, 0, 1}, {0, 1, 1}};
    int need[VL_D_COUNT] = {0};
    need[VL_D_SMOOTH] = (families & (VL_FAMILY_SMOOTHING | VL_FAMILY_DOG)) != 0;
    for (int a = 0; a < dims; a++) {
        need[VL_D_X + a] = (families & VL_FAMILY_GRADIENT) != 0;
        need[VL_D_XX + a] = (families & (VL_FAMILY_LOG | VL_FAMILY_HESSIAN)) != 0;
    }
    need[VL_D_XY] = (families & VL_FAMILY_HESSIAN) != 0;
    need[VL_D_XZ] = need[VL_D_YZ] = dims == 3 && need[VL_D_XY];
    /* every derivative of the dimension needed: the last pass fused with the per-voxel steps, when its shared
     * memory fits */
    const int r = ts.k[0][0].radius;
    const size_t fused_shared =
        sizeof(float) * (size_t)(3 * (2 * r + 1) + (dims == 3 ? 6 : 3) * (ROW_SEGMENT + 2 * r + ROW_OUTPUTS - 1) +
                                 VL_D_COUNT * ROW_SEGMENT);
    const int fused = need[VL_D_SMOOTH] && need[VL_D_X] && need[VL_D_XX] && need[VL_D_XY] &&
                      fused_shared <= 48 * 1024;
    dfield d[VL_D_COUNT] = {}, smooth = {}, g[3] = {}, inputs[6] = {};
    wanted w[VL_D_COUNT];
    int count = 0;
    cudaError_t error = cudaSuccess;
    combine_args args = {};
    args.scales = f->scales;
    args.families = families;
    args.voxels = voxels;
    args.channel_stride = channel_stride;
    args.out = channels + (int64_t)*channel * channel_stride;
    /* the structure tensor's first channel, relative to args.out, and the sigma's channels */
    int structure_channel = 0, sigma_channel_count = 0;
    for (unsigned family = 1; family <= VL_FAMILY_HESSIAN; family <<= 1) {
        if (family == VL_FAMILY_STRUCTURE)
            structure_channel = sigma_channel_count;
        if (families & family)
            sigma_channel_count += family == VL_FAMILY_STRUCTURE || family == VL_FAMILY_HESSIAN ? dims : 1;
    }
    if (families & ~f->unwanted[s] & VL_FAMILY_DOG) {
        const wanted one = {{0, 0, 0}, &smooth};
        TRY(derivatives(cx, f->image, box, dog, &one, 1));
    }
    if (families & ~f->unwanted[s] & VL_FAMILY_STRUCTURE) {
        /* inner gradients over the box grown by the outer radius, products, outer smoothing of each */
        const dbox grown = grow(box, ts.radius, f->n);
        TRY(inner_gradients(cx, s, grown, g));
        TRY(structure_eigenvalues(cx, ts, grown, box, g, args.out + structure_channel * channel_stride,
                                  channel_stride));
        keep_gradients(cx, s, g);
    } else if (families & VL_FAMILY_STRUCTURE) {
        /* unwanted: written 0 */
        for (int c = 0; c < dims; c++)
            TRY(cudaMemsetAsync(args.out + (structure_channel + c) * channel_stride, 0, sizeof(float) * (size_t)voxels,
                                cx.stream));
    }
    args.dog = smooth.v;
    if (fused) {
        TRY(fused_inputs_make(cx, f->image, box, ts, inputs));
        fused_inputs fi = {};
        pass_outputs x_taps = {};
        for (int k = 0; k < 6; k++)
            fi.v[k] = inputs[k].v;
        for (int o = 0; o < 3; o++)
            x_taps.taps[o] = ts.k[0][o].k;
        const unsigned blocks = blocks_for_items(row_segment_count(box), 1 << 20);
        auto kernel = dims == 3 ? row_combine_kernel<3> : row_combine_kernel<2>;
        kernel<<<blocks, COMBINE_THREADS, fused_shared, cx.stream>>>(fi, inputs[0].box, x_taps, args, box, r,
                                                                    (int)f->n[0]);
        TRY(cudaGetLastError());
    } else {
        for (int i = 0; i < VL_D_COUNT; i++)
            if (need[i]) {
                memcpy(w[count].order, orders[i], sizeof orders[i]);
                w[count++].out = &d[i];
            }
        if (count)
            TRY(derivatives(cx, f->image, box, ts, w, count));
        for (int i = 0; i < VL_D_COUNT; i++)
            args.d[i] = d[i].v;
        auto kernel = dims == 3 ? combine_kernel<3> : combine_kernel<2>;
        kernel<<<blocks_for(voxels), 256, 0, cx.stream>>>(args);
        TRY(cudaGetLastError());
    }
    *channel += sigma_channel_count;
done:
    for (int i = 0; i < VL_D_COUNT; i++)
        field_free(cx, &d[i]);
    for (int p = 0; p < 6; p++)
        field_free(cx, &inputs[p]);
    for (int a = 0; a < 3; a++)
        field_free(cx, &g[a]);
    field_free(cx, &smooth);
    return error;
}

__global__ void widen_kernel(const void *data, vl_dtype dtype, float *out, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float v = 0;
        switch (dtype) {
        case VL_U8: v = ((const uint8_t *)data)[i]; break;
        case VL_I16: v = ((const int16_t *)data)[i]; break;
        case VL_U16: v = ((const uint16_t *)data)[i]; break;
        case VL_U32: v = __uint2float_rn(((const uint32_t *)data)[i]); break;
        case VL_F32: v = ((const float *)data)[i]; break;
        }
        out[i] = v;
    }
}

/* Taps of orders 0, 1, 2 on each filtered axis at sigma_mm, appended to `host` at *used (capacity checked by the
 * caller's sizing, taps_floats). */
void taps_set_fill(dtaps_set *ts, const vl_gpu_filters *f, double sigma_mm, float *host, size_t *used)
{
    memset(ts, 0, sizeof *ts);
    for (int a = 0; a < f->bank.dims; a++) {
        const double sigma_voxels = sigma_mm / f->spacing[a];
        const int radius = vl_gaussian_radius(sigma_voxels, f->bank.truncate);
        ts->radius[a] = radius;
        for (int o = 0; o < 3; o++) {
            ts->k[a][o].radius = radius;
            ts->k[a][o].k = (const float *)(uintptr_t)*used; /* an offset until the upload */
            vl_gaussian_taps(sigma_voxels, o, radius, host + *used);
            *used += (size_t)(2 * radius + 1);
        }
    }
}

size_t taps_floats(const vl_filter_bank *bank, const double spacing[3])
{
    size_t total = 0;
    for (int s = 0; s < bank->sigma_count; s++) {
        const double ratios[3] = {1, bank->dog_ratio, bank->st_inner_ratio};
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < bank->dims; a++)
                total += 3 * (size_t)(2 * vl_gaussian_radius(bank->sigmas[s] * ratios[k] / spacing[a], bank->truncate) + 1);
    }
    return total;
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
    vl_filter_scales_make(f->spacing, &f->scales);
    for (int s = 0; s < bank->dims; s++)
        f->axes[s] = bank->dims - 1 - s;
    f->image.box = dbox{{0, 0, 0}, {image->nx, image->ny, image->nz}};
    const int64_t voxels = vl_volume_voxels(image);
    const size_t raw_bytes = (size_t)voxels * vl_dtype_size(image->dtype);
    const size_t floats = taps_floats(bank, f->spacing);
    float *host = (float *)malloc(sizeof(float) * floats + 1);
    void *raw = NULL;
    cudaError_t error = host ? cudaSuccess : cudaErrorMemoryAllocation;
    if (error == cudaSuccess && (!(f->sets = (dtaps_set *)calloc((size_t)(3 * bank->sigma_count), sizeof(dtaps_set))) ||
                                 !(f->gradients = (dfield *)calloc((size_t)(3 * bank->sigma_count), sizeof(dfield)))))
        error = cudaErrorMemoryAllocation;
    if (error == cudaSuccess) {
        size_t used = 0;
        for (int s = 0; s < bank->sigma_count; s++) {
            taps_set_fill(&f->sets[3 * s], f, bank->sigmas[s], host, &used);
            taps_set_fill(&f->sets[3 * s + 1], f, bank->sigmas[s] * bank->dog_ratio, host, &used);
            taps_set_fill(&f->sets[3 * s + 2], f, bank->sigmas[s] * bank->st_inner_ratio, host, &used);
        }
        error = cudaMalloc(&f->taps, sizeof(float) * floats + 1);
        if (error == cudaSuccess)
            error = cudaMemcpy(f->taps, host, sizeof(float) * floats, cudaMemcpyHostToDevice);
        for (int s = 0; s < 3 * bank->sigma_count && error == cudaSuccess; s++)
            for (int a = 0; a < 3; a++)
                for (int o = 0; o < 3; o++)
                    f->sets[s].k[a][o].k = f->taps + (uintptr_t)f->sets[s].k[a][o].k;
    }
    free(host);
    if (error == cudaSuccess)
        error = cudaMalloc(&f->image.v, sizeof(float) * (size_t)voxels);
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
    if (error != cudaSuccess) {
        vl_gpu_filters_destroy(f);
        return vl_cuda_failure(error, "uploading the image and filter taps");
    }
    *out = f;
    return VL_OK;
}

void vl_gpu_filters_destroy(vl_gpu_filters *f)
{
    if (!f)
        return;
    if (f->gradients) {
        bool kept = false;
        for (int k = 0; k < 3 * f->bank.sigma_count; k++)
            kept |= f->gradients[k].v != NULL;
        if (kept) {
            cudaDeviceSynchronize(); /* the last box's work may still read them */
            for (int k = 0; k < 3 * f->bank.sigma_count; k++)
                if (f->gradients[k].v)
                    cudaFreeAsync(f->gradients[k].v, 0);
            cudaDeviceSynchronize();
        }
    }
    cudaFree(f->image.v);
    cudaFree(f->taps);
    free(f->sets);
    free(f->gradients);
    free(f);
}

void vl_gpu_filters_select(vl_gpu_filters *f, const uint8_t *wanted)
{
    int channel = 0;
    for (int s = 0; s < f->bank.sigma_count; s++) {
        f->unwanted[s] = 0;
        for (unsigned family = 1; family <= VL_FAMILY_HESSIAN; family <<= 1) {
            if (!(f->bank.families[s] & family))
                continue;
            const int count = family == VL_FAMILY_STRUCTURE || family == VL_FAMILY_HESSIAN ? f->bank.dims : 1;
            int any = 0;
            for (int c = 0; c < count; c++)
                any |= wanted[channel + c] != 0;
            if (!any)
                f->unwanted[s] |= family;
            channel += count;
        }
    }
    for (int k = 0; k < f->bank.offset_count; k++)
        f->offset_unwanted[k] = wanted[channel + k] == 0;
}

vl_status vl_gpu_filters_box(vl_gpu_filters *f, const vl_box *box, float *channels, cudaStream_t stream,
                             int pass_planes)
{
    const tile_context cx = {f, stream};
    const dbox b = {{box->lo[0], box->lo[1], box->lo[2]}, {box->hi[0], box->hi[1], box->hi[2]}};
    const int64_t voxels = voxels_of(b), plane = size_of(b, 0) * size_of(b, 1);
    int channel = 0;
    for (int s = 0; s < f->bank.sigma_count; s++) {
        if ((f->bank.families[s] & ~f->unwanted[s]) == 0) {
            for (unsigned family = 1; family <= VL_FAMILY_HESSIAN; family <<= 1)
                if (f->bank.families[s] & family)
                    channel += family == VL_FAMILY_STRUCTURE || family == VL_FAMILY_HESSIAN ? f->bank.dims : 1;
            continue;
        }
        /* a sigma's passes run on groups of planes (0: the whole box): at least 4 outer z radii, so that the
         * structure tensor's inner gradient (computed on the group grown by that radius) is not computed over and
         * over */
        const int64_t reach = 4 * f->sets[3 * s].radius[2];
        const int64_t step = pass_planes <= 0 ? size_of(b, 2) : pass_planes > reach ? pass_planes : reach;
        int next = channel;
        for (int64_t z = b.lo[2]; z < b.hi[2]; z += step) {
            dbox group = b;
            group.lo[2] = z;
            group.hi[2] = z + step < b.hi[2] ? z + step : b.hi[2];
            next = channel;
            const cudaError_t error = sigma_channels(cx, s, group, channels + (z - b.lo[2]) * plane, voxels, &next);
            if (error != cudaSuccess)
                return vl_cuda_failure(error, "filter bank on a tile");
        }
        channel = next;
    }
    for (int k = 0; k < f->bank.offset_count; k++) {
        const int32_t *o = f->bank.offsets[k];
        if (f->offset_unwanted[k])
            continue;
        offset_kernel<<<blocks_for(voxels), 256, 0, stream>>>(f->image.v, f->n[0], f->n[1], f->n[2], b, o[0], o[1],
                                                              o[2], o[3], o[4], o[5],
                                                              channels + (int64_t)(channel + k) * voxels);
    }
    if (b.hi[2] == f->n[2]) /* no box follows along z: the kept gradients go */
        for (int k = 0; k < 3 * f->bank.sigma_count; k++)
            field_free(cx, &f->gradients[k]);
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
    if (error == cudaSuccess && (status = vl_gpu_filters_box(f, box, device, stream, 0)) == VL_OK) {
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
