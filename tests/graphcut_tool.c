/* Test tool for the max-flow solvers, driven by graphcut_oracle_maxflow.py and the device run:
 *   graphcut_tool offsets CONN            one "dx dy dz" line per direction of CONN
 *   graphcut_tool maxflow FILE cpu|gpu    reads a grid graph (int64 nx, ny, nz; int32 connectivity; int32
 *                                         source[n], sink[n], arcs[n * directions]), prints
 *                                         "flow ENERGY iterations N" where ENERGY is the energy of the
 *                                         returned labelling; exit 77 for gpu without a usable device */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/graphcut.h"

static int read_graph(const char *path, vl_grid_graph *graph)
{
    FILE *file = fopen(path, "rb");
    int64_t dims[3];
    int32_t connectivity;
    if (!file || fread(dims, sizeof dims, 1, file) != 1 || fread(&connectivity, 4, 1, file) != 1) {
        fprintf(stderr, "%s: cannot read the header\n", path);
        return 0;
    }
    if (vl_grid_graph_create(graph, dims[0], dims[1], dims[2], connectivity) != VL_OK) {
        fprintf(stderr, "%s: %s\n", path, vl_last_error());
        fclose(file);
        return 0;
    }
    size_t n = (size_t)(dims[0] * dims[1] * dims[2]), D = (size_t)vl_grid_directions(connectivity);
    int ok = fread(graph->source_cap, 4, n, file) == n && fread(graph->sink_cap, 4, n, file) == n &&
             fread(graph->arc_cap, 4, n * D, file) == n * D;
    fclose(file);
    if (!ok)
        fprintf(stderr, "%s: truncated\n", path);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "offsets") == 0) {
        int connectivity = atoi(argv[2]);
        for (int d = 0; d < vl_grid_directions(connectivity); d++) {
            int o[3];
            vl_grid_direction_offset(connectivity, d, o);
            printf("%d %d %d\n", o[0], o[1], o[2]);
        }
        return 0;
    }
    if (argc != 4 || strcmp(argv[1], "maxflow") != 0) {
        fprintf(stderr, "usage: graphcut_tool offsets CONN | maxflow FILE cpu|gpu\n");
        return 2;
    }
    vl_grid_graph graph;
    if (!read_graph(argv[2], &graph))
        return 1;
    vl_maxflow_options options;
    vl_maxflow_options_default(&options);
    int gpu = strcmp(argv[3], "gpu") == 0;
    options.device.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU;
    if (gpu) {
        char why[256];
        if (!vl_device_gpu_usable(0, why, sizeof why))
            TEST_SKIP("no usable GPU: %s", why);
    }
    int64_t n = graph.nx * graph.ny * graph.nz;
    uint8_t *segment = malloc((size_t)n);
    vl_maxflow_result result;
    vl_status status = vl_maxflow(&graph, segment, &options, &result);
    CHECK(status == VL_OK, "vl_maxflow failed");
    if (status == VL_OK)
        printf("%lld %lld iterations %lld\n", (long long)result.flow,
               (long long)vl_grid_cut_energy(&graph, segment), (long long)result.iterations);
    free(segment);
    vl_grid_graph_free(&graph);
    return failures ? 1 : 0;
}
