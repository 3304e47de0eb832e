/* vl_series_label: the dispatch between its CPU reference (series_cpu.c) and its device-resident GPU half
 * (cuda/series/series_gpu.cu) under the one device policy, and the engine that keeps the GPU half's buffers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "series/series_gpu.h"

struct vl_series_engine {
    vl_series_gpu *gpu;
};

vl_status vl_series_engine_create(vl_series_engine **engine)
{
    *engine = calloc(1, sizeof **engine);
    return *engine ? VL_OK : vl_fail(VL_ERR_MEMORY, "series: out of memory");
}

void vl_series_engine_free(vl_series_engine *engine)
{
    if (!engine)
        return;
    vl_series_gpu_free(engine->gpu);
    free(engine);
}

typedef struct series_call {
    vl_series_gpu **gpu;
    const vl_volume *ct;
    const vl_series_request *request;
    vl_volume *labels;
    vl_label_result *result;
    vl_component_stats **stats;
    vl_series_timings *timings;
} series_call;

static vl_status series_gpu(void *context)
{
    series_call *c = context;
    return vl_series_label_gpu(c->gpu, c->ct, c->request, c->labels, c->result, c->stats, c->timings);
}

static vl_status series_cpu(void *context)
{
    series_call *c = context;
    return vl_series_label_cpu(c->ct, c->request, c->labels, c->result, c->stats, c->timings);
}

vl_status vl_series_label(vl_series_engine *engine, const vl_volume *ct, const vl_series_request *request,
                          vl_volume *labels, vl_label_result *result, vl_component_stats **stats,
                          vl_series_timings *timings)
{
    memset(labels, 0, sizeof *labels);
    memset(result, 0, sizeof *result);
    *stats = NULL;
    vl_series_timings unused;
    if (!timings)
        timings = &unused;
    memset(timings, 0, sizeof *timings);
    if (isnan(request->lo) || isnan(request->hi) || request->lo > request->hi)
        return vl_fail(VL_ERR_ARGUMENT, "threshold: range %g:%g is empty", request->lo, request->hi);
    vl_series_gpu *own = NULL;
    series_call call = {engine ? &engine->gpu : &own, ct, request, labels, result, stats, timings};
    vl_device_outcome outcome;
    memset(&outcome, 0, sizeof outcome);
    const vl_status status = vl_device_run(&request->label->device, series_gpu, series_cpu, &call, &outcome);
    vl_series_gpu_free(own);
    if (status != VL_OK)
        return status;
    result->outcome = outcome;
    if (request->stats && request->stats->outcome)
        *request->stats->outcome = outcome;
    return VL_OK;
}
