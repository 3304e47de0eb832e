/* EM for 1D Gaussian mixtures (vl_gmm1d_fit). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graphcut/gmm1d.h"

#define EM_STEPS 30
#define LOG_SQRT_2PI 0.91893853320467274178

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double vl_gmm1d_log_density(const vl_gmm1d *gmm, double x)
{
    double terms[VL_GMM_MAX_COMPONENTS], top = -INFINITY;
    for (int k = 0; k < gmm->components; k++) {
        double d = x - gmm->mean[k];
        terms[k] = log(gmm->weight[k]) - LOG_SQRT_2PI - 0.5 * log(gmm->variance[k]) - d * d / (2 * gmm->variance[k]);
        top = terms[k] > top ? terms[k] : top;
    }
    double sum = 0;
    for (int k = 0; k < gmm->components; k++)
        sum += exp(terms[k] - top);
    return top + log(sum);
}

vl_status vl_gmm1d_fit(const double *samples, int64_t count, int components, vl_gmm1d *gmm)
{
    memset(gmm, 0, sizeof *gmm);
    if (count < 1 || components < 1 || components > VL_GMM_MAX_COMPONENTS)
        return vl_fail(VL_ERR_ARGUMENT, "GMM: %lld samples, %d components", (long long)count, components);
    double *sorted = malloc((size_t)count * sizeof *sorted);
    double *resp = malloc((size_t)count * (size_t)components * sizeof *resp);
    if (!sorted || !resp) {
        free(sorted), free(resp);
        return vl_fail(VL_ERR_MEMORY, "GMM: out of memory for %lld samples", (long long)count);
    }
    memcpy(sorted, samples, (size_t)count * sizeof *sorted);
    qsort(sorted, (size_t)count, sizeof *sorted, compare_double);
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < count; i++)
        mean += sorted[i];
    mean /= (double)count;
    for (int64_t i = 0; i < count; i++)
        variance += (sorted[i] - mean) * (sorted[i] - mean);
    variance /= (double)count;
    const double floor_variance = fmax(1e-4 * variance, 1e-6);
    if (components > count)
        components = (int)count;
    gmm->components = components;
    for (int k = 0; k < components; k++) {
        gmm->weight[k] = 1.0 / components;
        gmm->mean[k] = sorted[(int64_t)((k + 0.5) / components * (double)count)];
        gmm->variance[k] = fmax(variance / (components * components), floor_variance);
    }
    free(sorted);

    for (int step = 0; step < EM_STEPS; step++) {
        double mass[VL_GMM_MAX_COMPONENTS] = {0}, first[VL_GMM_MAX_COMPONENTS] = {0};
        for (int64_t i = 0; i < count; i++) {
            double *r = resp + i * components, top = -INFINITY, sum = 0;
            for (int k = 0; k < components; k++) {
                double d = samples[i] - gmm->mean[k];
                r[k] = log(gmm->weight[k]) - 0.5 * log(gmm->variance[k]) - d * d / (2 * gmm->variance[k]);
                top = r[k] > top ? r[k] : top;
            }
            for (int k = 0; k < components; k++)
                sum += r[k] = exp(r[k] - top);
            for (int k = 0; k < components; k++) {
                r[k] /= sum;
                mass[k] += r[k];
                first[k] += r[k] * samples[i];
            }
        }
        double second[VL_GMM_MAX_COMPONENTS] = {0};
        for (int k = 0; k < components; k++)
            if (mass[k] > 0)
                first[k] /= mass[k];
        for (int64_t i = 0; i < count; i++)
            for (int k = 0; k < components; k++) {
                double d = samples[i] - first[k];
                second[k] += resp[i * components + k] * d * d;
            }
        for (int k = 0; k < components; k++) {
            /* A component that lost all its samples keeps its place with a negligible weight. */
            gmm->weight[k] = fmax(mass[k] / (double)count, 1e-12);
            if (mass[k] > 0) {
                gmm->mean[k] = first[k];
                gmm->variance[k] = fmax(second[k] / mass[k], floor_variance);
            }
        }
    }
    free(resp);
    return VL_OK;
}
