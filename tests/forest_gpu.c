/* GPU == CPU for the forest stage (R2 and "same seed, same forest"), bit for bit; exits 77 without a usable GPU.
 *   channels: every channel of the filter bank on a box touching the volume's borders equals the CPU's;
 *   training: the same seed grows the same forest on both backends, also with the binned training set streamed
 *             to the device in small chunks;
 *   prediction: the same forest's probabilities and class maps equal the CPU's; 2D and 3D banks with offset
 *               features. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filters/filters_internal.h"
#include "test_check.h"
#include "voxlabel/forest.h"
#include "voxlabel/phantom.h"

static int forests_equal(const vl_forest *a, const vl_forest *b)
{
    if (a->tree_count != b->tree_count || a->class_count != b->class_count)
        return 0;
    const int64_t nodes = a->tree_node_start[a->tree_count], leaves = a->tree_leaf_start[a->tree_count];
    return nodes == b->tree_node_start[b->tree_count] && leaves == b->tree_leaf_start[b->tree_count] &&
           memcmp(a->tree_node_start, b->tree_node_start, sizeof(int64_t) * (size_t)(a->tree_count + 1)) == 0 &&
           memcmp(a->nodes, b->nodes, sizeof(vl_forest_node) * (size_t)nodes) == 0 &&
           memcmp(a->leaf_values, b->leaf_values, sizeof(float) * (size_t)(leaves * a->class_count)) == 0;
}

/* the most classes a test forest has (forest_reshape) */
#define MAX_TEST_CLASSES 10

/* `forest` on the GPU against the CPU's probabilities p_cpu and class map m_cpu: bit for bit equal. */
static void gpu_equals(const vl_forest *forest, const vl_volume *ct, vl_forest_options options, const vl_volume *p_cpu,
                       const vl_volume *m_cpu, int dims, const char *what)
{
    vl_volume p_gpu[MAX_TEST_CLASSES], m_gpu;
    vl_device_outcome outcome;
    options.device.kind = VL_DEVICE_GPU;
    CHECK(vl_forest_predict(forest, ct, &options, p_gpu, &m_gpu, &outcome) == VL_OK &&
              outcome.used == VL_DEVICE_GPU,
          "%dD GPU prediction (%s)", dims, what);
    double worst = 0;
    int64_t differing = 0, probabilities_differing = 0;
    const int C = forest->class_count;
    for (int64_t i = 0; i < vl_volume_voxels(ct); i++) {
        int voxel_differs = 0;
        for (int c = 0; c < C; c++) {
            const float a = ((float *)p_cpu[c].data)[i], b = ((float *)p_gpu[c].data)[i];
            voxel_differs |= memcmp(&a, &b, sizeof a) != 0;
            if (fabs((double)a - b) > worst)
                worst = fabs((double)a - b);
        }
        probabilities_differing += voxel_differs;
        differing += ((uint8_t *)m_cpu->data)[i] != ((uint8_t *)m_gpu.data)[i];
    }
    printf("%dD: %d %s, %lld nodes, probabilities differ at %lld voxels (max |p_gpu - p_cpu| %.3g), class maps at "
           "%lld\n",
           dims, forest->tree_count, what, (long long)forest->tree_node_start[forest->tree_count],
           (long long)probabilities_differing, worst, (long long)differing);
    CHECK(probabilities_differing == 0, "%dD (%s): probabilities differ at %lld voxels, by up to %.3g", dims, what,
          (long long)probabilities_differing, worst);
    CHECK(differing == 0, "%dD (%s): classes differ at %lld voxels", dims, what, (long long)differing);
    for (int c = 0; c < C; c++)
        vl_volume_free(&p_gpu[c]);
    vl_volume_free(&m_gpu);
}

/* `forest` on the CPU and the GPU: probabilities and class maps bit for bit equal. */
static void predictions_equal(const vl_forest *forest, const vl_volume *ct, vl_forest_options options, int dims,
                              const char *what)
{
    vl_volume p_cpu[MAX_TEST_CLASSES], m_cpu;
    options.device.kind = VL_DEVICE_CPU;
    CHECK(vl_forest_predict(forest, ct, &options, p_cpu, &m_cpu, NULL) == VL_OK, "%dD CPU prediction", dims);
    gpu_equals(forest, ct, options, p_cpu, &m_cpu, dims, what);
    for (int c = 0; c < forest->class_count; c++)
        vl_volume_free(&p_cpu[c]);
    vl_volume_free(&m_cpu);
}

/* An empty forest of `like`'s bank and features with `trees` trees, `nodes` nodes and `leaves` leaves of `classes`
 * classes, its fractions zero (out freed with vl_forest_free); 0 when out of memory. */
static int forest_alloc(const vl_forest *like, int trees, int64_t nodes, int64_t leaves, int classes, vl_forest *out)
{
    memset(out, 0, sizeof *out);
    out->bank = like->bank;
    out->feature_count = like->feature_count;
    out->class_count = classes;
    out->tree_count = trees;
    out->oob_accuracy = -1;
    out->tree_node_start = malloc(sizeof(int64_t) * (size_t)(trees + 1));
    out->tree_leaf_start = malloc(sizeof(int64_t) * (size_t)(trees + 1));
    out->nodes = malloc(sizeof(vl_forest_node) * (size_t)nodes);
    out->leaf_values = calloc((size_t)(leaves * classes), sizeof(float));
    if (!out->tree_node_start || !out->tree_leaf_start || !out->nodes || !out->leaf_values) {
        vl_forest_free(out);
        return 0;
    }
    return 1;
}

/* `forest`'s trees `times` over, in order, as a forest of their own (out freed with vl_forest_free); 0 when out of
 * memory. */
static int forest_repeat(const vl_forest *forest, int times, vl_forest *out)
{
    const int T = forest->tree_count, C = forest->class_count;
    const int64_t nodes = forest->tree_node_start[T], leaves = forest->tree_leaf_start[T];
    if (!forest_alloc(forest, T * times, nodes * times, leaves * times, C, out))
        return 0;
    for (int k = 0; k < times; k++) {
        memcpy(out->nodes + k * nodes, forest->nodes, sizeof(vl_forest_node) * (size_t)nodes);
        memcpy(out->leaf_values + k * leaves * C, forest->leaf_values, sizeof(float) * (size_t)(leaves * C));
        for (int t = 0; t < T; t++) {
            out->tree_node_start[k * T + t] = k * nodes + forest->tree_node_start[t];
            out->tree_leaf_start[k * T + t] = k * leaves + forest->tree_leaf_start[t];
        }
    }
    out->tree_node_start[T * times] = nodes * times;
    out->tree_leaf_start[T * times] = leaves * times;
    return 1;
}

/* `forest`'s first `trees` trees as a forest of `classes` classes (out freed with vl_forest_free): new class c has
 * the summed fractions of the old classes k with k % classes == c, none when there are fewer old classes; 0 when out
 * of memory. */
static int forest_reshape(const vl_forest *forest, int trees, int classes, vl_forest *out)
{
    const int C = forest->class_count;
    const int64_t nodes = forest->tree_node_start[trees], leaves = forest->tree_leaf_start[trees];
    if (!forest_alloc(forest, trees, nodes, leaves, classes, out))
        return 0;
    memcpy(out->tree_node_start, forest->tree_node_start, sizeof(int64_t) * (size_t)(trees + 1));
    memcpy(out->tree_leaf_start, forest->tree_leaf_start, sizeof(int64_t) * (size_t)(trees + 1));
    memcpy(out->nodes, forest->nodes, sizeof(vl_forest_node) * (size_t)nodes);
    for (int64_t leaf = 0; leaf < leaves; leaf++)
        for (int k = 0; k < C; k++)
            out->leaf_values[leaf * classes + k % classes] += forest->leaf_values[leaf * C + k];
    return 1;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* every line reaches the log even if a time limit kills the run */
    /* --quick: a small volume and few trees, for compute-sanitizer */
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    char why[256];
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    vl_phantom_options phantom;
    vl_phantom_options_default(&phantom);
    phantom.nx = quick ? 48 : 160, phantom.ny = quick ? 40 : 144, phantom.nz = quick ? 12 : 40;
    phantom.pixel_spacing_mm = 1.6, phantom.slice_spacing_mm = 2.5;
    vl_volume ct, scribbles;
    CHECK(vl_phantom_generate(&phantom, &ct) == VL_OK, "phantom");
    vl_volume_create(&scribbles, ct.nx, ct.ny, ct.nz, VL_U8);
    scribbles.geometry = ct.geometry;
    for (int64_t i = 0; i < vl_volume_voxels(&ct); i += 97) {
        const double hu = vl_volume_value(&ct, i);
        ((uint8_t *)scribbles.data)[i] = hu < -500 ? 1 : hu < -30 ? 2 : hu < 200 ? 3 : 4;
    }
    for (int c = 1; c <= 4; c++) { /* every class scribbled even in the small volume */
        int64_t i = 0;
        for (int64_t k = 0; k < vl_volume_voxels(&ct); k++) {
            const double hu = vl_volume_value(&ct, k);
            if ((hu < -500 ? 1 : hu < -30 ? 2 : hu < 200 ? 3 : 4) == c)
                i = k;
        }
        ((uint8_t *)scribbles.data)[i] = (uint8_t)c;
    }
    for (int dims = 2; dims <= 3; dims++) {
        vl_filter_bank bank;
        vl_filter_bank_default(&bank, dims);
        vl_filter_bank_add_offsets(&bank, 6, 10.0, ct.geometry.spacing, 3);

        /* channels on a box that touches the volume's borders on every axis (reflected reads) */
        const vl_box box = {{0, quick ? 0 : 40, quick ? 0 : 8}, {quick ? ct.nx : 80, ct.ny, ct.nz}};
        const int channels = vl_filter_bank_channels(&bank);
        const int64_t box_voxels = (box.hi[0] - box.lo[0]) * (box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
        float *c_cpu = malloc(sizeof(float) * (size_t)(box_voxels * channels));
        float *c_gpu = malloc(sizeof(float) * (size_t)(box_voxels * channels));
        CHECK(c_cpu && c_gpu, "out of memory");
        CHECK(vl_filters_compute(&ct, &bank, &box, c_cpu, 0) == VL_OK, "%dD CPU channels", dims);
        CHECK(vl_filters_compute_box_gpu(&ct, &bank, &box, c_gpu) == VL_OK, "%dD GPU channels: %s", dims,
              vl_last_error());
        int unequal = 0;
        for (int c = 0; c < channels; c++) {
            const float *a = c_cpu + c * box_voxels, *b = c_gpu + c * box_voxels;
            if (memcmp(a, b, sizeof(float) * (size_t)box_voxels) == 0)
                continue;
            int64_t count = 0;
            double largest = 0;
            for (int64_t i = 0; i < box_voxels; i++)
                if (memcmp(&a[i], &b[i], sizeof(float)) != 0) {
                    count++;
                    largest = fabs((double)a[i] - b[i]) > largest ? fabs((double)a[i] - b[i]) : largest;
                }
            char name[64];
            vl_filter_bank_channel_name(&bank, c, name, sizeof name);
            printf("%dD: channel %s differs at %lld voxels, by up to %.3g\n", dims, name, (long long)count, largest);
            unequal++;
        }
        printf("%dD: %d channels on %lld voxels, %d differ from the CPU's\n", dims, channels, (long long)box_voxels,
               unequal);
        CHECK(unequal == 0, "%dD: %d of %d channels differ between GPU and CPU", dims, unequal, channels);
        free(c_cpu);
        free(c_gpu);
        vl_forest_options options;
        vl_forest_options_default(&options);
        options.trees = quick ? 4 : 24;
        options.seed = 11;
        vl_forest cpu, gpu, streamed;
        vl_device_outcome outcome;
        options.device.kind = VL_DEVICE_CPU;
        CHECK(vl_forest_train(&ct, &scribbles, &bank, &options, &cpu, NULL) == VL_OK, "%dD CPU training", dims);
        options.device.kind = VL_DEVICE_GPU;
        CHECK(vl_forest_train(&ct, &scribbles, &bank, &options, &gpu, &outcome) == VL_OK &&
                  outcome.used == VL_DEVICE_GPU,
              "%dD GPU training", dims);
        options.gpu_chunk_samples = quick ? 100 : 1000;
        CHECK(vl_forest_train(&ct, &scribbles, &bank, &options, &streamed, NULL) == VL_OK,
              "%dD GPU training streamed in chunks", dims);
        CHECK(forests_equal(&cpu, &gpu), "%dD: the same seed grows the same forest on the GPU", dims);
        CHECK(forests_equal(&cpu, &streamed), "%dD: streaming the training set changes nothing", dims);
        CHECK(cpu.oob_accuracy == gpu.oob_accuracy, "%dD: out-of-bag accuracy %.6f vs %.6f", dims, cpu.oob_accuracy,
              gpu.oob_accuracy);

        options.tile = quick ? 32 : 96;
        options.gpu_pass_planes = quick ? 4 : 8; /* the small sigmas' passes in groups of planes */
        predictions_equal(&cpu, &ct, options, dims, "trees");
        /* the same trees repeated past 20000 nodes: a forest whose nodes outgrow the read-only cache */
        vl_forest repeated;
        CHECK(forest_repeat(&cpu, 20000 / (int)cpu.tree_node_start[cpu.tree_count] + 1, &repeated),
              "%dD: repeating the trees", dims);
        predictions_equal(&repeated, &ct, options, dims, "trees (repeated)");
        vl_forest_free(&repeated);
        /* tree counts that are not a multiple of the trees a thread walks at once; two classes, and more classes
         * than a thread sums in registers */
        const int shapes[3][2] = {{cpu.tree_count - 1, 2}, {cpu.tree_count - 2, 3}, {cpu.tree_count - 3, 10}};
        for (int k = 0; k < 3; k++) {
            vl_forest reshaped;
            char what[64];
            CHECK(forest_reshape(&cpu, shapes[k][0], shapes[k][1], &reshaped), "%dD: reshaping the forest", dims);
            snprintf(what, sizeof what, "trees (%d classes)", shapes[k][1]);
            predictions_equal(&reshaped, &ct, options, dims, what);
            vl_forest_free(&reshaped);
        }
        vl_forest_free(&cpu);
        vl_forest_free(&gpu);
        vl_forest_free(&streamed);
    }
    vl_volume_free(&scribbles);
    vl_volume_free(&ct);
    return test_finish("forest_gpu");
}
