/* MAT v7.3 through HDF5 itself: the storage check made before libmatio allocates, and the direct read of the
 * numeric datasets libmatio does not list (hdf5storage's files). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mat_hdf5.h"
#include "voxlabel/error.h"

enum { HDF5_DEFAULT = 0, HDF5_ALL = 0, HDF5_INDEX_NAME = 0, HDF5_ITER_INC = 0 };
enum { HDF5_CLASS_INTEGER = 0, HDF5_CLASS_FLOAT = 1, HDF5_CLASS_STRING = 3 };
#define VL_DEFLATE_MAX_RATIO 1032u

static vl_hdf5 symbols;
static pthread_once_t symbols_once = PTHREAD_ONCE_INIT;

static void look_up(void)
{
    *(void **)&symbols.eset_auto2 = dlsym(RTLD_DEFAULT, "H5Eset_auto2");
    *(void **)&symbols.open = dlsym(RTLD_DEFAULT, "H5open");
    *(void **)&symbols.fopen = dlsym(RTLD_DEFAULT, "H5Fopen");
    *(void **)&symbols.fclose = dlsym(RTLD_DEFAULT, "H5Fclose");
    *(void **)&symbols.dopen2 = dlsym(RTLD_DEFAULT, "H5Dopen2");
    *(void **)&symbols.dclose = dlsym(RTLD_DEFAULT, "H5Dclose");
    *(void **)&symbols.dread = dlsym(RTLD_DEFAULT, "H5Dread");
    *(void **)&symbols.dget_storage_size = dlsym(RTLD_DEFAULT, "H5Dget_storage_size");
    *(void **)&symbols.dget_space = dlsym(RTLD_DEFAULT, "H5Dget_space");
    *(void **)&symbols.dget_type = dlsym(RTLD_DEFAULT, "H5Dget_type");
    *(void **)&symbols.sget_simple_extent_npoints = dlsym(RTLD_DEFAULT, "H5Sget_simple_extent_npoints");
    *(void **)&symbols.sget_simple_extent_ndims = dlsym(RTLD_DEFAULT, "H5Sget_simple_extent_ndims");
    *(void **)&symbols.sget_simple_extent_dims = dlsym(RTLD_DEFAULT, "H5Sget_simple_extent_dims");
    *(void **)&symbols.sclose = dlsym(RTLD_DEFAULT, "H5Sclose");
    *(void **)&symbols.tget_class = dlsym(RTLD_DEFAULT, "H5Tget_class");
    *(void **)&symbols.tget_size = dlsym(RTLD_DEFAULT, "H5Tget_size");
    *(void **)&symbols.tclose = dlsym(RTLD_DEFAULT, "H5Tclose");
    *(void **)&symbols.aexists = dlsym(RTLD_DEFAULT, "H5Aexists");
    *(void **)&symbols.aopen = dlsym(RTLD_DEFAULT, "H5Aopen");
    *(void **)&symbols.aget_type = dlsym(RTLD_DEFAULT, "H5Aget_type");
    *(void **)&symbols.aread = dlsym(RTLD_DEFAULT, "H5Aread");
    *(void **)&symbols.aclose = dlsym(RTLD_DEFAULT, "H5Aclose");
    *(void **)&symbols.lget_name_by_idx = dlsym(RTLD_DEFAULT, "H5Lget_name_by_idx");
    /* HDF5 prints its error stack to stderr by default; the library must not print. */
    if (symbols.eset_auto2)
        symbols.eset_auto2(0, NULL, NULL);
}

const vl_hdf5 *vl_hdf5_symbols(void)
{
    pthread_once(&symbols_once, look_up);
    return &symbols;
}

vl_status vl_mat73_check_storage(const char *path, const char *name)
{
    const vl_hdf5 *h = vl_hdf5_symbols();
    if (!h->fopen || !h->fclose || !h->dopen2 || !h->dclose || !h->dget_storage_size || !h->dget_space ||
        !h->dget_type || !h->sget_simple_extent_npoints || !h->sclose || !h->tget_size || !h->tclose)
        return VL_OK;
    vl_status status = VL_OK;
    const vl_hid file = h->fopen(path, 0u, HDF5_DEFAULT);
    if (file < 0)
        return VL_OK; /* the reader answers */
    const vl_hid dataset = h->dopen2(file, name, HDF5_DEFAULT);
    if (dataset >= 0) {
        const vl_hid space = h->dget_space(dataset), type = h->dget_type(dataset);
        const int64_t points = space >= 0 ? h->sget_simple_extent_npoints(space) : -1;
        const size_t element = type >= 0 ? h->tget_size(type) : 0;
        const uint64_t stored = h->dget_storage_size(dataset);
        if (points > 0 && element > 0) {
            const uint64_t element_bytes = element < 8 ? 8 : element; /* libmatio may widen to double */
            const uint64_t claimed = (uint64_t)points > UINT64_MAX / element_bytes ? UINT64_MAX
                                                                                   : (uint64_t)points * element_bytes;
            const uint64_t room = stored > (UINT64_MAX - ((uint64_t)1 << 20)) / VL_DEFLATE_MAX_RATIO
                                      ? UINT64_MAX
                                      : stored * VL_DEFLATE_MAX_RATIO + ((uint64_t)1 << 20);
            if (claimed > room)
                status = vl_fail(VL_ERR_INPUT,
                                 "%s: variable '%s' claims %lld elements but only %llu bytes of it are stored (a "
                                 "sparse or truncated HDF5 dataset)",
                                 path, name, (long long)points, (unsigned long long)stored);
        }
        if (type >= 0)
            h->tclose(type);
        if (space >= 0)
            h->sclose(space);
        h->dclose(dataset);
    }
    h->fclose(file);
    return status;
}

/* MATLAB_class names of the numeric classes, the sample type they hold and HDF5's native type for it. */
static const struct {
    const char *name;
    vl_sample_type type;
    const char *native;
} classes[] = {
    {"double", VL_SAMPLE_F64, "H5T_NATIVE_DOUBLE_g"}, {"single", VL_SAMPLE_F32, "H5T_NATIVE_FLOAT_g"},
    {"int8", VL_SAMPLE_I8, "H5T_NATIVE_SCHAR_g"},     {"uint8", VL_SAMPLE_U8, "H5T_NATIVE_UCHAR_g"},
    {"int16", VL_SAMPLE_I16, "H5T_NATIVE_SHORT_g"},   {"uint16", VL_SAMPLE_U16, "H5T_NATIVE_USHORT_g"},
    {"int32", VL_SAMPLE_I32, "H5T_NATIVE_INT_g"},     {"uint32", VL_SAMPLE_U32, "H5T_NATIVE_UINT_g"},
    {"int64", VL_SAMPLE_I64, "H5T_NATIVE_LLONG_g"},   {"uint64", VL_SAMPLE_U64, "H5T_NATIVE_ULLONG_g"},
    {"logical", VL_SAMPLE_U8, "H5T_NATIVE_UCHAR_g"},
};

/* The dataset's MATLAB_class, whatever its string padding: the index into classes[], or -1. */
static int matlab_class(const vl_hdf5 *h, vl_hid dataset)
{
    if (h->aexists(dataset, "MATLAB_class") <= 0)
        return -1;
    const vl_hid attribute = h->aopen(dataset, "MATLAB_class", HDF5_DEFAULT);
    if (attribute < 0)
        return -1;
    int found = -1;
    const vl_hid type = h->aget_type(attribute);
    if (type >= 0 && h->tget_class(type) == HDF5_CLASS_STRING) {
        char text[32] = {0};
        const size_t size = h->tget_size(type);
        if (size > 0 && size < sizeof text && h->aread(attribute, type, text) >= 0) {
            for (size_t n = strlen(text); n > 0 && (text[n - 1] == ' ' || !isprint((unsigned char)text[n - 1]));)
                text[--n] = '\0';
            for (size_t c = 0; c < sizeof classes / sizeof classes[0]; c++)
                if (strcmp(text, classes[c].name) == 0)
                    found = (int)c;
        }
    }
    if (type >= 0)
        h->tclose(type);
    h->aclose(attribute);
    return found;
}

/* Opens `name` when it is a real numeric dataset of rank 2 or 3 (trailing singleton dimensions allowed):
 * its class index, MATLAB's size (the HDF5 dimensions reversed) and element count; -1 otherwise. */
static int numeric_dataset(const vl_hdf5 *h, vl_hid file, const char *name, vl_hid *dataset, int64_t size[3])
{
    *dataset = h->dopen2(file, name, HDF5_DEFAULT);
    if (*dataset < 0)
        return -1;
    int found = matlab_class(h, *dataset);
    const vl_hid type = h->dget_type(*dataset), space = h->dget_space(*dataset);
    const int type_class = type >= 0 ? h->tget_class(type) : -1;
    if (type_class != HDF5_CLASS_INTEGER && type_class != HDF5_CLASS_FLOAT) /* complex: a compound */
        found = -1;
    uint64_t dims[32];
    const int rank = space >= 0 ? h->sget_simple_extent_ndims(space) : -1;
    if (found >= 0 && (rank < 2 || rank > 32 || h->sget_simple_extent_dims(space, dims, NULL) < 0))
        found = -1;
    for (int d = 0; found >= 0 && d < rank - 3; d++) /* MATLAB's trailing dimensions come first in HDF5 */
        if (dims[d] != 1)
            found = -1;
    if (found >= 0) {
        size[0] = (int64_t)dims[rank - 1];
        size[1] = (int64_t)dims[rank - 2];
        size[2] = rank > 2 ? (int64_t)dims[rank - 3] : 1;
    }
    if (type >= 0)
        h->tclose(type);
    if (space >= 0)
        h->sclose(space);
    if (found < 0) {
        h->dclose(*dataset);
        *dataset = -1;
    }
    return found;
}

vl_status vl_mat73_read_direct(const char *path, const char *requested, void **samples, vl_sample_type *type,
                               int64_t size[3], char *name, size_t name_size, int *found)
{
    *found = 0;
    *samples = NULL;
    const vl_hdf5 *h = vl_hdf5_symbols();
    if (!h->open || !h->fopen || !h->dopen2 || !h->dread || !h->aexists || !h->aopen || !h->aget_type ||
        !h->aread || !h->aclose || !h->tget_class || !h->sget_simple_extent_ndims || !h->sget_simple_extent_dims ||
        !h->lget_name_by_idx)
        return VL_OK;
    h->open();
    const vl_hid file = h->fopen(path, 0u, HDF5_DEFAULT);
    if (file < 0)
        return VL_OK;
    vl_hid dataset = -1;
    int class_index = -1;
    if (requested) {
        snprintf(name, name_size, "%s", requested);
        class_index = numeric_dataset(h, file, requested, &dataset, size);
    } else {
        for (uint64_t n = 0; class_index < 0; n++) {
            char candidate[256];
            const long length = h->lget_name_by_idx(file, ".", HDF5_INDEX_NAME, HDF5_ITER_INC, n, candidate,
                                                    sizeof candidate, HDF5_DEFAULT);
            if (length < 0)
                break;
            if ((size_t)length >= sizeof candidate || candidate[0] == '#') /* #refs#, #subsystem#: MATLAB's own */
                continue;
            class_index = numeric_dataset(h, file, candidate, &dataset, size);
            if (class_index >= 0)
                snprintf(name, name_size, "%s", candidate);
        }
    }
    vl_status status = VL_OK;
    if (class_index >= 0) {
        *found = 1;
        *type = classes[class_index].type;
        const vl_hid *native = dlsym(RTLD_DEFAULT, classes[class_index].native);
        int64_t bytes = 0;
        status = vl_size_product(size[0], size[1], size[2], (int64_t)vl_sample_size(*type), path, &bytes);
        if (status == VL_OK && bytes == 0)
            status = vl_fail(VL_ERR_INPUT, "%s: variable '%s' is empty", path, name);
        if (status == VL_OK && !native)
            status = vl_fail(VL_ERR_INPUT, "%s: variable '%s': this HDF5 has no native %s type", path, name,
                             classes[class_index].name);
        if (status == VL_OK)
            status = vl_mat73_check_storage(path, name);
        if (status == VL_OK && !(*samples = malloc((size_t)bytes)))
            status = vl_fail(VL_ERR_MEMORY, "%s: cannot allocate %lld bytes for variable '%s'", path, (long long)bytes,
                             name);
        if (status == VL_OK && h->dread(dataset, *native, HDF5_ALL, HDF5_ALL, HDF5_DEFAULT, *samples) < 0)
            status = vl_fail(VL_ERR_INPUT, "%s: cannot read variable '%s' (corrupt HDF5 data)", path, name);
        if (status != VL_OK) {
            free(*samples);
            *samples = NULL;
        }
        h->dclose(dataset);
    }
    h->fclose(file);
    return status;
}
