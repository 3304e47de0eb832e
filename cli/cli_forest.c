#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_forest.h"
#include "voxlabel/image2d.h"
#include "voxlabel/io.h"

static int is_picture(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (strcasecmp(dot, ".png") == 0 || strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

/* A grey picture as an nx x ny x 1 volume with unit spacing (PNG has no physical size). */
static vl_status picture_volume(const char *path, vl_volume *volume)
{
    vl_image image;
    vl_status status = vl_image_read(path, &image);
    if (status != VL_OK)
        return status;
    if (image.channels != 1) {
        const int64_t pixels = image.width * image.height;
        for (int64_t i = 0; i < pixels; i++) {
            uint32_t v[3];
            for (int c = 0; c < 3; c++)
                v[c] = image.bit_depth == 8 ? ((uint8_t *)image.data)[3 * i + c] : ((uint16_t *)image.data)[3 * i + c];
            if (v[0] != v[1] || v[1] != v[2]) {
                vl_image_free(&image);
                return vl_fail(VL_ERR_INPUT, "%s: a colour picture; give a greyscale PNG (sample values are the "
                                             "intensities, or the classes of a scribble map)",
                               path);
            }
        }
    }
    status = vl_volume_create_uninitialised(volume, image.width, image.height, 1, image.bit_depth == 8 ? VL_U8 : VL_U16);
    if (status == VL_OK) {
        const int64_t pixels = image.width * image.height;
        for (int64_t i = 0; i < pixels; i++) {
            const int64_t s = image.channels == 1 ? i : 3 * i;
            if (image.bit_depth == 8)
                ((uint8_t *)volume->data)[i] = ((uint8_t *)image.data)[s];
            else
                ((uint16_t *)volume->data)[i] = ((uint16_t *)image.data)[s];
        }
    }
    vl_image_free(&image);
    return status;
}

int cli_forest_load_image(const char *path, const cli_input_options *options, cli_input *input)
{
    if (!is_picture(path))
        return cli_input_load(path, options, input);
    memset(input, 0, sizeof *input);
    input->kind = "picture";
    const vl_status status = picture_volume(path, &input->volume);
    return status == VL_OK ? 0 : cli_status_error(status);
}

int cli_forest_load_scribbles(const char *path, vl_volume *scribbles)
{
    vl_status status;
    if (is_picture(path)) {
        status = picture_volume(path, scribbles);
    } else {
        vl_read_options read;
        vl_read_options_default(&read);
        read.progress = cli_progress();
        status = vl_read_volume(path, &read, scribbles);
    }
    return status == VL_OK ? 0 : cli_status_error(status);
}

int cli_forest_load_model(const char *path, vl_forest *forest)
{
    const vl_status status = vl_forest_load(path, forest);
    return status == VL_OK ? 0 : cli_status_error(status);
}

int cli_forest_parse_run_option(const char *option, const char *value, vl_forest_options *forest,
                                cli_input_options *input)
{
    if (strcmp(option, "--device") == 0) {
        if (cli_parse_device(value, &forest->device))
            return -CLI_EXIT_USAGE;
    } else if (strcmp(option, "--threads") == 0) {
        if (cli_parse_threads(value, &forest->threads))
            return -CLI_EXIT_USAGE;
        input->threads = forest->threads;
    } else {
        return 0;
    }
    return 1;
}

int cli_forest_label_option(const char *option, const char *value, cli_forest_label *label)
{
    if (strcmp(option, "--model") == 0) {
        label->model_path = value;
        return 1;
    }
    if (strcmp(option, "--class") == 0)
        return cli_parse_int64("--class", value, 1, VL_FOREST_MAX_CLASSES, &label->class_number) ? -CLI_EXIT_USAGE
                                                                                                   : 1;
    return 0;
}

int cli_forest_label_check(const cli_forest_label *label, int have_threshold, const char **source, double *lo,
                           double *hi)
{
    if (!label->model_path)
        return cli_error(CLI_EXIT_USAGE, "--class: give --model MODEL.vlrf too");
    if (!label->class_number)
        return cli_error(CLI_EXIT_USAGE, "--model: give --class K, the class to label (1..C of the scribbles)");
    if (have_threshold)
        return cli_error(CLI_EXIT_USAGE, "--model: a model replaces --threshold and --preset; give one or the other");
    *source = label->model_path;
    *lo = *hi = (double)label->class_number;
    return 0;
}

vl_status cli_forest_label_mask(const cli_forest_label *label, const vl_volume *image, const vl_device *device,
                                int threads, vl_volume *mask)
{
    vl_forest forest;
    vl_status status = vl_forest_load(label->model_path, &forest);
    if (status != VL_OK)
        return status;
    if (label->class_number < 1 || label->class_number > forest.class_count) {
        const int classes = forest.class_count;
        vl_forest_free(&forest);
        return vl_fail(VL_ERR_ARGUMENT, "--class: %lld, but %s knows classes 1..%d", (long long)label->class_number,
                       label->model_path, classes);
    }
    vl_forest_options options;
    vl_forest_options_default(&options);
    options.device = *device;
    options.threads = threads;
    options.progress = cli_progress();
    vl_device_outcome outcome = {0};
    status = vl_forest_predict(&forest, image, &options, NULL, mask, &outcome);
    vl_forest_free(&forest);
    if (status != VL_OK)
        return status;
    cli_report_device(&outcome, "classified", 0);
    uint8_t *m = mask->data;
    const int64_t voxels = vl_volume_voxels(mask);
    for (int64_t i = 0; i < voxels; i++)
        m[i] = m[i] == label->class_number;
    return VL_OK;
}
