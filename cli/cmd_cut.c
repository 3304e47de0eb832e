/* voxlabel cut: seeded graph-cut segmentation (Boykov-Jolly) of a CT or image -> labels, components.csv,
 * summary.json. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_clock.h"
#include "cli_image_grey.h"
#include "cli_input.h"
#include "cli_outputs.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/graphcut.h"
#include "voxlabel/io.h"
#include "voxlabel/stats.h"
#include "voxlabel/voxlabel.h"

static const char cut_help[] =
    "usage: voxlabel cut INPUT --seeds SEEDS -o DIR [options]\n"
    "\n"
    "Segments one object from a few seeds with a minimum graph cut (Boykov-Jolly): every voxel is object or\n"
    "background, paying -ln P(intensity | class) under Gaussian mixtures fitted on the seeds, plus a boundary\n"
    "price between neighbours of similar intensity; seeds are hard constraints. The cut is exact (integer\n"
    "max-flow: Boykov-Kolmogorov on the CPU, push-relabel on the GPU, same cut value). docs/graphcut.md has\n"
    "the energy and its units.\n"
    "\n"
    "SEEDS is a label volume on the image's grid (as drawn in 3D Slicer or ITK-SNAP): 1 = object,\n"
    "2 = background, 0 = free. It must match the image's size and geometry and hold both classes.\n"
    "INPUT may also be a PNG or JPEG image (cut as one 8-bit grey slice; colour becomes grey as OpenCV's\n"
    "BGR2GRAY does), with SEEDS a PNG of the same size (grey values 1 and 2) or a one-slice volume.\n"
    "\n"
    "Writes DIR/labels.nii.gz (the object's connected components in bwlabeln order, so 'voxlabel stats' and\n"
    "'voxlabel compare' work on it), DIR/components.csv (docs/csv.md) and DIR/summary.json (energy, cut value,\n"
    "iterations, rounds, seeds, parameters).\n"
    "\n"
    "options:\n"
    "  --seeds SEEDS              seed label volume (.nii.gz .nii .nrrd .mha .mat; .png for an image)\n"
    "  -o, --output DIR           output directory (made if missing)\n"
    "  --conn 4|8|6|26            grid connectivity: 4/8 cut every slice on its own, 6/26 the volume\n"
    "                             (default 8 for one slice, 6 for a volume)\n"
    "  --components K             Gaussians per class (default 5)\n"
    "  --lambda W                 weight of the intensity term (default 1)\n"
    "  --gamma G                  weight of the boundary term (default 50, as OpenCV grabCut)\n"
    "  --beta B                   contrast scale (default 1 / (2 <dI^2>) over neighbour pairs)\n"
    "  --rounds N                 GrabCut-style rounds: re-fit the mixtures on the result, cut again (default 1)\n"
    "  --prior MASK               object prior (Lou et al.): a mask on the same grid, nonzero = expected object\n"
    "  --prior-weight W           nats a voxel pays to disagree with the prior (default 2)\n"
    "  --device auto|cpu|gpu[:N]  where the max-flow runs (default auto)\n"
    "  --force                    replace existing outputs\n"
    "  --progress | --quiet       force progress bars on stderr | no progress, notes or summary line\n"
    "\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel cut ct/ --seeds seeds.nii.gz -o cut/\n"
    "  voxlabel cut liver.nii.gz --seeds seeds.nrrd --conn 26 --rounds 3 -o cut/ --device gpu\n"
    "  voxlabel cut frame.nii.gz --seeds s.nii.gz --prior previous/labels.nii.gz --prior-weight 3 -o cut/\n";

typedef struct cut_arguments {
    const char *input_path, *seeds_path, *prior_path, *output_directory;
    cli_input_options input;
    vl_cut_options cut;
    int force, quiet, progress;
} cut_arguments;

static int parse_arguments(int argc, char **argv, cut_arguments *args)
{
    memset(args, 0, sizeof *args);
    cli_input_options_default(&args->input);
    vl_cut_options_default(&args->cut);
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value;
        int handled = cli_input_parse_option(argc, argv, &i, &args->input);
        if (handled < 0)
            return -handled;
        if (handled)
            continue;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(cut_help, cli_input_help);
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
        static const char *const valued[] = {"--seeds", "-o", "--output", "--conn", "--components", "--lambda",
                                             "--gamma", "--beta", "--rounds", "--prior", "--prior-weight", "--device"};
        if (cli_option_index(option, valued, sizeof valued / sizeof valued[0]) < 0)
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel cut --help')", option);
        if (!(value = cli_option_value(argc, argv, &i)))
            return CLI_EXIT_USAGE;
        int64_t number;
        if (strcmp(option, "--seeds") == 0) {
            args->seeds_path = value;
        } else if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0) {
            args->output_directory = value;
        } else if (strcmp(option, "--prior") == 0) {
            args->prior_path = value;
        } else if (strcmp(option, "--conn") == 0) {
            if (cli_parse_int64(option, value, 4, 26, &number))
                return CLI_EXIT_USAGE;
            if (!vl_grid_directions((int)number))
                return cli_error(CLI_EXIT_USAGE, "--conn: %s is not one of 4, 8 (per slice), 6, 26 (3D)", value);
            args->cut.connectivity = (int)number;
        } else if (strcmp(option, "--components") == 0) {
            if (cli_parse_int64(option, value, 1, 16, &number))
                return CLI_EXIT_USAGE;
            args->cut.components = (int)number;
        } else if (strcmp(option, "--rounds") == 0) {
            if (cli_parse_int64(option, value, 1, 100, &number))
                return CLI_EXIT_USAGE;
            args->cut.rounds = (int)number;
        } else if (strcmp(option, "--device") == 0) {
            if (cli_parse_device(value, &args->cut.maxflow.device))
                return CLI_EXIT_USAGE;
        } else {
            double *target = strcmp(option, "--lambda") == 0  ? &args->cut.unary_weight
                             : strcmp(option, "--gamma") == 0 ? &args->cut.boundary_weight
                             : strcmp(option, "--beta") == 0  ? &args->cut.beta
                                                              : &args->cut.prior_weight;
            if (cli_parse_double(option, value, target))
                return CLI_EXIT_USAGE;
            if (!(*target >= 0) || !isfinite(*target))
                return cli_error(CLI_EXIT_USAGE, "%s: %s is not a finite number >= 0", option, value);
        }
    }
    cli_progress_configure(args->progress, args->quiet);
    args->cut.progress = cli_progress();
    if (!args->input_path)
        return cli_error(CLI_EXIT_USAGE, "cut: missing INPUT (see 'voxlabel cut --help')");
    if (!args->seeds_path)
        return cli_error(CLI_EXIT_USAGE, "cut: missing --seeds SEEDS (a label volume: 1 = object, 2 = background)");
    if (!args->output_directory)
        return cli_error(CLI_EXIT_USAGE, "cut: missing -o DIR (where labels.nii.gz, components.csv and summary.json go)");
    return 0;
}

/* A seed or prior map: a PNG or JPEG as its grey samples, anything else through the volume readers. */
static vl_status read_map(const char *path, vl_volume *map)
{
    if (cli_is_image_file(path))
        return cli_image_read_grey(path, map);
    vl_read_options read;
    vl_read_options_default(&read);
    return vl_read_volume(path, &read, map);
}

static vl_status write_summary(const char *path, const cut_arguments *args, const cli_input *input,
                               const vl_cut_result *r, uint32_t components, double seconds)
{
    FILE *out;
    vl_atomic_file file;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &out);
    if (status != VL_OK)
        return status;
    const vl_volume *v = &input->volume;
    const vl_cut_options *o = &args->cut;
    fprintf(out, "{\n  \"voxlabel_version\": ");
    cli_json_write_string(out, vl_version());
    fprintf(out, ",\n  \"input\": {\"path\": ");
    cli_json_write_string(out, args->input_path);
    fprintf(out, ", \"kind\": ");
    cli_json_write_string(out, input->kind);
    fprintf(out, ", \"size\": [%lld, %lld, %lld]},\n  \"seeds\": {\"path\": ", (long long)v->nx, (long long)v->ny,
            (long long)v->nz);
    cli_json_write_string(out, args->seeds_path);
    fprintf(out, ", \"object_voxels\": %lld, \"background_voxels\": %lld},\n", (long long)r->object_seeds,
            (long long)r->background_seeds);
    fprintf(out, "  \"prior\": ");
    if (args->prior_path) {
        fprintf(out, "{\"path\": ");
        cli_json_write_string(out, args->prior_path);
        fprintf(out, ", \"weight_nats\": %.17g}", o->prior_weight);
    } else {
        fprintf(out, "null");
    }
    fprintf(out, ",\n  \"parameters\": {\"connectivity\": %d, \"components\": %d, \"lambda\": %.17g, "
                 "\"gamma\": %.17g, \"beta\": %.17g, \"rounds\": %d, \"units_per_nat\": %d},\n",
            o->connectivity, o->components, o->unary_weight, o->boundary_weight, r->beta, o->rounds,
            VL_CUT_UNITS_PER_NAT);
    fprintf(out, "  \"result\": {\"energy\": %lld, \"energy_nats\": %.17g, \"cut_value\": %lld, \"iterations\": %lld, "
                 "\"rounds_run\": %d, \"object_voxels\": %lld, \"components\": %u},\n",
            (long long)r->energy, (double)r->energy / VL_CUT_UNITS_PER_NAT, (long long)r->cut_value,
            (long long)r->iterations, r->rounds_run, (long long)r->object_voxels, components);
    fprintf(out, "  \"device\": ");
    cli_json_write_string(out, vl_device_kind_name(r->outcome.used));
    fprintf(out, ",\n  \"seconds\": %.6f,\n  \"labels_file\": \"labels.nii.gz\"\n}\n", seconds);
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}

int cmd_cut(int argc, char **argv)
{
    cut_arguments args;
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    const char *const names[] = {"labels.nii.gz", "components.csv", "summary.json"};
    cli_outputs outputs;
    if ((code = cli_outputs_prepare(&outputs, args.output_directory, names, 3, args.force)))
        return code;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);

    cli_input input;
    if (cli_is_image_file(args.input_path)) {
        memset(&input, 0, sizeof input);
        input.kind = "image";
        vl_status read = cli_image_read_grey(args.input_path, &input.volume);
        if (read != VL_OK) {
            cli_outputs_abort(&outputs);
            return cli_status_error(read);
        }
    } else if ((code = cli_input_load(args.input_path, &args.input, &input))) {
        cli_outputs_abort(&outputs);
        return code;
    }
    if (!args.cut.connectivity) /* the cut's default, resolved once for the labelling and the summary */
        args.cut.connectivity = input.volume.nz == 1 ? 8 : 6;
    vl_volume seeds = {0}, prior = {0}, object = {0}, labels = {0};
    vl_label_result labelled = {0};
    vl_component_stats *stats = NULL;
    vl_cut_result result;
    vl_status status = read_map(args.seeds_path, &seeds);
    if (status == VL_OK && args.prior_path) {
        status = read_map(args.prior_path, &prior);
        args.cut.prior = &prior;
    }
    if (status == VL_OK)
        status = vl_cut_segment(&input.volume, &seeds, &args.cut, &object, &result);
    if (status == VL_OK) {
        cli_report_device(&result.outcome, "max-flow ran", 1);
        vl_label_options label;
        vl_label_options_default(&label);
        label.connectivity = args.cut.connectivity;
        label.device = args.cut.maxflow.device;
        status = vl_label_volume(&object, &labels, &label, &labelled);
    }
    if (status == VL_OK) {
        vl_stats_options stats_options;
        vl_stats_options_default(&stats_options);
        stats_options.device = args.cut.maxflow.device;
        status = vl_component_stats_compute(&labels, &input.volume, labelled.count, &stats_options, &stats);
    }
    if (status == VL_OK) {
        vl_write_options write;
        vl_write_options_default(&write);
        write.force = 1; /* staged names are fresh; the targets were checked up front */
        write.is_label_map = 1;
        status = vl_write_volume(cli_outputs_staged(&outputs, 0), &labels, &write);
    }
    if (status == VL_OK) {
        vl_csv_options csv;
        vl_csv_options_default(&csv);
        csv.intensity = 1;
        csv.force = 1;
        status = vl_component_stats_write_csv(cli_outputs_staged(&outputs, 1), stats, labelled.count, &csv);
    }
    if (status == VL_OK)
        status = write_summary(cli_outputs_staged(&outputs, 2), &args, &input, &result, labelled.count,
                               cli_seconds_since(&start));
    if (status != VL_OK) {
        code = cli_status_error(status);
        cli_outputs_abort(&outputs);
    } else if (!(code = cli_outputs_commit(&outputs)) && !args.quiet) {
        printf("%s: object of %lld voxels in %u component(s); energy %.3f nats (cut value %lld, %d round(s)) -> %s\n",
               args.input_path, (long long)result.object_voxels, labelled.count,
               (double)result.energy / VL_CUT_UNITS_PER_NAT, (long long)result.cut_value, result.rounds_run,
               outputs.directory);
    }
    vl_component_stats_free(stats);
    vl_label_result_free(&labelled);
    vl_volume_free(&labels);
    vl_volume_free(&object);
    vl_volume_free(&prior);
    vl_volume_free(&seeds);
    cli_input_free(&input);
    return code;
}
