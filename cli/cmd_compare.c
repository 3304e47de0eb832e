#define _GNU_SOURCE /* strdup */
/* voxlabel compare: a labelling against a reference (MATLAB bwlabeln output, another tool), or a components CSV
 * against a MATLAB regionprops3 table; the verdict is the exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "voxlabel/compare.h"
#include "voxlabel/io.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: voxlabel compare OURS REFERENCE [options]\n\n"
            "Compares two label volumes (.nii.gz .nii .nrrd .nhdr .mha .mhd .mat .raw, any integer voxel type) voxel by\n"
            "voxel, or two component tables (.csv with a header row) column by column.\n\n"
            "verdicts (first line of stdout) and exit codes:\n"
            "  0  identical                            every voxel has the same label\n"
            "  1  same partition, different numbering  same components, other numbers; the rule each side follows\n"
            "                                          is named (e.g. \"raster (matlab-xy) vs column-major (matlab)\n"
            "                                          order\", \"size\", \"z reversed\", \"arbitrary permutation\")\n"
            "  2  different                            differing voxels, split and merged components, the first 10\n"
            "                                          differences with coordinates\n"
            "  when the comparison cannot run: 3 unreadable or incompatible input (e.g. other dimensions), 5 memory;\n"
            "  a usage error also exits 2 but prints no 'verdict:' line: scripts tell 'different' from a usage\n"
            "  error by that line on stdout (see docs/formats.md).\n\n"
            "options:\n"
            "  --order matlab|matlab-xy   axis convention of .mat inputs (default matlab): matlab = V(row,col,slice)\n"
            "                             as bwlabeln on a dicomread stack; matlab-xy = V(x,y,z) as niftiread gives\n"
            "  --mat-variable NAME        variable of a REFERENCE .mat (default: its first numeric array)\n"
            "  --raw-dims X,Y,Z           dimensions of .raw inputs, x fastest (default: those of the other input)\n"
            "  --raw-type u8|u16|u32|i16|f32  voxel type of .raw inputs (default: from the file size)\n"
            "  --tolerance REL            tables: relative tolerance (default 1e-6)\n"
            "  --abs-tolerance ABS        tables: absolute tolerance (default 1e-6)\n"
            "  --quiet                    only the verdict line\n"
            "  -h, --help                 this help\n\n"
            "examples:\n"
            "  voxlabel compare out/labels.nii.gz L.mat                  # L = bwlabeln(V) saved with save -v7\n"
            "  voxlabel compare out/labels.nii.gz L.mat --order matlab-xy   # V came from niftiread\n"
            "  voxlabel compare out/labels.nii.gz itk_labels.nrrd\n"
            "  voxlabel compare out/components.csv regionprops3.csv      # writetable(regionprops3(L,'all'),...)\n"
            "  voxlabel compare a.nii.gz b.nii.gz --quiet || echo \"labels differ (exit $?)\"\n");
}

static int ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcasecmp(text + n - m, suffix) == 0;
}

static int parse_dtype(const char *text, vl_dtype *dtype)
{
    static const char *names[] = {"u8", "i16", "u16", "u32", "f32"};
    static const vl_dtype types[] = {VL_U8, VL_I16, VL_U16, VL_U32, VL_F32};
    for (int i = 0; i < 5; i++)
        if (strcmp(text, names[i]) == 0) {
            *dtype = types[i];
            return 1;
        }
    return 0;
}

static int compare_tables(const char *ours, const char *reference, const vl_table_compare_options *options, int quiet)
{
    vl_table_compare_result result;
    vl_status status = vl_compare_tables(ours, reference, options, &result);
    if (status != VL_OK)
        return cli_status_error(status);
    printf("verdict: %s\n", result.verdict == VL_COMPARE_SAME_PARTITION ? "same components, different row order"
                                                                        : vl_compare_verdict_name(result.verdict));
    if (!quiet) {
        printf("rows: ours %lld, reference %lld; %d shared numeric column(s), tolerance |a-b| <= %g + %g*max(|a|,|b|)\n",
               (long long)result.ours_rows, (long long)result.reference_rows, result.columns,
               options->absolute_tolerance, options->relative_tolerance);
        for (int k = 0; k < result.columns; k++) {
            const vl_table_column_report *c = &result.column[k];
            if (c->failing)
                printf("  %-28s %lld of %lld rows differ, largest |difference| %.6g at row %lld\n", c->name,
                       (long long)c->failing, (long long)c->compared, c->max_abs_difference, (long long)c->worst_row);
            else
                printf("  %-28s ok (%lld rows)\n", c->name, (long long)c->compared);
        }
        if (result.only_ours[0])
            printf("only in ours (not compared): %s\n", result.only_ours);
        if (result.only_reference[0])
            printf("only in the reference (not compared): %s\n", result.only_reference);
    }
    int code = (int)result.verdict;
    vl_table_compare_result_free(&result);
    return code;
}

static long long file_size(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 ? (long long)info.st_size : -1;
}

/* Reads a label volume; raw files take their dims from --raw-dims or `other`, their type from --raw-type or the size. */
static vl_status read_labels(const char *path, vl_read_options options, const vl_volume *other, int have_raw_type,
                             vl_volume *volume)
{
    if (vl_file_format_from_path(path) == VL_FORMAT_RAW) {
        if (options.raw_nx == 0 && other) {
            options.raw_nx = other->nx;
            options.raw_ny = other->ny;
            options.raw_nz = other->nz;
        }
        int64_t product = 0;
        vl_status status = vl_size_product(options.raw_nx, options.raw_ny, options.raw_nz, 4, path, &product);
        if (status != VL_OK)
            return status;
        long long size = file_size(path), voxels = (long long)(product / 4);
        if (!have_raw_type && voxels > 0 && size > 0)
            options.raw_dtype = size == voxels ? VL_U8 : size == 2 * voxels ? VL_U16 : VL_U32;
    }
    return vl_read_volume(path, &options, volume);
}

/* The reference seen through an axis change: swap_xy transposes x and y, flip_z reverses the slices. */
static vl_status transformed(const vl_volume *reference, int swap_xy, int flip_z, vl_volume *out)
{
    int64_t nx = swap_xy ? reference->ny : reference->nx, ny = swap_xy ? reference->nx : reference->ny;
    int64_t nz = reference->nz;
    vl_status status = vl_volume_create_uninitialised(out, nx, ny, nz, VL_U32);
    if (status != VL_OK)
        return status;
    uint32_t *data = out->data;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t sx = swap_xy ? y : x, sy = swap_xy ? x : y, sz = flip_z ? nz - 1 - z : z;
                data[(z * ny + y) * nx + x] =
                    (uint32_t)vl_volume_value(reference, (sz * reference->ny + sy) * reference->nx + sx);
            }
    return VL_OK;
}

/* When the labels differ (or their x and y sizes are swapped), says whether the reference is ours after a
 * transpose of x and y or a flip of z, and how to get it (issue 16 C16). Verdict and exit code stay. */
static void print_axis_hint(const vl_volume *ours, const vl_volume *reference, int reference_is_mat, int mat_xy)
{
    static const struct {
        int swap_xy, flip_z;
        const char *what, *how;
    } cases[] = {
        {1, 0, "x and y swapped", NULL},
        {0, 1, "its slices in reverse order (z flipped)",
         "the reference stacked its slices the other way round: flip its z (flip(V,3) in MATLAB, V[::-1] on a "
         "(z,y,x) array) before comparing"},
        {1, 1, "x and y swapped and z flipped", NULL},
    };
    char swap_how[256];
    if (reference_is_mat)
        snprintf(swap_how, sizeof swap_how, "compare with --order %s (this reads the .mat's V the other way round)",
                 mat_xy ? "matlab" : "matlab-xy");
    else
        snprintf(swap_how, sizeof swap_how,
                 "the reference was saved transposed (e.g. a (z,y,x) array written as (x,y,z)): transpose its x and y");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t nx = cases[c].swap_xy ? reference->ny : reference->nx;
        int64_t ny = cases[c].swap_xy ? reference->nx : reference->ny;
        if (nx != ours->nx || ny != ours->ny || reference->nz != ours->nz)
            continue;
        vl_volume candidate;
        vl_compare_result result;
        if (transformed(reference, cases[c].swap_xy, cases[c].flip_z, &candidate) != VL_OK)
            return;
        vl_status status = vl_compare_labels(ours, &candidate, &result);
        vl_volume_free(&candidate);
        if (status == VL_OK && result.verdict != VL_COMPARE_DIFFERENT) {
            const char *how = cases[c].how ? cases[c].how : swap_how;
            printf("hint: the reference is ours with %s (then: %s): %s%s\n", cases[c].what,
                   vl_compare_verdict_name(result.verdict), how, cases[c].swap_xy && cases[c].flip_z ? ", and flip its z" : "");
            return;
        }
    }
}

static void print_matlab_position(const vl_compare_difference *d, int mat_xy)
{
    if (mat_xy)
        printf("V(%lld,%lld,%lld)", (long long)d->x + 1, (long long)d->y + 1, (long long)d->z + 1);
    else
        printf("V(%lld,%lld,%lld)", (long long)d->y + 1, (long long)d->x + 1, (long long)d->z + 1);
}

static void print_report(const vl_compare_result *r, const vl_volume *v, int mat_xy)
{
    printf("voxels: %lldx%lldx%lld; components: ours %u, reference %u\n", (long long)v->nx, (long long)v->ny,
           (long long)v->nz, r->ours_components, r->reference_components);
    if (r->verdict == VL_COMPARE_SAME_PARTITION) {
        printf("rule: %s\n", r->mapping_rule);
        if (strstr(r->reference_rule, "matlab-xy") && strstr(r->ours_rule, "(matlab)"))
            printf("hint: the reference numbers in raster order: label with --order matlab-xy to match it\n");
        else if (strstr(r->reference_rule, "(matlab)") && strstr(r->ours_rule, "matlab-xy"))
            printf("hint: the reference numbers in MATLAB column-major order: label with --order matlab to match it\n");
        else if (strstr(r->reference_rule, "size-raster") && !strstr(r->ours_rule, "size-raster"))
            printf("hint: the reference numbers by size with raster-order ties, as ITK's RelabelComponentImageFilter: "
                   "label with --order size-raster to match it\n");
        else if (strstr(r->reference_rule, "reversed") && !strstr(r->ours_rule, "reversed"))
            printf("hint: the reference's slices (or rows) run the other way: check how the MATLAB volume was stacked\n");
        printf("voxels numbered differently: %lld; first ones (0-based x y z, MATLAB %s):\n",
               (long long)r->differing_voxels, mat_xy ? "V(x,y,z)" : "V(row,col,slice)");
    } else {
        printf("differing voxels: %lld (labels differ as numbers)\n", (long long)r->differing_voxels);
        printf("outside the best one-to-one component matching: %lld\n", (long long)r->unmatched_voxels);
        printf("background on one side only: %lld\n", (long long)r->foreground_mismatch);
        printf("reference components split in ours: %u; our components merging reference components: %u\n",
               r->reference_split, r->ours_merged);
        printf("components without a matched counterpart: ours %u, reference %u\n", r->ours_unmatched,
               r->reference_unmatched);
        printf("first differences (0-based x y z, MATLAB %s):\n", mat_xy ? "V(x,y,z)" : "V(row,col,slice)");
    }
    for (int k = 0; k < r->shown; k++) {
        const vl_compare_difference *d = &r->first[k];
        printf("  (%lld, %lld, %lld)  ", (long long)d->x, (long long)d->y, (long long)d->z);
        print_matlab_position(d, mat_xy);
        printf("  ours %u  reference %u\n", d->ours, d->reference);
    }
}

int cmd_compare(int argc, char **argv)
{
    const char *ours_path = NULL, *reference_path = NULL, *value;
    vl_read_options read;
    vl_read_options_default(&read);
    vl_table_compare_options table_options;
    vl_table_compare_options_default(&table_options);
    int quiet = 0, have_raw_type = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "--order") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            if (strcmp(value, "matlab") == 0)
                read.mat_xy = 0;
            else if (strcmp(value, "matlab-xy") == 0)
                read.mat_xy = 1;
            else
                return cli_error(CLI_EXIT_USAGE, "--order %s: use matlab or matlab-xy", value);
        } else if (strcmp(arg, "--mat-variable") == 0) {
            if (!(read.mat_variable = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--raw-dims") == 0) {
            long long nx, ny, nz;
            char extra;
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            if ((sscanf(value, "%lld,%lld,%lld%c", &nx, &ny, &nz, &extra) != 3 &&
                 sscanf(value, "%lldx%lldx%lld%c", &nx, &ny, &nz, &extra) != 3) ||
                nx < 1 || ny < 1 || nz < 1)
                return cli_error(CLI_EXIT_USAGE, "--raw-dims %s: expected X,Y,Z (x fastest), e.g. 512,512,300", value);
            read.raw_nx = nx;
            read.raw_ny = ny;
            read.raw_nz = nz;
        } else if (strcmp(arg, "--raw-type") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            if (!parse_dtype(value, &read.raw_dtype))
                return cli_error(CLI_EXIT_USAGE, "--raw-type %s: use u8, u16, u32, i16 or f32", value);
            have_raw_type = 1;
        } else if (strcmp(arg, "--tolerance") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)) ||
                cli_parse_double("--tolerance", value, &table_options.relative_tolerance))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--abs-tolerance") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)) ||
                cli_parse_double("--abs-tolerance", value, &table_options.absolute_tolerance))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--quiet") == 0) {
            quiet = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_error(CLI_EXIT_USAGE, "compare: unknown option '%s' (see 'voxlabel compare --help')", arg);
        } else if (!ours_path) {
            ours_path = arg;
        } else if (!reference_path) {
            reference_path = arg;
        } else {
            return cli_error(CLI_EXIT_USAGE, "compare: OURS and REFERENCE only ('%s' is extra)", arg);
        }
    }
    if (!ours_path || !reference_path)
        return cli_error(CLI_EXIT_USAGE, "compare: OURS and REFERENCE are required (see 'voxlabel compare --help')");
    if (table_options.relative_tolerance < 0 || table_options.absolute_tolerance < 0)
        return cli_error(CLI_EXIT_USAGE, "compare: tolerances must not be negative");
    int ours_csv = ends_with(ours_path, ".csv"), reference_csv = ends_with(reference_path, ".csv");
    if (ours_csv != reference_csv)
        return cli_error(CLI_EXIT_USAGE, "compare: a table (.csv) can only be compared with another table");
    if (ours_csv)
        return compare_tables(ours_path, reference_path, &table_options, quiet);

    /* Raw files get their dims from the other input, so read the self-describing one first. */
    int ours_raw = vl_file_format_from_path(ours_path) == VL_FORMAT_RAW;
    vl_read_options ours_read = read;
    ours_read.mat_variable = NULL;
    vl_volume ours, reference;
    memset(&ours, 0, sizeof ours);
    memset(&reference, 0, sizeof reference);
    vl_status status;
    if (ours_raw) {
        status = read_labels(reference_path, read, NULL, have_raw_type, &reference);
        if (status == VL_OK)
            status = read_labels(ours_path, ours_read, &reference, have_raw_type, &ours);
    } else {
        status = read_labels(ours_path, ours_read, NULL, have_raw_type, &ours);
        if (status == VL_OK)
            status = read_labels(reference_path, read, &ours, have_raw_type, &reference);
    }
    vl_compare_result result;
    if (status == VL_OK)
        status = vl_compare_labels(&ours, &reference, &result);
    if (status != VL_OK && !quiet && ours.data && reference.data && ours.nx != ours.ny &&
        ours.nx == reference.ny && ours.ny == reference.nx && ours.nz == reference.nz) {
        char *detail = strdup(vl_last_error());
        print_axis_hint(&ours, &reference, vl_file_format_from_path(reference_path) == VL_FORMAT_MAT, read.mat_xy);
        if (detail)
            vl_fail(status, "%s", detail); /* the hint's own comparisons must not replace the reason */
        free(detail);
    }
    if (status != VL_OK) {
        vl_volume_free(&ours);
        vl_volume_free(&reference);
        return cli_status_error(status);
    }
    printf("verdict: %s\n", vl_compare_verdict_name(result.verdict));
    if (!quiet && result.verdict != VL_COMPARE_IDENTICAL) {
        print_report(&result, &ours, read.mat_xy);
        if (result.verdict == VL_COMPARE_DIFFERENT)
            print_axis_hint(&ours, &reference, vl_file_format_from_path(reference_path) == VL_FORMAT_MAT, read.mat_xy);
    } else if (!quiet)
        printf("voxels: %lldx%lldx%lld; components: %u\n", (long long)ours.nx, (long long)ours.ny, (long long)ours.nz,
               result.ours_components);
    vl_volume_free(&ours);
    vl_volume_free(&reference);
    return (int)result.verdict;
}
