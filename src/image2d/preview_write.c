/* Preview files: one slice, a montage of N slices, and three orthogonal views. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/preview.h"

#define GUTTER 4

static uint32_t label_at(const vl_volume *labels, int64_t index)
{
    switch (labels->dtype) {
    case VL_U8: return ((const uint8_t *)labels->data)[index];
    case VL_I16: return (uint32_t)((const int16_t *)labels->data)[index];
    case VL_U16: return ((const uint16_t *)labels->data)[index];
    case VL_U32: return ((const uint32_t *)labels->data)[index];
    case VL_F32: return (uint32_t)((const float *)labels->data)[index];
    }
    return 0;
}

/* Copies `tile` into `canvas` with its top-left corner at (x0, y0). */
static void paste(vl_image *canvas, const vl_image *tile, int64_t x0, int64_t y0)
{
    for (int64_t y = 0; y < tile->height; y++)
        memcpy((uint8_t *)canvas->data + 3 * ((y0 + y) * canvas->width + x0),
               (const uint8_t *)tile->data + 3 * y * tile->width, (size_t)(3 * tile->width));
}

vl_status vl_preview_write_slice(const char *path, const vl_volume *ct, const vl_volume *labels, int64_t z,
                                 const vl_preview_options *options)
{
    vl_image image;
    vl_status status = vl_preview_render(ct, labels, 2, z, options, &image);
    if (status == VL_OK)
        status = vl_png_write(path, &image, options->force);
    vl_image_free(&image);
    return status;
}

vl_status vl_preview_write_montage(const char *path, const vl_volume *ct, const vl_volume *labels,
                                   const vl_preview_options *options)
{
    int64_t first = 0, last = ct->nz - 1, plane = ct->nx * ct->ny;
    if (labels) {
        int64_t low = -1, high = -1;
        for (int64_t z = 0; z < ct->nz; z++)
            for (int64_t i = 0; i < plane; i++)
                if (label_at(labels, z * plane + i)) {
                    if (low < 0)
                        low = z;
                    high = z;
                    break;
                }
        if (low >= 0)
            first = low, last = high;
    }
    int64_t n = options->montage_slices > 0 ? options->montage_slices : 12;
    if (n > last - first + 1)
        n = last - first + 1;
    int64_t columns = options->montage_columns > 0 ? options->montage_columns : (int64_t)ceil(sqrt((double)n));
    int64_t rows = (n + columns - 1) / columns;
    vl_image canvas = {0}, tile = {0};
    vl_status status = VL_OK;
    for (int64_t k = 0; k < n && status == VL_OK; k++) {
        int64_t z = n == 1 ? (first + last) / 2 : first + (int64_t)llround((double)k * (last - first) / (n - 1));
        status = vl_preview_render(ct, labels, 2, z, options, &tile);
        if (status != VL_OK)
            break;
        if (!canvas.data)
            status = vl_image_create(&canvas, columns * tile.width + (columns - 1) * GUTTER,
                                     rows * tile.height + (rows - 1) * GUTTER, 3, 8);
        if (status == VL_OK)
            paste(&canvas, &tile, (k % columns) * (tile.width + GUTTER), (k / columns) * (tile.height + GUTTER));
        vl_image_free(&tile);
    }
    if (status == VL_OK)
        status = vl_png_write(path, &canvas, options->force);
    vl_image_free(&canvas);
    return status;
}

/* Centroid (voxel indices) of the label with most voxels; the volume's centre when there is none. */
static vl_status largest_label_centre(const vl_volume *labels, const vl_volume *ct, int64_t centre[3])
{
    centre[0] = ct->nx / 2, centre[1] = ct->ny / 2, centre[2] = ct->nz / 2;
    if (!labels)
        return VL_OK;
    int64_t voxels = ct->nx * ct->ny * ct->nz;
    uint32_t most = 0;
    for (int64_t i = 0; i < voxels; i++) {
        uint32_t l = label_at(labels, i);
        most = l > most ? l : most;
    }
    if (!most)
        return VL_OK;
    uint64_t *counts = calloc((size_t)most + 1, sizeof *counts);
    if (!counts)
        return vl_fail(VL_ERR_MEMORY, "preview: out of memory");
    for (int64_t i = 0; i < voxels; i++)
        counts[label_at(labels, i)]++;
    uint32_t largest = 1;
    for (uint32_t l = 1; l <= most; l++)
        if (counts[l] > counts[largest])
            largest = l;
    double sum[3] = {0, 0, 0};
    for (int64_t z = 0, i = 0; z < ct->nz; z++)
        for (int64_t y = 0; y < ct->ny; y++)
            for (int64_t x = 0; x < ct->nx; x++, i++)
                if (label_at(labels, i) == largest)
                    sum[0] += (double)x, sum[1] += (double)y, sum[2] += (double)z;
    for (int a = 0; a < 3; a++)
        centre[a] = (int64_t)llround(sum[a] / (double)counts[largest]);
    free(counts);
    return VL_OK;
}

vl_status vl_preview_write_orthogonal(const char *path, const vl_volume *ct, const vl_volume *labels,
                                      const vl_preview_options *options)
{
    int64_t centre[3];
    vl_status status = largest_label_centre(labels, ct, centre);
    if (status != VL_OK)
        return status;
    vl_image views[3] = {{0}, {0}, {0}};
    const int axes[3] = {2, 1, 0}; /* axial, coronal, sagittal */
    int64_t width = 0, height = 0;
    for (int k = 0; k < 3 && status == VL_OK; k++) {
        status = vl_preview_render(ct, labels, axes[k], centre[axes[k]], options, &views[k]);
        if (status == VL_OK) {
            width += views[k].width + (k ? GUTTER : 0);
            height = views[k].height > height ? views[k].height : height;
        }
    }
    vl_image canvas = {0};
    if (status == VL_OK)
        status = vl_image_create(&canvas, width, height, 3, 8);
    if (status == VL_OK) {
        for (int k = 0, x = 0; k < 3; x += (int)views[k].width + GUTTER, k++)
            paste(&canvas, &views[k], x, (height - views[k].height) / 2);
        status = vl_png_write(path, &canvas, options->force);
    }
    for (int k = 0; k < 3; k++)
        vl_image_free(&views[k]);
    vl_image_free(&canvas);
    return status;
}
