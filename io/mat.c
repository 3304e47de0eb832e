/* MATLAB MAT files through libmatio: v5/v7 (zlib) and v7.3 (HDF5) (docs/formats.md, "MATLAB .mat").
 *
 * Axis convention (vl_read_options.mat_xy / vl_write_options.mat_xy):
 *   0 (docs/design.md §4's `matlab` order): MATLAB V(y+1, x+1, z+1), size(V) = [ny nx nz], as bwlabeln sees a volume
 *     stacked from dicomread slices; voxel (x,y,z) is MATLAB's column-major element y + ny*(x + nx*z).
 *   1 (`matlab-xy`): V(x+1, y+1, z+1), size(V) = [nx ny nz]: MATLAB's column-major order is our x-fastest one.
 * A MAT file carries no geometry: volumes read from one get identity axes and unit spacing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <matio.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_formats.h"
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

vl_status vl_mat_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    pthread_once(&matio_log_once, install_matio_log);
    matio_message[0] = '\0';
    mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
    if (!mat)
        return vl_fail(VL_ERR_INPUT, "%s: not a readable MAT file (%s)", path, matio_detail());
    char name[256];
    vl_status status = choose_variable(mat, options->mat_variable, path, name, sizeof name);
    matvar_t *var = NULL;
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
    const int64_t rows = (int64_t)var->dims[0], cols = (int64_t)var->dims[1];
    const int64_t pages = var->rank > 2 ? (int64_t)var->dims[2] : 1;
    if (rows * cols * pages <= 0) {
        Mat_VarFree(var);
        return vl_fail(VL_ERR_INPUT, "%s: variable '%s' is empty", path, name);
    }
    /* Narrow first, in MATLAB's order (which is the matlab-xy layout), then reorder the narrow type: the array
     * libmatio read (malloc'd; taken over here so it is not copied) is usually double, 8 bytes a voxel. */
    vl_volume matlab_order;
    memset(&matlab_order, 0, sizeof matlab_order);
    vl_geometry_identity(&matlab_order.geometry);
    matlab_order.nx = rows;
    matlab_order.ny = cols;
    matlab_order.nz = pages;
    void *samples = var->data;
    var->data = NULL;
    Mat_VarFree(var);
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
    free(data);
    if (status != VL_OK) {
        vl_atomic_file_discard(&file);
        return status;
    }
    vl_progress_report(&options->progress, "writing", 1.0);
    return vl_atomic_file_commit(&file);
}
