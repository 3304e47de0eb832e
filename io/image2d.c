/* 2D images: format detection, dispatch to the PNG and JPEG readers (image2d_formats.h) and conversion
 * to 8-bit RGB. Calls go down only: image2d.c -> png.c, jpeg.c -> image2d_buffer.c. */
#include <stdio.h>
#include <string.h>

#include "image2d_formats.h"
#include "voxlabel/error.h"
#include "voxlabel/image2d.h"

vl_status vl_image_read(const char *path, vl_image *image)
{
    memset(image, 0, sizeof *image);
    FILE *file = fopen(path, "rb");
    if (!file)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    unsigned char magic[8] = {0};
    size_t got = fread(magic, 1, sizeof magic, file);
    fclose(file);
    static const unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (got == 8 && memcmp(magic, png_magic, 8) == 0)
        return vl_png_read(path, image);
    if (got >= 3 && magic[0] == 0xff && magic[1] == 0xd8 && magic[2] == 0xff)
        return vl_jpeg_read(path, image);
    return vl_fail(VL_ERR_INPUT, "%s: neither a PNG nor a JPEG file", path);
}

vl_status vl_image_read_rgb8(const char *path, vl_image *image)
{
    vl_image source;
    vl_status status = vl_image_read(path, &source);
    if (status != VL_OK)
        return status;
    if (source.channels == 3 && source.bit_depth == 8) {
        *image = source;
        return VL_OK;
    }
    status = vl_image_create(image, source.width, source.height, 3, 8);
    if (status != VL_OK) {
        vl_image_free(&source);
        return status;
    }
    size_t pixels = (size_t)source.width * (size_t)source.height;
    uint8_t *out = image->data;
    for (size_t i = 0; i < pixels; i++)
        for (int c = 0; c < 3; c++) {
            size_t sample = i * (size_t)source.channels + (size_t)(source.channels == 3 ? c : 0);
            out[3 * i + (size_t)c] = source.bit_depth == 8 ? ((const uint8_t *)source.data)[sample]
                                                           : (uint8_t)(((const uint16_t *)source.data)[sample] >> 8);
        }
    vl_image_free(&source);
    return VL_OK;
}
