/* PNG and JPEG images for the commands that take either a volume or an image: whether a file is one, and
 * an image as a grey volume (cut, background). */
#ifndef VL_CLI_IMAGE_GREY_H
#define VL_CLI_IMAGE_GREY_H

#include <stdint.h>

#include "voxlabel/image2d.h"
#include "voxlabel/volume.h"

/* 1 when `path` starts with the PNG or JPEG signature. */
int cli_is_image_file(const char *path);
/* 1 when `path` starts with the first two bytes of the PNG signature (0x89 'P') or of a JPEG (0xff 0xd8):
 * the looser test by which color, shapes and the feature commands send a file to the image reader. */
int cli_looks_like_image_file(const char *path);
/* 8-bit grey sample of pixel i: grey as stored (16-bit: the high byte); colour with OpenCV's fixed-point
 * BGR2GRAY weights (0.299, 0.587, 0.114 in units of 2^-14, rounded). */
uint8_t cli_image_grey8(const vl_image *image, int64_t i);
/* Reads a PNG or JPEG as a one-slice U8 volume of its grey samples (unit spacing, identity geometry). */
vl_status cli_image_read_grey(const char *path, vl_volume *volume);

#endif
