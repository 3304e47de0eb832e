/* Descriptor matching with Lowe's ratio test: the dispatch between the CPU reference (match_cpu.c) and the
 * GPU half (cuda/features/match_gpu.cu), and the ratio test on their exact nearest/second distances. */
#include <math.h>
#include <stdlib.h>

#include "core/device.h"
#include "core/parallel.h"
#include "features/match_internal.h"

typedef struct match_call {
    const float *query, *train;
    int64_t query_count, train_count;
    vl_match_best *best;
    int gpu_index;
} match_call;

static vl_status match_cpu(void *context)
{
    match_call *c = context;
    vl_match_best_cpu(c->query, c->query_count, c->train, c->train_count, vl_cpu_thread_count(0), c->best);
    return VL_OK;
}

static vl_status match_gpu(void *context)
{
    match_call *c = context;
    return vl_match_best_gpu(c->query, c->query_count, c->train, c->train_count, c->best, c->gpu_index);
}

vl_status vl_match_descriptors(const float *query, int64_t query_count, const float *train, int64_t train_count,
                               double ratio, const vl_device *device, vl_feature_match **matches, int64_t *count,
                               vl_device_outcome *outcome)
{
    *matches = NULL;
    *count = 0;
    if (!(ratio > 0 && ratio <= 1))
        return vl_fail(VL_ERR_ARGUMENT, "match: ratio %g outside (0, 1]", ratio);
    if (query_count < 0 || train_count < 0 || query_count > INT32_MAX || train_count > INT32_MAX)
        return vl_fail(VL_ERR_ARGUMENT, "match: descriptor counts out of range");
    vl_match_best *best = malloc((size_t)(query_count ? query_count : 1) * sizeof *best);
    vl_feature_match *out = malloc((size_t)(query_count ? query_count : 1) * sizeof *out);
    if (!best || !out) {
        free(best);
        free(out);
        return vl_fail(VL_ERR_MEMORY, "match: out of memory for %lld descriptors", (long long)query_count);
    }
    vl_status status = VL_OK;
    if (query_count && train_count) {
        match_call call = {query, train, query_count, train_count, best, device ? device->gpu_index : 0};
        status = vl_device_run(device, match_gpu, match_cpu, &call, outcome);
    }
    int64_t kept = 0;
    double ratio2 = ratio * ratio;
    for (int64_t q = 0; status == VL_OK && train_count && q < query_count; q++) {
        /* nearest < ratio * second, on squared distances; without a second neighbour there is no test to pass. */
        if (best[q].train >= 0 && best[q].second != INT32_MAX && (double)best[q].best < ratio2 * best[q].second)
            out[kept++] = (vl_feature_match){(int32_t)q, best[q].train, (float)sqrt((double)best[q].best)};
    }
    free(best);
    if (status != VL_OK) {
        free(out);
        return status;
    }
    *matches = out;
    *count = kept;
    return VL_OK;
}
