/* JPEG reading through libjpeg(-turbo): grey stays grey, everything else is decoded to RGB. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

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

static void on_jpeg_message(j_common_ptr decoder, int level)
{
    (void)decoder;
    (void)level;
}

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
