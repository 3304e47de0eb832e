/* Synthetic CT phantom: anatomy painted slice by slice as row spans of ellipses, rectangles and discs
 * (one square root per row, never per voxel), then one PRNG draw of noise per voxel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/phantom.h"

enum {
    HU_AIR = -1000,
    HU_LUNG = -850,
    HU_FAT = -100,
    HU_CSF = 20,
    HU_SOFT = 40,
    HU_NODULE = 40,
    HU_LIVER = 60,
    HU_DISC = 80,
    HU_KIDNEY = 150,
    HU_LUNG_VESSEL = 150,
    HU_CONTRAST = 300,
    HU_CANCELLOUS = 300,
    HU_STERNUM = 600,
    HU_RIB = 700,
    HU_ARCH = 900,
    HU_CORTICAL = 1000,
    HU_MIN = -1024,
    HU_MAX = 3071
};

#define MAX_VESSEL_POINTS 8192

typedef struct vessel_point {
    double x, y, z, radius; /* mm */
} vessel_point;

/* One slice being painted: pixel (i,j) sits at x = x0 + i*dx, y = y0 + j*dy (mm). */
typedef struct canvas {
    int16_t *pixels;
    int64_t nx, ny;
    double x0, y0, dx, dy;
} canvas;

typedef struct anatomy {
    double fov;                       /* mm, the smaller in-plane extent */
    double body_cy, body_rx, body_ry; /* outer body ellipse */
    double fat;                       /* fat layer thickness */
    double spine_y, vertebra_r;
    double aorta_x, aorta_y, aorta_r;
    double z_min, z_len;              /* scan range along z */
    vessel_point *vessels;
    int vessel_count;
} anatomy;

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state)
{
    return (double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

static int64_t clamp_index(double value, int64_t limit)
{
    if (value < 0)
        return 0;
    if (value > (double)(limit - 1))
        return limit - 1;
    return (int64_t)value;
}

/* Rows [j0, j1] covered by [y - r, y + r]; false when none. */
static int row_range(const canvas *c, double y, double r, int64_t *j0, int64_t *j1)
{
    double lo = ceil((y - r - c->y0) / c->dy), hi = floor((y + r - c->y0) / c->dy);
    if (hi < 0 || lo > (double)(c->ny - 1) || lo > hi)
        return 0;
    *j0 = clamp_index(lo, c->ny);
    *j1 = clamp_index(hi, c->ny);
    return 1;
}

/* Columns [i0, i1] covered by [x - half, x + half]; false when none. */
static int column_range(const canvas *c, double x, double half, int64_t *i0, int64_t *i1)
{
    double lo = ceil((x - half - c->x0) / c->dx), hi = floor((x + half - c->x0) / c->dx);
    if (hi < 0 || lo > (double)(c->nx - 1) || lo > hi)
        return 0;
    *i0 = clamp_index(lo, c->nx);
    *i1 = clamp_index(hi, c->nx);
    return 1;
}

/* Half-width of the ellipse at row height y, or -1 when the row misses it. */
static double ellipse_half_width(double cy, double rx, double ry, double y)
{
    double v = (y - cy) / ry;
    return v * v <= 1.0 ? rx * sqrt(1.0 - v * v) : -1.0;
}

/* Paints `value` inside the ellipse; with `only_over` >= HU_MIN, only over pixels holding that value. */
static void paint_ellipse(canvas *c, double cx, double cy, double rx, double ry, int16_t value, int only_over)
{
    int64_t j0, j1, i0, i1;
    if (rx <= 0 || ry <= 0 || !row_range(c, cy, ry, &j0, &j1))
        return;
    for (int64_t j = j0; j <= j1; j++) {
        double half = ellipse_half_width(cy, rx, ry, c->y0 + (double)j * c->dy);
        if (half < 0 || !column_range(c, cx, half, &i0, &i1))
            continue;
        int16_t *row = c->pixels + j * c->nx;
        if (only_over < HU_MIN) {
            for (int64_t i = i0; i <= i1; i++)
                row[i] = value;
        } else {
            for (int64_t i = i0; i <= i1; i++)
                if (row[i] == only_over)
                    row[i] = value;
        }
    }
}

static void paint_rectangle(canvas *c, double x_lo, double x_hi, double y_lo, double y_hi, int16_t value)
{
    int64_t j0, j1, i0, i1;
    if (!row_range(c, 0.5 * (y_lo + y_hi), 0.5 * (y_hi - y_lo), &j0, &j1) ||
        !column_range(c, 0.5 * (x_lo + x_hi), 0.5 * (x_hi - x_lo), &i0, &i1))
        return;
    for (int64_t j = j0; j <= j1; j++)
        for (int64_t i = i0; i <= i1; i++)
            c->pixels[j * c->nx + i] = value;
}

/* The band between two concentric ellipses (scale_in < 1 of the outer one), limited to rows y_lo..y_hi. */
static void paint_ring(canvas *c, double cx, double cy, double rx, double ry, double scale_in, double y_lo,
                       double y_hi, int16_t value)
{
    int64_t j0, j1;
    if (!row_range(c, cy, ry, &j0, &j1))
        return;
    for (int64_t j = j0; j <= j1; j++) {
        double y = c->y0 + (double)j * c->dy;
        if (y < y_lo || y > y_hi)
            continue;
        double outer = ellipse_half_width(cy, rx, ry, y);
        double inner = ellipse_half_width(cy, rx * scale_in, ry * scale_in, y);
        if (outer < 0)
            continue;
        if (inner < 0)
            inner = 0;
        int64_t i0, i1;
        int16_t *row = c->pixels + j * c->nx;
        if (column_range(c, cx - 0.5 * (outer + inner), 0.5 * (outer - inner), &i0, &i1))
            for (int64_t i = i0; i <= i1; i++)
                row[i] = value;
        if (column_range(c, cx + 0.5 * (outer + inner), 0.5 * (outer - inner), &i0, &i1))
            for (int64_t i = i0; i <= i1; i++)
                row[i] = value;
    }
}

/* The disc a sphere of radius r centred at z_c cuts from the slice at z. */
static void paint_sphere(canvas *c, double x, double y, double z_c, double r, double z, int16_t value, int only_over)
{
    double dz = z - z_c;
    if (fabs(dz) >= r)
        return;
    double rs = sqrt(r * r - dz * dz);
    paint_ellipse(c, x, y, rs, rs, value, only_over);
}

/* Lung shape at relative height t: centre offsets and radii scale with a dome profile. */
static double lung_scale(double t)
{
    double u = (t - 0.685) / 0.29;
    return u * u < 1.0 ? sqrt(1.0 - u * u) : 0.0;
}

static void lung_ellipse(const anatomy *a, double t, int side, double *cx, double *cy, double *rx, double *ry)
{
    double s = sqrt(lung_scale(t));
    *cx = side * 0.2 * a->fov;
    *cy = -0.01 * a->fov;
    *rx = 0.15 * a->fov * s;
    *ry = 0.21 * a->fov * s;
}

/* Pulmonary vessel tree: from each hilum, segments that split in two, thinning, sampled as spheres. */
static void grow_vessel(anatomy *a, uint64_t *rng, double x, double y, double z, double ux, double uy, double uz,
                        double length, double radius, int depth)
{
    double norm = sqrt(ux * ux + uy * uy + uz * uz);
    ux /= norm;
    uy /= norm;
    uz /= norm;
    double step = 0.5 * radius;
    for (double s = 0; s <= length && a->vessel_count < MAX_VESSEL_POINTS; s += step) {
        vessel_point *p = &a->vessels[a->vessel_count++];
        p->x = x + ux * s;
        p->y = y + uy * s;
        p->z = z + uz * s;
        p->radius = radius;
    }
    if (depth == 0)
        return;
    double ex = x + ux * length, ey = y + uy * length, ez = z + uz * length;
    for (int child = 0; child < 2; child++) {
        double jx = ux + 0.9 * (uniform01(rng) - 0.5), jy = uy + 0.9 * (uniform01(rng) - 0.5);
        double jz = uz + (child ? 0.7 : -0.7) + 0.4 * (uniform01(rng) - 0.5);
        grow_vessel(a, rng, ex, ey, ez, jx, jy, jz, length * 0.75, radius * 0.7, depth - 1);
    }
}

static void build_anatomy(anatomy *a, const vl_phantom_options *o)
{
    double width = (double)o->nx * o->pixel_spacing_mm, height = (double)o->ny * o->pixel_spacing_mm;
    a->fov = width < height ? width : height;
    a->body_cy = 0.03 * a->fov;
    a->body_rx = 0.44 * a->fov;
    a->body_ry = 0.31 * a->fov;
    a->fat = 0.03 * a->fov;
    a->spine_y = 0.16 * a->fov;
    a->vertebra_r = 0.06 * a->fov;
    a->aorta_r = fmin(11.0, 0.03 * a->fov);
    a->aorta_x = 0.035 * a->fov;
    a->aorta_y = a->spine_y - a->vertebra_r - a->aorta_r - 0.01 * a->fov;
    a->z_len = (double)(o->nz - 1) * o->slice_spacing_mm;
    a->z_min = -0.5 * a->z_len;
    a->vessel_count = 0;
    /* The tree's shape is fixed (its own seed), so the anatomy does not change with the noise seed. */
    uint64_t rng = 0x5EED0F7EE5ull;
    double hilum_z = a->z_min + 0.62 * a->z_len;
    double reach = 0.07 * a->fov;
    for (int side = -1; side <= 1; side += 2)
        for (int trunk = 0; trunk < 3; trunk++)
            grow_vessel(a, &rng, side * 0.09 * a->fov, -0.02 * a->fov, hilum_z, side * 1.0,
                        0.6 * (trunk - 1), 0.8 * (trunk - 1), reach, fmin(4.0, 0.012 * a->fov), 4);
}

static void paint_spine(canvas *c, const anatomy *a, double z)
{
    double period = 30.0, body_height = 25.0;
    double phase = fmod(z - a->z_min, period);
    double r = a->vertebra_r;
    if (phase >= body_height) {
        paint_ellipse(c, 0, a->spine_y, r, r, HU_DISC, HU_MIN - 1);
        return;
    }
    paint_ellipse(c, 0, a->spine_y, r, r, HU_CORTICAL, HU_MIN - 1);
    paint_ellipse(c, 0, a->spine_y, r - 2.5, r - 2.5, HU_CANCELLOUS, HU_MIN - 1);
    double canal_y = a->spine_y + r + 0.025 * a->fov, canal_r = 0.02 * a->fov;
    double spinous_end = fmin(canal_y + canal_r + 0.06 * a->fov, a->body_cy + a->body_ry - a->fat - 2.0);
    paint_rectangle(c, -0.012 * a->fov, 0.012 * a->fov, canal_y, spinous_end, HU_CORTICAL);
    paint_ellipse(c, 0, canal_y, canal_r + 3.0, canal_r + 3.0, HU_ARCH, HU_MIN - 1);
    paint_ellipse(c, 0, canal_y, canal_r, canal_r, HU_CSF, HU_MIN - 1);
}

static void paint_aorta(canvas *c, const anatomy *a, double t, double z)
{
    if (t >= 0.12 && t <= 0.85) {
        paint_ellipse(c, a->aorta_x, a->aorta_y, a->aorta_r, a->aorta_r, HU_CONTRAST, HU_MIN - 1);
    } else if (t < 0.12) {
        /* Iliac arteries: the aorta splits and the branches run laterally downwards. */
        double spread = (0.12 - t) / 0.12 * 0.15 * a->fov, r = 0.7 * a->aorta_r;
        paint_ellipse(c, a->aorta_x - spread, a->aorta_y, r, r, HU_CONTRAST, HU_MIN - 1);
        paint_ellipse(c, a->aorta_x + spread, a->aorta_y, r, r, HU_CONTRAST, HU_MIN - 1);
    }
    /* Renal arteries: horizontal tubes from the aorta to each kidney. */
    double renal_z = a->z_min + 0.25 * a->z_len, renal_r = fmax(1.5, 0.4 * a->aorta_r), dz = z - renal_z;
    if (fabs(dz) < renal_r) {
        double half = sqrt(renal_r * renal_r - dz * dz), kidney_x = 0.15 * a->fov;
        paint_rectangle(c, -kidney_x, a->aorta_x, a->aorta_y - half, a->aorta_y + half, HU_CONTRAST);
        paint_rectangle(c, a->aorta_x, kidney_x, a->aorta_y - half, a->aorta_y + half, HU_CONTRAST);
    }
}

static void paint_thorax(canvas *c, const anatomy *a, double t, double z)
{
    double inner_rx = a->body_rx - a->fat, inner_ry = a->body_ry - a->fat;
    if (t >= 0.40 && t <= 0.97) {
        for (int side = -1; side <= 1; side += 2) {
            double cx, cy, rx, ry;
            lung_ellipse(a, t, side, &cx, &cy, &rx, &ry);
            paint_ellipse(c, cx, cy, rx, ry, HU_LUNG, HU_MIN - 1);
        }
        if (t <= 0.65)
            paint_ellipse(c, 0.04 * a->fov, -0.08 * a->fov, 0.11 * a->fov, 0.09 * a->fov, HU_SOFT, HU_MIN - 1);
        for (int k = 0; k < a->vessel_count; k++) {
            const vessel_point *p = &a->vessels[k];
            paint_sphere(c, p->x, p->y, p->z, p->radius, z, HU_LUNG_VESSEL, HU_LUNG);
        }
        /* Nodules at fixed relative places inside the lungs: (side, u, v, t, diameter mm). */
        static const double nodules[][5] = {{-1, 0.3, -0.4, 0.55, 6}, {1, -0.2, 0.3, 0.62, 8}, {-1, -0.4, 0.2, 0.72, 10},
                                            {1, 0.35, -0.3, 0.78, 5}, {-1, 0.1, 0.5, 0.66, 7}, {1, 0.0, -0.5, 0.58, 9}};
        for (size_t k = 0; k < sizeof nodules / sizeof nodules[0]; k++) {
            double cx, cy, rx, ry, zc = a->z_min + nodules[k][3] * a->z_len;
            lung_ellipse(a, nodules[k][3], (int)nodules[k][0], &cx, &cy, &rx, &ry);
            paint_sphere(c, cx + nodules[k][1] * rx, cy + nodules[k][2] * ry, zc, 0.5 * nodules[k][4], z, HU_NODULE,
                         HU_MIN - 1);
        }
    }
    if (t >= 0.38 && t <= 0.97 && fmod(z - a->z_min, 28.0) < 9.0)
        paint_ring(c, 0, a->body_cy, inner_rx * 0.97, inner_ry * 0.97, 0.93, a->body_cy - 0.7 * inner_ry,
                   a->body_cy + 0.8 * inner_ry, HU_RIB);
    if (t >= 0.55 && t <= 0.92) {
        double front = a->body_cy - inner_ry + 2.0;
        paint_rectangle(c, -0.025 * a->fov, 0.025 * a->fov, front, front + 10.0, HU_STERNUM);
    }
}

static void paint_abdomen(canvas *c, const anatomy *a, double t)
{
    if (t >= 0.18 && t <= 0.45)
        paint_ellipse(c, -0.15 * a->fov, 0.0, 0.2 * a->fov, 0.17 * a->fov, HU_LIVER, HU_MIN - 1);
    if (t >= 0.15 && t <= 0.32)
        for (int side = -1; side <= 1; side += 2)
            paint_ellipse(c, side * 0.15 * a->fov, 0.12 * a->fov, 0.04 * a->fov, 0.06 * a->fov, HU_KIDNEY,
                          HU_MIN - 1);
}

/* Adds noise close to N(0, 20 HU): the sum of four 16-bit uniforms (Irwin-Hall) scaled by a shift. */
static void add_noise(int16_t *pixels, int64_t count, uint64_t seed)
{
    uint64_t state = seed;
    uint64_t x = splitmix64(&state) | 1;
    for (int64_t i = 0; i < count; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t sum = (int64_t)(x & 0xFFFF) + (int64_t)((x >> 16) & 0xFFFF) + (int64_t)((x >> 32) & 0xFFFF) +
                      (int64_t)(x >> 48);
        /* sigma of the sum is 65536/sqrt(3) = 37837; 35/65536 of it is 20.2 HU */
        int64_t value = pixels[i] + (((sum - 131070) * 35) >> 16);
        pixels[i] = (int16_t)(value < HU_MIN ? HU_MIN : value > HU_MAX ? HU_MAX : value);
    }
}

void vl_phantom_options_default(vl_phantom_options *options)
{
    options->nx = 256;
    options->ny = 256;
    options->nz = 120;
    options->pixel_spacing_mm = 0.8;
    options->slice_spacing_mm = 1.25;
    options->seed = 1;
}

vl_status vl_phantom_generate(const vl_phantom_options *options, vl_volume *hu)
{
    memset(hu, 0, sizeof *hu);
    if (options->nx <= 0 || options->ny <= 0 || options->nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "phantom: size %lldx%lldx%lld must be positive", (long long)options->nx,
                       (long long)options->ny, (long long)options->nz);
    if (!(options->pixel_spacing_mm > 0) || !(options->slice_spacing_mm > 0) || !isfinite(options->pixel_spacing_mm) ||
        !isfinite(options->slice_spacing_mm))
        return vl_fail(VL_ERR_ARGUMENT, "phantom: spacings %g and %g mm must be positive", options->pixel_spacing_mm,
                       options->slice_spacing_mm);
    vl_status status = vl_volume_create_uninitialised(hu, options->nx, options->ny, options->nz, VL_I16);
    if (status != VL_OK)
        return status;
    anatomy a;
    a.vessels = malloc(MAX_VESSEL_POINTS * sizeof *a.vessels);
    if (!a.vessels) {
        vl_volume_free(hu);
        return vl_fail(VL_ERR_MEMORY, "phantom: cannot allocate the vessel tree");
    }
    build_anatomy(&a, options);

    double dx = options->pixel_spacing_mm, dz = options->slice_spacing_mm;
    vl_geometry *g = &hu->geometry;
    g->origin[0] = -0.5 * (double)(options->nx - 1) * dx;
    g->origin[1] = -0.5 * (double)(options->ny - 1) * dx;
    g->origin[2] = a.z_min;
    g->spacing[0] = g->spacing[1] = dx;
    g->spacing[2] = dz;

    int64_t slice_voxels = options->nx * options->ny;
    for (int64_t k = 0; k < options->nz; k++) {
        canvas c = {(int16_t *)hu->data + k * slice_voxels, options->nx, options->ny, g->origin[0], g->origin[1], dx, dx};
        double z = a.z_min + (double)k * dz;
        double t = options->nz > 1 ? (double)k / (double)(options->nz - 1) : 0.5;
        /* The body outline breathes a little along z so that it is not a perfect cylinder. */
        double wobble = 1.0 + 0.03 * sin(z * 0.02);
        for (int64_t i = 0; i < slice_voxels; i++)
            c.pixels[i] = HU_AIR;
        paint_ellipse(&c, 0, a.body_cy, a.body_rx * wobble, a.body_ry * wobble, HU_FAT, HU_MIN - 1);
        paint_ellipse(&c, 0, a.body_cy, (a.body_rx - a.fat) * wobble, (a.body_ry - a.fat) * wobble, HU_SOFT, HU_MIN - 1);
        paint_abdomen(&c, &a, t);
        paint_thorax(&c, &a, t, z);
        paint_aorta(&c, &a, t, z);
        paint_spine(&c, &a, z);
        uint64_t slice_seed = options->seed ^ (0xA24BAED4963EE407ull * (uint64_t)(k + 1));
        add_noise(c.pixels, slice_voxels, slice_seed);
    }
    free(a.vessels);
    return VL_OK;
}
