#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <unistd.h>

#include "core/parallel.h"
#include "voxlabel/threads.h"

static _Atomic int thread_limit;

void vl_set_thread_limit(int threads) { thread_limit = threads > 0 ? threads : 0; }

int vl_cpu_thread_count(int requested)
{
    long threads = requested > 0 ? requested : sysconf(_SC_NPROCESSORS_ONLN);
    const int limit = thread_limit;
    if (limit > 0 && threads > limit)
        threads = limit;
    return threads < 1 ? 1 : threads > VL_MAX_THREADS ? VL_MAX_THREADS : (int)threads;
}

/* Runs `work` on each job, on its own thread for all but the first (which runs on the caller's). */
void vl_run_parallel(void *(*work)(void *), void *jobs, size_t job_size, int count)
{
    pthread_t threads[VL_MAX_THREADS];
    int started[VL_MAX_THREADS] = {0};
    for (int t = 1; t < count; t++)
        started[t] = pthread_create(&threads[t], NULL, work, (char *)jobs + t * job_size) == 0;
    work(jobs);
    for (int t = 1; t < count; t++) {
        if (started[t])
            pthread_join(threads[t], NULL);
        else
            work((char *)jobs + t * job_size); /* could not spawn: do it here */
    }
}
