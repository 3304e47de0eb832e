/* MetaImage volumes (.mha with the data attached, .mhd with a separate data file), as ITK reads and writes
 * them: LPS, TransformMatrix listing each axis direction in turn, optional zlib compression. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_formats.h"
#include "volume_helpers.h"

enum { MHA_MAX_LINE = 65536, MHA_MAX_HEADER_LINES = 1024 };

static const struct {
    const char *name;
    vl_sample_type type;
} met_types[] = {
    {"MET_UCHAR", VL_SAMPLE_U8},  {"MET_CHAR", VL_SAMPLE_I8},    {"MET_USHORT", VL_SAMPLE_U16},
    {"MET_SHORT", VL_SAMPLE_I16}, {"MET_UINT", VL_SAMPLE_U32},   {"MET_INT", VL_SAMPLE_I32},
    {"MET_ULONG", VL_SAMPLE_U32}, {"MET_LONG", VL_SAMPLE_I32},   {"MET_ULONG_LONG", VL_SAMPLE_U64},
    {"MET_LONG_LONG", VL_SAMPLE_I64}, {"MET_FLOAT", VL_SAMPLE_F32}, {"MET_DOUBLE", VL_SAMPLE_F64},
};

static const char *met_name_of(vl_dtype dtype)
{
    vl_sample_type type = vl_sample_type_of(dtype);
    for (size_t i = 0; i < sizeof met_types / sizeof met_types[0]; i++)
        if (met_types[i].type == type)
            return met_types[i].name;
    return "";
}

/* ---- writer ---- */

/* Deflates the voxels (converted to `dtype`) on every core into one zlib stream held in memory, because the
 * header must state CompressedDataSize before the data. Labels compress to a small fraction. */
static vl_status deflate_voxels(const vl_volume *volume, vl_dtype dtype, const vl_write_options *options,
                                char **out, size_t *out_size, const char *path)
{
    *out = NULL;
    *out_size = 0;
    FILE *memory = open_memstream(out, out_size);
    if (!memory)
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate the compressed buffer", path);
    vl_status status = vl_pzlib_write_volume(memory, volume, dtype, options, path);
    if (fclose(memory) != 0 && status == VL_OK)
        status = vl_fail(VL_ERR_MEMORY, "%s: cannot grow the compressed buffer", path);
    if (status != VL_OK) {
        free(*out);
        *out = NULL;
    }
    return status;
}

vl_status vl_mha_write(const char *path, const vl_volume *volume, const vl_write_options *options)
{
    if (!vl_geometry_is_valid(&volume->geometry))
        return vl_fail(VL_ERR_ARGUMENT, "%s: the volume's geometry is singular or not finite", path);
    vl_dtype disk_dtype = vl_disk_dtype_for(volume, options);
    char *compressed = NULL;
    size_t compressed_size = 0;
    vl_status status = vl_atomic_file_check(path, options->force);
    if (status == VL_OK)
        status = deflate_voxels(volume, disk_dtype, options, &compressed, &compressed_size, path);
    if (status != VL_OK)
        return status;
    vl_atomic_file file;
    FILE *out;
    status = vl_atomic_file_open_stream(&file, path, options->force, "wb", &out);
    if (status != VL_OK) {
        free(compressed);
        return status;
    }
    const vl_geometry *g = &volume->geometry;
    fprintf(out, "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
                 "CompressedData = True\nCompressedDataSize = %zu\nTransformMatrix =",
            compressed_size);
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++)
            fprintf(out, " %.17g", g->direction[3 * r + c]);
    fprintf(out, "\nOffset = %.17g %.17g %.17g\nCenterOfRotation = 0 0 0\nAnatomicalOrientation = RAI\n"
                 "ElementSpacing = %.17g %.17g %.17g\nDimSize = %lld %lld %lld\nElementType = %s\n"
                 "ElementDataFile = LOCAL\n",
            g->origin[0], g->origin[1], g->origin[2], g->spacing[0], g->spacing[1], g->spacing[2],
            (long long)volume->nx, (long long)volume->ny, (long long)volume->nz, met_name_of(disk_dtype));
    fwrite(compressed, 1, compressed_size, out); /* a short write shows in ferror when the stream closes */
    free(compressed);
    status = vl_atomic_file_close_stream(&file, out, VL_OK);
    if (status == VL_OK)
        vl_progress_report(&options->progress, "writing", 1.0);
    return status;
}

/* ---- reader ---- */

typedef struct mha_header {
    int ndims;
    int64_t dims[3];
    double spacing[3], offset[3], matrix[9];
    int have_matrix;
    vl_sample_type type;
    int have_type;
    int big_endian, compressed, channels;
    long long header_size;
    char data_file[4096];
} mha_header;

static char *trim(char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        text[--n] = '\0';
    return text;
}

static int is_true(const char *value)
{
    return strcasecmp(value, "True") == 0 || strcmp(value, "1") == 0;
}

static int read_numbers(const char *value, double *out, int count)
{
    int n = 0, used = 0;
    while (n < count && sscanf(value, "%lf%n", &out[n], &used) == 1) {
        value += used;
        n++;
    }
    return n;
}

static vl_status parse_field(mha_header *h, const char *key, const char *value, const char *path)
{
    if (!strcasecmp(key, "ObjectType")) {
        if (strcasecmp(value, "Image") != 0)
            return vl_fail(VL_ERR_INPUT, "%s: MetaImage ObjectType %s is not an image", path, value);
    } else if (!strcasecmp(key, "NDims")) {
        h->ndims = atoi(value);
        if (h->ndims < 2 || h->ndims > 3)
            return vl_fail(VL_ERR_INPUT, "%s: a %s-D MetaImage is not a 2-D or 3-D volume", path, value);
    } else if (!strcasecmp(key, "DimSize")) {
        double d[3] = {1, 1, 1};
        int n = read_numbers(value, d, 3);
        for (int i = 0; i < 3; i++) {
            if (i < n && (d[i] < 1 || d[i] > 1e12 || d[i] != floor(d[i])))
                return vl_fail(VL_ERR_INPUT, "%s: invalid DimSize \"%s\"", path, value);
            h->dims[i] = (int64_t)d[i];
        }
    } else if (!strcasecmp(key, "ElementSpacing") || !strcasecmp(key, "ElementSize")) {
        if (!strcasecmp(key, "ElementSpacing") || h->spacing[0] == 0)
            read_numbers(value, h->spacing, 3);
    } else if (!strcasecmp(key, "Offset") || !strcasecmp(key, "Position") || !strcasecmp(key, "Origin")) {
        read_numbers(value, h->offset, 3);
    } else if (!strcasecmp(key, "TransformMatrix") || !strcasecmp(key, "Rotation") ||
               !strcasecmp(key, "Orientation")) {
        double m[9];
        int n = read_numbers(value, m, 9);
        if (n == 9) {
            memcpy(h->matrix, m, sizeof m);
            h->have_matrix = 1;
        } else if (n == 4 && h->ndims == 2) {
            const double planar[9] = {m[0], m[1], 0.0, m[2], m[3], 0.0, 0.0, 0.0, 1.0};
            memcpy(h->matrix, planar, sizeof planar);
            h->have_matrix = 1;
        }
    } else if (!strcasecmp(key, "ElementType")) {
        size_t i = 0;
        while (i < sizeof met_types / sizeof met_types[0] && strcasecmp(value, met_types[i].name) != 0)
            i++;
        if (i == sizeof met_types / sizeof met_types[0])
            return vl_fail(VL_ERR_INPUT, "%s: MetaImage ElementType %s is not supported", path, value);
        h->type = met_types[i].type;
        h->have_type = 1;
    } else if (!strcasecmp(key, "ElementNumberOfChannels")) {
        h->channels = atoi(value);
    } else if (!strcasecmp(key, "BinaryDataByteOrderMSB") || !strcasecmp(key, "ElementByteOrderMSB")) {
        h->big_endian = is_true(value);
    } else if (!strcasecmp(key, "CompressedData")) {
        h->compressed = is_true(value);
    } else if (!strcasecmp(key, "HeaderSize")) {
        h->header_size = atoll(value);
    } else if (!strcasecmp(key, "BinaryData")) {
        if (!is_true(value))
            return vl_fail(VL_ERR_INPUT, "%s: ASCII MetaImage data is not supported", path);
    } else if (!strcasecmp(key, "ElementDataFile")) {
        snprintf(h->data_file, sizeof h->data_file, "%s", value);
    }
    return VL_OK;
}

static vl_status read_header(FILE *in, const char *path, mha_header *h)
{
    memset(h, 0, sizeof *h);
    h->dims[0] = h->dims[1] = h->dims[2] = 0;
    h->channels = 1;
    char *line = malloc(MHA_MAX_LINE);
    if (!line)
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate the header buffer", path);
    vl_status status = VL_OK;
    int lines = 0;
    while (status == VL_OK && !h->data_file[0]) {
        if (!fgets(line, MHA_MAX_LINE, in) || ++lines > MHA_MAX_HEADER_LINES) {
            status = vl_fail(VL_ERR_INPUT, "%s: not a MetaImage file (no ElementDataFile line)", path);
            break;
        }
        char *equals = strchr(line, '=');
        if (!equals) {
            if (*trim(line) == '\0')
                continue;
            status = vl_fail(VL_ERR_INPUT, "%s: malformed MetaImage header line \"%.60s\"", path, trim(line));
            break;
        }
        *equals = '\0';
        status = parse_field(h, trim(line), trim(equals + 1), path);
    }
    free(line);
    if (status != VL_OK)
        return status;
    if (!h->have_type || h->ndims == 0 || h->dims[0] == 0)
        return vl_fail(VL_ERR_INPUT, "%s: MetaImage header lacks NDims, DimSize or ElementType", path);
    if (h->channels != 1)
        return vl_fail(VL_ERR_INPUT, "%s: a %d-channel MetaImage is not a scalar volume", path, h->channels);
    if (h->ndims == 2)
        h->dims[2] = 1;
    if (strchr(h->data_file, ' ') || !strcasecmp(h->data_file, "LIST"))
        return vl_fail(VL_ERR_INPUT, "%s: MetaImage data split over several files is not supported", path);
    return VL_OK;
}

static vl_status header_geometry(const mha_header *h, const char *path, vl_geometry *geometry)
{
    double axes[9] = {0};
    for (int c = 0; c < 3; c++) {
        double spacing = h->spacing[c] > 0 && isfinite(h->spacing[c]) ? h->spacing[c] : 1.0;
        for (int r = 0; r < 3; r++)
            axes[3 * r + c] = (h->have_matrix ? h->matrix[3 * c + r] : (r == c)) * spacing;
    }
    return vl_geometry_from_axes(axes, h->offset, geometry, path);
}

static vl_status read_compressed(FILE *in, void *samples, size_t bytes, const char *path)
{
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit2(&stream, 15 + 32) != Z_OK) /* zlib or gzip wrapper */
        return vl_fail(VL_ERR_MEMORY, "%s: cannot start zlib", path);
    unsigned char input[1 << 16];
    unsigned char *cursor = samples;
    size_t left = bytes;
    int result = Z_OK;
    while (left > 0 && result != Z_STREAM_END) {
        if (stream.avail_in == 0) {
            size_t got = fread(input, 1, sizeof input, in);
            if (got == 0)
                break;
            stream.next_in = input;
            stream.avail_in = (uInt)got;
        }
        size_t room = left > (1u << 30) ? (1u << 30) : left;
        stream.next_out = cursor;
        stream.avail_out = (uInt)room;
        result = inflate(&stream, Z_NO_FLUSH);
        if (result != Z_OK && result != Z_STREAM_END)
            break;
        cursor += room - stream.avail_out;
        left -= room - stream.avail_out;
    }
    inflateEnd(&stream);
    if (left > 0)
        return vl_fail(VL_ERR_INPUT, "%s: compressed data is truncated or corrupt", path);
    return VL_OK;
}

vl_status vl_mha_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    mha_header h;
    vl_volume out;
    memset(&out, 0, sizeof out);
    vl_status status = read_header(in, path, &h);
    if (status == VL_OK)
        status = header_geometry(&h, path, &out.geometry);
    if (status == VL_OK && strcasecmp(h.data_file, "LOCAL") != 0) {
        fclose(in);
        char data_path[8192];
        vl_detached_path(path, h.data_file, data_path, sizeof data_path);
        in = fopen(data_path, "rb");
        if (!in)
            return vl_fail(VL_ERR_INPUT, "%s: cannot open its data file %s", path, data_path);
        if (h.header_size > 0)
            fseeko(in, h.header_size, SEEK_SET);
    }
    const size_t element = vl_sample_size(h.type);
    int64_t count = 0, bytes = 0;
    void *samples = NULL;
    if (status == VL_OK && (h.dims[0] <= 0 || h.dims[1] <= 0 || h.dims[2] <= 0))
        status = vl_fail(VL_ERR_INPUT, "%s: DimSize %lld %lld %lld is not all positive", path, (long long)h.dims[0],
                         (long long)h.dims[1], (long long)h.dims[2]);
    if (status == VL_OK && (status = vl_size_product(h.dims[0], h.dims[1], h.dims[2], (int64_t)element, path,
                                                     &bytes)) == VL_OK)
        count = bytes / (int64_t)element;
    if (status == VL_OK && h.compressed)
        status = vl_check_deflate_claim(bytes, vl_file_remaining_bytes(in), path);
    if (status == VL_OK) {
        if (!h.compressed && vl_file_remaining_bytes(in) >= 0 &&
                 vl_file_remaining_bytes(in) < count * (int64_t)element)
            status = vl_fail(VL_ERR_INPUT, "%s: truncated data (%lld voxels expected)", path, (long long)count);
        else if (!(samples = malloc((size_t)count * element)))
            status = vl_fail(VL_ERR_MEMORY, "%s: cannot allocate %lld voxels", path, (long long)count);
    }
    if (status == VL_OK) {
        if (h.compressed)
            status = read_compressed(in, samples, (size_t)count * element, path);
        else if (fread(samples, element, (size_t)count, in) != (size_t)count)
            status = vl_fail(VL_ERR_INPUT, "%s: truncated data (%lld voxels expected)", path, (long long)count);
    }
    fclose(in);
    return vl_finish_samples(status, samples, h.type, h.big_endian, h.dims, &out, options, volume, path);
}
