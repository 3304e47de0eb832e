/* Test helper for the OpenCV oracle of the feature stage (tests/features_oracle.py):
 *   features_tool detect IMG.png OUT cpu|gpu THREADS   keypoints of an 8-bit grey image: OUT.csv
 *                                                      (x,y,size,angle,response,octave) and OUT.f32
 *                                                      (count x 128 float32 descriptors)
 *   features_tool describe IMG.png KEYPOINTS.csv OUT.f32
 *                                                      descriptors at given keypoints (same CSV columns)
 *   features_tool register A.png B.png OUT.f64         SIFT on both, Lowe matching, RANSAC similarity A -> B:
 *                                                      7 doubles (matrix, inlier count; zeros on failure) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/features.h"
#include "voxlabel/image2d.h"
#include "test_check.h"

static float *read_grey(const char *path, int64_t *w, int64_t *h)
{
    vl_image image;
    if (vl_image_read(path, &image) != VL_OK) {
        CHECK(0, "cannot read %s", path);
        return NULL;
    }
    CHECK(image.channels == 1 && image.bit_depth == 8, "%s: want 8-bit grey", path);
    float *pixels = malloc((size_t)(image.width * image.height) * sizeof *pixels);
    for (int64_t i = 0; pixels && i < image.width * image.height; i++)
        pixels[i] = ((const uint8_t *)image.data)[i * image.channels];
    *w = image.width;
    *h = image.height;
    vl_image_free(&image);
    return pixels;
}

static int write_file(const char *path, const void *data, size_t bytes)
{
    FILE *file = fopen(path, "wb");
    int ok = file && fwrite(data, 1, bytes, file) == bytes;
    if (file)
        ok &= fclose(file) == 0;
    CHECK(ok, "cannot write %zu bytes to %s", bytes, path);
    return ok ? 0 : 1;
}

static int detect(const char *image_path, const char *out, const char *where, int threads)
{
    int64_t w, h;
    float *pixels = read_grey(image_path, &w, &h);
    if (!pixels)
        return 1;
    vl_sift_options options;
    vl_sift_options_default(&options);
    options.threads = threads;
    vl_device device;
    vl_device_default(&device);
    device.kind = strcmp(where, "gpu") == 0 ? VL_DEVICE_GPU : VL_DEVICE_CPU;
    vl_sift_features features;
    vl_status status = vl_sift_image(pixels, w, h, &options, &device, &features, NULL);
    free(pixels);
    if (status == VL_ERR_DEVICE)
        TEST_SKIP("no usable GPU: %s", vl_last_error());
    CHECK(status == VL_OK, "vl_sift_image %s", image_path);
    if (status != VL_OK)
        return 1;
    char path[4096];
    snprintf(path, sizeof path, "%s.csv", out);
    FILE *csv = fopen(path, "w");
    CHECK(csv != NULL, "cannot write %s", path);
    if (!csv)
        return 1;
    for (int64_t i = 0; i < features.count; i++) {
        const vl_sift_keypoint *k = &features.keypoints[i];
        fprintf(csv, "%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", k->x, k->y, k->size, k->angle, k->response, k->octave);
    }
    CHECK(fclose(csv) == 0, "closing %s", path);
    snprintf(path, sizeof path, "%s.f32", out);
    int code = write_file(path, features.descriptors, (size_t)features.count * VL_SIFT_DESCRIPTOR_SIZE * sizeof(float));
    vl_sift_features_free(&features);
    return code || failures;
}

static int describe(const char *image_path, const char *keypoint_path, const char *out)
{
    int64_t w, h, count = 0, capacity = 1024;
    float *pixels = read_grey(image_path, &w, &h);
    FILE *csv = fopen(keypoint_path, "r");
    vl_sift_keypoint *keypoints = malloc((size_t)capacity * sizeof *keypoints);
    if (!pixels || !csv || !keypoints)
        return 1;
    vl_sift_keypoint k = {0};
    while (fscanf(csv, "%f,%f,%f,%f,%f,%d", &k.x, &k.y, &k.size, &k.angle, &k.response, &k.octave) == 6) {
        if (count == capacity)
            keypoints = realloc(keypoints, (size_t)(capacity *= 2) * sizeof *keypoints);
        keypoints[count++] = k;
    }
    fclose(csv);
    vl_sift_options options;
    vl_sift_options_default(&options);
    float *descriptors = malloc((size_t)(count + 1) * VL_SIFT_DESCRIPTOR_SIZE * sizeof *descriptors);
    vl_status status = vl_sift_describe(pixels, w, h, &options, keypoints, count, descriptors);
    CHECK(status == VL_OK, "vl_sift_describe");
    int code = status == VL_OK ? write_file(out, descriptors, (size_t)count * VL_SIFT_DESCRIPTOR_SIZE * sizeof(float)) : 1;
    free(pixels);
    free(keypoints);
    free(descriptors);
    return code;
}

/* Keypoints of A and B, ratio-test matches (0.8), a RANSAC similarity A -> B: writes the 6 matrix entries and
 * the inlier count as 7 doubles (all zero when the estimate fails). */
static int register_pair(const char *path_a, const char *path_b, const char *out)
{
    int64_t wa, ha, wb, hb;
    float *a = read_grey(path_a, &wa, &ha), *b = read_grey(path_b, &wb, &hb);
    if (!a || !b)
        return 1;
    vl_device cpu = {.kind = VL_DEVICE_CPU};
    vl_sift_features fa, fb;
    CHECK(vl_sift_image(a, wa, ha, NULL, &cpu, &fa, NULL) == VL_OK, "sift %s", path_a);
    CHECK(vl_sift_image(b, wb, hb, NULL, &cpu, &fb, NULL) == VL_OK, "sift %s", path_b);
    vl_feature_match *matches = NULL;
    int64_t count = 0;
    CHECK(vl_match_descriptors(fa.descriptors, fa.count, fb.descriptors, fb.count, 0.8, &cpu, &matches, &count,
                               NULL) == VL_OK, "match");
    float *pa = malloc((size_t)(count + 1) * 2 * sizeof *pa), *pb = malloc((size_t)(count + 1) * 2 * sizeof *pb);
    for (int64_t i = 0; i < count; i++) {
        pa[2 * i] = fa.keypoints[matches[i].query].x, pa[2 * i + 1] = fa.keypoints[matches[i].query].y;
        pb[2 * i] = fb.keypoints[matches[i].train].x, pb[2 * i + 1] = fb.keypoints[matches[i].train].y;
    }
    vl_ransac_options options;
    vl_ransac_options_default(&options);
    vl_ransac_result result;
    double answer[7] = {0};
    if (vl_ransac_estimate(pa, pb, count, &options, &result) == VL_OK) {
        memcpy(answer, result.matrix, sizeof result.matrix);
        answer[6] = (double)result.inliers;
    }
    vl_ransac_result_free(&result);
    free(pa), free(pb), free(matches), free(a), free(b);
    vl_sift_features_free(&fa);
    vl_sift_features_free(&fb);
    return write_file(out, answer, sizeof answer) || failures;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "detect") == 0)
        return detect(argv[2], argv[3], argv[4], atoi(argv[5]));
    if (argc == 5 && strcmp(argv[1], "describe") == 0)
        return describe(argv[2], argv[3], argv[4]);
    if (argc == 5 && strcmp(argv[1], "register") == 0)
        return register_pair(argv[2], argv[3], argv[4]);
    fprintf(stderr, "usage: features_tool detect IMG OUT cpu|gpu THREADS | describe IMG KP.csv OUT.f32 | "
                    "register A B OUT.f64\n");
    return 2;
}
