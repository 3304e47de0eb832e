/* Morphology against a brute-force reference written from the definition (every offset of the element,
 * outside = background), on random masks of several shapes and densities, every operation, element and
 * radius 0..3, planar and 3D; with `gpu` also GPU == CPU bit for bit (exit 77 when no GPU is usable).
 * usage: image2d_morph cpu|gpu [quick]   (quick: density 0.5 and radius <= 2 only, for sanitizer runs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/morphology.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double next_uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int member(vl_structuring_element se, int r, int dx, int dy, int dz)
{
    if (se == VL_SE_BOX)
        return abs(dx) <= r && abs(dy) <= r && abs(dz) <= r;
    if (se == VL_SE_CROSS)
        return (dx == 0 && dy == 0 && abs(dz) <= r) || (dx == 0 && dz == 0 && abs(dy) <= r) ||
               (dy == 0 && dz == 0 && abs(dx) <= r);
    return dx * dx + dy * dy + dz * dz <= r * r;
}

static void reference_pass(const uint8_t *in, uint8_t *out, int nx, int ny, int nz, int dilate,
                           vl_structuring_element se, int r, int planar)
{
    int rz = planar ? 0 : r;
    for (int z = 0; z < nz; z++)
        for (int y = 0; y < ny; y++)
            for (int x = 0; x < nx; x++) {
                int result = !dilate;
                for (int dz = -rz; dz <= rz; dz++)
                    for (int dy = -r; dy <= r; dy++)
                        for (int dx = -r; dx <= r; dx++) {
                            if (!member(se, r, dx, dy, dz))
                                continue;
                            int xx = x + dx, yy = y + dy, zz = z + dz;
                            int value = xx >= 0 && xx < nx && yy >= 0 && yy < ny && zz >= 0 && zz < nz &&
                                        in[xx + nx * (yy + ny * zz)];
                            if (dilate && value)
                                result = 1;
                            if (!dilate && !value)
                                result = 0;
                        }
                out[x + nx * (y + ny * z)] = (uint8_t)result;
            }
}

static void reference(uint8_t *data, int nx, int ny, int nz, vl_morphology_op op, vl_structuring_element se, int r,
                      int planar)
{
    size_t n = (size_t)nx * ny * nz;
    uint8_t *tmp = malloc(n);
    int first_dilate = op == VL_MORPH_DILATE || op == VL_MORPH_CLOSE;
    int passes = op == VL_MORPH_OPEN || op == VL_MORPH_CLOSE ? 2 : 1;
    for (int p = 0; p < passes; p++) {
        int dilate = p == 0 ? first_dilate : !first_dilate;
        vl_structuring_element shape = se == VL_SE_THESIS ? VL_SE_CROSS : se;
        int radius = se == VL_SE_THESIS ? (dilate ? 1 : 2) : r;
        reference_pass(data, tmp, nx, ny, nz, dilate, shape, radius, planar || se == VL_SE_THESIS);
        memcpy(data, tmp, n);
    }
    free(tmp);
}

int main(int argc, char **argv)
{
    int gpu = argc > 1 && strcmp(argv[1], "gpu") == 0;
    int quick = argc > 2 && strcmp(argv[2], "quick") == 0;
    const int shapes[][3] = {{1, 17, 1}, {17, 1, 1}, {23, 19, 1}, {64, 48, 1}, {7, 13, 5}, {20, 18, 9}, {1, 1, 6}};
    const double densities[] = {0.1, 0.5, 0.9};
    long cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t d = quick ? 1 : 0; d < (quick ? 2u : 3u); d++) {
            int nx = shapes[s][0], ny = shapes[s][1], nz = shapes[s][2];
            vl_volume source;
            const vl_status created = vl_volume_create(&source, nx, ny, nz, VL_U8);
            CHECK(created == VL_OK, "cannot allocate %dx%dx%d", nx, ny, nz);
            if (created != VL_OK)
                return test_finish("image2d_morph");
            uint8_t *src = source.data;
            for (int i = 0; i < nx * ny * nz; i++)
                src[i] = next_uniform() < densities[d] ? (uint8_t)(1 + (i % 3)) : 0; /* nonzero != 1 too */
            for (int op = 0; op < 4; op++)
                for (int se = 0; se < 4; se++)
                    for (int r = 0; r <= (quick ? 2 : 3); r++)
                        for (int per_slice = 0; per_slice < 2; per_slice++) {
                            if (se == VL_SE_THESIS && (r > 0 || per_slice == 0))
                                continue;
                            vl_volume got;
                            const vl_status copied = vl_volume_create(&got, nx, ny, nz, VL_U8);
                            CHECK(copied == VL_OK, "cannot allocate %dx%dx%d", nx, ny, nz);
                            if (copied != VL_OK)
                                return test_finish("image2d_morph");
                            memcpy(got.data, src, (size_t)nx * ny * nz);
                            uint8_t *want = malloc((size_t)nx * ny * nz);
                            for (int i = 0; i < nx * ny * nz; i++)
                                want[i] = src[i] != 0;
                            int planar = per_slice || nz == 1;
                            reference(want, nx, ny, nz, (vl_morphology_op)op, (vl_structuring_element)se, r, planar);
                            vl_status status = vl_morphology_apply(&got, (vl_morphology_op)op,
                                                                   (vl_structuring_element)se, r, per_slice,
                                                                   &(vl_device){.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU},
                                                                   NULL);
                            /* No usable GPU shows on the first call; a device error after that is a failure. */
                            if (status == VL_ERR_DEVICE && gpu && cases == 0)
                                TEST_SKIP("no usable GPU: %s", vl_last_error());
                            cases++;
                            CHECK(status == VL_OK && memcmp(got.data, want, (size_t)nx * ny * nz) == 0,
                                  "%dx%dx%d density %.1f %s %s r=%d per_slice=%d: %s", nx, ny, nz, densities[d],
                                  vl_morphology_op_name(op), vl_structuring_element_name(se), r, per_slice,
                                  status == VL_OK ? "differs from the reference" : "failed");
                            free(want);
                            vl_volume_free(&got);
                        }
            vl_volume_free(&source);
        }
    printf("image2d_morph %s: %ld cases\n", gpu ? "gpu" : "cpu", cases);
    return test_finish("image2d_morph");
}
