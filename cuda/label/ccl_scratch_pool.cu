/* One CUDA memory pool per device for the labeller's scratch (ccl_scratch_pool.cuh). The device's default
 * pool keeps nothing once a stream synchronises (its release threshold is 0, and other libraries in the
 * process may rely on that), so a second call would map its scratch afresh: this pool has a threshold of
 * kScratchKeptBytes instead. Devices without memory pools use the default pool. */
#include <mutex>

#include "ccl_scratch_pool.cuh"

namespace vlccl {
namespace {

constexpr int kMaxDevices = 64;

std::mutex pools_lock;
cudaMemPool_t pools[kMaxDevices];
bool pools_made[kMaxDevices];

/* The labeller's pool of `device`, made on first use; nullptr when the device has no memory pools. */
cudaMemPool_t pool_of(int device)
{
    if (device < 0 || device >= kMaxDevices)
        return nullptr;
    std::lock_guard<std::mutex> hold(pools_lock);
    if (pools_made[device])
        return pools[device];
    pools_made[device] = true;
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device) != cudaSuccess || !supported) {
        cudaGetLastError();
        return nullptr;
    }
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    uint64_t kept = kScratchKeptBytes;
    if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &kept) != cudaSuccess) {
        cudaGetLastError();
        cudaMemPoolDestroy(pool);
        return nullptr;
    }
    pools[device] = pool;
    return pool;
}

cudaMemPool_t current_pool(void)
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return pool_of(device);
}

} // namespace

cudaError_t scratch_allocate(void **out, size_t bytes, cudaStream_t stream)
{
    cudaMemPool_t pool = current_pool();
    if (!pool)
        return cudaMallocAsync(out, bytes, stream);
    cudaError_t error = cudaMallocFromPoolAsync(out, bytes, pool, stream);
    if (error == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        /* Memory kept in the pool counts as used for allocations of other pools and of cudaMalloc, and
         * kept blocks may be too small for this request: give it all back and try once more. */
        cudaStreamSynchronize(stream);
        cudaMemPoolTrimTo(pool, 0);
        error = cudaMallocFromPoolAsync(out, bytes, pool, stream);
    }
    return error;
}

void scratch_release_kept(void)
{
    cudaMemPool_t pool = current_pool();
    if (pool)
        cudaMemPoolTrimTo(pool, 0);
}

} // namespace vlccl
