/* voxlabel features: SIFT keypoints and descriptors of an image or of every slice of a CT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_outputs.h"
#include "features_cli.h"

static const char features_help[] =
    "usage: voxlabel features INPUT -o DIR [options]\n"
    "\n"
    "SIFT keypoints and 128-D descriptors of an image or of every slice of a CT, as OpenCV's SIFT computes\n"
    "them (doubled input, 3 layers per octave, contrast 0.04, edge 10, sigma 1.6; docs/features.md).\n"
    "INPUT is a PNG or JPEG image (colour is made grey as OpenCV does) or a CT (DICOM directory or file,\n"
    ".nii/.nii.gz/.nrrd/.mha/.mat, raw). A CT goes through its display window to 8 bits first, or with\n"
    "--hu stays float HU with the contrast threshold scaled by the window width.\n"
    "\n"
    "writes into DIR:\n"
    "  keypoints.csv     slice,x,y,lps_x,lps_y,lps_z,size,angle,response,octave (pixels 0-based, x = column;\n"
    "                    size = 2 sigma; angle degrees counter-clockwise; octave packed as OpenCV's)\n"
    "  descriptors.npy   N x 128, float32 whole numbers 0..255 in OpenCV's layout (--uint8: uint8)\n"
    "  preview.png       the slice with most keypoints (or --preview-slice Z) with the keypoints drawn\n"
    "\n"
    "options:\n"
    "  -o, --output DIR       output directory (made when missing)\n"
    "  --uint8                descriptors as uint8 (OpenCV's CV_8U descriptors)\n"
    "  --preview-slice Z      slice drawn in preview.png\n"
    "%s%s"
    "\n"
    "examples:\n"
    "  voxlabel features ct_dir/ -o feats/ --window brain\n"
    "  voxlabel features ct_dir/ -o feats_hu/ --hu --window 40:400 --device gpu\n"
    "  voxlabel features photo.png -o feats/ --max-keypoints 500\n"
    "  python3 -c \"import numpy; print(numpy.load('feats/descriptors.npy').shape)\"\n";

static vl_status write_preview(const char *path, const features_input *input, const vl_sift_features *features,
                               int64_t z)
{
    vl_image rgb;
    vl_status status = features_slice_rgb(&input->display, z, &rgb);
    if (status != VL_OK)
        return status;
    const uint8_t colour[3] = {40, 255, 80};
    for (int64_t i = features->slice_start[z]; i < features->slice_start[z + 1]; i++)
        features_draw_keypoint(&rgb, 0, &features->keypoints[i], colour);
    status = vl_png_write(path, &rgb, 1);
    vl_image_free(&rgb);
    return status;
}

int cmd_features(int argc, char **argv)
{
    features_cli_options options;
    features_cli_options_default(&options);
    const char *input_path = NULL, *output = NULL;
    int as_uint8 = 0, code;
    int64_t preview_slice = -1;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(features_help, features_cli_help, cli_input_help);
            return CLI_EXIT_OK;
        }
        if (option[0] != '-') {
            if (input_path)
                return cli_error(CLI_EXIT_USAGE, "%s: only one INPUT is allowed (see 'voxlabel features --help')",
                                 option);
            input_path = option;
            continue;
        }
        if (strcmp(option, "--uint8") == 0) {
            as_uint8 = 1;
            continue;
        }
        int taken = features_cli_parse_option(argc, argv, &i, &options);
        if (taken < 0)
            return -taken;
        if (taken)
            continue;
        if (strcmp(option, "-o") && strcmp(option, "--output") && strcmp(option, "--preview-slice"))
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel features --help')", option);
        const char *value = cli_option_value(argc, argv, &i);
        if (!value)
            return CLI_EXIT_USAGE;
        if (strcmp(option, "--preview-slice") == 0) {
            if (cli_parse_int64(option, value, 0, INT32_MAX, &preview_slice))
                return CLI_EXIT_USAGE;
        } else {
            output = value;
        }
    }
    if (!input_path || !output)
        return cli_error(CLI_EXIT_USAGE, "features: INPUT and -o DIR are required (see 'voxlabel features --help')");
    cli_progress_configure(options.progress, options.quiet);

    cli_outputs outputs;
    const char *names[] = {"keypoints.csv", "descriptors.npy", "preview.png"};
    if ((code = cli_outputs_prepare(&outputs, output, names, 3, options.force)))
        return code;
    features_input input;
    if ((code = features_input_load(input_path, &options, &input))) {
        cli_outputs_abort(&outputs);
        return code;
    }
    if (preview_slice >= input.display.nz) {
        features_input_free(&input);
        cli_outputs_abort(&outputs);
        return cli_error(CLI_EXIT_USAGE, "--preview-slice: %lld is beyond the last slice %lld", (long long)preview_slice,
                         (long long)input.display.nz - 1);
    }
    vl_sift_features features;
    memset(&features, 0, sizeof features);
    code = features_cli_run_sift(&input, &options, &features);
    if (!code) {
        /* The preview shows the first slice with the most keypoints unless told otherwise. */
        int64_t z = 0;
        for (int64_t s = 1; s < features.slices; s++)
            if (features.slice_start[s + 1] - features.slice_start[s] >
                features.slice_start[z + 1] - features.slice_start[z])
                z = s;
        if (preview_slice >= 0)
            z = preview_slice;
        vl_status status = features_write_keypoints_csv(cli_outputs_staged(&outputs, 0), &features,
                                                        &input.display.geometry);
        if (status == VL_OK)
            status = features_write_npy(cli_outputs_staged(&outputs, 1), features.descriptors, features.count, as_uint8);
        if (status == VL_OK)
            status = write_preview(cli_outputs_staged(&outputs, 2), &input, &features, z);
        code = status == VL_OK ? cli_outputs_commit(&outputs) : cli_status_error(status);
        if (!code && !options.quiet)
            printf("%s: %lld keypoints in %lld slice(s) -> %s (preview: slice %lld)\n", input_path,
                   (long long)features.count, (long long)features.slices, output, (long long)z);
    }
    if (code)
        cli_outputs_abort(&outputs);
    vl_sift_features_free(&features);
    features_input_free(&input);
    return code;
}
