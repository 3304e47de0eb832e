/* voxlabel color: colour frame -> HSV range mask -> optional morphology -> 2D labels -> PNGs (+ shapes.csv). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_image_grey.h"
#include "cli_outputs.h"
#include "voxlabel/error.h"
#include "voxlabel/color.h"
#include "voxlabel/dicom.h"
#include "voxlabel/image2d.h"
#include "voxlabel/morphology.h"
#include "voxlabel/preview.h"
#include "voxlabel/shape.h"

static const char color_help[] =
    "usage: voxlabel color INPUT -o DIR [options]\n"
    "\n"
    "Thresholds a colour image in HSV, optionally cleans the mask with morphology, labels its connected\n"
    "components (numbered in MATLAB bwlabeln order) and writes DIR/mask.png (0/255), DIR/labels.png\n"
    "(16-bit grey, pixel value = label), DIR/overlay.png (the input with the labels in ITK-SNAP colours)\n"
    "and, with --shapes, DIR/shapes.csv. INPUT is a PNG, a JPEG or a colour DICOM file (RGB, YBR, palette).\n"
    "\n"
    "colour (docs/stages2d.md):\n"
    "  --mode thesis|opencv|opencv-full\n"
    "                        thesis (default): the thesis kernel's integer HSV, H 0..255; opencv: OpenCV 8-bit HSV,\n"
    "                        H 0..179; opencv-full: OpenCV HSV_FULL, H 0..255\n"
    "  --hue H               hue centre (default 0 = red)\n"
    "  --hue-tol T           hue tolerance (default 20). thesis keeps (uint8)(H - hue) <= T or >= 255 - T, i.e.\n"
    "                        hues H-T..H+T+1 mod 256; opencv modes keep H-T..H+T (inclusive, wrapping)\n"
    "  --hue-range LO:HI     opencv modes: inclusive hue bounds instead of --hue/--hue-tol, wrapping if LO > HI\n"
    "  --smin S --smax S     saturation bounds, inclusive (default 30..255)\n"
    "  --vmin V --vmax V     value bounds, inclusive (default 30..255)\n"
    "mask and labels:\n"
    "  --morph none|thesis|erode:R|dilate:R|open:R|close:R\n"
    "                        thesis: erosion by the 5x5 cross then dilation by the 3x3 cross (default none)\n"
    "  --se box|cross|ball   element of --morph OP:R (default cross)\n"
    "  --conn 4|8            connectivity of the labels (default 8; the thesis used 4)\n"
    "  --frame K             frame of a multi-frame DICOM (default 0)\n"
    "  --device auto|cpu|gpu[:N]\n"
    "                        where to threshold, filter and label (default auto)\n"
    "output:\n"
    "  -o, --output DIR      output directory (created if missing)\n"
    "  --shapes              also write DIR/shapes.csv (one row per component)\n"
    "  --force               replace existing outputs\n"
    "\n"
    "examples:\n"
    "  voxlabel color frame.png --hue 0 --hue-tol 20 --smin 30 --vmin 30 --morph thesis --conn 4 -o red/\n"
    "  voxlabel color doppler.dcm --mode opencv --hue-range 170:10 --smin 80 -o flow/\n"
    "  voxlabel color lesion.jpg --mode opencv-full --hue 20 --hue-tol 12 --shapes -o lesion/\n";

typedef struct color_arguments {
    const char *input, *output;
    vl_color_range range;
    int hue, hue_tol, hue_lo, hue_hi, have_range;
    int morph_op, morph_radius; /* morph_op -1: none */
    vl_structuring_element se;
    int thesis_morph, connectivity, shapes, force;
    int64_t frame;
    vl_device device;
} color_arguments;

static int parse_byte(const char *option, const char *text, int max, int *value)
{
    int64_t parsed;
    if (cli_parse_int64(option, text, 0, max, &parsed))
        return CLI_EXIT_USAGE;
    *value = (int)parsed;
    return 0;
}

static int parse_morph(const char *text, color_arguments *args)
{
    args->morph_op = -1;
    args->thesis_morph = 0;
    if (strcmp(text, "none") == 0)
        return 0;
    if (strcmp(text, "thesis") == 0) {
        args->thesis_morph = 1;
        args->morph_op = VL_MORPH_OPEN;
        return 0;
    }
    const char *colon = strchr(text, ':');
    char name[16];
    if (!colon || (size_t)(colon - text) >= sizeof name)
        return cli_error(CLI_EXIT_USAGE, "--morph: '%s' is not none, thesis or OP:R (OP erode|dilate|open|close)", text);
    memcpy(name, text, (size_t)(colon - text));
    name[colon - text] = '\0';
    vl_morphology_op op;
    if (vl_morphology_op_parse(name, &op) != VL_OK)
        return cli_error(CLI_EXIT_USAGE, "--morph: %s", vl_last_error());
    args->morph_op = op;
    return parse_byte("--morph", colon + 1, 32, &args->morph_radius);
}

static int parse_arguments(int argc, char **argv, color_arguments *args)
{
    memset(args, 0, sizeof *args);
    vl_color_mode mode = VL_COLOR_THESIS;
    args->hue_tol = 20;
    args->morph_op = -1;
    args->se = VL_SE_CROSS;
    args->connectivity = 8;
    vl_device_default(&args->device);
    int smin = 30, smax = 255, vmin = 30, vmax = 255, code;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            fputs(color_help, stdout);
            return -1;
        }
        if (strcmp(option, "--shapes") == 0) {
            args->shapes = 1;
            continue;
        }
        if (strcmp(option, "--force") == 0) {
            args->force = 1;
            continue;
        }
        if (option[0] != '-') {
            if (args->input)
                return cli_error(CLI_EXIT_USAGE, "%s: only one INPUT is allowed (see 'voxlabel color --help')", option);
            args->input = option;
            continue;
        }
        static const char *const valued[] = {"-o", "--output", "--mode", "--hue", "--hue-tol", "--hue-range",
                                             "--smin", "--smax", "--vmin", "--vmax", "--morph", "--se", "--conn",
                                             "--frame", "--device"};
        if (cli_option_index(option, valued, sizeof valued / sizeof valued[0]) < 0)
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel color --help')", option);
        if (!(value = cli_option_value(argc, argv, &i)))
            return CLI_EXIT_USAGE;
        code = 0;
        if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0)
            args->output = value;
        else if (strcmp(option, "--mode") == 0) {
            if (vl_color_mode_parse(value, &mode) != VL_OK)
                return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
        } else if (strcmp(option, "--hue") == 0)
            code = parse_byte(option, value, 255, &args->hue);
        else if (strcmp(option, "--hue-tol") == 0)
            code = parse_byte(option, value, 255, &args->hue_tol);
        else if (strcmp(option, "--hue-range") == 0) {
            const char *colon = strchr(value, ':');
            char low[16];
            if (!colon || (size_t)(colon - value) >= sizeof low)
                return cli_error(CLI_EXIT_USAGE, "--hue-range: '%s' is not LO:HI", value);
            memcpy(low, value, (size_t)(colon - value));
            low[colon - value] = '\0';
            code = parse_byte(option, low, 255, &args->hue_lo);
            if (!code)
                code = parse_byte(option, colon + 1, 255, &args->hue_hi);
            args->have_range = 1;
        } else if (strcmp(option, "--smin") == 0)
            code = parse_byte(option, value, 255, &smin);
        else if (strcmp(option, "--smax") == 0)
            code = parse_byte(option, value, 255, &smax);
        else if (strcmp(option, "--vmin") == 0)
            code = parse_byte(option, value, 255, &vmin);
        else if (strcmp(option, "--vmax") == 0)
            code = parse_byte(option, value, 255, &vmax);
        else if (strcmp(option, "--morph") == 0)
            code = parse_morph(value, args);
        else if (strcmp(option, "--se") == 0) {
            if (vl_structuring_element_parse(value, &args->se) != VL_OK || args->se == VL_SE_THESIS)
                return cli_error(CLI_EXIT_USAGE, "--se: '%s' is not one of box, cross, ball", value);
        } else if (strcmp(option, "--conn") == 0) {
            int64_t conn;
            code = cli_parse_int64(option, value, 4, 8, &conn);
            if (!code && conn != 4 && conn != 8)
                return cli_error(CLI_EXIT_USAGE, "--conn: %lld is not 4 or 8", (long long)conn);
            args->connectivity = (int)conn;
        } else if (strcmp(option, "--frame") == 0)
            code = cli_parse_int64(option, value, 0, INT32_MAX, &args->frame);
        else if (strcmp(option, "--device") == 0)
            code = cli_parse_device(value, &args->device);
        if (code)
            return code;
    }
    if (!args->input)
        return cli_error(CLI_EXIT_USAGE, "color: INPUT is missing (see 'voxlabel color --help')");
    if (!args->output)
        return cli_error(CLI_EXIT_USAGE, "color: -o DIR is missing (see 'voxlabel color --help')");
    vl_color_range_default(&args->range, mode);
    if (args->have_range) {
        if (mode == VL_COLOR_THESIS)
            return cli_error(CLI_EXIT_USAGE, "--hue-range: only for --mode opencv or opencv-full");
        if (args->hue_lo >= vl_color_hue_steps(mode) || args->hue_hi >= vl_color_hue_steps(mode))
            return cli_error(CLI_EXIT_USAGE, "--hue-range: bounds must be below %d for mode %s",
                             vl_color_hue_steps(mode), vl_color_mode_name(mode));
        args->range.hue_lo = args->hue_lo;
        args->range.hue_hi = args->hue_hi;
    } else if (vl_color_range_set_hue(&args->range, args->hue, args->hue_tol) != VL_OK) {
        return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
    }
    args->range.s_min = smin, args->range.s_max = smax, args->range.v_min = vmin, args->range.v_max = vmax;
    return 0;
}

/* Reads INPUT as 8-bit RGB: PNG/JPEG directly, anything else through the colour DICOM reader. */
static vl_status read_rgb(const char *path, int64_t frame, vl_image *image)
{
    if (cli_looks_like_image_file(path))
        return vl_image_read_rgb8(path, image);
    vl_dicom_rgb dicom;
    vl_status status = vl_dicom_read_rgb(path, &dicom);
    if (status != VL_OK)
        return status;
    if (frame >= dicom.frames) {
        long long frames = (long long)dicom.frames; /* read before the free clears the struct */
        vl_dicom_rgb_free(&dicom);
        return vl_fail(VL_ERR_ARGUMENT, "--frame: %s has %lld frame(s)", path, frames);
    }
    status = vl_image_create(image, dicom.width, dicom.height, 3, 8);
    if (status == VL_OK)
        memcpy(image->data, dicom.rgb + (size_t)(frame * dicom.width * dicom.height * 3),
               (size_t)(dicom.width * dicom.height * 3));
    vl_dicom_rgb_free(&dicom);
    return status;
}

static vl_status write_outputs(const cli_outputs *outputs, const vl_image *rgb, const vl_volume *mask,
                               const vl_slice_labels *labels, int shapes)
{
    int64_t pixels = rgb->width * rgb->height;
    vl_image mask_png, labels_png, overlay;
    vl_status status = vl_image_create(&mask_png, rgb->width, rgb->height, 1, 8);
    if (status != VL_OK)
        return status;
    for (int64_t i = 0; i < pixels; i++)
        ((uint8_t *)mask_png.data)[i] = ((const uint8_t *)mask->data)[i] ? 255 : 0;
    status = vl_png_write(cli_outputs_staged(outputs, 0), &mask_png, 1);
    vl_image_free(&mask_png);
    if (status != VL_OK)
        return status;
    if (labels->count[0] > 65535)
        return vl_fail(VL_ERR_OUTPUT, "labels.png: %u components do not fit 16-bit PNG", labels->count[0]);
    if ((status = vl_image_create(&labels_png, rgb->width, rgb->height, 1, 16)) != VL_OK)
        return status;
    const uint32_t *label_data = labels->labels.data;
    for (int64_t i = 0; i < pixels; i++)
        ((uint16_t *)labels_png.data)[i] = (uint16_t)label_data[i];
    status = vl_png_write(cli_outputs_staged(outputs, 1), &labels_png, 1);
    vl_image_free(&labels_png);
    if (status != VL_OK)
        return status;
    if ((status = vl_image_create(&overlay, rgb->width, rgb->height, 3, 8)) != VL_OK)
        return status;
    memcpy(overlay.data, rgb->data, (size_t)(pixels * 3));
    vl_preview_blend(overlay.data, label_data, rgb->width, rgb->height, 0.5, 0);
    status = vl_png_write(cli_outputs_staged(outputs, 2), &overlay, 1);
    vl_image_free(&overlay);
    if (status != VL_OK || !shapes)
        return status;
    vl_shape_table table;
    if ((status = vl_shape_measure(labels, NULL, NULL, &table)) != VL_OK)
        return status;
    status = vl_shape_write_csv(cli_outputs_staged(outputs, 3), &table, 1);
    vl_shape_table_free(&table);
    return status;
}

int cmd_color(int argc, char **argv)
{
    color_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    const char *const names[] = {"mask.png", "labels.png", "overlay.png", "shapes.csv"};
    cli_outputs outputs;
    if ((code = cli_outputs_prepare(&outputs, args.output, names, args.shapes ? 4 : 3, args.force)))
        return code;
    vl_image rgb = {0};
    vl_volume mask = {0};
    vl_slice_labels labels = {0};
    vl_status status = read_rgb(args.input, args.frame, &rgb);
    if (status == VL_OK)
        status = vl_volume_create_uninitialised(&mask, rgb.width, rgb.height, 1, VL_U8);
    if (status == VL_OK)
        status = vl_color_threshold(rgb.data, mask.data, rgb.width * rgb.height, &args.range, &args.device);
    if (status == VL_OK && args.morph_op >= 0)
        status = vl_morphology_apply(&mask, (vl_morphology_op)args.morph_op,
                                     args.thesis_morph ? VL_SE_THESIS : args.se, args.morph_radius, 1, &args.device, NULL);
    if (status == VL_OK)
        status = vl_label_slices(&mask, args.connectivity, &args.device, &labels);
    if (status == VL_OK)
        status = write_outputs(&outputs, &rgb, &mask, &labels, args.shapes);
    if (status == VL_OK && (code = cli_outputs_commit(&outputs)) == 0)
        printf("%s: %lldx%lld, %s mode, %u component(s) -> %s\n", args.input, (long long)rgb.width,
               (long long)rgb.height, vl_color_mode_name(args.range.mode), labels.count[0], args.output);
    if (status != VL_OK) {
        code = cli_status_error(status);
        cli_outputs_abort(&outputs);
    }
    vl_slice_labels_free(&labels);
    vl_volume_free(&mask);
    vl_image_free(&rgb);
    return code;
}
