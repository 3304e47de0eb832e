#define _DEFAULT_SOURCE
#include <math.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "voxlabel/error.h"
#include "voxlabel/volume.h"

size_t vl_dtype_size(vl_dtype dtype)
{
    switch (dtype) {
    case VL_U8: return 1;
    case VL_I16:
    case VL_U16: return 2;
    case VL_U32:
    case VL_F32: return 4;
    }
    return 0;
}

const char *vl_dtype_name(vl_dtype dtype)
{
    switch (dtype) {
    case VL_U8: return "u8";
    case VL_I16: return "i16";
    case VL_U16: return "u16";
    case VL_U32: return "u32";
    case VL_F32: return "f32";
    }
    return "unknown";
}

void vl_geometry_identity(vl_geometry *geometry)
{
    memset(geometry, 0, sizeof *geometry);
    for (int axis = 0; axis < 3; axis++) {
        geometry->spacing[axis] = 1.0;
        geometry->direction[3 * axis + axis] = 1.0;
    }
}

void *vl_allocate_large(size_t bytes)
{
    const size_t huge_page = (size_t)2 << 20;
    if (bytes < 2 * huge_page)
        return malloc(bytes ? bytes : 1);
    void *data = NULL;
    if (posix_memalign(&data, huge_page, bytes) != 0)
        return NULL;
    madvise(data, bytes, MADV_HUGEPAGE);
    return data;
}

/* `block` (NULL: none) holds the voxels when its `block_bytes` are enough; otherwise they are allocated. */
static vl_status create_volume(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype, int zeroed,
                               void *block, size_t block_bytes)
{
    memset(volume, 0, sizeof *volume);
    size_t element = vl_dtype_size(dtype);
    if (element == 0)
        return vl_fail(VL_ERR_ARGUMENT, "volume: unknown voxel type %d", (int)dtype);
    if (nx <= 0 || ny <= 0 || nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "volume: dimensions %lldx%lldx%lld must be positive",
                       (long long)nx, (long long)ny, (long long)nz);
    /* Reject sizes whose byte count would overflow before multiplying. */
    if (nx > INT64_MAX / ny || nx * ny > INT64_MAX / nz || (uint64_t)(nx * ny * nz) > (uint64_t)(SIZE_MAX / element))
        return vl_fail(VL_ERR_ARGUMENT, "volume: dimensions %lldx%lldx%lld are too large",
                       (long long)nx, (long long)ny, (long long)nz);
    size_t bytes = (size_t)(nx * ny * nz) * element;
    volume->data = block && bytes <= block_bytes ? block : zeroed ? calloc(1, bytes) : vl_allocate_large(bytes);
    if (!volume->data)
        return vl_fail(VL_ERR_MEMORY, "volume: cannot allocate %zu bytes for %lldx%lldx%lld %s", bytes,
                       (long long)nx, (long long)ny, (long long)nz, vl_dtype_name(dtype));
    volume->nx = nx;
    volume->ny = ny;
    volume->nz = nz;
    volume->dtype = dtype;
    vl_geometry_identity(&volume->geometry);
    return VL_OK;
}

vl_status vl_volume_create(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype)
{
    return create_volume(volume, nx, ny, nz, dtype, 1, NULL, 0);
}

vl_status vl_volume_create_uninitialised(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype)
{
    return create_volume(volume, nx, ny, nz, dtype, 0, NULL, 0);
}

vl_status vl_volume_create_in(vl_volume *volume, int64_t nx, int64_t ny, int64_t nz, vl_dtype dtype, void *block,
                              size_t block_bytes)
{
    return create_volume(volume, nx, ny, nz, dtype, 0, block, block_bytes);
}

void vl_volume_free(vl_volume *volume)
{
    if (!volume)
        return;
    free(volume->data);
    volume->data = NULL;
    volume->nx = volume->ny = volume->nz = 0;
}

void vl_geometry_index_to_lps(const vl_geometry *g, double i, double j, double k, double lps[3])
{
    const double step[3] = {i * g->spacing[0], j * g->spacing[1], k * g->spacing[2]};
    for (int row = 0; row < 3; row++)
        lps[row] = g->origin[row] + g->direction[3 * row] * step[0] + g->direction[3 * row + 1] * step[1] +
                   g->direction[3 * row + 2] * step[2];
}

double vl_geometry_voxel_volume(const vl_geometry *g)
{
    const double *d = g->direction;
    double det = d[0] * (d[4] * d[8] - d[5] * d[7]) - d[1] * (d[3] * d[8] - d[5] * d[6]) +
                 d[2] * (d[3] * d[7] - d[4] * d[6]);
    return fabs(det) * g->spacing[0] * g->spacing[1] * g->spacing[2];
}
