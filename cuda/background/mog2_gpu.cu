/* The GPU half of MOG2: the model (weights, means and variances as one plane per mode, and the mode count)
 * stays in device memory for the whole sequence. Frames go up in chunks; one kernel runs a chunk, each
 * thread carrying its pixel's modes in registers from frame to frame, and the masks come back per chunk.
 * The arithmetic is src/background/mog2_pixel.h with round-to-nearest intrinsics, so the masks equal the
 * CPU reference's. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>

#include "background/mog2_internal.h"
#include "core/cuda_check.h"
#include "voxlabel/error.h"

#define THREADS 256
#define CHUNK_BYTES ((int64_t)256 << 20) /* frames uploaded per chunk, at most */

struct mog2_model {
    float *weight, *mean, *variance; /* [nmixtures][pixels] */
    uint8_t *modes;                  /* [pixels] */
    uint8_t *frames, *foreground;    /* [chunk][pixels] */
    vl_mog2_frame *constants;        /* [chunk] */
};

__global__ static void mog2_chunk_kernel(mog2_model m, int64_t pixels, int64_t frames)
{
    int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (p >= pixels)
        return;
    float weight[VL_MOG2_MAX_MIXTURES], mean[VL_MOG2_MAX_MIXTURES], variance[VL_MOG2_MAX_MIXTURES];
    int modes = m.modes[p];
    for (int k = 0; k < modes; k++) {
        weight[k] = m.weight[k * pixels + p];
        mean[k] = m.mean[k * pixels + p];
        variance[k] = m.variance[k * pixels + p];
    }
    for (int64_t z = 0; z < frames; z++) {
        vl_mog2_frame frame = m.constants[z];
        m.foreground[z * pixels + p] =
            (uint8_t)vl_mog2_pixel(&frame, (float)m.frames[z * pixels + p], weight, mean, variance, &modes);
    }
    for (int k = 0; k < modes; k++) {
        m.weight[k * pixels + p] = weight[k];
        m.mean[k * pixels + p] = mean[k];
        m.variance[k * pixels + p] = variance[k];
    }
    m.modes[p] = (uint8_t)modes;
}

static void model_free(mog2_model *m)
{
    cudaFree(m->weight);
    cudaFree(m->mean);
    cudaFree(m->variance);
    cudaFree(m->modes);
    cudaFree(m->frames);
    cudaFree(m->foreground);
    cudaFree(m->constants);
}

static vl_status run_sequence(mog2_model *m, const uint8_t *frames, uint8_t *foreground, int64_t pixels, int64_t count,
                              const vl_mog2_params *params, const vl_progress *progress, int64_t chunk)
{
    const size_t plane = (size_t)pixels * sizeof(float);
    const int K = params->nmixtures;
    VL_CUDA_TRY(cudaMalloc(&m->weight, plane * K), "background: allocating the model");
    VL_CUDA_TRY(cudaMalloc(&m->mean, plane * K), "background: allocating the model");
    VL_CUDA_TRY(cudaMalloc(&m->variance, plane * K), "background: allocating the model");
    VL_CUDA_TRY(cudaMalloc(&m->modes, (size_t)pixels), "background: allocating the model");
    VL_CUDA_TRY(cudaMalloc(&m->frames, (size_t)(pixels * chunk)), "background: allocating frame buffers");
    VL_CUDA_TRY(cudaMalloc(&m->foreground, (size_t)(pixels * chunk)), "background: allocating frame buffers");
    VL_CUDA_TRY(cudaMalloc(&m->constants, (size_t)chunk * sizeof(vl_mog2_frame)), "background: allocating constants");
    VL_CUDA_TRY(cudaMemset(m->modes, 0, (size_t)pixels), "background: clearing the model");
    vl_mog2_frame *constants = (vl_mog2_frame *)malloc((size_t)chunk * sizeof(vl_mog2_frame));
    if (!constants)
        return vl_fail(VL_ERR_MEMORY, "background: out of host memory");
    const int blocks = (int)((pixels + THREADS - 1) / THREADS);
    vl_status status = VL_OK;
    for (int64_t first = 0; first < count && status == VL_OK; first += chunk) {
        int64_t n = count - first < chunk ? count - first : chunk;
        for (int64_t z = 0; z < n; z++)
            vl_mog2_frame_constants(params, first + z + 1, &constants[z]);
        cudaError_t error = cudaMemcpy(m->constants, constants, (size_t)n * sizeof(vl_mog2_frame), cudaMemcpyHostToDevice);
        if (error == cudaSuccess)
            error = cudaMemcpy(m->frames, frames + first * pixels, (size_t)(n * pixels), cudaMemcpyHostToDevice);
        if (error == cudaSuccess) {
            mog2_chunk_kernel<<<blocks, THREADS>>>(*m, pixels, n);
            error = cudaGetLastError();
        }
        if (error == cudaSuccess)
            error = cudaMemcpy(foreground + first * pixels, m->foreground, (size_t)(n * pixels), cudaMemcpyDeviceToHost);
        if (error != cudaSuccess)
            status = vl_cuda_failure(error, "background: running the model");
        else
            vl_progress_report(progress, "background model", (double)(first + n) / (double)count);
    }
    free(constants);
    return status;
}

extern "C" vl_status vl_background_mog2_gpu(const uint8_t *frames, uint8_t *foreground, int64_t pixels, int64_t count,
                                            const vl_mog2_params *params, const vl_progress *progress)
{
    if (pixels <= 0 || count <= 0)
        return VL_OK;
    int64_t chunk = CHUNK_BYTES / pixels;
    chunk = chunk < 1 ? 1 : chunk > count ? count : chunk;
    mog2_model m = {};
    vl_status status = run_sequence(&m, frames, foreground, pixels, count, params, progress, chunk);
    model_free(&m);
    return status;
}
