/* The benches' wall clock: monotonic seconds, for differences only. */
#ifndef VOXLABEL_BENCH_CLOCK_H
#define VOXLABEL_BENCH_CLOCK_H
#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif
