/* voxlabel convert: a DICOM series (or any volume file) to NIfTI, NRRD, MHA or MAT, with geometry. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_nifti_shear.h"
#include "voxlabel/dicom.h"
#include "voxlabel/io.h"
#include "voxlabel/threads.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: voxlabel convert INPUT OUTPUT [options]\n\n"
            "Loads INPUT (a DICOM directory, scanned recursively, or one DICOM file; or a .nii/.nii.gz/.nrrd/\n"
            ".mha/.mat volume) and writes OUTPUT in the format its name implies (.nii.gz .nii .nrrd .mha .mat).\n"
            "HU are int16 when the rescale allows it, float32 otherwise; the LPS geometry goes into the header.\n\n"
            "options:\n"
            "  --series UID|NUMBER        which series to load (default: the largest CT series; see 'voxlabel info')\n"
            "  --on-irregular POLICY      error | warn | resample for gaps, duplicates, variable spacing and tilt\n"
            "                             (default: tilt and variable spacing warn, gaps and duplicates are errors)\n"
            "  --keep-padding             keep PixelPaddingValue voxels at their rescaled value\n"
            "  --padding-hu HU            value for PixelPaddingValue voxels (default -1024)\n"
            "  --threads N                CPU threads for decoding and writing (default: all cores)\n"
            "  --force                    replace OUTPUT if it exists\n"
            "  --progress                 draw progress even when stderr is not a terminal\n"
            "  --quiet                    no progress or notes\n"
            "  -h, --help                 this help\n\n"
            "examples:\n"
            "  voxlabel convert ct/ ct.nii.gz\n"
            "  voxlabel convert study/ axial.nrrd --series 201\n"
            "  voxlabel convert tilted/ tilted.nii.gz --on-irregular resample\n");
}

static int is_directory(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

int cmd_convert(int argc, char **argv)
{
    const char *input = NULL, *output = NULL;
    vl_dicom_read_options read;
    vl_dicom_read_options_default(&read);
    vl_write_options write;
    vl_write_options_default(&write);
    int force_progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "--series") == 0) {
            if (!(read.series = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--on-irregular") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
            if (vl_dicom_irregular_parse(value, &read.on_irregular) != VL_OK)
                return cli_status_error(VL_ERR_ARGUMENT);
        } else if (strcmp(arg, "--keep-padding") == 0) {
            read.keep_padding = 1;
        } else if (strcmp(arg, "--padding-hu") == 0) {
            if (!(value = cli_option_value(argc, argv, &i)) || cli_parse_double("--padding-hu", value, &read.padding_fill_hu))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--threads") == 0) {
            int64_t threads;
            if (!(value = cli_option_value(argc, argv, &i)) || cli_parse_int64("--threads", value, 1, 1024, &threads))
                return CLI_EXIT_USAGE;
            read.threads = (int)threads;
            vl_set_thread_limit((int)threads);
        } else if (strcmp(arg, "--force") == 0) {
            write.force = 1;
        } else if (strcmp(arg, "--progress") == 0) {
            force_progress = 1;
        } else if (strcmp(arg, "--quiet") == 0) {
            quiet = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_error(CLI_EXIT_USAGE, "convert: unknown option '%s' (see 'voxlabel convert --help')", arg);
        } else if (!input) {
            input = arg;
        } else if (!output) {
            output = arg;
        } else {
            return cli_error(CLI_EXIT_USAGE, "convert: INPUT and OUTPUT only ('%s' is extra)", arg);
        }
    }
    if (!input || !output)
        return cli_error(CLI_EXIT_USAGE, "convert: INPUT and OUTPUT are required (see 'voxlabel convert --help')");
    vl_file_format out_format = vl_file_format_from_path(output);
    if (out_format == VL_FORMAT_AUTO || out_format == VL_FORMAT_RAW)
        return cli_error(CLI_EXIT_USAGE, "%s: name it .nii.gz, .nii, .nrrd, .mha or .mat", output);
    /* Fail before the (long) read when the output cannot be written. */
    struct stat info;
    if (!write.force && stat(output, &info) == 0)
        return cli_error(CLI_EXIT_OUTPUT, "%s: already exists (use --force to replace it)", output);
    cli_progress_configure(force_progress, quiet);
    read.progress = cli_progress();
    write.progress = cli_progress();

    vl_volume volume;
    vl_status status;
    vl_file_format in_format = vl_file_format_from_path(input);
    if (is_directory(input) || in_format == VL_FORMAT_AUTO || in_format == VL_FORMAT_RAW) {
        vl_dicom_report report;
        status = vl_dicom_read_series(input, &read, &volume, &report);
        for (size_t w = 0; w < report.warning_count; w++)
            cli_warning("%s", report.warnings[w]);
        for (size_t n = 0; n < report.note_count; n++)
            cli_note("%s", report.notes[n]);
        vl_dicom_report_free(&report);
    } else {
        vl_read_options options;
        vl_read_options_default(&options);
        options.progress = cli_progress();
        status = vl_read_volume(input, &options, &volume);
    }
    if (status != VL_OK)
        return cli_status_error(status);
    /* NIfTI-1 keeps each axis in a 16-bit header field: refuse before the write starts (issue 16 A6). */
    if ((out_format == VL_FORMAT_NIFTI || out_format == VL_FORMAT_NIFTI_GZ) &&
        (volume.nx > 32767 || volume.ny > 32767 || volume.nz > 32767)) {
        int code = cli_error(CLI_EXIT_INPUT,
                             "%s: %lldx%lldx%lld has an axis over 32767 voxels, which NIfTI-1 cannot store "
                             "(name the output .nrrd, .mha or .mat)",
                             input, (long long)volume.nx, (long long)volume.ny, (long long)volume.nz);
        vl_volume_free(&volume);
        return code;
    }
    int code = cli_nifti_shear(&volume, out_format, read.on_irregular, output, NULL, NULL);
    if (code) {
        vl_volume_free(&volume);
        return code;
    }
    status = vl_write_volume(output, &volume, &write);
    if (status == VL_OK)
        cli_note("wrote %s: %lldx%lldx%lld %s, spacing %.6g x %.6g x %.6g mm", output, (long long)volume.nx,
                 (long long)volume.ny, (long long)volume.nz, vl_dtype_name(volume.dtype), volume.geometry.spacing[0],
                 volume.geometry.spacing[1], volume.geometry.spacing[2]);
    vl_volume_free(&volume);
    return status == VL_OK ? CLI_EXIT_OK : cli_status_error(status);
}
