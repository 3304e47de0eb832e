/* voxlabel background: MOG2 foreground of a frame sequence -> per-frame masks, per-frame component shapes,
 * a preview strip and a summary. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cli_image_grey.h"
#include "cli_input.h"
#include "cli_outputs.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/background.h"
#include "voxlabel/image2d.h"
#include "voxlabel/io.h"
#include "voxlabel/preview.h"
#include "voxlabel/shape.h"
#include "voxlabel/voxlabel.h"

static const char background_help[] =
    "usage: voxlabel background INPUT -o DIR [options]\n"
    "\n"
    "Finds what moves in a frame sequence with an adaptive Gaussian-mixture background model (Zivkovic's\n"
    "MOG2, the arithmetic and defaults of OpenCV's BackgroundSubtractorMOG2 with shadows off), then labels\n"
    "the foreground of every frame (2D connected components) and measures their shapes.\n"
    "\n"
    "INPUT is a folder of PNG frames (taken in name order; colour becomes grey as OpenCV's BGR2GRAY does, 16-bit\n"
    "keeps the high byte), a multi-frame DICOM (cine ultrasound, XA/XRF) or series, or any volume read as\n"
    "frames along z. Frames that are not 8-bit are mapped linearly from the sequence's minimum..maximum to\n"
    "0..255, the range the model's variances are meant for. At least 2 frames.\n"
    "\n"
    "Writes DIR/foreground.nii.gz (1 = foreground, one slice per frame), DIR/components.csv (one row per frame\n"
    "and 2D component: area, centroid, box, moments, Hu, ...; 'slice' is the frame), DIR/preview.png (a strip of\n"
    "frames with their components) and DIR/summary.json (parameters, foreground share per frame).\n"
    "\n"
    "options:\n"
    "  -o, --output DIR           output directory (made if missing)\n"
    "  --history N                frames that shape the learning rate 1/min(2t, N) (default 500)\n"
    "  --var-threshold T          squared distance (in variances) under which a pixel is background (default 16)\n"
    "  --mixtures K               Gaussians per pixel, 1..8 (default 5)\n"
    "  --background-ratio R       weight share of the modes that are background (default 0.9)\n"
    "  --learning-rate A          fixed rate 0..1 instead of the automatic one\n"
    "  --conn 4|8                 2D connectivity of the components (default 8)\n"
    "  --frames N                 frames in the preview strip (default 8)\n"
    "  --device auto|cpu|gpu[:N]  where the model runs (default auto; the model stays on the GPU)\n"
    "  --force                    replace existing outputs\n"
    "  --progress | --quiet       force progress bars on stderr | no progress, notes or summary line\n"
    "\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel background cine.dcm -o moving/\n"
    "  voxlabel background frames/ -o moving/ --history 200 --var-threshold 25 --device gpu\n";

typedef struct background_arguments {
    const char *input_path, *output_directory;
    cli_input_options input;
    vl_background_options background;
    int connectivity, strip_frames, force, quiet, progress;
} background_arguments;

static int parse_arguments(int argc, char **argv, background_arguments *args)
{
    memset(args, 0, sizeof *args);
    cli_input_options_default(&args->input);
    vl_background_options_default(&args->background);
    args->connectivity = 8;
    args->strip_frames = 8;
    vl_mog2_params *p = &args->background.mog2;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value;
        int handled = cli_input_parse_option(argc, argv, &i, &args->input);
        if (handled < 0)
            return -handled;
        if (handled)
            continue;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(background_help, cli_input_help);
            return -1;
        }
        if (cli_parse_run_flag(option, &args->force, &args->quiet, &args->progress))
            continue;
        if (option[0] != '-') {
            const int code = cli_take_operand(option, &args->input_path, "one INPUT only");
            if (code)
                return code;
            continue;
        }
        static const char *const valued[] = {"-o", "--output", "--history", "--var-threshold", "--mixtures",
                                             "--background-ratio", "--learning-rate", "--conn", "--frames",
                                             "--device"};
        if (cli_option_index(option, valued, sizeof valued / sizeof valued[0]) < 0)
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel background --help')", option);
        if (!(value = cli_option_value(argc, argv, &i)))
            return CLI_EXIT_USAGE;
        int64_t number;
        double real;
        if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
            args->output_directory = value;
        } else if (strcmp(option, "--device") == 0) {
            if (cli_parse_device(value, &args->background.device))
                return CLI_EXIT_USAGE;
        } else if (strcmp(option, "--history") == 0 || strcmp(option, "--mixtures") == 0 ||
                   strcmp(option, "--conn") == 0 || strcmp(option, "--frames") == 0) {
            if (cli_parse_int64(option, value, 1, 1000000, &number))
                return CLI_EXIT_USAGE;
            if (option[2] == 'h')
                p->history = (int)number;
            else if (option[2] == 'm')
                p->nmixtures = (int)number;
            else if (option[2] == 'f')
                args->strip_frames = (int)(number > 64 ? 64 : number);
            else if (number != 4 && number != 8)
                return cli_error(CLI_EXIT_USAGE, "--conn: %s is not 4 or 8", value);
            else
                args->connectivity = (int)number;
        } else {
            if (cli_parse_double(option, value, &real))
                return CLI_EXIT_USAGE;
            if (strcmp(option, "--var-threshold") == 0)
                p->var_threshold = (float)real;
            else if (strcmp(option, "--background-ratio") == 0)
                p->background_ratio = (float)real;
            else if (!(real >= 0 && real <= 1))
                return cli_error(CLI_EXIT_USAGE, "--learning-rate: %s is not in 0..1", value);
            else
                p->learning_rate = real;
        }
    }
    cli_progress_configure(args->progress, args->quiet);
    if (!args->input_path)
        return cli_error(CLI_EXIT_USAGE, "background: missing INPUT (see 'voxlabel background --help')");
    if (!args->output_directory)
        return cli_error(CLI_EXIT_USAGE, "background: missing -o DIR (where foreground.nii.gz, components.csv, "
                                         "preview.png and summary.json go)");
    if (vl_mog2_params_validate(p) != VL_OK)
        return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
    return 0;
}

static int has_png_suffix(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".png") == 0 && name[0] != '.';
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The PNG file names of `directory`, sorted; *count 0 when there are none. */
static vl_status list_pngs(const char *directory, char ***names, int64_t *count)
{
    *names = NULL;
    *count = 0;
    DIR *dir = opendir(directory);
    if (!dir)
        return VL_OK;
    int64_t capacity = 0;
    struct dirent *entry;
    vl_status status = VL_OK;
    while (status == VL_OK && (entry = readdir(dir))) {
        if (!has_png_suffix(entry->d_name))
            continue;
        if (*count == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            char **grown = realloc(*names, (size_t)capacity * sizeof *grown);
            if (!grown) {
                status = vl_fail(VL_ERR_MEMORY, "%s: out of memory listing frames", directory);
                break;
            }
            *names = grown;
        }
        if (!((*names)[*count] = strdup(entry->d_name)))
            status = vl_fail(VL_ERR_MEMORY, "%s: out of memory listing frames", directory);
        else
            (*count)++;
    }
    closedir(dir);
    if (*count)
        qsort(*names, (size_t)*count, sizeof **names, compare_names);
    return status;
}

static vl_status read_png_frames(const char *directory, char **names, int64_t count, vl_volume *frames)
{
    vl_status status = VL_OK;
    char path[4096];
    for (int64_t z = 0; status == VL_OK && z < count; z++) {
        snprintf(path, sizeof path, "%s/%s", directory, names[z]);
        vl_image image;
        if ((status = vl_image_read(path, &image)) != VL_OK)
            break;
        if (z == 0) {
            int64_t bytes;
            status = vl_size_product(image.width, image.height, count, 1, "background frames", &bytes);
            if (status == VL_OK)
                status = vl_volume_create_uninitialised(frames, image.width, image.height, count, VL_U8);
        } else if (image.width != frames->nx || image.height != frames->ny) {
            status = vl_fail(VL_ERR_INPUT, "%s: %lldx%lld, but the first frame (%s) is %lldx%lld; every frame must "
                             "have one size", path, (long long)image.width, (long long)image.height, names[0],
                             (long long)frames->nx, (long long)frames->ny);
        }
        if (status == VL_OK) {
            uint8_t *out = (uint8_t *)frames->data + z * frames->nx * frames->ny;
            for (int64_t i = 0; i < image.width * image.height; i++)
                out[i] = cli_image_grey8(&image, i);
        }
        vl_image_free(&image);
    }
    return status;
}

/* Loads the frames as 8-bit grey; returns 0 or prints the error and returns its exit code. */
static int load_frames(const background_arguments *args, vl_volume *frames, const char **kind)
{
    char **names;
    int64_t count;
    vl_status status = list_pngs(args->input_path, &names, &count);
    if (status == VL_OK && count > 0) {
        *kind = "png frames";
        status = read_png_frames(args->input_path, names, count, frames);
    }
    for (int64_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    if (status != VL_OK)
        return cli_status_error(status);
    if (count > 0)
        return 0;
    if (cli_is_image_file(args->input_path)) {
        *kind = "image";
        status = cli_image_read_grey(args->input_path, frames);
        return status == VL_OK ? 0 : cli_status_error(status);
    }
    cli_input input;
    int code = cli_input_load(args->input_path, &args->input, &input);
    if (code)
        return code;
    *kind = input.kind;
    status = vl_background_frames_u8(&input.volume, frames);
    cli_input_free(&input);
    return status == VL_OK ? 0 : cli_status_error(status);
}

static vl_status write_summary(const char *path, const background_arguments *args, const char *kind,
                               const vl_volume *foreground, const vl_slice_labels *labels,
                               const vl_device_outcome *outcome)
{
    FILE *out;
    vl_atomic_file file;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &out);
    if (status != VL_OK)
        return status;
    const vl_mog2_params *p = &args->background.mog2;
    fprintf(out, "{\n  \"voxlabel_version\": ");
    cli_json_write_string(out, vl_version());
    fprintf(out, ",\n  \"input\": {\"path\": ");
    cli_json_write_string(out, args->input_path);
    fprintf(out, ", \"kind\": ");
    cli_json_write_string(out, kind);
    fprintf(out, ", \"width\": %lld, \"height\": %lld, \"frames\": %lld},\n", (long long)foreground->nx,
            (long long)foreground->ny, (long long)foreground->nz);
    fprintf(out, "  \"mog2\": {\"history\": %d, \"var_threshold\": %.9g, \"nmixtures\": %d, \"background_ratio\": %.9g, "
                 "\"var_threshold_gen\": %.9g, \"var_init\": %.9g, \"var_min\": %.9g, \"var_max\": %.9g, "
                 "\"complexity_reduction\": %.9g, \"learning_rate\": ",
            p->history, p->var_threshold, p->nmixtures, p->background_ratio, p->var_threshold_gen, p->var_init,
            p->var_min, p->var_max, p->complexity_reduction);
    if (p->learning_rate >= 0)
        fprintf(out, "%.17g", p->learning_rate);
    else
        fputs("\"automatic\"", out);
    fprintf(out, ", \"shadows\": false},\n  \"connectivity\": %d,\n  \"device\": ", args->connectivity);
    cli_json_write_string(out, vl_device_kind_name(outcome->used));
    fprintf(out, ",\n  \"frames\": [");
    const int64_t plane = foreground->nx * foreground->ny;
    for (int64_t z = 0; z < foreground->nz; z++) {
        int64_t set = 0;
        const uint8_t *mask = (const uint8_t *)foreground->data + z * plane;
        for (int64_t i = 0; i < plane; i++)
            set += mask[i] != 0;
        fprintf(out, "%s\n    {\"frame\": %lld, \"foreground_fraction\": %.6f, \"components\": %u}", z ? "," : "",
                (long long)z, (double)set / (double)plane, labels->count[z]);
    }
    fprintf(out, "\n  ]\n}\n");
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}

int cmd_background(int argc, char **argv)
{
    background_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    const char *const names[] = {"foreground.nii.gz", "components.csv", "preview.png", "summary.json"};
    cli_outputs outputs;
    if ((code = cli_outputs_prepare(&outputs, args.output_directory, names, 4, args.force)))
        return code;
    vl_volume frames = {0}, foreground = {0};
    const char *kind = "";
    if ((code = load_frames(&args, &frames, &kind))) {
        cli_outputs_abort(&outputs);
        return code;
    }
    vl_slice_labels labels = {0};
    vl_shape_table table = {0};
    vl_device_outcome outcome = {0};
    vl_status status = VL_OK;
    if (frames.nz < 2)
        status = vl_fail(VL_ERR_INPUT, "%s: a sequence of one frame has no motion to find; background needs at "
                         "least 2 frames (a cine, a folder of PNGs or a volume read as frames along z)",
                         args.input_path);
    if (status == VL_OK) {
        args.background.progress = cli_progress();
        status = vl_background_mog2(&frames, &foreground, &args.background, &outcome);
    }
    if (status == VL_OK) {
        cli_report_device(&outcome, "background model ran", 1);
        status = vl_label_slices(&foreground, args.connectivity, &args.background.device, &labels);
    }
    if (status == VL_OK)
        status = vl_shape_measure(&labels, NULL, NULL, &table);
    if (status == VL_OK) {
        vl_write_options write;
        vl_write_options_default(&write);
        write.force = 1; /* staged names are fresh; the targets were checked up front */
        write.is_label_map = 1;
        status = vl_write_volume(cli_outputs_staged(&outputs, 0), &foreground, &write);
    }
    if (status == VL_OK)
        status = vl_shape_write_csv(cli_outputs_staged(&outputs, 1), &table, 1);
    if (status == VL_OK) {
        vl_preview_options preview;
        vl_preview_options_default(&preview);
        preview.window_center = 127.5;
        preview.window_width = 256;
        preview.montage_slices = args.strip_frames < frames.nz ? args.strip_frames : (int)frames.nz;
        preview.montage_columns = preview.montage_slices;
        preview.force = 1;
        status = vl_preview_write_montage(cli_outputs_staged(&outputs, 2), &frames, &labels.labels, &preview);
    }
    if (status == VL_OK)
        status = write_summary(cli_outputs_staged(&outputs, 3), &args, kind, &foreground, &labels, &outcome);
    if (status != VL_OK) {
        code = cli_status_error(status);
        cli_outputs_abort(&outputs);
    } else if (!(code = cli_outputs_commit(&outputs)) && !args.quiet) {
        printf("%s: %lld frames of %lldx%lld, %lld foreground component(s) -> %s\n", args.input_path,
               (long long)frames.nz, (long long)frames.nx, (long long)frames.ny, (long long)table.count,
               outputs.directory);
    }
    vl_shape_table_free(&table);
    vl_slice_labels_free(&labels);
    vl_volume_free(&foreground);
    vl_volume_free(&frames);
    return code;
}
