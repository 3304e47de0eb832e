/* Internal: the per-format 2D image readers behind vl_image_read (png.c, jpeg.c). They get their pixel
 * buffers from image2d_buffer.c (vl_image_create, vl_image_free) and never call back into image2d.c. */
#ifndef VL_IMAGE2D_FORMATS_H
#define VL_IMAGE2D_FORMATS_H

#include "voxlabel/image2d.h"

vl_status vl_png_read(const char *path, vl_image *image);
vl_status vl_jpeg_read(const char *path, vl_image *image);

#endif
