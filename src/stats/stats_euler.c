/* The Euler number (objects - tunnels + cavities) of every component by local counting.
 *
 * Cut space into the 2x2x2 windows centred on each lattice point (voxel corner) v. Give v its vertex, the
 * three edges and three faces leaving it in +x, +y, +z and the voxel of which it is the lowest corner: then
 * every cell of the grid belongs to exactly one window, and whether a cell belongs to a component depends only
 * on the window's 8 voxels. At 26-connectivity a component is the union of its closed voxels (a cell is in
 * when any voxel touching it is) and chi = V - E + F - C; at 6-connectivity it is the complex dual to that
 * (a cell is in when every voxel touching it is) and chi = C - F + E - V. So chi is a sum over windows of a
 * 256-entry table, and a window holding several labels adds one entry per label. */
#include <stdlib.h>
#include <string.h>

#include "core/memory.h"
#include "core/parallel.h"
#include "stats/stats_extras.h"
#include "voxlabel/error.h"

int vl_stats_euler_window(unsigned config, int connectivity)
{
    const int all = connectivity == 6;
    /* Cells owned by the window and the voxels touching them: a voxel (dx, dy, dz) touches the cell when
     * it has d = 1 along every axis in which the cell extends. */
    int chi = 0;
    for (unsigned cell = 0; cell < 8; cell++) { /* bit a set: the cell extends along axis a */
        int any = 0, every = 1;
        for (unsigned voxel = 0; voxel < 8; voxel++) {
            if ((voxel & cell) != cell)
                continue;
            const int set = (config >> voxel) & 1;
            any |= set;
            every &= set;
        }
        const int dimension = (cell & 1) + ((cell >> 1) & 1) + ((cell >> 2) & 1);
        const int in = all ? every : any;
        const int sign = dimension % 2 ? -1 : 1;
        chi += in ? sign : 0;
    }
    return all ? -chi : chi;
}

typedef struct euler_job {
    const vl_volume *labels;
    uint32_t count;
    const signed char *table;
    int64_t z_begin, z_end; /* window planes: windows at lattice z cover voxel slices z - 1 and z */
    int64_t *chi;
    int failed;
} euler_job;

/* Row (y, z) of the labels as u32 in `buffer`, or NULL when it lies outside the volume or holds only background. */
static const uint32_t *row_of(const vl_volume *v, int64_t y, int64_t z, uint32_t *buffer)
{
    if (y < 0 || z < 0 || y >= v->ny || z >= v->nz)
        return NULL;
    const int64_t start = v->nx * (y + v->ny * z);
    uint32_t any = 0;
    for (int64_t x = 0; x < v->nx; x++) {
        const uint32_t a = v->dtype == VL_U8    ? ((const uint8_t *)v->data)[start + x]
                           : v->dtype == VL_U16 ? ((const uint16_t *)v->data)[start + x]
                                                : ((const uint32_t *)v->data)[start + x];
        buffer[x] = a;
        any |= a;
    }
    return any ? buffer : NULL;
}

static void *count_windows(void *argument)
{
    euler_job *job = argument;
    const vl_volume *v = job->labels;
    const int64_t nx = v->nx;
    uint32_t *buffers = malloc(sizeof *buffers * (size_t)nx * 4);
    if (!buffers) {
        job->failed = 1;
        return NULL;
    }
    for (int64_t z = job->z_begin; z < job->z_end; z++)
        for (int64_t y = 0; y <= v->ny; y++) {
            /* The window row's four voxel rows, r = dy + 2 dz for voxels (y - 1 + dy, z - 1 + dz). */
            const uint32_t *rows[4];
            int present = 0;
            for (int r = 0; r < 4; r++) {
                rows[r] = row_of(v, y - 1 + (r & 1), z - 1 + (r >> 1), buffers + (size_t)r * (size_t)nx);
                present |= rows[r] != NULL;
            }
            if (!present)
                continue;
            for (int64_t x = 0; x <= nx; x++) {
                uint32_t window[8], any = 0;
                for (int r = 0; r < 4; r++) {
                    window[2 * r] = rows[r] && x > 0 ? rows[r][x - 1] : 0;
                    window[2 * r + 1] = rows[r] && x < nx ? rows[r][x] : 0;
                    any |= window[2 * r] | window[2 * r + 1];
                }
                if (!any)
                    continue;
                for (int i = 0; i < 8; i++) {
                    const uint32_t a = window[i];
                    if (!a)
                        continue;
                    int seen = 0;
                    for (int j = 0; j < i; j++)
                        seen |= window[j] == a;
                    if (seen)
                        continue;
                    unsigned config = 0;
                    for (int j = i; j < 8; j++)
                        config |= (unsigned)(window[j] == a) << j;
                    job->chi[a - 1] += job->table[config];
                }
            }
        }
    free(buffers);
    return NULL;
}

vl_status vl_stats_euler(const vl_volume *labels, uint32_t count, int connectivity, int threads,
                         vl_component_stats *stats)
{
    signed char table[256];
    for (unsigned config = 0; config < 256; config++)
        table[config] = (signed char)vl_stats_euler_window(config, connectivity);
    const int64_t planes = labels->nz + 1;
    if (threads > planes)
        threads = (int)planes;
    int64_t *chi = vl_allocate_large(sizeof *chi * (size_t)count * (size_t)threads);
    if (!chi)
        return vl_fail(VL_ERR_MEMORY, "statistics: no memory for the Euler numbers of %u components", count);
    memset(chi, 0, sizeof *chi * (size_t)count * (size_t)threads);
    euler_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (euler_job){labels, count, table, planes * t / threads, planes * (t + 1) / threads,
                              chi + (size_t)count * (size_t)t, 0};
    vl_run_parallel(count_windows, jobs, sizeof jobs[0], threads);
    for (int t = 0; t < threads; t++)
        if (jobs[t].failed) {
            free(chi);
            return vl_fail(VL_ERR_MEMORY, "statistics: no memory for the Euler rows");
        }
    for (uint32_t k = 0; k < count; k++) {
        int64_t total = 0;
        for (int t = 0; t < threads; t++)
            total += chi[(size_t)count * (size_t)t + k];
        stats[k].euler_number = stats[k].voxels ? (double)total : 0;
    }
    free(chi);
    return VL_OK;
}
