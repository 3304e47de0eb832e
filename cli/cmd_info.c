/* voxlabel info: every image series under a path, with geometry and anomalies; no pixels decoded. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "voxlabel/dicom.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: voxlabel info INPUT [options]\n\n"
            "Lists every DICOM image series under INPUT (a directory, scanned recursively, or one file):\n"
            "UID, description, modality, SOP class, dimensions, spacing, slice count, transfer syntaxes and\n"
            "every anomaly (gaps, duplicates, variable spacing, gantry tilt, missing geometry, undecodable\n"
            "files). The series that 'voxlabel label' and 'voxlabel convert' take by default is marked.\n\n"
            "options:\n"
            "  --series UID|NUMBER     mark this series as the one to load (checks that it can be chosen)\n"
            "  --progress              draw progress even when stderr is not a terminal\n"
            "  --quiet                 no progress or notes\n"
            "  -h, --help              this help\n\n"
            "examples:\n"
            "  voxlabel info /data/study/\n"
            "  voxlabel info ct/ --series 3\n");
}

/* One z step: the z axis of the volumes that label and convert read (between consecutive slice positions; the
 * mean step when they vary). Under tilt or variable spacing it differs from the step along the slice normal,
 * which is then given beside it with the reason. */
static void print_spacing(const vl_dicom_series_info *s)
{
    printf("    spacing:    %.6g x %.6g x %.6g mm", s->spacing[0], s->spacing[1], s->spacing[2]);
    const int tilted = s->tilt_degrees > 0.01;
    if (s->normal_step[1] > 0 && (tilted || s->variable_spacing)) {
        printf(" (z: the %sstep between slice positions, the z axis of what label and convert read; ",
               s->variable_spacing ? "mean " : "");
        if (s->variable_spacing)
            printf("%.6g..%.6g mm, median %.6g,", s->normal_step[0], s->normal_step[2], s->normal_step[1]);
        else
            printf("%.6g mm", s->normal_step[1]);
        printf(" along the slice normal");
        if (tilted)
            printf(", as the stack is sheared by %.3f degrees", s->tilt_degrees);
        printf(")");
    }
    printf("\n");
}

static void print_series(const vl_dicom_series_info *s, size_t index)
{
    printf("[%zu] series %ld \"%s\"%s\n", index + 1, s->series_number, s->description,
           s->is_default_choice ? "  <- default choice" : "");
    printf("    uid:        %s\n", s->series_uid);
    printf("    kind:       %s, %s, %s, %s%s%s%s%s\n", s->modality[0] ? s->modality : "(no modality)", s->sop_class,
           s->image_type[0] ? s->image_type : "(no image type)", s->photometric, s->is_ct_like ? ", CT volume" : "",
           s->is_localizer ? ", localizer" : "", s->is_derived ? ", derived" : "", s->is_colour ? ", colour" : "");
    printf("    size:       %d x %d%s, %lld image(s) in %lld file(s)\n", s->columns, s->rows,
           s->samples_per_pixel > 1 ? " (colour samples)" : "", (long long)s->slice_count, (long long)s->file_count);
    print_spacing(s);
    printf("    orientation: %.6g %.6g %.6g / %.6g %.6g %.6g\n", s->orientation[0], s->orientation[1], s->orientation[2],
           s->orientation[3], s->orientation[4], s->orientation[5]);
    printf("    transfer:   %s\n", s->transfer_syntax);
    for (size_t a = 0; a < s->anomaly_count; a++)
        printf("    anomaly:    %s\n", s->anomalies[a]);
}

int cmd_info(int argc, char **argv)
{
    const char *input = NULL;
    vl_dicom_read_options options;
    vl_dicom_read_options_default(&options);
    int force_progress = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(arg, "--series") == 0) {
            if (!(options.series = cli_option_value(argc, argv, &i)))
                return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--progress") == 0) {
            force_progress = 1;
        } else if (strcmp(arg, "--quiet") == 0) {
            quiet = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_error(CLI_EXIT_USAGE, "info: unknown option '%s' (see 'voxlabel info --help')", arg);
        } else if (!input) {
            input = arg;
        } else {
            return cli_error(CLI_EXIT_USAGE, "info: one INPUT only ('%s' is extra)", arg);
        }
    }
    if (!input)
        return cli_error(CLI_EXIT_USAGE, "info: INPUT is required (see 'voxlabel info --help')");
    cli_progress_configure(force_progress, quiet);
    options.progress = cli_progress();

    vl_dicom_scan scan;
    vl_status status = vl_dicom_scan_path(input, &options, &scan);
    if (status != VL_OK) {
        vl_dicom_scan_free(&scan);
        return cli_status_error(status);
    }
    printf("%s: %zu series; %lld file(s) looked at: %lld not DICOM, %lld DICOMDIR/DIRFILE, %lld without an image\n",
           input, scan.series_count, (long long)scan.files_seen, (long long)scan.files_not_dicom,
           (long long)scan.files_directory, (long long)scan.files_non_image);
    for (size_t g = 0; g < scan.series_count; g++)
        print_series(&scan.series[g], g);
    for (size_t n = 0; n < scan.note_count; n++)
        cli_note("%s", scan.notes[n]);
    vl_dicom_scan_free(&scan);
    return CLI_EXIT_OK;
}
