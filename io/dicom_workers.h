/* Internal: the worker threads of DICOM discovery and decoding, and the progress they share. */
#ifndef VL_DICOM_WORKERS_H
#define VL_DICOM_WORKERS_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "voxlabel/progress.h"

/* Progress advanced from worker threads, reported one call at a time because the callback need not be
 * thread-safe. */
struct vl_shared_progress {
    const vl_progress *progress = nullptr;
    const char *stage = "";
    int64_t total = 1;
    std::atomic<int64_t> done{0};
    std::mutex lock;
    void advance(int64_t count)
    {
        const int64_t now = done.fetch_add(count) + count;
        std::lock_guard<std::mutex> guard(lock);
        vl_progress_report(progress, stage, (double)now / (double)total);
    }
};

/* Runs `worker` on `threads` threads, the calling one included, and returns when all have returned. */
template <class Worker> void vl_run_workers(size_t threads, Worker &worker)
{
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; t++)
        pool.emplace_back([&worker] { worker(); });
    worker();
    for (std::thread &thread : pool)
        thread.join();
}

#endif
