/* Format names and the dispatch of vl_read_volume / vl_write_volume to the per-format files
 * (volume_formats.h). The top volume room: it calls down into the format files and nothing calls it back. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "voxlabel/error.h"
#include "volume_formats.h"

static const struct {
    vl_file_format format;
    const char *name;       /* what --format takes */
    const char *extension;  /* what the writer appends */
} format_table[] = {
    {VL_FORMAT_NIFTI_GZ, "nii.gz", ".nii.gz"},
    {VL_FORMAT_NIFTI, "nii", ".nii"},
    {VL_FORMAT_NRRD, "nrrd", ".nrrd"},
    {VL_FORMAT_MHA, "mha", ".mha"},
    {VL_FORMAT_MAT, "mat", ".mat"},
    {VL_FORMAT_RAW, "raw", ".raw"},
};

vl_status vl_file_format_parse(const char *text, vl_file_format *format)
{
    for (size_t i = 0; i < sizeof format_table / sizeof format_table[0]; i++)
        if (text && strcasecmp(text, format_table[i].name) == 0) {
            *format = format_table[i].format;
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "--format %s: unknown format (use nii.gz, nii, nrrd, mha, mat or raw)",
                   text ? text : "(null)");
}

const char *vl_file_format_extension(vl_file_format format)
{
    for (size_t i = 0; i < sizeof format_table / sizeof format_table[0]; i++)
        if (format_table[i].format == format)
            return format_table[i].extension;
    return "";
}

static int ends_with(const char *text, const char *suffix)
{
    size_t length = strlen(text), suffix_length = strlen(suffix);
    return length >= suffix_length && strcasecmp(text + length - suffix_length, suffix) == 0;
}

vl_file_format vl_file_format_from_path(const char *path)
{
    if (!path)
        return VL_FORMAT_AUTO;
    if (ends_with(path, ".nii.gz"))
        return VL_FORMAT_NIFTI_GZ;
    if (ends_with(path, ".nii"))
        return VL_FORMAT_NIFTI;
    if (ends_with(path, ".nrrd") || ends_with(path, ".nhdr"))
        return VL_FORMAT_NRRD;
    if (ends_with(path, ".mha") || ends_with(path, ".mhd"))
        return VL_FORMAT_MHA;
    if (ends_with(path, ".mat"))
        return VL_FORMAT_MAT;
    if (ends_with(path, ".raw") || ends_with(path, ".bin"))
        return VL_FORMAT_RAW;
    return VL_FORMAT_AUTO;
}

void vl_read_options_default(vl_read_options *options)
{
    memset(options, 0, sizeof *options);
    options->format = VL_FORMAT_AUTO;
    options->raw_dtype = VL_U8;
}

void vl_write_options_default(vl_write_options *options)
{
    memset(options, 0, sizeof *options);
    options->format = VL_FORMAT_AUTO;
    options->mat_class = VL_MAT_DOUBLE;
}

/* For names without a known extension: recognise the format by its first bytes. */
static vl_file_format sniff_format(const char *path)
{
    unsigned char head[520] = {0};
    FILE *file = fopen(path, "rb");
    if (!file)
        return VL_FORMAT_AUTO;
    size_t got = fread(head, 1, sizeof head, file);
    fclose(file);
    if (got >= 4 && memcmp(head, "NRRD", 4) == 0)
        return VL_FORMAT_NRRD;
    if (got >= 10 && (memcmp(head, "ObjectType", 10) == 0 || memcmp(head, "NDims", 5) == 0))
        return VL_FORMAT_MHA;
    if (got >= 10 && memcmp(head, "MATLAB 5.0", 10) == 0)
        return VL_FORMAT_MAT;
    if (got >= 348 && memcmp(head + 344, "n+1", 4) == 0)
        return VL_FORMAT_NIFTI;
    if (got >= 2 && head[0] == 0x1f && head[1] == 0x8b)
        return VL_FORMAT_NIFTI_GZ;
    return VL_FORMAT_AUTO;
}

vl_status vl_read_volume(const char *path, const vl_read_options *options, vl_volume *volume)
{
    vl_read_options defaults;
    if (!options) {
        vl_read_options_default(&defaults);
        options = &defaults;
    }
    if (!path || !volume)
        return vl_fail(VL_ERR_ARGUMENT, "vl_read_volume: path and volume are required");
    memset(volume, 0, sizeof *volume);
    vl_file_format format = options->format;
    if (format == VL_FORMAT_AUTO)
        format = vl_file_format_from_path(path);
    if (format == VL_FORMAT_AUTO)
        format = sniff_format(path);
    switch (format) {
    case VL_FORMAT_NIFTI_GZ:
    case VL_FORMAT_NIFTI: return vl_nifti_read(path, options, volume);
    case VL_FORMAT_NRRD: return vl_nrrd_read(path, options, volume);
    case VL_FORMAT_MHA: return vl_mha_read(path, options, volume);
    case VL_FORMAT_MAT: return vl_mat_read(path, options, volume);
    case VL_FORMAT_RAW: return vl_raw_read(path, options, volume);
    case VL_FORMAT_AUTO: break;
    }
    return vl_fail(VL_ERR_INPUT,
                   "%s: unknown volume format (name it .nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd, .mat or .raw)", path);
}

vl_status vl_write_volume(const char *path, const vl_volume *volume, const vl_write_options *options)
{
    vl_write_options defaults;
    if (!options) {
        vl_write_options_default(&defaults);
        options = &defaults;
    }
    if (!path || !volume || !volume->data || vl_dtype_size(volume->dtype) == 0 || vl_volume_voxels(volume) <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "vl_write_volume: a path and a non-empty volume are required");
    vl_file_format format = options->format;
    if (format == VL_FORMAT_AUTO)
        format = vl_file_format_from_path(path);
    switch (format) {
    case VL_FORMAT_NIFTI_GZ: return vl_nifti_write(path, volume, options, 1);
    case VL_FORMAT_NIFTI: return vl_nifti_write(path, volume, options, 0);
    case VL_FORMAT_NRRD: return vl_nrrd_write(path, volume, options);
    case VL_FORMAT_MHA: return vl_mha_write(path, volume, options);
    case VL_FORMAT_MAT: return vl_mat_write(path, volume, options);
    case VL_FORMAT_RAW: return vl_raw_write(path, volume, options);
    case VL_FORMAT_AUTO: break;
    }
    return vl_fail(VL_ERR_ARGUMENT, "%s: cannot tell the format from the name (use a .nii.gz, .nii, .nrrd, .mha, "
                                    ".mat or .raw name, or give the format)", path);
}
