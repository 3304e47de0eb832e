/* The CPU reference of the filter bank (include/voxlabel/filters.h): separable passes in float32 over a box and
 * the halo each sigma needs, cut out of the image with scipy's 'reflect' border.
 *
 * Invariant that makes tiles exact: every pass computes each output voxel from the same input values in the
 * same order, whatever box it belongs to, and each pass reflects its own input at the volume's border (as
 * scipy's axis-after-axis filters do), so a voxel's channels never depend on the box it was computed in.
 * Invariant that makes the GPU exact: each output of a pass is a chain of fused multiply-adds over its taps in
 * increasing input position (fmaf here, __fmaf_rn there: one rounding per step on both), and the per-voxel
 * steps after the passes are the shared float32 code of filter_voxel.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "filters/filter_voxel.h"
#include "filters/filters_internal.h"
#include "filters/gaussian_kernel.h"

/* The hot loop is built twice on x86: with FMA instructions (vectorised vfmadd) and plain, picked at load time
 * by the CPU; glibc's fmaf in the plain one rounds exactly as the instruction does, so both give the same bits. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define VL_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define VL_FMA_CLONES
#endif

typedef struct field {
    vl_box box; /* inside the volume */
    float *v;   /* x fastest over the box */
} field;

typedef struct taps {
    int radius;
    float *k; /* vl_gaussian_taps: 2 radius + 1 values */
} taps;

static int64_t box_size(const vl_box *b, int axis) { return b->hi[axis] - b->lo[axis]; }
static int64_t box_voxels(const vl_box *b) { return box_size(b, 0) * box_size(b, 1) * box_size(b, 2); }

static vl_box grow(const vl_box *b, const int64_t r[3], const int64_t n[3])
{
    vl_box g;
    for (int a = 0; a < 3; a++) {
        g.lo[a] = b->lo[a] - r[a] < 0 ? 0 : b->lo[a] - r[a];
        g.hi[a] = b->hi[a] + r[a] > n[a] ? n[a] : b->hi[a] + r[a];
    }
    return g;
}

static int field_alloc(field *f, const vl_box *box)
{
    f->box = *box;
    f->v = malloc((size_t)box_voxels(box) * sizeof(float) + 1);
    return f->v != NULL;
}

static void field_free(field *f)
{
    free(f->v);
    f->v = NULL;
}

/* sum[i] = sum_j k[j] line[i + j] for i < len, each a chain of fused multiply-adds in increasing j (the loop over
 * i inside vectorises). */
VL_FMA_CLONES static void correlate(const float *restrict line, const float *restrict k, int64_t count,
                                    float *restrict sum, int64_t len)
{
    for (int64_t i = 0; i < len; i++)
        sum[i] = 0;
    for (int64_t j = 0; j < count; j++) {
        const float weight = k[j];
        const float *shifted = line + j;
        for (int64_t i = 0; i < len; i++)
            sum[i] = fmaf(weight, shifted[i], sum[i]);
    }
}

/* out = in filtered along `axis` by t, on out->box (already set and allocated). in->box holds out->box on the
 * other axes and every reflected position the taps reach along `axis`. */
static int pass(const field *in, field *out, int axis, const taps *t, int64_t n_axis)
{
    const int64_t lo = out->box.lo[axis], len = box_size(&out->box, axis), r = t->radius;
    float *line = malloc(sizeof(float) * (size_t)(len + 2 * r));
    float *sum = malloc(sizeof(float) * (size_t)len);
    int64_t *source = malloc(sizeof(int64_t) * (size_t)(len + 2 * r));
    if (!line || !sum || !source) {
        free(line);
        free(sum);
        free(source);
        return 0;
    }
    const int64_t in_stride[3] = {1, box_size(&in->box, 0), box_size(&in->box, 0) * box_size(&in->box, 1)};
    const int64_t out_stride[3] = {1, box_size(&out->box, 0), box_size(&out->box, 0) * box_size(&out->box, 1)};
    for (int64_t j = 0; j < len + 2 * r; j++)
        source[j] = (vl_reflect_index(lo - r + j, n_axis) - in->box.lo[axis]) * in_stride[axis];
    const int u = axis == 0 ? 1 : 0, w = axis == 2 ? 1 : 2; /* the other two axes */
    for (int64_t b = out->box.lo[w]; b < out->box.hi[w]; b++)
        for (int64_t a = out->box.lo[u]; a < out->box.hi[u]; a++) {
            const float *in_line = in->v + (a - in->box.lo[u]) * in_stride[u] + (b - in->box.lo[w]) * in_stride[w];
            float *out_line = out->v + (a - out->box.lo[u]) * out_stride[u] + (b - out->box.lo[w]) * out_stride[w];
            for (int64_t j = 0; j < len + 2 * r; j++)
                line[j] = in_line[source[j]];
            correlate(line, t->k, 2 * r + 1, sum, len);
            for (int64_t i = 0; i < len; i++)
                out_line[i * out_stride[axis]] = sum[i];
        }
    free(line);
    free(sum);
    free(source);
    return 1;
}

typedef struct context {
    const vl_filter_bank *bank;
    int64_t n[3];
    double spacing[3];
    vl_filter_scales scales;
    int axes[3]; /* the filtered axes in pass order: z, y, x (3D) or y, x (2D), as scipy takes them */
    const field *image;
} context;

/* Taps of orders 0, 1, 2 on each filtered axis at one sigma. */
typedef struct taps_set {
    taps k[3][3]; /* [axis][order] */
    int64_t radius[3]; /* 0 on an axis the bank does not filter */
} taps_set;

static void taps_set_free(taps_set *ts)
{
    for (int a = 0; a < 3; a++)
        for (int o = 0; o < 3; o++)
            free(ts->k[a][o].k);
    memset(ts, 0, sizeof *ts);
}

static int taps_set_make(taps_set *ts, const context *cx, double sigma_mm)
{
    memset(ts, 0, sizeof *ts);
    for (int a = 0; a < cx->bank->dims; a++) {
        const double sigma_voxels = sigma_mm / cx->spacing[a];
        const int radius = vl_gaussian_radius(sigma_voxels, cx->bank->truncate);
        ts->radius[a] = radius;
        for (int o = 0; o < 3; o++) {
            ts->k[a][o].radius = radius;
            if (!(ts->k[a][o].k = malloc(sizeof(float) * (size_t)(2 * radius + 1))))
                return 0;
            vl_gaussian_taps(sigma_voxels, o, radius, ts->k[a][o].k);
        }
    }
    return 1;
}

/* The passes a sigma's derivatives share: the first pass of each order, and in 3D the second pass of each pair
 * of orders (derivatives that differ only in their x order share both). */
typedef struct pass_cache {
    field first[3], second[3][3];
} pass_cache;

static void pass_cache_free(pass_cache *c)
{
    for (int o = 0; o < 3; o++) {
        field_free(&c->first[o]);
        for (int q = 0; q < 3; q++)
            field_free(&c->second[o][q]);
    }
}

/* out_box grown by the radii of the passes after pass `stage` */
static vl_box grow_after(const context *cx, const vl_box *out_box, const taps_set *ts, int stage)
{
    int64_t r[3] = {0, 0, 0};
    for (int s = stage + 1; s < cx->bank->dims; s++)
        r[cx->axes[s]] = ts->radius[cx->axes[s]];
    return grow(out_box, r, cx->n);
}

/* Derivative (ox, oy, oz) of G(sigma) * in on out_box, per voxel (not yet per mm). */
static int derivative(const context *cx, const field *in, const vl_box *out_box, const taps_set *ts, pass_cache *c,
                      int ox, int oy, int oz, field *out)
{
    const int order[3] = {ox, oy, oz};
    const int *ax = cx->axes;
    const int o0 = order[ax[0]];
    field *first = &c->first[o0];
    if (!first->v) {
        const vl_box b = grow_after(cx, out_box, ts, 0);
        if (!field_alloc(first, &b) || !pass(in, first, ax[0], &ts->k[ax[0]][o0], cx->n[ax[0]]))
            return 0;
    }
    if (cx->bank->dims == 2)
        return field_alloc(out, out_box) && pass(first, out, ax[1], &ts->k[ax[1]][order[ax[1]]], cx->n[ax[1]]);
    const int o1 = order[ax[1]];
    field *second = &c->second[o0][o1];
    if (!second->v) {
        const vl_box b = grow_after(cx, out_box, ts, 1);
        if (!field_alloc(second, &b) || !pass(first, second, ax[1], &ts->k[ax[1]][o1], cx->n[ax[1]]))
            return 0;
    }
    return field_alloc(out, out_box) && pass(second, out, ax[2], &ts->k[ax[2]][order[ax[2]]], cx->n[ax[2]]);
}

/* The channels of sigma `s` on `box`; *channel advances past them. */
static int sigma_channels(const context *cx, int s, const vl_box *box, float *channels, int *channel)
{
    const vl_filter_bank *bank = cx->bank;
    const unsigned families = bank->families[s];
    const double sigma = bank->sigmas[s];
    const int dims = bank->dims;
    const int64_t voxels = box_voxels(box);
    const vl_filter_scales *scales = &cx->scales;
    taps_set ts, inner, dog;
    memset(&inner, 0, sizeof inner);
    memset(&dog, 0, sizeof dog);
    pass_cache cache;
    memset(&cache, 0, sizeof cache);
    field d[VL_D_COUNT], smooth, tensor[6];
    memset(d, 0, sizeof d);
    memset(&smooth, 0, sizeof smooth);
    memset(tensor, 0, sizeof tensor);
    int ok = taps_set_make(&ts, cx, sigma);
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
    for (int i = 0; ok && i < VL_D_COUNT; i++)
        if (need[i])
            ok = derivative(cx, cx->image, box, &ts, &cache, orders[i][0], orders[i][1], orders[i][2], &d[i]);
    pass_cache_free(&cache);
    if (ok && (families & VL_FAMILY_DOG)) {
        ok = taps_set_make(&dog, cx, sigma * bank->dog_ratio) &&
             derivative(cx, cx->image, box, &dog, &cache, 0, 0, 0, &smooth);
        pass_cache_free(&cache);
    }
    if (ok && (families & VL_FAMILY_STRUCTURE)) {
        /* gradient at the inner sigma over the box grown by the outer radius, products, outer smoothing of
         * each product with its own reflect border (as scipy filters the product array) */
        const vl_box grown = grow(box, ts.radius, cx->n);
        const int64_t grown_voxels = box_voxels(&grown);
        field g[3];
        memset(g, 0, sizeof g);
        ok = taps_set_make(&inner, cx, sigma * bank->st_inner_ratio);
        for (int a = 0; ok && a < dims; a++)
            ok = derivative(cx, cx->image, &grown, &inner, &cache, a == 0, a == 1, a == 2, &g[a]);
        pass_cache_free(&cache);
        static const int pair[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
        for (int p = 0; ok && p < 6; p++) {
            const int a = pair[p][0], b = pair[p][1];
            if (a >= dims || b >= dims)
                continue;
            field product;
            ok = field_alloc(&product, &grown);
            if (ok) {
                const float scale = scales->per_mm2[a][b];
                for (int64_t i = 0; i < grown_voxels; i++)
                    product.v[i] = vl_voxel_product(g[a].v[i], g[b].v[i], scale);
                ok = derivative(cx, &product, box, &ts, &cache, 0, 0, 0, &tensor[p]);
            }
            field_free(&product);
            pass_cache_free(&cache);
        }
        for (int a = 0; a < 3; a++)
            field_free(&g[a]);
    }
    if (ok) {
        float *out = channels + (int64_t)*channel * voxels;
        for (int64_t i = 0; i < voxels; i++) {
            float v[VL_D_COUNT], t[6] = {0}, e[3];
            for (int k = 0; k < VL_D_COUNT; k++)
                v[k] = d[k].v ? d[k].v[i] : 0;
            float *o = out + i;
            if (families & VL_FAMILY_SMOOTHING)
                *o = v[VL_D_SMOOTH], o += voxels;
            if (families & VL_FAMILY_LOG)
                *o = vl_voxel_log(scales, dims, v + VL_D_XX), o += voxels;
            if (families & VL_FAMILY_GRADIENT)
                *o = vl_voxel_gradient(scales, dims, v + VL_D_X), o += voxels;
            if (families & VL_FAMILY_DOG)
                *o = vl_fsub(v[VL_D_SMOOTH], smooth.v[i]), o += voxels;
            if (families & VL_FAMILY_STRUCTURE) {
                for (int p = 0; p < 6; p++)
                    t[p] = tensor[p].v ? tensor[p].v[i] : 0;
                vl_voxel_structure(dims, t, e);
                for (int c = 0; c < dims; c++)
                    *o = e[c], o += voxels;
            }
            if (families & VL_FAMILY_HESSIAN) {
                vl_voxel_hessian(scales, dims, v, e);
                for (int c = 0; c < dims; c++)
                    *o = e[c], o += voxels;
            }
        }
        for (unsigned family = 1; family <= VL_FAMILY_HESSIAN; family <<= 1)
            if (families & family)
                *channel += family == VL_FAMILY_STRUCTURE || family == VL_FAMILY_HESSIAN ? dims : 1;
    }
    for (int i = 0; i < VL_D_COUNT; i++)
        field_free(&d[i]);
    for (int p = 0; p < 6; p++)
        field_free(&tensor[p]);
    field_free(&smooth);
    taps_set_free(&ts);
    taps_set_free(&inner);
    taps_set_free(&dog);
    return ok;
}

static void offset_channels(const context *cx, const vl_volume *image, const vl_box *box, float *channels,
                            int channel)
{
    const int64_t voxels = box_voxels(box);
    for (int k = 0; k < cx->bank->offset_count; k++) {
        const int32_t *o = cx->bank->offsets[k];
        float *dst = channels + (int64_t)(channel + k) * voxels;
        int64_t i = 0;
        for (int64_t z = box->lo[2]; z < box->hi[2]; z++)
            for (int64_t y = box->lo[1]; y < box->hi[1]; y++)
                for (int64_t x = box->lo[0]; x < box->hi[0]; x++)
                    dst[i++] = vl_offset_feature(image, o, x, y, z);
    }
}

/* Every channel on one box, single-threaded. */
static vl_status compute_box(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box, float *channels)
{
    context cx = {.bank = bank, .n = {image->nx, image->ny, image->nz}};
    for (int a = 0; a < 3; a++)
        cx.spacing[a] = image->geometry.spacing[a];
    vl_filter_scales_make(cx.spacing, &cx.scales);
    for (int s = 0; s < bank->dims; s++)
        cx.axes[s] = bank->dims - 1 - s;
    int64_t halo[3];
    vl_filter_bank_halo(bank, cx.spacing, halo);
    field img;
    const vl_box region = grow(box, halo, cx.n);
    if (!field_alloc(&img, &region))
        return vl_fail(VL_ERR_MEMORY, "filters: cannot allocate the halo of a %lldx%lldx%lld box",
                       (long long)box_size(box, 0), (long long)box_size(box, 1), (long long)box_size(box, 2));
    int64_t i = 0;
    for (int64_t z = region.lo[2]; z < region.hi[2]; z++)
        for (int64_t y = region.lo[1]; y < region.hi[1]; y++)
            for (int64_t x = region.lo[0]; x < region.hi[0]; x++)
                img.v[i++] = vl_filter_input(image, x + image->nx * (y + image->ny * z));
    cx.image = &img;
    int channel = 0, ok = 1;
    for (int s = 0; ok && s < bank->sigma_count; s++)
        ok = sigma_channels(&cx, s, box, channels, &channel);
    field_free(&img);
    if (!ok)
        return vl_fail(VL_ERR_MEMORY, "filters: out of memory for a %lldx%lldx%lld box", (long long)box_size(box, 0),
                       (long long)box_size(box, 1), (long long)box_size(box, 2));
    offset_channels(&cx, image, box, channels, channel);
    return VL_OK;
}

vl_status vl_filters_compute_box_cpu(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box,
                                     float *channels)
{
    return compute_box(image, bank, box, channels);
}

/* Whole-box jobs: the box is cut into slabs along its last filtered-independent split axis (z), each computed
 * on its own and copied into place. */
typedef struct slab_job {
    const vl_volume *image;
    const vl_filter_bank *bank;
    const vl_box *box;
    float *channels;
    int64_t z_step;
    int threads, index;
    vl_status status;
    char error[256];
} slab_job;

static void *slab_work(void *arg)
{
    slab_job *job = arg;
    const vl_box *box = job->box;
    const int channels = vl_filter_bank_channels(job->bank);
    const int64_t box_voxel_count = box_voxels(box), plane = box_size(box, 0) * box_size(box, 1);
    float *scratch = NULL;
    for (int64_t z0 = box->lo[2] + job->index * job->z_step; z0 < box->hi[2] && job->status == VL_OK;
         z0 += job->threads * job->z_step) {
        vl_box slab = *box;
        slab.lo[2] = z0;
        slab.hi[2] = z0 + job->z_step < box->hi[2] ? z0 + job->z_step : box->hi[2];
        const int64_t slab_voxels = box_voxels(&slab);
        if (!scratch && !(scratch = malloc(sizeof(float) * (size_t)(plane * job->z_step) * (size_t)channels))) {
            job->status = vl_fail(VL_ERR_MEMORY, "filters: out of memory");
            break;
        }
        if ((job->status = compute_box(job->image, job->bank, &slab, scratch)) != VL_OK)
            break;
        for (int c = 0; c < channels; c++)
            memcpy(job->channels + (int64_t)c * box_voxel_count + (z0 - box->lo[2]) * plane,
                   scratch + (int64_t)c * slab_voxels, sizeof(float) * (size_t)slab_voxels);
    }
    if (job->status != VL_OK)
        snprintf(job->error, sizeof job->error, "%s", vl_last_error());
    free(scratch);
    return NULL;
}

vl_status vl_filters_compute(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box, float *channels,
                             int threads)
{
    vl_status status = vl_filter_bank_check(bank);
    if (status != VL_OK)
        return status;
    const int64_t n[3] = {image->nx, image->ny, image->nz};
    for (int a = 0; a < 3; a++) {
        if (box->lo[a] < 0 || box->hi[a] > n[a] || box->lo[a] >= box->hi[a])
            return vl_fail(VL_ERR_ARGUMENT, "filters: box [%lld, %lld) on axis %d is outside the %lld voxels",
                           (long long)box->lo[a], (long long)box->hi[a], a, (long long)n[a]);
        if (!(image->geometry.spacing[a] > 0) && (a < bank->dims))
            return vl_fail(VL_ERR_INPUT, "filters: voxel spacing %g mm on axis %d is not positive",
                           image->geometry.spacing[a], a);
    }
    const int64_t depth = box_size(box, 2);
    const int64_t z_step = bank->dims == 2 ? 1 : (depth + 3) / 4 < 16 ? 16 : (depth + 3) / 4;
    int count = vl_cpu_thread_count(threads);
    const int64_t slabs = (depth + z_step - 1) / z_step;
    if (count > slabs)
        count = (int)slabs;
    slab_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < count; t++)
        jobs[t] = (slab_job){.image = image, .bank = bank, .box = box, .channels = channels, .z_step = z_step,
                             .threads = count, .index = t, .status = VL_OK};
    vl_run_parallel(slab_work, jobs, sizeof jobs[0], count);
    for (int t = 0; t < count; t++)
        if (jobs[t].status != VL_OK)
            return vl_fail(jobs[t].status, "%s", jobs[t].error);
    return VL_OK;
}
