/* The feature commands' shared input handling, outputs and drawing (cli/features_cli.h). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_image_grey.h"
#include "features_cli.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/preview.h"
#include "voxlabel/threads.h"

const char features_cli_help[] =
    "CT rendering (DICOM and volume inputs):\n"
    "  --window C:W | NAME    window centre:width in HU, or soft-tissue, lung, bone, brain, liver,\n"
    "                         mediastinum (default: the series' own window, else soft-tissue 40:400)\n"
    "  --hu                   run on float HU, the contrast threshold scaled by the window width,\n"
    "                         instead of the 8-bit rendering (no clipping outside the window)\n"
    "SIFT (OpenCV's defaults):\n"
    "  --contrast-threshold T 0.04     --edge-threshold E 10     --sigma S 1.6     --octave-layers N 3\n"
    "  --max-keypoints N      keep the N strongest per slice (default 0: all)\n"
    "  --threads N            CPU threads (default: all cores)\n"
    "  --device auto|cpu|gpu[:N] where to run (default auto)\n"
    "  --force                replace existing outputs\n"
    "  --progress | --quiet   force progress on stderr | no progress, notes or summary\n";

const char features_cli_match_help[] =
    "matching and RANSAC:\n"
    "  --ratio R              Lowe's ratio test: nearest < R x second nearest (default 0.8)\n"
    "  --model similarity|affine  transform per slice pair (default similarity: rotation, scale, shift)\n"
    "  --inlier-threshold PX  RANSAC inlier distance in pixels (default 3)\n"
    "  --iterations N         RANSAC draws (default 2000)     --seed N   its random stream (default 1)\n"
    "  --min-inliers N        fewer agreeing matches = no transform (default 8)\n"
    "  --scale-range LO:HI    plausible scale of a transform (default 0.5:2); mirrored or other maps are\n"
    "                         discarded as degenerate\n";

void features_match_options_default(features_match_options *options)
{
    options->ratio = 0.8;
    vl_ransac_options_default(&options->ransac);
}

const char *features_model_name(vl_transform_model model)
{
    return model == VL_TRANSFORM_AFFINE ? "affine" : "similarity";
}

int features_cli_parse_match_option(int argc, char **argv, int *i, features_match_options *options)
{
    const char *option = argv[*i];
    static const char *const valued[] = {"--ratio", "--model", "--inlier-threshold", "--iterations", "--seed",
                                         "--min-inliers", "--scale-range"};
    const int which = cli_option_index(option, valued, sizeof valued / sizeof valued[0]);
    if (which < 0)
        return 0;
    const char *text = cli_option_value(argc, argv, i);
    if (!text)
        return -CLI_EXIT_USAGE;
    int64_t value;
    switch (which) {
    case 0:
        if (cli_parse_double(option, text, &options->ratio))
            return -CLI_EXIT_USAGE;
        if (!(options->ratio > 0 && options->ratio <= 1))
            return -cli_error(CLI_EXIT_USAGE, "--ratio: %g is outside (0, 1]", options->ratio);
        break;
    case 1:
        if (strcmp(text, "similarity") == 0)
            options->ransac.model = VL_TRANSFORM_SIMILARITY;
        else if (strcmp(text, "affine") == 0)
            options->ransac.model = VL_TRANSFORM_AFFINE;
        else
            return -cli_error(CLI_EXIT_USAGE, "--model: '%s' is not similarity or affine", text);
        break;
    case 2:
        if (cli_parse_double(option, text, &options->ransac.inlier_threshold))
            return -CLI_EXIT_USAGE;
        if (!(options->ransac.inlier_threshold > 0 && options->ransac.inlier_threshold < 1e6))
            return -cli_error(CLI_EXIT_USAGE, "--inlier-threshold: %g must be positive",
                              options->ransac.inlier_threshold);
        break;
    case 3:
        if (cli_parse_int64(option, text, 1, 10000000, &value))
            return -CLI_EXIT_USAGE;
        options->ransac.iterations = (int)value;
        break;
    case 4:
        if (cli_parse_int64(option, text, 0, INT64_MAX, &value))
            return -CLI_EXIT_USAGE;
        options->ransac.seed = (uint64_t)value;
        break;
    case 5:
        if (cli_parse_int64(option, text, 3, 1000000, &value))
            return -CLI_EXIT_USAGE;
        options->ransac.min_inliers = (int)value;
        break;
    default: {
        double lo, hi;
        char tail;
        if (sscanf(text, "%lf:%lf%c", &lo, &hi, &tail) != 2 || !(lo > 0 && lo <= 1 && hi >= 1 && hi < 1e6))
            return -cli_error(CLI_EXIT_USAGE, "--scale-range: '%s' is not LO:HI with 0 < LO <= 1 <= HI", text);
        options->ransac.min_scale = lo;
        options->ransac.max_scale = hi;
        break;
    }
    }
    return 1;
}

int features_cli_parse_pair_argument(int argc, char **argv, int *i, const char *paths[2],
                                     features_cli_options *options, features_match_options *match)
{
    const char *option = argv[*i];
    if (option[0] != '-') {
        if (paths[1])
            return -cli_error(CLI_EXIT_USAGE, "%s: only two inputs A and B (see 'voxlabel %s --help')", option,
                              argv[0]);
        paths[paths[0] ? 1 : 0] = option;
        return 1;
    }
    const int taken = features_cli_parse_option(argc, argv, i, options);
    return taken ? taken : features_cli_parse_match_option(argc, argv, i, match);
}

void features_cli_options_default(features_cli_options *options)
{
    memset(options, 0, sizeof *options);
    cli_input_options_default(&options->input);
    options->window_center = 40;
    options->window_width = 400;
    vl_sift_options_default(&options->sift);
    vl_device_default(&options->device);
}

static int parse_window(const char *text, features_cli_options *options)
{
    const char *colon = strchr(text, ':');
    if (!colon) {
        if (vl_preview_window_preset(text, &options->window_center, &options->window_width) != VL_OK)
            return cli_error(CLI_EXIT_USAGE, "--window: '%s' is neither C:W nor a window name", text);
        return 0;
    }
    char centre[64];
    snprintf(centre, sizeof centre, "%.*s", (int)(colon - text), text);
    if (cli_parse_double("--window", centre, &options->window_center) ||
        cli_parse_double("--window", colon + 1, &options->window_width))
        return CLI_EXIT_USAGE;
    if (!(options->window_width > 1))
        return cli_error(CLI_EXIT_USAGE, "--window: width %g must be above 1", options->window_width);
    return 0;
}

int features_cli_parse_option(int argc, char **argv, int *i, features_cli_options *options)
{
    const char *option = argv[*i];
    if (strcmp(option, "--hu") == 0)
        return options->hu = 1;
    if (cli_parse_run_flag(option, &options->force, &options->quiet, &options->progress))
        return 1;
    int taken = cli_input_parse_option(argc, argv, i, &options->input);
    if (taken)
        return taken;
    static const char *const valued[] = {"--window", "--contrast-threshold", "--edge-threshold", "--sigma",
                                         "--octave-layers", "--max-keypoints", "--threads", "--device"};
    const int which = cli_option_index(option, valued, sizeof valued / sizeof valued[0]);
    if (which < 0)
        return 0;
    const char *text = cli_option_value(argc, argv, i);
    if (!text)
        return -CLI_EXIT_USAGE;
    int64_t value;
    int code = 0;
    switch (which) {
    case 0:
        code = parse_window(text, options);
        options->window_given = 1;
        break;
    case 1:
        code = cli_parse_double(option, text, &options->sift.contrast_threshold);
        break;
    case 2:
        code = cli_parse_double(option, text, &options->sift.edge_threshold);
        break;
    case 3:
        code = cli_parse_double(option, text, &options->sift.sigma);
        break;
    case 4:
        if (!(code = cli_parse_int64(option, text, 1, 9, &value)))
            options->sift.octave_layers = (int)value;
        break;
    case 5:
        if (!(code = cli_parse_int64(option, text, 0, INT32_MAX, &value)))
            options->sift.max_keypoints = (int)value;
        break;
    case 6:
        if (!(code = cli_parse_int64(option, text, 0, 64, &value))) {
            options->sift.threads = (int)value;
            vl_set_thread_limit((int)value); /* matching and the other stages follow the same cap */
        }
        break;
    default:
        code = cli_parse_device(text, &options->device);
        break;
    }
    if (!code && vl_sift_options_validate(&options->sift) != VL_OK)
        code = cli_error(CLI_EXIT_USAGE, "%s: %s", option, vl_last_error());
    return code ? -code : 1;
}

static int has_image_name(const char *path)
{
    const char *dot = strrchr(path, '.');
    static const char *const endings[] = {".png", ".PNG", ".jpg", ".JPG", ".jpeg", ".JPEG"};
    for (size_t i = 0; dot && i < sizeof endings / sizeof endings[0]; i++)
        if (strcmp(dot, endings[i]) == 0)
            return 1;
    return 0;
}

/* Refuses slices SIFT cannot use: too small, or without any variation at all. */
static int check_usable(const char *path, const vl_volume *volume)
{
    if (volume->nx < VL_SIFT_MIN_SIDE || volume->ny < VL_SIFT_MIN_SIDE)
        return cli_error(CLI_EXIT_INPUT, "%s: %lldx%lld pixels is too small for SIFT (at least %dx%d)", path,
                         (long long)volume->nx, (long long)volume->ny, VL_SIFT_MIN_SIDE, VL_SIFT_MIN_SIDE);
    int64_t voxels = vl_volume_voxels(volume);
    double first = voxels ? vl_volume_value(volume, 0) : 0;
    for (int64_t i = 1; i < voxels; i++)
        if (vl_volume_value(volume, i) != first)
            return 0;
    return cli_error(CLI_EXIT_INPUT, "%s: every sample is %g: a constant image has no features", path, first);
}

int features_input_load(const char *path, features_cli_options *options, features_input *input)
{
    memset(input, 0, sizeof *input);
    input->path = path;
    int code;
    if (cli_looks_like_image_file(path) || has_image_name(path)) {
        input->is_image = 1;
        input->uses_display = 1;
        vl_status status = cli_image_read_grey(path, &input->display);
        if (status != VL_OK)
            return cli_status_error(status);
        if (options->hu || options->window_given)
            cli_note("%s is an image: --hu and --window apply to CT input only", path);
        options->sift.value_offset = 0;
        options->sift.value_range = 255;
        if ((code = check_usable(path, &input->display))) {
            features_input_free(input);
            return code;
        }
        return 0;
    }
    if ((code = cli_input_load(path, &options->input, &input->loaded)))
        return code;
    const vl_volume *ct = &input->loaded.volume;
    if ((code = check_usable(path, ct))) {
        features_input_free(input);
        return code;
    }
    if (!options->window_given && cli_input_window(&input->loaded, &options->window_center, &options->window_width) &&
        !options->quiet)
        cli_note("using the series' window %g:%g (centre:width; --window overrides it)", options->window_center,
                 options->window_width);
    vl_status status = vl_volume_create(&input->display, ct->nx, ct->ny, ct->nz, VL_U8);
    if (status != VL_OK) {
        features_input_free(input);
        return cli_status_error(status);
    }
    input->display.geometry = ct->geometry;
    uint8_t *out = input->display.data;
    for (int64_t i = 0; i < vl_volume_voxels(ct); i++)
        out[i] = vl_window_linear(vl_volume_value(ct, i), options->window_center, options->window_width);
    if (options->hu) {
        /* The window's linear map without rounding or clipping: 8-bit value = (HU - offset) * 255 / range. */
        options->sift.value_offset = options->window_center - 0.5 - (options->window_width - 1) / 2;
        options->sift.value_range = options->window_width - 1;
    } else {
        input->uses_display = 1;
        options->sift.value_offset = 0;
        options->sift.value_range = 255;
    }
    return 0;
}

const vl_volume *features_input_sift_volume(const features_input *input)
{
    return input->uses_display ? &input->display : &input->loaded.volume;
}

void features_input_free(features_input *input)
{
    if (!input->is_image)
        cli_input_free(&input->loaded);
    vl_volume_free(&input->display);
    memset(input, 0, sizeof *input);
}

int features_cli_run_sift(const features_input *input, const features_cli_options *options, vl_sift_features *out)
{
    vl_progress progress = cli_progress();
    vl_device_outcome outcome;
    vl_status status = vl_sift_volume(features_input_sift_volume(input), &options->sift, &options->device, &progress,
                                      out, &outcome);
    if (status != VL_OK)
        return cli_status_error(status);
    cli_report_device(&outcome, "SIFT", !options->quiet);
    return 0;
}

int features_cli_load_pair(const char *const paths[2], const features_cli_options *options,
                           features_cli_options per_input[2], features_input inputs[2])
{
    per_input[0] = per_input[1] = *options;
    memset(inputs, 0, 2 * sizeof *inputs);
    int code;
    if ((code = features_input_load(paths[0], &per_input[0], &inputs[0])) ||
        (code = features_input_load(paths[1], &per_input[1], &inputs[1])))
        features_input_free(&inputs[0]);
    return code;
}

int features_cli_run_sift_pair(const features_input inputs[2], const features_cli_options per_input[2],
                               vl_sift_features features[2])
{
    int code = features_cli_run_sift(&inputs[0], &per_input[0], &features[0]);
    return code ? code : features_cli_run_sift(&inputs[1], &per_input[1], &features[1]);
}

vl_status features_write_npy(const char *path, const float *descriptors, int64_t rows, int as_uint8)
{
    char header[128];
    int length = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %d), }",
                          as_uint8 ? "|u1" : "<f4", (long long)rows, VL_SIFT_DESCRIPTOR_SIZE);
    /* magic (6) + version (2) + length (2) + header + newline, padded with spaces to a multiple of 64. */
    int total = 10 + length + 1, padded = (total + 63) / 64 * 64;
    FILE *file = fopen(path, "wb");
    if (!file)
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create", path);
    int ok = fwrite("\x93NUMPY\x01\x00", 1, 8, file) == 8;
    unsigned char size[2] = {(unsigned char)((padded - 10) & 255), (unsigned char)((padded - 10) >> 8)};
    ok &= fwrite(size, 1, 2, file) == 2 && fwrite(header, 1, (size_t)length, file) == (size_t)length;
    for (int i = total; ok && i < padded; i++)
        ok &= fputc(' ', file) != EOF;
    ok &= fputc('\n', file) != EOF;
    if (as_uint8) {
        uint8_t row[VL_SIFT_DESCRIPTOR_SIZE];
        for (int64_t r = 0; ok && r < rows; r++) {
            vl_sift_descriptor_to_u8(descriptors + r * VL_SIFT_DESCRIPTOR_SIZE, row);
            ok &= fwrite(row, 1, sizeof row, file) == sizeof row;
        }
    } else if (rows) {
        ok &= fwrite(descriptors, sizeof(float) * VL_SIFT_DESCRIPTOR_SIZE, (size_t)rows, file) == (size_t)rows;
    }
    ok &= fclose(file) == 0;
    return ok ? VL_OK : vl_fail(VL_ERR_OUTPUT, "%s: write failed", path);
}

vl_status features_write_keypoints_csv(const char *path, const vl_sift_features *features, const vl_geometry *geometry)
{
    FILE *file = fopen(path, "w");
    if (!file)
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create", path);
    int ok = fprintf(file, "slice,x,y,lps_x,lps_y,lps_z,size,angle,response,octave\n") > 0;
    for (int64_t i = 0; ok && i < features->count; i++) {
        const vl_sift_keypoint *k = &features->keypoints[i];
        double lps[3];
        vl_geometry_index_to_lps(geometry, k->x, k->y, k->slice, lps);
        ok &= fprintf(file, "%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.6g,%d\n", k->slice, k->x, k->y, lps[0], lps[1],
                      lps[2], k->size, k->angle, k->response, k->octave) > 0;
    }
    ok &= fclose(file) == 0;
    return ok ? VL_OK : vl_fail(VL_ERR_OUTPUT, "%s: write failed", path);
}

vl_status features_slice_rgb(const vl_volume *display, int64_t z, vl_image *rgb)
{
    vl_status status = vl_image_create(rgb, display->nx, display->ny, 3, 8);
    if (status != VL_OK)
        return status;
    const uint8_t *grey = (const uint8_t *)display->data + z * display->nx * display->ny;
    uint8_t *out = rgb->data;
    for (int64_t i = 0; i < display->nx * display->ny; i++)
        out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = grey[i];
    return VL_OK;
}

static void plot(vl_image *rgb, int64_t x, int64_t y, const uint8_t colour[3])
{
    if (x < 0 || y < 0 || x >= rgb->width || y >= rgb->height)
        return;
    uint8_t *p = (uint8_t *)rgb->data + 3 * (y * rgb->width + x);
    p[0] = colour[0], p[1] = colour[1], p[2] = colour[2];
}

void features_draw_line(vl_image *rgb, double x0, double y0, double x1, double y1, const uint8_t colour[3])
{
    double length = fmax(fabs(x1 - x0), fabs(y1 - y0));
    int steps = (int)fmin(ceil(length), 1e5) + 1;
    for (int s = 0; s <= steps; s++) {
        double t = (double)s / steps;
        plot(rgb, (int64_t)floor(x0 + t * (x1 - x0) + 0.5), (int64_t)floor(y0 + t * (y1 - y0) + 0.5), colour);
    }
}

void features_draw_keypoint(vl_image *rgb, int64_t x_offset, const vl_sift_keypoint *k, const uint8_t colour[3])
{
    double x = k->x + (double)x_offset, y = k->y, r = fmax(k->size / 2.0, 1.5);
    int steps = (int)fmin(8 * r + 8, 4096);
    for (int s = 0; s < steps; s++) {
        double a = 2 * 3.14159265358979323846 * s / steps;
        plot(rgb, (int64_t)floor(x + r * cos(a) + 0.5), (int64_t)floor(y + r * sin(a) + 0.5), colour);
    }
    /* OpenCV's angle runs counter-clockwise with y down: the direction is (cos, -sin). */
    double a = k->angle * 3.14159265358979323846 / 180;
    features_draw_line(rgb, x, y, x + r * cos(a), y - r * sin(a), colour);
}
