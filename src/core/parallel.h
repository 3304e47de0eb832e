/* Internal: the few threads the CPU stages use (slabs of slices or ranges of voxels, one job each). */
#ifndef VL_PARALLEL_H
#define VL_PARALLEL_H

#include <stddef.h>

#define VL_MAX_THREADS 64

/* `requested` threads, or all online cores for 0; never more than vl_set_thread_limit's cap
 * (voxlabel/threads.h) or VL_MAX_THREADS. */
int vl_cpu_thread_count(int requested);
/* Runs `work` on each of `count` jobs laid out `job_size` bytes apart, the first on the calling thread. */
void vl_run_parallel(void *(*work)(void *), void *jobs, size_t job_size, int count);

#endif
