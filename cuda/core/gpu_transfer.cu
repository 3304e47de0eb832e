/* Staged host <-> device copies. A pageable cudaMemcpy copies through the driver's own staging on one
 * thread, page faults included, so a large download into new pages is bound by that thread, not by the
 * DMA into pinned memory. Here up to kWorkers threads each move their own
 * slice in kChunk pieces, double-buffered on their own stream: one piece is in flight on the DMA engine
 * while the thread copies the other between its pinned buffer and the pageable side. A worker waiting for
 * its DMA sleeps (blocking-sync events) instead of spinning as CUDA's default wait does, so the cores it
 * would spin on stay with the rest of the process (voxlabel batch decodes and compresses other series
 * meanwhile). */
#include "core/gpu_transfer.h"

#include <pthread.h>
#include <string.h>

#include <algorithm>

extern "C" {
#include "core/parallel.h"
}

namespace {

constexpr int kWorkers = 8;
constexpr size_t kChunk = (size_t)2 << 20;
constexpr unsigned kEventFlags = cudaEventDisableTiming | cudaEventBlockingSync;

struct Worker {
    char *pinned[2];
    cudaStream_t stream;
    cudaEvent_t landed[2];
};

/* The staging of one device, set up on first use and kept for the process's life. */
struct Staging {
    int device = -1;
    int workers = 0;
    Worker worker[kWorkers];
};

Staging staging;
pthread_mutex_t staging_lock = PTHREAD_MUTEX_INITIALIZER;

void release(Staging &s)
{
    for (int w = 0; w < s.workers; w++) {
        cudaFreeHost(s.worker[w].pinned[0]);
        cudaFreeHost(s.worker[w].pinned[1]);
        cudaStreamDestroy(s.worker[w].stream);
        cudaEventDestroy(s.worker[w].landed[0]);
        cudaEventDestroy(s.worker[w].landed[1]);
    }
    s.workers = 0;
    s.device = -1;
}

/* True when `s` serves the current device; on failure nothing is left half set up. */
bool prepare(Staging &s)
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess)
        return false;
    if (s.device == device)
        return true;
    release(s);
    for (int w = 0; w < kWorkers; w++) {
        Worker &k = s.worker[w];
        k = Worker{{nullptr, nullptr}, nullptr, {nullptr, nullptr}};
        const bool ok = cudaHostAlloc((void **)&k.pinned[0], kChunk, cudaHostAllocPortable) == cudaSuccess &&
                        cudaHostAlloc((void **)&k.pinned[1], kChunk, cudaHostAllocPortable) == cudaSuccess &&
                        cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking) == cudaSuccess &&
                        cudaEventCreateWithFlags(&k.landed[0], kEventFlags) == cudaSuccess &&
                        cudaEventCreateWithFlags(&k.landed[1], kEventFlags) == cudaSuccess;
        if (!ok) {
            /* This worker is not counted in s.workers: free what it got before the failure here. */
            cudaFreeHost(k.pinned[0]);
            cudaFreeHost(k.pinned[1]);
            if (k.stream)
                cudaStreamDestroy(k.stream);
            if (k.landed[0])
                cudaEventDestroy(k.landed[0]);
            cudaGetLastError();
            s.workers = w;
            release(s);
            return false;
        }
        s.workers = w + 1;
    }
    s.device = device;
    return true;
}

struct Slice {
    Worker *worker;
    int device_index;
    char *host;
    char *device;
    size_t bytes;
    bool upload;
    cudaError_t error;
};

void *move_slice(void *argument)
{
    Slice &s = *static_cast<Slice *>(argument);
    Worker &w = *s.worker;
    const size_t pieces = (s.bytes + kChunk - 1) / kChunk;
    cudaError_t error = cudaSetDevice(s.device_index); /* a new thread starts on device 0 */
    /* Piece i uses buffer i % 2; the copy of piece i - 1 on the host side overlaps piece i on the DMA. */
    for (size_t i = 0; i <= pieces && error == cudaSuccess; i++) {
        if (i < pieces) {
            const size_t at = i * kChunk, n = std::min(kChunk, s.bytes - at);
            char *buffer = w.pinned[i % 2];
            if (s.upload) {
                error = cudaEventSynchronize(w.landed[i % 2]); /* piece i - 2 has left this buffer */
                memcpy(buffer, s.host + at, n);
                if (error == cudaSuccess)
                    error = cudaMemcpyAsync(s.device + at, buffer, n, cudaMemcpyHostToDevice, w.stream);
            } else {
                error = cudaMemcpyAsync(buffer, s.device + at, n, cudaMemcpyDeviceToHost, w.stream);
            }
            if (error == cudaSuccess)
                error = cudaEventRecord(w.landed[i % 2], w.stream);
        }
        if (!s.upload && i > 0 && error == cudaSuccess) {
            const size_t at = (i - 1) * kChunk, n = std::min(kChunk, s.bytes - at);
            error = cudaEventSynchronize(w.landed[(i - 1) % 2]);
            if (error == cudaSuccess)
                memcpy(s.host + at, w.pinned[(i - 1) % 2], n);
        }
    }
    /* The last piece has landed once its event has (a download has waited for it already). */
    if (error == cudaSuccess && s.upload && pieces > 0)
        error = cudaEventSynchronize(w.landed[(pieces - 1) % 2]);
    s.error = error;
    return nullptr;
}

/* Small copies, one CPU thread, or no pinned memory: the driver's own pageable copy. */
cudaError_t plain_copy(char *host, char *device, size_t bytes, bool upload)
{
    return upload ? cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice)
                  : cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
}

cudaError_t staged_copy(char *host, char *device, size_t bytes, bool upload)
{
    const int threads = std::min(kWorkers, vl_cpu_thread_count(0));
    if (bytes < 4 * kChunk || threads < 2)
        return plain_copy(host, device, bytes, upload);
    pthread_mutex_lock(&staging_lock);
    if (!prepare(staging)) {
        pthread_mutex_unlock(&staging_lock);
        return plain_copy(host, device, bytes, upload);
    }
    /* Work submitted earlier on the default stream must be done before the workers' streams read. */
    cudaError_t error = cudaDeviceSynchronize();
    Slice slices[kWorkers];
    size_t start = 0;
    for (int t = 0; t < threads; t++) {
        const size_t end = bytes / kChunk * (t + 1) / threads * kChunk;
        const size_t stop = t + 1 == threads ? bytes : end;
        slices[t] = Slice{&staging.worker[t], staging.device, host + start, device + start, stop - start, upload,
                          cudaSuccess};
        start = stop;
    }
    if (error == cudaSuccess) {
        vl_run_parallel(move_slice, slices, sizeof slices[0], threads);
        for (int t = 0; t < threads && error == cudaSuccess; t++)
            error = slices[t].error;
    }
    pthread_mutex_unlock(&staging_lock);
    return error;
}

} // namespace

cudaError_t vl_gpu_upload(void *device, const void *host, size_t bytes)
{
    return staged_copy(const_cast<char *>(static_cast<const char *>(host)), static_cast<char *>(device), bytes, true);
}

cudaError_t vl_gpu_download(void *host, const void *device, size_t bytes)
{
    return staged_copy(static_cast<char *>(host), const_cast<char *>(static_cast<const char *>(device)), bytes, false);
}
