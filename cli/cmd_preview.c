/* voxlabel preview: windowed CT slices with labels blended on top, as PNG (one slice, montage, orthogonal). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_input.h"
#include "voxlabel/io.h"
#include "voxlabel/preview.h"

static const char preview_help[] =
    "usage: voxlabel preview CT -o OUT.png [options]\n"
    "\n"
    "Renders a CT (DICOM directory or file, NIfTI, NRRD, MHA, MAT, raw) through a window, with labels\n"
    "alpha-blended in ITK-SNAP's default label colours. Views have square physical pixels.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT.png   the PNG to write\n"
    "  --labels FILE          labels volume of the same size (e.g. out/labels.nii.gz from voxlabel label)\n"
    "  --window C:W | NAME    window centre:width in HU, or soft-tissue (40:400), lung (-600:1500),\n"
    "                         bone (300:2000), brain (40:80), liver (30:150), mediastinum (50:350);\n"
    "                         default: the DICOM series' own WindowCenter/WindowWidth, else soft-tissue\n"
    "  --alpha A              label opacity 0..1 (default 0.5)\n"
    "  --outline              draw label outlines instead of filled labels\n"
    "view (one of; default --montage 12):\n"
    "  --slice K              axial slice K (0-based, in sorted slice order)\n"
    "  --montage N            N axial slices spread over the labelled slices (all slices without labels)\n"
    "  --columns C            montage columns (default about sqrt(N))\n"
    "  --orthogonal           axial, coronal and sagittal views through the centroid of the largest label\n"
    "  --force                replace an existing PNG\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel preview ct_dir/ --labels out/labels.nii.gz --window bone --montage 16 -o out/montage.png\n"
    "  voxlabel preview scan.nii.gz --labels out/labels.nii.gz --orthogonal --outline -o out/ortho.png\n";

static int parse_window(const char *text, vl_preview_options *options)
{
    const char *colon = strchr(text + 1, ':');
    if (!colon) {
        if (vl_preview_window_preset(text, &options->window_center, &options->window_width) != VL_OK)
            return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
        return 0;
    }
    char center[64];
    if ((size_t)(colon - text) >= sizeof center)
        return cli_error(CLI_EXIT_USAGE, "--window: '%s' is not C:W", text);
    memcpy(center, text, (size_t)(colon - text));
    center[colon - text] = '\0';
    if (cli_parse_double("--window", center, &options->window_center) ||
        cli_parse_double("--window", colon + 1, &options->window_width))
        return CLI_EXIT_USAGE;
    if (options->window_width < 1)
        return cli_error(CLI_EXIT_USAGE, "--window: width %g is below 1", options->window_width);
    return 0;
}

int cmd_preview(int argc, char **argv)
{
    const char *input_path = NULL, *output = NULL, *labels_path = NULL;
    vl_preview_options options;
    vl_preview_options_default(&options);
    cli_input_options input_options;
    cli_input_options_default(&input_options);
    int64_t slice = -1, value;
    int orthogonal = 0, window_given = 0, code;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *text;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(preview_help, cli_input_help);
            return CLI_EXIT_OK;
        }
        if (option[0] != '-') {
            if (input_path)
                return cli_error(CLI_EXIT_USAGE, "%s: only one CT is allowed (see 'voxlabel preview --help')", option);
            input_path = option;
            continue;
        }
        if (strcmp(option, "--outline") == 0) {
            options.outline = 1;
            continue;
        }
        if (strcmp(option, "--orthogonal") == 0) {
            orthogonal = 1;
            continue;
        }
        if (strcmp(option, "--force") == 0) {
            options.force = 1;
            continue;
        }
        int taken = cli_input_parse_option(argc, argv, &i, &input_options);
        if (taken < 0)
            return -taken;
        if (taken)
            continue;
        if (strcmp(option, "-o") && strcmp(option, "--output") && strcmp(option, "--labels") &&
            strcmp(option, "--window") && strcmp(option, "--alpha") && strcmp(option, "--slice") &&
            strcmp(option, "--montage") && strcmp(option, "--columns"))
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel preview --help')", option);
        if (!(text = cli_option_value(argc, argv, &i)))
            return CLI_EXIT_USAGE;
        if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
            output = text;
        } else if (strcmp(option, "--labels") == 0) {
            labels_path = text;
        } else if (strcmp(option, "--window") == 0) {
            if ((code = parse_window(text, &options)))
                return code;
            window_given = 1;
        } else if (strcmp(option, "--alpha") == 0) {
            if (cli_parse_double(option, text, &options.alpha))
                return CLI_EXIT_USAGE;
            if (options.alpha < 0 || options.alpha > 1)
                return cli_error(CLI_EXIT_USAGE, "--alpha: %g is outside 0..1", options.alpha);
        } else if (strcmp(option, "--slice") == 0) {
            if (cli_parse_int64(option, text, 0, INT32_MAX, &slice))
                return CLI_EXIT_USAGE;
        } else {
            if (cli_parse_int64(option, text, 1, 256, &value))
                return CLI_EXIT_USAGE;
            if (strcmp(option, "--montage") == 0)
                options.montage_slices = (int)value;
            else
                options.montage_columns = (int)value;
        }
    }
    if (!input_path || !output)
        return cli_error(CLI_EXIT_USAGE, "preview: CT and -o OUT.png are required (see 'voxlabel preview --help')");
    if (slice >= 0 && orthogonal)
        return cli_error(CLI_EXIT_USAGE, "preview: --slice and --orthogonal exclude each other");

    cli_input input;
    if ((code = cli_input_load(input_path, &input_options, &input)))
        return code;
    if (!window_given && cli_input_window(&input, &options.window_center, &options.window_width))
        cli_note("using the series' window %g:%g (centre:width; --window overrides it)", options.window_center,
                 options.window_width);
    vl_volume labels = {0};
    vl_status status = VL_OK;
    if (labels_path) {
        vl_read_options read;
        vl_read_options_default(&read);
        status = vl_read_volume(labels_path, &read, &labels);
        /* The labels must lie on the CT's grid; refuse before any slice is chosen or drawn (issue 16). */
        if (status == VL_OK &&
            (labels.nx != input.volume.nx || labels.ny != input.volume.ny || labels.nz != input.volume.nz))
            status = vl_fail(VL_ERR_INPUT, "%s: labels are %lldx%lldx%lld but the CT %s is %lldx%lldx%lld", labels_path,
                             (long long)labels.nx, (long long)labels.ny, (long long)labels.nz, input_path,
                             (long long)input.volume.nx, (long long)input.volume.ny, (long long)input.volume.nz);
    }
    if (status == VL_OK) {
        const vl_volume *overlay = labels_path ? &labels : NULL;
        if (orthogonal)
            status = vl_preview_write_orthogonal(output, &input.volume, overlay, &options);
        else if (slice >= 0)
            status = vl_preview_write_slice(output, &input.volume, overlay, slice, &options);
        else
            status = vl_preview_write_montage(output, &input.volume, overlay, &options);
    }
    code = status == VL_OK ? CLI_EXIT_OK : cli_status_error(status);
    if (status == VL_OK && !cli_is_quiet())
        printf("%s -> %s\n", input_path, output);
    vl_volume_free(&labels);
    cli_input_free(&input);
    return code;
}
