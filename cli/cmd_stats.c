/* voxlabel stats: per-component statistics of any label volume (ours, MATLAB .mat, a Slicer NIfTI), or of
 * the components of every class of a class map (--multilabel). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/atomic_file.h"
#include "cli.h"
#include "cli_gpu_warm_up.h"
#include "cli_input.h"
#include "stats_class_map.h"
#include "voxlabel/io.h"
#include "voxlabel/stats.h"

static const char stats_help[] =
    "usage: voxlabel stats LABELS -o OUTPUT [options]\n"
    "\n"
    "Measures every component of a label volume (0 = background, 1..N = components; labels need not be\n"
    "contiguous: a missing label gets a row with 0 voxels, as regionprops3 gives). LABELS is any volume\n"
    "voxlabel reads: NIfTI (.nii/.nii.gz, e.g. from 3D Slicer), NRRD, MHA, MATLAB .mat (bwlabeln output),\n"
    "or raw with --raw-dims/--raw-type. Columns, units and formulas: docs/csv.md.\n"
    "\n"
    "A class map (a segmentation: one class per voxel, 0 = background) read as LABELS gives one row per class.\n"
    "With --multilabel every class is labelled into its connected components first (as `voxlabel label\n"
    "--multilabel`: voxels join only within their class, components numbered 1..N over all classes) and each\n"
    "row is a component, with its class in the `class` column after `label`.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE          components table (.csv; .json or --json for JSON)\n"
    "  --intensity VOLUME         HU (or any intensity) volume of the same size: adds hu_* columns; a DICOM\n"
    "                             directory, NIfTI, NRRD, MHA, MAT or raw (raw uses --intensity-raw-type)\n"
    "  --stats basic|full         basic (default): size, centroid, bounding box, HU mean/min/max;\n"
    "                             full: + border, slices, extent, principal moments/axes, MATLAB eigenvalues and\n"
    "                             axis lengths, elongation, flatness, surface area (normal-weighted faces; also\n"
    "                             Crofton and ITK estimates), sphericity, ITK roundness and ellipsoid diameters,\n"
    "                             Euler number, perimeter on border,\n"
    "                             convex hull volume and solidity, Feret max/min diameters with end points,\n"
    "                             oriented bounding box, HU std/sum/median/skewness/kurtosis, weighted centroid\n"
    "  --columns A,B,...          write only these columns, in this order (names in docs/csv.md); computes only\n"
    "                             what they need: the hull and Feret only when a hull column is listed\n"
    "  --connectivity 6|18|26     connectivity the labels were made with, for euler_number (default 26; 18\n"
    "                             leaves it empty); with --multilabel also the one the components are made with\n"
    "  --multilabel               LABELS is a class map (u8, u16, u32, or i16 without negative values): one row\n"
    "                             per component of every class, with a `class` column\n"
    "  --order matlab|matlab-xy|size\n"
    "                             with --multilabel: the components' numbering (default matlab, bwlabeln's;\n"
    "                             matlab-xy is cc3d's and scipy's raster order; size: largest first)\n"
    "  --matlab                   add regionprops3's columns in its order: Volume, Centroid, BoundingBox\n"
    "                             (1-based, half-voxel corners), EquivDiameter, Extent; with --stats full also\n"
    "                             PrincipalAxisLength, Orientation (degrees), EigenVectors, EigenValues,\n"
    "                             ConvexVolume, Solidity; with --intensity WeightedCentroid, Mean/Min/MaxIntensity\n"
    "  --hull FILE                also write every component's convex hull (of its voxel corners) to the CSV\n"
    "                             FILE: label, MATLAB's 1-based x, y, z of each vertex (regionprops3's\n"
    "                             ConvexHull) and its LPS mm\n"
    "  --json                     write JSON (an array of objects with the CSV's column names)\n"
    "  --force                    replace an existing output file\n"
    "  --device auto|cpu|gpu[:N]  where to compute (default auto: a GPU if usable, else the CPU)\n"
    "  --threads N                CPU threads for every stage (default: all cores)\n"
    "  --intensity-raw-type T     dtype of a raw intensity file (default i16)\n"
    "  --progress, --quiet        force / silence progress on stderr\n"
    "%s"
    "\n"
    "examples:\n"
    "  voxlabel stats out/labels.nii.gz --intensity ct/ -o components.csv\n"
    "  voxlabel stats L.mat --stats full --matlab -o regionprops.csv\n"
    "  voxlabel stats L.nii.gz --columns label,voxels,feret_max_mm,solidity,euler_number -o shape.csv\n"
    "  voxlabel stats seg.nii.gz --json -o components.json\n"
    "  voxlabel stats seg.nii.gz --multilabel --intensity ct/ -o components.csv   (every organ's islands)\n"
    "  voxlabel stats labels.raw --raw-dims 512,512,400 --raw-type u32 -o components.csv\n";

typedef struct stats_arguments {
    const char *labels_path, *intensity_path, *output_path, *hull_path;
    cli_input_options input;
    vl_dtype intensity_raw_type;
    vl_stats_options stats;
    vl_csv_options csv;
    int json;
    int columns_given, level_given;
    int multilabel, order_given;
    vl_label_order order;
} stats_arguments;

static int parse_dtype(const char *option, const char *text, vl_dtype *dtype)
{
    static const struct {
        const char *name;
        vl_dtype dtype;
    } names[] = {{"u8", VL_U8}, {"i16", VL_I16}, {"u16", VL_U16}, {"u32", VL_U32}, {"f32", VL_F32}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i].name) == 0) {
            *dtype = names[i].dtype;
            return 0;
        }
    return cli_error(CLI_EXIT_USAGE, "%s: '%s' is not one of u8, i16, u16, u32, f32", option, text);
}

static int ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

/* Does the --columns list name `class`? */
static int lists_class(const char *list)
{
    for (const char *name = list; *name;) {
        const size_t length = strcspn(name, ",");
        if (length == 5 && strncmp(name, "class", 5) == 0)
            return 1;
        name += length + (name[length] == ',');
    }
    return 0;
}

static int parse_arguments(int argc, char **argv, stats_arguments *args)
{
    int progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(stats_help, cli_input_help);
            return -1;
        }
        int handled = cli_input_parse_option(argc, argv, &i, &args->input);
        if (handled < 0)
            return -handled;
        if (handled)
            continue;
        if (strcmp(option, "--matlab") == 0)
            args->csv.matlab_columns = 1;
        else if (strcmp(option, "--json") == 0)
            args->json = 1;
        else if (strcmp(option, "--multilabel") == 0)
            args->multilabel = 1;
        else if (strcmp(option, "--force") == 0)
            args->csv.force = 1;
        else if (strcmp(option, "--progress") == 0)
            progress = 1;
        else if (strcmp(option, "--quiet") == 0)
            quiet = 1;
        else if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0 || strcmp(option, "--intensity") == 0 ||
                 strcmp(option, "--stats") == 0 || strcmp(option, "--device") == 0 ||
                 strcmp(option, "--threads") == 0 || strcmp(option, "--intensity-raw-type") == 0 ||
                 strcmp(option, "--columns") == 0 || strcmp(option, "--connectivity") == 0 ||
                 strcmp(option, "--hull") == 0 || strcmp(option, "--order") == 0) {
            const char *value = cli_option_value(argc, argv, &i);
            if (!value)
                return CLI_EXIT_USAGE;
            if (option[1] == 'o' || strcmp(option, "--output") == 0)
                args->output_path = value;
            else if (strcmp(option, "--intensity") == 0)
                args->intensity_path = value;
            else if (strcmp(option, "--hull") == 0)
                args->hull_path = value;
            else if (strcmp(option, "--order") == 0) {
                if (vl_label_order_parse(value, &args->order) != VL_OK)
                    return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
                args->order_given = 1;
            }
            else if (strcmp(option, "--columns") == 0) {
                if (vl_stats_columns_parse(value, &args->stats.level, &args->stats.extras) != VL_OK)
                    return cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
                args->csv.columns = value;
                args->columns_given = 1;
            } else if (strcmp(option, "--connectivity") == 0) {
                int64_t connectivity = 0;
                if (cli_parse_int64("--connectivity", value, 6, 26, &connectivity))
                    return CLI_EXIT_USAGE;
                if (connectivity != 6 && connectivity != 18 && connectivity != 26)
                    return cli_error(CLI_EXIT_USAGE, "--connectivity: %lld is not 6, 18 or 26", (long long)connectivity);
                args->stats.connectivity = (int)connectivity;
            }
            else if (strcmp(option, "--stats") == 0) {
                args->level_given = 1;
                if (vl_stats_level_parse(value, &args->stats.level) != VL_OK)
                    return cli_error(CLI_EXIT_USAGE, "--stats: '%s' is not basic or full", value);
            } else if (strcmp(option, "--device") == 0) {
                if (cli_parse_device(value, &args->stats.device))
                    return CLI_EXIT_USAGE;
            } else if (strcmp(option, "--threads") == 0) {
                if (cli_parse_threads(value, &args->stats.threads))
                    return CLI_EXIT_USAGE;
            } else if (parse_dtype(option, value, &args->intensity_raw_type))
                return CLI_EXIT_USAGE;
        } else if (option[0] == '-' && option[1] != '\0')
            return cli_error(CLI_EXIT_USAGE, "stats: unknown option %s (see voxlabel stats --help)", option);
        else if (!args->labels_path)
            args->labels_path = option;
        else
            return cli_error(CLI_EXIT_USAGE, "stats: unexpected argument %s (one LABELS volume only)", option);
    }
    cli_progress_configure(progress, quiet);
    if (args->columns_given && (args->level_given || args->csv.matlab_columns))
        return cli_error(CLI_EXIT_USAGE, "--columns names the columns itself: leave out --stats and --matlab");
    if (args->order_given && !args->multilabel)
        return cli_error(CLI_EXIT_USAGE, "--order: only with --multilabel (other labels keep their own numbers)");
    if (args->columns_given && !args->multilabel && lists_class(args->csv.columns))
        return cli_error(CLI_EXIT_USAGE, "--columns: `class` is a column of --multilabel (components of a class map)");
    args->csv.class_column = args->multilabel;
    if (!args->labels_path)
        return cli_error(CLI_EXIT_USAGE, "stats: no LABELS volume given (see voxlabel stats --help)");
    if (!args->output_path)
        return cli_error(CLI_EXIT_USAGE, "stats: no output file given (-o components.csv)");
    if (ends_with(args->output_path, ".json"))
        args->json = 1;
    return 0;
}

/* Statistics have one row per label 1..largest (as regionprops3 gives). When those rows do not fit in memory
 * and there are more labels than voxels, the cause is the input's numbering, not the machine: say so. */
static int stats_error(vl_status status, const char *path, uint32_t largest, int64_t voxels)
{
    if (status != VL_ERR_MEMORY || (int64_t)largest <= voxels)
        return cli_status_error(status);
    return cli_error(CLI_EXIT_INPUT,
                     "%s: the largest label is %u but the volume has only %lld voxels, and one row per label "
                     "1..%u does not fit in memory: number the labels densely first",
                     path, largest, (long long)voxels, largest);
}

/* Labels as U8/U16/U32 with their largest value; other dtypes are accepted when every voxel is a
 * non-negative integer (MATLAB doubles, Slicer's int16 segmentations), and converted to U32. */
static int prepare_labels(const char *path, vl_volume *labels, uint32_t *count)
{
    const int64_t n = vl_volume_voxels(labels);
    uint64_t largest = 0;
    if (labels->dtype == VL_U8 || labels->dtype == VL_U16 || labels->dtype == VL_U32) {
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = labels->dtype == VL_U8    ? ((const uint8_t *)labels->data)[i]
                         : labels->dtype == VL_U16 ? ((const uint16_t *)labels->data)[i]
                                                   : ((const uint32_t *)labels->data)[i];
            largest = v > largest ? v : largest;
        }
        *count = (uint32_t)largest;
        return 0;
    }
    vl_volume converted;
    if (vl_volume_create_uninitialised(&converted, labels->nx, labels->ny, labels->nz, VL_U32) != VL_OK)
        return cli_status_error(VL_ERR_MEMORY);
    converted.geometry = labels->geometry;
    for (int64_t i = 0; i < n; i++) {
        const double v = labels->dtype == VL_I16 ? ((const int16_t *)labels->data)[i]
                                                 : (double)((const float *)labels->data)[i];
        if (!(v >= 0) || v != floor(v) || v > 4294967295.0) {
            vl_volume_free(&converted);
            return cli_error(CLI_EXIT_INPUT, "%s: voxel %lld holds %g, not a label (a non-negative integer)", path,
                             (long long)i, v);
        }
        ((uint32_t *)converted.data)[i] = (uint32_t)v;
        largest = (uint64_t)v > largest ? (uint64_t)v : largest;
    }
    vl_volume_free(labels);
    *labels = converted;
    *count = (uint32_t)largest;
    return 0;
}

int cmd_stats(int argc, char **argv)
{
    stats_arguments args;
    memset(&args, 0, sizeof args);
    cli_input_options_default(&args.input);
    args.intensity_raw_type = VL_I16;
    vl_stats_options_default(&args.stats);
    vl_csv_options_default(&args.csv);
    int code = parse_arguments(argc, argv, &args);
    if (code)
        return code < 0 ? CLI_EXIT_OK : code;
    args.stats.progress = cli_progress();
    /* Refuse an existing output before any reading. */
    vl_status status = vl_atomic_file_check(args.output_path, args.csv.force);
    if (status == VL_OK && args.hull_path)
        status = vl_atomic_file_check(args.hull_path, args.csv.force);
    if (status != VL_OK)
        return cli_status_error(status);
    vl_convex_hulls hulls = {0};

    cli_gpu_warm_up gpu_warm_up;
    cli_gpu_warm_up_start(&gpu_warm_up, &args.stats.device);
    cli_input labels, intensity;
    memset(&labels, 0, sizeof labels);
    memset(&intensity, 0, sizeof intensity);
    vl_component_stats *stats = NULL;
    uint32_t count = 0;
    vl_label_result components;
    memset(&components, 0, sizeof components);
    if ((code = cli_input_load(args.labels_path, &args.input, &labels)))
        goto done;
    if (args.multilabel) {
        vl_label_options label;
        vl_label_options_default(&label);
        label.connectivity = args.stats.connectivity;
        label.order = args.order;
        label.device = args.stats.device;
        label.threads = args.stats.threads;
        label.progress = cli_progress();
        if ((code = stats_label_class_map(args.labels_path, &labels.volume, &label, &components)))
            goto done;
        count = components.count;
    } else if ((code = prepare_labels(args.labels_path, &labels.volume, &count)))
        goto done;
    if (args.intensity_path) {
        cli_input_options intensity_input = args.input;
        intensity_input.raw_dtype = args.intensity_raw_type;
        if ((code = cli_input_load(args.intensity_path, &intensity_input, &intensity)))
            goto done;
        const vl_volume *a = &labels.volume, *b = &intensity.volume;
        if (a->nx != b->nx || a->ny != b->ny || a->nz != b->nz) {
            code = cli_error(CLI_EXIT_INPUT, "%s: is %lldx%lldx%lld but %s is %lldx%lldx%lld", args.intensity_path,
                             (long long)b->nx, (long long)b->ny, (long long)b->nz, args.labels_path, (long long)a->nx,
                             (long long)a->ny, (long long)a->nz);
            goto done;
        }
        vl_file_format labels_format = vl_file_format_from_path(args.labels_path);
        if (labels_format == VL_FORMAT_MAT || labels_format == VL_FORMAT_RAW) {
            /* A .mat or raw file holds no geometry (it reads as 1 mm, identity): on the intensity's grid the
             * labels are the intensity's voxels, so the mm columns take its geometry (issue 16 C14). */
            labels.volume.geometry = b->geometry;
            cli_note("%s holds no geometry: positions and mm columns use the geometry of %s (same %lldx%lldx%lld grid)",
                     args.labels_path, args.intensity_path, (long long)b->nx, (long long)b->ny, (long long)b->nz);
        }
        for (int axis = 0; axis < 3; axis++)
            if (fabs(a->geometry.spacing[axis] - b->geometry.spacing[axis]) > 1e-3 ||
                fabs(a->geometry.origin[axis] - b->geometry.origin[axis]) > 1e-2) {
                cli_warning("%s: its geometry differs from %s; positions use the labels' geometry",
                            args.intensity_path, args.labels_path);
                break;
            }
    }
    args.csv.level = args.stats.level;
    args.csv.intensity = args.intensity_path != NULL;
    if (args.hull_path) {
        /* The hulls come from the hull group, which runs at the full level; the table keeps its columns. */
        args.stats.level = VL_STATS_FULL;
        args.stats.extras |= VL_STATS_EXTRA_HULL;
        args.stats.hulls = &hulls;
    }
    cli_gpu_warm_up_finish(&gpu_warm_up);
    status = vl_component_stats_compute(&labels.volume, args.intensity_path ? &intensity.volume : NULL, count,
                                        &args.stats, &stats);
    if (status == VL_OK && args.multilabel)
        for (uint32_t k = 0; k < count; k++)
            stats[k].class_id = components.classes[k];
    if (status == VL_OK)
        status = args.json ? vl_component_stats_write_json(args.output_path, stats, count, &args.csv)
                           : vl_component_stats_write_csv(args.output_path, stats, count, &args.csv);
    if (status == VL_OK && args.hull_path)
        status = vl_convex_hulls_write_csv(args.hull_path, &hulls, &labels.volume.geometry, args.csv.force);
    code = status == VL_OK ? CLI_EXIT_OK
                           : stats_error(status, args.labels_path, count, vl_volume_voxels(&labels.volume));
    if (status == VL_OK)
        cli_note("%u components -> %s", count, args.output_path);

done:
    /* Every path waits for the warm-up and frees what it loaded (freeing an empty input is a no-op). */
    cli_gpu_warm_up_finish(&gpu_warm_up);
    vl_component_stats_free(stats);
    vl_convex_hulls_free(&hulls);
    vl_label_result_free(&components);
    cli_input_free(&labels);
    cli_input_free(&intensity);
    return code;
}
