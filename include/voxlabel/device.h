/* voxlabel: where a stage runs, and what happened when it ran.
 *
 * Every stage that has a GPU half (labelling, statistics, morphology, colour, slice labels) takes a
 * vl_device and reports a vl_device_outcome. One policy decides for all of them (src/core/device.c):
 *   cpu    the CPU reference.
 *   gpu:N  CUDA device N, or VL_ERR_DEVICE when it is not usable; no fallback.
 *   auto   device N when it is usable; the CPU when it is not (outcome.fallback_reason says why), and
 *          the CPU again when the GPU runs out of memory or fails (outcome.gpu_failed is then set). */
#ifndef VOXLABEL_DEVICE_H
#define VOXLABEL_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_device_kind {
    VL_DEVICE_AUTO = 0, /* a GPU when one is usable, else the CPU */
    VL_DEVICE_CPU,
    VL_DEVICE_GPU
} vl_device_kind;

typedef struct vl_device {
    vl_device_kind kind;  /* default VL_DEVICE_AUTO */
    int gpu_index;        /* CUDA device ordinal for GPU and AUTO; default 0 */
    uint64_t gpu_memory;  /* device bytes a stage may plan with; 0 = what the device has free */
} vl_device;

typedef struct vl_device_outcome {
    vl_device_kind used;       /* VL_DEVICE_CPU or VL_DEVICE_GPU */
    char fallback_reason[256]; /* why AUTO ran on the CPU, "" when it did not fall back */
    int gpu_failed;            /* AUTO fell back because a usable GPU failed (out of memory, CUDA error) */
} vl_device_outcome;

/* AUTO, GPU 0, no memory budget. */
void vl_device_default(vl_device *device);
/* Parses "auto", "cpu", "gpu" (GPU 0) or "gpu:N" (0 <= N < 1024) into kind and gpu_index. */
vl_status vl_device_parse(const char *text, vl_device *device);
/* "auto", "cpu" or "gpu". */
const char *vl_device_kind_name(vl_device_kind kind);

/* 1 when CUDA device `gpu_index` can run this build's kernels; otherwise 0 with the reason in `why`.
 * The first call on a host creates the CUDA context, which is slow on a cold host. */
int vl_device_gpu_usable(int gpu_index, char *why, size_t why_size);
/* "NVIDIA H200 (gpu:0)", or "gpu:N" when the device cannot be asked. */
void vl_device_gpu_name(int gpu_index, char *name, size_t name_size);

typedef enum vl_device_notice {
    VL_DEVICE_NOTICE_NONE = 0, /* ran where it was asked to */
    VL_DEVICE_NOTICE_NOTE,     /* AUTO found no usable GPU and ran on the CPU */
    VL_DEVICE_NOTICE_WARNING   /* AUTO's GPU failed and the CPU redid the work */
} vl_device_notice;

/* What a caller should tell its user about `outcome` of `stage` ("labelled", "statistics", ...): the
 * kind of notice and, unless NONE, its text in `text`. */
vl_device_notice vl_device_outcome_notice(const vl_device_outcome *outcome, const char *stage, char *text,
                                          size_t text_size);

#ifdef __cplusplus
}
#endif
#endif
