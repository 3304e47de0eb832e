/* PNG reading and writing through libpng (classic API, so no gamma or colour conversion happens). */
#include <png.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/atomic_file.h"
#include "image2d_formats.h"
#include "voxlabel/error.h"

/* libpng reports errors by longjmp; the message is kept so the failure names its cause. */
typedef struct png_context {
    char message[256];
} png_context;

static void on_png_error(png_structp png, png_const_charp message)
{
    png_context *context = png_get_error_ptr(png);
    snprintf(context->message, sizeof context->message, "%s", message);
    png_longjmp(png, 1);
}

/* Warnings about ancillary chunks (a known incorrect sRGB profile, a bad tEXt CRC) are dropped; a warning about
 * the image data (libpng goes on with pixels it did not decode: a short or corrupt IDAT stream) is an error. */
static void on_png_warning(png_structp png, png_const_charp message)
{
    if (message && (strstr(message, "IDAT") || strstr(message, "image data") || strstr(message, "compressed data") ||
                    strstr(message, "data check") || strstr(message, "zlib") || strstr(message, "Read Error")))
        on_png_error(png, message);
}

/* Deflate expands at most 1032 times (RFC 1951's longest match over the shortest code), so a PNG of `file_bytes`
 * cannot hold more than 1032 x file_bytes bytes of filtered rows; a header claiming more is refused before any row
 * is allocated. */
#define VL_DEFLATE_MAX_RATIO 1032u

vl_status vl_png_read(const char *path, vl_image *image)
{
    memset(image, 0, sizeof *image);
    FILE *file = fopen(path, "rb");
    if (!file)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    png_context context = {""};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    png_bytep *volatile rows = NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        fclose(file);
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate the PNG decoder", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        free(rows);
        vl_image_free(image);
        return vl_fail(VL_ERR_INPUT, "%s: not a valid PNG: %s", path, context.message);
    }
    png_init_io(png, file);
    png_set_user_limits(png, 1u << 16, 1u << 16);
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    {
        fpos_t here;
        long file_bytes = -1;
        if (fgetpos(file, &here) == 0 && fseek(file, 0, SEEK_END) == 0) {
            file_bytes = ftell(file);
            fsetpos(file, &here);
        }
        const uint64_t filtered = (uint64_t)height * ((uint64_t)png_get_rowbytes(png, info) + 1);
        if (file_bytes >= 0 && filtered > (uint64_t)file_bytes * VL_DEFLATE_MAX_RATIO + 4096)
            png_error(png, "the header claims more pixels than the file can hold");
    }
    int color_type = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(png);
    png_set_strip_alpha(png);
    if (depth == 16)
        png_set_swap(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    int out_depth = png_get_bit_depth(png, info);
    vl_status status = vl_image_create(image, width, height, channels, out_depth);
    if (status != VL_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        return status;
    }
    size_t row_bytes = (size_t)width * (size_t)channels * (size_t)(out_depth / 8);
    if (png_get_rowbytes(png, info) != row_bytes) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        vl_image_free(image);
        return vl_fail(VL_ERR_INPUT, "%s: unsupported PNG layout", path);
    }
    rows = malloc(sizeof *rows * height);
    if (!rows) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(file);
        vl_image_free(image);
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate row pointers", path);
    }
    for (png_uint_32 y = 0; y < height; y++)
        rows[y] = (png_bytep)image->data + (size_t)y * row_bytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    fclose(file);
    return VL_OK;
}

/* Writes `image` into an open file; returns 0 or sets `why`. Compression level 3 keeps large
 * label maps quick to write while still much smaller than raw. */
static int write_png_stream(FILE *file, const vl_image *image, char *why, size_t why_size)
{
    png_context context = {""};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &context, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(why, why_size, "cannot allocate the PNG encoder");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        snprintf(why, why_size, "%s", context.message);
        return -1;
    }
    png_init_io(png, file);
    png_set_compression_level(png, 3);
    png_set_IHDR(png, info, (png_uint_32)image->width, (png_uint_32)image->height, image->bit_depth,
                 image->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (image->bit_depth == 16)
        png_set_swap(png);
    size_t row_bytes = (size_t)image->width * (size_t)image->channels * (size_t)(image->bit_depth / 8);
    for (int64_t y = 0; y < image->height; y++)
        png_write_row(png, (png_const_bytep)image->data + (size_t)y * row_bytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

vl_status vl_png_write(const char *path, const vl_image *image, int force)
{
    if (!image->data || image->width <= 0 || image->height <= 0 || image->width > 0x7fffffff ||
        image->height > 0x7fffffff || (image->channels != 1 && image->channels != 3) ||
        (image->bit_depth != 8 && image->bit_depth != 16))
        return vl_fail(VL_ERR_ARGUMENT, "%s: image cannot be stored as PNG", path);
    vl_atomic_file output;
    vl_status status = vl_atomic_file_begin(&output, path, force);
    if (status != VL_OK)
        return status;
    FILE *file = fopen(output.temp_path, "wb");
    if (!file) {
        vl_atomic_file_discard(&output);
        char shown[VL_PATH_MAX];
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot open the temporary file", vl_output_name(path, shown, sizeof shown));
    }
    char why[256] = "";
    errno = 0;
    int failed = write_png_stream(file, image, why, sizeof why);
    int error = errno;
    /* libpng's own writer stops at a short write ("Write Error"); flush and close catch the rest. */
    if (!failed && (fflush(file) != 0 || ferror(file))) {
        failed = 1;
        error = errno;
        why[0] = '\0';
    }
    if (fclose(file) != 0 && !failed) {
        failed = 1;
        error = errno;
        why[0] = '\0';
    }
    if (failed) {
        vl_atomic_file_discard(&output);
        char shown[VL_PATH_MAX];
        return vl_fail(VL_ERR_OUTPUT, "%s: write failed: %s", vl_output_name(path, shown, sizeof shown),
                       error ? strerror(error) : why[0] ? why : "disk full or I/O error");
    }
    return vl_atomic_file_commit(&output);
}
