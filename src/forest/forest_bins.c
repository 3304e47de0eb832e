/* Binning the training set: per feature at most `bins` bins, thresholds halfway between neighbouring distinct
 * values: all of them (scikit-learn's thresholds) when a feature has at most `bins` distinct values, else one
 * near each quantile. */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "forest/forest_internal.h"

/* An unsigned key in the order of the float (no NaN): negative values bit-inverted, positive ones with the sign
 * bit set. -0 sorts just before +0; they compare equal as floats, so edges (midpoints of distinct neighbours)
 * are the same as with any other sort. */
static uint32_t float_key(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

static float key_float(uint32_t key)
{
    const uint32_t bits = key & 0x80000000u ? key & 0x7fffffffu : ~key;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Sorts pairs[0..n) (a float key in the high 32 bits, the sample in the low ones) by key: least-significant-byte
 * radix sort of the key through `spare` (n pairs), skipping the bytes that all keys share. */
static void sort_pairs(uint64_t *pairs, uint64_t *spare, int64_t n)
{
    if (n < 2)
        return;
    for (int shift = 32; shift < 64; shift += 8) {
        int64_t start[257] = {0};
        for (int64_t i = 0; i < n; i++)
            start[((pairs[i] >> shift) & 0xffu) + 1]++;
        if (start[((pairs[0] >> shift) & 0xffu) + 1] == n)
            continue;
        for (int b = 0; b < 256; b++)
            start[b + 1] += start[b];
        for (int64_t i = 0; i < n; i++)
            spare[start[(pairs[i] >> shift) & 0xffu]++] = pairs[i];
        memcpy(pairs, spare, sizeof(uint64_t) * (size_t)n);
    }
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
    uint64_t *pairs = malloc(sizeof(uint64_t) * (size_t)n + 1), *spare = malloc(sizeof(uint64_t) * (size_t)n + 1);
    if (!sorted || !pairs || !spare) {
        free(sorted);
        free(pairs);
        free(spare);
        job->failed = 1;
        return NULL;
    }
    for (int f = job->index; f < job->feature_count; f += job->threads) {
        /* samples < 2^32 (training takes at most 2^24) */
        for (int64_t i = 0; i < n; i++)
            pairs[i] = (uint64_t)float_key(job->features[i * job->feature_count + f]) << 32 | (uint64_t)i;
        sort_pairs(pairs, spare, n);
        for (int64_t i = 0; i < n; i++)
            sorted[i] = key_float((uint32_t)(pairs[i] >> 32));
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
        /* bin = number of edges below the value, counted up along the sorted values */
        int below = 0;
        for (int64_t j = 0; j < n; j++) {
            while (below < count && edges[below] < sorted[j])
                below++;
            job->binned->bins[(int64_t)(uint32_t)pairs[j] * job->feature_count + f] = (uint16_t)below;
        }
    }
    free(sorted);
    free(pairs);
    free(spare);
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
