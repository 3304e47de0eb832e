/* The bandwidth floor for labelling in the GPU bench: one pass that reads the u8 mask and writes one
 * u32 per voxel (4 voxels per thread: a 4-byte load and a 16-byte store), timed with CUDA events. */
#include <cuda_runtime.h>

#include <stdint.h>

namespace {

__global__ void floor_kernel(const uint8_t *__restrict__ mask, uint32_t *__restrict__ labels, int64_t voxels)
{
    /* 4 voxels per thread: a warp reads 128 contiguous bytes and writes 512. */
    const int64_t quads = voxels / 4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < quads; i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t m = reinterpret_cast<const uint32_t *>(mask)[i];
        reinterpret_cast<uint4 *>(labels)[i] = make_uint4(m & 0xFF, m >> 8 & 0xFF, m >> 16 & 0xFF, m >> 24);
    }
    for (int64_t i = quads * 4 + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < voxels;
         i += (int64_t)gridDim.x * blockDim.x)
        labels[i] = mask[i];
}

} // namespace

extern "C" float vl_bench_floor_ms(const uint8_t *mask, uint32_t *labels, int64_t voxels)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    int64_t blocks = (voxels / 4 + 255) / 256;
    blocks = blocks < 1 ? 1 : blocks > (1 << 20) ? (1 << 20) : blocks;
    cudaEventRecord(start);
    floor_kernel<<<(unsigned)blocks, 256>>>(mask, labels, voxels);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}
