/* vl_series_label's CPU half: the three stages one after the other, as `voxlabel label` runs them. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "series/series_gpu.h"
#include "voxlabel/threshold.h"

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

vl_status vl_series_label_cpu(const vl_volume *ct, const vl_series_request *request, vl_volume *labels,
                              vl_label_result *result, vl_component_stats **stats, vl_series_timings *timings)
{
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    vl_volume mask = {0};
    vl_status status = vl_threshold(ct, request->lo, request->hi, &mask);
    if (status != VL_OK)
        return status;
    timings->threshold = seconds_since(&start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    status = vl_label_volume_cpu(&mask, labels, request->label, result);
    vl_volume_free(&mask);
    if (status != VL_OK)
        return status;
    timings->label = seconds_since(&start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    status = vl_component_stats_compute_cpu(labels, ct, result->count, request->stats, stats);
    if (status != VL_OK) {
        vl_label_result_free(result);
        vl_volume_free(labels);
        return status;
    }
    timings->stats = seconds_since(&start);
    return VL_OK;
}
