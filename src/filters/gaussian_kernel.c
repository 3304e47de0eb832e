#include <math.h>

#include "filters/gaussian_kernel.h"

int vl_gaussian_radius(double sigma_voxels, double truncate)
{
    const double radius = truncate * sigma_voxels + 0.5;
    return radius >= VL_KERNEL_MAX_RADIUS ? VL_KERNEL_MAX_RADIUS : (int)radius;
}

/* phi(x) = exp(-x^2 / 2s^2) / sum; order 1 multiplies by -x/s^2, order 2 by x^2/s^4 - 1/s^2 (the derivatives
 * of the Gaussian expressed through its Hermite factor, as scipy builds them). */
void vl_gaussian_kernel(double sigma_voxels, int order, int radius, double *weights)
{
    const double s2 = sigma_voxels * sigma_voxels;
    double sum = 0;
    for (int x = -radius; x <= radius; x++)
        sum += weights[radius + x] = exp(-0.5 / s2 * (double)x * (double)x);
    for (int x = -radius; x <= radius; x++) {
        const double phi = weights[radius + x] / sum;
        double factor = 1;
        if (order == 1)
            factor = -(double)x / s2;
        else if (order == 2)
            factor = (double)x * (double)x / (s2 * s2) - 1 / s2;
        weights[radius + x] = factor * phi;
    }
}

void vl_gaussian_taps(double sigma_voxels, int order, int radius, float *taps)
{
    double weights[2 * VL_KERNEL_MAX_RADIUS + 1];
    vl_gaussian_kernel(sigma_voxels, order, radius, weights);
    for (int j = 0; j <= 2 * radius; j++)
        taps[j] = (float)weights[2 * radius - j];
}
