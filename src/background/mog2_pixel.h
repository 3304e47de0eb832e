/* Internal: one MOG2 update of one grey pixel, shared by the CPU reference (mog2_cpu.c) and the GPU half
 * (cuda/background/mog2_gpu.cu) so that both compute the same single-precision values. Every product and sum
 * goes through MUL/ADD/SUB/DIV, which the GPU maps to round-to-nearest intrinsics: a fused multiply-add would
 * round differently from the CPU and from OpenCV. The steps follow OpenCV's BackgroundSubtractorMOG2 for
 * one channel with shadows off, including its quirks: a pruned mode shortens the loop over modes at once, and
 * the loop continues past a mode that was moved up after a match. */
#ifndef VL_BACKGROUND_MOG2_PIXEL_H
#define VL_BACKGROUND_MOG2_PIXEL_H

#include <float.h>

#ifdef __CUDACC__
#define VL_MOG2_FN __host__ __device__ static inline
#else
#define VL_MOG2_FN static inline
#endif

#if defined(__CUDA_ARCH__)
#define MOG2_MUL(a, b) __fmul_rn((a), (b))
#define MOG2_ADD(a, b) __fadd_rn((a), (b))
#define MOG2_SUB(a, b) __fsub_rn((a), (b))
#define MOG2_DIV(a, b) __fdiv_rn((a), (b))
#else
#define MOG2_MUL(a, b) ((float)((a) * (b)))
#define MOG2_ADD(a, b) ((float)((a) + (b)))
#define MOG2_SUB(a, b) ((float)((a) - (b)))
#define MOG2_DIV(a, b) ((float)((a) / (b)))
#endif

/* Per-frame constants: alpha = (float)rate, one_minus_alpha = 1 - alpha, prune = (float)(-rate * prior). */
typedef struct vl_mog2_frame {
    float alpha, one_minus_alpha, prune;
    float var_threshold, background_ratio, var_threshold_gen, var_init, var_min, var_max;
    int nmixtures;
} vl_mog2_frame;

/* Updates the modes (weight, mean, variance; the first *modes in use, heaviest first) with `value` and returns
 * 1 when the pixel is foreground. */
VL_MOG2_FN int vl_mog2_pixel(const vl_mog2_frame *f, float value, float *weight, float *mean, float *variance,
                             int *modes)
{
    int background = 0, fits = 0, used = *modes;
    float total = 0.f;
    for (int m = 0; m < used; m++) {
        float w = MOG2_ADD(MOG2_MUL(f->one_minus_alpha, weight[m]), f->prune);
        int moved = 0;
        if (!fits) {
            float var = variance[m];
            float diff = MOG2_SUB(mean[m], value);
            float dist2 = MOG2_MUL(diff, diff);
            if (total < f->background_ratio && dist2 < MOG2_MUL(f->var_threshold, var))
                background = 1;
            if (dist2 < MOG2_MUL(f->var_threshold_gen, var)) {
                fits = 1;
                w = MOG2_ADD(w, f->alpha);
                float k = MOG2_DIV(f->alpha, w);
                mean[m] = MOG2_SUB(mean[m], MOG2_MUL(k, diff));
                float updated = MOG2_ADD(var, MOG2_MUL(k, MOG2_SUB(dist2, var)));
                updated = updated < f->var_min ? f->var_min : updated;
                updated = updated > f->var_max ? f->var_max : updated;
                variance[m] = updated;
                /* Only this mode grew: move it up past lighter ones (weights above it are not updated yet). */
                for (int i = m; i > 0 && !(w < weight[i - 1]); i--) {
                    float t = weight[i]; weight[i] = weight[i - 1]; weight[i - 1] = t;
                    t = variance[i]; variance[i] = variance[i - 1]; variance[i - 1] = t;
                    t = mean[i]; mean[i] = mean[i - 1]; mean[i - 1] = t;
                    moved++;
                }
            }
        }
        if (w < -f->prune) {
            w = 0.f;
            used--;
        }
        weight[m - moved] = w;
        total = MOG2_ADD(total, w);
    }
    float inverse = 0.f;
    if ((total < 0.f ? -total : total) > FLT_EPSILON)
        inverse = MOG2_DIV(1.f, total);
    for (int m = 0; m < used; m++)
        weight[m] = MOG2_MUL(weight[m], inverse);
    if (!fits && f->alpha > 0.f) {
        int m = used == f->nmixtures ? f->nmixtures - 1 : used++;
        if (used == 1) {
            weight[m] = 1.f;
        } else {
            weight[m] = f->alpha;
            for (int i = 0; i < used - 1; i++)
                weight[i] = MOG2_MUL(weight[i], f->one_minus_alpha);
        }
        mean[m] = value;
        variance[m] = f->var_init;
        for (int i = used - 1; i > 0 && !(f->alpha < weight[i - 1]); i--) {
            float t = weight[i]; weight[i] = weight[i - 1]; weight[i - 1] = t;
            t = variance[i]; variance[i] = variance[i - 1]; variance[i - 1] = t;
            t = mean[i]; mean[i] = mean[i - 1]; mean[i - 1] = t;
        }
    }
    *modes = used;
    return !background;
}

#endif
