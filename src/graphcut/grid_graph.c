/* Grid graphs: the direction table shared by every solver, allocation, and the energy of a labelling. */
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "voxlabel/graphcut.h"

/* Half of each neighbourhood; direction 2k is +half[k] and 2k+1 is -half[k], so d ^ 1 reverses d. */
static const int half_4[2][3] = {{1, 0, 0}, {0, 1, 0}};
static const int half_8[4][3] = {{1, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, -1, 0}};
static const int half_6[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

int vl_grid_directions(int connectivity)
{
    switch (connectivity) {
    case 4: return 4;
    case 8: return 8;
    case 6: return 6;
    case 26: return 26;
    default: return 0;
    }
}

/* The 26-neighbourhood's half: faces first (as half_6), then the 10 remaining offsets that come later in
 * raster order (dz > 0, or dz == 0 and dy > 0, or dz == dy == 0 and dx > 0). */
static void half_26(int k, int offset[3])
{
    if (k < 3) {
        memcpy(offset, half_6[k], sizeof half_6[k]);
        return;
    }
    int seen = 3;
    for (int dz = 0; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int later = dz > 0 || (dz == 0 && dy > 0) || (dz == 0 && dy == 0 && dx > 0);
                int face = abs(dx) + abs(dy) + abs(dz) == 1;
                if (!later || face)
                    continue;
                if (seen++ == k) {
                    offset[0] = dx, offset[1] = dy, offset[2] = dz;
                    return;
                }
            }
}

void vl_grid_direction_offset(int connectivity, int d, int offset[3])
{
    int k = d >> 1, sign = d & 1 ? -1 : 1;
    switch (connectivity) {
    case 4: memcpy(offset, half_4[k], 3 * sizeof(int)); break;
    case 8: memcpy(offset, half_8[k], 3 * sizeof(int)); break;
    case 6: memcpy(offset, half_6[k], 3 * sizeof(int)); break;
    default: half_26(k, offset); break;
    }
    for (int c = 0; c < 3; c++)
        offset[c] *= sign;
}

vl_status vl_grid_graph_create(vl_grid_graph *graph, int64_t nx, int64_t ny, int64_t nz, int connectivity)
{
    memset(graph, 0, sizeof *graph);
    int directions = vl_grid_directions(connectivity);
    if (!directions)
        return vl_fail(VL_ERR_ARGUMENT, "graph cut: connectivity %d is not 4, 8, 6 or 26", connectivity);
    if ((connectivity == 4 || connectivity == 8) && nz != 1)
        return vl_fail(VL_ERR_ARGUMENT, "graph cut: connectivity %d is planar, but the grid has %lld slices "
                       "(use 6 or 26)", connectivity, (long long)nz);
    int64_t bytes;
    vl_status status = vl_size_product(nx, ny, nz, (int64_t)directions * (int64_t)sizeof(int32_t), "graph cut grid",
                                       &bytes);
    if (status != VL_OK)
        return status;
    if (nx <= 0 || ny <= 0 || nz <= 0)
        return vl_fail(VL_ERR_ARGUMENT, "graph cut: empty grid %lldx%lldx%lld", (long long)nx, (long long)ny,
                       (long long)nz);
    int64_t n = nx * ny * nz;
    graph->nx = nx, graph->ny = ny, graph->nz = nz;
    graph->connectivity = connectivity;
    graph->source_cap = calloc((size_t)n, sizeof(int32_t));
    graph->sink_cap = calloc((size_t)n, sizeof(int32_t));
    graph->arc_cap = calloc((size_t)n * (size_t)directions, sizeof(int32_t));
    if (!graph->source_cap || !graph->sink_cap || !graph->arc_cap) {
        vl_grid_graph_free(graph);
        return vl_fail(VL_ERR_MEMORY, "graph cut: out of memory for a %lldx%lldx%lld grid with %d arcs per node",
                       (long long)nx, (long long)ny, (long long)nz, directions);
    }
    return VL_OK;
}

void vl_grid_graph_free(vl_grid_graph *graph)
{
    if (!graph)
        return;
    free(graph->source_cap);
    free(graph->sink_cap);
    free(graph->arc_cap);
    memset(graph, 0, sizeof *graph);
}

int64_t vl_grid_cut_energy(const vl_grid_graph *graph, const uint8_t *segment)
{
    const int directions = vl_grid_directions(graph->connectivity);
    int offsets[26][3];
    for (int d = 0; d < directions; d++)
        vl_grid_direction_offset(graph->connectivity, d, offsets[d]);
    const int64_t nx = graph->nx, ny = graph->ny, nz = graph->nz;
    int64_t energy = 0;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t p = x + nx * (y + ny * z);
                if (!segment[p]) {
                    energy += graph->source_cap[p];
                    continue;
                }
                energy += graph->sink_cap[p];
                for (int d = 0; d < directions; d++) {
                    int64_t qx = x + offsets[d][0], qy = y + offsets[d][1], qz = z + offsets[d][2];
                    if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
                        continue;
                    if (!segment[qx + nx * (qy + ny * qz)])
                        energy += graph->arc_cap[p * directions + d];
                }
            }
    return energy;
}
