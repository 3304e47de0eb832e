/* The device labeller's scratch memory (cuda/label/ccl_scratch_pool.cu): stream-ordered allocations from one
 * memory pool per device that keeps freed scratch for the next call, so that labelling again on the same
 * device neither maps fresh memory nor synchronises the device to free it. */
#ifndef VL_CCL_SCRATCH_POOL_CUH
#define VL_CCL_SCRATCH_POOL_CUH

#include <stddef.h>

#include <cuda_runtime.h>

namespace vlccl {

/* Freed scratch the pool keeps between calls, per device: a 512^3 or CT-sized labelling needs a few tens
 * of MiB; what larger volumes take beyond this goes back to the driver at their end. */
constexpr size_t kScratchKeptBytes = (size_t)256 << 20;

/* `bytes` of device memory of the current device, ordered on `stream` (free with cudaFreeAsync). When the
 * device cannot hold the pool's kept memory and the request together, the kept memory is released and
 * the allocation tried once more. */
cudaError_t scratch_allocate(void **out, size_t bytes, cudaStream_t stream);

/* Returns the current device's kept scratch to the driver (for an allocation outside the pool that ran
 * out of memory). */
void scratch_release_kept(void);

} // namespace vlccl

#endif
