/* Loading a CT (or any intensity) volume from what the user named: a DICOM directory or file,
 * NIfTI/NRRD/MHA/MAT, or raw with --raw-dims/--raw-type. Shared by the subcommands that read CT. */
#ifndef VL_CLI_INPUT_H
#define VL_CLI_INPUT_H

#include "voxlabel/dicom.h"
#include "voxlabel/volume.h"

typedef struct cli_input_options {
    const char *series;               /* --series */
    vl_dicom_irregular on_irregular;  /* --on-irregular */
    int64_t raw_dims[3];              /* --raw-dims X,Y,Z; 0 when not given */
    vl_dtype raw_dtype;               /* --raw-type */
    int threads;
} cli_input_options;

void cli_input_options_default(cli_input_options *options);
/* Handles --series, --on-irregular, --raw-dims and --raw-type: returns 1 when argv[*i] was one of them
 * (advancing *i), 0 when it was not, and -exit_code on a bad value (the error is printed). */
int cli_input_parse_option(int argc, char **argv, int *i, cli_input_options *options);
extern const char cli_input_help[];

typedef struct cli_input {
    vl_volume volume;
    const char *kind;        /* "dicom", "nifti", "raw", ... */
    vl_dicom_report report;  /* filled for DICOM input */
    int has_report;
} cli_input;

/* The DICOM series' own display window (WindowCenter/WindowWidth): 1 and the values when the input had one. */
int cli_input_window(const cli_input *input, double *center, double *width);

/* Loads `path`; prints DICOM warnings and notes. Returns 0 or prints the error and returns its exit code. */
int cli_input_load(const char *path, const cli_input_options *options, cli_input *input);
void cli_input_free(cli_input *input);

#endif
