/* Internal: geometry helpers of the shape statistics (src/stats/stats_shape.c). */
#ifndef VL_STATS_SHAPE_H
#define VL_STATS_SHAPE_H

#include "voxlabel/volume.h"

/* Eigenvalues (descending) and unit eigenvectors (columns of row-major `vectors`) of a symmetric 3x3 matrix. */
void vl_stats_eigen_symmetric3(const double matrix[9], double values[3], double vectors[9]);
/* Physical length (mm) of the lattice step of a line class. */
double vl_stats_step_length(const vl_geometry *geometry, int direction_class);
/* Physical area (mm^2) of a voxel face normal to index axis 0, 1 or 2. */
double vl_stats_face_area(const vl_geometry *geometry, int axis);

#endif
