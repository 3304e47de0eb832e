/* GPU == CPU for the max-flow solvers (label gpu; exit 77 without a usable device): on random grid graphs of
 * every connectivity, uniform and segmentation-like, the GPU's flow equals the CPU's (Boykov-Kolmogorov)
 * exactly and the GPU's cut has energy equal to that flow, with both GPU drivers (one persistent cooperative
 * launch where the grid fits, one launch per phase otherwise). Sizes up to 1024^2 and 64^3.
 * usage: graphcut_gpu [quick] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphcut/maxflow_internal.h"
#include "test_check.h"
#include "voxlabel/graphcut.h"

/* Uniform: every capacity random. Blobs: terminal capacities from a few random discs/balls (a
 * segmentation-like unary), pair capacities strong and random. */
static void fill(vl_grid_graph *g, int blobs)
{
    const int D = vl_grid_directions(g->connectivity);
    const int64_t n = g->nx * g->ny * g->nz;
    double centre[6][3], radius[6];
    for (int b = 0; b < 6; b++) {
        centre[b][0] = (double)(test_random() % (uint64_t)g->nx);
        centre[b][1] = (double)(test_random() % (uint64_t)g->ny);
        centre[b][2] = (double)(test_random() % (uint64_t)g->nz);
        radius[b] = 3.0 + (double)(test_random() % 20);
    }
    for (int64_t p = 0; p < n; p++) {
        if (blobs) {
            int64_t x = p % g->nx, y = (p / g->nx) % g->ny, z = p / (g->nx * g->ny);
            int inside = 0;
            for (int b = 0; b < 6; b++) {
                double dx = (double)x - centre[b][0], dy = (double)y - centre[b][1], dz = (double)z - centre[b][2];
                inside |= dx * dx + dy * dy + dz * dz <= radius[b] * radius[b];
            }
            int noise = (int)(test_random() % 60);
            g->source_cap[p] = inside ? 40 + noise : (noise < 10 ? noise : 0);
            g->sink_cap[p] = inside ? (noise < 10 ? noise : 0) : 40 + noise;
        } else {
            g->source_cap[p] = (int32_t)(test_random() % 100);
            g->sink_cap[p] = (int32_t)(test_random() % 100);
        }
        for (int d = 0; d < D; d++)
            g->arc_cap[p * D + d] = (int32_t)(blobs ? 10 + test_random() % 50 : test_random() % 60);
    }
}

/* persistent: 1 = vl_maxflow's choice (persistent where the grid fits), 0 = one launch per phase. */
static void compare_driver(int64_t nx, int64_t ny, int64_t nz, int connectivity, int blobs, int persistent)
{
    vl_grid_graph g;
    if (vl_grid_graph_create(&g, nx, ny, nz, connectivity) != VL_OK) {
        CHECK(0, "graph %lldx%lldx%lld c%d", (long long)nx, (long long)ny, (long long)nz, connectivity);
        return;
    }
    fill(&g, blobs);
    uint8_t *segment = malloc((size_t)(nx * ny * nz));
    vl_maxflow_options cpu, gpu;
    vl_maxflow_options_default(&cpu);
    vl_maxflow_options_default(&gpu);
    cpu.device.kind = VL_DEVICE_CPU;
    gpu.device.kind = VL_DEVICE_GPU;
    vl_maxflow_result want, got;
    CHECK(vl_maxflow(&g, NULL, &cpu, &want) == VL_OK, "CPU max-flow");
    vl_status status = persistent ? vl_maxflow(&g, segment, &gpu, &got) : vl_maxflow_gpu(&g, segment, 0, 0, &got);
    CHECK(status == VL_OK, "GPU max-flow");
    if (status == VL_OK) {
        int64_t energy = vl_grid_cut_energy(&g, segment);
        CHECK(got.flow == want.flow, "%lldx%lldx%lld c%d %s: GPU flow %lld, CPU %lld", (long long)nx, (long long)ny,
              (long long)nz, connectivity, blobs ? "blobs" : "uniform", (long long)got.flow, (long long)want.flow);
        CHECK(energy == got.flow, "%lldx%lldx%lld c%d: GPU cut energy %lld != flow %lld", (long long)nx, (long long)ny,
              (long long)nz, connectivity, (long long)energy, (long long)got.flow);
        printf("%lldx%lldx%lld c%-2d %-7s %-8s flow %lld (CPU %lld), %lld sweeps, %lld global relabels, %lld launches\n",
               (long long)nx, (long long)ny, (long long)nz, connectivity, blobs ? "blobs" : "uniform",
               persistent ? "auto" : "launched", (long long)got.flow, (long long)want.flow, (long long)got.iterations,
               (long long)got.gpu_relabels, (long long)got.gpu_launches);
    }
    free(segment);
    vl_grid_graph_free(&g);
}

static void compare(int64_t nx, int64_t ny, int64_t nz, int connectivity, int blobs)
{
    compare_driver(nx, ny, nz, connectivity, blobs, 1);
}

int main(int argc, char **argv)
{
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    test_random_state = 0x2323232323ull;
    compare(1, 1, 1, 4, 0);
    compare(7, 5, 1, 4, 0);
    compare(64, 64, 1, 4, 0);
    compare(64, 64, 1, 8, 0);
    compare(100, 37, 1, 8, 1);
    compare(16, 16, 16, 6, 0);
    compare(16, 16, 16, 26, 0);
    compare(40, 30, 20, 26, 1);
    compare_driver(100, 37, 1, 8, 1, 0);
    compare_driver(40, 30, 20, 26, 1, 0);
    if (!quick) {
        compare_driver(512, 512, 1, 4, 1, 0);
        compare_driver(64, 64, 64, 6, 1, 0);
        compare(1024, 1024, 1, 4, 1);
        compare(300, 200, 1, 8, 0);
        compare(33, 65, 17, 6, 0);
        compare(96, 96, 96, 6, 1);
        compare(512, 512, 1, 4, 1);
        compare(512, 512, 1, 8, 1);
        compare(256, 256, 1, 4, 0);
        compare(64, 64, 64, 6, 1);
        compare(48, 48, 48, 26, 1);
    }
    return test_finish("graphcut_gpu");
}
