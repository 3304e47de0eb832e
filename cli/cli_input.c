#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_input.h"
#include "voxlabel/io.h"

const char cli_input_help[] =
    "input:\n"
    "  INPUT is a DICOM directory (scanned recursively) or file, a .nii/.nii.gz/.nrrd/.mha/.mat volume,\n"
    "  or a raw file with --raw-dims and --raw-type.\n"
    "  --series UID|NUMBER        which DICOM series (default: the largest CT-like one; others are listed)\n"
    "  --on-irregular POLICY      error|warn|resample for gaps, duplicates, variable spacing and tilt\n"
    "                             (default: warn for tilt and variable spacing, error for gaps and duplicates)\n"
    "  --raw-dims X,Y,Z           raw input dimensions (x fastest)\n"
    "  --raw-type u8|i16|u16|u32|f32  raw voxel type (little endian)\n";

void cli_input_options_default(cli_input_options *options)
{
    memset(options, 0, sizeof *options);
    options->on_irregular = VL_IRREGULAR_DEFAULT;
    options->raw_dtype = VL_I16;
}

static int parse_raw_dtype(const char *text, vl_dtype *dtype)
{
    static const vl_dtype all[] = {VL_U8, VL_I16, VL_U16, VL_U32, VL_F32};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(text, vl_dtype_name(all[i])) == 0) {
            *dtype = all[i];
            return 0;
        }
    return cli_error(CLI_EXIT_USAGE, "--raw-type: '%s' is not one of u8, i16, u16, u32, f32", text);
}

int cli_input_parse_option(int argc, char **argv, int *i, cli_input_options *options)
{
    const char *option = argv[*i];
    if (strcmp(option, "--series") && strcmp(option, "--on-irregular") && strcmp(option, "--raw-dims") &&
        strcmp(option, "--raw-type"))
        return 0;
    const char *value = cli_option_value(argc, argv, i);
    if (!value)
        return -CLI_EXIT_USAGE;
    if (strcmp(option, "--series") == 0) {
        options->series = value;
    } else if (strcmp(option, "--on-irregular") == 0) {
        if (vl_dicom_irregular_parse(value, &options->on_irregular) != VL_OK)
            return -cli_error(CLI_EXIT_USAGE, "--on-irregular: '%s' is not one of error, warn, resample", value);
    } else if (strcmp(option, "--raw-dims") == 0) {
        long long x, y, z;
        char tail;
        if (sscanf(value, "%lld,%lld,%lld%c", &x, &y, &z, &tail) != 3 || x <= 0 || y <= 0 || z <= 0)
            return -cli_error(CLI_EXIT_USAGE, "--raw-dims: '%s' is not X,Y,Z with positive sizes (e.g. 512,512,400)",
                              value);
        options->raw_dims[0] = x, options->raw_dims[1] = y, options->raw_dims[2] = z;
    } else if (parse_raw_dtype(value, &options->raw_dtype) != 0) {
        return -CLI_EXIT_USAGE;
    }
    return 1;
}

static int is_dicom_path(const char *path)
{
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode))
        return 1;
    if (vl_file_format_from_path(path) != VL_FORMAT_AUTO)
        return 0;
    /* A single file without a volume extension: DICOM when it has the DICM signature at offset 128. */
    FILE *file = fopen(path, "rb");
    char magic[4] = {0};
    int dicom = file && fseek(file, 128, SEEK_SET) == 0 && fread(magic, 1, 4, file) == 4 && memcmp(magic, "DICM", 4) == 0;
    if (file)
        fclose(file);
    return dicom;
}

int cli_input_load(const char *path, const cli_input_options *options, cli_input *input)
{
    memset(input, 0, sizeof *input);
    struct stat info;
    if (stat(path, &info) != 0)
        return cli_error(CLI_EXIT_INPUT, "%s: no such file or directory", path);
    vl_status status;
    if (options->raw_dims[0] > 0) {
        vl_read_options read;
        vl_read_options_default(&read);
        read.format = VL_FORMAT_RAW;
        read.raw_nx = options->raw_dims[0], read.raw_ny = options->raw_dims[1], read.raw_nz = options->raw_dims[2];
        read.raw_dtype = options->raw_dtype;
        read.progress = cli_progress();
        input->kind = "raw";
        status = vl_read_volume(path, &read, &input->volume);
    } else if (is_dicom_path(path)) {
        vl_dicom_read_options read;
        vl_dicom_read_options_default(&read);
        read.series = options->series;
        read.on_irregular = options->on_irregular;
        read.threads = options->threads;
        read.progress = cli_progress();
        input->kind = "dicom";
        input->has_report = 1;
        status = vl_dicom_read_series(path, &read, &input->volume, &input->report);
        for (size_t w = 0; w < input->report.warning_count; w++)
            cli_warning("%s", input->report.warnings[w]);
        for (size_t n = 0; n < input->report.note_count; n++)
            cli_note("%s", input->report.notes[n]);
    } else {
        if (vl_file_format_from_path(path) == VL_FORMAT_RAW)
            return cli_error(CLI_EXIT_USAGE, "%s: raw input needs --raw-dims X,Y,Z and --raw-type", path);
        vl_read_options read;
        vl_read_options_default(&read);
        read.progress = cli_progress();
        input->kind = "volume file";
        status = vl_read_volume(path, &read, &input->volume);
    }
    if (status != VL_OK) {
        int code = cli_status_error(status);
        cli_input_free(input);
        return code;
    }
    return 0;
}

int cli_input_window(const cli_input *input, double *center, double *width)
{
    if (!input->has_report || !isfinite(input->report.window_center) || !(input->report.window_width >= 1))
        return 0;
    *center = input->report.window_center;
    *width = input->report.window_width;
    return 1;
}

void cli_input_free(cli_input *input)
{
    vl_volume_free(&input->volume);
    if (input->has_report)
        vl_dicom_report_free(&input->report);
    input->has_report = 0;
}
