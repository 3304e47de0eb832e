/* Unit tests of the extra 3D columns: the exact hull (against brute-force plane checks on random point
 * clouds), convex volume, solidity, Feret diameters and oriented box of boxes with known answers at
 * anisotropic spacing, Euler numbers of shapes with known topology at 6- and 26-connectivity, the ITK
 * derived columns, and the surface estimates on analytic balls, ellipsoids and cylinders at 0.45x0.45x1
 * and 1x1x5 mm against their true areas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats_extras.h"
#include "stats/stats_hull.h"
#include "test_check.h"
#include "voxlabel/stats.h"

static const double pi = 3.14159265358979323846;

static vl_component_stats *compute(const vl_volume *labels, uint32_t count, int connectivity, int threads)
{
    vl_stats_options options;
    vl_stats_options_default(&options);
    options.level = VL_STATS_FULL;
    options.threads = threads;
    options.connectivity = connectivity;
    options.device.kind = VL_DEVICE_CPU;
    vl_component_stats *stats = NULL;
    CHECK(vl_component_stats_compute(labels, NULL, count, &options, &stats) == VL_OK, "compute failed: %s",
          vl_last_error());
    return stats;
}

static void set(vl_volume *v, int64_t x, int64_t y, int64_t z, uint32_t label)
{
    ((uint32_t *)v->data)[x + v->nx * (y + v->ny * z)] = label;
}

/* Random integer clouds: every point lies on or under every hull face, every face has all points on one
 * side, and the volume equals the sum of tetrahedra from an interior point (checked by a second order). */
static void test_hull_random(void)
{
    srand(7);
    vl_hull hull;
    memset(&hull, 0, sizeof hull);
    for (int trial = 0; trial < 60; trial++) {
        const int n = 4 + rand() % 300, range = 1 + rand() % 12;
        int64_t (*p)[3] = malloc(sizeof *p * (size_t)n);
        for (int i = 0; i < n; i++)
            for (int a = 0; a < 3; a++)
                p[i][a] = rand() % (range + 1);
        const int built = vl_hull_build(&hull, (const int64_t(*)[3])p, (size_t)n);
        if (built == 1) { /* coplanar: only possible for tiny ranges */
            free(p);
            continue;
        }
        CHECK_TRUE(built == 0);
        int bad = 0;
        for (size_t t = 0; t < hull.triangle_count; t++) {
            const int64_t *a = p[hull.triangles[3 * t]], *b = p[hull.triangles[3 * t + 1]], *c = p[hull.triangles[3 * t + 2]];
            const int64_t u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            const int64_t nrm[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
            bad += nrm[0] == 0 && nrm[1] == 0 && nrm[2] == 0;
            for (int i = 0; i < n; i++)
                bad += nrm[0] * (p[i][0] - a[0]) + nrm[1] * (p[i][1] - a[1]) + nrm[2] * (p[i][2] - a[2]) > 0;
        }
        CHECK(bad == 0, "trial %d: %d points above a hull face", trial, bad);
        /* A closed triangulated sphere: V - E + F = 2 over the triangles' corners, with E = 3F/2. */
        long corners = 0;
        char *used = calloc((size_t)n, 1);
        for (size_t t = 0; t < 3 * hull.triangle_count; t++)
            corners += !used[hull.triangles[t]], used[hull.triangles[t]] = 1;
        free(used);
        const long f = (long)hull.triangle_count, e = 3 * f / 2;
        CHECK(corners - e + f == 2, "trial %d: V - E + F = %ld", trial, corners - e + f);
        /* The extreme points are a subset of the corners (stats_shape_oracle compares them with qhull's). */
        CHECK_TRUE(hull.vertex_count >= 4 && hull.vertex_count <= (size_t)corners);
        CHECK_TRUE(hull.six_volume > 0);
        free(p);
    }
    /* The unit cube's 8 corners plus interior and duplicate points: volume 1, 8 vertices. */
    int64_t cube[14][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1},
                           {0, 0, 0}, {1, 1, 1}, {1, 0, 0}, {0, 1, 1}, {1, 1, 0}, {0, 0, 1}};
    CHECK_TRUE(vl_hull_build(&hull, (const int64_t(*)[3])cube, 14) == 0);
    CHECK_TRUE(hull.six_volume == 6 && hull.vertex_count == 8);
    int64_t flat[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {2, 3, 0}};
    CHECK_TRUE(vl_hull_build(&hull, (const int64_t(*)[3])flat, 5) == 1);
    vl_hull_free(&hull);
}

/* A box of a x b x c voxels at spacing (sx, sy, sz): convex volume = volume, Feret max = the physical box
 * diagonal between opposite corners, Feret min = the smallest physical side, oriented box = the sides. */
static void test_box(void)
{
    const int a = 7, b = 4, c = 3;
    vl_volume v;
    vl_volume_create(&v, 12, 9, 8, VL_U32);
    v.geometry.spacing[0] = 0.45, v.geometry.spacing[1] = 0.45, v.geometry.spacing[2] = 1;
    v.geometry.origin[0] = -10, v.geometry.origin[1] = 5, v.geometry.origin[2] = 100;
    for (int z = 2; z < 2 + c; z++)
        for (int y = 1; y < 1 + b; y++)
            for (int x = 3; x < 3 + a; x++)
                set(&v, x, y, z, 1);
    for (int threads = 1; threads <= 3; threads += 2) {
        vl_component_stats *s = compute(&v, 1, 26, threads);
        if (!s)
            continue;
        const double sx = a * 0.45, sy = b * 0.45, sz = c * 1.0;
        CHECK_NEAR(s->convex_volume_voxels, a * b * c, 1e-9);
        CHECK_NEAR(s->convex_volume_mm3, sx * sy * sz, 1e-9);
        CHECK_NEAR(s->solidity, 1, 1e-12);
        CHECK_TRUE(s->convex_hull_vertices == 8);
        CHECK_NEAR(s->feret_max_mm, sqrt(sx * sx + sy * sy + sz * sz), 1e-9);
        /* The end points are opposite corners of the box: origin + spacing * (index - 0.5). */
        const double lo[3] = {-10 + 0.45 * 2.5, 5 + 0.45 * 0.5, 100 + 1.5};
        const double hi[3] = {lo[0] + sx, lo[1] + sy, lo[2] + sz};
        double spread = 0;
        for (int r = 0; r < 3; r++)
            spread += fabs(fabs(s->feret_max_a_lps[r] - s->feret_max_b_lps[r]) - (hi[r] - lo[r])) +
                      fabs(fmin(s->feret_max_a_lps[r], s->feret_max_b_lps[r]) - lo[r]);
        CHECK(spread < 1e-9, "Feret max end points off by %g", spread);
        CHECK_NEAR(s->feret_min_mm, sy, 1e-9);
        double found = 0;
        for (int r = 0; r < 3; r++)
            found += (s->feret_min_a_lps[r] - s->feret_min_b_lps[r]) * (s->feret_min_a_lps[r] - s->feret_min_b_lps[r]);
        CHECK_NEAR(sqrt(found), sy, 1e-9);
        double sizes[3] = {s->obb_size_mm[0], s->obb_size_mm[1], s->obb_size_mm[2]};
        CHECK_NEAR(sizes[0], sx, 1e-9); /* principal axis 1 is the longest: x */
        CHECK_NEAR(sizes[1], sz, 1e-9); /* 3 mm along z against 1.8 mm along y */
        CHECK_NEAR(sizes[2], sy, 1e-9);
        for (int r = 0; r < 3; r++)
            CHECK_NEAR(s->obb_centre_lps[r], 0.5 * (lo[r] + hi[r]), 1e-9);
        CHECK_TRUE(s->euler_number == 1);
        /* Faces on no boundary: the box does not touch the volume's faces. */
        CHECK_NEAR(s->perimeter_on_border_mm2, 0, 0);
        vl_component_stats_free(s);
    }
    vl_volume_free(&v);
}

/* Euler numbers: a hollow cube (one cavity) 2, a ring (one tunnel) 0, two diagonal voxels 1 at 26 and 2 at 6,
 * a 3D cross of tunnels (a 3x3x3 frame: the 12 edges of a cube) 1 - 5 = -4. */
static void test_euler(void)
{
    vl_volume v;
    vl_volume_create(&v, 16, 16, 16, VL_U32);
    for (int z = 0; z < 5; z++) /* label 1: 5^3 shell around a 3^3 cavity */
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 5; x++)
                if (x == 0 || y == 0 || z == 0 || x == 4 || y == 4 || z == 4)
                    set(&v, x, y, z, 1);
    for (int y = 8; y < 12; y++) /* label 2: a square ring in one slice */
        for (int x = 0; x < 4; x++)
            if (x == 0 || y == 8 || x == 3 || y == 11)
                set(&v, x, y, 2, 2);
    set(&v, 10, 10, 10, 3); /* label 3: two voxels touching at a corner */
    set(&v, 11, 11, 11, 3);
    for (int z = 0; z < 3; z++) /* label 4: the edges of a 3x3x3 cube (the frame of a box) */
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++)
                if ((x != 1) + (y != 1) + (z != 1) >= 2)
                    set(&v, 8 + x, y, 8 + z, 4);
    vl_component_stats *s = compute(&v, 4, 26, 2);
    if (s) {
        CHECK_TRUE(s[0].euler_number == 2);
        CHECK_TRUE(s[1].euler_number == 0);
        CHECK_TRUE(s[2].euler_number == 1);
        CHECK_TRUE(s[3].euler_number == -4);
        /* The shell touches the faces x = 0, y = 0, z = 0 with 5 x 5 faces each. */
        CHECK_NEAR(s[0].perimeter_on_border_mm2, 75, 1e-12);
        vl_component_stats_free(s);
    }
    s = compute(&v, 4, 6, 1);
    if (s) {
        CHECK_TRUE(s[0].euler_number == 2);
        CHECK_TRUE(s[1].euler_number == 0);
        CHECK_TRUE(s[2].euler_number == 2);
        vl_component_stats_free(s);
    }
    s = compute(&v, 4, 18, 1);
    if (s) {
        CHECK_TRUE(isnan(s[0].euler_number));
        vl_component_stats_free(s);
    }
    /* The table: an empty window adds nothing, a full one nothing at 26 (interior vertex of a solid). */
    CHECK_TRUE(vl_stats_euler_window(0, 26) == 0 && vl_stats_euler_window(255, 26) == 0);
    CHECK_TRUE(vl_stats_euler_window(0, 6) == 0 && vl_stats_euler_window(255, 6) == 0);
    vl_volume_free(&v);
}

/* Analytic shapes digitised by voxel centres at the spacings: surface estimates against the true
 * area, sphericity of balls at most 1 + 1.5 %, roundness and the ellipsoid diameters of ITK. */
typedef struct shape_case {
    const char *name;
    int kind;          /* 0 ball, 1 ellipsoid, 2 cylinder along z */
    double a, b, c;    /* semi-axes (ball: a), cylinder: radius a, half height c */
} shape_case;

static int inside(const shape_case *k, double x, double y, double z)
{
    switch (k->kind) {
    case 0: return x * x + y * y + z * z <= k->a * k->a;
    case 1: return x * x / (k->a * k->a) + y * y / (k->b * k->b) + z * z / (k->c * k->c) <= 1;
    default: return x * x + y * y <= k->a * k->a && fabs(z) <= k->c;
    }
}

static double true_area(const shape_case *k)
{
    if (k->kind == 0)
        return 4 * pi * k->a * k->a;
    if (k->kind == 2)
        return 2 * pi * k->a * k->a + 2 * pi * k->a * 2 * k->c;
    const double p = 1.6075; /* Knud Thomsen's approximation, relative error below 1.1 % */
    return 4 * pi * pow((pow(k->a * k->b, p) + pow(k->a * k->c, p) + pow(k->b * k->c, p)) / 3, 1 / p);
}

static void test_analytic_surfaces(void)
{
    const double spacings[2][3] = {{0.45, 0.45, 1}, {1, 1, 5}};
    const shape_case cases[] = {{"ball", 0, 20, 20, 20}, {"ellipsoid", 1, 24, 16, 12}, {"cylinder", 2, 14, 14, 18}};
    for (int sp = 0; sp < 2; sp++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const shape_case *k = &cases[i];
            const double *s = spacings[sp];
            const double extent[3] = {k->a + 2 * s[0], (k->kind == 1 ? k->b : k->a) + 2 * s[1],
                                      (k->kind == 0 ? k->a : k->c) + 2 * s[2]};
            int64_t n[3];
            for (int a = 0; a < 3; a++)
                n[a] = 2 * (int64_t)ceil(extent[a] / s[a]) + 1;
            vl_volume v;
            vl_volume_create(&v, n[0], n[1], n[2], VL_U32);
            for (int a = 0; a < 3; a++)
                v.geometry.spacing[a] = s[a];
            /* An off-grid centre so that the digitisation is not symmetric. */
            const double centre[3] = {(double)(n[0] / 2) * s[0] + 0.13, (double)(n[1] / 2) * s[1] + 0.07,
                                      (double)(n[2] / 2) * s[2] + 0.21};
            for (int64_t z = 0; z < n[2]; z++)
                for (int64_t y = 0; y < n[1]; y++)
                    for (int64_t x = 0; x < n[0]; x++)
                        if (inside(k, x * s[0] - centre[0], y * s[1] - centre[1], z * s[2] - centre[2]))
                            set(&v, x, y, z, 1);
            vl_component_stats *r = compute(&v, 1, 26, 2);
            if (r) {
                const double area = true_area(k);
                const double normals = r->surface_area_mm2 / area - 1, crofton = r->surface_area_crofton_mm2 / area - 1;
                const double itk = r->surface_area_itk_mm2 / area - 1;
                printf("stats_geometry_unit: %-9s at %.2gx%.2gx%.2g mm: normals %+.2f %%, Crofton %+.2f %%, ITK %+.2f %%, "
                       "faces %+.1f %%, sphericity %.4f (Crofton %.4f)\n",
                       k->name, s[0], s[1], s[2], 100 * normals, 100 * crofton, 100 * itk,
                       100 * (r->surface_area_faces_mm2 / area - 1), r->sphericity, r->sphericity_crofton);
                /* Normal-weighted faces: within 1.5 % on smooth shapes; a cylinder's rims are rounded over sigma
                 * (one slice at 1x1x5 mm, where its digitised height is also 35 mm for 36). Crofton over 13
                 * directions is unbiased for isotropic normals (balls) only: the cylinder's are on the axes. */
                const double tolerance = k->kind != 2 ? 0.015 : sp == 0 ? 0.02 : 0.11;
                CHECK(fabs(normals) < tolerance, "%s at spacing %d: area off by %.2f %%", k->name, sp, 100 * normals);
                CHECK(fabs(crofton) < (k->kind == 2 ? 0.20 : 0.03), "%s at spacing %d: Crofton area off by %.2f %%",
                      k->name, sp, 100 * crofton);
                if (k->kind == 0)
                    CHECK(r->sphericity <= 1.01, "ball at spacing %d: sphericity %.4f", sp, r->sphericity);
                /* ITK: the equal-volume ball's area over ITK's perimeter; ellipsoid diameters 2a, 2b, 2c for an
                 * ellipsoid (its moments a^2/5 ... scale back to its semi-axes). */
                const double radius = cbrt(3 * r->volume_mm3 / (4 * pi));
                CHECK_NEAR(r->roundness, 4 * pi * radius * radius / r->surface_area_itk_mm2, 1e-12);
                if (k->kind == 1) {
                    CHECK(fabs(r->equivalent_ellipsoid_diameter_mm[0] / (2 * k->a) - 1) < 0.02, "ellipsoid diameter 1 %g",
                          r->equivalent_ellipsoid_diameter_mm[0]);
                    CHECK(fabs(r->equivalent_ellipsoid_diameter_mm[2] / (2 * k->c) - 1) < 0.06, "ellipsoid diameter 3 %g",
                          r->equivalent_ellipsoid_diameter_mm[2]);
                }
                /* The hull of a convex shape's voxels: solidity close to 1, Feret max at least the true diameter. */
                CHECK(r->solidity > 0.75 && r->solidity <= 1, "%s: solidity %g", k->name, r->solidity);
                const double diameter = k->kind == 0 ? 2 * k->a : k->kind == 1 ? 2 * k->a : 2 * sqrt(k->a * k->a + k->c * k->c);
                CHECK(r->feret_max_mm >= diameter - 2 * s[2] && r->feret_max_mm <= diameter + 2 * s[2],
                      "%s: Feret max %g against %g", k->name, r->feret_max_mm, diameter);
                vl_component_stats_free(r);
            }
            vl_volume_free(&v);
        }
}

/* MATLAB Orientation: an axis-aligned box whose longest side is along y gives yaw 90 degrees. */
static void test_orientation(void)
{
    vl_volume v;
    vl_volume_create(&v, 8, 12, 6, VL_U32);
    for (int z = 1; z < 4; z++)
        for (int y = 1; y < 11; y++)
            for (int x = 2; x < 6; x++)
                set(&v, x, y, z, 1);
    vl_component_stats *s = compute(&v, 1, 26, 1);
    if (s) {
        /* EigenVectors columns: y first (10 long), then x (4), then z (3). */
        CHECK_NEAR(fabs(s->matlab_eigenvectors[3 * 1 + 0]), 1, 1e-12);
        CHECK_NEAR(fabs(s->matlab_eigenvectors[3 * 0 + 1]), 1, 1e-12);
        CHECK_NEAR(fabs(s->matlab_eigenvectors[3 * 2 + 2]), 1, 1e-12);
        CHECK_NEAR(fabs(s->matlab_orientation_deg[2]), 90, 1e-9);
        CHECK_NEAR(s->matlab_orientation_deg[1], 0, 1e-9);
        vl_component_stats_free(s);
    }
    vl_volume_free(&v);
}

/* Halving the voxel size at least halves the error on an ellipsoid (a smooth surface). */
static void test_surface_convergence(void)
{
    const shape_case ellipsoid = {"ellipsoid", 1, 7, 5, 3};
    double errors[2];
    for (int level = 0; level < 2; level++) {
        const double s[3] = {0.6 / (1 + level), 0.6 / (1 + level), 1.2 / (1 + level)};
        int64_t n[3];
        for (int a = 0; a < 3; a++)
            n[a] = 2 * (int64_t)ceil(9 / s[a]) + 1;
        vl_volume v;
        vl_volume_create(&v, n[0], n[1], n[2], VL_U32);
        for (int a = 0; a < 3; a++)
            v.geometry.spacing[a] = s[a];
        for (int64_t z = 0; z < n[2]; z++)
            for (int64_t y = 0; y < n[1]; y++)
                for (int64_t x = 0; x < n[0]; x++)
                    if (inside(&ellipsoid, (x - n[0] / 2) * s[0] + 0.011, (y - n[1] / 2) * s[1] + 0.023,
                               (z - n[2] / 2) * s[2] + 0.017))
                        set(&v, x, y, z, 1);
        vl_component_stats *r = compute(&v, 1, 26, 2);
        errors[level] = r ? r->surface_area_mm2 / true_area(&ellipsoid) - 1 : 1;
        vl_component_stats_free(r);
        vl_volume_free(&v);
    }
    printf("stats_geometry_unit: ellipsoid 7 x 5 x 3 mm: area off by %+.2f %% at 0.6x0.6x1.2, %+.2f %% at 0.3x0.3x0.6\n",
           100 * errors[0], 100 * errors[1]);
    CHECK(fabs(errors[1]) < 0.6 * fabs(errors[0]), "no convergence: %g then %g", errors[0], errors[1]);
}

/* regionprops3's documentation example: [x,y,z] = meshgrid(1:50,1:50,1:50); a ball of radius < 5 at (10, 15, 35)
 * and one of radius < 10 at (20, 30, 15) (x = column, 1-based). MATLAB prints the centres [20 30 15; 10 15 35]
 * (the z = 15 ball is object 1) and mean(PrincipalAxisLength, 2) = 19.9641 and 9.8241 (17.8564 and 8.7869 in
 * the R2021a-era pages). */
static void test_documentation_spheres(void)
{
    vl_volume v;
    vl_volume_create(&v, 50, 50, 50, VL_U32);
    for (int z = 1; z <= 50; z++)
        for (int y = 1; y <= 50; y++)
            for (int x = 1; x <= 50; x++) {
                const double small = sqrt((x - 10.0) * (x - 10) + (y - 15.0) * (y - 15) + (z - 35.0) * (z - 35));
                const double large = sqrt((x - 20.0) * (x - 20) + (y - 30.0) * (y - 30) + (z - 15.0) * (z - 15));
                if (large < 10)
                    set(&v, x - 1, y - 1, z - 1, 1);
                else if (small < 5)
                    set(&v, x - 1, y - 1, z - 1, 2);
            }
    vl_component_stats *s = compute(&v, 2, 26, 2);
    if (s) {
        const double centres[2][3] = {{20, 30, 15}, {10, 15, 35}}, current[2] = {19.9641, 9.8241},
                     old[2] = {17.8564, 8.7869};
        for (int k = 0; k < 2; k++) {
            for (int a = 0; a < 3; a++)
                CHECK_NEAR(s[k].centroid_voxel[a] + 1, centres[k][a], 1e-12);
            const double mean = (s[k].matlab_axis_length[0] + s[k].matlab_axis_length[1] + s[k].matlab_axis_length[2]) / 3;
            const double mean_old =
                (s[k].matlab_axis_length_old[0] + s[k].matlab_axis_length_old[1] + s[k].matlab_axis_length_old[2]) / 3;
            CHECK_NEAR(mean, current[k], 5e-5);
            CHECK_NEAR(mean_old, old[k], 5e-5);
            CHECK_NEAR(s[k].solidity, (double)s[k].voxels / s[k].convex_volume_voxels, 0);
            CHECK_TRUE(s[k].euler_number == 1);
        }
        vl_component_stats_free(s);
    }
    vl_volume_free(&v);
}

int main(void)
{
    test_hull_random();
    test_box();
    test_euler();
    test_orientation();
    test_documentation_spheres();
    test_analytic_surfaces();
    test_surface_convergence();
    return test_finish("stats_geometry_unit");
}
