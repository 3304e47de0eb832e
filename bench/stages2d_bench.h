/* Deterministic inputs shared by the CPU and GPU benches of the 2D stages (bench/stages2d_bench.c, .cu)
 * and dumped for the OpenCV peer (bench/stages2d_bench.py): colour frames with red, green and blue
 * ellipses on a noisy green-grey background, and a CT-like 512x512xN bone mask stack (vertebra, ribs and
 * sternum drifting with z, plus 1% speckle inside the body). */
#ifndef VL_STAGES2D_BENCH_H
#define VL_STAGES2D_BENCH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct bench_rng {
    uint64_t state;
} bench_rng;

static inline uint32_t bench_next(bench_rng *rng)
{
    rng->state ^= rng->state << 13;
    rng->state ^= rng->state >> 7;
    rng->state ^= rng->state << 17;
    return (uint32_t)(rng->state >> 32);
}

static inline void bench_make_frame(uint8_t *rgb, int width, int height, uint64_t seed)
{
    bench_rng rng = {seed * 0x9e3779b97f4a7c15ull + 1};
    for (int64_t i = 0; i < (int64_t)width * height; i++) {
        uint32_t noise = bench_next(&rng);
        rgb[3 * i] = (uint8_t)(60 + (noise & 31));
        rgb[3 * i + 1] = (uint8_t)(100 + ((noise >> 8) & 31));
        rgb[3 * i + 2] = (uint8_t)(60 + ((noise >> 16) & 31));
    }
    int ellipses = width * height / 8000;
    for (int e = 0; e < ellipses; e++) {
        int cx = (int)(bench_next(&rng) % (uint32_t)width), cy = (int)(bench_next(&rng) % (uint32_t)height);
        int rx = 4 + (int)(bench_next(&rng) % (uint32_t)(width / 24)), ry = 4 + (int)(bench_next(&rng) % (uint32_t)(height / 24));
        static const uint8_t colours[3][3] = {{220, 30, 25}, {30, 200, 40}, {30, 40, 210}};
        const uint8_t *colour = colours[e % 4 == 3 ? 1 + (e / 4) % 2 : 0];
        for (int y = cy - ry; y <= cy + ry; y++)
            for (int x = cx - rx; x <= cx + rx; x++) {
                if (x < 0 || y < 0 || x >= width || y >= height)
                    continue;
                double u = (double)(x - cx) / rx, v = (double)(y - cy) / ry;
                if (u * u + v * v <= 1.0)
                    memcpy(rgb + 3 * ((int64_t)y * width + x), colour, 3);
            }
    }
}

static inline void bench_make_ct_mask(uint8_t *mask, int nx, int ny, int nz)
{
    bench_rng rng = {12345};
    for (int z = 0; z < nz; z++) {
        double drift = 10.0 * ((z % 80) / 80.0);
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                double bx = (x - nx / 2.0) / (0.42 * nx), by = (y - ny / 2.0) / (0.30 * ny);
                int inside = bx * bx + by * by <= 1.0;
                double sx = x - nx / 2.0, sy = y - (0.72 * ny + drift);
                int bone = sx * sx + sy * sy <= 22.0 * 22.0 && sx * sx + sy * sy >= 12.0 * 12.0;
                for (int r = 0; r < 12 && !bone; r++) {
                    double angle = 3.14159265358979 * (0.15 + 0.7 * (r % 6) / 5.0) + (r >= 6 ? 3.14159265358979 : 0);
                    double rx = nx / 2.0 + 0.38 * nx * cos(angle), ry = ny / 2.0 + 0.27 * ny * sin(angle) + drift;
                    bone = (x - rx) * (x - rx) + (y - ry) * (y - ry) <= 36.0;
                }
                uint8_t speckle = inside && (bench_next(&rng) % 100) == 0;
                mask[((int64_t)z * ny + y) * nx + x] = (uint8_t)(bone || speckle);
            }
    }
}

#endif
