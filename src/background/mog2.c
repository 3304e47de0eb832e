/* vl_background_mog2: parameters, frame conversion, and the dispatch between the CPU reference (mog2_cpu.c)
 * and the GPU half (cuda/background/mog2_gpu.cu) under the device policy. */
#include <math.h>
#include <string.h>

#include "background/mog2_internal.h"
#include "core/device.h"
#include "voxlabel/error.h"

void vl_mog2_params_default(vl_mog2_params *params)
{
    params->history = 500;
    params->var_threshold = 16.f;
    params->nmixtures = 5;
    params->background_ratio = 0.9f;
    params->var_threshold_gen = 9.f;
    params->var_init = 15.f;
    params->var_min = 4.f;
    params->var_max = 75.f;
    params->complexity_reduction = 0.05f;
    params->learning_rate = -1.0;
}

vl_status vl_mog2_params_validate(const vl_mog2_params *p)
{
    if (p->history < 1)
        return vl_fail(VL_ERR_ARGUMENT, "--history: %d is not a positive frame count", p->history);
    if (p->nmixtures < 1 || p->nmixtures > VL_MOG2_MAX_MIXTURES)
        return vl_fail(VL_ERR_ARGUMENT, "--mixtures: %d is outside 1..%d", p->nmixtures, VL_MOG2_MAX_MIXTURES);
    if (!(p->var_threshold > 0.f) || !(p->var_threshold_gen > 0.f))
        return vl_fail(VL_ERR_ARGUMENT, "--var-threshold: must be positive");
    if (!(p->background_ratio > 0.f && p->background_ratio <= 1.f))
        return vl_fail(VL_ERR_ARGUMENT, "--background-ratio: %g is outside (0, 1]", p->background_ratio);
    if (!(p->var_min > 0.f && p->var_min <= p->var_init && p->var_init <= p->var_max))
        return vl_fail(VL_ERR_ARGUMENT, "MOG2 variances: need 0 < var_min <= var_init <= var_max");
    if (!(p->complexity_reduction >= 0.f))
        return vl_fail(VL_ERR_ARGUMENT, "MOG2 complexity reduction prior: must be >= 0");
    if (!(p->learning_rate < 0.0 || p->learning_rate <= 1.0))
        return vl_fail(VL_ERR_ARGUMENT, "--learning-rate: %g is not in 0..1 (or negative for automatic)",
                       p->learning_rate);
    return VL_OK;
}

void vl_background_options_default(vl_background_options *options)
{
    memset(options, 0, sizeof *options);
    vl_mog2_params_default(&options->mog2);
    vl_device_default(&options->device);
}

void vl_mog2_frame_constants(const vl_mog2_params *params, int64_t number, vl_mog2_frame *frame)
{
    double rate = params->learning_rate >= 0.0 && number > 1
                      ? params->learning_rate
                      : 1.0 / (double)(2 * number < params->history ? 2 * number : params->history);
    frame->alpha = (float)rate;
    frame->one_minus_alpha = 1.f - frame->alpha;
    frame->prune = (float)(-rate * (double)params->complexity_reduction);
    frame->var_threshold = params->var_threshold;
    frame->background_ratio = params->background_ratio;
    frame->var_threshold_gen = params->var_threshold_gen;
    frame->var_init = params->var_init;
    frame->var_min = params->var_min;
    frame->var_max = params->var_max;
    frame->nmixtures = params->nmixtures;
}

vl_status vl_background_frames_u8(const vl_volume *volume, vl_volume *frames)
{
    vl_status status = vl_volume_create_uninitialised(frames, volume->nx, volume->ny, volume->nz, VL_U8);
    if (status != VL_OK)
        return status;
    frames->geometry = volume->geometry;
    const int64_t n = vl_volume_voxels(volume);
    uint8_t *out = frames->data;
    if (volume->dtype == VL_U8) {
        memcpy(out, volume->data, (size_t)n);
        return VL_OK;
    }
    double low = INFINITY, high = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = vl_volume_value(volume, i);
        if (!isfinite(v)) {
            vl_volume_free(frames);
            return vl_fail(VL_ERR_INPUT, "background: frame voxel %lld is not a finite number", (long long)i);
        }
        if (v < low)
            low = v;
        if (v > high)
            high = v;
    }
    const double scale = high > low ? 255.0 / (high - low) : 0.0;
    for (int64_t i = 0; i < n; i++)
        out[i] = (uint8_t)floor((vl_volume_value(volume, i) - low) * scale + 0.5);
    return VL_OK;
}

typedef struct mog2_call {
    const uint8_t *frames;
    uint8_t *foreground;
    int64_t pixels, count;
    const vl_background_options *options;
} mog2_call;

static vl_status mog2_gpu(void *context)
{
    mog2_call *c = context;
    return vl_background_mog2_gpu(c->frames, c->foreground, c->pixels, c->count, &c->options->mog2,
                                  &c->options->progress);
}

static vl_status mog2_cpu(void *context)
{
    mog2_call *c = context;
    return vl_background_mog2_cpu(c->frames, c->foreground, c->pixels, c->count, &c->options->mog2,
                                  &c->options->progress);
}

vl_status vl_background_mog2(const vl_volume *frames, vl_volume *foreground, const vl_background_options *options,
                             vl_device_outcome *outcome)
{
    memset(foreground, 0, sizeof *foreground);
    vl_background_options defaults;
    if (!options) {
        vl_background_options_default(&defaults);
        options = &defaults;
    }
    vl_status status = vl_mog2_params_validate(&options->mog2);
    if (status != VL_OK)
        return status;
    if (frames->dtype != VL_U8)
        return vl_fail(VL_ERR_ARGUMENT, "background: frames must be 8-bit (vl_background_frames_u8 converts)");
    if (frames->nz < 2)
        return vl_fail(VL_ERR_INPUT, "background: a sequence of %lld frame(s) has nothing to model; it needs at "
                       "least 2 frames", (long long)frames->nz);
    status = vl_volume_create_uninitialised(foreground, frames->nx, frames->ny, frames->nz, VL_U8);
    if (status != VL_OK)
        return status;
    foreground->geometry = frames->geometry;
    mog2_call call = {frames->data, foreground->data, frames->nx * frames->ny, frames->nz, options};
    status = vl_device_run(&options->device, mog2_gpu, mog2_cpu, &call, outcome);
    if (status != VL_OK)
        vl_volume_free(foreground);
    return status;
}
