#include <stdio.h>

#include "cli_image_grey.h"

/* The first four bytes of `path`: 1 when it has them. */
static int read_signature(const char *path, unsigned char magic[4])
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return 0;
    size_t got = fread(magic, 1, 4, file);
    fclose(file);
    return got == 4;
}

int cli_is_image_file(const char *path)
{
    unsigned char magic[4] = {0};
    if (!read_signature(path, magic))
        return 0;
    return (magic[0] == 0x89 && magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G') ||
           (magic[0] == 0xff && magic[1] == 0xd8);
}

int cli_looks_like_image_file(const char *path)
{
    unsigned char magic[4] = {0};
    if (!read_signature(path, magic))
        return 0;
    return (magic[0] == 0x89 && magic[1] == 'P') || (magic[0] == 0xff && magic[1] == 0xd8);
}

uint8_t cli_image_grey8(const vl_image *image, int64_t i)
{
    int sample[3] = {0, 0, 0};
    for (int c = 0; c < image->channels && c < 3; c++) {
        int64_t at = i * image->channels + c;
        sample[c] = image->bit_depth == 8 ? ((const uint8_t *)image->data)[at] : ((const uint16_t *)image->data)[at] >> 8;
    }
    if (image->channels < 3)
        return (uint8_t)sample[0];
    return (uint8_t)((sample[0] * 4899 + sample[1] * 9617 + sample[2] * 1868 + 8192) >> 14);
}

vl_status cli_image_read_grey(const char *path, vl_volume *volume)
{
    vl_image image;
    vl_status status = vl_image_read(path, &image);
    if (status != VL_OK)
        return status;
    status = vl_volume_create_uninitialised(volume, image.width, image.height, 1, VL_U8);
    for (int64_t i = 0; status == VL_OK && i < image.width * image.height; i++)
        ((uint8_t *)volume->data)[i] = cli_image_grey8(&image, i);
    vl_image_free(&image);
    return status;
}
