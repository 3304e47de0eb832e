/* Descriptor matching's CPU reference: exhaustive integer squared distances, queries split among threads. */
#include <stdint.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "features/match_internal.h"

typedef struct match_job {
    const float *query, *train;
    int64_t first, end, train_count;
    vl_match_best *out;
} match_job;

static void *run_match_job(void *argument)
{
    match_job *job = argument;
    uint8_t *train = malloc((size_t)(job->train_count ? job->train_count : 1) * VL_SIFT_DESCRIPTOR_SIZE);
    for (int64_t i = 0; train && i < job->train_count * VL_SIFT_DESCRIPTOR_SIZE; i++)
        train[i] = (uint8_t)job->train[i];
    for (int64_t q = job->first; q < job->end; q++) {
        uint8_t query[VL_SIFT_DESCRIPTOR_SIZE];
        for (int k = 0; k < VL_SIFT_DESCRIPTOR_SIZE; k++)
            query[k] = (uint8_t)job->query[q * VL_SIFT_DESCRIPTOR_SIZE + k];
        vl_match_best best = {-1, INT32_MAX, INT32_MAX};
        for (int64_t t = 0; train && t < job->train_count; t++) {
            const uint8_t *d = train + t * VL_SIFT_DESCRIPTOR_SIZE;
            int32_t sum = 0;
            for (int k = 0; k < VL_SIFT_DESCRIPTOR_SIZE; k++) {
                int32_t diff = (int32_t)query[k] - (int32_t)d[k];
                sum += diff * diff;
            }
            if (sum < best.best) {
                best.second = best.best;
                best.best = sum;
                best.train = (int32_t)t;
            } else if (sum < best.second) {
                best.second = sum;
            }
        }
        job->out[q] = best;
    }
    free(train);
    return NULL;
}

void vl_match_best_cpu(const float *query, int64_t query_count, const float *train, int64_t train_count,
                       int threads, vl_match_best *out)
{
    match_job jobs[VL_MAX_THREADS];
    int parts = threads < 1 ? 1 : threads;
    if (parts > query_count)
        parts = query_count < 1 ? 1 : (int)query_count;
    for (int t = 0; t < parts; t++)
        jobs[t] = (match_job){query, train, query_count * t / parts, query_count * (t + 1) / parts, train_count, out};
    vl_run_parallel(run_match_job, jobs, sizeof jobs[0], parts);
}
