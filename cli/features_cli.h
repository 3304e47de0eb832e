/* Shared pieces of the feature commands (features, match, register-slices): what an INPUT becomes before
 * SIFT (an image, or a CT through a window in 8 bits or as float HU), the options they share, the .npy
 * writer and the drawing of keypoints and matches. */
#ifndef VL_FEATURES_CLI_H
#define VL_FEATURES_CLI_H

#include <stdint.h>

#include "cli_input.h"
#include "voxlabel/features.h"
#include "voxlabel/image2d.h"

typedef struct features_cli_options {
    cli_input_options input;
    double window_center, window_width;
    int window_given;
    int hu;                   /* --hu: float HU, contrast scaled by the window width */
    vl_sift_options sift;
    vl_device device;
    int force, progress, quiet;
} features_cli_options;

extern const char features_cli_help[];
extern const char features_cli_match_help[];

/* Matching and RANSAC options of match and register-slices. */
typedef struct features_match_options {
    double ratio;                /* --ratio, Lowe's test (0.8) */
    vl_ransac_options ransac;    /* --model, --inlier-threshold, --iterations, --seed, --min-inliers */
} features_match_options;

void features_match_options_default(features_match_options *options);
/* As features_cli_parse_option, for the matching options. */
int features_cli_parse_match_option(int argc, char **argv, int *i, features_match_options *options);
/* An argument that match and register-slices share: an input (A, then B), one of the shared options or one
 * of the matching options. 1 when taken (advancing *i past a value), 0 when it is the command's own option,
 * -exit_code on a third input or a bad value (printed). argv[0] is the command's name. */
int features_cli_parse_pair_argument(int argc, char **argv, int *i, const char *paths[2],
                                     features_cli_options *options, features_match_options *match);
/* "similarity" or "affine". */
const char *features_model_name(vl_transform_model model);

void features_cli_options_default(features_cli_options *options);
/* Parses one of the shared options at argv[*i]: 1 when taken (advancing *i), 0 when not one of them,
 * -exit_code on a bad value (printed). */
int features_cli_parse_option(int argc, char **argv, int *i, features_cli_options *options);

/* An INPUT ready for SIFT: `sift_volume` is what SIFT reads (8-bit rendering, or the HU volume with the
 * window in options->sift), `display` its 8-bit rendering for previews, `geometry` for LPS columns. */
typedef struct features_input {
    cli_input loaded;          /* a CT volume (kind != "image") */
    vl_volume display;         /* U8, the window's rendering (or the image's grey levels) */
    int is_image;
    int uses_display;          /* SIFT reads `display` (8-bit path) rather than loaded.volume */
    const char *path;
} features_input;

/* Loads PATH (PNG/JPEG, DICOM, volume file), renders it and sets options->sift's value range; prints notes.
 * Returns 0 or the printed error's exit code. */
int features_input_load(const char *path, features_cli_options *options, features_input *input);
const vl_volume *features_input_sift_volume(const features_input *input);
void features_input_free(features_input *input);

/* SIFT on every slice with progress and the device notice; prints the error and returns its exit code. */
int features_cli_run_sift(const features_input *input, const features_cli_options *options, vl_sift_features *out);

/* The inputs A and B of match and register-slices: loads both, each with its own copy of `options`
 * (per_input[k]), as features_input_load; on an error A is freed. Returns 0 or the printed error's exit code. */
int features_cli_load_pair(const char *const paths[2], const features_cli_options *options,
                           features_cli_options per_input[2], features_input inputs[2]);
/* SIFT on A, then on B, as features_cli_run_sift; stops at the first error and returns its exit code. */
int features_cli_run_sift_pair(const features_input inputs[2], const features_cli_options per_input[2],
                               vl_sift_features features[2]);

/* A NumPy .npy (format 1.0, little endian) of rows x 128 float32 or uint8. */
vl_status features_write_npy(const char *path, const float *descriptors, int64_t rows, int as_uint8);
/* keypoints.csv: slice,x,y,lps_x,lps_y,lps_z,size,angle,response,octave. */
vl_status features_write_keypoints_csv(const char *path, const vl_sift_features *features,
                                       const vl_geometry *geometry);

/* Slice z of an 8-bit volume as RGB; draws a keypoint (circle of radius size/2 and its orientation) or a
 * line, clipped to the image. */
vl_status features_slice_rgb(const vl_volume *display, int64_t z, vl_image *rgb);
void features_draw_keypoint(vl_image *rgb, int64_t x_offset, const vl_sift_keypoint *k, const uint8_t colour[3]);
void features_draw_line(vl_image *rgb, double x0, double y0, double x1, double y1, const uint8_t colour[3]);

#endif
