/* Binary morphology on the CPU (the reference).
 *
 * Every element used here (box, cross, ball) is, for each row offset (dy, dz), a contiguous run of x
 * offsets -w..w. So a pass first maps every row once:
 *   erosion:  run[x]  = min(ones ending at x, ones starting at x), i.e. the widest centred all-ones
 *             window at x is 2*run[x] - 1 wide (0 on background);
 *   dilation: near[x] = distance to the nearest foreground voxel of the row (255 when none or farther),
 * and then an output voxel combines one byte per (dy, dz) span: erosion needs run > w in every span row
 * (a row outside the volume is background, so it fails), dilation needs near <= w in some span row. */
#include <stdlib.h>
#include <string.h>

#include "morphology_gpu.h"
#include "status.h"

typedef struct row_span {
    int dy, dz, half_width;
} row_span;

/* Groups an element's offsets into (dy, dz, w) spans; returns the number of spans. */
static int element_spans(const vl_morph_element *element, row_span *spans)
{
    int count = 0;
    for (int i = 0; i < element->count; i++) {
        int found = -1;
        for (int s = 0; s < count && found < 0; s++)
            if (spans[s].dy == element->dy[i] && spans[s].dz == element->dz[i])
                found = s;
        int w = abs(element->dx[i]);
        if (found < 0) {
            spans[count].dy = element->dy[i];
            spans[count].dz = element->dz[i];
            spans[count].half_width = w;
            count++;
        } else if (w > spans[found].half_width) {
            spans[found].half_width = w;
        }
    }
    return count;
}

static void map_row_for_erosion(const uint8_t *row, uint8_t *map, int64_t nx)
{
    int run = 0;
    for (int64_t x = 0; x < nx; x++) {
        run = row[x] ? (run < 255 ? run + 1 : 255) : 0;
        map[x] = (uint8_t)run;
    }
    run = 0;
    for (int64_t x = nx - 1; x >= 0; x--) {
        run = row[x] ? (run < 255 ? run + 1 : 255) : 0;
        if (run < map[x])
            map[x] = (uint8_t)run;
    }
}

static void map_row_for_dilation(const uint8_t *row, uint8_t *map, int64_t nx)
{
    int distance = 255;
    for (int64_t x = 0; x < nx; x++) {
        distance = row[x] ? 0 : (distance < 255 ? distance + 1 : 255);
        map[x] = (uint8_t)distance;
    }
    distance = 255;
    for (int64_t x = nx - 1; x >= 0; x--) {
        distance = row[x] ? 0 : (distance < 255 ? distance + 1 : 255);
        if (distance < map[x])
            map[x] = (uint8_t)distance;
    }
}

static void run_pass(const uint8_t *in, uint8_t *map, uint8_t *out, int64_t nx, int64_t ny, int64_t nz, int dilate,
                     const row_span *spans, int span_count)
{
    for (int64_t row = 0; row < ny * nz; row++) {
        if (dilate)
            map_row_for_dilation(in + row * nx, map + row * nx, nx);
        else
            map_row_for_erosion(in + row * nx, map + row * nx, nx);
    }
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++) {
            uint8_t *target = out + (z * ny + y) * nx;
            memset(target, dilate ? 0 : 1, (size_t)nx);
            for (int s = 0; s < span_count; s++) {
                int64_t yy = y + spans[s].dy, zz = z + spans[s].dz;
                if (yy < 0 || yy >= ny || zz < 0 || zz >= nz) {
                    if (!dilate) {
                        memset(target, 0, (size_t)nx);
                        break;
                    }
                    continue;
                }
                const uint8_t *source = map + (zz * ny + yy) * nx;
                const uint8_t w = (uint8_t)spans[s].half_width;
                if (dilate)
                    for (int64_t x = 0; x < nx; x++)
                        target[x] |= source[x] <= w;
                else
                    for (int64_t x = 0; x < nx; x++)
                        target[x] &= source[x] > w;
            }
        }
}

vl_status vl_morphology_cpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz, const vl_morph_pass *passes,
                            int pass_count)
{
    size_t voxels = (size_t)(nx * ny * nz);
    uint8_t *map = malloc(voxels ? voxels : 1), *out = malloc(voxels ? voxels : 1);
    row_span *spans = malloc(sizeof *spans * VL_MORPH_MAX_OFFSETS);
    if (!map || !out || !spans) {
        free(map), free(out), free(spans);
        return vl_fail(VL_ERR_MEMORY, "morphology: cannot allocate %zu bytes of work space", 2 * voxels);
    }
    for (size_t i = 0; i < voxels; i++)
        data[i] = data[i] != 0;
    for (int p = 0; p < pass_count; p++) {
        int span_count = element_spans(&passes[p].element, spans);
        run_pass(data, map, out, nx, ny, nz, passes[p].dilate, spans, span_count);
        memcpy(data, out, voxels);
    }
    free(map), free(out), free(spans);
    return VL_OK;
}
