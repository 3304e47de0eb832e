/* voxlabel shapes: a mask (PNG/JPEG image or volume file) -> per-slice 2D labels -> shapes.csv. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cli_image_grey.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "voxlabel/image2d.h"
#include "voxlabel/io.h"
#include "voxlabel/shape.h"

static const char shapes_help[] =
    "usage: voxlabel shapes INPUT -o OUT [options]\n"
    "\n"
    "Labels every slice of a mask on its own (connectivity 4 or 8, labels 1..N per slice in MATLAB bwlabeln\n"
    "order) and writes one CSV row per (slice, 2D label): area, two perimeter estimators, centroid, bounding\n"
    "box, orientation, eccentricity, axes, circularity, solidity, extent, Euler number, raw/central/normalised\n"
    "moments, Hu 1-7 and the thesis's 100-bin contour-distance histogram (columns in docs/stages2d.md).\n"
    "\n"
    "INPUT is a PNG or JPEG image (nonzero = object) or a volume file (.nii.gz .nii .nrrd .mha .mat). A volume\n"
    "whose values go beyond 1 is taken as 3D labels: the mask is its nonzero voxels and every row gets the\n"
    "3D label of its component (column label3d).\n"
    "\n"
    "options:\n"
    "  -o, --output OUT       CSV file, or an existing directory (writes OUT/shapes.csv)\n"
    "  --conn 4|8             2D connectivity (default 8)\n"
    "  --match-ref REF        add jm_reference, the Jeffries-Matusita distance of each histogram to a reference:\n"
    "                         REF is an image (its largest 8-connected object) or SLICE:LABEL of this input\n"
    "  --device auto|cpu|gpu[:N] where to label (default auto)\n"
    "  --matlab               write MATLAB regionprops' table instead: Area, Centroid, BoundingBox (1-based,\n"
    "                         half-pixel corners), Major/MinorAxisLength, Eccentricity, Orientation (degrees),\n"
    "                         ConvexArea, Circularity, EulerNumber, EquivDiameter, Solidity, Extent, Perimeter\n"
    "                         as MATLAB computes them (docs/stages2d.md), one row per (Slice, Label), 1-based\n"
    "  --force                replace an existing CSV\n"
    "\n"
    "examples:\n"
    "  voxlabel shapes red/mask.png -o red/shapes.csv --conn 4 --match-ref circle.png\n"
    "  voxlabel shapes out/labels.nii.gz -o out/ --match-ref 120:1\n"
    "  voxlabel shapes mask.png --matlab -o regionprops.csv\n";

/* Nonzero pixels of any channel of an image become a one-slice U8 mask. */
static vl_status image_mask(const char *path, vl_volume *mask)
{
    vl_image image;
    vl_status status = vl_image_read(path, &image);
    if (status != VL_OK)
        return status;
    status = vl_volume_create(mask, image.width, image.height, 1, VL_U8);
    int64_t pixels = image.width * image.height;
    for (int64_t i = 0; status == VL_OK && i < pixels; i++)
        for (int c = 0; c < image.channels; c++) {
            int64_t sample = i * image.channels + c;
            int value = image.bit_depth == 8 ? ((uint8_t *)image.data)[sample] : ((uint16_t *)image.data)[sample];
            if (value)
                ((uint8_t *)mask->data)[i] = 1;
        }
    vl_image_free(&image);
    return status;
}

/* Mask of a volume file; `is_labels` says whether any value exceeds 1 (then the volume is 3D labels). */
static vl_status volume_mask(const vl_volume *volume, vl_volume *mask, int *is_labels)
{
    vl_status status = vl_volume_create(mask, volume->nx, volume->ny, volume->nz, VL_U8);
    if (status != VL_OK)
        return status;
    mask->geometry = volume->geometry;
    *is_labels = 0;
    int64_t voxels = vl_volume_voxels(volume);
    uint8_t *out = mask->data;
    for (int64_t i = 0; i < voxels; i++) {
        double value;
        switch (volume->dtype) {
        case VL_U8: value = ((uint8_t *)volume->data)[i]; break;
        case VL_I16: value = ((int16_t *)volume->data)[i]; break;
        case VL_U16: value = ((uint16_t *)volume->data)[i]; break;
        case VL_U32: value = ((uint32_t *)volume->data)[i]; break;
        default: value = ((float *)volume->data)[i]; break;
        }
        out[i] = value != 0;
        *is_labels |= value > 1;
    }
    return VL_OK;
}

/* SLICE:LABEL (digits only) names a component of the input; anything else is an image path. */
static int parse_slice_label(const char *text, int64_t *slice, uint32_t *label)
{
    const char *colon = strchr(text, ':');
    if (!colon || colon == text || !colon[1])
        return 0;
    for (const char *p = text; *p; p++)
        if (p != colon && !isdigit((unsigned char)*p))
            return 0;
    *slice = strtoll(text, NULL, 10);
    *label = (uint32_t)strtoul(colon + 1, NULL, 10);
    return 1;
}

static vl_status reference_from_image(const char *path, double *histogram)
{
    vl_volume mask = {0};
    vl_slice_labels labels = {0};
    vl_status status = image_mask(path, &mask);
    if (status == VL_OK)
        status = vl_label_slices(&mask, 8, &(vl_device){.kind = VL_DEVICE_CPU}, &labels);
    if (status == VL_OK && labels.count[0] == 0)
        status = vl_fail(VL_ERR_INPUT, "--match-ref: %s has no object pixels", path);
    if (status == VL_OK) {
        const uint32_t *data = labels.labels.data;
        int64_t pixels = mask.nx * mask.ny;
        uint64_t *sizes = calloc((size_t)labels.count[0] + 1, sizeof *sizes);
        if (!sizes)
            status = vl_fail(VL_ERR_MEMORY, "--match-ref: out of memory");
        for (int64_t i = 0; sizes && i < pixels; i++)
            sizes[data[i]]++;
        uint32_t largest = 1;
        for (uint32_t l = 2; sizes && l <= labels.count[0]; l++)
            if (sizes[l] > sizes[largest])
                largest = l;
        uint8_t *object = mask.data;
        for (int64_t i = 0; sizes && i < pixels; i++)
            object[i] = data[i] == largest;
        if (sizes)
            status = vl_shape_histogram(object, mask.nx, mask.ny, histogram);
        free(sizes);
    }
    vl_slice_labels_free(&labels);
    vl_volume_free(&mask);
    return status;
}

int cmd_shapes(int argc, char **argv)
{
    const char *input = NULL, *output = NULL, *reference = NULL;
    int connectivity = 8, force = 0, matlab = 0, code;
    vl_device device;
    vl_device_default(&device);
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i], *value;
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            fputs(shapes_help, stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(option, "--force") == 0) {
            force = 1;
            continue;
        }
        if (strcmp(option, "--matlab") == 0) {
            matlab = 1;
            continue;
        }
        if (option[0] != '-') {
            if (input)
                return cli_error(CLI_EXIT_USAGE, "%s: only one INPUT is allowed (see 'voxlabel shapes --help')", option);
            input = option;
            continue;
        }
        if (strcmp(option, "-o") && strcmp(option, "--output") && strcmp(option, "--conn") &&
            strcmp(option, "--match-ref") && strcmp(option, "--device"))
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel shapes --help')", option);
        if (!(value = cli_option_value(argc, argv, &i)))
            return CLI_EXIT_USAGE;
        if (strcmp(option, "-o") == 0 || strcmp(option, "--output") == 0)
            output = value;
        else if (strcmp(option, "--match-ref") == 0)
            reference = value;
        else if (strcmp(option, "--device") == 0) {
            if ((code = cli_parse_device(value, &device)))
                return code;
        } else {
            int64_t conn;
            if (cli_parse_int64(option, value, 4, 8, &conn))
                return CLI_EXIT_USAGE;
            if (conn != 4 && conn != 8)
                return cli_error(CLI_EXIT_USAGE, "--conn: %lld is not 4 or 8", (long long)conn);
            connectivity = (int)conn;
        }
    }
    if (!input || !output)
        return cli_error(CLI_EXIT_USAGE, "shapes: INPUT and -o OUT are required (see 'voxlabel shapes --help')");
    char path[4096];
    struct stat info;
    if (stat(output, &info) == 0 && S_ISDIR(info.st_mode))
        snprintf(path, sizeof path, "%s/shapes.csv", output);
    else
        snprintf(path, sizeof path, "%s", output);

    vl_volume source = {0}, mask = {0};
    vl_slice_labels labels = {0};
    vl_shape_table table = {0};
    int is_labels = 0;
    double histogram[VL_SHAPE_HISTOGRAM_BINS];
    int64_t ref_slice = 0;
    uint32_t ref_label = 0;
    int reference_is_component = reference && parse_slice_label(reference, &ref_slice, &ref_label);
    vl_status status = vl_atomic_file_check(path, force);
    if (status == VL_OK && reference && !reference_is_component)
        status = reference_from_image(reference, histogram);
    struct stat input_info;
    if (status == VL_OK && stat(input, &input_info) != 0)
        status = vl_fail(VL_ERR_INPUT, "%s: %s", input, strerror(errno)); /* before any guess at the format */
    if (status == VL_OK) {
        if (cli_looks_like_image_file(input)) {
            status = image_mask(input, &mask);
        } else {
            vl_read_options read;
            vl_read_options_default(&read);
            status = vl_read_volume(input, &read, &source);
            if (status == VL_OK)
                status = volume_mask(&source, &mask, &is_labels);
        }
    }
    if (status == VL_OK)
        status = vl_label_slices(&mask, connectivity, &device, &labels);
    if (status == VL_OK && reference_is_component) {
        /* Measure once without a reference to find the named component's histogram. */
        status = vl_shape_measure(&labels, NULL, NULL, &table);
        int found = 0;
        for (int64_t r = 0; status == VL_OK && r < table.count; r++)
            if (table.rows[r].slice == ref_slice && table.rows[r].label == ref_label) {
                memcpy(histogram, table.rows[r].histogram, sizeof histogram);
                found = 1;
            }
        vl_shape_table_free(&table);
        if (status == VL_OK && !found)
            status = vl_fail(VL_ERR_ARGUMENT, "--match-ref: slice %lld has no label %u", (long long)ref_slice,
                             ref_label);
    }
    if (status == VL_OK)
        status = vl_shape_measure(&labels, is_labels ? &source : NULL, reference ? histogram : NULL, &table);
    if (status == VL_OK)
        status = matlab ? vl_shape_write_matlab_csv(path, &table, force) : vl_shape_write_csv(path, &table, force);
    if (status == VL_OK)
        printf("%s: %lld component(s) in %lld slice(s) -> %s\n", input, (long long)table.count,
               (long long)mask.nz, path);
    code = status == VL_OK ? CLI_EXIT_OK : cli_status_error(status);
    vl_shape_table_free(&table);
    vl_slice_labels_free(&labels);
    vl_volume_free(&mask);
    vl_volume_free(&source);
    return code;
}
