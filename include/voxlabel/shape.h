/* voxlabel: per-slice 2D components and their shape measures (the thesis's shape stage, plus the usual
 * region properties), one row per (slice, 2D label). The CSV columns are documented in docs/stages2d.md.
 *
 * Coordinates follow OpenCV: x = column, y = row, 0-based pixel centres. Moments are raster moments of the
 * component's pixels (OpenCV moments(mask, binaryImage=true)); Hu invariants as OpenCV HuMoments; region
 * measures as scikit-image regionprops where a convention must be chosen (see each field). */
#ifndef VOXLABEL_SHAPE_H
#define VOXLABEL_SHAPE_H

#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/label.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VL_SHAPE_HISTOGRAM_BINS 100

typedef struct vl_shape_row {
    int64_t slice;
    uint32_t label;            /* 2D label within the slice */
    uint32_t label3d;          /* 3D label at the component's pixels, 0 when none was given */
    int64_t first_x, first_y;  /* the component's first pixel in MATLAB order (min x, then min y) */
    int64_t area;              /* pixels (= m00) */
    double perimeter_weighted; /* skimage `perimeter` (4-neighbour border; weights 1, sqrt2, (1+sqrt2)/2) */
    double perimeter_crofton;  /* skimage `perimeter_crofton`, 4 directions */
    double centroid_x, centroid_y;                    /* m10/m00, m01/m00 */
    int64_t bbox_left, bbox_top, bbox_width, bbox_height; /* as connectedComponentsWithStats */
    double orientation;        /* skimage: angle (rad) between the row axis and the major axis, -pi/2..pi/2 */
    double eccentricity;       /* sqrt(1 - l2/l1) of the covariance eigenvalues */
    double major_axis, minor_axis; /* 4 sqrt(l1), 4 sqrt(l2) */
    double circularity;        /* 4 pi area / perimeter_weighted^2 */
    int64_t convex_area;       /* pixel centres inside or on the convex hull of the pixel centres */
    double solidity;           /* area / convex_area */
    double extent;             /* area / (bbox_width * bbox_height) */
    int euler_number;          /* objects - holes, 8-connected object, 4-connected background */
    double m[10];              /* m00 m10 m01 m20 m11 m02 m30 m21 m12 m03 */
    double mu[7];              /* mu20 mu11 mu02 mu30 mu21 mu12 mu03 */
    double nu[7];              /* nu20 nu11 nu02 nu30 nu21 nu12 nu03 */
    double hu[7];
    double histogram[VL_SHAPE_HISTOGRAM_BINS]; /* contour-distance histogram, see vl_shape_histogram */
    double jm_reference;       /* Jeffries-Matusita distance to the reference histogram, NaN without one */
    /* MATLAB regionprops conventions (voxlabel shapes --matlab; docs/stages2d.md) */
    double matlab_perimeter;   /* Perimeter: outer 8-connected boundary, Vossepoel-Smeulders chain weights */
    int64_t matlab_convex_area; /* ConvexArea: pixels mostly inside the hull of the edge midpoints */
    double matlab_solidity;    /* Solidity: area / matlab_convex_area */
    double matlab_major_axis, matlab_minor_axis; /* MajorAxisLength, MinorAxisLength (second moments + 1/12) */
    double matlab_eccentricity;
    double matlab_orientation; /* Orientation: degrees, -90..90, counter-clockwise from the x axis, y up */
} vl_shape_row;

typedef struct vl_shape_table {
    vl_shape_row *rows;
    int64_t count;
    int has_label3d;
    int has_reference;
} vl_shape_table;

/* Measures every component of `labels`; `labels3d` (U32 or any integer volume, same size) is optional;
 * `reference` (VL_SHAPE_HISTOGRAM_BINS values) is optional and fills jm_reference. */
vl_status vl_shape_measure(const vl_slice_labels *labels, const vl_volume *labels3d, const double *reference,
                           vl_shape_table *table);
void vl_shape_table_free(vl_shape_table *table);

/* The thesis's contour-distance descriptor of one binary object (`mask`, width x height, nonzero =
 * object): contour pixels are object pixels with a 4-neighbour outside the object (or the image); their
 * distances to the object's centroid are divided by the largest one and binned into 100 equal bins over
 * [0, 1] (distance 1 goes to the last bin); the histogram is smoothed with a Gaussian of sigma 1 bin
 * (taps at -3..3, weights exp(-k^2/2) normalised, zero outside the bins) and scaled to unit sum.
 * An object whose contour pixels all sit on the centroid (a single pixel) puts everything in bin 0. */
vl_status vl_shape_histogram(const uint8_t *mask, int64_t width, int64_t height, double *histogram);

/* Jeffries-Matusita distance as the thesis uses it: sqrt(sum (sqrt h_i - sqrt r_i)^2), 0..sqrt(2). */
double vl_shape_jm_distance(const double *h, const double *r, int bins);

/* Writes shapes.csv atomically (header + one row per component; columns in docs/stages2d.md). */
vl_status vl_shape_write_csv(const char *path, const vl_shape_table *table, int force);
/* The same components as MATLAB regionprops names and gives them: 1-based coordinates, degrees (docs/stages2d.md). */
vl_status vl_shape_write_matlab_csv(const char *path, const vl_shape_table *table, int force);

#ifdef __cplusplus
}
#endif
#endif
