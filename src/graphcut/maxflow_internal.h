/* Internal: the GPU half of vl_maxflow (cuda/graphcut/maxflow_gpu.cu; cuda/no_cuda.c without CUDA). The CPU
 * half is the public vl_maxflow_cpu (src/graphcut/maxflow_cpu.c). */
#ifndef VL_GRAPHCUT_MAXFLOW_INTERNAL_H
#define VL_GRAPHCUT_MAXFLOW_INTERNAL_H

#include "voxlabel/graphcut.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Push-relabel with global relabelling; host pointers in and out, VL_ERR_DEVICE when it cannot run.
 * allow_persistent = 0 forces one launch per phase (the driver for grids that are not co-resident); 1 lets
 * small grids run in one cooperative launch. The flow is the same either way. */
vl_status vl_maxflow_gpu(const vl_grid_graph *graph, uint8_t *segment, int64_t relabel_interval, int allow_persistent,
                         vl_maxflow_result *result);

#ifdef __cplusplus
}
#endif
#endif
