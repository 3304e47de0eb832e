/* voxlabel: 2D images (colour frames, masks, label maps, rendered previews) and their PNG/JPEG files.
 *
 * Pixels are row-major, x fastest, channels interleaved: sample (x, y, c) sits at
 * data[(y*width + x)*channels + c]. 16-bit samples are in host byte order. */
#ifndef VOXLABEL_IMAGE2D_H
#define VOXLABEL_IMAGE2D_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_image {
    int64_t width, height;
    int channels;   /* 1 grey, 3 RGB */
    int bit_depth;  /* 8 (uint8_t samples) or 16 (uint16_t samples) */
    void *data;     /* owned by the image */
} vl_image;

/* Allocates a zeroed image; channels 1 or 3, bit_depth 8 or 16. */
vl_status vl_image_create(vl_image *image, int64_t width, int64_t height, int channels, int bit_depth);
void vl_image_free(vl_image *image);

/* Reads a PNG (grey, grey+alpha, RGB, RGBA, palette; 1..16 bit) or a JPEG (grey or colour), recognised by
 * content, not by name. Alpha is dropped, palettes are expanded, sub-byte grey is widened to 8 bit and
 * 16-bit samples stay 16-bit. No gamma or colour-profile correction is applied: samples are as stored. */
vl_status vl_image_read(const char *path, vl_image *image);
/* As vl_image_read, then converted to 8-bit RGB: grey is replicated, 16-bit samples keep their high byte. */
vl_status vl_image_read_rgb8(const char *path, vl_image *image);

/* Writes a PNG atomically (temporary file renamed into place); an existing file is an error unless force. */
vl_status vl_png_write(const char *path, const vl_image *image, int force);

#ifdef __cplusplus
}
#endif
#endif
