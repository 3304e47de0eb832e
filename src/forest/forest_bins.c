/* Binning the training set: per feature at most `bins` bins, thresholds halfway between neighbouring distinct
 * values: all of them (scikit-learn's thresholds) when a feature has at most `bins` distinct values, else one
 * near each quantile. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "forest/forest_internal.h"

static int compare_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* A float threshold t with a <= t < b for a < b: the midpoint, or a when the midpoint rounds to b. */
static float midpoint(float a, float b)
{
    const float mid = (float)((double)a + ((double)b - (double)a) * 0.5);
    return mid < b ? mid : a;
}

typedef struct bin_job {
    const float *features;
    int64_t samples;
    int feature_count, bins, threads, index;
    vl_forest_binned *binned;
    int failed;
} bin_job;

static void *bin_work(void *arg)
{
    bin_job *job = arg;
    const int64_t n = job->samples;
    float *sorted = malloc(sizeof(float) * (size_t)n + 1);
    if (!sorted) {
        job->failed = 1;
        return NULL;
    }
    for (int f = job->index; f < job->feature_count; f += job->threads) {
        for (int64_t i = 0; i < n; i++)
            sorted[i] = job->features[i * job->feature_count + f];
        qsort(sorted, (size_t)n, sizeof(float), compare_float);
        float *edges = job->binned->edges + (int64_t)f * (VL_FOREST_MAX_BINS - 1);
        int count = 0;
        int64_t distinct = 1;
        for (int64_t i = 1; i < n; i++)
            distinct += sorted[i] != sorted[i - 1];
        if (distinct <= job->bins) {
            for (int64_t i = 1; i < n; i++)
                if (sorted[i] != sorted[i - 1])
                    edges[count++] = midpoint(sorted[i - 1], sorted[i]);
        } else {
            /* one edge per quantile step, at the widest gap between neighbouring values within half a step of
             * the quantile: thresholds fall between classes where the samples leave room, as exact splits do */
            const double step = (double)n / job->bins;
            for (int q = 1; q < job->bins; q++) {
                int64_t lo = (int64_t)((q - 0.5) * step), hi = (int64_t)((q + 0.5) * step);
                if (lo < 1)
                    lo = 1;
                if (hi > n - 1)
                    hi = n - 1;
                int64_t widest = -1;
                for (int64_t j = lo; j <= hi; j++)
                    if (sorted[j] > sorted[j - 1] &&
                        (widest < 0 || (double)sorted[j] - sorted[j - 1] > (double)sorted[widest] - sorted[widest - 1]))
                        widest = j;
                if (widest < 0)
                    continue;
                const float edge = midpoint(sorted[widest - 1], sorted[widest]);
                if (count == 0 || edge > edges[count - 1])
                    edges[count++] = edge;
            }
        }
        job->binned->edge_count[f] = count;
        /* bin = number of edges below the value */
        for (int64_t i = 0; i < n; i++) {
            const float v = job->features[i * job->feature_count + f];
            int lo = 0, hi = count;
            while (lo < hi) {
                const int mid = (lo + hi) / 2;
                if (edges[mid] < v)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            job->binned->bins[i * job->feature_count + f] = (uint16_t)lo;
        }
    }
    free(sorted);
    return NULL;
}

vl_status vl_forest_bin(const float *features, const uint8_t *classes, int64_t samples, int feature_count,
                        int class_count, int bins, int threads, vl_forest_binned *binned)
{
    memset(binned, 0, sizeof *binned);
    if (bins < 2 || bins > VL_FOREST_MAX_BINS)
        return vl_fail(VL_ERR_ARGUMENT, "forest: bins %d is not in 2..%d", bins, VL_FOREST_MAX_BINS);
    for (int64_t i = 0; i < samples * feature_count; i++)
        if (!(features[i] == features[i]))
            return vl_fail(VL_ERR_INPUT, "forest: feature %d of sample %lld is NaN", (int)(i % feature_count),
                           (long long)(i / feature_count));
    binned->samples = samples;
    binned->features = feature_count;
    binned->classes = class_count;
    binned->bins = malloc(sizeof(uint16_t) * (size_t)samples * (size_t)feature_count + 1);
    binned->classes_of = malloc((size_t)samples + 1);
    binned->edge_count = calloc((size_t)feature_count, sizeof(int));
    binned->edges = calloc((size_t)feature_count * (VL_FOREST_MAX_BINS - 1), sizeof(float));
    if (!binned->bins || !binned->classes_of || !binned->edge_count || !binned->edges) {
        vl_forest_binned_free(binned);
        return vl_fail(VL_ERR_MEMORY, "forest: cannot allocate the binned training set (%lld samples)",
                       (long long)samples);
    }
    for (int64_t i = 0; i < samples; i++)
        binned->classes_of[i] = (uint8_t)(classes[i] - 1);
    int count = vl_cpu_thread_count(threads);
    if (count > feature_count)
        count = feature_count;
    bin_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < count; t++)
        jobs[t] = (bin_job){.features = features, .samples = samples, .feature_count = feature_count,
                            .bins = bins, .threads = count, .index = t, .binned = binned};
    vl_run_parallel(bin_work, jobs, sizeof jobs[0], count);
    for (int t = 0; t < count; t++)
        if (jobs[t].failed) {
            vl_forest_binned_free(binned);
            return vl_fail(VL_ERR_MEMORY, "forest: out of memory while binning");
        }
    return VL_OK;
}

void vl_forest_binned_free(vl_forest_binned *binned)
{
    free(binned->bins);
    free(binned->classes_of);
    free(binned->edge_count);
    free(binned->edges);
    memset(binned, 0, sizeof *binned);
}
