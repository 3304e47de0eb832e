/* voxlabel train: image + scribbles -> random-forest pixel classifier (.vlrf), with out-of-bag accuracy and
 * feature importances. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_forest.h"
#include "cli_input.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/forest.h"

static const char train_help[] =
    "usage: voxlabel train IMAGE SCRIBBLES -o MODEL.vlrf [options]\n"
    "\n"
    "Trains a random-forest pixel classifier (ilastik's workflow) from a few scribbles: every scribbled voxel\n"
    "is a training sample described by a bank of filters (Gaussian smoothing, Laplacian of Gaussian, gradient\n"
    "magnitude, difference of Gaussians, structure-tensor and Hessian eigenvalues at several scales in mm).\n"
    "SCRIBBLES is a label volume of the image's geometry: 0 = unlabelled, 1..C = classes (e.g. drawn in\n"
    "3D Slicer or ITK-SNAP and saved as NIfTI), or a greyscale PNG for a 2D IMAGE.png. Prints the\n"
    "out-of-bag accuracy and the most important features. The model file records its filters (docs/forest.md).\n"
    "\n"
    "features:\n"
    "  --features 2d|3d           filter each slice (2d) or the volume (3d); default 3d, 2d for one slice\n"
    "  --sigmas LIST              scales in mm (default 0.3,0.7,1,1.6,3.5,5,10: 49 features in 2d, 61 in 3d)\n"
    "  --offsets N                add N offset features I(p+u) - I(p+v) (default 0)\n"
    "  --offset-radius MM         reach of the offsets (default 10)\n"
    "forest:\n"
    "  --trees N                  default 100\n"
    "  --max-depth N              default 0: grow until pure\n"
    "  --min-leaf N               samples per leaf at least (default 1)\n"
    "  --max-features N           features tried per split (default sqrt of the feature count)\n"
    "  --seed N                   default 1; the same seed gives the same forest on the CPU and the GPU\n"
    "  --max-samples N            thin scribbles beyond N voxels (default 2000000)\n"
    "  --device auto|cpu|gpu[:N]  where to train (default auto)\n"
    "  --threads N                CPU threads (default: all cores)\n"
    "output:\n"
    "  -o, --output MODEL.vlrf    the model file\n"
    "  --force                    replace an existing model\n"
    "  --progress | --quiet       force progress bars on stderr | print nothing but warnings and errors\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel train ct_dir/ scribbles.nii.gz -o bone.vlrf\n"
    "  voxlabel train slice.png scribbles.png -o cells.vlrf --trees 50\n"
    "  voxlabel train ct.nii.gz scribbles.nii.gz -o m.vlrf --features 2d --sigmas 0.7,1.6,3.5\n"
    "then: voxlabel classify ct_dir/ --model bone.vlrf -o out/\n";

typedef struct train_arguments {
    const char *image_path, *scribbles_path, *model_path;
    cli_input_options input;
    vl_forest_options forest;
    int dims;
    double sigmas[VL_FILTER_MAX_SIGMAS];
    int sigma_count;
    int64_t offsets;
    double offset_radius;
    int force;
} train_arguments;

static int parse_sigmas(const char *text, train_arguments *args)
{
    char buffer[512];
    if (strlen(text) >= sizeof buffer)
        return cli_error(CLI_EXIT_USAGE, "--sigmas: too long");
    snprintf(buffer, sizeof buffer, "%s", text);
    args->sigma_count = 0;
    for (char *save = NULL, *item = strtok_r(buffer, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (args->sigma_count == VL_FILTER_MAX_SIGMAS)
            return cli_error(CLI_EXIT_USAGE, "--sigmas: at most %d values", VL_FILTER_MAX_SIGMAS);
        if (cli_parse_double("--sigmas", item, &args->sigmas[args->sigma_count]))
            return CLI_EXIT_USAGE;
        if (!(args->sigmas[args->sigma_count] > 0 && args->sigmas[args->sigma_count] <= 100))
            return cli_error(CLI_EXIT_USAGE, "--sigmas: %s mm is not in (0, 100]", item);
        args->sigma_count++;
    }
    return args->sigma_count ? 0 : cli_error(CLI_EXIT_USAGE, "--sigmas: give values in mm, e.g. 0.7,1.6,3.5");
}

static int parse_arguments(int argc, char **argv, train_arguments *args)
{
    memset(args, 0, sizeof *args);
    cli_input_options_default(&args->input);
    vl_forest_options_default(&args->forest);
    args->offset_radius = 10;
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
            printf(train_help, cli_input_help);
            exit(CLI_EXIT_OK);
        } else if (cli_parse_run_flag(option, &args->force, &quiet, &progress)) {
        } else if (option[0] == '-' && option[1]) {
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            const int run_option = cli_forest_parse_run_option(option, value, &args->forest, &args->input);
            if (run_option < 0)
                return -run_option;
            if (run_option)
                continue;
            if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
                args->model_path = value;
            } else if (strcmp(option, "--features") == 0) {
                if (strcmp(value, "2d") && strcmp(value, "3d"))
                    return cli_error(CLI_EXIT_USAGE, "--features: '%s' is not 2d or 3d", value);
                args->dims = value[0] - '0';
            } else if (strcmp(option, "--sigmas") == 0) {
                if (parse_sigmas(value, args))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--offsets") == 0) {
                if (cli_parse_int64(option, value, 0, VL_FILTER_MAX_OFFSETS, &args->offsets))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--offset-radius") == 0) {
                if (cli_parse_double(option, value, &args->offset_radius))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--trees") == 0) {
                if (cli_parse_int64(option, value, 1, 10000, &number))
                    return CLI_EXIT_USAGE;
                args->forest.trees = (int)number;
            } else if (strcmp(option, "--max-depth") == 0) {
                if (cli_parse_int64(option, value, 0, VL_FOREST_MAX_DEPTH, &number))
                    return CLI_EXIT_USAGE;
                args->forest.max_depth = (int)number;
            } else if (strcmp(option, "--min-leaf") == 0) {
                if (cli_parse_int64(option, value, 1, 1000000, &number))
                    return CLI_EXIT_USAGE;
                args->forest.min_samples_leaf = (int)number;
            } else if (strcmp(option, "--max-features") == 0) {
                if (cli_parse_int64(option, value, 1, VL_FILTER_MAX_CHANNELS, &number))
                    return CLI_EXIT_USAGE;
                args->forest.max_features = (int)number;
            } else if (strcmp(option, "--seed") == 0) {
                if (cli_parse_int64(option, value, 0, INT64_MAX, &number))
                    return CLI_EXIT_USAGE;
                args->forest.seed = (uint64_t)number;
            } else if (strcmp(option, "--max-samples") == 0) {
                if (cli_parse_int64(option, value, 2, (int64_t)1 << 24, &args->forest.max_samples))
                    return CLI_EXIT_USAGE;
            } else {
                return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel train --help')", option);
            }
        } else if (!args->image_path) {
            args->image_path = option;
        } else if (!args->scribbles_path) {
            args->scribbles_path = option;
        } else {
            return cli_error(CLI_EXIT_USAGE, "%s: unexpected extra argument (IMAGE and SCRIBBLES only)", option);
        }
    }
    cli_progress_configure(progress, quiet);
    if (!args->image_path || !args->scribbles_path)
        return cli_error(CLI_EXIT_USAGE, "train: give IMAGE and SCRIBBLES (see 'voxlabel train --help')");
    if (!args->model_path)
        return cli_error(CLI_EXIT_USAGE, "train: missing -o MODEL.vlrf");
    return 0;
}

static void print_report(const vl_forest *forest, double seconds, const vl_device_outcome *outcome)
{
    if (cli_is_quiet())
        return;
    printf("trained %d trees on %lld samples of %d classes, %d features (%s), on %s in %.2f s\n", forest->tree_count,
           (long long)forest->training_samples, forest->class_count, forest->feature_count,
           forest->bank.dims == 2 ? "2d per slice" : "3d", vl_device_kind_name(outcome->used), seconds);
    if (forest->oob_accuracy >= 0)
        printf("out-of-bag accuracy: %.4f\n", forest->oob_accuracy);
    else
        printf("out-of-bag accuracy: unknown (every sample was in every bootstrap)\n");
    if (!forest->importances)
        return;
    /* the ten most important features, ties to the lower index */
    int shown[10], count = 0;
    while (count < 10 && count < forest->feature_count) {
        int best = -1;
        for (int f = 0; f < forest->feature_count; f++) {
            int taken = 0;
            for (int s = 0; s < count; s++)
                taken |= shown[s] == f;
            if (!taken && (best < 0 || forest->importances[f] > forest->importances[best]))
                best = f;
        }
        shown[count++] = best;
    }
    printf("feature importances (mean decrease of Gini impurity), top %d:\n", count);
    for (int s = 0; s < count; s++) {
        char name[64];
        vl_filter_bank_channel_name(&forest->bank, shown[s], name, sizeof name);
        printf("  %-28s %.4f\n", name, forest->importances[shown[s]]);
    }
}

int cmd_train(int argc, char **argv)
{
    train_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code;
    if (vl_atomic_file_check(args.model_path, args.force) != VL_OK)
        return cli_status_error(VL_ERR_OUTPUT);
    cli_input input;
    if ((code = cli_forest_load_image(args.image_path, &args.input, &input)))
        return code;
    vl_volume scribbles = {0};
    if ((code = cli_forest_load_scribbles(args.scribbles_path, &scribbles))) {
        cli_input_free(&input);
        return code;
    }
    vl_filter_bank bank;
    vl_filter_bank_default(&bank, args.dims ? args.dims : input.volume.nz > 1 ? 3 : 2);
    vl_status status = VL_OK;
    if (args.sigma_count)
        status = vl_filter_bank_set_sigmas(&bank, args.sigmas, args.sigma_count);
    if (status == VL_OK && args.offsets)
        status = vl_filter_bank_add_offsets(&bank, (int)args.offsets, args.offset_radius,
                                            input.volume.geometry.spacing, args.forest.seed);
    if (status != VL_OK) {
        vl_volume_free(&scribbles);
        cli_input_free(&input);
        return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
    }
    args.forest.progress = cli_progress();
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    vl_forest forest;
    vl_device_outcome outcome = {0};
    status = vl_forest_train(&input.volume, &scribbles, &bank, &args.forest, &forest, &outcome);
    clock_gettime(CLOCK_MONOTONIC, &end);
    vl_volume_free(&scribbles);
    cli_input_free(&input);
    if (status != VL_OK) {
        /* name the scribble file in geometry and class errors */
        const char *detail = vl_last_error();
        if (strncmp(detail, "scribbles: ", 11) == 0)
            return cli_error(vl_status_exit_code(status), "%s: %s", args.scribbles_path, detail + 11);
        return cli_status_error(status);
    }
    cli_report_device(&outcome, "trained", 1);
    if ((status = vl_forest_save(&forest, args.model_path, args.force)) != VL_OK) {
        vl_forest_free(&forest);
        return cli_status_error(status);
    }
    print_report(&forest, (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) * 1e-9,
                 &outcome);
    if (!cli_is_quiet())
        printf("wrote %s\n", args.model_path);
    vl_forest_free(&forest);
    return CLI_EXIT_OK;
}
