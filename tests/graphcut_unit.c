/* Unit checks of the graph-cut and background library: the direction table, max-flow on hand-solved graphs
 * (terminal-only nodes, a chain, capacities at the 2^30 - 1 limit whose flow passes 2^31), refusals of bad
 * graphs and capacities, the 1D GMM fit, the seed checks and MOG2's parameter and sequence checks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graphcut/gmm1d.h"
#include "test_check.h"
#include "voxlabel/background.h"
#include "voxlabel/graphcut.h"

#define CAP_MAX 1073741823

static int64_t cpu_flow(const vl_grid_graph *g, uint8_t *segment)
{
    vl_maxflow_result result;
    vl_status status = vl_maxflow_cpu(g, segment, &result);
    CHECK(status == VL_OK, "vl_maxflow_cpu");
    return status == VL_OK ? result.flow : -1;
}

static void directions(void)
{
    const int connectivities[] = {4, 8, 6, 26};
    for (int c = 0; c < 4; c++) {
        int conn = connectivities[c], D = vl_grid_directions(conn);
        CHECK(D == conn, "connectivity %d: %d directions", conn, D);
        for (int d = 0; d < D; d++) {
            int a[3], b[3];
            vl_grid_direction_offset(conn, d, a);
            vl_grid_direction_offset(conn, d ^ 1, b);
            CHECK(a[0] == -b[0] && a[1] == -b[1] && a[2] == -b[2], "conn %d: d %d is not the reverse of %d", conn, d, d ^ 1);
            int steps = abs(a[0]) + abs(a[1]) + abs(a[2]);
            CHECK(steps >= 1 && abs(a[0]) <= 1 && abs(a[1]) <= 1 && abs(a[2]) <= 1, "conn %d: offset %d", conn, d);
            CHECK(conn != 6 || steps == 1, "6-connectivity offset %d is not a face", d);
            CHECK((conn != 4 && conn != 8) || a[2] == 0, "planar offset %d leaves the plane", d);
            CHECK(conn != 4 || steps == 1, "4-connectivity offset %d is diagonal", d);
            for (int e = 0; e < d; e++) {
                int o[3];
                vl_grid_direction_offset(conn, e, o);
                CHECK(o[0] != a[0] || o[1] != a[1] || o[2] != a[2], "conn %d: offsets %d and %d repeat", conn, e, d);
            }
        }
    }
    CHECK(vl_grid_directions(18) == 0, "18 is not a grid-cut connectivity");
}

static void hand_solved(void)
{
    vl_grid_graph g;
    uint8_t segment[9];
    /* One node: source 5, sink 3 -> flow 3, the node keeps source residual: source side. */
    CHECK_TRUE(vl_grid_graph_create(&g, 1, 1, 1, 4) == VL_OK);
    g.source_cap[0] = 5, g.sink_cap[0] = 3;
    CHECK(cpu_flow(&g, segment) == 3 && segment[0] == 1, "one node");
    CHECK(vl_grid_cut_energy(&g, segment) == 3, "one node: energy");
    vl_grid_graph_free(&g);

    /* A chain a -> b: source 10 to a, a -> b 4 (b -> a 100, unused), b 10 to the sink -> flow 4, cut at a -> b. */
    CHECK_TRUE(vl_grid_graph_create(&g, 2, 1, 1, 4) == VL_OK);
    g.source_cap[0] = 10, g.sink_cap[1] = 10;
    g.arc_cap[0 * 4 + 0] = 4;   /* a, +x */
    g.arc_cap[1 * 4 + 1] = 100; /* b, -x */
    CHECK(cpu_flow(&g, segment) == 4, "chain: flow");
    CHECK(segment[0] == 1 && segment[1] == 0, "chain: cut %d %d", segment[0], segment[1]);
    vl_grid_graph_free(&g);

    /* 3x3, every capacity at the limit, sources on the left column, sinks on the right: 3 (2^30 - 1). */
    CHECK_TRUE(vl_grid_graph_create(&g, 3, 3, 1, 4) == VL_OK);
    for (int p = 0; p < 9; p++) {
        for (int d = 0; d < 4; d++)
            g.arc_cap[p * 4 + d] = CAP_MAX;
        g.source_cap[p] = p % 3 == 0 ? CAP_MAX : 0;
        g.sink_cap[p] = p % 3 == 2 ? CAP_MAX : 0;
    }
    int64_t flow = cpu_flow(&g, segment);
    CHECK(flow == 3 * (int64_t)CAP_MAX, "limit capacities: flow %lld", (long long)flow);
    CHECK(vl_grid_cut_energy(&g, segment) == flow, "limit capacities: energy");
    g.arc_cap[0] = CAP_MAX + 1;
    vl_maxflow_result result;
    CHECK(vl_maxflow_cpu(&g, segment, &result) == VL_ERR_ARGUMENT, "capacity 2^30 accepted");
    g.arc_cap[0] = 0;
    g.sink_cap[4] = -1;
    CHECK(vl_maxflow_cpu(&g, segment, &result) == VL_ERR_ARGUMENT, "negative capacity accepted");
    vl_grid_graph_free(&g);

    CHECK(vl_grid_graph_create(&g, 4, 4, 2, 4) == VL_ERR_ARGUMENT, "4-connectivity on 2 slices accepted");
    CHECK(vl_grid_graph_create(&g, 4, 4, 2, 18) == VL_ERR_ARGUMENT, "18-connectivity accepted");
    CHECK(vl_grid_graph_create(&g, 0, 4, 1, 8) != VL_OK, "empty grid accepted");
}

static void gmm(void)
{
    enum { N = 4000 };
    double *samples = malloc(N * sizeof *samples);
    for (int i = 0; i < N; i++) {
        double u1 = (double)(test_random() >> 11) / 9007199254740992.0 + 1e-12;
        double u2 = (double)(test_random() >> 11) / 9007199254740992.0;
        double normal = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
        samples[i] = i % 4 == 0 ? 300 + 10 * normal : -850 + 20 * normal; /* 1:3 */
    }
    vl_gmm1d model;
    CHECK_TRUE(vl_gmm1d_fit(samples, N, 2, &model) == VL_OK);
    int low = model.mean[0] < model.mean[1] ? 0 : 1, high = 1 - low;
    CHECK(fabs(model.mean[low] + 850) < 3 && fabs(model.mean[high] - 300) < 3, "GMM means %g %g", model.mean[low],
          model.mean[high]);
    CHECK(fabs(sqrt(model.variance[low]) - 20) < 2 && fabs(sqrt(model.variance[high]) - 10) < 2, "GMM sigmas");
    CHECK(fabs(model.weight[high] - 0.25) < 0.02, "GMM weight %g", model.weight[high]);
    CHECK(vl_gmm1d_log_density(&model, -850) > vl_gmm1d_log_density(&model, 0), "GMM density");
    for (int i = 0; i < N; i++)
        samples[i] = 7;
    CHECK_TRUE(vl_gmm1d_fit(samples, N, 5, &model) == VL_OK);
    CHECK(isfinite(vl_gmm1d_log_density(&model, 7)) && isfinite(vl_gmm1d_log_density(&model, 1e4)),
          "constant class: density not finite");
    free(samples);
}

static void seeds(void)
{
    vl_volume image, seed;
    CHECK_TRUE(vl_volume_create(&image, 8, 8, 1, VL_I16) == VL_OK);
    CHECK_TRUE(vl_volume_create(&seed, 8, 8, 1, VL_U8) == VL_OK);
    uint8_t *s = seed.data;
    CHECK(vl_cut_check_seeds(&image, &seed) == VL_ERR_INPUT, "no seeds accepted");
    s[0] = 1;
    CHECK(vl_cut_check_seeds(&image, &seed) == VL_ERR_INPUT, "object seeds only accepted");
    s[63] = 2;
    CHECK(vl_cut_check_seeds(&image, &seed) == VL_OK, "valid seeds refused");
    s[5] = 4;
    CHECK(vl_cut_check_seeds(&image, &seed) == VL_ERR_INPUT, "seed value 4 accepted");
    s[5] = 0;
    seed.geometry.spacing[0] = 2;
    CHECK(vl_cut_check_seeds(&image, &seed) == VL_ERR_INPUT, "another spacing accepted");
    vl_volume_free(&seed);

    /* A cut on a two-level image: left half 0, right half 100, one seed each side. */
    CHECK_TRUE(vl_volume_create(&seed, 8, 8, 1, VL_U8) == VL_OK);
    int16_t *v = image.data;
    for (int i = 0; i < 64; i++)
        v[i] = (int16_t)(i % 8 < 4 ? (int)(test_random() % 5) : 100 + (int)(test_random() % 5));
    ((uint8_t *)seed.data)[8 * 3 + 1] = 2;
    ((uint8_t *)seed.data)[8 * 3 + 6] = 1;
    vl_cut_options options;
    vl_cut_options_default(&options);
    options.components = 1;
    options.maxflow.device.kind = VL_DEVICE_CPU;
    vl_volume object;
    vl_cut_result result;
    CHECK_TRUE(vl_cut_segment(&image, &seed, &options, &object, &result) == VL_OK);
    int right = 0, wrong = 0;
    for (int i = 0; i < 64; i++) {
        int want = i % 8 >= 4;
        right += ((uint8_t *)object.data)[i] == want;
        wrong += ((uint8_t *)object.data)[i] != want;
    }
    CHECK(wrong == 0, "two-level cut: %d of 64 voxels wrong", wrong);
    CHECK(result.energy == result.cut_value, "energy %lld != cut value %lld", (long long)result.energy,
          (long long)result.cut_value);
    vl_volume_free(&object);
    vl_volume_free(&seed);
    vl_volume_free(&image);
}

static void mog2_checks(void)
{
    vl_mog2_params params;
    vl_mog2_params_default(&params);
    CHECK(params.history == 500 && params.nmixtures == 5 && params.var_threshold == 16.f &&
          params.background_ratio == 0.9f && params.var_threshold_gen == 9.f && params.var_init == 15.f &&
          params.var_min == 4.f && params.var_max == 75.f && params.complexity_reduction == 0.05f,
          "MOG2 defaults differ from OpenCV's");
    CHECK(vl_mog2_params_validate(&params) == VL_OK, "defaults refused");
    params.nmixtures = 9;
    CHECK(vl_mog2_params_validate(&params) == VL_ERR_ARGUMENT, "9 mixtures accepted");
    vl_mog2_params_default(&params);
    params.history = 0;
    CHECK(vl_mog2_params_validate(&params) == VL_ERR_ARGUMENT, "history 0 accepted");
    vl_volume one, mask;
    CHECK_TRUE(vl_volume_create(&one, 16, 16, 1, VL_U8) == VL_OK);
    vl_background_options options;
    vl_background_options_default(&options);
    options.device.kind = VL_DEVICE_CPU;
    CHECK(vl_background_mog2(&one, &mask, &options, NULL) == VL_ERR_INPUT, "one frame accepted");
    vl_volume_free(&one);
}

int main(void)
{
    directions();
    hand_solved();
    gmm();
    seeds();
    mog2_checks();
    return test_finish("graphcut_unit");
}
