/* JPEG reading through libjpeg(-turbo): grey stays grey, everything else is decoded to RGB. */
#define _POSIX_C_SOURCE 200809L /* fileno */
#include <setjmp.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <jpeglib.h>

#include "image2d_formats.h"
#include "voxlabel/error.h"

/* libjpeg's default error handler exits the process; this one jumps back with the message. */
typedef struct jpeg_failure {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} jpeg_failure;

static void on_jpeg_error(j_common_ptr decoder)
{
    jpeg_failure *failure = (jpeg_failure *)decoder->err;
    decoder->err->format_message(decoder, failure->message);
    longjmp(failure->jump, 1);
}

/* A warning (level -1: corrupt data, premature end of the file, ...) means libjpeg would go on with made-up
 * pixels; it is an error here. Trace messages (level >= 0) are dropped. */
static void on_jpeg_message(j_common_ptr decoder, int level)
{
    if (level < 0)
        on_jpeg_error(decoder);
}

/* The most pixels a JPEG of `file_bytes` may claim. Huffman coding spends at least 1 bit on each 8x8 block's DC
 * (64 pixels a bit, 512 a byte, for one component; baseline spends 2 bits, so 256 a byte); arithmetic coding can go
 * lower, so the bound is 8192 pixels a byte, 16 times the Huffman limit, and at least 2^24 pixels (16 Mpx) for any
 * file. Beyond it the header lies, and nothing is allocated for it. */
#define VL_JPEG_PIXELS_PER_BYTE 8192u
#define VL_JPEG_MIN_PIXEL_ALLOWANCE ((uint64_t)1 << 24)

vl_status vl_jpeg_read(const char *path, vl_image *image)
{
    memset(image, 0, sizeof *image);
    FILE *file = fopen(path, "rb");
    if (!file)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    struct jpeg_decompress_struct decoder;
    jpeg_failure failure;
    memset(&failure, 0, sizeof failure);
    decoder.err = jpeg_std_error(&failure.manager);
    failure.manager.error_exit = on_jpeg_error;
    failure.manager.emit_message = on_jpeg_message;
    if (setjmp(failure.jump)) {
        jpeg_destroy_decompress(&decoder);
        fclose(file);
        vl_image_free(image);
        return vl_fail(VL_ERR_INPUT, "%s: not a valid JPEG: %s", path, failure.message);
    }
    jpeg_create_decompress(&decoder);
    jpeg_stdio_src(&decoder, file);
    jpeg_read_header(&decoder, TRUE);
    struct stat info;
    const uint64_t file_bytes = fstat(fileno(file), &info) == 0 && info.st_size > 0 ? (uint64_t)info.st_size : 0;
    const uint64_t pixels = (uint64_t)decoder.image_width * decoder.image_height;
    uint64_t allowed = file_bytes * VL_JPEG_PIXELS_PER_BYTE;
    if (allowed < VL_JPEG_MIN_PIXEL_ALLOWANCE)
        allowed = VL_JPEG_MIN_PIXEL_ALLOWANCE;
    if (pixels > allowed) {
        jpeg_destroy_decompress(&decoder);
        fclose(file);
        return vl_fail(VL_ERR_INPUT, "%s: not a valid JPEG: its header claims %ux%u pixels, more than a %llu-byte file "
                                     "can hold",
                       path, (unsigned)decoder.image_width, (unsigned)decoder.image_height,
                       (unsigned long long)file_bytes);
    }
    decoder.out_color_space = decoder.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&decoder);
    int channels = decoder.output_components;
    vl_status status = vl_image_create(image, decoder.output_width, decoder.output_height, channels, 8);
    if (status != VL_OK) {
        jpeg_destroy_decompress(&decoder);
        fclose(file);
        return status;
    }
    size_t row_bytes = (size_t)decoder.output_width * (size_t)channels;
    while (decoder.output_scanline < decoder.output_height) {
        JSAMPROW row = (JSAMPROW)image->data + (size_t)decoder.output_scanline * row_bytes;
        jpeg_read_scanlines(&decoder, &row, 1);
    }
    jpeg_finish_decompress(&decoder);
    jpeg_destroy_decompress(&decoder);
    fclose(file);
    return VL_OK;
}
