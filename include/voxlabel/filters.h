/* voxlabel: the ilastik pixel-feature filter bank (2D per slice or 3D) and offset features.
 *
 * Every channel is defined as scipy.ndimage computes it on the image as float64, so that scipy is the oracle, and
 * computed in float32 with fused multiply-adds, the same bits on the CPU and the GPU (docs/forest.md,
 * "Arithmetic"):
 *   - Gaussian kernels as scipy's _gaussian_kernel1d: radius int(truncate * sigma_voxels + 0.5), weights
 *     exp(-x^2 / 2s^2) normalised to sum 1, derivatives by the Hermite polynomial factor; applied axis after
 *     axis, each pass reading its own input with the 'reflect' border (d c b a | a b c d).
 *   - sigma is in mm: sigma_voxels = sigma / spacing on each axis; derivatives are per mm (divided by the
 *     spacing), so a model trained at one spacing means the same on another.
 *   - Per sigma, the families (bit set in vl_filter_bank.families[s]), in this channel order:
 *       smoothing    G(s) * I
 *       LoG          sum over axes of d2/dx_a2 (G(s) * I)
 *       gradient     |grad (G(s) * I)|
 *       DoG          G(s) * I - G(dog_ratio * s) * I
 *       structure    eigenvalues of G(s) * (grad_i grad_i^T), grad_i = gradient at st_inner_ratio * s,
 *                    descending (2 channels in 2D, 3 in 3D)
 *       Hessian      eigenvalues of the Hessian of G(s) * I, descending (2 or 3 channels)
 *   - 2D banks filter each slice on its own (x and y only); 3D banks filter x, y and z.
 * The default bank is ilastik's: sigma 0.3 (smoothing only), 0.7, 1.0, 1.6, 3.5, 5.0, 10.0 (all families):
 * 49 channels in 2D, 61 in 3D.
 *
 * Offset features (Shotton et al.; Pianu et al.'s seed) follow the bank: I(p + u) - I(p + v) on the raw image,
 * u and v whole voxel offsets, 'reflect' border; they cost two reads each and are evaluated on the fly. */
#ifndef VOXLABEL_FILTERS_H
#define VOXLABEL_FILTERS_H
#include <stdint.h>
#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"
#ifdef __cplusplus
extern "C" {
#endif

#define VL_FILTER_MAX_SIGMAS 16
#define VL_FILTER_MAX_OFFSETS 256
#define VL_FILTER_MAX_CHANNELS (VL_FILTER_MAX_SIGMAS * 10 + VL_FILTER_MAX_OFFSETS)

enum {
    VL_FAMILY_SMOOTHING = 1,
    VL_FAMILY_LOG = 2,
    VL_FAMILY_GRADIENT = 4,
    VL_FAMILY_DOG = 8,
    VL_FAMILY_STRUCTURE = 16,
    VL_FAMILY_HESSIAN = 32,
    VL_FAMILY_ALL = 63
};

typedef struct vl_filter_bank {
    int dims;                               /* 2: per slice (x, y); 3: x, y, z */
    int sigma_count;
    double sigmas[VL_FILTER_MAX_SIGMAS];    /* mm */
    unsigned families[VL_FILTER_MAX_SIGMAS];/* VL_FAMILY_* bits for each sigma */
    double truncate;                        /* kernel radius in sigmas (scipy's truncate), default 4.0 */
    double dog_ratio;                       /* DoG inner sigma / sigma, default 0.66 */
    double st_inner_ratio;                  /* structure tensor inner sigma / sigma, default 0.5 */
    int offset_count;
    int32_t offsets[VL_FILTER_MAX_OFFSETS][6]; /* u (x,y,z) then v (x,y,z) in voxels; z = 0 in 2D */
} vl_filter_bank;

/* ilastik's bank for `dims` (2 or 3), no offset features. */
void vl_filter_bank_default(vl_filter_bank *bank, int dims);
/* Replaces the sigmas with `count` values: the first value below 0.5 mm gets smoothing only, as in ilastik. */
vl_status vl_filter_bank_set_sigmas(vl_filter_bank *bank, const double *sigmas, int count);
/* Adds `count` offset features drawn from `seed`: u and v uniform in +-radius_mm on each filtered axis
 * (in voxels from `spacing`), u != v. */
vl_status vl_filter_bank_add_offsets(vl_filter_bank *bank, int count, double radius_mm, const double spacing[3],
                                     uint64_t seed);
/* VL_ERR_ARGUMENT with the reason when the bank is not usable (dims, sigma range, counts). */
vl_status vl_filter_bank_check(const vl_filter_bank *bank);
int vl_filter_bank_channels(const vl_filter_bank *bank);
/* "hessian_eig1_s3.50" and so on: family, component, sigma; "offset_7" for offset features. */
void vl_filter_bank_channel_name(const vl_filter_bank *bank, int channel, char *name, size_t size);
/* 1 when two banks compute the same channels. */
int vl_filter_bank_equal(const vl_filter_bank *a, const vl_filter_bank *b);

/* A box of voxels [lo, hi) on each axis. */
typedef struct vl_box {
    int64_t lo[3], hi[3];
} vl_box;

/* Every channel of `bank` on the voxels of `box` of `image` (any dtype, geometry spacing used), as float32,
 * channel after channel, each x fastest over the box. The result depends only on the voxel, never on the box:
 * a box's channels equal the same voxels of the whole volume's, bit for bit. `threads` 0 = all cores. */
vl_status vl_filters_compute(const vl_volume *image, const vl_filter_bank *bank, const vl_box *box, float *channels,
                             int threads);

#ifdef __cplusplus
}
#endif
#endif
