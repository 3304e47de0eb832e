/* The forest stage's entry points: scribbles to samples, training and prediction through the device policy. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/parallel.h"
#include "filters/filters_internal.h"
#include "forest/forest_internal.h"
#include "forest/forest_predict.h"

/* ---- samples from scribbles ---- */

static vl_status check_geometry(const vl_volume *image, const vl_volume *scribbles)
{
    if (image->nx != scribbles->nx || image->ny != scribbles->ny || image->nz != scribbles->nz)
        return vl_fail(VL_ERR_INPUT, "scribbles: %lldx%lldx%lld voxels, but the image has %lldx%lldx%lld",
                       (long long)scribbles->nx, (long long)scribbles->ny, (long long)scribbles->nz,
                       (long long)image->nx, (long long)image->ny, (long long)image->nz);
    for (int a = 0; a < 3; a++) {
        if (fabs(image->geometry.spacing[a] - scribbles->geometry.spacing[a]) > 1e-3)
            return vl_fail(VL_ERR_INPUT, "scribbles: spacing %g mm on axis %c, but the image's is %g mm",
                           scribbles->geometry.spacing[a], "xyz"[a], image->geometry.spacing[a]);
        if (fabs(image->geometry.origin[a] - scribbles->geometry.origin[a]) > 1e-3)
            return vl_fail(VL_ERR_INPUT, "scribbles: origin %g mm on axis %c, but the image's is %g mm (drawn on "
                                         "another series?)",
                           scribbles->geometry.origin[a], "xyz"[a], image->geometry.origin[a]);
    }
    return VL_OK;
}

typedef struct sample_job {
    const vl_volume *image, *scribbles;
    const vl_filter_bank *bank;
    const int64_t *voxels; /* sample voxel indices, ascending */
    int64_t samples;
    int64_t tile[3], tiles[3];
    int feature_count, threads, index;
    float *features;
    atomic_int_least64_t *next_tile;
    const vl_progress *progress;
    vl_status status;
    char error[256];
} sample_job;

/* The first of the ascending sample voxels[0..samples) that is not below `key` (samples when none). */
static int64_t first_sample_from(const int64_t *voxels, int64_t samples, int64_t key)
{
    int64_t lo = 0, hi = samples;
    while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (voxels[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void *sample_work(void *arg)
{
    sample_job *job = arg;
    const vl_volume *image = job->image;
    const int64_t nx = image->nx, ny = image->ny;
    const int64_t tile_total = job->tiles[0] * job->tiles[1] * job->tiles[2];
    float *channels = NULL;
    size_t channels_capacity = 0;
    for (;;) {
        const int64_t t = atomic_fetch_add(job->next_tile, 1);
        if (t >= tile_total || job->status != VL_OK)
            break;
        if (job->index == 0)
            vl_progress_report(job->progress, "features at scribbles", (double)t / (double)tile_total);
        vl_box tile;
        int64_t rest = t;
        for (int a = 0; a < 3; a++) {
            const int64_t n = a == 0 ? nx : a == 1 ? ny : image->nz;
            const int64_t k = rest % job->tiles[a];
            rest /= job->tiles[a];
            tile.lo[a] = k * job->tile[a];
            tile.hi[a] = tile.lo[a] + job->tile[a] < n ? tile.lo[a] + job->tile[a] : n;
        }
        /* bounding box of this tile's samples */
        vl_box box = {{INT64_MAX, INT64_MAX, INT64_MAX}, {-1, -1, -1}};
        int64_t found = 0;
        for (int64_t z = tile.lo[2]; z < tile.hi[2]; z++)
            for (int64_t y = tile.lo[1]; y < tile.hi[1]; y++) {
                const int64_t row = nx * (y + ny * z);
                /* the samples of this row segment */
                for (int64_t s = first_sample_from(job->voxels, job->samples, row + tile.lo[0]); s < job->samples && job->voxels[s] < row + tile.hi[0]; s++) {
                    const int64_t x = job->voxels[s] - row;
                    const int64_t p[3] = {x, y, z};
                    for (int a = 0; a < 3; a++) {
                        if (p[a] < box.lo[a])
                            box.lo[a] = p[a];
                        if (p[a] + 1 > box.hi[a])
                            box.hi[a] = p[a] + 1;
                    }
                    found++;
                }
            }
        if (!found)
            continue;
        const int64_t bx = box.hi[0] - box.lo[0], by = box.hi[1] - box.lo[1], bz = box.hi[2] - box.lo[2];
        const size_t need = (size_t)(bx * by * bz) * (size_t)job->feature_count;
        if (need > channels_capacity) {
            free(channels);
            if (!(channels = malloc(sizeof(float) * need))) {
                job->status = vl_fail(VL_ERR_MEMORY, "scribbles: out of memory for the features of a tile");
                break;
            }
            channels_capacity = need;
        }
        if ((job->status = vl_filters_compute_box_cpu(image, job->bank, &box, channels)) != VL_OK)
            break;
        const int64_t box_voxels = bx * by * bz;
        for (int64_t z = box.lo[2]; z < box.hi[2]; z++)
            for (int64_t y = box.lo[1]; y < box.hi[1]; y++) {
                const int64_t row = nx * (y + ny * z);
                for (int64_t s = first_sample_from(job->voxels, job->samples, row + box.lo[0]); s < job->samples && job->voxels[s] < row + box.hi[0]; s++) {
                    const int64_t local = (job->voxels[s] - row - box.lo[0]) + bx * ((y - box.lo[1]) + by * (z - box.lo[2]));
                    for (int f = 0; f < job->feature_count; f++)
                        job->features[s * job->feature_count + f] = channels[(int64_t)f * box_voxels + local];
                }
            }
    }
    if (job->status != VL_OK)
        snprintf(job->error, sizeof job->error, "%s", vl_last_error());
    free(channels);
    return NULL;
}

void vl_forest_tiling(const vl_volume *image, const vl_filter_bank *bank, int tile, int64_t edge[3],
                      int64_t count[3])
{
    const int64_t n[3] = {image->nx, image->ny, image->nz};
    for (int a = 0; a < 3; a++) {
        edge[a] = a == 2 && bank->dims == 2 ? 1 : tile;
        if (edge[a] > n[a])
            edge[a] = n[a];
        count[a] = (n[a] + edge[a] - 1) / edge[a];
    }
}

vl_status vl_forest_collect_samples(const vl_volume *image, const vl_volume *scribbles, const vl_filter_bank *bank,
                                    const vl_forest_options *options, float **features, uint8_t **classes,
                                    int64_t *samples, int *class_count)
{
    *features = NULL;
    *classes = NULL;
    *samples = 0;
    *class_count = 0;
    vl_status status = check_geometry(image, scribbles);
    if (status != VL_OK || (status = vl_filter_bank_check(bank)) != VL_OK)
        return status;
    if (options->tile < 8 || options->tile > 4096)
        return vl_fail(VL_ERR_ARGUMENT, "forest: tile %d voxels (give 8..4096)", options->tile);
    const int64_t voxels = vl_volume_voxels(scribbles);
    int64_t per_class[VL_FOREST_MAX_CLASSES + 1] = {0};
    int max_class = 0;
    for (int64_t i = 0; i < voxels; i++) {
        const double v = vl_volume_value(scribbles, i);
        if (v == 0)
            continue;
        if (v < 0 || v > VL_FOREST_MAX_CLASSES || v != floor(v))
            return vl_fail(VL_ERR_INPUT, "scribbles: value %g at voxel %lld is not a class 0..%d (0 = unlabelled)",
                           v, (long long)i, VL_FOREST_MAX_CLASSES);
        per_class[(int)v]++;
        if ((int)v > max_class)
            max_class = (int)v;
    }
    if (max_class < 2)
        return vl_fail(VL_ERR_INPUT, "scribbles: %s; scribble at least two classes (1, 2, ...; 0 = unlabelled)",
                       max_class ? "only class 1 is scribbled" : "no voxel is scribbled");
    for (int c = 1; c <= max_class; c++)
        if (!per_class[c])
            return vl_fail(VL_ERR_INPUT, "scribbles: class %d has no scribbles (classes are 1..%d; renumber them "
                                         "without gaps)",
                           c, max_class);
    int64_t total = 0;
    for (int c = 1; c <= max_class; c++)
        total += per_class[c];
    const int64_t limit = options->max_samples > 0 ? options->max_samples : total;
    int64_t *list = malloc(sizeof(int64_t) * (size_t)total);
    if (!list)
        return vl_fail(VL_ERR_MEMORY, "scribbles: out of memory for %lld samples", (long long)total);
    int64_t kept = 0;
    for (int64_t i = 0; i < voxels; i++) {
        if (vl_volume_value(scribbles, i) == 0)
            continue;
        /* thinning beyond the limit: a hash of the voxel decides, so the kept set does not depend on order */
        if (total > limit &&
            vl_forest_mix(options->seed ^ vl_forest_mix((uint64_t)i)) % (uint64_t)total >= (uint64_t)limit)
            continue;
        list[kept++] = i;
    }
    const int F = vl_filter_bank_channels(bank);
    float *x = malloc(sizeof(float) * (size_t)kept * (size_t)F + 1);
    uint8_t *y = malloc((size_t)kept + 1);
    if (!x || !y) {
        free(list);
        free(x);
        free(y);
        return vl_fail(VL_ERR_MEMORY, "scribbles: out of memory for %lld x %d features", (long long)kept, F);
    }
    for (int64_t s = 0; s < kept; s++)
        y[s] = (uint8_t)vl_volume_value(scribbles, list[s]);
    atomic_int_least64_t next_tile = 0;
    sample_job jobs[VL_MAX_THREADS];
    const int count = vl_cpu_thread_count(options->threads);
    for (int t = 0; t < count; t++) {
        jobs[t] = (sample_job){.image = image, .scribbles = scribbles, .bank = bank, .voxels = list, .samples = kept,
                               .feature_count = F, .threads = count, .index = t, .features = x,
                               .next_tile = &next_tile, .progress = &options->progress, .status = VL_OK};
        vl_forest_tiling(image, bank, options->tile, jobs[t].tile, jobs[t].tiles);
    }
    vl_progress_report(&options->progress, "features at scribbles", 0.0);
    vl_run_parallel(sample_work, jobs, sizeof jobs[0], count);
    vl_progress_report(&options->progress, "features at scribbles", 1.0);
    free(list);
    for (int t = 0; t < count; t++)
        if (jobs[t].status != VL_OK) {
            free(x);
            free(y);
            return vl_fail(jobs[t].status, "%s", jobs[t].error);
        }
    *features = x;
    *classes = y;
    *samples = kept;
    *class_count = max_class;
    return VL_OK;
}

/* ---- training ---- */

typedef struct train_context {
    const vl_forest_binned *binned;
    const vl_forest_plan *plan;
    const vl_forest_options *options;
    vl_tree *trees;
} train_context;

static void trees_reset(vl_tree *trees, int count)
{
    for (int t = 0; t < count; t++)
        vl_tree_free(&trees[t]);
}

static vl_status train_cpu_half(void *arg)
{
    train_context *cx = arg;
    trees_reset(cx->trees, cx->plan->trees);
    return vl_forest_train_cpu(cx->binned, cx->plan, cx->options->threads, &cx->options->progress, cx->trees);
}

static vl_status train_gpu_half(void *arg)
{
    train_context *cx = arg;
    trees_reset(cx->trees, cx->plan->trees);
    return vl_forest_train_gpu(cx->binned, cx->plan, cx->options->device.gpu_index,
                               cx->options->gpu_chunk_samples, &cx->options->progress, cx->trees);
}

vl_status vl_forest_train_samples(const float *features, const uint8_t *classes, int64_t samples,
                                  int feature_count, int class_count, const vl_filter_bank *bank,
                                  const vl_forest_options *options, vl_forest *forest, vl_device_outcome *outcome)
{
    memset(forest, 0, sizeof *forest);
    if (samples < 2 || samples > ((int64_t)1 << 24))
        return vl_fail(VL_ERR_ARGUMENT, "forest: %lld samples (give 2 .. 16777216)", (long long)samples);
    if (class_count < 2 || class_count > VL_FOREST_MAX_CLASSES)
        return vl_fail(VL_ERR_ARGUMENT, "forest: %d classes (give 2..%d)", class_count, VL_FOREST_MAX_CLASSES);
    if (feature_count != vl_filter_bank_channels(bank))
        return vl_fail(VL_ERR_ARGUMENT, "forest: %d features given, the filter bank makes %d", feature_count,
                       vl_filter_bank_channels(bank));
    for (int64_t i = 0; i < samples; i++)
        if (classes[i] < 1 || classes[i] > class_count)
            return vl_fail(VL_ERR_ARGUMENT, "forest: sample %lld has class %d outside 1..%d", (long long)i,
                           classes[i], class_count);
    vl_forest_plan plan;
    vl_status status = vl_forest_plan_make(options, feature_count, &plan);
    if (status != VL_OK)
        return status;
    vl_forest_binned binned;
    if ((status = vl_forest_bin(features, classes, samples, feature_count, class_count, options->bins,
                                options->threads, &binned)) != VL_OK)
        return status;
    vl_tree *trees = calloc((size_t)plan.trees, sizeof(vl_tree));
    if (!trees) {
        vl_forest_binned_free(&binned);
        return vl_fail(VL_ERR_MEMORY, "forest: out of memory");
    }
    train_context cx = {&binned, &plan, options, trees};
    status = vl_device_run(&options->device, train_gpu_half, train_cpu_half, &cx, outcome);
    if (status == VL_OK)
        status = vl_forest_assemble(forest, trees, &binned, &plan, bank, options->threads);
    trees_reset(trees, plan.trees);
    free(trees);
    vl_forest_binned_free(&binned);
    return status;
}

vl_status vl_forest_train(const vl_volume *image, const vl_volume *scribbles, const vl_filter_bank *bank,
                          const vl_forest_options *options, vl_forest *forest, vl_device_outcome *outcome)
{
    float *features;
    uint8_t *classes;
    int64_t samples;
    int class_count;
    memset(forest, 0, sizeof *forest);
    vl_status status =
        vl_forest_collect_samples(image, scribbles, bank, options, &features, &classes, &samples, &class_count);
    if (status != VL_OK)
        return status;
    status = vl_forest_train_samples(features, classes, samples, vl_filter_bank_channels(bank), class_count, bank,
                                     options, forest, outcome);
    free(features);
    free(classes);
    if (status == VL_OK)
        for (int a = 0; a < 3; a++)
            forest->training_spacing[a] = image->geometry.spacing[a];
    return status;
}

/* ---- prediction ---- */

static vl_status predict_cpu_half(void *arg) { return vl_forest_predict_cpu((vl_forest_prediction *)arg); }
static vl_status predict_gpu_half(void *arg) { return vl_forest_predict_gpu((vl_forest_prediction *)arg); }

vl_status vl_forest_predict(const vl_forest *forest, const vl_volume *image, const vl_forest_options *options,
                            vl_volume *probabilities, vl_volume *class_map, vl_device_outcome *outcome)
{
    vl_status status = vl_filter_bank_check(&forest->bank);
    if (status != VL_OK)
        return status;
    if (forest->feature_count != vl_filter_bank_channels(&forest->bank))
        return vl_fail(VL_ERR_INPUT, "model: trained on %d features, its filter bank makes %d",
                       forest->feature_count, vl_filter_bank_channels(&forest->bank));
    if (options->tile < 8 || options->tile > 4096)
        return vl_fail(VL_ERR_ARGUMENT, "forest: tile %d voxels (give 8..4096)", options->tile);
    for (int a = 0; a < forest->bank.dims; a++)
        if (!(image->geometry.spacing[a] > 0))
            return vl_fail(VL_ERR_INPUT, "image: voxel spacing %g mm on axis %c is not positive",
                           image->geometry.spacing[a], "xyz"[a]);
    const int C = forest->class_count;
    vl_forest_prediction p = {.forest = forest, .image = image, .options = options};
    if (probabilities) {
        for (int c = 0; c < C; c++) {
            if ((status = vl_volume_create_uninitialised(&probabilities[c], image->nx, image->ny, image->nz,
                                                         VL_F32)) != VL_OK) {
                for (int k = 0; k < c; k++)
                    vl_volume_free(&probabilities[k]);
                return status;
            }
            probabilities[c].geometry = image->geometry;
        }
        if (!(p.probabilities = malloc(sizeof(float *) * (size_t)C))) {
            for (int k = 0; k < C; k++)
                vl_volume_free(&probabilities[k]);
            return vl_fail(VL_ERR_MEMORY, "forest: out of memory");
        }
        for (int c = 0; c < C; c++)
            p.probabilities[c] = probabilities[c].data;
    }
    if (class_map) {
        if ((status = vl_volume_create_uninitialised(class_map, image->nx, image->ny, image->nz, VL_U8)) != VL_OK)
            goto failed;
        class_map->geometry = image->geometry;
        p.class_map = class_map->data;
    }
    status = vl_device_run(&options->device, predict_gpu_half, predict_cpu_half, &p, outcome);
    if (status != VL_OK)
        goto failed;
    free(p.probabilities);
    return VL_OK;
failed:
    free(p.probabilities);
    if (probabilities)
        for (int c = 0; c < C; c++)
            vl_volume_free(&probabilities[c]);
    if (class_map)
        vl_volume_free(class_map);
    return status;
}
