/* voxlabel: git-style command line; each subcommand lives in cli/cmd_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "voxlabel/voxlabel.h"

static const struct {
    const char *name;
    cli_command_fn run;
    const char *summary;
} commands[] = {
    {"label", cmd_label, "threshold a CT and label its connected components (bwlabeln order)"},
    {"batch", cmd_batch, "label every CT series under a folder (a PACS export): resumable, shardable"},
    {"info", cmd_info, "list the DICOM series under a path with geometry and anomalies"},
    {"convert", cmd_convert, "convert a DICOM series (or volume file) to NIfTI, NRRD, MHA or MAT"},
    {"stats", cmd_stats, "per-component statistics of any label volume as CSV or JSON (docs/csv.md)"},
    {"compare", cmd_compare, "compare labels (or a components CSV) with MATLAB bwlabeln / regionprops3 output"},
    {"seg", cmd_seg, "write labels as a DICOM Segmentation referencing the source CT series"},
    {"preview", cmd_preview, "render windowed CT slices with labels as PNG (slice, montage, orthogonal)"},
    {"phantom", cmd_phantom, "write a synthetic CT series as real DICOM files"},
    {"color", cmd_color, "HSV-threshold a colour image (thesis or OpenCV HSV), clean, label, overlay"},
    {"train", cmd_train, "train a random-forest pixel classifier from scribbles (.vlrf model)"},
    {"classify", cmd_classify, "per-voxel class probabilities and class map from a trained .vlrf model"},
    {"shapes", cmd_shapes, "per-slice 2D shape table: moments, Hu, region measures, contour histogram"},
    {"cut", cmd_cut, "seeded graph-cut segmentation (Boykov-Jolly, exact max-flow) of a CT or image"},
    {"background", cmd_background, "moving foreground of a frame sequence (MOG2), per-frame components"},
    {"features", cmd_features, "SIFT keypoints and descriptors per slice (OpenCV's SIFT), CSV + .npy + preview"},
    {"match", cmd_match, "SIFT matches and a RANSAC transform between two images or CT slice pairs"},
    {"register-slices", cmd_register_slices, "for each slice of A the matching slice of B and the in-plane transform"},
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "voxlabel %s: connected components of CT volumes, numbered exactly as MATLAB bwlabeln\n\n"
            "usage: voxlabel <command> [options]\n\ncommands:\n",
            vl_version());
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-16s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nRun 'voxlabel <command> --help' for its options and examples.\n"
                 "Example: voxlabel phantom -o ct/ && voxlabel label ct/ --preset bone -o out/\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        cli_error(CLI_EXIT_USAGE, "no command given");
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("voxlabel %s\n", vl_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    return cli_error(CLI_EXIT_USAGE, "%s: unknown command (run 'voxlabel --help' for the list)", argv[1]);
}
