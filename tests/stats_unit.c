/* Unit tests of the statistics CPU reference: the regionprops3 documentation cube, hand-checked values,
 * and a brute-force per-voxel oracle on random label volumes (every field, several thread counts). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats_internal.h"
#include "test_check.h"
#include "voxlabel/stats.h"

static vl_component_stats *compute(const vl_volume *labels, const vl_volume *intensity, uint32_t count,
                                   vl_stats_level level, int threads)
{
    vl_stats_options options;
    vl_stats_options_default(&options);
    options.level = level;
    options.threads = threads;
    options.device.kind = VL_DEVICE_CPU;
    vl_component_stats *stats = NULL;
    CHECK(vl_component_stats_compute(labels, intensity, count, &options, &stats) == VL_OK, "compute failed");
    return stats;
}

/* matlab.md section 6: padarray(ones(3,3,3),[3 3],0,'both'), a 9x9x3 volume. */
static void test_documentation_cube(void)
{
    vl_volume labels;
    vl_volume_create(&labels, 9, 9, 3, VL_U8);
    for (int z = 0; z < 3; z++)
        for (int y = 3; y < 6; y++)
            for (int x = 3; x < 6; x++)
                ((uint8_t *)labels.data)[x + 9 * (y + 9 * z)] = 1;
    for (int threads = 1; threads <= 3; threads++) {
        vl_component_stats *s = compute(&labels, NULL, 1, VL_STATS_FULL, threads);
        if (!s)
            continue;
        CHECK_TRUE(s->label == 1 && s->voxels == 27);
        for (int axis = 0; axis < 2; axis++) {
            CHECK_NEAR(s->centroid_voxel[axis] + 1, 5, 1e-15);
            CHECK_TRUE(s->bbox_min[axis] == 3 && s->bbox_max[axis] == 5);
        }
        CHECK_NEAR(s->centroid_voxel[2] + 1, 2, 1e-15);
        CHECK_TRUE(s->bbox_min[2] == 0 && s->bbox_max[2] == 2);
        CHECK_NEAR(s->equivalent_diameter_voxels, 3.7221, 1e-4);
        CHECK_NEAR(s->extent, 1, 1e-15);
        for (int i = 0; i < 3; i++) {
            CHECK_NEAR(s->matlab_eigenvalues[i], 0.75, 1e-14);
            CHECK_NEAR(s->matlab_axis_length[i], 3.8730, 1e-4);
            CHECK_NEAR(s->matlab_axis_length_old[i], 3.4641, 1e-4);
            CHECK_NEAR(s->principal_moments_mm2[i], 2.0 / 3.0, 1e-14);
        }
        CHECK_NEAR(s->convex_volume_voxels, 27, 0); /* MATLAB: ConvexVolume 27, Solidity 1 */
        CHECK_NEAR(s->solidity, 1, 0);
        CHECK_TRUE(s->euler_number == 1);
        CHECK_TRUE(s->surface_faces == 54);
        CHECK_NEAR(s->surface_area_faces_mm2, 54, 1e-15);
        CHECK_TRUE(s->border_voxels == 18); /* slices z = 0 and z = 2 lie on the volume's faces */
        CHECK_NEAR(s->elongation, 1, 1e-12);
        CHECK_NEAR(s->flatness, 1, 1e-12);
        CHECK_TRUE(isnan(s->intensity_mean) && isnan(s->intensity_median));
        /* The Crofton estimate of an axis-aligned cube is known to fall a few % short of the face area. */
        /* Crofton by hand: 2 sum_c w_c N_c / |d_c| with N = 18 (axes), 2n(2n-1) = 30 (face diagonals),
         * 2(n^3 - (n-1)^3) = 38 (body diagonals) and the isotropic weights below: 41.07, under the 54 faces. */
        CHECK_NEAR(s->surface_area_crofton_mm2,
                   2 * (2 * 0.04577789120476 * 3 * 18 + 2 * 0.03698062787608 * 6 * 30 / sqrt(2) +
                        2 * 0.03519563978232 * 4 * 38 / sqrt(3)),
                   2e-3);
        vl_component_stats_free(s);
    }
    vl_volume_free(&labels);
}

/* Isotropic lattices: the Voronoi solid-angle weights of the 3 axis, 6 face and 4 body diagonal lines. */
static void test_crofton_weights(void)
{
    vl_geometry g;
    vl_geometry_identity(&g);
    double w[VL_STATS_DIRECTIONS];
    vl_stats_crofton_weights(&g, w);
    double total = 0;
    for (int c = 0; c < VL_STATS_DIRECTIONS; c++)
        total += w[c];
    CHECK_NEAR(total, 1, 1e-12);
    for (int c = 0; c < 3; c++)
        CHECK_NEAR(w[c], 2 * 0.04577789120476, 2e-3);
    for (int c = 3; c < 9; c++)
        CHECK_NEAR(w[c], 2 * 0.03698062787608, 2e-3);
    for (int c = 9; c < 13; c++)
        CHECK_NEAR(w[c], 2 * 0.03519563978232, 2e-3);
}

/* A digital ball: the Crofton area is close to 4 pi r^2, the face count overshoots by about 1.5x. */
static void test_ball_surface(void)
{
    const int n = 41;
    const double r = 15, c = 20;
    vl_volume labels;
    vl_volume_create(&labels, n, n, n, VL_U8);
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++)
                if ((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c) <= r * r)
                    ((uint8_t *)labels.data)[x + n * (y + n * z)] = 1;
    vl_component_stats *s = compute(&labels, NULL, 1, VL_STATS_FULL, 2);
    if (s) {
        const double sphere = 4 * 3.14159265358979 * r * r;
        CHECK_TRUE(fabs(s->surface_area_crofton_mm2 / sphere - 1) < 0.03);
        CHECK_TRUE(fabs(s->surface_area_mm2 / sphere - 1) < 0.02);
        CHECK_TRUE(s->surface_area_faces_mm2 / sphere > 1.3);
        CHECK_TRUE(s->sphericity_crofton > 0.95 && s->sphericity_crofton < 1.05);
        CHECK_TRUE(s->sphericity > 0.98 && s->sphericity <= 1.0);
        /* Uniform ball: covariance r^2/5 on each axis (digitised: within 2%). */
        CHECK_TRUE(fabs(s->principal_moments_mm2[0] / (r * r / 5) - 1) < 0.02);
        vl_component_stats_free(s);
    }
    vl_volume_free(&labels);
}

/* ---- brute-force oracle: every voxel, every neighbour, no runs, no closed forms ---- */

typedef struct oracle {
    uint64_t voxels, border, crossings[VL_STATS_DIRECTIONS];
    int64_t lo[3], hi[3];
    double sum[3], moment[3][3];
    double vmin, vmax, vsum, vsum2, wsum[3];
    double *values;
    uint64_t nvalues;
} oracle;

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_random_against_oracle(unsigned seed, int nx, int ny, int nz, uint32_t count, vl_dtype label_type,
                                       int anisotropic)
{
    srand(seed);
    vl_volume labels, intensity;
    vl_volume_create(&labels, nx, ny, nz, label_type);
    vl_volume_create(&intensity, nx, ny, nz, VL_I16);
    if (anisotropic) {
        labels.geometry.spacing[0] = 0.7;
        labels.geometry.spacing[1] = 0.8;
        labels.geometry.spacing[2] = 2.5;
        labels.geometry.origin[0] = -100;
        labels.geometry.origin[2] = 40;
    }
    const int64_t voxels = (int64_t)nx * ny * nz;
    uint32_t *truth = malloc(sizeof(uint32_t) * (size_t)voxels);
    for (int64_t i = 0; i < voxels; i++) {
        /* Blocky labels so that runs, repeats and background all occur. */
        uint32_t value = (rand() % 3 == 0) ? 0 : (uint32_t)(rand() % count) + 1;
        if (i > 0 && rand() % 2)
            value = truth[i - 1];
        truth[i] = value;
        if (label_type == VL_U8) ((uint8_t *)labels.data)[i] = (uint8_t)value;
        else if (label_type == VL_U16) ((uint16_t *)labels.data)[i] = (uint16_t)value;
        else ((uint32_t *)labels.data)[i] = value;
        ((int16_t *)intensity.data)[i] = (int16_t)(rand() % 3000 - 1000);
    }
    oracle *o = calloc(count, sizeof *o);
    for (uint32_t k = 0; k < count; k++) {
        o[k].vmin = INFINITY;
        o[k].vmax = -INFINITY;
        o[k].values = malloc(sizeof(double) * (size_t)voxels);
        for (int a = 0; a < 3; a++) {
            o[k].lo[a] = INT64_MAX;
            o[k].hi[a] = INT64_MIN;
        }
    }
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                const int64_t i = x + (int64_t)nx * (y + (int64_t)ny * z);
                const uint32_t a = truth[i];
                if (!a)
                    continue;
                oracle *q = &o[a - 1];
                const int64_t p[3] = {x, y, z};
                q->voxels++;
                q->border += x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
                for (int r = 0; r < 3; r++) {
                    q->lo[r] = p[r] < q->lo[r] ? p[r] : q->lo[r];
                    q->hi[r] = p[r] > q->hi[r] ? p[r] : q->hi[r];
                    q->sum[r] += (double)p[r];
                    for (int c = 0; c < 3; c++)
                        q->moment[r][c] += (double)p[r] * (double)p[c];
                }
                const double v = ((int16_t *)intensity.data)[i];
                q->vmin = fmin(q->vmin, v);
                q->vmax = fmax(q->vmax, v);
                q->vsum += v;
                q->vsum2 += v * v;
                for (int r = 0; r < 3; r++)
                    q->wsum[r] += v * (double)p[r];
                q->values[q->nvalues++] = v;
                for (int dz = -1; dz <= 1; dz++)
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            if (!dx && !dy && !dz)
                                continue;
                            const int xx = x + dx, yy = y + dy, zz = z + dz;
                            const int outside = xx < 0 || yy < 0 || zz < 0 || xx >= nx || yy >= ny || zz >= nz;
                            if (outside || truth[xx + (int64_t)nx * (yy + (int64_t)ny * zz)] != a)
                                q->crossings[vl_stats_direction_class(dx, dy, dz)]++;
                        }
            }
    const vl_volume *intensities[2] = {&intensity, NULL};
    for (int with = 0; with < 2; with++)
        for (int threads = 1; threads <= 4; threads += 3) {
            vl_component_stats *s = compute(&labels, intensities[with], count, VL_STATS_FULL, threads);
            if (!s)
                continue;
            for (uint32_t k = 0; k < count; k++) {
                const oracle *q = &o[k];
                const vl_component_stats *t = &s[k];
                CHECK_TRUE(t->label == k + 1 && t->voxels == q->voxels);
                if (!q->voxels) {
                    CHECK_TRUE(isnan(t->centroid_voxel[0]));
                    continue;
                }
                const double n = (double)q->voxels;
                CHECK_TRUE(t->border_voxels == q->border);
                uint64_t faces = 0;
                for (int c = 0; c < 3; c++)
                    faces += q->crossings[c];
                CHECK_TRUE(t->surface_faces == faces);
                double covariance[9];
                for (int r = 0; r < 3; r++) {
                    CHECK_TRUE(t->bbox_min[r] == q->lo[r] && t->bbox_max[r] == q->hi[r]);
                    CHECK_NEAR(t->centroid_voxel[r], q->sum[r] / n, 1e-12);
                    for (int c = 0; c < 3; c++)
                        covariance[3 * r + c] = q->moment[r][c] / n - q->sum[r] * q->sum[c] / (n * n);
                }
                /* Trace and determinant of the MATLAB matrix against the eigenvalues. */
                double trace = 0, product = 1;
                for (int i = 0; i < 3; i++) {
                    trace += t->matlab_eigenvalues[i];
                    product *= t->matlab_eigenvalues[i];
                }
                double m[9];
                memcpy(m, covariance, sizeof m);
                for (int i = 0; i < 3; i++)
                    m[4 * i] += 1.0 / 12;
                const double determinant = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                                           m[2] * (m[3] * m[7] - m[4] * m[6]);
                CHECK_NEAR(trace, m[0] + m[4] + m[8], 1e-9);
                CHECK_NEAR(product, determinant, 1e-8);
                CHECK_TRUE(t->matlab_eigenvalues[0] >= t->matlab_eigenvalues[1] &&
                      t->matlab_eigenvalues[1] >= t->matlab_eigenvalues[2]);
                double lps[3];
                vl_geometry_index_to_lps(&labels.geometry, q->sum[0] / n, q->sum[1] / n, q->sum[2] / n, lps);
                for (int r = 0; r < 3; r++)
                    CHECK_NEAR(t->centroid_lps[r], lps[r], 1e-12);
                CHECK_NEAR(t->volume_mm3, n * vl_geometry_voxel_volume(&labels.geometry), 1e-14);
                if (with == 0) {
                    CHECK_TRUE(t->intensity_min == q->vmin && t->intensity_max == q->vmax);
                    CHECK_TRUE(t->intensity_sum == q->vsum);
                    CHECK_NEAR(t->intensity_mean, q->vsum / n, 1e-14);
                    const double mean = q->vsum / n;
                    CHECK_NEAR(t->intensity_std, sqrt(fmax(q->vsum2 / n - mean * mean, 0)), 1e-9);
                    qsort(q->values, q->nvalues, sizeof(double), compare_double);
                    const double median = q->nvalues % 2 ? q->values[q->nvalues / 2]
                                                         : 0.5 * (q->values[q->nvalues / 2 - 1] + q->values[q->nvalues / 2]);
                    CHECK_TRUE(t->intensity_median == median);
                    for (int r = 0; r < 3; r++)
                        CHECK_NEAR(t->weighted_centroid_voxel[r], q->vsum ? q->wsum[r] / q->vsum : NAN, 1e-9);
                } else {
                    CHECK_TRUE(isnan(t->intensity_mean) && isnan(t->intensity_median));
                }
            }
            /* Crossings are internal; check them through the public areas, recomputed here from the oracle. */
            vl_component_stats_free(s);
        }
    /* The crossings themselves, straight from one CPU pass. */
    vl_stats_options options;
    vl_stats_options_default(&options);
    options.level = VL_STATS_FULL;
    double weights[VL_STATS_DIRECTIONS];
    vl_stats_crofton_weights(&labels.geometry, weights);
    vl_component_stats *s = compute(&labels, NULL, count, VL_STATS_FULL, 2);
    for (uint32_t k = 0; s && k < count; k++) {
        if (!o[k].voxels)
            continue;
        double area = 0;
        for (int c = 0; c < VL_STATS_DIRECTIONS; c++) {
            double step[3];
            const int *d = vl_stats_direction[c];
            for (int r = 0; r < 3; r++)
                step[r] = labels.geometry.spacing[r] * d[r]; /* identity direction in this test */
            area += weights[c] * (double)o[k].crossings[c] / sqrt(step[0] * step[0] + step[1] * step[1] + step[2] * step[2]);
        }
        CHECK_NEAR(s[k].surface_area_crofton_mm2, 2 * vl_geometry_voxel_volume(&labels.geometry) * area, 1e-12);
    }
    vl_component_stats_free(s);
    for (uint32_t k = 0; k < count; k++)
        free(o[k].values);
    free(o);
    free(truth);
    vl_volume_free(&labels);
    vl_volume_free(&intensity);
}

static void test_errors_and_empty(void)
{
    vl_volume labels;
    vl_volume_create(&labels, 4, 3, 2, VL_U32);
    ((uint32_t *)labels.data)[5] = 3;
    vl_stats_options options;
    vl_stats_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    vl_component_stats *stats = NULL;
    CHECK_TRUE(vl_component_stats_compute(&labels, NULL, 2, &options, &stats) == VL_ERR_INPUT);
    CHECK_TRUE(stats == NULL);
    CHECK_TRUE(vl_component_stats_compute(&labels, NULL, 4, &options, &stats) == VL_OK);
    CHECK_TRUE(stats && stats[0].voxels == 0 && stats[2].voxels == 1 && stats[3].voxels == 0);
    CHECK_TRUE(stats && stats[2].bbox_min[0] == 1 && stats[2].bbox_min[1] == 1 && stats[2].bbox_min[2] == 0);
    vl_component_stats_free(stats);
    vl_volume intensity;
    vl_volume_create(&intensity, 4, 3, 3, VL_F32);
    CHECK_TRUE(vl_component_stats_compute(&labels, &intensity, 4, &options, &stats) == VL_ERR_INPUT);
    vl_volume_free(&intensity);
    memset(labels.data, 0, 4 * 3 * 2 * sizeof(uint32_t));
    CHECK_TRUE(vl_component_stats_compute(&labels, NULL, 0, &options, &stats) == VL_OK && stats == NULL);
    vl_volume_free(&labels);
    vl_stats_level level;
    CHECK_TRUE(vl_stats_level_parse("full", &level) == VL_OK && level == VL_STATS_FULL);
    CHECK_TRUE(vl_stats_level_parse("fast", &level) == VL_ERR_ARGUMENT);
}

static char *read_text(const char *path)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return NULL;
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[n] = 0;
    return text;
}

/* The writers: exact header and row text for a hand case, --matlab conventions, JSON nulls, no clobbering. */
static void test_writers(void)
{
    vl_volume labels, intensity;
    vl_volume_create(&labels, 9, 9, 3, VL_U8);
    vl_volume_create(&intensity, 9, 9, 3, VL_I16);
    labels.geometry.spacing[0] = 0.5;
    labels.geometry.spacing[1] = 0.5;
    labels.geometry.spacing[2] = 2;
    labels.geometry.origin[0] = 10;
    for (int z = 0; z < 3; z++)
        for (int y = 3; y < 6; y++)
            for (int x = 3; x < 6; x++) {
                ((uint8_t *)labels.data)[x + 9 * (y + 9 * z)] = 1;
                ((int16_t *)intensity.data)[x + 9 * (y + 9 * z)] = (int16_t)(100 * z + x);
            }
    vl_component_stats *s = compute(&labels, &intensity, 2, VL_STATS_BASIC, 1);
    vl_csv_options options;
    vl_csv_options_default(&options);
    options.force = 1;
    const char *csv = "stats_unit_basic.csv";
    CHECK_TRUE(vl_component_stats_write_csv(csv, s, 2, &options) == VL_OK);
    char *text = read_text(csv);
    CHECK_TRUE(text && strcmp(text,
                         "label,voxels,volume_mm3,centroid_x,centroid_y,centroid_z,centroid_l_mm,centroid_p_mm,"
                         "centroid_s_mm,bbox_min_x,bbox_min_y,bbox_min_z,bbox_max_x,bbox_max_y,bbox_max_z,"
                         "hu_mean,hu_min,hu_max\n"
                         "1,27,13.5,4,4,1,12,2,2,3,3,0,5,5,2,104,3,205\n"
                         "2,0,0,,,,,,,,,,,,,,,\n") == 0);
    options.force = 0;
    CHECK_TRUE(vl_component_stats_write_csv(csv, s, 2, &options) == VL_ERR_OUTPUT);
    options.force = 1;
    options.matlab_columns = 1;
    options.intensity = 0;
    CHECK_TRUE(vl_component_stats_write_csv(csv, s, 1, &options) == VL_OK);
    text = read_text(csv);
    CHECK_TRUE(text && strstr(text, "Volume,Centroid_1,Centroid_2,Centroid_3,BoundingBox_1,BoundingBox_2,BoundingBox_3,"
                               "BoundingBox_4,BoundingBox_5,BoundingBox_6,EquivDiameter,Extent\n"));
    CHECK_TRUE(text && strstr(text, ",27,5,5,2,3.5,3.5,0.5,3,3,3,3.722102") != NULL);
    CHECK_TRUE(text && !strstr(text, "hu_mean"));
    options.intensity = 1;
    options.matlab_columns = 0;
    CHECK_TRUE(vl_component_stats_write_json("stats_unit_basic.json", s, 2, &options) == VL_OK);
    text = read_text("stats_unit_basic.json");
    CHECK_TRUE(text && strstr(text, "{\"label\": 1, \"voxels\": 27, \"volume_mm3\": 13.5,") != NULL);
    CHECK_TRUE(text && strstr(text, "\"centroid_x\": null") != NULL);
    vl_component_stats_free(s);
    vl_volume_free(&labels);
    vl_volume_free(&intensity);
}

static void test_median_selection(void)
{
    double a[] = {5, 1, 4, 2, 3};
    CHECK_TRUE(vl_stats_median(a, 5) == 3);
    double b[] = {7, 7, 1, 9};
    CHECK_TRUE(vl_stats_median(b, 4) == 7);
    double c[] = {-2, 4};
    CHECK_TRUE(vl_stats_median(c, 2) == 1);
    double d[] = {2, 2, 2, 2, 2, 2};
    CHECK_TRUE(vl_stats_median(d, 6) == 2);
    CHECK_TRUE(isnan(vl_stats_median(d, 0)));
}

int main(void)
{
    test_documentation_cube();
    test_crofton_weights();
    test_ball_surface();
    test_median_selection();
    test_writers();
    test_errors_and_empty();
    test_random_against_oracle(1, 17, 13, 11, 5, VL_U8, 0);
    test_random_against_oracle(2, 31, 7, 9, 40, VL_U16, 1);
    test_random_against_oracle(3, 1, 23, 19, 3, VL_U32, 1);
    test_random_against_oracle(4, 29, 1, 1, 4, VL_U32, 0);
    return test_finish("stats_unit");
}
