/* Exact median by selection (Hoare's quickselect with median-of-three pivots): O(n) expected per component. */
#include <math.h>

#include "stats/stats_internal.h"

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* Puts the k-th smallest of values[0..n-1] at values[k], smaller ones before it, larger after. */
static double select_kth(double *values, uint64_t n, uint64_t k)
{
    uint64_t lo = 0, hi = n - 1;
    while (hi > lo) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (values[mid] < values[lo]) swap(&values[mid], &values[lo]);
        if (values[hi] < values[lo]) swap(&values[hi], &values[lo]);
        if (values[hi] < values[mid]) swap(&values[hi], &values[mid]);
        const double pivot = values[mid];
        uint64_t i = lo, j = hi;
        while (i <= j) {
            while (values[i] < pivot) i++;
            while (values[j] > pivot) j--;
            if (i <= j) {
                swap(&values[i], &values[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return values[k];
}

double vl_stats_median(double *values, uint64_t n)
{
    if (n == 0)
        return NAN;
    const uint64_t upper = n / 2;
    const double high = select_kth(values, n, upper);
    if (n % 2)
        return high;
    /* Even count: the lower middle is the largest value left of the upper middle. */
    double low = values[0];
    for (uint64_t i = 1; i < upper; i++)
        low = values[i] > low ? values[i] : low;
    return low + (high - low) / 2;
}
