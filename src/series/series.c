/* vl_series_label: the dispatch between its CPU reference (series_cpu.c) and its device-resident GPU half
 * (cuda/series/series_gpu.cu) under the one device policy, and the engine that keeps the GPU half's buffers
 * and the host memory pinned for its uploads. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "series/series_gpu.h"

enum { max_pinned = 16 };

struct vl_series_engine {
    vl_series_gpu *gpu;
    pthread_mutex_t lock; /* guards pinned: a caller's threads pin and unpin while another labels */
    struct {
        void *data;
        size_t bytes;
    } pinned[max_pinned];
    int pinned_count;
};

vl_status vl_series_engine_create(vl_series_engine **engine)
{
    *engine = calloc(1, sizeof **engine);
    if (!*engine)
        return vl_fail(VL_ERR_MEMORY, "series: out of memory");
    pthread_mutex_init(&(*engine)->lock, NULL);
    return VL_OK;
}

void vl_series_engine_free(vl_series_engine *engine)
{
    if (!engine)
        return;
    for (int p = 0; p < engine->pinned_count; p++)
        vl_series_gpu_unpin(engine->pinned[p].data);
    vl_series_gpu_free(engine->gpu);
    pthread_mutex_destroy(&engine->lock);
    free(engine);
}

vl_status vl_series_engine_pin(vl_series_engine *engine, const vl_device *device, void *data, size_t bytes)
{
    if (!device || device->kind == VL_DEVICE_CPU)
        return vl_fail(VL_ERR_DEVICE, "series: the device policy is the CPU, nothing to pin for");
    char why[256];
    if (!vl_device_gpu_usable(device->gpu_index, why, sizeof why))
        return vl_fail(VL_ERR_DEVICE, "series: no pinning: %s", why);
    /* Under the lock throughout, so that two threads cannot both take the last entry. */
    pthread_mutex_lock(&engine->lock);
    vl_status status = engine->pinned_count < max_pinned
                           ? vl_series_gpu_pin(device->gpu_index, data, bytes)
                           : vl_fail(VL_ERR_DEVICE, "series: %d blocks are pinned already", max_pinned);
    if (status == VL_OK) {
        engine->pinned[engine->pinned_count].data = data;
        engine->pinned[engine->pinned_count++].bytes = bytes;
    }
    pthread_mutex_unlock(&engine->lock);
    return status;
}

void vl_series_engine_unpin(vl_series_engine *engine, void *data)
{
    int found = 0;
    pthread_mutex_lock(&engine->lock);
    for (int p = 0; p < engine->pinned_count && !found; p++)
        if (engine->pinned[p].data == data) {
            engine->pinned[p] = engine->pinned[--engine->pinned_count];
            found = 1;
        }
    pthread_mutex_unlock(&engine->lock);
    if (found)
        vl_series_gpu_unpin(data);
}

/* Whether the CT's voxels lie inside memory the engine pinned. */
static int ct_is_pinned(vl_series_engine *engine, const vl_volume *ct)
{
    const uintptr_t first = (uintptr_t)ct->data;
    const size_t bytes = (size_t)vl_volume_voxels(ct) * vl_dtype_size(ct->dtype);
    int inside = 0;
    pthread_mutex_lock(&engine->lock);
    for (int p = 0; p < engine->pinned_count && !inside; p++) {
        const uintptr_t start = (uintptr_t)engine->pinned[p].data;
        inside = first >= start && first - start <= engine->pinned[p].bytes &&
                 bytes <= engine->pinned[p].bytes - (first - start);
    }
    pthread_mutex_unlock(&engine->lock);
    return inside;
}

typedef struct series_call {
    vl_series_gpu **gpu;
    const vl_volume *ct;
    int ct_pinned;
    const vl_series_request *request;
    vl_volume *labels;
    vl_label_result *result;
    vl_component_stats **stats;
    vl_series_timings *timings;
} series_call;

static vl_status series_gpu(void *context)
{
    series_call *c = context;
    return vl_series_label_gpu(c->gpu, c->ct, c->ct_pinned, c->request, c->labels, c->result, c->stats,
                               c->timings);
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
    const int ct_pinned = engine && ct_is_pinned(engine, ct);
    series_call call = {engine ? &engine->gpu : &own, ct, ct_pinned, request, labels, result, stats, timings};
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
