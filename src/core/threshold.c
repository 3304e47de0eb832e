#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "voxlabel/threshold.h"
#include "voxlabel/error.h"
#include "voxlabel/volume.h"

/* Integer sources compare in their own type: the range is first narrowed to the whole values the type can
 * hold, which keeps the loop branch-free and vectorised. Floats compare in double, exactly as given. */
typedef struct threshold_job {
    const vl_volume *source;
    uint8_t *out;
    double lo, hi;
    int64_t begin, end;
} threshold_job;

#define INTEGER_RANGE(type, type_min, type_max)                                                   \
    do {                                                                                          \
        const double low = ceil(job->lo), high = floor(job->hi);                                  \
        if (low > (double)(type_max) || high < (double)(type_min) || low > high) {                \
            memset(out, 0, (size_t)(job->end - job->begin));                                      \
            return NULL;                                                                          \
        }                                                                                         \
        const type l = low < (double)(type_min) ? (type)(type_min) : (type)low;                   \
        const type h = high > (double)(type_max) ? (type)(type_max) : (type)high;                 \
        const type *in = (const type *)job->source->data + job->begin;                            \
        for (int64_t i = 0; i < job->end - job->begin; i++)                                       \
            out[i] = (uint8_t)(in[i] >= l) & (uint8_t)(in[i] <= h);                               \
    } while (0)

static void *threshold_range(void *argument)
{
    const threshold_job *job = (const threshold_job *)argument;
    uint8_t *out = job->out + job->begin;
    switch (job->source->dtype) {
    case VL_U8: INTEGER_RANGE(uint8_t, 0, UINT8_MAX); break;
    case VL_I16: INTEGER_RANGE(int16_t, INT16_MIN, INT16_MAX); break;
    case VL_U16: INTEGER_RANGE(uint16_t, 0, UINT16_MAX); break;
    case VL_U32: INTEGER_RANGE(uint32_t, 0, UINT32_MAX); break;
    case VL_F32: {
        const float *in = (const float *)job->source->data + job->begin;
        for (int64_t i = 0; i < job->end - job->begin; i++)
            out[i] = (uint8_t)((double)in[i] >= job->lo) & (uint8_t)((double)in[i] <= job->hi);
        break;
    }
    }
    return NULL;
}

vl_status vl_threshold(const vl_volume *source, double lo, double hi, vl_volume *mask)
{
    if (isnan(lo) || isnan(hi) || lo > hi)
        return vl_fail(VL_ERR_ARGUMENT, "threshold: range %g:%g is empty", lo, hi);
    vl_status status = vl_volume_create_uninitialised(mask, source->nx, source->ny, source->nz, VL_U8);
    if (status != VL_OK)
        return status;
    mask->geometry = source->geometry;
    const int64_t n = vl_volume_voxels(source);
    const int threads = n < ((int64_t)1 << 22) ? 1 : vl_cpu_thread_count(0);
    threshold_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (threshold_job){source, (uint8_t *)mask->data, lo, hi, n * t / threads, n * (t + 1) / threads};
    vl_run_parallel(threshold_range, jobs, sizeof jobs[0], threads);
    return VL_OK;
}
