/* The CPU reference of the filter bank (include/voxlabel/filters.h): separable passes in float64 over a box
 * and the halo each sigma needs, cut out of the image with scipy's 'reflect' border.
 *
 * Invariant that makes tiles exact: every pass computes each output voxel from the same input values in the
 * same order, whatever box it belongs to, and each pass reflects its own input at the volume's border (as
 * scipy's axis-after-axis filters do), so a voxel's channels never depend on the box it was computed in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "filters/eigen_symmetric.h"
#include "filters/filters_internal.h"
#include "filters/gaussian_kernel.h"

typedef struct field {
    vl_box box; /* inside the volume */
    double *v;  /* x fastest over the box */
} field;

typedef struct kernel {
    int radius;
    double *w;
} kernel;

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
    f->v = malloc((size_t)box_voxels(box) * sizeof(double) + 1);
    return f->v != NULL;
}

static void field_free(field *f)
{
    free(f->v);
    f->v = NULL;
}

static int kernel_make(kernel *k, double sigma_voxels, int order, double truncate)
{
    k->radius = vl_gaussian_radius(sigma_voxels, truncate);
    k->w = malloc(sizeof(double) * (size_t)(2 * k->radius + 1));
    if (!k->w)
        return 0;
    vl_gaussian_kernel(sigma_voxels, order, k->radius, k->w);
    return 1;
}

/* out = in filtered along `axis` by k, on out->box (already set and allocated). in->box holds out->box on the
 * other axes and every reflected position the kernel reaches along `axis`. */
static int pass(const field *in, field *out, int axis, const kernel *k, int64_t n_axis)
{
    const int64_t lo = out->box.lo[axis], len = box_size(&out->box, axis), r = k->radius;
    double *line = malloc(sizeof(double) * (size_t)(len + 2 * r));
    double *sum = malloc(sizeof(double) * (size_t)len);
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
            const double *in_line = in->v + (a - in->box.lo[u]) * in_stride[u] + (b - in->box.lo[w]) * in_stride[w];
            double *out_line =
                out->v + (a - out->box.lo[u]) * out_stride[u] + (b - out->box.lo[w]) * out_stride[w];
            for (int64_t j = 0; j < len + 2 * r; j++)
                line[j] = in_line[source[j]];
            /* out[i] = sum_x w[r + x] in[i - x] = sum_x w[r + x] line[i + r - x], each sum taken over x in
             * increasing order (the order the GPU uses); the loop over i inside vectorises */
            for (int64_t i = 0; i < len; i++)
                sum[i] = 0;
            for (int64_t x = -r; x <= r; x++) {
                const double weight = k->w[r + x];
                const double *shifted = line + r - x;
                for (int64_t i = 0; i < len; i++)
                    sum[i] += weight * shifted[i];
            }
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
    const field *image;
} context;

/* The x pass towards `out_box` with kx: on (out x, grown y, grown z) for the y and z passes that follow. */
static int x_pass(const context *cx, const field *in, const vl_box *out_box, const kernel *kx, const int64_t r[3],
                  field *out)
{
    const int64_t grow_yz[3] = {0, r[1], r[2]};
    const vl_box b = grow(out_box, grow_yz, cx->n);
    return field_alloc(out, &b) && pass(in, out, 0, kx, cx->n[0]);
}

/* The y and (3D) z passes from an x-pass result to `out_box`. */
static int yz_pass(const context *cx, const field *xf, const vl_box *out_box, const kernel *ky, const kernel *kz,
                   field *out)
{
    if (cx->bank->dims == 2)
        return field_alloc(out, out_box) && pass(xf, out, 1, ky, cx->n[1]);
    const int64_t grow_z[3] = {0, 0, kz->radius};
    field yf;
    const vl_box b = grow(out_box, grow_z, cx->n);
    if (!field_alloc(&yf, &b) || !pass(xf, &yf, 1, ky, cx->n[1])) {
        field_free(&yf);
        return 0;
    }
    const int ok = field_alloc(out, out_box) && pass(&yf, out, 2, kz, cx->n[2]);
    field_free(&yf);
    return ok;
}

/* Kernels of orders 0, 1, 2 on each axis at one sigma. */
typedef struct kernel_set {
    kernel k[3][3]; /* [axis][order] */
    int64_t radius[3];
} kernel_set;

static void kernel_set_free(kernel_set *ks)
{
    for (int a = 0; a < 3; a++)
        for (int o = 0; o < 3; o++)
            free(ks->k[a][o].w);
    memset(ks, 0, sizeof *ks);
}

static int kernel_set_make(kernel_set *ks, const context *cx, double sigma_mm)
{
    memset(ks, 0, sizeof *ks);
    for (int a = 0; a < 3; a++)
        for (int o = 0; o < 3; o++) {
            /* 2D banks: z is never filtered; a 1-tap identity keeps the code uniform */
            const double sigma_voxels = a < cx->bank->dims ? sigma_mm / cx->spacing[a] : 0;
            if (sigma_voxels == 0) {
                ks->k[a][o].radius = 0;
                if (!(ks->k[a][o].w = malloc(sizeof(double))))
                    return 0;
                ks->k[a][o].w[0] = o == 0 ? 1 : 0;
            } else if (!kernel_make(&ks->k[a][o], sigma_voxels, o, cx->bank->truncate)) {
                return 0;
            }
            ks->radius[a] = ks->k[a][0].radius;
        }
    return 1;
}

/* Derivative (ox, oy, oz) of G(sigma) * in on out_box, per voxel (not yet per mm). The x passes of each x order
 * are cached in xcache[order] (computed on first use, over the out_box's y/z halo). */
static int derivative(const context *cx, const field *in, const vl_box *out_box, kernel_set *ks, field xcache[3],
                      int ox, int oy, int oz, field *out)
{
    if (!xcache[ox].v && !x_pass(cx, in, out_box, &ks->k[0][ox], ks->radius, &xcache[ox]))
        return 0;
    return yz_pass(cx, &xcache[ox], out_box, &ks->k[1][oy], &ks->k[2][oz], out);
}

static void store(float *channels, int64_t voxels, int channel, const double *values)
{
    float *dst = channels + (int64_t)channel * voxels;
    for (int64_t i = 0; i < voxels; i++)
        dst[i] = (float)values[i];
}

/* The channels of sigma `s` on `box`; *channel advances past them. */
static int sigma_channels(const context *cx, int s, const vl_box *box, float *channels, int *channel)
{
    const vl_filter_bank *bank = cx->bank;
    const unsigned families = bank->families[s];
    const double sigma = bank->sigmas[s];
    const int dims = bank->dims;
    const int64_t voxels = box_voxels(box);
    const double *sp = cx->spacing;
    kernel_set ks, inner;
    memset(&inner, 0, sizeof inner);
    field xc[3];
    memset(xc, 0, sizeof xc);
    field d[10];
    memset(d, 0, sizeof d);
    double *work = malloc(sizeof(double) * (size_t)voxels * 3 + 1);
    int ok = work && kernel_set_make(&ks, cx, sigma);
    /* derivatives: 0 smooth, 1..3 first (x, y, z), 4..6 second (xx, yy, zz), 7..9 mixed (xy, xz, yz) */
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
    for (int i = 0; ok && i < 10; i++)
        if (need[i])
            ok = derivative(cx, cx->image, box, &ks, xc, orders[i][0], orders[i][1], orders[i][2], &d[i]);
    for (int o = 0; o < 3; o++)
        field_free(&xc[o]);

    if (ok && (families & VL_FAMILY_SMOOTHING))
        store(channels, voxels, (*channel)++, d[0].v);
    if (ok && (families & VL_FAMILY_LOG)) {
        for (int64_t i = 0; i < voxels; i++) {
            double sum = 0;
            for (int a = 0; a < dims; a++)
                sum += d[4 + a].v[i] / (sp[a] * sp[a]);
            work[i] = sum;
        }
        store(channels, voxels, (*channel)++, work);
    }
    if (ok && (families & VL_FAMILY_GRADIENT)) {
        for (int64_t i = 0; i < voxels; i++) {
            double sum = 0;
            for (int a = 0; a < dims; a++) {
                const double g = d[1 + a].v[i] / sp[a];
                sum += g * g;
            }
            work[i] = sqrt(sum);
        }
        store(channels, voxels, (*channel)++, work);
    }
    if (ok && (families & VL_FAMILY_DOG)) {
        kernel_set dog;
        field dog_x[3], smooth;
        memset(dog_x, 0, sizeof dog_x);
        memset(&smooth, 0, sizeof smooth);
        ok = kernel_set_make(&dog, cx, sigma * bank->dog_ratio) &&
             derivative(cx, cx->image, box, &dog, dog_x, 0, 0, 0, &smooth);
        if (ok) {
            for (int64_t i = 0; i < voxels; i++)
                work[i] = d[0].v[i] - smooth.v[i];
            store(channels, voxels, (*channel)++, work);
        }
        field_free(&dog_x[0]);
        field_free(&smooth);
        kernel_set_free(&dog);
    }
    if (ok && (families & VL_FAMILY_STRUCTURE)) {
        /* gradient at the inner sigma over the box grown by the outer radius, products, outer smoothing of
         * each product with its own reflect border (as scipy filters the product array) */
        const vl_box grown = grow(box, ks.radius, cx->n);
        const int64_t grown_voxels = box_voxels(&grown);
        field g[3], xi[3];
        memset(g, 0, sizeof g);
        memset(xi, 0, sizeof xi);
        ok = kernel_set_make(&inner, cx, sigma * bank->st_inner_ratio);
        for (int a = 0; ok && a < dims; a++)
            ok = derivative(cx, cx->image, &grown, &inner, xi, a == 0, a == 1, a == 2, &g[a]);
        for (int o = 0; o < 3; o++)
            field_free(&xi[o]);
        double *tensor[6] = {NULL};
        static const int pair[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
        int products = 0;
        for (int p = 0; ok && p < 6; p++) {
            const int a = pair[p][0], b = pair[p][1];
            if (a >= dims || b >= dims)
                continue;
            field product, smooth, px[3];
            memset(px, 0, sizeof px);
            memset(&smooth, 0, sizeof smooth);
            ok = field_alloc(&product, &grown);
            if (ok) {
                const double scale = 1 / (sp[a] * sp[b]);
                for (int64_t i = 0; i < grown_voxels; i++)
                    product.v[i] = g[a].v[i] * g[b].v[i] * scale;
                ok = derivative(cx, &product, box, &ks, px, 0, 0, 0, &smooth);
            }
            field_free(&product);
            field_free(&px[0]);
            tensor[p] = smooth.v;
            products++;
        }
        for (int a = 0; a < 3; a++)
            field_free(&g[a]);
        if (ok) {
            for (int64_t i = 0; i < voxels; i++) {
                double e[3];
                if (dims == 2)
                    vl_eigen2(tensor[0][i], tensor[1][i], tensor[3][i], e);
                else
                    vl_eigen3(tensor[0][i], tensor[1][i], tensor[2][i], tensor[3][i], tensor[4][i], tensor[5][i], e);
                for (int c = 0; c < dims; c++)
                    work[c * voxels + i] = e[c];
            }
            for (int c = 0; c < dims; c++)
                store(channels, voxels, (*channel)++, work + c * voxels);
        }
        (void)products;
        for (int p = 0; p < 6; p++)
            free(tensor[p]);
    }
    if (ok && (families & VL_FAMILY_HESSIAN)) {
        for (int64_t i = 0; i < voxels; i++) {
            double e[3];
            const double xx = d[4].v[i] / (sp[0] * sp[0]), yy = d[5].v[i] / (sp[1] * sp[1]),
                         xy = d[7].v[i] / (sp[0] * sp[1]);
            if (dims == 2)
                vl_eigen2(xx, xy, yy, e);
            else
                vl_eigen3(xx, xy, d[8].v[i] / (sp[0] * sp[2]), yy, d[9].v[i] / (sp[1] * sp[2]),
                          d[6].v[i] / (sp[2] * sp[2]), e);
            for (int c = 0; c < dims; c++)
                work[c * voxels + i] = e[c];
        }
        for (int c = 0; c < dims; c++)
            store(channels, voxels, (*channel)++, work + c * voxels);
    }
    for (int i = 0; i < 10; i++)
        field_free(&d[i]);
    kernel_set_free(&ks);
    kernel_set_free(&inner);
    free(work);
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
                    dst[i++] = (float)vl_offset_feature(image, o, x, y, z);
    }
}

/* Every channel on one box, single-threaded. */
static vl_status compute_box(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box, float *channels)
{
    context cx = {.bank = bank, .n = {image->nx, image->ny, image->nz}};
    for (int a = 0; a < 3; a++)
        cx.spacing[a] = image->geometry.spacing[a];
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
                img.v[i++] = vl_volume_value(image, x + image->nx * (y + image->ny * z));
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
