/* Internal: the CUDA labeller behind vl_label_volume.
 * Implemented in cuda/ (built when a CUDA toolkit is found) and by src/label_gpu_nocuda.c otherwise. */
#ifndef VL_LABEL_GPU_H
#define VL_LABEL_GPU_H

#include <stddef.h>

#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns 1 when CUDA device `gpu_index` can run the labeller; otherwise 0 with the reason in `why`. */
int vl_gpu_usable(int gpu_index, char *why, size_t why_size);

/* Same contract and bit-identical results as vl_label_volume_cpu. */
vl_status vl_label_volume_gpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result);

#ifdef __cplusplus
}
#endif
#endif
