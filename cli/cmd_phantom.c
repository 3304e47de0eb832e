/* voxlabel phantom: write the synthetic CT phantom as a DICOM series. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "voxlabel/dicom.h"
#include "voxlabel/phantom.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: voxlabel phantom -o DIR [options]\n\n"
            "Writes a synthetic chest/abdomen CT (body, fat, lungs with vessels and nodules, contrast aorta,\n"
            "spine, ribs, sternum, noise) as CT Image Storage DICOM files, one per slice.\n\n"
            "options:\n"
            "  -o, --output DIR        directory to create (must be empty or missing, unless --force)\n"
            "  --size NXxNYxNZ         columns x rows x slices (default 256x256x120)\n"
            "  --spacing PIXEL,SLICE   in-plane and slice spacing in mm (default 0.8,1.25)\n"
            "  --seed N                noise seed (default 1); the anatomy is always the same\n"
            "  --force                 replace an existing series directory: one that holds only the\n"
            "                          slice_NNNN.dcm files phantom writes (anything else is refused); a\n"
            "                          symbolic link to a directory is followed and stays a link\n"
            "  --progress              draw progress even when stderr is not a terminal\n"
            "  --quiet                 no progress or notes\n"
            "  -h, --help              this help\n\n"
            "examples:\n"
            "  voxlabel phantom -o ct/\n"
            "  voxlabel phantom -o big/ --size 512x512x400 --seed 7\n"
            "  voxlabel phantom -o ct/ --force && voxlabel label ct/ --preset bone -o out/\n");
}

static int parse_size(const char *text, vl_phantom_options *options)
{
    long long nx, ny, nz;
    char tail;
    if (sscanf(text, "%lldx%lldx%lld%c", &nx, &ny, &nz, &tail) != 3 || nx < 1 || ny < 1 || nz < 1 || nx > 65535 ||
        ny > 65535 || nz > 100000)
        return cli_error(CLI_EXIT_USAGE, "--size: '%s' is not NXxNYxNZ with 1..65535 columns and rows, 1..100000 slices",
                         text);
    options->nx = nx;
    options->ny = ny;
    options->nz = nz;
    return 0;
}

static int parse_spacing(const char *text, vl_phantom_options *options)
{
    double pixel, slice;
    char tail;
    if (sscanf(text, "%lf,%lf%c", &pixel, &slice, &tail) != 2 || !(pixel > 0) || !(slice > 0) || pixel > 100 ||
        slice > 100)
        return cli_error(CLI_EXIT_USAGE, "--spacing: '%s' is not PIXEL,SLICE with positive millimetres up to 100", text);
    options->pixel_spacing_mm = pixel;
    options->slice_spacing_mm = slice;
    return 0;
}

int cmd_phantom(int argc, char **argv)
{
    vl_phantom_options phantom;
    vl_phantom_options_default(&phantom);
    vl_dicom_write_options write;
    vl_dicom_write_options_default(&write);
    const char *output = NULL;
    int force_progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            if (!(output = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--size") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)) || parse_size(value, &phantom))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--spacing") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)) || parse_spacing(value, &phantom))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--seed") == 0) {
            int64_t seed;
            if (!(value = cli_option_value(argc, argv, &i)) || cli_parse_int64("--seed", value, 0, INT64_MAX, &seed))
                return CLI_EXIT_USAGE;
            phantom.seed = (uint64_t)seed;
        } else if (strcmp(arg, "--force") == 0) {
            write.force = 1;
        } else if (strcmp(arg, "--progress") == 0) {
            force_progress = 1;
        } else if (strcmp(arg, "--quiet") == 0) {
            quiet = 1;
        } else {
            return cli_error(CLI_EXIT_USAGE, "phantom: unknown option '%s' (see 'voxlabel phantom --help')", arg);
        }
    }
    if (!output)
        return cli_error(CLI_EXIT_USAGE, "phantom: -o DIR is required (see 'voxlabel phantom --help')");
    cli_progress_configure(force_progress, quiet);
    write.progress = cli_progress();

    vl_volume hu;
    vl_status status = vl_phantom_generate(&phantom, &hu);
    if (status != VL_OK)
        return cli_status_error(status);
    status = vl_dicom_write_series(output, &hu, &write);
    vl_volume_free(&hu);
    if (status != VL_OK)
        return cli_status_error(status);
    cli_note("wrote %lld slices of %lldx%lld to %s", (long long)phantom.nz, (long long)phantom.nx,
             (long long)phantom.ny, output);
    return CLI_EXIT_OK;
}
