/* The CPU reference of MOG2: pixels are independent, so every thread takes a range of pixels through the
 * whole sequence, with its part of the model (modes of a pixel contiguous) in its own cache. */
#include <stdlib.h>
#include <string.h>

#include "background/mog2_internal.h"
#include "core/parallel.h"
#include "voxlabel/error.h"

typedef struct mog2_job {
    const uint8_t *frames;
    uint8_t *foreground;
    int64_t pixels, count, begin, end;
    const vl_mog2_params *params;
    const vl_progress *progress; /* job 0 reports */
} mog2_job;

static void *run_range(void *argument)
{
    mog2_job *job = argument;
    const int K = job->params->nmixtures;
    const int64_t n = job->end - job->begin;
    float *weight = malloc((size_t)n * (size_t)K * 3 * sizeof(float));
    int *modes = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    if (!weight || !modes) {
        free(weight), free(modes);
        job->count = -1; /* tells the caller */
        return NULL;
    }
    float *mean = weight + n * K, *variance = mean + n * K;
    for (int64_t z = 0; z < job->count; z++) {
        vl_mog2_frame frame;
        vl_mog2_frame_constants(job->params, z + 1, &frame);
        const uint8_t *in = job->frames + z * job->pixels + job->begin;
        uint8_t *out = job->foreground + z * job->pixels + job->begin;
        for (int64_t i = 0; i < n; i++)
            out[i] = (uint8_t)vl_mog2_pixel(&frame, (float)in[i], weight + i * K, mean + i * K, variance + i * K,
                                            &modes[i]);
        if (job->progress)
            vl_progress_report(job->progress, "background model", (double)(z + 1) / (double)job->count);
    }
    free(weight);
    free(modes);
    return NULL;
}

vl_status vl_background_mog2_cpu(const uint8_t *frames, uint8_t *foreground, int64_t pixels, int64_t count,
                                 const vl_mog2_params *params, const vl_progress *progress)
{
    int threads = vl_cpu_thread_count(0);
    if (pixels < 4096 * threads)
        threads = (int)(pixels / 4096) + 1;
    mog2_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        jobs[t] = (mog2_job){frames, foreground, pixels, count, pixels * t / threads, pixels * (t + 1) / threads,
                             params, t == 0 ? progress : NULL};
    }
    vl_run_parallel(run_range, jobs, sizeof jobs[0], threads);
    for (int t = 0; t < threads; t++)
        if (jobs[t].count < 0)
            return vl_fail(VL_ERR_MEMORY, "background: out of memory for the mixture model");
    return VL_OK;
}
