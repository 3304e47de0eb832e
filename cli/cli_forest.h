/* What the forest commands (train, classify, label --model) share: 2D PNG inputs, the model's class mask. */
#ifndef VL_CLI_FOREST_H
#define VL_CLI_FOREST_H
#include "cli_input.h"
#include "voxlabel/forest.h"

/* Loads IMAGE as cli_input_load does, or a PNG/JPEG as a one-slice volume (grey samples; colour refused). */
int cli_forest_load_image(const char *path, const cli_input_options *options, cli_input *input);
/* Loads a scribble map: any volume file, or a greyscale PNG whose sample values are the classes. */
int cli_forest_load_scribbles(const char *path, vl_volume *scribbles);
/* Loads the model, prints an error and returns its exit code on failure. */
int cli_forest_load_model(const char *path, vl_forest *forest);

/* --device and --threads of train and classify: 1 when `option` is one of them (its value parsed into
 * `forest`; --threads also caps the input reader), 0 when not, -exit code on a bad value (printed). */
int cli_forest_parse_run_option(const char *option, const char *value, vl_forest_options *forest,
                                cli_input_options *input);

/* `voxlabel label --model M --class K`: options and the mask they make. */
typedef struct cli_forest_label {
    const char *model_path;
    int64_t class_number;
} cli_forest_label;

/* 1 when `option` is --model or --class (its value parsed), 0 when not, -exit code on a bad value. */
int cli_forest_label_option(const char *option, const char *value, cli_forest_label *label);
/* After parsing: --model and --class come together and replace --threshold/--preset; the summary names the
 * model and records the class as the range K:K. Returns 0 or prints the usage error and returns its code. */
int cli_forest_label_check(const cli_forest_label *label, int have_threshold, const char **source, double *lo,
                           double *hi);
/* The voxels of `image` the model predicts as the class: a U8 0/1 mask. Returns a vl_status (the error set). */
vl_status cli_forest_label_mask(const cli_forest_label *label, const vl_volume *image, const vl_device *device,
                                int threads, vl_volume *mask);

#endif
