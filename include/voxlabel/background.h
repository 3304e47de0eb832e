/* voxlabel: background modelling of frame sequences (cine ultrasound, XA/XRF, any volume read as frames
 * along z) with Zivkovic's adaptive Gaussian mixtures, MOG2, as OpenCV's BackgroundSubtractorMOG2 runs it
 * on 8-bit grey frames with detectShadows off.
 *
 * Every pixel keeps up to `nmixtures` Gaussian modes (weight, mean, variance), sorted by weight. A frame
 * updates the model with the learning rate 1/min(2 * frame_number, history) (frame_number counts from 1)
 * unless learning_rate >= 0 is given, and a pixel is background when it lies within var_threshold
 * variances of one of the heaviest modes whose weights sum to less than background_ratio. The arithmetic
 * is OpenCV's, in single precision, step for step, on the CPU and on the GPU alike. */
#ifndef VOXLABEL_BACKGROUND_H
#define VOXLABEL_BACKGROUND_H

#include <stdint.h>

#include "voxlabel/device.h"
#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VL_MOG2_MAX_MIXTURES 8

typedef struct vl_mog2_params {
    int history;                /* 500: frames that shape the automatic learning rate */
    float var_threshold;        /* 16: squared Mahalanobis distance under which a pixel is background */
    int nmixtures;              /* 5 (1..VL_MOG2_MAX_MIXTURES) */
    float background_ratio;     /* 0.9: weight share of the modes that make up the background */
    float var_threshold_gen;    /* 9: distance under which a pixel updates a mode instead of adding one */
    float var_init;             /* 15: variance of a new mode */
    float var_min, var_max;     /* 4, 75: clamp of every variance */
    float complexity_reduction; /* 0.05: prior that prunes weak modes */
    double learning_rate;       /* -1: automatic; 0..1 fixed */
} vl_mog2_params;

/* OpenCV 4 defaults (createBackgroundSubtractorMOG2(500, 16, false)). */
void vl_mog2_params_default(vl_mog2_params *params);
vl_status vl_mog2_params_validate(const vl_mog2_params *params);

typedef struct vl_background_options {
    vl_mog2_params mog2;
    vl_device device;           /* default AUTO */
    vl_progress progress;
} vl_background_options;

void vl_background_options_default(vl_background_options *options);

/* Runs MOG2 over the z-slices of `frames` (U8, nx * ny per frame, nz >= 2 frames) and writes
 * `foreground` (created here: U8, same size and geometry, 1 = foreground, 0 = background). On the GPU the
 * model stays in device memory for the whole sequence. `outcome` (may be NULL) says where it ran. */
vl_status vl_background_mog2(const vl_volume *frames, vl_volume *foreground, const vl_background_options *options,
                             vl_device_outcome *outcome);

/* Frames as 8-bit grey: U8 as they are; any other dtype mapped linearly from the sequence's minimum..maximum
 * to 0..255 (round half up); a constant sequence maps to 0; NaN or infinity is VL_ERR_INPUT. */
vl_status vl_background_frames_u8(const vl_volume *volume, vl_volume *frames);

#ifdef __cplusplus
}
#endif
#endif
