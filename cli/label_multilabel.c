/* voxlabel label --multilabel: a class map (a segmentation model's output) -> components of every class
 * (bwlabeln numbering over all classes) -> per-class clean-up -> labels, cleaned class map, components.csv
 * with the class of every component, summary.json with per-class counts. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_clock.h"
#include "cli_gpu_warm_up.h"
#include "cli_input.h"
#include "label_options.h"
#include "cli_outputs.h"
#include "label_multilabel.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/io.h"
#include "voxlabel/label.h"
#include "voxlabel/seg_read.h"
#include "voxlabel/stats.h"
#include "voxlabel/voxlabel.h"

static const char multilabel_help[] =
    "usage: voxlabel label CLASSMAP --multilabel -o DIR [options]\n"
    "\n"
    "Labels every class of a class map at once (the output of TotalSegmentator, nnU-Net, MONAI, ...: one\n"
    "integer class per voxel, 0 = background). Voxels join only within their class; the components of all\n"
    "classes are numbered 1..N together, in the same order rules as a mask (MATLAB bwlabeln by default), and\n"
    "each keeps its class. Optional per-class clean-up removes small islands and keeps the largest\n"
    "components of each class, and writes the cleaned class map back. Writes DIR/labels.nii.gz,\n"
    "DIR/components.csv (label, class, voxels, volume, centroid, bounding box), DIR/classes.csv (per class:\n"
    "components, voxels and volume before and after the clean-up), DIR/summary.json and, with a clean-up\n"
    "option, DIR/cleaned.nii.gz. docs/multilabel.md has the details.\n"
    "\n"
    "The class map is NIfTI, NRRD, MHA, MAT or raw (--raw-dims, --raw-type u8|u16|u32|i16), with unsigned\n"
    "integer classes (i16 is taken when it has no negative voxel); a float map or a negative class is refused.\n"
    "A binary DICOM SEG is read as a class map too: class = segment number, on the grid of its frames (on the\n"
    "CT's grid with --intensity CT_DIR, which must be the series the SEG references), the SegmentLabel as\n"
    "class_name; overlapping segments are refused.\n"
    "\n"
    "labelling:\n"
    "  --conn 6|18|26|4|8         neighbourhood (default 26); 4 and 8 label every slice on its own\n"
    "  --order matlab|matlab-xy|size|size-raster\n"
    "                             numbering of the components of all classes together (default matlab;\n"
    "                             matlab-xy is cc3d's, scipy's and ITK's raster order)\n"
    "  --device auto|cpu|gpu[:N]  where to label (default auto: a GPU if usable, else the CPU)\n"
    "  --gpu-memory SIZE          device memory the GPU labeller may use (larger maps go in z-slabs)\n"
    "  --threads N                CPU threads (default: all cores)\n"
    "per-class clean-up (each class on its own; survivors renumbered 1..M, order kept):\n"
    "  --min-size N               remove components under N voxels\n"
    "  --min-volume V             remove components under V mm^3 (from the voxel spacing)\n"
    "  --largest-per-class K      keep only the K largest components of every class (ties: lower label)\n"
    "  --fill background|neighbour\n"
    "                             what removed islands become in cleaned.*: 0 (default), or the class of\n"
    "                             the surviving voxels they share the most faces with (0 if none)\n"
    "output:\n"
    "  --intensity VOLUME         the CT (DICOM directory, NIfTI, ...) on the class map's grid: components.csv\n"
    "                             gains hu_mean, hu_min and hu_max of every component\n"
    "  -o, --output DIR           output directory (created if missing)\n"
    "  --format FMT               labels and cleaned map: nii.gz (default), nii, nrrd, mha, mat, raw\n"
    "  --force                    replace existing outputs\n"
    "  --progress | --quiet       force progress bars | no progress, notes or summary\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel label seg.nii.gz --multilabel -o out/\n"
    "  voxlabel label liver_seg.dcm --multilabel --min-volume 1000 -o out/\n"
    "  voxlabel label seg.nii.gz --multilabel --largest-per-class 1 -o out/     (nnU-Net's postprocessing)\n"
    "  voxlabel label seg.nii.gz --multilabel --min-volume 50 --fill neighbour -o out/\n"
    "  voxlabel label seg.raw --raw-dims 512,512,400 --raw-type u8 --multilabel --min-size 100 -o out/\n";

int label_multilabel_requested(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--multilabel") == 0)
            return 1;
    return 0;
}

typedef struct multilabel_arguments {
    const char *input_path, *output_directory, *intensity_path;
    cli_input_options input;
    vl_label_options label;
    int64_t min_size, largest_per_class;
    double min_volume; /* mm^3; 0 = none */
    vl_class_fill fill;
    vl_file_format format;
    int force;
} multilabel_arguments;

static int takes_value(const char *option)
{
    static const char *const with_value[] = {"-o",       "--output",     "--conn",        "--order",
                                             "--min-size", "--min-volume", "--largest-per-class", "--fill",
                                             "--intensity",
                                             "--device", "--gpu-memory", "--threads",     "--format"};
    return cli_option_index(option, with_value, sizeof with_value / sizeof with_value[0]) >= 0;
}

/* Options of the mask path that mean nothing for a class map: named in the error rather than "unknown". */
static int mask_only(const char *option)
{
    static const char *const options[] = {"--threshold", "--preset", "--open", "--close", "--largest",
                                          "--stats", "--matlab", "--preview", "--mat-class"};
    return cli_option_index(option, options, sizeof options / sizeof options[0]) >= 0;
}

static int parse_arguments(int argc, char **argv, multilabel_arguments *args)
{
    memset(args, 0, sizeof *args);
    cli_input_options_default(&args->input);
    vl_label_options_default(&args->label);
    args->format = VL_FORMAT_NIFTI_GZ;
    int progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        const char *value = NULL;
        int handled = cli_input_parse_option(argc, argv, &i, &args->input);
        if (handled < 0)
            return -handled;
        if (handled)
            continue;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(multilabel_help, cli_input_help);
            exit(CLI_EXIT_OK);
        } else if (strcmp(option, "--multilabel") == 0) {
            continue;
        } else if (cli_parse_run_flag(option, &args->force, &quiet, &progress)) {
        } else if (mask_only(option)) {
            return cli_error(CLI_EXIT_USAGE,
                             "%s: not used with --multilabel (the class map's values are the classes; per-class "
                             "clean-up is --min-size, --min-volume, --largest-per-class)",
                             option);
        } else if (option[0] == '-' && option[1] != '\0') {
            if (!takes_value(option))
                return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel label --multilabel --help')",
                                 option);
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            const int shared_option =
                label_parse_shared_option(option, value, &args->label, &args->input, &args->format);
            if (shared_option < 0)
                return -shared_option;
            if (shared_option) {
            } else if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
                args->output_directory = value;
            } else if (strcmp(option, "--min-size") == 0) {
                if (cli_parse_int64("--min-size", value, 0, INT64_MAX, &args->min_size))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--min-volume") == 0) {
                if (cli_parse_double("--min-volume", value, &args->min_volume))
                    return CLI_EXIT_USAGE;
                if (!(args->min_volume >= 0) || !isfinite(args->min_volume))
                    return cli_error(CLI_EXIT_USAGE, "--min-volume: %s is not a volume in mm^3 (0 or more)", value);
            } else if (strcmp(option, "--largest-per-class") == 0) {
                if (cli_parse_int64("--largest-per-class", value, 1, UINT32_MAX, &args->largest_per_class))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--intensity") == 0) {
                args->intensity_path = value;
            } else if (strcmp(option, "--fill") == 0) {
                if (strcmp(value, "background") == 0)
                    args->fill = VL_FILL_BACKGROUND;
                else if (strcmp(value, "neighbour") == 0 || strcmp(value, "neighbor") == 0)
                    args->fill = VL_FILL_NEIGHBOUR;
                else
                    return cli_error(CLI_EXIT_USAGE, "--fill: '%s' is not one of background, neighbour", value);
            }
        } else {
            const int code = cli_take_operand(option, &args->input_path, "one CLASSMAP only");
            if (code)
                return code;
        }
    }
    cli_progress_configure(progress, quiet);
    if (!args->input_path)
        return cli_error(CLI_EXIT_USAGE, "label --multilabel: missing CLASSMAP (see 'voxlabel label --multilabel --help')");
    if (!args->output_directory)
        return cli_error(CLI_EXIT_USAGE, "label --multilabel: missing -o DIR (where labels, components.csv and "
                                         "summary.json go)");
    return 0;
}

static int cleans(const multilabel_arguments *args)
{
    return args->min_size > 0 || args->min_volume > 0 || args->largest_per_class > 0;
}

/* Per class: components and voxels before and after the clean-up. */
typedef struct class_count {
    uint32_t cls;
    uint32_t components, kept_components;
    uint64_t voxels, kept_voxels;
} class_count;

static int compare_class(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The classes present, ascending, with their counts; NULL on no memory. */
static class_count *count_classes(const vl_label_result *before, const vl_label_result *after, uint32_t *count)
{
    uint32_t *sorted = malloc(((size_t)before->count + 1) * sizeof *sorted);
    class_count *counts = calloc((size_t)before->count + 1, sizeof *counts);
    if (!sorted || !counts) {
        free(sorted);
        free(counts);
        return NULL;
    }
    memcpy(sorted, before->classes, (size_t)before->count * sizeof *sorted);
    qsort(sorted, before->count, sizeof *sorted, compare_class);
    uint32_t n = 0;
    for (uint32_t k = 0; k < before->count; k++)
        if (n == 0 || counts[n - 1].cls != sorted[k])
            counts[n++].cls = sorted[k];
    free(sorted);
    /* Binary search of a class among the n present. */
    for (int pass = 0; pass < 2; pass++) {
        const vl_label_result *r = pass ? after : before;
        for (uint32_t k = 0; k < r->count; k++) {
            uint32_t lo = 0, hi = n;
            while (hi - lo > 1) {
                const uint32_t mid = lo + (hi - lo) / 2;
                if (counts[mid].cls <= r->classes[k])
                    lo = mid;
                else
                    hi = mid;
            }
            if (pass) {
                counts[lo].kept_components++;
                counts[lo].kept_voxels += r->sizes[k];
            } else {
                counts[lo].components++;
                counts[lo].voxels += r->sizes[k];
            }
        }
    }
    *count = n;
    return counts;
}

/* A CSV field in double quotes, quotes doubled. */
static void write_csv_text(FILE *out, const char *text)
{
    fputc('"', out);
    for (; *text; text++) {
        if (*text == '"')
            fputc('"', out);
        fputc(*text, out);
    }
    fputc('"', out);
}

/* The class_name field and its comma, when the class names are known (names[c - 1] names class c). */
static void write_class_name(FILE *out, char (*names)[65], uint32_t name_count, uint32_t cls)
{
    if (!names)
        return;
    write_csv_text(out, cls >= 1 && cls <= name_count ? names[cls - 1] : "");
    fputc(',', out);
}

/* components.csv through the column table that `label` and `stats` use, with `class` after `label`, and
 * `class_name` when the classes have names (names[c - 1] names class c, a SEG's SegmentLabel). */
static vl_status write_components(const char *path, const vl_label_result *result, vl_component_stats *stats,
                                  char (*names)[65], uint32_t name_count, int intensity)
{
    const char **name_list = NULL;
    if (names && name_count && !(name_list = malloc(sizeof *name_list * name_count)))
        return vl_fail(VL_ERR_MEMORY, "multilabel: no memory for %u class names", name_count);
    for (uint32_t c = 0; name_list && c < name_count; c++)
        name_list[c] = names[c];
    for (uint32_t k = 0; k < result->count; k++)
        stats[k].class_id = result->classes[k];
    vl_csv_options csv;
    vl_csv_options_default(&csv);
    csv.intensity = intensity;
    csv.class_column = 1;
    csv.class_names = name_list;
    csv.class_name_count = name_list ? name_count : 0;
    const vl_status status = vl_component_stats_write_csv(path, stats, result->count, &csv);
    free(name_list);
    return status;
}

/* classes.csv: one row per class present, before and after the clean-up. */
static vl_status write_classes_csv(const char *path, const class_count *classes, uint32_t classes_present,
                                   char (*names)[65], uint32_t name_count, double voxel_volume)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &out);
    if (status != VL_OK)
        return status;
    fprintf(out, "class,%scomponents,voxels,volume_mm3,kept_components,kept_voxels,kept_volume_mm3,"
                 "removed_components,removed_voxels\n",
            names ? "class_name," : "");
    for (uint32_t k = 0; k < classes_present; k++) {
        const class_count *c = &classes[k];
        fprintf(out, "%u,", c->cls);
        write_class_name(out, names, name_count, c->cls);
        fprintf(out, "%u,%llu,%.6f,%u,%llu,%.6f,%u,%llu\n", c->components, (unsigned long long)c->voxels,
                (double)c->voxels * voxel_volume, c->kept_components, (unsigned long long)c->kept_voxels,
                (double)c->kept_voxels * voxel_volume, c->components - c->kept_components,
                (unsigned long long)(c->voxels - c->kept_voxels));
    }
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}

typedef struct run_report {
    const multilabel_arguments *args;
    const cli_input *input;
    const vl_label_result *result;
    const class_count *classes;
    uint32_t class_count, labelled;
    uint64_t min_size; /* the effective voxel threshold */
    double label_seconds, total_seconds;
    const char *labels_file, *cleaned_file;
    char (*names)[65]; /* class names (a SEG's SegmentLabel), or NULL */
    uint32_t name_count;
    double read_seconds, filter_seconds, stats_seconds, write_seconds; /* filter: size filters and clean-up */
} run_report;

static vl_status write_summary(const char *path, const run_report *r)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &out);
    if (status != VL_OK)
        return status;
    const vl_volume *volume = &r->input->volume;
    fprintf(out, "{\n  \"voxlabel_version\": ");
    cli_json_write_string(out, vl_version());
    fprintf(out, ",\n  \"mode\": \"multilabel\",\n  \"input\": {\"path\": ");
    cli_json_write_string(out, r->args->input_path);
    fprintf(out, ", \"kind\": ");
    cli_json_write_string(out, r->input->kind);
    fprintf(out, ", \"dtype\": \"%s\", \"size\": [%lld, %lld, %lld], \"voxel_volume_mm3\": ",
            vl_dtype_name(volume->dtype), (long long)volume->nx, (long long)volume->ny, (long long)volume->nz);
    cli_json_write_number(out, vl_geometry_voxel_volume(&volume->geometry));
    fprintf(out, "},\n  \"connectivity\": %d,\n  \"order\": \"%s\",\n", r->args->label.connectivity,
            vl_label_order_name(r->args->label.order));
    fprintf(out, "  \"cleanup\": {\"min_size_voxels\": %llu, \"min_volume_mm3\": ", (unsigned long long)r->min_size);
    cli_json_write_number(out, r->args->min_volume);
    fprintf(out, ", \"largest_per_class\": %lld, \"fill\": \"%s\"},\n", (long long)r->args->largest_per_class,
            r->args->fill == VL_FILL_NEIGHBOUR ? "neighbour" : "background");
    fprintf(out, "  \"components_before\": %u,\n  \"components\": %u,\n  \"classes\": %u,\n", r->labelled,
            r->result->count, r->class_count);
    fprintf(out, "  \"per_class\": [");
    for (uint32_t k = 0; k < r->class_count; k++) {
        const class_count *c = &r->classes[k];
        fprintf(out, "%s\n    {\"class\": %u, ", k ? "," : "", c->cls);
        if (r->names && c->cls >= 1 && c->cls <= r->name_count) {
            fprintf(out, "\"name\": ");
            cli_json_write_string(out, r->names[c->cls - 1]);
            fprintf(out, ", ");
        }
        fprintf(out, "\"components\": %u, \"voxels\": %llu, \"kept_components\": %u, "
                     "\"kept_voxels\": %llu, \"removed_components\": %u, \"removed_voxels\": %llu}",
                c->components, (unsigned long long)c->voxels, c->kept_components,
                (unsigned long long)c->kept_voxels, c->components - c->kept_components,
                (unsigned long long)(c->voxels - c->kept_voxels));
    }
    fprintf(out, "%s],\n  \"labels_file\": ", r->class_count ? "\n  " : "");
    cli_json_write_string(out, r->labels_file);
    fprintf(out, ",\n  \"cleaned_file\": ");
    if (r->cleaned_file)
        cli_json_write_string(out, r->cleaned_file);
    else
        fputs("null", out);
    fprintf(out, ",\n  \"device\": ");
    cli_json_write_device(out, r->args->label.device.kind, r->result);
    fprintf(out, ",\n  \"timings_s\": {\"read\": %.6f, \"label\": %.6f, \"filter\": %.6f, \"stats\": %.6f, "
                 "\"write\": %.6f, \"total\": %.6f}\n}\n",
            r->read_seconds, r->label_seconds, r->filter_seconds, r->stats_seconds, r->write_seconds, r->total_seconds);
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}

/* A SEG given with its CT (--intensity): the SEG must reference that series, and its frames are placed
 * on the CT's grid (slices without frames stay 0). Returns 0 or the printed error's exit code. */
static int place_seg(const multilabel_arguments *args, vl_seg_class_map *seg, const cli_input *ct)
{
    if (!ct)
        return 0;
    if (ct->has_report && seg->referenced_series_uid[0] && ct->report.series_uid[0] &&
        strcmp(seg->referenced_series_uid, ct->report.series_uid) != 0)
        return cli_error(CLI_EXIT_INPUT, "%s: references series %s, but %s is series %s", args->input_path,
                         seg->referenced_series_uid, args->intensity_path, ct->report.series_uid);
    if (vl_seg_class_map_place(seg, &ct->volume) != VL_OK)
        return cli_error(CLI_EXIT_INPUT, "%s: not on the grid of %s: %s", args->input_path, args->intensity_path,
                         vl_last_error());
    return 0;
}

/* A copy of the result's sizes and classes, for the per-class counts before the clean-up. */
static vl_status copy_result(const vl_label_result *from, vl_label_result *to)
{
    memset(to, 0, sizeof *to);
    to->count = from->count;
    to->sizes = malloc(((size_t)from->count + 1) * sizeof *to->sizes);
    to->classes = malloc(((size_t)from->count + 1) * sizeof *to->classes);
    if (!to->sizes || !to->classes) {
        vl_label_result_free(to);
        return vl_fail(VL_ERR_MEMORY, "multilabel: no memory for the table of %u components", from->count);
    }
    memcpy(to->sizes, from->sizes, (size_t)from->count * sizeof *to->sizes);
    memcpy(to->classes, from->classes, (size_t)from->count * sizeof *to->classes);
    return VL_OK;
}

int label_multilabel_run(int argc, char **argv)
{
    multilabel_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code;
    char labels_name[64], cleaned_name[64];
    snprintf(labels_name, sizeof labels_name, "labels%s", vl_file_format_extension(args.format));
    snprintf(cleaned_name, sizeof cleaned_name, "cleaned%s", vl_file_format_extension(args.format));
    const char *const names[] = {labels_name, "components.csv", "summary.json", "classes.csv", cleaned_name};
    cli_outputs outputs;
    if ((code = cli_outputs_prepare(&outputs, args.output_directory, names, cleans(&args) ? 5 : 4, args.force)))
        return code;

    struct timespec total_start, start;
    clock_gettime(CLOCK_MONOTONIC, &total_start);
    cli_gpu_warm_up gpu_warm_up;
    cli_gpu_warm_up_start(&gpu_warm_up, &args.label.device);
    cli_input input, intensity;
    memset(&intensity, 0, sizeof intensity);
    vl_seg_class_map seg = {0};
    const int from_seg = vl_dicom_file_is_seg(args.input_path);
    if (from_seg) {
        memset(&input, 0, sizeof input);
        input.kind = "dicom seg";
        code = vl_read_dicom_seg(args.input_path, &seg) != VL_OK ? cli_error(CLI_EXIT_INPUT, "%s", vl_last_error()) : 0;
    } else {
        code = cli_input_load(args.input_path, &args.input, &input);
    }
    if (!code && args.intensity_path)
        code = cli_input_load(args.intensity_path, &args.input, &intensity);
    if (!code && from_seg)
        code = place_seg(&args, &seg, args.intensity_path ? &intensity : NULL);
    if (from_seg) {
        /* The SEG's class map is the input; its segment names stay in `seg` as the classes' names. */
        input.volume = seg.classes;
        memset(&seg.classes, 0, sizeof seg.classes);
    }
    const double read_seconds = cli_seconds_since(&total_start);
    if (code) {
        cli_gpu_warm_up_finish(&gpu_warm_up);
        vl_seg_class_map_free(&seg);
        cli_input_free(&intensity);
        cli_input_free(&input);
        cli_outputs_abort(&outputs);
        return code;
    }
    vl_volume labels = {0}, cleaned = {0};
    vl_label_result result = {0}, before = {0};
    vl_component_stats *stats = NULL;
    class_count *classes = NULL;
    uint32_t class_total = 0;
    vl_status status;
    if ((status = vl_class_map_check(&input.volume)) != VL_OK) {
        code = cli_error(CLI_EXIT_INPUT, "%s: %s", args.input_path, vl_last_error());
        goto abort;
    }
    if ((args.format == VL_FORMAT_NIFTI || args.format == VL_FORMAT_NIFTI_GZ) &&
        (input.volume.nx > 32767 || input.volume.ny > 32767 || input.volume.nz > 32767)) {
        code = cli_error(CLI_EXIT_INPUT, "%s: an axis over 32767 voxels does not fit NIfTI-1 (use --format nrrd, mha, "
                                         "mat or raw)", args.input_path);
        goto abort;
    }

    if (args.intensity_path) {
        const vl_volume *a = &input.volume, *b = &intensity.volume;
        if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz) {
            code = cli_error(CLI_EXIT_INPUT, "%s: is %lldx%lldx%lld but the class map %s is %lldx%lldx%lld",
                             args.intensity_path, (long long)b->nx, (long long)b->ny, (long long)b->nz,
                             args.input_path, (long long)a->nx, (long long)a->ny, (long long)a->nz);
            goto abort;
        }
    }

    args.label.progress = cli_progress();
    cli_gpu_warm_up_finish(&gpu_warm_up); /* the device context, made while the map was read and checked */
    clock_gettime(CLOCK_MONOTONIC, &start);
    if ((status = vl_label_multilabel(&input.volume, &labels, &args.label, &result)) != VL_OK)
        goto failed;
    const double label_seconds = cli_seconds_since(&start);
    cli_report_device(&result.outcome, "labelled", 1);
    if (result.count == 0)
        cli_warning("%s holds no class (every voxel is 0): the outputs hold no components", args.input_path);
    const uint32_t labelled = result.count;
    if ((status = copy_result(&result, &before)) != VL_OK)
        goto failed;

    /* --min-volume in voxels: the smallest count whose volume reaches V. Spacings come from headers as
     * float32 (7 digits), so V / voxel volume is taken with a relative slack of 1e-6: V given as exactly k
     * voxels' volume keeps the k-voxel components. */
    uint64_t min_size = (uint64_t)args.min_size;
    const double voxel_volume = vl_geometry_voxel_volume(&input.volume.geometry);
    if (args.min_volume > 0) {
        if (!(voxel_volume > 0)) {
            code = cli_error(CLI_EXIT_INPUT, "%s: --min-volume needs the voxel spacing, and the input's voxel volume "
                                             "is %g mm^3", args.input_path, voxel_volume);
            goto abort;
        }
        const double voxels = ceil(args.min_volume / voxel_volume * (1.0 - 1e-6));
        const uint64_t from_volume = voxels >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)voxels;
        min_size = from_volume > min_size ? from_volume : min_size;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    if ((status = vl_label_filter_per_class(&labels, &result, min_size, (uint32_t)args.largest_per_class)) != VL_OK)
        goto failed;
    if (cleans(&args) &&
        (status = vl_class_map_clean(&input.volume, &labels, args.fill, args.label.connectivity, &cleaned)) != VL_OK)
        goto failed;
    if (!(classes = count_classes(&before, &result, &class_total))) {
        status = vl_fail(VL_ERR_MEMORY, "multilabel: no memory for the per-class counts");
        goto failed;
    }

    const double filter_seconds = cli_seconds_since(&start);

    vl_stats_options stats_options;
    vl_stats_options_default(&stats_options);
    stats_options.device = args.label.device;
    stats_options.threads = args.label.threads;
    stats_options.progress = cli_progress();
    clock_gettime(CLOCK_MONOTONIC, &start);
    if ((status = vl_component_stats_compute(&labels, args.intensity_path ? &intensity.volume : NULL, result.count,
                                             &stats_options, &stats)) != VL_OK)
        goto failed;
    const double stats_seconds = cli_seconds_since(&start);

    vl_write_options write;
    vl_write_options_default(&write);
    write.format = args.format;
    write.force = 1; /* staged names are fresh; the real targets were checked up front */
    write.is_label_map = 1;
    write.mat_xy = vl_label_order_is_raster(args.label.order);
    write.mat_class = VL_MAT_UINT32;
    write.progress = cli_progress();
    clock_gettime(CLOCK_MONOTONIC, &start);
    if ((status = vl_write_volume(cli_outputs_staged(&outputs, 0), &labels, &write)) != VL_OK)
        goto failed;
    if (cleans(&args) && (status = vl_write_volume(cli_outputs_staged(&outputs, 4), &cleaned, &write)) != VL_OK)
        goto failed;
    if ((status = write_components(cli_outputs_staged(&outputs, 1), &result, stats, seg.names, seg.segment_count,
                                   args.intensity_path != NULL)) != VL_OK)
        goto failed;
    if ((status = write_classes_csv(cli_outputs_staged(&outputs, 3), classes, class_total, seg.names,
                                    seg.segment_count, voxel_volume)) != VL_OK)
        goto failed;
    run_report report = {&args,       &input,         &result,       classes,       class_total,
                         labelled,    min_size,       label_seconds, cli_seconds_since(&total_start),
                         names[0],    cleans(&args) ? names[4] : NULL, seg.names, seg.segment_count,
                         read_seconds, filter_seconds, stats_seconds, cli_seconds_since(&start)};
    if ((status = write_summary(cli_outputs_staged(&outputs, 2), &report)) != VL_OK)
        goto failed;
    if ((code = cli_outputs_commit(&outputs)))
        goto done;
    if (!cli_is_quiet()) {
        printf("%u component%s of %u class%s (conn %d, %s order) in %lldx%lldx%lld voxels; labelled on %s in %.3f s\n",
               labelled, labelled == 1 ? "" : "s", class_total, class_total == 1 ? "" : "es",
               args.label.connectivity, vl_label_order_name(args.label.order), (long long)input.volume.nx,
               (long long)input.volume.ny, (long long)input.volume.nz, result.device_name, label_seconds);
        if (cleans(&args)) {
            uint64_t removed_voxels = 0;
            for (uint32_t k = 0; k < class_total; k++)
                removed_voxels += classes[k].voxels - classes[k].kept_voxels;
            printf("clean-up kept %u component%s; removed %u island%s (%llu voxels, %.3f mL)\n", result.count,
                   result.count == 1 ? "" : "s", labelled - result.count, labelled - result.count == 1 ? "" : "s",
                   (unsigned long long)removed_voxels, (double)removed_voxels * voxel_volume / 1000.0);
        }
        printf("wrote %s, %s, %s, %s%s%s\n", cli_outputs_final(&outputs, 0), cli_outputs_final(&outputs, 1),
               cli_outputs_final(&outputs, 2), cli_outputs_final(&outputs, 3), cleans(&args) ? ", " : "",
               cleans(&args) ? cli_outputs_final(&outputs, 4) : "");
    }
    code = CLI_EXIT_OK;
    goto done;

failed:
    code = cli_status_error(status);
abort:
    cli_gpu_warm_up_finish(&gpu_warm_up);
    cli_outputs_abort(&outputs);
done:
    free(classes);
    vl_component_stats_free(stats);
    vl_label_result_free(&result);
    vl_label_result_free(&before);
    vl_volume_free(&labels);
    vl_volume_free(&cleaned);
    vl_seg_class_map_free(&seg);
    cli_input_free(&intensity);
    cli_input_free(&input);
    return code;
}
