/* The pixel buffer of a vl_image: allocation and release. The lowest 2D room: the PNG and JPEG readers
 * (png.c, jpeg.c) and image2d.c fill images through it, and it calls no other io/ file. */
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/image2d.h"

vl_status vl_image_create(vl_image *image, int64_t width, int64_t height, int channels, int bit_depth)
{
    memset(image, 0, sizeof *image);
    if (width <= 0 || height <= 0 || (channels != 1 && channels != 3) || (bit_depth != 8 && bit_depth != 16))
        return vl_fail(VL_ERR_ARGUMENT, "image: invalid shape %lldx%lld, %d channels, %d bit", (long long)width,
                       (long long)height, channels, bit_depth);
    int64_t bytes = 0;
    vl_status status = vl_size_product(width, height, channels, bit_depth / 8, "image", &bytes);
    if (status != VL_OK)
        return status;
    image->data = calloc((size_t)bytes, 1);
    if (!image->data)
        return vl_fail(VL_ERR_MEMORY, "image: cannot allocate %lld bytes", (long long)bytes);
    image->width = width;
    image->height = height;
    image->channels = channels;
    image->bit_depth = bit_depth;
    return VL_OK;
}

void vl_image_free(vl_image *image)
{
    if (!image)
        return;
    free(image->data);
    memset(image, 0, sizeof *image);
}
