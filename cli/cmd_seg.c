/* voxlabel seg: a label volume as a DICOM Segmentation that references its source CT series. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_input.h"
#include "voxlabel/io.h"
#include "voxlabel/seg.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: voxlabel seg LABELS CT_DIR -o OUT.dcm [options]\n\n"
            "Writes LABELS (a .nii.gz/.nii/.nrrd/.mha label volume with its geometry, e.g. the labels.nii.gz of\n"
            "'voxlabel label') as a binary DICOM Segmentation: one segment per component, frames where it is\n"
            "present, each frame referencing the CT slice of CT_DIR at its position. 3D Slicer (QuantitativeReporting)\n"
            "and OHIF show it on the CT. DICOM SEG has no label-map form in DCMTK 3.6.7, so every component is a\n"
            "segment: above --max-segments the command refuses; keep the biggest with 'voxlabel label --largest K'.\n\n"
            "options:\n"
            "  -o, --output FILE          the SEG file to write (required)\n"
            "  --max-segments N           most components accepted (default 256, at most 65535)\n"
            "  --series UID               SeriesInstanceUID of the source series when several match the labels\n"
            "  --description TEXT         SeriesDescription (default \"voxlabel components\")\n"
            "  --segments-from SEG        LABELS is a class map of SEG (voxlabel label SEG --multilabel): label k\n"
            "                             keeps segment k's name, category, type and colour\n"
            "  --force                    replace OUT.dcm if it exists\n"
            "  --progress | --quiet       force progress on stderr | print nothing but errors\n"
            "  -h, --help                 this help\n\n"
            "examples:\n"
            "  voxlabel label ct/ --preset bone --largest 20 -o out/ && voxlabel seg out/labels.nii.gz ct/ -o out/bone_seg.dcm\n"
            "  voxlabel seg lungs.nii.gz study/ --series 1.2.840.113619.2.55.3 -o lungs_seg.dcm\n");
}

int cmd_seg(int argc, char **argv)
{
    const char *labels_path = NULL, *ct_dir = NULL, *output = NULL, *value;
    vl_seg_options options;
    vl_seg_options_default(&options);
    int force_progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            if (!(output = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--max-segments") == 0) {
            int64_t limit;
            if (!(value = cli_option_value(argc, argv, &i)) || cli_parse_int64("--max-segments", value, 1, 65535, &limit))
                return CLI_EXIT_USAGE;
            options.max_segments = (uint32_t)limit;
        } else if (strcmp(arg, "--series") == 0) {
            if (!(options.series_uid = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--segments-from") == 0) {
            if (!(options.segments_from = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--description") == 0) {
            if (!(options.series_description = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--force") == 0) {
            options.force = 1;
        } else if (strcmp(arg, "--progress") == 0) {
            force_progress = 1;
        } else if (strcmp(arg, "--quiet") == 0) {
            quiet = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_error(CLI_EXIT_USAGE, "seg: unknown option '%s' (see 'voxlabel seg --help')", arg);
        } else if (!labels_path) {
            labels_path = arg;
        } else if (!ct_dir) {
            ct_dir = arg;
        } else {
            return cli_error(CLI_EXIT_USAGE, "seg: LABELS and CT_DIR only ('%s' is extra)", arg);
        }
    }
    if (!labels_path || !ct_dir || !output)
        return cli_error(CLI_EXIT_USAGE, "seg: LABELS, CT_DIR and -o OUT.dcm are required (see 'voxlabel seg --help')");
    cli_progress_configure(force_progress, quiet);
    options.progress = cli_progress();
    vl_read_options read;
    vl_read_options_default(&read);
    read.progress = cli_progress();
    vl_volume labels;
    vl_status status = vl_read_volume(labels_path, &read, &labels);
    if (status != VL_OK)
        return cli_status_error(status);
    /* A .mat has no geometry (identity axes, 1 mm): its slices cannot be matched to the CT's positions. When its
     * grid is the CT's, it is taken to lie on the CT (as a .mat written by 'voxlabel label' from this series does). */
    const size_t length = strlen(labels_path);
    if (length >= 4 && strcasecmp(labels_path + length - 4, ".mat") == 0) {
        cli_input_options input_options;
        cli_input_options_default(&input_options);
        input_options.series = options.series_uid;
        cli_input input;
        const int code = cli_input_load(ct_dir, &input_options, &input);
        if (code != 0) {
            vl_volume_free(&labels);
            return code;
        }
        vl_volume ct = input.volume;
        const int same = ct.nx == labels.nx && ct.ny == labels.ny && ct.nz == labels.nz;
        if (same)
            labels.geometry = ct.geometry;
        const long long cx = (long long)ct.nx, cy = (long long)ct.ny, cz = (long long)ct.nz;
        cli_input_free(&input);
        if (!same) {
            const long long lx = (long long)labels.nx, ly = (long long)labels.ny, lz = (long long)labels.nz;
            vl_volume_free(&labels);
            return cli_error(CLI_EXIT_INPUT,
                             "%s: a .mat has no geometry, and its %lldx%lldx%lld grid is not the %lldx%lldx%lld of %s, "
                             "so its slices cannot be placed on the CT",
                             labels_path, lx, ly, lz, cx, cy, cz, ct_dir);
        }
        cli_note("%s: a .mat has no geometry; taking that of %s (same %lldx%lldx%lld grid)", labels_path, ct_dir, cx,
                 cy, cz);
    }
    status = vl_write_dicom_seg(output, &labels, ct_dir, &options);
    vl_volume_free(&labels);
    if (status != VL_OK)
        return cli_status_error(status);
    cli_note("wrote %s", output);
    return CLI_EXIT_OK;
}
