/* Internal, CUDA sources only: the one way a GPU half turns a CUDA error into a vl_status. */
#ifndef VL_CUDA_CHECK_H
#define VL_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "voxlabel/error.h"

/* Clears CUDA's sticky last error and records "gpu: <what>: <CUDA's reason>": VL_ERR_MEMORY for an
 * allocation failure (AUTO then retries on the CPU), VL_ERR_DEVICE otherwise. */
vl_status vl_cuda_failure(cudaError_t error, const char *what);

/* Makes CUDA device `gpu_index` current on the calling thread, so that `--device gpu:N` reaches every
 * stage whatever thread it runs on. */
vl_status vl_cuda_select(int gpu_index);

/* Returns from the enclosing function with vl_cuda_failure when `call` fails. */
#define VL_CUDA_TRY(call, what)                       \
    do {                                              \
        cudaError_t vl_cuda_error_ = (call);          \
        if (vl_cuda_error_ != cudaSuccess)            \
            return vl_cuda_failure(vl_cuda_error_, what); \
    } while (0)

#endif
