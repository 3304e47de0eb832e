/* Max-flow and MOG2 benchmark (issue 23, G5): voxlabel's CPU and GPU solvers on the same segmentation-like grid
 * graphs, and MOG2 frames per second on a synthetic cine; bench/graphcut_bench.sh adds the peers (PyMaxflow,
 * OpenCV) and bench/graphcut_device_run.sh runs it on the GPU machine.
 *   graphcut_bench maxflow NX NY NZ CONN REPEAT cpu|gpu|both|launched [GRAPH_FILE|-] [RELABEL_INTERVAL]
 *   graphcut_bench mog2 WIDTH HEIGHT FRAMES cpu|gpu
 * "launched" times the GPU solver with one launch per phase even where the grid would run persistent; "both"
 * ends with the GPU's speed-up over BK on one core, solve over solve and total over total.
 * The graph: blobs (discs or balls) of intensity 1 on 0 with Gaussian noise of sigma 0.6; unary 4 (I - 1/2)
 * nats, boundary 50 exp(-beta dI^2) / dist, both in 1/64 nat as `voxlabel cut` quantises them. GRAPH_FILE, when
 * given, receives it in graphcut_tool's format for the PyMaxflow peer. Times are medians of REPEAT runs;
 * "total" is the whole vl_maxflow call (graph upload included), "solve" the solver proper. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphcut/maxflow_internal.h"
#include "voxlabel/background.h"
#include "voxlabel/graphcut.h"
#include "bench_clock.h"

static uint64_t state = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}
static double gaussian(void)
{
    return sqrt(-2.0 * log(uniform() + 1e-300)) * cos(6.283185307179586 * uniform());
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int make_graph(vl_grid_graph *g, int64_t nx, int64_t ny, int64_t nz, int connectivity)
{
    if (vl_grid_graph_create(g, nx, ny, nz, connectivity) != VL_OK) {
        fprintf(stderr, "graph: %s\n", vl_last_error());
        return 0;
    }
    const int64_t n = nx * ny * nz;
    float *image = malloc((size_t)n * sizeof *image);
    double centre[12][3], radius[12];
    for (int b = 0; b < 12; b++) {
        centre[b][0] = uniform() * (double)nx, centre[b][1] = uniform() * (double)ny, centre[b][2] = uniform() * (double)nz;
        radius[b] = (0.05 + 0.1 * uniform()) * (double)(nx < ny ? nx : ny);
    }
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int inside = 0;
                for (int b = 0; b < 12; b++) {
                    double dx = (double)x - centre[b][0], dy = (double)y - centre[b][1];
                    double dz = nz > 1 ? (double)z - centre[b][2] : 0;
                    inside |= dx * dx + dy * dy + dz * dz <= radius[b] * radius[b];
                }
                image[x + nx * (y + ny * z)] = (float)(inside + 0.6 * gaussian());
            }
    const int D = vl_grid_directions(connectivity);
    int offsets[26][3];
    for (int d = 0; d < D; d++)
        vl_grid_direction_offset(connectivity, d, offsets[d]);
    double sum = 0;
    int64_t pairs = 0;
    for (int pass = 0; pass < 2; pass++) {
        const double beta = pass ? 1.0 / (2.0 * sum / (double)pairs) : 0;
        for (int64_t z = 0; z < nz; z++)
            for (int64_t y = 0; y < ny; y++)
                for (int64_t x = 0; x < nx; x++) {
                    int64_t p = x + nx * (y + ny * z);
                    for (int d = 0; d < D; d++) {
                        int64_t qx = x + offsets[d][0], qy = y + offsets[d][1], qz = z + offsets[d][2];
                        if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
                            continue;
                        double diff = image[p] - image[qx + nx * (qy + ny * qz)];
                        if (!pass) {
                            sum += diff * diff;
                            pairs++;
                            continue;
                        }
                        double dist = sqrt((double)(offsets[d][0] * offsets[d][0] + offsets[d][1] * offsets[d][1] +
                                                    offsets[d][2] * offsets[d][2]));
                        g->arc_cap[p * D + d] = (int32_t)floor(64 * 50 * exp(-beta * diff * diff) / dist + 0.5);
                    }
                    if (pass) {
                        double unary = 4.0 * (image[p] - 0.5);
                        g->source_cap[p] = unary > 0 ? (int32_t)floor(64 * unary + 0.5) : 0;
                        g->sink_cap[p] = unary < 0 ? (int32_t)floor(-64 * unary + 0.5) : 0;
                    }
                }
    }
    free(image);
    return 1;
}

static void write_graph(const vl_grid_graph *g, const char *path)
{
    FILE *out = fopen(path, "wb");
    int64_t dims[3] = {g->nx, g->ny, g->nz}, n = g->nx * g->ny * g->nz;
    int32_t connectivity = g->connectivity;
    size_t D = (size_t)vl_grid_directions(g->connectivity);
    if (!out || fwrite(dims, sizeof dims, 1, out) != 1 || fwrite(&connectivity, 4, 1, out) != 1 ||
        fwrite(g->source_cap, 4, (size_t)n, out) != (size_t)n || fwrite(g->sink_cap, 4, (size_t)n, out) != (size_t)n ||
        fwrite(g->arc_cap, 4, (size_t)n * D, out) != (size_t)n * D || fclose(out) != 0)
        fprintf(stderr, "%s: cannot write the graph\n", path);
}

static int bench_maxflow(int argc, char **argv)
{
    int64_t nx = atoll(argv[2]), ny = atoll(argv[3]), nz = atoll(argv[4]);
    int connectivity = atoi(argv[5]), repeat = atoi(argv[6]);
    const char *which = argv[7];
    vl_grid_graph g;
    if (repeat < 1 || !make_graph(&g, nx, ny, nz, connectivity))
        return 2;
    char why[256];
    if (strcmp(which, "cpu") && !vl_device_gpu_usable(0, why, sizeof why)) /* the CUDA context, outside the timing */
        printf("maxflow gpu: %s\n", why);
    if (argc > 8 && strcmp(argv[8], "-") != 0)
        write_graph(&g, argv[8]);
    const int64_t interval = argc > 9 ? atoll(argv[9]) : 0;
    const int launched = strcmp(which, "launched") == 0;
    int64_t flows[2] = {-1, -1};
    double medians[2][2] = {{0, 0}, {0, 0}}; /* [gpu][total, solve] */
    for (int gpu = 0; gpu < 2; gpu++) {
        if (strcmp(which, "both") && strcmp(which, gpu ? "gpu" : "cpu") && !(gpu && launched))
            continue;
        vl_maxflow_options options;
        vl_maxflow_options_default(&options);
        options.device.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU;
        options.gpu_relabel_interval = interval;
        double *total = malloc((size_t)repeat * sizeof *total), *solve = malloc((size_t)repeat * sizeof *solve);
        vl_maxflow_result result;
        int ok = 1;
        for (int r = 0; r < repeat && ok; r++) {
            double start = now();
            ok = (launched ? vl_maxflow_gpu(&g, NULL, interval, 0, &result) : vl_maxflow(&g, NULL, &options, &result)) ==
                 VL_OK;
            total[r] = now() - start;
            solve[r] = result.solve_seconds;
        }
        if (!ok) {
            printf("maxflow %lldx%lldx%lld c%d %s: failed: %s\n", (long long)nx, (long long)ny, (long long)nz,
                   connectivity, gpu ? "gpu" : "cpu", vl_last_error());
            free(total), free(solve);
            continue;
        }
        qsort(total, (size_t)repeat, sizeof *total, compare_double);
        qsort(solve, (size_t)repeat, sizeof *solve, compare_double);
        flows[gpu] = result.flow;
        char name[64];
        snprintf(name, sizeof name, !gpu ? "cpu (BK, 1 core)" : launched ? "gpu launched (relabel every %lld)" : "gpu (relabel every %lld)",
                 (long long)(interval > 0 ? interval : VL_MAXFLOW_RELABEL_INTERVAL));
        medians[gpu][0] = total[repeat / 2], medians[gpu][1] = solve[repeat / 2];
        printf("maxflow %lldx%lldx%lld c%d %s: flow %lld, total %.3f ms, solve %.3f ms (median of %d), %lld %s",
               (long long)nx, (long long)ny, (long long)nz, connectivity, name,
               (long long)result.flow, 1e3 * total[repeat / 2], 1e3 * solve[repeat / 2], repeat,
               (long long)result.iterations, gpu ? "sweeps" : "augmenting paths");
        if (gpu)
            printf(", %lld global relabels, %lld kernel launches", (long long)result.gpu_relabels,
                   (long long)result.gpu_launches);
        printf("\n");
        free(total), free(solve);
    }
    vl_grid_graph_free(&g);
    if (flows[0] >= 0 && flows[1] >= 0 && medians[1][0] > 0 && medians[1][1] > 0)
        printf("maxflow %lldx%lldx%lld c%d gpu speed-up over BK on one core: solve %.1fx, total %.1fx\n", (long long)nx,
               (long long)ny, (long long)nz, connectivity, medians[0][1] / medians[1][1], medians[0][0] / medians[1][0]);
    if (flows[0] >= 0 && flows[1] >= 0 && flows[0] != flows[1]) {
        printf("FAIL: GPU flow %lld != CPU flow %lld\n", (long long)flows[1], (long long)flows[0]);
        return 1;
    }
    return 0;
}

static int bench_mog2(char **argv)
{
    int64_t w = atoll(argv[2]), h = atoll(argv[3]), frames = atoll(argv[4]);
    int gpu = strcmp(argv[5], "gpu") == 0;
    vl_volume sequence, foreground;
    if (vl_volume_create(&sequence, w, h, frames, VL_U8) != VL_OK)
        return 2;
    /* A textured background, 8 noise fields (sigma 6) used in turn, and a disc moving 5 pixels a frame. */
    uint8_t *data = sequence.data;
    float *texture = malloc((size_t)(w * h) * sizeof *texture);
    int8_t *noise = malloc((size_t)(8 * w * h));
    for (int64_t i = 0; i < w * h; i++)
        texture[i] = (float)(90 + 40 * sin((double)(i % w) / 23) * cos((double)(i / w) / 31));
    for (int64_t i = 0; i < 8 * w * h; i++)
        noise[i] = (int8_t)lround(fmax(-100, fmin(100, 6 * gaussian())));
    const int64_t r = h / 14;
    for (int64_t z = 0; z < frames; z++) {
        const int8_t *n = noise + (z % 8) * w * h;
        const int64_t cx = (z * 5) % w, cy = h / 2;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                int64_t i = x + w * y;
                double value = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r ? 200 : texture[i] + n[i];
                data[i + w * h * z] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
            }
    }
    free(texture);
    free(noise);
    vl_background_options options;
    vl_background_options_default(&options);
    options.device.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU;
    char why[256];
    if (gpu && !vl_device_gpu_usable(0, why, sizeof why)) /* also creates the CUDA context outside the timing */
        printf("mog2 gpu: %s\n", why);
    double start = now();
    vl_status status = vl_background_mog2(&sequence, &foreground, &options, NULL);
    double seconds = now() - start;
    if (status != VL_OK) {
        printf("mog2 %lldx%lld %s: failed: %s\n", (long long)w, (long long)h, argv[5], vl_last_error());
        return 1;
    }
    printf("mog2 %lldx%lld x %lld frames %s: %.1f ms, %.0f frames/s (upload and download included)\n", (long long)w,
           (long long)h, (long long)frames, gpu ? "gpu" : "cpu (all cores)", 1e3 * seconds, (double)frames / seconds);
    vl_volume_free(&foreground);
    vl_volume_free(&sequence);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 8 && strcmp(argv[1], "maxflow") == 0)
        return bench_maxflow(argc, argv);
    if (argc == 6 && strcmp(argv[1], "mog2") == 0)
        return bench_mog2(argv);
    fprintf(stderr, "usage: graphcut_bench maxflow NX NY NZ CONN REPEAT cpu|gpu|both|launched [GRAPH_FILE|-] [RELABEL_INTERVAL]\n"
                    "       graphcut_bench mog2 WIDTH HEIGHT FRAMES cpu|gpu\n");
    return 2;
}
