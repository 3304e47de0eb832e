/* Binary morphology on the CPU (the reference).
 *
 * Every element used here (box, cross, ball) is, for each row offset (dy, dz), a contiguous run of x
 * offsets -w..w. So a pass first maps every row once:
 *   erosion:  run[x]  = min(ones ending at x, ones starting at x), i.e. the widest centred all-ones
 *             window at x is 2*run[x] - 1 wide (0 on background);
 *   dilation: near[x] = distance to the nearest foreground voxel of the row (255 when none or farther),
 * and then an output voxel combines one byte per (dy, dz) span: erosion needs run > w in every span row
 * (a row outside the volume is background, so it fails), dilation needs near <= w in some span row.
 * Elements with at most two distinct half-widths (box, cross, the thesis pair) take a faster route: the
 * rows are filtered horizontally once per half-width (AND/OR over x-w..x+w, which the compiler vectorises)
 * and the spans then combine those filtered rows directly. */
#include <stdlib.h>
#include <string.h>

#include "image2d/morphology_gpu.h"
#include "voxlabel/error.h"

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

/* filtered[x] = AND (erosion) or OR (dilation) of row[x-w..x+w], outside the row = 0. `padded` holds
 * nx + 2w bytes. */
static void filter_row(const uint8_t *row, uint8_t *filtered, uint8_t *padded, int64_t nx, int w, int dilate)
{
    memset(padded, 0, (size_t)w);
    memcpy(padded + w, row, (size_t)nx);
    memset(padded + w + nx, 0, (size_t)w);
    memcpy(filtered, padded, (size_t)nx);
    for (int d = 1; d <= 2 * w; d++) {
        const uint8_t *shifted = padded + d;
        if (dilate)
            for (int64_t x = 0; x < nx; x++)
                filtered[x] |= shifted[x];
        else
            for (int64_t x = 0; x < nx; x++)
                filtered[x] &= shifted[x];
    }
}

/* The fast route for at most two distinct half-widths; `filtered` holds one volume per nonzero width. */
static void run_pass_filtered(const uint8_t *in, uint8_t *const filtered[2], const int widths[2], int width_count,
                              uint8_t *padded, uint8_t *out, int64_t nx, int64_t ny, int64_t nz, int dilate,
                              const row_span *spans, int span_count)
{
    for (int k = 0; k < width_count; k++)
        if (widths[k] > 0)
            for (int64_t row = 0; row < ny * nz; row++)
                filter_row(in + row * nx, filtered[k] + row * nx, padded, nx, widths[k], dilate);
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
                const uint8_t *volume = in;
                for (int k = 0; k < width_count; k++)
                    if (widths[k] == spans[s].half_width && widths[k] > 0)
                        volume = filtered[k];
                const uint8_t *source = volume + (zz * ny + yy) * nx;
                if (dilate)
                    for (int64_t x = 0; x < nx; x++)
                        target[x] |= source[x];
                else
                    for (int64_t x = 0; x < nx; x++)
                        target[x] &= source[x];
            }
        }
}

/* Distinct nonzero half-widths of the spans (up to 3 looked at); returns their number. */
static int distinct_widths(const row_span *spans, int span_count, int widths[3])
{
    int count = 0;
    for (int s = 0; s < span_count; s++) {
        int w = spans[s].half_width, seen = w == 0;
        for (int k = 0; k < count && !seen; k++)
            seen = widths[k] == w;
        if (!seen) {
            if (count == 3)
                return 3;
            widths[count++] = w;
        }
    }
    return count;
}

vl_status vl_morphology_cpu(uint8_t *data, int64_t nx, int64_t ny, int64_t nz, const vl_morph_pass *passes,
                            int pass_count)
{
    size_t voxels = (size_t)(nx * ny * nz);
    uint8_t *map = NULL, *out = malloc(voxels ? voxels : 1);
    row_span *spans = malloc(sizeof *spans * VL_MORPH_MAX_OFFSETS);
    if (!out || !spans) {
        free(out), free(spans);
        return vl_fail(VL_ERR_MEMORY, "morphology: cannot allocate %zu bytes of work space", 2 * voxels);
    }
    for (size_t i = 0; i < voxels; i++)
        data[i] = data[i] != 0;
    uint8_t *filtered[2] = {NULL, NULL}, *padded = NULL;
    vl_status status = VL_OK;
    for (int p = 0; p < pass_count && status == VL_OK; p++) {
        int span_count = element_spans(&passes[p].element, spans);
        int widths[3] = {0, 0, 0};
        int width_count = distinct_widths(spans, span_count, widths);
        if (width_count <= 2) {
            for (int k = 0; k < width_count; k++)
                if (!filtered[k])
                    filtered[k] = malloc(voxels ? voxels : 1);
            if (!padded)
                padded = malloc((size_t)nx + 2 * VL_MORPH_MAX_RADIUS_2D);
            if ((width_count > 0 && !filtered[0]) || (width_count > 1 && !filtered[1]) || !padded) {
                status = vl_fail(VL_ERR_MEMORY, "morphology: cannot allocate %zu bytes of work space", 2 * voxels);
                break;
            }
            run_pass_filtered(data, filtered, widths, width_count, padded, out, nx, ny, nz, passes[p].dilate, spans,
                              span_count);
        } else {
            if (!map && !(map = malloc(voxels ? voxels : 1))) {
                status = vl_fail(VL_ERR_MEMORY, "morphology: cannot allocate %zu bytes of work space", voxels);
                break;
            }
            run_pass(data, map, out, nx, ny, nz, passes[p].dilate, spans, span_count);
        }
        memcpy(data, out, voxels);
    }
    free(map), free(out), free(spans), free(filtered[0]), free(filtered[1]), free(padded);
    return status;
}
