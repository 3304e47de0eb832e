/* Times the forest stage on the CT-like phantom (R5) and writes the same samples for bench/forest_peers.py.
 * usage: forest_bench NX NY NZ TREES DEVICE CPU_BOX PREFIX
 *   phantom NX x NY x NZ (0.8 mm pixels, 1.25 mm slices), 3D ilastik bank (61 features), TREES trees;
 *   truth: the mean of phantom seeds 2 and 3 at -500 and 200 HU (air and lung / soft tissue / bone and
 *   contrast); the classified CT is seed 1. Scribbles: every 5th interior voxel of 4 evenly spaced slices (as a
 *   user scribbles a few slices); test voxels: every 9th voxel of 2 other slices, borders included.
 *   DEVICE cpu or gpu trains and classifies the whole volume; the single-thread CPU reference classifies a
 *   CPU_BOX x CPU_BOX x CPU_BOX/4 block of the same CT and is extrapolated per voxel.
 *   PREFIX_{train.f32,train.u8,test.f32,test.u8,test_pred.u8}: features (samples x 61), classes, and voxlabel's
 *   classes at the test voxels, for the scikit-learn peer.
 *   The time to read the series: the CT written as a DICOM series (PREFIX_series/, one file a slice, by
 *   voxlabel's writer) and read back by voxlabel's reader with all cores, first from disk (the files synced and
 *   dropped from the page cache), then again from the page cache (the fastest a read can be).
 * Prints one line per measurement, accuracy beside every time. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "voxlabel/device.h"
#include "voxlabel/dicom.h"
#include "voxlabel/forest.h"
#include "voxlabel/phantom.h"
#include "bench_clock.h"

static int fail(const char *what)
{
    fprintf(stderr, "forest_bench: %s: %s\n", what, vl_last_error());
    return 1;
}

static int write_raw(const char *prefix, const char *name, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s_%s", prefix, name);
    FILE *out = fopen(path, "wb");
    int ok = out && fwrite(data, 1, bytes, out) == bytes;
    if (out)
        ok &= fclose(out) == 0;
    return ok;
}

/* Writes the files of `directory` to disk and drops them from the page cache, so that the next read comes from
 * the disk; 1 when every file was dropped. */
static int drop_cached(const char *directory)
{
    DIR *dir = opendir(directory);
    if (!dir)
        return 0;
    int all = 1;
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (entry->d_name[0] == '.')
            continue;
        char path[4096 + 256];
        if (snprintf(path, sizeof path, "%s/%s", directory, entry->d_name) >= (int)sizeof path) {
            all = 0;
            continue;
        }
        const int fd = open(path, O_RDONLY);
        all &= fd >= 0 && fsync(fd) == 0 && posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
        if (fd >= 0)
            close(fd);
    }
    closedir(dir);
    return all;
}

static double dice_mean(const uint8_t *a, const uint8_t *b, int64_t n, int classes)
{
    double sum = 0;
    for (int c = 1; c <= classes; c++) {
        int64_t both = 0, na = 0, nb = 0;
        for (int64_t i = 0; i < n; i++) {
            both += a[i] == c && b[i] == c;
            na += a[i] == c;
            nb += b[i] == c;
        }
        sum += na + nb ? 2.0 * (double)both / (double)(na + nb) : 1.0;
    }
    return sum / classes;
}

/* voxels of `map` set (class) at slices z in `slices`, every `stride`-th in raster order; with `interior` only
 * those whose 4 in-plane neighbours share their class (scribbles keep off the borders; test voxels do not) */
static void mark(const uint8_t *truth, int64_t nx, int64_t ny, const int64_t *slices, int count, int stride,
                 int interior, uint8_t *map)
{
    for (int s = 0; s < count; s++) {
        const int64_t z = slices[s];
        int64_t k = 0;
        for (int64_t y = 1; y + 1 < ny; y++)
            for (int64_t x = 1; x + 1 < nx; x++) {
                const int64_t i = x + nx * (y + ny * z);
                const uint8_t c = truth[i];
                if ((!interior ||
                     (c == truth[i - 1] && c == truth[i + 1] && c == truth[i - nx] && c == truth[i + nx])) &&
                    k++ % stride == 0)
                    map[i] = c;
            }
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* every line reaches the log even if a time limit kills the run */
    if (argc != 8) {
        fprintf(stderr, "usage: forest_bench NX NY NZ TREES cpu|gpu CPU_BOX PREFIX\n");
        return 2;
    }
    vl_phantom_options phantom;
    vl_phantom_options_default(&phantom);
    phantom.nx = atoll(argv[1]), phantom.ny = atoll(argv[2]), phantom.nz = atoll(argv[3]);
    const int trees = atoi(argv[4]);
    const int gpu = strcmp(argv[5], "gpu") == 0;
    const int64_t cpu_box = atoll(argv[6]);
    const char *prefix = argv[7];
    double t0 = now();
    if (gpu) {
        /* the CUDA context is created once per process: outside the timings, reported on its own */
        char why[256] = "";
        const int usable = vl_device_gpu_usable(0, why, sizeof why);
        printf("gpu start-up (CUDA context, before the timings): %.3f s%s%s\n", now() - t0, usable ? "" : "; ",
               usable ? "" : why);
    }
    vl_volume ct, other;
    t0 = now();
    if (vl_phantom_generate(&phantom, &ct) != VL_OK)
        return fail("phantom");
    const int64_t n = vl_volume_voxels(&ct), nx = ct.nx, ny = ct.ny, nz = ct.nz;
    float *mean = malloc(sizeof(float) * (size_t)n);
    for (uint64_t seed = 2; seed <= 3; seed++) {
        phantom.seed = seed;
        if (vl_phantom_generate(&phantom, &other) != VL_OK)
            return fail("phantom");
        for (int64_t i = 0; i < n; i++)
            mean[i] = (seed == 2 ? 0.0f : mean[i]) + 0.5f * (float)((int16_t *)other.data)[i];
        vl_volume_free(&other);
    }
    uint8_t *truth = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++)
        truth[i] = mean[i] < -500 ? 1 : mean[i] < 200 ? 2 : 3;
    free(mean);
    printf("phantom %lldx%lldx%lld (%.1f Mvoxels) in %.2f s\n", (long long)nx, (long long)ny, (long long)nz, n / 1e6,
           now() - t0);

    vl_volume scribbles, tests;
    vl_volume_create(&scribbles, nx, ny, nz, VL_U8);
    vl_volume_create(&tests, nx, ny, nz, VL_U8);
    scribbles.geometry = tests.geometry = ct.geometry;
    int64_t train_slices[4], test_slices[2];
    for (int s = 0; s < 4; s++)
        train_slices[s] = (2 * s + 1) * nz / 8;
    for (int s = 0; s < 2; s++)
        test_slices[s] = (2 * s + 1) * nz / 4 + 1 < nz ? (2 * s + 1) * nz / 4 + 1 : nz - 1;
    mark(truth, nx, ny, train_slices, 4, 5, 1, scribbles.data);
    mark(truth, nx, ny, test_slices, 2, 9, 0, tests.data);

    vl_filter_bank bank;
    vl_filter_bank_default(&bank, 3);
    vl_forest_options options;
    vl_forest_options_default(&options);
    options.trees = trees;
    options.device.kind = gpu ? VL_DEVICE_GPU : VL_DEVICE_CPU;
    options.max_samples = 0;
    float *x_train, *x_test;
    uint8_t *y_train, *y_test;
    int64_t n_train, n_test;
    int classes;
    t0 = now();
    if (vl_forest_collect_samples(&ct, &scribbles, &bank, &options, &x_train, &y_train, &n_train, &classes) != VL_OK)
        return fail("samples");
    const double t_samples = now() - t0;
    if (vl_forest_collect_samples(&ct, &tests, &bank, &options, &x_test, &y_test, &n_test, &classes) != VL_OK)
        return fail("test samples");
    const int F = vl_filter_bank_channels(&bank);
    printf("features of %lld scribbled voxels (CPU, all cores) in %.2f s; %lld test voxels\n", (long long)n_train,
           t_samples, (long long)n_test);

    vl_forest forest;
    vl_device_outcome outcome;
    t0 = now();
    if (vl_forest_train_samples(x_train, y_train, n_train, F, classes, &bank, &options, &forest, &outcome) != VL_OK)
        return fail("training");
    const double t_train = now() - t0;
    float *p = malloc(sizeof(float) * (size_t)n_test * (size_t)classes);
    uint8_t *pred = malloc((size_t)n_test);
    vl_forest_predict_samples(&forest, x_test, n_test, p);
    int64_t right = 0;
    for (int64_t i = 0; i < n_test; i++) {
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (p[i * classes + c] > p[i * classes + best])
                best = c;
        pred[i] = (uint8_t)(best + 1);
        right += pred[i] == y_test[i];
    }
    printf("voxlabel train   %-3s %d trees, %lld samples: %.3f s; out-of-bag accuracy %.4f, test accuracy %.4f\n",
           vl_device_kind_name(outcome.used), trees, (long long)n_train, t_train, forest.oob_accuracy,
           (double)right / (double)n_test);
    {
        int used = 0;
        int64_t inner = 0;
        for (int f = 0; f < F; f++) {
            int tested = 0;
            for (int64_t k = 0; k < forest.tree_node_start[forest.tree_count]; k++)
                tested |= forest.nodes[k].feature == f;
            used += tested;
        }
        for (int64_t k = 0; k < forest.tree_node_start[forest.tree_count]; k++)
            inner += forest.nodes[k].feature >= 0;
        printf("model            %lld nodes (%lld inner) in %d trees; %d of %d features tested\n",
               (long long)forest.tree_node_start[forest.tree_count], (long long)inner, forest.tree_count, used, F);
    }
    /* Bytes a level-wise trainer moves per tree, from the samples' mean depth (first 10 trees): every level reads
     * its live in-bag samples (about 0.632 n of them in a bootstrap) once per candidate. The GPU trainer reads per
     * live sample and candidate an 8-byte entry and a 2-byte bin (and 10 + 8 bytes to partition it); the floor
     * reads each live sample's candidate bins once per level, 1 byte each (bins of at most 256 values). */
    {
        const int probe = trees < 10 ? trees : 10, m = (int)floor(sqrt((double)F));
        double depth = 0;
        for (int t = 0; t < probe; t++) {
            const vl_forest_node *nodes = forest.nodes + forest.tree_node_start[t];
            for (int64_t i = 0; i < n_train; i++)
                for (int32_t k = 0; nodes[k].feature >= 0; depth++)
                    k = x_train[i * F + nodes[k].feature] <= nodes[k].threshold ? nodes[k].left : nodes[k].right;
        }
        depth /= (double)probe * (double)n_train;
        const double live = 0.632 * (double)n_train * depth; /* sample-levels per tree */
        printf("training data per tree (model): mean sample depth %.1f, %.3g in-bag sample-levels; GPU trainer reads "
               "%.1f MB (%d candidates x 10 B + 18 B each), floor %.1f MB (%d x 1 B)\n",
               depth, live, live * (m * 10.0 + 18.0) / 1e6, m, live * m / 1e6, m);
    }

    vl_volume map;
    t0 = now();
    if (vl_forest_predict(&forest, &ct, &options, NULL, &map, &outcome) != VL_OK)
        return fail("prediction");
    const double t_predict = now() - t0;
    printf("voxlabel predict %-3s whole volume (filters + forest): %.3f s = %.1f Mvoxels/s; Dice %.4f\n",
           vl_device_kind_name(outcome.used), t_predict, n / t_predict / 1e6,
           dice_mean(map.data, truth, n, classes));

    /* the filters' share: the same prediction with a one-tree forest */
    vl_forest_options one_tree = options;
    one_tree.trees = 1;
    vl_forest stump;
    vl_volume stump_map;
    t0 = now();
    if (vl_forest_train_samples(x_train, y_train, n_train, F, classes, &bank, &one_tree, &stump, NULL) != VL_OK)
        return fail("one-tree training");
    printf("voxlabel train   %-3s 1 tree (binning, upload, out-of-bag votes and one tree): %.3f s\n",
           vl_device_kind_name(outcome.used), now() - t0);
    t0 = now();
    if (vl_forest_predict(&stump, &ct, &one_tree, NULL, &stump_map, NULL) != VL_OK)
        return fail("one-tree prediction");
    printf("voxlabel predict %-3s the same with a 1-tree forest (the channels it tests, transfers and 1 tree): %.3f s\n",
           vl_device_kind_name(outcome.used), now() - t0);
    vl_volume_free(&stump_map);
    vl_forest_free(&stump);

    char series[4096];
    snprintf(series, sizeof series, "%s_series", prefix);
    vl_dicom_write_options write_options;
    vl_dicom_write_options_default(&write_options);
    write_options.force = 1;
    if (vl_dicom_write_series(series, &ct, &write_options) != VL_OK)
        return fail("writing the DICOM series");
    const int dropped = drop_cached(series);
    vl_dicom_read_options read_options;
    vl_dicom_read_options_default(&read_options);
    for (int pass = 0; pass < 2; pass++) {
        vl_volume read_back;
        t0 = now();
        if (vl_dicom_read_series(series, &read_options, &read_back, NULL) != VL_OK)
            return fail("reading the DICOM series");
        const double t_read = now() - t0;
        const int same = read_back.dtype == VL_I16 && vl_volume_voxels(&read_back) == n &&
                         memcmp(read_back.data, ct.data, sizeof(int16_t) * (size_t)n) == 0;
        printf("read series      %lld DICOM slices (voxlabel's reader, all cores, %s): %.3f s, %s; whole-volume "
               "prediction %.3f s = %.2f x the read: %s\n",
               (long long)nz, pass ? "page cache" : dropped ? "from disk" : "page cache: could not drop it", t_read,
               same ? "equal to the volume written" : "DIFFERENT from the volume written", t_predict,
               t_predict / t_read, t_predict < t_read ? "faster than reading" : "slower than reading");
        vl_volume_free(&read_back);
    }

    /* single-thread CPU reference on a central block */
    const int64_t bx = cpu_box < nx ? cpu_box : nx, by = cpu_box < ny ? cpu_box : ny,
                  bz = cpu_box / 4 < nz ? cpu_box / 4 : nz;
    vl_volume block;
    vl_volume_create(&block, bx, by, bz, VL_I16);
    block.geometry = ct.geometry;
    for (int64_t z = 0; z < bz; z++)
        for (int64_t y = 0; y < by; y++)
            memcpy((int16_t *)block.data + bx * (y + by * z),
                   (int16_t *)ct.data + (nx - bx) / 2 + nx * ((ny - by) / 2 + y + ny * ((nz - bz) / 2 + z)),
                   sizeof(int16_t) * (size_t)bx);
    vl_volume block_map;
    options.device.kind = VL_DEVICE_CPU;
    options.threads = 1;
    t0 = now();
    if (vl_forest_predict(&forest, &block, &options, NULL, &block_map, NULL) != VL_OK)
        return fail("cpu reference");
    const double per_voxel = (now() - t0) / (double)vl_volume_voxels(&block);
    printf("cpu reference    1 thread, %lldx%lldx%lld block: %.2f us/voxel -> %.1f s for the whole volume; "
           "%s is %.1fx the single-thread CPU\n",
           (long long)bx, (long long)by, (long long)bz, per_voxel * 1e6, per_voxel * (double)n,
           vl_device_kind_name(outcome.used), per_voxel * (double)n / t_predict);

    if (!write_raw(prefix, "train.f32", x_train, sizeof(float) * (size_t)n_train * F) ||
        !write_raw(prefix, "train.u8", y_train, (size_t)n_train) ||
        !write_raw(prefix, "test.f32", x_test, sizeof(float) * (size_t)n_test * F) ||
        !write_raw(prefix, "test.u8", y_test, (size_t)n_test) ||
        !write_raw(prefix, "test_pred.u8", pred, (size_t)n_test)) {
        fprintf(stderr, "forest_bench: cannot write %s_*\n", prefix);
        return 1;
    }
    printf("wrote %s_train.f32 (%lld x %d), %s_test.f32 (%lld x %d); volume %lld voxels\n", prefix,
           (long long)n_train, F, prefix, (long long)n_test, F, (long long)n);
    vl_volume_free(&block);
    vl_volume_free(&block_map);
    vl_volume_free(&map);
    vl_forest_free(&forest);
    free(x_train), free(y_train), free(x_test), free(y_test), free(p), free(pred), free(truth);
    vl_volume_free(&scribbles);
    vl_volume_free(&tests);
    vl_volume_free(&ct);
    return 0;
}
