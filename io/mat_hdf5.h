/* Internal: HDF5 for MAT v7.3 files, reached through the symbols libmatio already loaded, so that voxlabel
 * need not link it itself (hid_t is int64_t and hsize_t 64-bit since HDF5 1.10; H5P_DEFAULT, H5S_ALL,
 * H5E_DEFAULT and H5F_ACC_RDONLY are 0). A member is NULL where this HDF5 lacks the symbol. */
#ifndef VL_MAT_HDF5_H
#define VL_MAT_HDF5_H

#include <stddef.h>
#include <stdint.h>

#include "volume_helpers.h"

typedef int64_t vl_hid;

typedef struct vl_hdf5 {
    int (*eset_auto2)(vl_hid, void *, void *);
    int (*open)(void);
    vl_hid (*fopen)(const char *, unsigned, vl_hid);
    int (*fclose)(vl_hid);
    vl_hid (*dopen2)(vl_hid, const char *, vl_hid);
    int (*dclose)(vl_hid);
    int (*dread)(vl_hid, vl_hid, vl_hid, vl_hid, vl_hid, void *);
    uint64_t (*dget_storage_size)(vl_hid);
    vl_hid (*dget_space)(vl_hid);
    vl_hid (*dget_type)(vl_hid);
    int64_t (*sget_simple_extent_npoints)(vl_hid);
    int (*sget_simple_extent_ndims)(vl_hid);
    int (*sget_simple_extent_dims)(vl_hid, uint64_t *, uint64_t *);
    int (*sclose)(vl_hid);
    int (*tget_class)(vl_hid);
    size_t (*tget_size)(vl_hid);
    int (*tclose)(vl_hid);
    int (*aexists)(vl_hid, const char *);
    vl_hid (*aopen)(vl_hid, const char *, vl_hid);
    vl_hid (*aget_type)(vl_hid);
    int (*aread)(vl_hid, vl_hid, void *);
    int (*aclose)(vl_hid);
    long (*lget_name_by_idx)(vl_hid, const char *, int, int, uint64_t, char *, size_t, vl_hid);
} vl_hdf5;

/* The symbols, looked up once; HDF5's own printing of its error stack is switched off. */
const vl_hdf5 *vl_hdf5_symbols(void);

/* v7.3: the dataset's allocated storage must be able to hold its data. Unallocated chunks (a sparse dataset:
 * 2 KB claiming 32 GB) read as the fill value, so a reader would allocate it all; deflate expands at most
 * 1032 times. VL_OK when HDF5 cannot tell (the reader then answers). */
vl_status vl_mat73_check_storage(const char *path, const char *name);

/* A MAT v7.3 file whose numeric arrays libmatio does not list: hdf5storage (Python) writes the MATLAB_class
 * attribute as a null-padded string, which libmatio does not recognise. Reads the dataset `requested` (NULL:
 * the first real numeric dataset of rank 2 or 3 at the root, by name) with HDF5 itself, in MATLAB's
 * column-major order: *samples (malloc'd), its type, MATLAB's size [rows cols pages] and the name.
 * *found = 0 (and VL_OK) when the file holds no such dataset; errors for one that is there but unusable. */
vl_status vl_mat73_read_direct(const char *path, const char *requested, void **samples, vl_sample_type *type,
                               int64_t size[3], char *name, size_t name_size, int *found);

#endif
