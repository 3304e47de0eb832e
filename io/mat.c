/* MATLAB MAT files through libmatio: v5/v7 (zlib) and v7.3 (HDF5) (docs/formats.md, "MATLAB .mat").
 *
 * Axis convention (vl_read_options.mat_xy / vl_write_options.mat_xy):
 *   0 (docs/design.md §4's `matlab` order): MATLAB V(y+1, x+1, z+1), size(V) = [ny nx nz], as bwlabeln sees a volume
 *     stacked from dicomread slices; voxel (x,y,z) is MATLAB's column-major element y + ny*(x + nx*z).
 *   1 (`matlab-xy`): V(x+1, y+1, z+1), size(V) = [nx ny nz]: MATLAB's column-major order is our x-fastest one.
 * A MAT file carries no geometry: volumes read from one get identity axes and unit spacing. */
#define _GNU_SOURCE /* fseeko, ftello */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <matio.h>
#include <zlib.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_formats.h"
#include "mat_hdf5.h"
#include "volume_helpers.h"

/* Above this many bytes a variable needs MAT v7.3 (HDF5): v5/v7 sizes are 32-bit. */
#define VL_MAT5_MAX_VARIABLE_BYTES ((uint64_t)1 << 31)

/* libmatio logs to stderr by default; the library must not print, so its last message is kept for errors. */
static _Thread_local char matio_message[512];
static pthread_once_t matio_log_once = PTHREAD_ONCE_INIT;

static void keep_matio_message(int level, char *message)
{
    (void)level;
    snprintf(matio_message, sizeof matio_message, "%s", message ? message : "");
}

static void install_matio_log(void)
{
    Mat_LogInitFunc("voxlabel", keep_matio_message);
    vl_hdf5_symbols(); /* switches HDF5's stderr error stack off: libmatio's message is what the error carries */
}

static const char *matio_detail(void)
{
    return matio_message[0] ? matio_message : "libmatio gave no detail";
}

static int sample_type_of_class(const matvar_t *var, vl_sample_type *type)
{
    switch (var->class_type) {
    case MAT_C_DOUBLE: *type = VL_SAMPLE_F64; return 1;
    case MAT_C_SINGLE: *type = VL_SAMPLE_F32; return 1;
    case MAT_C_INT8: *type = VL_SAMPLE_I8; return 1;
    case MAT_C_UINT8: *type = VL_SAMPLE_U8; return 1;
    case MAT_C_INT16: *type = VL_SAMPLE_I16; return 1;
    case MAT_C_UINT16: *type = VL_SAMPLE_U16; return 1;
    case MAT_C_INT32: *type = VL_SAMPLE_I32; return 1;
    case MAT_C_UINT32: *type = VL_SAMPLE_U32; return 1;
    case MAT_C_INT64: *type = VL_SAMPLE_I64; return 1;
    case MAT_C_UINT64: *type = VL_SAMPLE_U64; return 1;
    default: return 0;
    }
}

static const char *class_name(enum matio_classes class_type)
{
    switch (class_type) {
    case MAT_C_CELL: return "cell";
    case MAT_C_STRUCT: return "struct";
    case MAT_C_OBJECT: return "object";
    case MAT_C_CHAR: return "char";
    case MAT_C_SPARSE: return "sparse";
    case MAT_C_FUNCTION: return "function handle";
    default: return "non-numeric";
    }
}

/* Swaps the two fast axes of each page: out[s + slow*(f + fast*p)] = in[f + fast*(s + slow*p)], in 32x32 tiles
 * so that both sides stay in cache. This is the MATLAB V(y,x,z) <-> x-fastest reordering. */
enum { TRANSPOSE_TILE = 32 };
#define VL_TRANSPOSE_PAGES(type)                                                                                   \
    do {                                                                                                           \
        const type *src = in;                                                                                      \
        type *dst = out;                                                                                           \
        for (int64_t p = 0; p < pages; p++, src += fast * slow, dst += fast * slow)                                \
            for (int64_t s0 = 0; s0 < slow; s0 += TRANSPOSE_TILE)                                                  \
                for (int64_t f0 = 0; f0 < fast; f0 += TRANSPOSE_TILE)                                              \
                    for (int64_t s = s0; s < s0 + TRANSPOSE_TILE && s < slow; s++)                                 \
                        for (int64_t f = f0; f < f0 + TRANSPOSE_TILE && f < fast; f++)                             \
                            dst[s + slow * f] = src[f + fast * s];                                                 \
    } while (0)

static void transpose_pages(const void *in, void *out, int64_t fast, int64_t slow, int64_t pages, size_t element)
{
    switch (element) {
    case 1: VL_TRANSPOSE_PAGES(uint8_t); break;
    case 2: VL_TRANSPOSE_PAGES(uint16_t); break;
    case 4: VL_TRANSPOSE_PAGES(uint32_t); break;
    default: VL_TRANSPOSE_PAGES(uint64_t); break;
    }
}

/* A variable we can read: a real, dense, numeric or logical array of rank 2 or 3 (or more with trailing 1s). */
static int is_volume_variable(const matvar_t *var)
{
    vl_sample_type type;
    if (!sample_type_of_class(var, &type) || var->isComplex || var->rank < 2)
        return 0;
    for (int i = 3; i < var->rank; i++)
        if (var->dims[i] != 1)
            return 0;
    return 1;
}

static vl_status describe_unusable(const matvar_t *var, const char *path)
{
    vl_sample_type type;
    if (!sample_type_of_class(var, &type))
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s' is a %s array, not a numeric volume", path, var->name,
                       class_name(var->class_type));
    if (var->isComplex)
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s' is complex; labels and intensities must be real", path,
                       var->name);
    return vl_fail(VL_ERR_INPUT, "%s: variable '%s' has %d dimensions; a volume has 2 or 3", path, var->name,
                   var->rank);
}

/* The name of the variable to read: the requested one, or the first numeric array in the file. */
static vl_status choose_variable(mat_t *mat, const char *requested, const char *path, char *name, size_t size)
{
    if (requested) {
        matvar_t *info = Mat_VarReadInfo(mat, requested);
        if (!info)
            return vl_fail(VL_ERR_INPUT, "%s: no variable named '%s'", path, requested);
        vl_status status = is_volume_variable(info) ? VL_OK : describe_unusable(info, path);
        Mat_VarFree(info);
        snprintf(name, size, "%s", requested);
        return status;
    }
    Mat_Rewind(mat);
    for (matvar_t *info; (info = Mat_VarReadNextInfo(mat)) != NULL;) {
        int usable = is_volume_variable(info) && info->name;
        if (usable)
            snprintf(name, size, "%s", info->name);
        Mat_VarFree(info);
        if (usable)
            return VL_OK;
    }
    return vl_fail(VL_ERR_INPUT, "%s: holds no real numeric array of rank 2 or 3", path);
}


/* ---- the file is checked before libmatio allocates (libmatio trusts the dims field: a 1 KB file can claim 8 GB) ----
 * For a v5/v7 file the element of the variable to read is found by walking the top-level tags, and:
 *   - every element must lie inside the file;
 *   - the real part's stored byte count must be exactly numel x the size of its stored type, and lie inside the
 *     element (so no voxel is left to uninitialised memory, and an unknown data type is refused);
 *   - a compressed (miCOMPRESSED) element is inflated with a fixed buffer, counting: its stream must be complete
 *     and hold the whole inner element, which cannot be larger than deflate's limit of 1032 bytes a byte in. */
enum { MI_INT8 = 1, MI_UINT8, MI_INT16, MI_UINT16, MI_INT32, MI_UINT32, MI_SINGLE, MI_DOUBLE = 9, MI_INT64 = 12,
       MI_UINT64, MI_MATRIX, MI_COMPRESSED };
#define VL_DEFLATE_MAX_RATIO 1032u

static int mi_type_size(uint32_t type)
{
    switch (type) {
    case MI_INT8: case MI_UINT8: return 1;
    case MI_INT16: case MI_UINT16: return 2;
    case MI_INT32: case MI_UINT32: case MI_SINGLE: return 4;
    case MI_DOUBLE: case MI_INT64: case MI_UINT64: return 8;
    default: return 0;
    }
}

typedef struct {
    int swap;
} mat5_reader;

static uint32_t word_at(const mat5_reader *r, const unsigned char *b)
{
    uint32_t v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return r->swap ? __builtin_bswap32(v) : v;
}

/* Reads one tag at b (n bytes there): type, byte count, where its data begin and how many bytes it takes in all
 * (padded to 8). Returns 0 if the tag does not fit. */
static int read_tag(const mat5_reader *r, const unsigned char *b, uint64_t n, uint32_t *type, uint64_t *bytes,
                    uint64_t *data_at, uint64_t *total)
{
    if (n < 8)
        return 0;
    uint32_t first = word_at(r, b);
    if (first >> 16) { /* small data element: type and count in one word, data in the next 4 bytes */
        *type = first & 0xffff;
        *bytes = first >> 16;
        *data_at = 4;
        *total = 8;
        return *bytes <= 4;
    }
    *type = first;
    *bytes = word_at(r, b + 4);
    *data_at = 8;
    *total = 8 + ((*bytes + 7) & ~(uint64_t)7);
    return 1;
}

/* Checks the head of a miMATRIX element's contents (b, n bytes available of `size` claimed): its array flags,
 * dims, name and the real part's tag. Sets *matches when the name is `name`. */
static vl_status check_matrix_head(const mat5_reader *r, const unsigned char *b, uint64_t n, uint64_t size,
                                   const char *name, const char *path, int *matches)
{
    *matches = 0;
    uint32_t type;
    uint64_t bytes, data_at, total, at = 0;
    /* The array flags, dims and name tags of any variable must lie inside its element: libmatio allocates what
     * they claim (a dims tag claiming 4 GB in a 1 KB file) before it reads them. */
    if (size >= 16 && n >= 16) {
        uint64_t flags_total, dims_total;
        if (!read_tag(r, b, n, &type, &bytes, &data_at, &flags_total) || flags_total > size)
            return vl_fail(VL_ERR_INPUT, "%s: a variable's array flags are corrupt", path);
        if (flags_total + 8 <= n && (!read_tag(r, b + flags_total, n - flags_total, &type, &bytes, &data_at,
                                               &dims_total) ||
                                     flags_total + dims_total > size))
            return vl_fail(VL_ERR_INPUT, "%s: a variable's dims element claims more bytes than the variable holds",
                           path);
    }
    /* array flags */
    if (!read_tag(r, b, n, &type, &bytes, &data_at, &total) || total > n || bytes < 8)
        return VL_OK; /* not a variable libmatio reads as a volume; libmatio answers for it */
    const uint32_t class_byte = word_at(r, b + data_at) & 0xff;
    at += total;
    /* dims */
    if (!read_tag(r, b + at, n - at, &type, &bytes, &data_at, &total) || at + total > n || bytes % 4)
        return VL_OK;
    int64_t numel = 1;
    int overflow = 0;
    for (uint64_t d = 0; d < bytes / 4 && !overflow; d++)
        overflow = vl_size_product(numel, (int64_t)word_at(r, b + at + data_at + 4 * d), 1, 1, path, &numel) != VL_OK;
    at += total;
    /* name */
    if (!read_tag(r, b + at, n - at, &type, &bytes, &data_at, &total) || at + total > n)
        return VL_OK;
    char own_name[64];
    if (!name) { /* every variable: checked under its own name */
        snprintf(own_name, sizeof own_name, "%.*s", (int)(bytes < 63 ? bytes : 63), (const char *)(b + at + data_at));
        name = own_name;
    } else if (bytes != strlen(name) || memcmp(b + at + data_at, name, strlen(name)) != 0) {
        return VL_OK;
    }
    *matches = 1;
    at += total;
    if (class_byte < 6 || class_byte > 15) /* not numeric (6 double .. 15 uint64): refused later by class */
        return VL_OK;
    if (overflow)
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s' claims more elements than 2^63", path, name);
    if (!read_tag(r, b + at, n - at, &type, &bytes, &data_at, &total))
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s' has no data element", path, name);
    const int element = mi_type_size(type);
    if (!element)
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s' stores its data as an unknown type (%u)", path, name,
                       (unsigned)type);
    int64_t claimed = 0;
    if (vl_size_product(numel, element, 1, 1, path, &claimed) != VL_OK || bytes != (uint64_t)claimed)
        return vl_fail(VL_ERR_INPUT,
                       "%s: variable '%s' claims %lld elements (%lld bytes) but its data element holds %llu bytes",
                       path, name, (long long)numel, (long long)claimed, (unsigned long long)bytes);
    if (at + data_at + bytes > size)
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s': its data run past the end of its element", path, name);
    return VL_OK;
}

/* Inflates `compressed` bytes of f from the current position, keeping the first `head_size` bytes in head and
 * counting the rest; *out_total is what the stream inflates to, capped at cap + 1. */
static vl_status inflate_counting(FILE *f, uint64_t compressed, unsigned char *head, size_t head_size,
                                  size_t *head_got, uint64_t cap, uint64_t *out_total, int *complete)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return vl_fail(VL_ERR_MEMORY, "cannot start zlib");
    unsigned char in[65536], out[65536];
    uint64_t left = compressed, total = 0;
    int ret = Z_OK;
    *head_got = 0;
    *complete = 0;
    while (ret != Z_STREAM_END && total <= cap) {
        if (z.avail_in == 0) {
            if (!left)
                break;
            const size_t want = left < sizeof in ? (size_t)left : sizeof in;
            const size_t got = fread(in, 1, want, f);
            if (!got)
                break;
            left -= got;
            z.next_in = in;
            z.avail_in = (uInt)got;
        }
        z.next_out = out;
        z.avail_out = sizeof out;
        ret = inflate(&z, Z_NO_FLUSH);
        const size_t produced = sizeof out - z.avail_out;
        if (*head_got < head_size) {
            const size_t take = produced < head_size - *head_got ? produced : head_size - *head_got;
            memcpy(head + *head_got, out, take);
            *head_got += take;
        }
        total += produced;
        if (ret != Z_OK && ret != Z_STREAM_END && !(ret == Z_BUF_ERROR && produced))
            break;
    }
    *complete = ret == Z_STREAM_END;
    inflateEnd(&z);
    *out_total = total;
    return VL_OK;
}

/* `written`: the file was just written by libmatio, which does not check its fwrite calls (a full disk gives a
 * truncated file and a success); then the header must be whole and the variable found. `name` NULL: every
 * element and every numeric variable is checked (before libmatio reads even the headers, as it allocates what
 * a corrupt header claims). */
static vl_status check_mat5_file(const char *path, const char *name, int written)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return written ? vl_fail(VL_ERR_OUTPUT, "%s: cannot read back", path) : VL_OK;
    vl_status status = VL_OK;
    unsigned char header[128];
    uint64_t file_size = 0;
    if (fseeko(f, 0, SEEK_END) == 0)
        file_size = (uint64_t)ftello(f);
    if (fseeko(f, 0, SEEK_SET) != 0 || fread(header, 1, sizeof header, f) != sizeof header) {
        fclose(f);
        return written ? vl_fail(VL_ERR_OUTPUT, "%s: the header is incomplete", path) : VL_OK;
    }
    mat5_reader r = {.swap = header[126] == 'M' && header[127] == 'I'};
    uint64_t at = 128;
    int found = 0;
    while (status == VL_OK && at + 8 <= file_size) {
        unsigned char tag[8];
        if (fseeko(f, (off_t)at, SEEK_SET) != 0 || fread(tag, 1, 8, f) != 8)
            break;
        const uint32_t type = word_at(&r, tag);
        const uint64_t bytes = word_at(&r, tag + 4);
        if (type != MI_MATRIX && type != MI_COMPRESSED)
            break; /* libmatio skips or refuses it */
        if (bytes > file_size - at - 8) {
            status = vl_fail(VL_ERR_INPUT, "%s: an element claims %llu bytes but only %llu are left in the file",
                             path, (unsigned long long)bytes, (unsigned long long)(file_size - at - 8));
            break;
        }
        unsigned char head[4096];
        size_t got = 0;
        int matches = 0;
        if (type == MI_MATRIX) {
            got = fread(head, 1, bytes < sizeof head ? (size_t)bytes : sizeof head, f);
            status = check_matrix_head(&r, head, got, bytes, name, path, &matches);
        } else {
            /* peek first: only the chosen variable's stream is inflated in full */
            uint64_t total;
            int complete;
            status = inflate_counting(f, bytes < 8192 ? bytes : 8192, head, sizeof head, &got, sizeof head, &total,
                                      &complete);
            uint32_t inner_type;
            uint64_t inner_bytes, inner_at, inner_total;
            if (status == VL_OK && read_tag(&r, head, got, &inner_type, &inner_bytes, &inner_at, &inner_total) &&
                inner_type == MI_MATRIX) {
                status = check_matrix_head(&r, head + 8, got - 8, inner_bytes, name, path, &matches);
                if (status == VL_OK && matches) {
                    if (inner_bytes + 8 > bytes * (uint64_t)VL_DEFLATE_MAX_RATIO + 1024)
                        status = vl_fail(VL_ERR_INPUT,
                                         "%s: variable '%s' claims %llu bytes from %llu compressed ones, more than "
                                         "deflate can expand to",
                                         path, name ? name : "?", (unsigned long long)inner_bytes, (unsigned long long)bytes);
                    else if (fseeko(f, (off_t)(at + 8), SEEK_SET) == 0) {
                        status = inflate_counting(f, bytes, head, 0, &got, inner_bytes + 8, &total, &complete);
                        if (status == VL_OK && (!complete || total < inner_bytes + 8))
                            status = vl_fail(VL_ERR_INPUT,
                                             "%s: variable '%s': its compressed data are %s (%llu of %llu bytes)",
                                             path, name ? name : "?", complete ? "short" : "truncated or corrupt",
                                             (unsigned long long)(total < inner_bytes + 8 ? total : inner_bytes + 8),
                                             (unsigned long long)(inner_bytes + 8));
                    }
                }
            }
        }
        if (matches && name) {
            found = 1;
            break;
        }
        at += 8 + (type == MI_MATRIX ? ((bytes + 7) & ~(uint64_t)7) : bytes);
    }
    fclose(f);
    if (written && status == VL_OK && !found)
        status = vl_fail(VL_ERR_OUTPUT, "%s: variable '%s' is missing", path, name);
    return status;
}

/* What libmatio will allocate for `name` (its dims times its class's size, twice for complex) against what the
 * file can hold (deflate expands at most 1032-fold): the last guard, whatever the element headers said. */
static vl_status check_matio_claim(mat_t *mat, const char *name, const char *path)
{
    matvar_t *info = Mat_VarReadInfo(mat, name);
    if (!info)
        return VL_OK; /* Mat_VarRead answers */
    int64_t claimed = (int64_t)Mat_SizeOfClass(info->class_type) * (info->isComplex ? 2 : 1);
    int overflow = claimed <= 0;
    for (int d = 0; d < info->rank && !overflow; d++)
        overflow = vl_size_product(claimed, (int64_t)info->dims[d], 1, 1, path, &claimed) != VL_OK;
    Mat_VarFree(info);
    struct stat file;
    const int64_t room = stat(path, &file) == 0 ? (int64_t)file.st_size * VL_DEFLATE_MAX_RATIO + ((int64_t)1 << 20) : -1;
    if (overflow || (room > 0 && claimed > room))
        return vl_fail(VL_ERR_INPUT,
                       "%s: variable '%s' claims more bytes than the %lld-byte file can hold, even compressed "
                       "(a corrupt header)",
                       path, name, room > 0 ? (long long)file.st_size : -1LL);
    return VL_OK;
}

/* MATLAB's array (column-major, size [rows cols pages], malloc'd samples taken over) as a volume in the
 * options' axis convention. */
static vl_status matlab_samples_to_volume(void *samples, vl_sample_type type, const int64_t size[3], const char *path,
                                          const vl_read_options *options, vl_volume *volume)
{
    const int64_t rows = size[0], cols = size[1], pages = size[2];
    int64_t elements = 0;
    vl_status status = vl_size_product(rows, cols, pages, 1, path, &elements);
    if (status != VL_OK || elements <= 0) {
        free(samples);
        return status != VL_OK ? status : vl_fail(VL_ERR_INPUT, "%s: the variable is empty", path);
    }
    /* Narrow first, in MATLAB's order (which is the matlab-xy layout), then reorder the narrow type: the array
     * read is usually double, 8 bytes a voxel. */
    vl_volume matlab_order;
    memset(&matlab_order, 0, sizeof matlab_order);
    vl_geometry_identity(&matlab_order.geometry);
    matlab_order.nx = rows;
    matlab_order.ny = cols;
    matlab_order.nz = pages;
    status = vl_samples_to_volume(samples, type, 0, 1.0, 0.0, &matlab_order, path);
    if (status != VL_OK)
        return status;
    vl_volume out = matlab_order;
    if (!options->mat_xy) {
        status = vl_volume_create_uninitialised(&out, cols, rows, pages, matlab_order.dtype);
        if (status != VL_OK) {
            vl_volume_free(&matlab_order);
            return status;
        }
        /* MATLAB element (row y, column x, page z) sits at y + rows*(x + cols*z); ours at x + cols*(y + rows*z). */
        transpose_pages(matlab_order.data, out.data, rows, cols, pages, vl_dtype_size(out.dtype));
        vl_volume_free(&matlab_order);
    }
    vl_progress_report(&options->progress, "reading", 1.0);
    *volume = out;
    return VL_OK;
}

vl_status vl_mat_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    pthread_once(&matio_log_once, install_matio_log);
    matio_message[0] = '\0';
    mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
    if (!mat)
        return vl_fail(VL_ERR_INPUT, "%s: not a readable MAT file (%s)", path, matio_detail());
    if (Mat_GetVersion(mat) != MAT_FT_MAT73 && Mat_GetVersion(mat) != MAT_FT_MAT4) {
        vl_status status = check_mat5_file(path, NULL, 0);
        if (status != VL_OK) {
            Mat_Close(mat);
            return status;
        }
    }
    char name[256];
    if (Mat_GetVersion(mat) == MAT_FT_MAT73) {
        /* v7.3 numeric arrays are read by HDF5 itself: libmatio does not list those whose MATLAB_class is a
         * null-padded string (hdf5storage's). libmatio answers only for a file without any. */
        void *samples = NULL;
        vl_sample_type type = VL_SAMPLE_F64;
        int64_t size[3];
        int found = 0;
        vl_progress_report(&options->progress, "reading", 0.0);
        vl_status status =
            vl_mat73_read_direct(path, options->mat_variable, &samples, &type, size, name, sizeof name, &found);
        if (found || status != VL_OK) {
            Mat_Close(mat);
            return status != VL_OK ? status : matlab_samples_to_volume(samples, type, size, path, options, volume);
        }
    }
    vl_status status = choose_variable(mat, options->mat_variable, path, name, sizeof name);
    matvar_t *var = NULL;
    if (status == VL_OK && Mat_GetVersion(mat) != MAT_FT_MAT73 && Mat_GetVersion(mat) != MAT_FT_MAT4)
        status = check_mat5_file(path, name, 0);
    else if (status == VL_OK && Mat_GetVersion(mat) == MAT_FT_MAT73)
        status = vl_mat73_check_storage(path, name);
    if (status == VL_OK)
        status = check_matio_claim(mat, name, path);
    if (status == VL_OK) {
        vl_progress_report(&options->progress, "reading", 0.0);
        var = Mat_VarRead(mat, name);
        if (!var || !var->data)
            status = vl_fail(VL_ERR_INPUT, "%s: cannot read variable '%s' (%s)", path, name, matio_detail());
    }
    Mat_Close(mat);
    if (status != VL_OK) {
        Mat_VarFree(var);
        return status;
    }
    vl_sample_type type = VL_SAMPLE_F64;
    sample_type_of_class(var, &type);
    const int64_t size[3] = {(int64_t)var->dims[0], (int64_t)var->dims[1], var->rank > 2 ? (int64_t)var->dims[2] : 1};
    void *samples = var->data; /* malloc'd by libmatio; taken over here so it is not copied */
    var->data = NULL;
    Mat_VarFree(var);
    return matlab_samples_to_volume(samples, type, size, path, options, volume);
}

/* ---- writer ---- */

static void store(void *data, enum matio_classes class_type, int64_t at, double value)
{
    switch (class_type) {
    case MAT_C_DOUBLE: ((double *)data)[at] = value; break;
    case MAT_C_SINGLE: ((float *)data)[at] = (float)value; break;
    case MAT_C_UINT8: ((uint8_t *)data)[at] = (uint8_t)value; break;
    case MAT_C_INT16: ((int16_t *)data)[at] = (int16_t)value; break;
    case MAT_C_UINT16: ((uint16_t *)data)[at] = (uint16_t)value; break;
    default: ((uint32_t *)data)[at] = (uint32_t)value; break;
    }
}

static void class_for(const vl_volume *volume, vl_mat_class wanted, enum matio_classes *class_type,
                      enum matio_types *data_type, size_t *element)
{
    static const struct {
        enum matio_classes class_type;
        enum matio_types data_type;
        size_t element;
    } native[] = {
        [VL_U8] = {MAT_C_UINT8, MAT_T_UINT8, 1},     [VL_I16] = {MAT_C_INT16, MAT_T_INT16, 2},
        [VL_U16] = {MAT_C_UINT16, MAT_T_UINT16, 2},  [VL_U32] = {MAT_C_UINT32, MAT_T_UINT32, 4},
        [VL_F32] = {MAT_C_SINGLE, MAT_T_SINGLE, 4},
    };
    if (wanted == VL_MAT_NATIVE) {
        *class_type = native[volume->dtype].class_type;
        *data_type = native[volume->dtype].data_type;
        *element = native[volume->dtype].element;
    } else if (wanted == VL_MAT_UINT32) {
        *class_type = MAT_C_UINT32;
        *data_type = MAT_T_UINT32;
        *element = 4;
    } else {
        *class_type = MAT_C_DOUBLE;
        *data_type = MAT_T_DOUBLE;
        *element = 8;
    }
}

vl_status vl_mat_write(const char *path, const vl_volume *volume, const vl_write_options *options)
{
    pthread_once(&matio_log_once, install_matio_log);
    matio_message[0] = '\0';
    if (options->mat_class == VL_MAT_UINT32 && (volume->dtype == VL_I16 || volume->dtype == VL_F32))
        return vl_fail(VL_ERR_ARGUMENT, "%s: a %s volume cannot be written as uint32 (use double or native)", path,
                       vl_dtype_name(volume->dtype));
    enum matio_classes class_type;
    enum matio_types data_type;
    size_t element;
    class_for(volume, options->mat_class, &class_type, &data_type, &element);
    const int64_t nx = volume->nx, ny = volume->ny, nz = volume->nz, count = vl_volume_voxels(volume);
    const uint64_t bytes = (uint64_t)count * element;
    vl_status status = vl_atomic_file_check(path, options->force);
    if (status != VL_OK)
        return status;
    void *data = malloc((size_t)bytes);
    if (!data)
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate %llu bytes for the MATLAB array", path,
                       (unsigned long long)bytes);
    if (options->mat_xy) {
        for (int64_t i = 0; i < count; i++)
            store(data, class_type, i, vl_volume_value(volume, i));
    } else {
        /* Ours x fastest, MATLAB's V(y,x,z) y fastest: convert in tiles so both sides stay in cache. */
        for (int64_t z = 0; z < nz; z++)
            for (int64_t y0 = 0; y0 < ny; y0 += TRANSPOSE_TILE)
                for (int64_t x0 = 0; x0 < nx; x0 += TRANSPOSE_TILE)
                    for (int64_t y = y0; y < y0 + TRANSPOSE_TILE && y < ny; y++)
                        for (int64_t x = x0; x < x0 + TRANSPOSE_TILE && x < nx; x++)
                            store(data, class_type, y + ny * (x + nx * z),
                                  vl_volume_value(volume, x + nx * (y + ny * z)));
    }
    vl_progress_report(&options->progress, "writing", 0.5);
    /* MATLAB drops trailing singleton dimensions, so a one-slice volume is a matrix. */
    size_t dims[3] = {(size_t)(options->mat_xy ? nx : ny), (size_t)(options->mat_xy ? ny : nx), (size_t)nz};
    const int rank = nz == 1 ? 2 : 3;
    const enum mat_ft version = bytes >= VL_MAT5_MAX_VARIABLE_BYTES ? MAT_FT_MAT73 : MAT_FT_MAT5;
    vl_atomic_file file;
    status = vl_atomic_file_begin(&file, path, options->force);
    if (status != VL_OK) {
        free(data);
        return status;
    }
    char header[116];
    snprintf(header, sizeof header, "MATLAB %s MAT-file, written by voxlabel %s",
             version == MAT_FT_MAT73 ? "7.3" : "5.0", VL_VERSION);
    mat_t *mat = Mat_CreateVer(file.temp_path, header, version);
    matvar_t *var = mat ? Mat_VarCreate(options->is_label_map ? "L" : "V", class_type, data_type, rank, dims, data,
                                        MAT_F_DONT_COPY_DATA)
                        : NULL;
    if (!mat || !var)
        status = vl_fail(VL_ERR_OUTPUT, "%s: cannot create the MAT file (%s)", path, matio_detail());
    else if (Mat_VarWrite(mat, var, MAT_COMPRESSION_ZLIB) != 0)
        status = vl_fail(VL_ERR_OUTPUT, "%s: writing the variable failed (%s)", path, matio_detail());
    if (var)
        Mat_VarFree(var);
    if (mat && Mat_Close(mat) != 0 && status == VL_OK)
        status = vl_fail(VL_ERR_OUTPUT, "%s: closing the MAT file failed (disk full?)", path);
    /* libmatio's v5 writer ignores short writes: read the element back (its compressed stream must be whole). */
    if (status == VL_OK && version == MAT_FT_MAT5 &&
        check_mat5_file(file.temp_path, options->is_label_map ? "L" : "V", 1) != VL_OK)
        status = vl_fail(VL_ERR_OUTPUT, "%s: the written file is incomplete (disk full?)", path);
    free(data);
    if (status != VL_OK) {
        vl_atomic_file_discard(&file);
        return status;
    }
    vl_progress_report(&options->progress, "writing", 1.0);
    return vl_atomic_file_commit(&file);
}
