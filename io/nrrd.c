/* NRRD volumes (.nrrd attached header, .nhdr with a detached data file), raw or gzip encoded.
 * NRRD stores LPS directly and allows sheared axes, so gantry tilt is exact (docs/formats.md, "NRRD"). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_formats.h"
#include "volume_helpers.h"

enum { NRRD_MAX_LINE = 65536, NRRD_MAX_HEADER_LINES = 4096 };

/* ---- writer ---- */

static const char *nrrd_type_name(vl_dtype dtype)
{
    switch (dtype) {
    case VL_U8: return "uint8";
    case VL_I16: return "int16";
    case VL_U16: return "uint16";
    case VL_U32: return "uint32";
    case VL_F32: return "float";
    }
    return "";
}

static int write_header(FILE *out, const vl_volume *volume, vl_dtype dtype, int gzip)
{
    const vl_geometry *g = &volume->geometry;
    fprintf(out, "NRRD0004\n# written by voxlabel %s\ntype: %s\ndimension: 3\nspace: left-posterior-superior\n"
                 "sizes: %lld %lld %lld\nspace directions:",
            VL_VERSION, nrrd_type_name(dtype), (long long)volume->nx, (long long)volume->ny, (long long)volume->nz);
    for (int c = 0; c < 3; c++)
        fprintf(out, " (%.17g,%.17g,%.17g)", g->direction[c] * g->spacing[c], g->direction[3 + c] * g->spacing[c],
                g->direction[6 + c] * g->spacing[c]);
    fprintf(out, "\nkinds: domain domain domain\nendian: little\nencoding: %s\nspace origin: (%.17g,%.17g,%.17g)\n\n",
            gzip ? "gzip" : "raw", g->origin[0], g->origin[1], g->origin[2]);
    return ferror(out) ? -1 : 0;
}

vl_status vl_nrrd_write(const char *path, const vl_volume *volume, const vl_write_options *options)
{
    if (!vl_geometry_is_valid(&volume->geometry))
        return vl_fail(VL_ERR_ARGUMENT, "%s: the volume's geometry is singular or not finite", path);
    vl_dtype disk_dtype = vl_disk_dtype_for(volume, options);
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, options->force, "wb", &out);
    if (status != VL_OK)
        return status;
    /* The gzip stream follows the text header in the same file. */
    if (write_header(out, volume, disk_dtype, 1) != 0)
        status = vl_fail(VL_ERR_OUTPUT, "%s: cannot write the header", path);
    else
        status = vl_write_volume_data(out, 1, NULL, 0, volume, disk_dtype, options, path);
    return vl_atomic_file_close_stream(&file, out, status);
}

/* ---- reader ---- */

typedef struct nrrd_header {
    vl_sample_type type;
    int have_type;
    int dimension;
    int64_t sizes[3];
    double axes[9];      /* columns: the space direction of each axis, LPS after the space conversion */
    int have_directions;
    double spacings[3];
    int have_spacings;
    double origin[3];
    double space_sign[3]; /* converts the file's space to LPS */
    int big_endian;
    int gzip;
    long byte_skip;
    long line_skip;
    char data_file[4096];
} nrrd_header;

static char *trim(char *text)
{
    while (isspace((unsigned char)*text))
        text++;
    size_t n = strlen(text);
    while (n > 0 && isspace((unsigned char)text[n - 1]))
        text[--n] = '\0';
    return text;
}

static int parse_type(const char *text, vl_sample_type *type)
{
    static const struct {
        const char *name;
        vl_sample_type type;
    } names[] = {
        {"signed char", VL_SAMPLE_I8}, {"int8", VL_SAMPLE_I8}, {"int8_t", VL_SAMPLE_I8},
        {"uchar", VL_SAMPLE_U8}, {"unsigned char", VL_SAMPLE_U8}, {"uint8", VL_SAMPLE_U8}, {"uint8_t", VL_SAMPLE_U8},
        {"short", VL_SAMPLE_I16}, {"short int", VL_SAMPLE_I16}, {"signed short", VL_SAMPLE_I16},
        {"signed short int", VL_SAMPLE_I16}, {"int16", VL_SAMPLE_I16}, {"int16_t", VL_SAMPLE_I16},
        {"ushort", VL_SAMPLE_U16}, {"unsigned short", VL_SAMPLE_U16}, {"unsigned short int", VL_SAMPLE_U16},
        {"uint16", VL_SAMPLE_U16}, {"uint16_t", VL_SAMPLE_U16},
        {"int", VL_SAMPLE_I32}, {"signed int", VL_SAMPLE_I32}, {"int32", VL_SAMPLE_I32}, {"int32_t", VL_SAMPLE_I32},
        {"uint", VL_SAMPLE_U32}, {"unsigned int", VL_SAMPLE_U32}, {"uint32", VL_SAMPLE_U32},
        {"uint32_t", VL_SAMPLE_U32},
        {"longlong", VL_SAMPLE_I64}, {"long long", VL_SAMPLE_I64}, {"long long int", VL_SAMPLE_I64},
        {"signed long long", VL_SAMPLE_I64}, {"signed long long int", VL_SAMPLE_I64}, {"int64", VL_SAMPLE_I64},
        {"int64_t", VL_SAMPLE_I64},
        {"ulonglong", VL_SAMPLE_U64}, {"unsigned long long", VL_SAMPLE_U64}, {"unsigned long long int", VL_SAMPLE_U64},
        {"uint64", VL_SAMPLE_U64}, {"uint64_t", VL_SAMPLE_U64},
        {"float", VL_SAMPLE_F32}, {"double", VL_SAMPLE_F64},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(text, names[i].name) == 0) {
            *type = names[i].type;
            return 1;
        }
    return 0;
}

/* Parses "(a,b,c)" vectors; returns how many were read, -1 on a malformed one ("none" is not allowed). */
static int parse_vectors(const char *text, double *out, int max_vectors)
{
    int count = 0;
    const char *p = text;
    while (*p && count < max_vectors) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        double a, b, c;
        int used = 0;
        if (sscanf(p, " ( %lf , %lf , %lf ) %n", &a, &b, &c, &used) != 3 || used == 0)
            return -1;
        out[3 * count] = a;
        out[3 * count + 1] = b;
        out[3 * count + 2] = c;
        count++;
        p += used;
    }
    while (isspace((unsigned char)*p))
        p++;
    return *p ? -1 : count;
}

static vl_status parse_field(nrrd_header *h, char *key, char *value, const char *path)
{
    if (strcmp(key, "type") == 0) {
        if (!parse_type(value, &h->type))
            return vl_fail(VL_ERR_INPUT, "%s: NRRD type \"%s\" is not supported", path, value);
        h->have_type = 1;
    } else if (strcmp(key, "dimension") == 0) {
        h->dimension = atoi(value);
        if (h->dimension < 2 || h->dimension > 3)
            return vl_fail(VL_ERR_INPUT, "%s: NRRD dimension %s is not a 2-D or 3-D scalar volume", path, value);
    } else if (strcmp(key, "sizes") == 0) {
        long long s[4] = {1, 1, 1, 1};
        int n = sscanf(value, "%lld %lld %lld %lld", &s[0], &s[1], &s[2], &s[3]);
        if (n < 2 || n > 3 || s[0] < 1 || s[1] < 1 || s[2] < 1)
            return vl_fail(VL_ERR_INPUT, "%s: invalid NRRD sizes \"%s\"", path, value);
        for (int i = 0; i < 3; i++)
            h->sizes[i] = s[i];
    } else if (strcmp(key, "space") == 0) {
        if (!strcasecmp(value, "left-posterior-superior") || !strcasecmp(value, "LPS") ||
            !strcasecmp(value, "3D-right-handed"))
            h->space_sign[0] = h->space_sign[1] = h->space_sign[2] = 1.0;
        else if (!strcasecmp(value, "right-anterior-superior") || !strcasecmp(value, "RAS"))
            h->space_sign[0] = h->space_sign[1] = -1.0;
        else if (!strcasecmp(value, "left-anterior-superior") || !strcasecmp(value, "LAS"))
            h->space_sign[1] = -1.0;
        else
            return vl_fail(VL_ERR_INPUT, "%s: NRRD space \"%s\" is not supported (use LPS, RAS or LAS)", path, value);
    } else if (strcmp(key, "space dimension") == 0) {
        if (atoi(value) != 3)
            return vl_fail(VL_ERR_INPUT, "%s: NRRD space dimension %s is not 3", path, value);
    } else if (strcmp(key, "space directions") == 0) {
        double vectors[9] = {0};
        int n = parse_vectors(value, vectors, 3);
        if (n < 2)
            return vl_fail(VL_ERR_INPUT, "%s: invalid NRRD space directions \"%s\"", path, value);
        for (int c = 0; c < n; c++)
            for (int r = 0; r < 3; r++)
                h->axes[3 * r + c] = vectors[3 * c + r];
        h->have_directions = n;
    } else if (strcmp(key, "space origin") == 0) {
        if (parse_vectors(value, h->origin, 1) != 1)
            return vl_fail(VL_ERR_INPUT, "%s: invalid NRRD space origin \"%s\"", path, value);
    } else if (strcmp(key, "spacings") == 0) {
        h->spacings[0] = h->spacings[1] = h->spacings[2] = 1.0;
        if (sscanf(value, "%lf %lf %lf", &h->spacings[0], &h->spacings[1], &h->spacings[2]) < 2)
            return vl_fail(VL_ERR_INPUT, "%s: invalid NRRD spacings \"%s\"", path, value);
        for (int i = 0; i < 3; i++)
            if (!isfinite(h->spacings[i]) || h->spacings[i] == 0.0)
                h->spacings[i] = 1.0;
        h->have_spacings = 1;
    } else if (strcmp(key, "endian") == 0) {
        h->big_endian = strcasecmp(value, "big") == 0;
    } else if (strcmp(key, "encoding") == 0) {
        if (!strcasecmp(value, "raw"))
            h->gzip = 0;
        else if (!strcasecmp(value, "gzip") || !strcasecmp(value, "gz"))
            h->gzip = 1;
        else
            return vl_fail(VL_ERR_INPUT, "%s: NRRD encoding \"%s\" is not supported (use raw or gzip)", path, value);
    } else if (strcmp(key, "byte skip") == 0) {
        h->byte_skip = atol(value);
    } else if (strcmp(key, "line skip") == 0) {
        h->line_skip = atol(value);
    } else if (strcmp(key, "data file") == 0 || strcmp(key, "datafile") == 0) {
        if (strchr(value, ' ') || strcmp(value, "LIST") == 0)
            return vl_fail(VL_ERR_INPUT, "%s: NRRD data split over several files is not supported", path);
        snprintf(h->data_file, sizeof h->data_file, "%s", value);
    }
    return VL_OK;
}

static vl_status read_header(FILE *in, const char *path, nrrd_header *h)
{
    memset(h, 0, sizeof *h);
    h->space_sign[0] = h->space_sign[1] = h->space_sign[2] = 1.0;
    h->sizes[2] = 1;
    char *line = malloc(NRRD_MAX_LINE);
    if (!line)
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate the header buffer", path);
    vl_status status = VL_OK;
    if (!fgets(line, NRRD_MAX_LINE, in) || strncmp(line, "NRRD000", 7) != 0)
        status = vl_fail(VL_ERR_INPUT, "%s: not a NRRD file (no NRRD000x magic)", path);
    int lines = 0;
    while (status == VL_OK) {
        if (!fgets(line, NRRD_MAX_LINE, in))
            break; /* a detached header may end without a blank line */
        if (++lines > NRRD_MAX_HEADER_LINES) {
            status = vl_fail(VL_ERR_INPUT, "%s: NRRD header is too long", path);
            break;
        }
        if (strchr(line, '\n') == NULL && !feof(in)) {
            status = vl_fail(VL_ERR_INPUT, "%s: NRRD header line is too long", path);
            break;
        }
        char *text = trim(line);
        if (*text == '\0')
            break;
        if (*text == '#')
            continue;
        char *separator = strstr(text, ":=");
        if (separator)
            continue; /* key/value pairs carry no geometry */
        separator = strstr(text, ": ");
        if (!separator) {
            status = vl_fail(VL_ERR_INPUT, "%s: malformed NRRD header line \"%.60s\"", path, text);
            break;
        }
        *separator = '\0';
        status = parse_field(h, trim(text), trim(separator + 2), path);
    }
    free(line);
    if (status != VL_OK)
        return status;
    if (!h->have_type || h->dimension == 0)
        return vl_fail(VL_ERR_INPUT, "%s: NRRD header lacks type or dimension", path);
    if (h->sizes[0] == 0)
        return vl_fail(VL_ERR_INPUT, "%s: NRRD header lacks sizes", path);
    return VL_OK;
}

static vl_status header_geometry(const nrrd_header *h, const char *path, vl_geometry *geometry)
{
    double axes[9] = {0}, origin[3];
    if (h->have_directions) {
        memcpy(axes, h->axes, sizeof axes);
        if (h->have_directions == 2) {
            /* A 2-D image placed in 3-D space: a unit step along the normal of its plane. */
            double normal[3], length = 0.0;
            for (int r = 0; r < 3; r++) {
                int a = (r + 1) % 3, b = (r + 2) % 3;
                normal[r] = axes[3 * a] * axes[3 * b + 1] - axes[3 * b] * axes[3 * a + 1];
                length += normal[r] * normal[r];
            }
            for (int r = 0; r < 3 && length > 0.0; r++)
                axes[3 * r + 2] = normal[r] / sqrt(length);
        }
    } else {
        for (int i = 0; i < 3; i++)
            axes[4 * i] = h->have_spacings ? fabs(h->spacings[i]) : 1.0;
    }
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            axes[3 * r + c] *= h->space_sign[r];
        origin[r] = h->origin[r] * h->space_sign[r];
    }
    return vl_geometry_from_axes(axes, origin, geometry, path);
}

static vl_status skip_lines(FILE *in, long lines, const char *path)
{
    for (long i = 0; i < lines; i++)
        for (int c;;) {
            c = fgetc(in);
            if (c == EOF)
                return vl_fail(VL_ERR_INPUT, "%s: file ends inside the skipped lines", path);
            if (c == '\n')
                break;
        }
    return VL_OK;
}

vl_status vl_nrrd_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    nrrd_header h;
    vl_status status = read_header(in, path, &h);
    vl_volume out;
    memset(&out, 0, sizeof out);
    if (status == VL_OK)
        status = header_geometry(&h, path, &out.geometry);
    char data_path[4096 + 64];
    if (status == VL_OK && h.data_file[0]) {
        fclose(in);
        vl_detached_path(path, h.data_file, data_path, sizeof data_path);
        in = fopen(data_path, "rb");
        if (!in)
            return vl_fail(VL_ERR_INPUT, "%s: cannot open its data file %s", path, data_path);
    }
    if (status == VL_OK)
        status = skip_lines(in, h.line_skip, path);
    const size_t element = vl_sample_size(h.type);
    int64_t count = -1, bytes = 0;
    void *samples = NULL;
    if (status == VL_OK && (h.sizes[0] <= 0 || h.sizes[1] <= 0 || h.sizes[2] <= 0))
        status = vl_fail(VL_ERR_INPUT, "%s: NRRD sizes %lld %lld %lld are not all positive", path,
                         (long long)h.sizes[0], (long long)h.sizes[1], (long long)h.sizes[2]);
    if (status == VL_OK && (status = vl_size_product(h.sizes[0], h.sizes[1], h.sizes[2], (int64_t)element, path,
                                                     &bytes)) == VL_OK)
        count = bytes / (int64_t)element;
    if (status == VL_OK && h.gzip)
        status = vl_check_deflate_claim(bytes, vl_file_remaining_bytes(in), path);
    if (status == VL_OK && !h.gzip && h.byte_skip >= 0) {
        int64_t left = vl_file_remaining_bytes(in);
        if (left >= 0 && left - h.byte_skip < count * (int64_t)element)
            status = vl_fail(VL_ERR_INPUT, "%s: truncated data (%lld bytes for %lld voxels of %zu bytes)", path,
                             (long long)(left - h.byte_skip), (long long)count, element);
    }
    int inflated = 0; /* gzip data by libdeflate, from the rest of the file at once; else through gzread below */
    if (status == VL_OK && h.gzip)
        inflated = vl_gunzip_exact(in, h.byte_skip > 0 ? (size_t)h.byte_skip : 0, (size_t)bytes, &samples, &status,
                                   path);
    if (status == VL_OK && !inflated) {
        samples = malloc((size_t)count * element);
        if (!samples)
            status = vl_fail(VL_ERR_MEMORY, "%s: cannot allocate %lld voxels", path, (long long)count);
    }
    if (status == VL_OK && !h.gzip) {
        if (h.byte_skip == -1)
            fseeko(in, -(off_t)((size_t)count * element), SEEK_END);
        else if (h.byte_skip > 0)
            fseeko(in, h.byte_skip, SEEK_CUR);
        if (fread(samples, element, (size_t)count, in) != (size_t)count)
            status = vl_fail(VL_ERR_INPUT, "%s: truncated data (%lld voxels expected)", path, (long long)count);
    } else if (status == VL_OK && !inflated) {
        /* The gzip stream starts where the header ended; hand that position to zlib on a duplicate fd. */
        int fd = dup(fileno(in));
        gzFile data = fd >= 0 && lseek(fd, ftello(in), SEEK_SET) >= 0 ? gzdopen(fd, "rb") : NULL;
        if (!data) {
            if (fd >= 0)
                close(fd);
            status = vl_fail(VL_ERR_INPUT, "%s: cannot open the gzip data", path);
        } else {
            gzbuffer(data, 1 << 20);
            for (long skip = h.byte_skip; skip > 0 && status == VL_OK;) {
                unsigned char discard[4096];
                long piece = skip > (long)sizeof discard ? (long)sizeof discard : skip;
                status = vl_gz_read_exact(data, discard, (size_t)piece, path);
                skip -= piece;
            }
            if (status == VL_OK)
                status = vl_gz_read_exact(data, samples, (size_t)count * element, path);
            gzclose(data);
        }
    }
    fclose(in);
    return vl_finish_samples(status, samples, h.type, h.big_endian, h.sizes, &out, options, volume, path);
}
