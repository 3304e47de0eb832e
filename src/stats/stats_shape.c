/* Shape helpers: the symmetric 3x3 eigen-decomposition and the Crofton direction weights. */
#include <math.h>
#include <string.h>

#include "stats/stats_internal.h"
#include "stats/stats_shape.h"

/* Cyclic Jacobi rotations: robust for the small, well-conditioned covariance matrices met here, and exact
 * for diagonal ones (a cube gives its eigenvalues untouched). Eigenvalues come out descending, the
 * eigenvectors as the matching columns of `vectors` (row-major), each signed so that its largest
 * component is positive. */
void vl_stats_eigen_symmetric3(const double matrix[9], double values[3], double vectors[9])
{
    double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            a[r][c] = 0.5 * (matrix[3 * r + c] + matrix[3 * c + r]);
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        double scale = fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]);
        if (off == 0 || off <= 1e-300 || off < 1e-17 * scale)
            break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                if (a[p][q] == 0)
                    continue;
                const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                const double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                const double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; k++) {
                    const double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    const double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) {
                    const double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (a[order[j]][order[j]] > a[order[i]][order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int i = 0; i < 3; i++) {
        const int column = order[i];
        values[i] = a[column][column];
        int largest = 0;
        for (int k = 1; k < 3; k++)
            if (fabs(v[k][column]) > fabs(v[largest][column]))
                largest = k;
        const double sign = v[largest][column] < 0 ? -1.0 : 1.0;
        for (int k = 0; k < 3; k++)
            vectors[3 * k + i] = sign * v[k][column];
    }
}

/* Physical vector of the lattice step (dx, dy, dz): direction * diag(spacing) * d. */
static void physical_step(const vl_geometry *g, const int d[3], double out[3])
{
    for (int r = 0; r < 3; r++)
        out[r] = g->direction[3 * r] * g->spacing[0] * d[0] + g->direction[3 * r + 1] * g->spacing[1] * d[1] +
                 g->direction[3 * r + 2] * g->spacing[2] * d[2];
}

void vl_stats_crofton_weights(const vl_geometry *geometry, double weights[VL_STATS_DIRECTIONS])
{
    double unit[VL_STATS_DIRECTIONS][3];
    for (int c = 0; c < VL_STATS_DIRECTIONS; c++) {
        physical_step(geometry, vl_stats_direction[c], unit[c]);
        const double length = sqrt(unit[c][0] * unit[c][0] + unit[c][1] * unit[c][1] + unit[c][2] * unit[c][2]);
        for (int r = 0; r < 3; r++)
            unit[c][r] /= length;
        weights[c] = 0;
    }
    /* Quadrature over a Fibonacci lattice on the half-sphere z >= 0 (lines are symmetric under u -> -u):
     * each point votes for the line class nearest to it in angle. */
    enum { points = 200000 };
    const double golden = 3.14159265358979323846 * (3.0 - sqrt(5.0));
    for (int i = 0; i < points; i++) {
        const double z = (i + 0.5) / points, radius = sqrt(1 - z * z), phi = golden * i;
        const double u[3] = {radius * cos(phi), radius * sin(phi), z};
        int best = 0;
        double best_dot = -1;
        for (int c = 0; c < VL_STATS_DIRECTIONS; c++) {
            const double dot = fabs(u[0] * unit[c][0] + u[1] * unit[c][1] + u[2] * unit[c][2]);
            if (dot > best_dot) {
                best_dot = dot;
                best = c;
            }
        }
        weights[best] += 1.0 / points;
    }
}

double vl_stats_step_length(const vl_geometry *geometry, int direction_class)
{
    double step[3];
    physical_step(geometry, vl_stats_direction[direction_class], step);
    return sqrt(step[0] * step[0] + step[1] * step[1] + step[2] * step[2]);
}

double vl_stats_face_area(const vl_geometry *geometry, int axis)
{
    /* A face normal to `axis` is spanned by the other two physical edges. */
    static const int unit[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    double a[3], b[3];
    physical_step(geometry, unit[(axis + 1) % 3], a);
    physical_step(geometry, unit[(axis + 2) % 3], b);
    const double cross[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return sqrt(cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]);
}
