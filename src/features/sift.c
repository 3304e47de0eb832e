/* SIFT's public entry points: options, one image, every slice of a volume, descriptors at given keypoints,
 * the pyramid for inspection, and the dispatch between the CPU reference (sift_cpu.c) and the GPU half
 * (cuda/features/sift_gpu.cu) under the device policy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/parallel.h"
#include "features/sift_internal.h"

void vl_sift_options_default(vl_sift_options *options)
{
    memset(options, 0, sizeof *options);
    options->octave_layers = 3;
    options->contrast_threshold = 0.04;
    options->edge_threshold = 10;
    options->sigma = 1.6;
    options->value_range = 255;
    options->value_offset = 0;
}

vl_status vl_sift_options_validate(const vl_sift_options *options)
{
    if (options->octave_layers < 1 || options->octave_layers > VL_SIFT_MAX_LEVELS - 3)
        return vl_fail(VL_ERR_ARGUMENT, "sift: octave layers %d outside 1..%d", options->octave_layers,
                       VL_SIFT_MAX_LEVELS - 3);
    if (!(options->sigma >= 0.5 && options->sigma <= 10))
        return vl_fail(VL_ERR_ARGUMENT, "sift: sigma %g outside 0.5..10", options->sigma);
    if (!(options->contrast_threshold >= 0 && options->contrast_threshold < 1))
        return vl_fail(VL_ERR_ARGUMENT, "sift: contrast threshold %g outside 0..1", options->contrast_threshold);
    if (!(options->edge_threshold > 0 && options->edge_threshold < 1e6))
        return vl_fail(VL_ERR_ARGUMENT, "sift: edge threshold %g must be positive", options->edge_threshold);
    if (!(options->value_range > 0 && isfinite(options->value_range) && isfinite(options->value_offset)))
        return vl_fail(VL_ERR_ARGUMENT, "sift: value range %g must be positive", options->value_range);
    if (options->max_keypoints < 0 || options->threads < 0)
        return vl_fail(VL_ERR_ARGUMENT, "sift: negative keypoint limit or thread count");
    return VL_OK;
}

void vl_sift_features_free(vl_sift_features *features)
{
    free(features->keypoints);
    free(features->descriptors);
    free(features->slice_start);
    memset(features, 0, sizeof *features);
}

void vl_sift_descriptor_to_u8(const float *descriptor, uint8_t *out)
{
    for (int k = 0; k < VL_SIFT_DESCRIPTOR_SIZE; k++)
        out[k] = (uint8_t)descriptor[k];
}

vl_status vl_sift_append_slice(vl_sift_features *out, int64_t slice, const vl_sift_list *found, const float *descriptors)
{
    int64_t total = out->count + found->count;
    vl_sift_keypoint *keypoints = realloc(out->keypoints, (size_t)(total ? total : 1) * sizeof *keypoints);
    if (keypoints)
        out->keypoints = keypoints;
    float *grown = keypoints ? realloc(out->descriptors, (size_t)(total ? total : 1) * VL_SIFT_DESCRIPTOR_SIZE *
                                                             sizeof *grown)
                             : NULL;
    if (!grown)
        return vl_fail(VL_ERR_MEMORY, "sift: out of memory for %lld keypoints", (long long)total);
    out->descriptors = grown;
    for (int64_t i = 0; i < found->count; i++) {
        out->keypoints[out->count + i] = found->items[i].keypoint;
        out->keypoints[out->count + i].slice = (int32_t)slice;
    }
    if (found->count)
        memcpy(out->descriptors + out->count * VL_SIFT_DESCRIPTOR_SIZE, descriptors,
               (size_t)found->count * VL_SIFT_DESCRIPTOR_SIZE * sizeof(float));
    out->count = total;
    out->slice_start[slice + 1] = total;
    return VL_OK;
}

/* Empties `out` for `slices` slices; each half starts with it, so a GPU attempt that failed part way under
 * AUTO leaves nothing behind for the CPU's run. */
static vl_status reset_output(vl_sift_features *out, int64_t slices)
{
    vl_sift_features_free(out);
    out->slices = slices;
    out->slice_start = calloc((size_t)slices + 1, sizeof *out->slice_start);
    return out->slice_start ? VL_OK : vl_fail(VL_ERR_MEMORY, "sift: out of memory");
}

/* Keypoints and descriptors of the normalised image in workspace->normalised on the CPU. */
static vl_status sift_one_cpu(const vl_sift_plan *plan, const vl_sift_workspace *workspace, int max_keypoints,
                              int threads, vl_sift_list *found, float **descriptors)
{
    *descriptors = NULL;
    vl_sift_pyramid_cpu(plan, workspace->normalised, workspace->gauss, workspace->dog, workspace->doubled,
                        workspace->scratch, threads);
    vl_status status = vl_sift_detect_cpu(plan, workspace->gauss, workspace->dog, max_keypoints, threads, found);
    if (status == VL_OK) {
        *descriptors = malloc((size_t)(found->count ? found->count : 1) * VL_SIFT_DESCRIPTOR_SIZE * sizeof(float));
        if (!*descriptors)
            status = vl_fail(VL_ERR_MEMORY, "sift: out of memory for descriptors");
        else
            vl_sift_describe_cpu(plan, workspace->gauss, found->items, found->count, threads, *descriptors);
    }
    return status;
}

typedef struct sift_call {
    vl_sift_plan plan;
    const float *image;          /* one image, or NULL */
    const vl_volume *volume;     /* or a volume */
    const vl_sift_options *options;
    const vl_progress *progress;
    vl_sift_features *out;
    int gpu_index;
    uint64_t gpu_memory;
} sift_call;

typedef struct slice_job {
    const sift_call *call;
    vl_sift_workspace workspace;  /* the thread's own, kept from slice to slice */
    int64_t z;
    vl_sift_list found;
    float *descriptors;
    vl_status status;
} slice_job;

static void *run_slice_job(void *argument)
{
    slice_job *job = argument;
    const sift_call *call = job->call;
    vl_sift_normalise_slice(&call->plan, call->volume, job->z, job->workspace.normalised);
    job->status = sift_one_cpu(&call->plan, &job->workspace, call->options->max_keypoints, 1, &job->found,
                               &job->descriptors);
    return NULL;
}

static vl_status sift_cpu(void *context)
{
    sift_call *call = context;
    int64_t slices = call->volume ? call->volume->nz : 1;
    int threads = vl_cpu_thread_count(call->options->threads);
    vl_status status = reset_output(call->out, slices);
    if (status != VL_OK)
        return status;
    if (slices == 1) {
        /* One image: its rows and keypoints are split among the threads. */
        vl_sift_workspace workspace;
        status = vl_sift_workspace_create(&call->plan, &workspace);
        if (status != VL_OK)
            return status;
        if (call->volume)
            vl_sift_normalise_slice(&call->plan, call->volume, 0, workspace.normalised);
        else
            vl_sift_normalise_image(&call->plan, call->image, workspace.normalised);
        vl_sift_list found = {0};
        float *descriptors = NULL;
        status = sift_one_cpu(&call->plan, &workspace, call->options->max_keypoints, threads, &found, &descriptors);
        if (status == VL_OK)
            status = vl_sift_append_slice(call->out, 0, &found, descriptors);
        vl_sift_list_free(&found);
        free(descriptors);
        vl_sift_workspace_free(&workspace);
        return status;
    }
    /* A volume: one slice per thread, `threads` slices at a time, appended in slice order. */
    if (threads > slices)
        threads = (int)slices;
    slice_job jobs[VL_MAX_THREADS];
    memset(jobs, 0, sizeof jobs);
    for (int t = 0; t < threads && status == VL_OK; t++)
        status = vl_sift_workspace_create(&call->plan, &jobs[t].workspace);
    for (int64_t first = 0; first < slices && status == VL_OK; first += threads) {
        int batch = (int)(slices - first < threads ? slices - first : threads);
        for (int t = 0; t < batch; t++) {
            jobs[t].call = call;
            jobs[t].z = first + t;
            jobs[t].status = VL_OK;
        }
        vl_run_parallel(run_slice_job, jobs, sizeof jobs[0], batch);
        for (int t = 0; t < batch; t++) {
            if (status == VL_OK)
                status = jobs[t].status;
            if (status == VL_OK)
                status = vl_sift_append_slice(call->out, first + t, &jobs[t].found, jobs[t].descriptors);
            vl_sift_list_free(&jobs[t].found);
            free(jobs[t].descriptors);
            jobs[t].descriptors = NULL;
        }
        vl_progress_report(call->progress, "sift", (double)(first + batch) / (double)slices);
    }
    for (int t = 0; t < threads; t++)
        vl_sift_workspace_free(&jobs[t].workspace);
    return status;
}

static vl_status sift_gpu(void *context)
{
    sift_call *call = context;
    vl_status status = reset_output(call->out, call->volume ? call->volume->nz : 1);
    if (status != VL_OK)
        return status;
    return vl_sift_run_gpu(&call->plan, call->image, call->volume, call->options, call->progress, call->out,
                           call->gpu_index, call->gpu_memory);
}

static vl_status sift_run(sift_call *call, const vl_device *device, vl_device_outcome *outcome)
{
    call->gpu_index = device ? device->gpu_index : 0;
    call->gpu_memory = device ? device->gpu_memory : 0;
    vl_status status = vl_device_run(device, sift_gpu, sift_cpu, call, outcome);
    if (status != VL_OK)
        vl_sift_features_free(call->out);
    return status;
}

vl_status vl_sift_image(const float *image, int64_t width, int64_t height, const vl_sift_options *options,
                        const vl_device *device, vl_sift_features *out, vl_device_outcome *outcome)
{
    vl_sift_options defaults;
    if (!options) {
        vl_sift_options_default(&defaults);
        options = &defaults;
    }
    memset(out, 0, sizeof *out);
    sift_call call = {.image = image, .options = options, .out = out};
    vl_status status = vl_sift_plan_make(width, height, options, &call.plan);
    if (status != VL_OK)
        return status;
    for (int64_t i = 0; i < width * height; i++)
        if (!isfinite(image[i]))
            return vl_fail(VL_ERR_INPUT, "sift: sample %lld is not a finite number", (long long)i);
    return sift_run(&call, device, outcome);
}

vl_status vl_sift_volume(const vl_volume *volume, const vl_sift_options *options, const vl_device *device,
                         const vl_progress *progress, vl_sift_features *out, vl_device_outcome *outcome)
{
    vl_sift_options defaults;
    if (!options) {
        vl_sift_options_default(&defaults);
        options = &defaults;
    }
    memset(out, 0, sizeof *out);
    if (volume->nz < 1)
        return vl_fail(VL_ERR_INPUT, "sift: the volume has no slices");
    sift_call call = {.volume = volume, .options = options, .progress = progress, .out = out};
    vl_status status = vl_sift_plan_make(volume->nx, volume->ny, options, &call.plan);
    if (status != VL_OK)
        return status;
    if (volume->dtype == VL_F32) {
        const float *data = volume->data;
        for (int64_t i = 0; i < vl_volume_voxels(volume); i++)
            if (!isfinite(data[i]))
                return vl_fail(VL_ERR_INPUT, "sift: voxel %lld is not a finite number", (long long)i);
    }
    return sift_run(&call, device, outcome);
}

vl_status vl_sift_describe(const float *image, int64_t width, int64_t height, const vl_sift_options *options,
                           const vl_sift_keypoint *keypoints, int64_t count, float *descriptors)
{
    vl_sift_plan plan;
    vl_status status = vl_sift_plan_make(width, height, options, &plan);
    if (status != VL_OK)
        return status;
    vl_sift_found *found = malloc((size_t)(count ? count : 1) * sizeof *found);
    vl_sift_workspace workspace = {0};
    status = found ? vl_sift_workspace_create(&plan, &workspace) : vl_fail(VL_ERR_MEMORY, "sift: out of memory");
    for (int64_t i = 0; status == VL_OK && i < count; i++) {
        int octave = keypoints[i].octave & 255, layer = (keypoints[i].octave >> 8) & 255;
        octave = octave < 128 ? octave : octave - 256;
        if (octave + 1 < 0 || octave + 1 >= plan.octaves || layer > plan.gauss_levels - 1)
            status = vl_fail(VL_ERR_ARGUMENT, "sift: keypoint %lld has octave %d layer %d outside the pyramid",
                             (long long)i, octave, layer);
        found[i] = (vl_sift_found){keypoints[i], octave + 1, layer};
    }
    if (status == VL_OK) {
        int threads = vl_cpu_thread_count(options->threads);
        vl_sift_normalise_image(&plan, image, workspace.normalised);
        vl_sift_pyramid_cpu(&plan, workspace.normalised, workspace.gauss, workspace.dog, workspace.doubled,
                            workspace.scratch, threads);
        vl_sift_describe_cpu(&plan, workspace.gauss, found, count, threads, descriptors);
    }
    free(found);
    vl_sift_workspace_free(&workspace);
    return status;
}

void vl_sift_pyramid_free(vl_sift_pyramid *pyramid)
{
    free(pyramid->level_width);
    free(pyramid->level_height);
    free(pyramid->gauss_offset);
    free(pyramid->dog_offset);
    free(pyramid->gauss);
    free(pyramid->dog);
    memset(pyramid, 0, sizeof *pyramid);
}

typedef struct pyramid_call {
    const vl_sift_plan *plan;
    const float *normalised;
    vl_sift_pyramid *pyramid;
    int threads, gpu_index;
} pyramid_call;

static vl_status pyramid_cpu(void *context)
{
    pyramid_call *c = context;
    size_t doubled = (size_t)(c->plan->w[0] * c->plan->h[0]);
    float *enlarged = malloc(doubled * sizeof(float)), *scratch = malloc(doubled * sizeof(float));
    int ok = enlarged && scratch;
    if (ok)
        vl_sift_pyramid_cpu(c->plan, c->normalised, c->pyramid->gauss, c->pyramid->dog, enlarged, scratch, c->threads);
    free(enlarged);
    free(scratch);
    return ok ? VL_OK : vl_fail(VL_ERR_MEMORY, "sift: out of memory for the pyramid");
}

static vl_status pyramid_gpu(void *context)
{
    pyramid_call *c = context;
    return vl_sift_pyramid_gpu(c->plan, c->normalised, c->pyramid->gauss, c->pyramid->dog, c->gpu_index);
}

vl_status vl_sift_pyramid_build(const float *image, int64_t width, int64_t height, const vl_sift_options *options,
                                const vl_device *device, vl_sift_pyramid *pyramid)
{
    memset(pyramid, 0, sizeof *pyramid);
    vl_sift_plan plan;
    vl_status status = vl_sift_plan_make(width, height, options, &plan);
    if (status != VL_OK)
        return status;
    int levels = plan.octaves * plan.gauss_levels;
    pyramid->octaves = plan.octaves;
    pyramid->gauss_levels = plan.gauss_levels;
    pyramid->dog_levels = plan.dog_levels;
    pyramid->level_width = calloc((size_t)levels, sizeof(int64_t));
    pyramid->level_height = calloc((size_t)levels, sizeof(int64_t));
    pyramid->gauss_offset = calloc((size_t)levels, sizeof(int64_t));
    pyramid->dog_offset = calloc((size_t)levels, sizeof(int64_t));
    pyramid->gauss = malloc((size_t)plan.gauss_floats * sizeof(float));
    pyramid->dog = malloc((size_t)plan.dog_floats * sizeof(float));
    float *normalised = malloc((size_t)(width * height) * sizeof *normalised);
    if (!pyramid->level_width || !pyramid->level_height || !pyramid->gauss_offset || !pyramid->dog_offset ||
        !pyramid->gauss || !pyramid->dog || !normalised) {
        free(normalised);
        vl_sift_pyramid_free(pyramid);
        return vl_fail(VL_ERR_MEMORY, "sift: out of memory for the pyramid");
    }
    for (int o = 0; o < plan.octaves; o++)
        for (int i = 0; i < plan.gauss_levels; i++) {
            int level = o * plan.gauss_levels + i;
            int64_t n = plan.w[o] * plan.h[o];
            pyramid->level_width[level] = plan.w[o];
            pyramid->level_height[level] = plan.h[o];
            pyramid->gauss_offset[level] = plan.gauss_offset[o] + i * n;
            pyramid->dog_offset[level] = i < plan.dog_levels ? plan.dog_offset[o] + i * n : -1;
        }
    vl_sift_normalise_image(&plan, image, normalised);
    pyramid_call call = {&plan, normalised, pyramid, vl_cpu_thread_count(options->threads),
                         device ? device->gpu_index : 0};
    status = vl_device_run(device, pyramid_gpu, pyramid_cpu, &call, NULL);
    free(normalised);
    if (status != VL_OK)
        vl_sift_pyramid_free(pyramid);
    return status;
}
