/* voxlabel label: CT -> threshold -> connected components (bwlabeln order) -> labels, components.csv, summary.json */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_clock.h"
#include "cli_forest.h"
#include "cli_gpu_warm_up.h"
#include "cli_input.h"
#include "label_options.h"
#include "cli_nifti_shear.h"
#include "cli_outputs.h"
#include "label_run.h"
#include "label_multilabel.h"
#include "label_summary.h"
#include "voxlabel/threshold.h"
#include "voxlabel/io.h"
#include "voxlabel/label.h"
#include "voxlabel/morphology.h"
#include "voxlabel/preview.h"
#include "voxlabel/stats.h"

static const char label_help[] =
    "usage: voxlabel label INPUT -o DIR [options]\n"
    "\n"
    "Thresholds a CT volume, labels its connected components and numbers them 1..N exactly as MATLAB's\n"
    "bwlabeln does (or in raster or size order). Writes DIR/labels.nii.gz (overlays the CT in 3D Slicer and\n"
    "ITK-SNAP), DIR/components.csv (one row per component, columns in docs/csv.md) and DIR/summary.json.\n"
    "\n"
    "mask (one of; HU ranges are inclusive):\n"
    "  --threshold LO[:HI]        keep LO <= HU <= HI (HI defaults to no limit; ':HI' means no lower limit)\n"
    "  --preset NAME              bone 300: | lung -950:-400 | air :-900 | soft-tissue -100:200 | contrast 150:500\n"
    "  --multilabel               INPUT is a class map (a segmentation): label every class at once, with\n"
    "                             per-class clean-up (see 'voxlabel label --multilabel --help')\n"
    "  --model M.vlrf --class K   the voxels a forest from 'voxlabel train' classifies as class K\n"
    "labelling:\n"
    "  --conn 6|18|26|4|8         3D neighbourhood (default 26, as bwlabeln); 4 and 8 label every slice on its own\n"
    "  --order matlab|matlab-xy|size|size-raster\n"
    "                             matlab (default): bwlabeln on a stack of dicomread slices, V(row,col,slice)\n"
    "                             matlab-xy: bwlabeln on V(x,y,z) as niftiread gives it; also scipy/cc3d/ITK order\n"
    "                             size: largest first, ties in matlab order\n"
    "                             size-raster: as size, ties in matlab-xy order (ITK RelabelComponentImageFilter)\n"
    "  --open R | --close R       morphological opening / closing of the mask with a ball of radius R voxels\n"
    "                             (a disc per slice with --conn 4|8; opening first when both are given)\n"
    "  --min-size N               drop components under N voxels, renumber the rest (order kept)\n"
    "  --largest K                keep only the K largest components (order kept)\n"
    "  --device auto|cpu|gpu[:N]  where to label (default auto: a GPU if usable, else the CPU)\n"
    "  --gpu-memory SIZE          device memory the GPU labeller may use, e.g. 8G (default: what is free); a\n"
    "                             volume that needs more is labelled in z-slabs, with the same result\n"
    "  --threads N                CPU threads for every stage (default: all cores)\n"
    "output:\n"
    "  -o, --output DIR           output directory (created if missing)\n"
    "  --format FMT               labels file: nii.gz (default), nii, nrrd, mha, mat, raw\n"
    "  --mat-class double|uint32  class of the .mat labels (default double, what bwlabeln returns)\n"
    "  --stats basic|full         component columns (default basic; full adds shape, surface and median HU)\n"
    "  --matlab                   add regionprops3-style columns (1-based Centroid, BoundingBox, ...)\n"
    "  --preview                  also write preview.png (montage of labelled slices over the CT, in the DICOM\n"
    "                             window or else soft tissue 40:400) and preview_orthogonal.png (three views through the largest component)\n"
    "  --force                    replace existing outputs (otherwise an existing file is an error)\n"
    "  --progress | --quiet       force progress bars on stderr | no progress, notes or summary;\n"
    "                             warnings and errors still print (a warning is never silenced)\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel label ct_dir/ --preset bone -o out/\n"
    "  voxlabel label ct_dir/ --threshold 300 --conn 6 --min-size 100 -o out/\n"
    "  voxlabel label scan.nii.gz --threshold -950:-400 --largest 2 --format mat -o lungs/\n"
    "  voxlabel label mask.raw --raw-dims 512,512,400 --raw-type u8 --threshold 1 -o out/\n";

typedef struct preset {
    const char *name;
    double lo, hi;
} preset;

static const preset presets[] = {
    {"bone", 300, INFINITY},   {"lung", -950, -400},     {"air", -INFINITY, -900},
    {"soft-tissue", -100, 200}, {"contrast", 150, 500},
};

static int parse_threshold(const char *text, double *lo, double *hi)
{
    const char *colon = strchr(text, ':');
    char low_text[64] = "", high_text[64] = "";
    if (strlen(text) >= sizeof low_text)
        return cli_error(CLI_EXIT_USAGE, "--threshold: '%s' is too long", text);
    if (colon) {
        memcpy(low_text, text, (size_t)(colon - text));
        snprintf(high_text, sizeof high_text, "%s", colon + 1);
    } else {
        snprintf(low_text, sizeof low_text, "%s", text);
    }
    *lo = -INFINITY;
    *hi = INFINITY;
    if (!low_text[0] && !high_text[0])
        return cli_error(CLI_EXIT_USAGE, "--threshold: give LO, LO:HI or :HI in HU (e.g. 300 or -950:-400)");
    if (low_text[0] && cli_parse_double("--threshold", low_text, lo))
        return CLI_EXIT_USAGE;
    if (high_text[0] && cli_parse_double("--threshold", high_text, hi))
        return CLI_EXIT_USAGE;
    if (*lo > *hi)
        return cli_error(CLI_EXIT_USAGE, "--threshold: %g:%g is empty (LO must not exceed HI)", *lo, *hi);
    return 0;
}

static void mark(struct timespec *start)
{
    clock_gettime(CLOCK_MONOTONIC, start);
}

struct label_arguments {
    const char *input_path, *output_directory;
    cli_input_options input;
    vl_label_options label;
    double lo, hi;
    const char *threshold_source; /* the preset name or "threshold" */
    int64_t min_size, largest;
    vl_file_format format;
    vl_mat_class mat_class;
    vl_stats_level stats_level;
    int64_t open_radius, close_radius;
    int matlab_columns, force, preview;
    cli_forest_label model;
};

static int takes_value(const char *option)
{
    static const char *const with_value[] = {"-o",         "--output", "--threshold", "--preset",
                                             "--conn",     "--order",  "--min-size",  "--largest",
                                             "--device",   "--threads", "--format",   "--stats", "--gpu-memory",
                                             "--open",     "--close",  "--mat-class", "--model", "--class"};
    return cli_option_index(option, with_value, sizeof with_value / sizeof with_value[0]) >= 0;
}

static int parse_arguments(int argc, char **argv, label_arguments *args)
{
    memset(args, 0, sizeof *args);
    cli_input_options_default(&args->input);
    vl_label_options_default(&args->label);
    args->format = VL_FORMAT_NIFTI_GZ;
    int progress = 0, quiet = 0, have_threshold = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        const char *value = NULL;
        int handled = cli_input_parse_option(argc, argv, &i, &args->input);
        if (handled < 0)
            return -handled;
        if (handled)
            continue;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(label_help, cli_input_help);
            exit(CLI_EXIT_OK);
        } else if (cli_parse_run_flag(option, &args->force, &quiet, &progress)) {
        } else if (strcmp(option, "--matlab") == 0) {
            args->matlab_columns = 1;
        } else if (strcmp(option, "--preview") == 0) {
            args->preview = 1;
        } else if (option[0] == '-' && option[1] != '\0') {
            if (!takes_value(option))
                return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel label --help')", option);
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            const int model_option = cli_forest_label_option(option, value, &args->model);
            if (model_option < 0)
                return -model_option;
            const int shared_option =
                label_parse_shared_option(option, value, &args->label, &args->input, &args->format);
            if (shared_option < 0)
                return -shared_option;
            if (model_option || shared_option) {
            } else if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
                args->output_directory = value;
            } else if (strcmp(option, "--threshold") == 0 || strcmp(option, "--preset") == 0) {
                if (have_threshold)
                    return cli_error(CLI_EXIT_USAGE, "%s: give one --threshold or --preset, not both or twice", option);
                have_threshold = 1;
                if (strcmp(option, "--threshold") == 0) {
                    args->threshold_source = "threshold";
                    if (parse_threshold(value, &args->lo, &args->hi))
                        return CLI_EXIT_USAGE;
                } else {
                    size_t p = 0;
                    while (p < sizeof presets / sizeof presets[0] && strcmp(presets[p].name, value) != 0)
                        p++;
                    if (p == sizeof presets / sizeof presets[0])
                        return cli_error(CLI_EXIT_USAGE,
                                         "--preset: '%s' is not one of bone, lung, air, soft-tissue, contrast", value);
                    args->threshold_source = presets[p].name;
                    args->lo = presets[p].lo;
                    args->hi = presets[p].hi;
                }
            } else if (strcmp(option, "--open") == 0 || strcmp(option, "--close") == 0) {
                if (cli_parse_int64(option, value, 1, 64,
                                    option[2] == 'o' ? &args->open_radius : &args->close_radius))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--min-size") == 0) {
                if (cli_parse_int64("--min-size", value, 0, INT64_MAX, &args->min_size))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--largest") == 0) {
                if (cli_parse_int64("--largest", value, 1, UINT32_MAX, &args->largest))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--mat-class") == 0) {
                if (strcmp(value, "double") == 0)
                    args->mat_class = VL_MAT_DOUBLE;
                else if (strcmp(value, "uint32") == 0)
                    args->mat_class = VL_MAT_UINT32;
                else
                    return cli_error(CLI_EXIT_USAGE, "--mat-class: '%s' is not one of double, uint32", value);
            } else if (strcmp(option, "--stats") == 0) {
                if (vl_stats_level_parse(value, &args->stats_level) != VL_OK)
                    return cli_error(CLI_EXIT_USAGE, "--stats: '%s' is not one of basic, full", value);
            }
        } else {
            const int code = cli_take_operand(option, &args->input_path, "one INPUT only");
            if (code)
                return code;
        }
    }
    cli_progress_configure(progress, quiet);
    if (!args->input_path)
        return cli_error(CLI_EXIT_USAGE, "label: missing INPUT (see 'voxlabel label --help')");
    if (!args->output_directory)
        return cli_error(CLI_EXIT_USAGE, "label: missing -o DIR (where labels.nii.gz, components.csv and "
                                         "summary.json go)");
    if (args->model.model_path || args->model.class_number)
        return cli_forest_label_check(&args->model, have_threshold, &args->threshold_source, &args->lo, &args->hi);
    if (!have_threshold)
        return cli_error(CLI_EXIT_USAGE, "label: give --threshold LO[:HI] or --preset NAME (e.g. --preset bone)");
    return 0;
}

static void print_summary(const label_arguments *args, const cli_input *input, const vl_label_result *result,
                          const vl_component_stats *stats, double label_seconds)
{
    if (cli_is_quiet())
        return;
    const vl_volume *volume = &input->volume;
    printf("%u component%s (conn %d, %s order) in %lldx%lldx%lld voxels; labelled on %s in %.3f s\n", result->count,
           result->count == 1 ? "" : "s", args->label.connectivity, vl_label_order_name(args->label.order),
           (long long)volume->nx, (long long)volume->ny, (long long)volume->nz, result->device_name, label_seconds);
    if (result->count == 0)
        return;
    /* The five largest, ties to the lower label. */
    uint32_t shown[5];
    int count = 0;
    while (count < 5 && (uint32_t)count < result->count) {
        uint32_t best = UINT32_MAX;
        for (uint32_t k = 0; k < result->count; k++) {
            int taken = 0;
            for (int s = 0; s < count; s++)
                taken |= shown[s] == k;
            if (!taken && (best == UINT32_MAX || stats[k].voxels > stats[best].voxels))
                best = k;
        }
        shown[count++] = best;
    }
    printf("largest components:\n  %8s %12s %12s   %s\n", "label", "volume_mL", "voxels", "centroid LPS mm");
    for (int s = 0; s < count; s++) {
        const vl_component_stats *c = &stats[shown[s]];
        printf("  %8u %12.3f %12llu   (%.1f, %.1f, %.1f)\n", c->label, c->volume_mm3 / 1000.0,
               (unsigned long long)c->voxels, c->centroid_lps[0], c->centroid_lps[1], c->centroid_lps[2]);
    }
}

static void label_run_report(label_run_batch *batch, const cli_input *input, const vl_label_result *result,
                             const vl_component_stats *stats, const label_timings *timings);

int cmd_label(int argc, char **argv)
{
    if (label_multilabel_requested(argc, argv))
        return label_multilabel_run(argc, argv);
    label_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code;
    return label_run(&args, NULL);
}

/* label_run between its halves: labelled and measured, outputs staged but not yet written. */
struct label_staged {
    label_arguments args;
    char labels_name[64];
    cli_outputs outputs;
    cli_input input;             /* the header and report; the voxels only when a preview is drawn */
    vl_volume labels;
    vl_label_result result;
    vl_component_stats *stats;
    label_timings timings;
    double deskewed_degrees, compute_seconds;
    uint32_t labelled;
};

/* Done with the CT's voxels: voxlabel batch gets them back (they lie in memory it reuses, possibly pinned), unless
 * it has them already (a deskewed CT is the run's own copy, freed here); `voxlabel label` frees them. */
static void hand_back_voxels(cli_input *input, label_run_batch *batch)
{
    if (batch && !batch->spent_voxels)
        batch->spent_voxels = input->volume.data;
    else
        free(input->volume.data);
    input->volume.data = NULL;
}

static void drop_input(cli_input *input, label_run_batch *batch)
{
    hand_back_voxels(input, batch);
    cli_input_free(input);
}

int label_run(const label_arguments *arguments, label_run_batch *batch)
{
    label_staged *staged;
    const int code = label_run_compute(arguments, batch, &staged);
    return code ? code : label_run_write(staged, batch);
}

int label_run_compute(const label_arguments *arguments, label_run_batch *batch, label_staged **staged_out)
{
    *staged_out = NULL;
    label_arguments args = *arguments;
    int code;
    char labels_name[64];
    snprintf(labels_name, sizeof labels_name, "labels%s", vl_file_format_extension(args.format));
    const char *const names[] = {labels_name, "components.csv", "summary.json", "preview.png",
                                 "preview_orthogonal.png"};
    cli_outputs outputs;
    if ((code = cli_outputs_prepare(&outputs, args.output_directory, names, args.preview ? 5 : 3, args.force)))
        return code;

    label_timings timings = {0};
    struct timespec start, total_start;
    mark(&total_start);
    mark(&start);
    cli_gpu_warm_up gpu_warm_up;
    cli_gpu_warm_up_start(&gpu_warm_up, &args.label.device);
    cli_input input;
    if (batch) { /* voxlabel batch read it ahead: the run takes it over */
        input = *batch->input;
        memset(batch->input, 0, sizeof *batch->input);
    }
    code = batch ? 0 : cli_input_load(args.input_path, &args.input, &input);
    if (code) {
        cli_gpu_warm_up_finish(&gpu_warm_up);
        cli_outputs_abort(&outputs);
        return code;
    }
    timings.read = cli_seconds_since(&start);
    /* NIfTI-1 keeps each axis in a 16-bit header field: refuse before any work (issue 16 A6). */
    if ((args.format == VL_FORMAT_NIFTI || args.format == VL_FORMAT_NIFTI_GZ) &&
        (input.volume.nx > 32767 || input.volume.ny > 32767 || input.volume.nz > 32767)) {
        code = cli_error(CLI_EXIT_INPUT,
                         "%s: %lldx%lldx%lld has an axis over 32767 voxels, which NIfTI-1 cannot store "
                         "(use --format nrrd, mha, mat or raw)",
                         args.input_path, (long long)input.volume.nx, (long long)input.volume.ny,
                         (long long)input.volume.nz);
        cli_gpu_warm_up_finish(&gpu_warm_up);
        drop_input(&input, batch);
        cli_outputs_abort(&outputs);
        return code;
    }

    double deskewed_degrees = 0;
    if ((code = cli_nifti_shear(&input.volume, args.format, args.input.on_irregular, names[0], &deskewed_degrees,
                                batch ? &batch->spent_voxels : NULL))) {
        cli_gpu_warm_up_finish(&gpu_warm_up);
        drop_input(&input, batch);
        cli_outputs_abort(&outputs);
        return code;
    }

    vl_volume mask = {0}, labels = {0};
    vl_label_result result = {0};
    uint32_t labelled = 0;
    vl_component_stats *stats = NULL;
    vl_status status;
    vl_device_outcome morphology_outcome = {0}, stats_outcome = {0};
    if (batch && batch->engine && !args.model.model_path && !args.open_radius && !args.close_radius &&
        !args.min_size && !args.largest && !args.preview) {
        /* One call from the CT to the statistics: on a GPU the data stays on the device in between. */
        vl_stats_options stats_options;
        vl_stats_options_default(&stats_options);
        stats_options.level = args.stats_level;
        stats_options.outcome = &stats_outcome;
        stats_options.threads = args.label.threads;
        stats_options.connectivity = args.label.connectivity;
        stats_options.progress = cli_progress();
        args.label.progress = cli_progress();
        const vl_series_request request = {
            .lo = args.lo, .hi = args.hi, .label = &args.label, .stats = &stats_options,
            /* the writers of these formats store the narrowest type for N anyway */
            .narrow_labels = args.format == VL_FORMAT_NIFTI_GZ || args.format == VL_FORMAT_NIFTI ||
                             args.format == VL_FORMAT_NRRD || args.format == VL_FORMAT_MHA,
        };
        cli_gpu_warm_up_finish(&gpu_warm_up);
        vl_series_timings series_timings;
        if ((status = vl_series_label(batch->engine, &input.volume, &request, &labels, &result, &stats,
                                      &series_timings)) != VL_OK)
            goto failed;
        timings.threshold = series_timings.upload + series_timings.threshold;
        timings.label = series_timings.label;
        timings.stats = series_timings.download + series_timings.stats;
        labelled = result.count;
        cli_report_device(&result.outcome, "labelled", 1);
        if (result.count == 0)
            cli_warning("%s %g:%g selects no voxels of %s: the outputs hold no components", args.threshold_source,
                        args.lo, args.hi, args.input_path);
        cli_report_device(&stats_outcome, "statistics computed", 0);
        goto measured;
    }
    mark(&start);
    if ((status = args.model.model_path ? cli_forest_label_mask(&args.model, &input.volume, &args.label.device,
                                                                args.label.threads, &mask)
                                        : vl_threshold(&input.volume, args.lo, args.hi, &mask)) != VL_OK)
        goto failed;
    const int per_slice = args.label.connectivity == 4 || args.label.connectivity == 8;
    if (args.open_radius && (status = vl_morphology_apply(&mask, VL_MORPH_OPEN, VL_SE_BALL, (int)args.open_radius,
                                                          per_slice, &args.label.device, &morphology_outcome)) != VL_OK)
        goto failed;
    if (args.close_radius && (status = vl_morphology_apply(&mask, VL_MORPH_CLOSE, VL_SE_BALL,
                                                           (int)args.close_radius, per_slice, &args.label.device, &morphology_outcome)) != VL_OK)
        goto failed;
    timings.threshold = cli_seconds_since(&start);
    cli_report_device(&morphology_outcome, "morphology ran", 0);

    cli_gpu_warm_up_finish(&gpu_warm_up);
    args.label.progress = cli_progress();
    mark(&start);
    if ((status = vl_label_volume(&mask, &labels, &args.label, &result)) != VL_OK)
        goto failed;
    timings.label = cli_seconds_since(&start);
    cli_report_device(&result.outcome, "labelled", 1);
    if (result.count == 0)
        cli_warning("%s %g:%g selects no voxels of %s: the outputs hold no components", args.threshold_source,
                    args.lo, args.hi, args.input_path);
    vl_volume_free(&mask);

    mark(&start);
    labelled = result.count;
    if ((status = vl_label_filter(&labels, &result, (uint64_t)args.min_size, (uint32_t)args.largest)) != VL_OK)
        goto failed;
    timings.filter = cli_seconds_since(&start);

    vl_stats_options stats_options;
    vl_stats_options_default(&stats_options);
    stats_options.level = args.stats_level;
    stats_options.device = args.label.device;
    stats_options.outcome = &stats_outcome;
    stats_options.threads = args.label.threads;
    stats_options.connectivity = args.label.connectivity;
    stats_options.progress = cli_progress();
    mark(&start);
    if ((status = vl_component_stats_compute(&labels, &input.volume, result.count, &stats_options, &stats)) != VL_OK)
        goto failed;
    timings.stats = cli_seconds_since(&start);
    cli_report_device(&stats_outcome, "statistics computed", 0);

measured:;
    label_staged *staged = malloc(sizeof *staged);
    if (!staged) {
        status = vl_fail(VL_ERR_MEMORY, "%s: out of memory", args.input_path);
        goto failed;
    }
    if (!args.preview) /* the writers need the CT's header and report, not its voxels */
        hand_back_voxels(&input, batch);
    staged->args = args;
    snprintf(staged->labels_name, sizeof staged->labels_name, "%s", labels_name);
    staged->outputs = outputs;
    staged->input = input;
    staged->labels = labels;
    staged->result = result;
    staged->stats = stats;
    staged->timings = timings;
    staged->deskewed_degrees = deskewed_degrees;
    staged->labelled = labelled;
    staged->compute_seconds = cli_seconds_since(&total_start);
    *staged_out = staged;
    return 0;

failed:
    cli_gpu_warm_up_finish(&gpu_warm_up);
    code = cli_status_error(status);
    cli_outputs_abort(&outputs);
    vl_component_stats_free(stats);
    vl_label_result_free(&result);
    vl_volume_free(&mask);
    vl_volume_free(&labels);
    drop_input(&input, batch);
    return code;
}

int label_run_write(label_staged *staged, label_run_batch *batch)
{
    label_staged s = *staged; /* *staged is freed here whichever way the write ends */
    free(staged);
    int code;
    vl_status status;
    struct timespec start;
    mark(&start);
    vl_write_options write;
    vl_write_options_default(&write);
    write.format = s.args.format;
    write.force = 1; /* staged names are fresh; the real targets were checked up front */
    write.is_label_map = 1;
    write.mat_xy = vl_label_order_is_raster(s.args.label.order);
    write.mat_class = s.args.mat_class;
    write.progress = cli_progress();
    write.threads = batch ? batch->write_threads : 0;
    if ((status = vl_write_volume(cli_outputs_staged(&s.outputs, 0), &s.labels, &write)) != VL_OK)
        goto failed;
    vl_csv_options csv;
    vl_csv_options_default(&csv);
    csv.level = s.args.stats_level;
    csv.matlab_columns = s.args.matlab_columns;
    csv.intensity = 1;
    csv.force = 1;
    if ((status = vl_component_stats_write_csv(cli_outputs_staged(&s.outputs, 1), s.stats, s.result.count, &csv)) !=
        VL_OK)
        goto failed;
    if (s.args.preview) {
        vl_preview_options preview;
        vl_preview_options_default(&preview);
        preview.force = 1;
        cli_input_window(&s.input, &preview.window_center, &preview.window_width);
        if ((status = vl_preview_write_montage(cli_outputs_staged(&s.outputs, 3), &s.input.volume, &s.labels,
                                               &preview)) != VL_OK ||
            (status = vl_preview_write_orthogonal(cli_outputs_staged(&s.outputs, 4), &s.input.volume, &s.labels,
                                                  &preview)) != VL_OK)
            goto failed;
    }
    s.timings.write = cli_seconds_since(&start);
    s.timings.total = s.compute_seconds + s.timings.write;

    label_summary summary = {
        .input_path = s.args.input_path,
        .input = &s.input,
        .threshold_source = s.args.threshold_source,
        .lo = s.args.lo,
        .hi = s.args.hi,
        .options = &s.args.label,
        .min_size = s.args.min_size,
        .largest = s.args.largest,
        .open_radius = s.args.open_radius,
        .close_radius = s.args.close_radius,
        .deskewed_degrees = s.deskewed_degrees,
        .labelled_count = s.labelled,
        .result = &s.result,
        .stats = s.stats,
        .timings = batch ? NULL : &s.timings,
        .labels_file = s.labels_name,
        .options_hash = batch ? batch->options_hash : NULL,
    };
    if ((status = label_summary_write_json(cli_outputs_staged(&s.outputs, 2), &summary)) != VL_OK)
        goto failed;
    if (!(code = cli_outputs_commit(&s.outputs))) {
        if (batch)
            label_run_report(batch, &s.input, &s.result, s.stats, &s.timings);
        print_summary(&s.args, &s.input, &s.result, s.stats, s.timings.label);
        if (!cli_is_quiet())
            printf("wrote %s, %s, %s%s\n", cli_outputs_final(&s.outputs, 0), cli_outputs_final(&s.outputs, 1),
                   cli_outputs_final(&s.outputs, 2), s.args.preview ? ", preview.png, preview_orthogonal.png" : "");
    }
    goto done;

failed:
    code = cli_status_error(status);
    cli_outputs_abort(&s.outputs);
done:
    vl_component_stats_free(s.stats);
    vl_label_result_free(&s.result);
    vl_volume_free(&s.labels);
    drop_input(&s.input, batch);
    return code;
}

/* Largest first; equal sizes: the lower label first. */
static int by_size_then_label(const void *a, const void *b)
{
    const vl_component_stats *x = *(const vl_component_stats *const *)a, *y = *(const vl_component_stats *const *)b;
    if (x->voxels != y->voxels)
        return x->voxels > y->voxels ? -1 : 1;
    return x->label < y->label ? -1 : x->label > y->label;
}

/* What voxlabel batch puts in its cohort row. */
static void label_run_report(label_run_batch *batch, const cli_input *input, const vl_label_result *result,
                             const vl_component_stats *stats, const label_timings *timings)
{
    batch->components = result->count;
    batch->foreground_voxels = 0;
    for (uint32_t k = 0; k < result->count; k++)
        batch->foreground_voxels += result->sizes[k];
    batch->voxel_volume_mm3 = vl_geometry_voxel_volume(&input->volume.geometry);
    batch->device_used = vl_device_kind_name(result->outcome.used);
    batch->timings = *timings;
    batch->largest_count = 0;
    const vl_component_stats **order = malloc((result->count ? result->count : 1) * sizeof *order);
    if (!order)
        return;
    for (uint32_t k = 0; k < result->count; k++)
        order[k] = &stats[k];
    qsort(order, result->count, sizeof *order, by_size_then_label);
    while (batch->largest_count < LABEL_RUN_LARGEST && (uint32_t)batch->largest_count < result->count) {
        batch->largest_ml[batch->largest_count] = order[batch->largest_count]->volume_mm3 / 1000.0;
        batch->largest_count++;
    }
    free(order);
}

label_arguments *label_arguments_parse(int argc, char **argv, int *code)
{
    label_arguments *args = malloc(sizeof *args);
    if (!args) {
        *code = cli_error(CLI_EXIT_DEVICE, "label options: out of memory");
        return NULL;
    }
    if ((*code = parse_arguments(argc, argv, args))) {
        free(args);
        return NULL;
    }
    return args;
}

void label_arguments_set_target(label_arguments *args, const char *input_path, const char *output_directory, int force)
{
    args->input_path = input_path;
    args->output_directory = output_directory;
    args->force = force;
}

const char *label_arguments_labels_file(const label_arguments *args, char *buffer, size_t size)
{
    snprintf(buffer, size, "labels%s", vl_file_format_extension(args->format));
    return buffer;
}

const cli_input_options *label_arguments_input(const label_arguments *args)
{
    return &args->input;
}

const vl_device *label_arguments_device(const label_arguments *args)
{
    return &args->label.device;
}
