/* voxlabel classify: a trained forest (.vlrf) on an image -> per-class probabilities, class map, preview. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_forest.h"
#include "cli_input.h"
#include "cli_outputs.h"
#include "voxlabel/forest.h"
#include "voxlabel/io.h"
#include "voxlabel/preview.h"

/* class map, preview, and one probability file per class */
#define MAX_PROBABILITY_FILES (CLI_MAX_OUTPUTS - 2)

static const char classify_help[] =
    "usage: voxlabel classify IMAGE --model MODEL.vlrf -o DIR [options]\n"
    "\n"
    "Runs a forest trained by 'voxlabel train' on every voxel of IMAGE (its filters are computed tile by tile\n"
    "and never held for the whole volume). Writes DIR/probability_K.nii.gz (float32, class K's probability,\n"
    "for each class K), DIR/classes.nii.gz (the most probable class 1..C of each voxel, ties to the lower\n"
    "class) and, with --preview, DIR/preview.png (a montage of the class map over the image).\n"
    "\n"
    "options:\n"
    "  --model MODEL.vlrf         the trained forest (required)\n"
    "  -o, --output DIR           output directory (created if missing)\n"
    "  --format FMT               nii.gz (default), nii, nrrd, mha, mat, raw\n"
    "  --no-probabilities         write only the class map (and preview)\n"
    "  --preview                  also write preview.png\n"
    "  --tile N                   tile edge in voxels (default 128); the result does not depend on it\n"
    "  --device auto|cpu|gpu[:N]  where to classify (default auto)\n"
    "  --threads N                CPU threads (default: all cores)\n"
    "  --force                    replace existing outputs\n"
    "  --progress | --quiet       force progress bars on stderr | no progress or summary\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel classify ct_dir/ --model bone.vlrf -o out/ --preview\n"
    "  voxlabel classify slice.png --model cells.vlrf -o out/ --no-probabilities\n"
    "then: voxlabel label ct_dir/ --model bone.vlrf --class 2 -o components/\n";

typedef struct classify_arguments {
    const char *image_path, *model_path, *output_directory;
    cli_input_options input;
    vl_forest_options forest;
    vl_file_format format;
    int force, preview, probabilities;
} classify_arguments;

static int parse_arguments(int argc, char **argv, classify_arguments *args)
{
    memset(args, 0, sizeof *args);
    cli_input_options_default(&args->input);
    vl_forest_options_default(&args->forest);
    args->format = VL_FORMAT_NIFTI_GZ;
    args->probabilities = 1;
    int progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value;
        const int handled = cli_input_parse_option(argc, argv, &i, &args->input);
        if (handled < 0)
            return -handled;
        if (handled)
            continue;
        int64_t number;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(classify_help, cli_input_help);
            exit(CLI_EXIT_OK);
        } else if (cli_parse_run_flag(option, &args->force, &quiet, &progress)) {
        } else if (strcmp(option, "--preview") == 0) {
            args->preview = 1;
        } else if (strcmp(option, "--no-probabilities") == 0) {
            args->probabilities = 0;
        } else if (option[0] == '-' && option[1]) {
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            const int run_option = cli_forest_parse_run_option(option, value, &args->forest, &args->input);
            if (run_option < 0)
                return -run_option;
            if (run_option)
                continue;
            if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
                args->output_directory = value;
            } else if (strcmp(option, "--model") == 0) {
                args->model_path = value;
            } else if (strcmp(option, "--format") == 0) {
                if (vl_file_format_parse(value, &args->format) != VL_OK)
                    return cli_error(CLI_EXIT_USAGE, "--format: '%s' is not one of nii.gz, nii, nrrd, mha, mat, raw",
                                     value);
            } else if (strcmp(option, "--tile") == 0) {
                if (cli_parse_int64(option, value, 8, 4096, &number))
                    return CLI_EXIT_USAGE;
                args->forest.tile = (int)number;
            } else {
                return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel classify --help')", option);
            }
        } else {
            const int code = cli_take_operand(option, &args->image_path, "one IMAGE only");
            if (code)
                return code;
        }
    }
    cli_progress_configure(progress, quiet);
    if (!args->image_path)
        return cli_error(CLI_EXIT_USAGE, "classify: missing IMAGE (see 'voxlabel classify --help')");
    if (!args->model_path)
        return cli_error(CLI_EXIT_USAGE, "classify: missing --model MODEL.vlrf (made by 'voxlabel train')");
    if (!args->output_directory)
        return cli_error(CLI_EXIT_USAGE, "classify: missing -o DIR");
    return 0;
}

int cmd_classify(int argc, char **argv)
{
    classify_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code;
    vl_forest forest;
    if ((code = cli_forest_load_model(args.model_path, &forest)))
        return code;
    const int C = forest.class_count;
    if (args.probabilities && C > MAX_PROBABILITY_FILES) {
        vl_forest_free(&forest);
        return cli_error(CLI_EXIT_USAGE, "%s: %d classes; classify writes probabilities for up to %d (add "
                                         "--no-probabilities for the class map alone)",
                         args.model_path, C, MAX_PROBABILITY_FILES);
    }
    const char *ext = vl_file_format_extension(args.format);
    char names_storage[CLI_MAX_OUTPUTS][64];
    const char *names[CLI_MAX_OUTPUTS];
    int count = 0;
    snprintf(names_storage[count], 64, "classes%s", ext);
    names[count] = names_storage[count];
    count++;
    if (args.preview) {
        snprintf(names_storage[count], 64, "preview.png");
        names[count] = names_storage[count];
        count++;
    }
    const int first_probability = count;
    for (int c = 0; args.probabilities && c < C; c++, count++) {
        snprintf(names_storage[count], 64, "probability_%d%s", c + 1, ext);
        names[count] = names_storage[count];
    }
    cli_outputs outputs;
    if ((code = cli_outputs_prepare(&outputs, args.output_directory, names, count, args.force))) {
        vl_forest_free(&forest);
        return code;
    }
    cli_input input;
    if ((code = cli_forest_load_image(args.image_path, &args.input, &input))) {
        cli_outputs_abort(&outputs);
        vl_forest_free(&forest);
        return code;
    }
    vl_volume probabilities[MAX_PROBABILITY_FILES + 1], classes = {0};
    memset(probabilities, 0, sizeof probabilities);
    vl_volume *probability_out = args.probabilities ? probabilities : NULL;
    args.forest.progress = cli_progress();
    vl_device_outcome outcome = {0};
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    vl_status status = vl_forest_predict(&forest, &input.volume, &args.forest, probability_out, &classes, &outcome);
    clock_gettime(CLOCK_MONOTONIC, &end);
    if (status == VL_OK) {
        cli_report_device(&outcome, "classified", 1);
        vl_write_options write;
        vl_write_options_default(&write);
        write.format = args.format;
        write.force = 1; /* staged names are fresh; the targets were checked up front */
        write.progress = cli_progress();
        write.is_label_map = 1;
        status = vl_write_volume(cli_outputs_staged(&outputs, 0), &classes, &write);
        write.is_label_map = 0;
        for (int c = 0; status == VL_OK && args.probabilities && c < C; c++)
            status = vl_write_volume(cli_outputs_staged(&outputs, first_probability + c), &probabilities[c], &write);
        if (status == VL_OK && args.preview) {
            vl_preview_options preview;
            vl_preview_options_default(&preview);
            preview.force = 1;
            if (!cli_input_window(&input, &preview.window_center, &preview.window_width) &&
                strcmp(input.kind, "picture") == 0) {
                preview.window_center = 127.5; /* a picture's samples as they are */
                preview.window_width = 256;
            }
            status = vl_preview_write_montage(cli_outputs_staged(&outputs, 1), &input.volume, &classes, &preview);
        }
    }
    if (status != VL_OK) {
        code = cli_status_error(status);
        cli_outputs_abort(&outputs);
    } else {
        code = cli_outputs_commit(&outputs);
    }
    if (!code && !cli_is_quiet()) {
        int64_t per_class[VL_FOREST_MAX_CLASSES + 1] = {0};
        const uint8_t *map = classes.data;
        for (int64_t i = 0; i < vl_volume_voxels(&classes); i++)
            per_class[map[i]]++;
        printf("classified %lldx%lldx%lld voxels into %d classes on %s in %.2f s\n", (long long)classes.nx,
               (long long)classes.ny, (long long)classes.nz, C, vl_device_kind_name(outcome.used),
               (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9);
        for (int c = 1; c <= C; c++)
            printf("  class %d: %lld voxels (%.2f%%)\n", c, (long long)per_class[c],
                   100.0 * (double)per_class[c] / (double)vl_volume_voxels(&classes));
        printf("wrote %s%s%s\n", cli_outputs_final(&outputs, 0), args.preview ? ", preview.png" : "",
               args.probabilities ? " and the probability of each class" : "");
    }
    for (int c = 0; c < C && c <= MAX_PROBABILITY_FILES; c++)
        vl_volume_free(&probabilities[c]);
    vl_volume_free(&classes);
    cli_input_free(&input);
    vl_forest_free(&forest);
    return code;
}
