/* Internal: one-dimensional Gaussian mixtures fitted by EM, the intensity model of the seeded cut. */
#ifndef VL_GRAPHCUT_GMM1D_H
#define VL_GRAPHCUT_GMM1D_H

#include <stdint.h>

#include "voxlabel/error.h"

#define VL_GMM_MAX_COMPONENTS 16

typedef struct vl_gmm1d {
    int components;
    double weight[VL_GMM_MAX_COMPONENTS], mean[VL_GMM_MAX_COMPONENTS], variance[VL_GMM_MAX_COMPONENTS];
} vl_gmm1d;

/* Fits up to `components` Gaussians to `samples` (count >= 1): means start at evenly spaced quantiles, then
 * 30 EM steps. Variances are floored at 1e-4 of the samples' variance (and at 1e-6), so that a class
 * with constant intensity keeps a finite density. Deterministic. */
vl_status vl_gmm1d_fit(const double *samples, int64_t count, int components, vl_gmm1d *gmm);
/* ln p(x) under the mixture. */
double vl_gmm1d_log_density(const vl_gmm1d *gmm, double x);

#endif
