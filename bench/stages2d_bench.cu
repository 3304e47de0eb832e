/* GPU timings of the thesis's stages on device-resident data (CUDA events, median of R): HSV + threshold,
 * erosion + dilation (thesis crosses, shared-memory tiles), 4-connected CCL with MATLAB-order labels (the
 * project's GPU labeller), and the host<->device transfers, on the same inputs as stages2d_bench_cpu.
 * Every result is also compared with the CPU reference (mask and labels bit for bit).
 * usage: stages2d_bench_gpu [--slices N] [--repeats R] */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "label/ccl_gpu.h"
#include "image2d/color_internal.h"
#include "image2d/morphology_gpu.h"
#include "stages2d_bench.h"
#include "voxlabel/color.h"
#include "voxlabel/morphology.h"

#define CUDA_CHECK(call)                                                                                    \
    do {                                                                                                    \
        cudaError_t error_ = (call);                                                                        \
        if (error_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "stages2d_bench_gpu: %s: %s\n", #call, cudaGetErrorString(error_));              \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

static const vl_device cpu = {VL_DEVICE_CPU, 0, 0};

static void check(vl_status status)
{
    if (status != VL_OK) {
        fprintf(stderr, "stages2d_bench_gpu: %s\n", vl_last_error());
        exit(1);
    }
}

static float median(std::vector<float> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

struct timer {
    cudaEvent_t start, stop;
    timer() { cudaEventCreate(&start), cudaEventCreate(&stop); }
    ~timer() { cudaEventDestroy(start), cudaEventDestroy(stop); }
    void begin() { cudaEventRecord(start); }
    float end()
    {
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms = 0;
        cudaEventElapsedTime(&ms, start, stop);
        return ms;
    }
};

/* The CPU reference of the same pipeline: mask after threshold and morphology, then 4-connected labels. */
static void cpu_reference(const uint8_t *rgb, const uint8_t *stack, int64_t nx, int64_t ny, int64_t nz,
                          const vl_color_range *range, std::vector<uint8_t> &mask, std::vector<uint32_t> &labels)
{
    vl_volume volume;
    check(vl_volume_create(&volume, nx, ny, nz, VL_U8));
    if (rgb)
        check(vl_color_threshold(rgb, (uint8_t *)volume.data, nx * ny, range, &cpu));
    else
        memcpy(volume.data, stack, (size_t)(nx * ny * nz));
    check(vl_morphology_apply(&volume, VL_MORPH_OPEN, VL_SE_THESIS, 0, 1, &cpu, NULL));
    mask.assign((uint8_t *)volume.data, (uint8_t *)volume.data + nx * ny * nz);
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = 4;
    options.device.kind = VL_DEVICE_CPU;
    vl_volume out;
    vl_label_result result;
    check(vl_label_volume(&volume, &out, &options, &result));
    labels.assign((uint32_t *)out.data, (uint32_t *)out.data + nx * ny * nz);
    vl_volume_free(&out);
    vl_label_result_free(&result);
    vl_volume_free(&volume);
}

static void run_case(const char *name, const uint8_t *rgb_host, const uint8_t *stack_host, int64_t nx, int64_t ny,
                     int64_t nz, int repeats)
{
    const int64_t voxels = nx * ny * nz;
    vl_color_range range;
    vl_color_range_default(&range, VL_COLOR_THESIS);
    static vl_morph_pass passes[2];
    int pass_count = vl_morph_plan(VL_MORPH_OPEN, VL_SE_THESIS, 0, 1, passes);

    uint8_t *pinned_in = NULL, *mask_d = NULL, *scratch_d = NULL, *rgb_d = NULL;
    uint32_t *labels_d = NULL, *labels_pinned = NULL;
    size_t in_bytes = (size_t)voxels * (rgb_host ? 3 : 1);
    CUDA_CHECK(cudaMallocHost((void **)&pinned_in, in_bytes));
    CUDA_CHECK(cudaMallocHost((void **)&labels_pinned, (size_t)voxels * 4));
    memcpy(pinned_in, rgb_host ? rgb_host : stack_host, in_bytes);
    CUDA_CHECK(cudaMalloc((void **)&mask_d, (size_t)voxels));
    CUDA_CHECK(cudaMalloc((void **)&scratch_d, (size_t)voxels));
    CUDA_CHECK(cudaMalloc((void **)&labels_d, (size_t)voxels * 4));
    if (rgb_host)
        CUDA_CHECK(cudaMalloc((void **)&rgb_d, in_bytes));

    std::vector<float> t_h2d, t_color, t_morph, t_ccl, t_ccl_kernels, t_d2h;
    timer clock;
    uint32_t count = 0;
    for (int r = 0; r < repeats + 1; r++) { /* the first round warms up and is dropped */
        clock.begin();
        CUDA_CHECK(cudaMemcpy(rgb_host ? rgb_d : mask_d, pinned_in, in_bytes, cudaMemcpyHostToDevice));
        float h2d = clock.end(), color = 0;
        if (rgb_host) {
            clock.begin();
            check(vl_color_threshold_device(rgb_d, mask_d, voxels, &range));
            color = clock.end();
        }
        clock.begin();
        check(vl_morphology_device(mask_d, scratch_d, nx, ny, nz, passes, pass_count));
        float morph = clock.end();
        vl_gpu_label_run run;
        memset(&run, 0, sizeof run);
        clock.begin();
        check(vl_gpu_label_device(mask_d, labels_d, nx, ny, nz, 4, VL_ORDER_MATLAB, NULL, 1, &run));
        float ccl = clock.end();
        count = run.count;
        float ccl_kernels = run.total_ms;
        vl_gpu_label_run_free(&run);
        clock.begin();
        CUDA_CHECK(cudaMemcpy(labels_pinned, labels_d, (size_t)voxels * 4, cudaMemcpyDeviceToHost));
        float d2h = clock.end();
        if (r == 0)
            continue;
        t_h2d.push_back(h2d), t_color.push_back(color), t_morph.push_back(morph), t_ccl.push_back(ccl);
        t_ccl_kernels.push_back(ccl_kernels), t_d2h.push_back(d2h);
    }
    std::vector<uint8_t> mask_gpu((size_t)voxels), mask_cpu;
    std::vector<uint32_t> labels_cpu;
    CUDA_CHECK(cudaMemcpy(mask_gpu.data(), mask_d, (size_t)voxels, cudaMemcpyDeviceToHost));
    cpu_reference(rgb_host, stack_host, nx, ny, nz, &range, mask_cpu, labels_cpu);
    bool same_mask = mask_gpu == mask_cpu;
    bool same_labels = memcmp(labels_cpu.data(), labels_pinned, (size_t)voxels * 4) == 0;
    float c = median(t_color), m = median(t_morph), l = median(t_ccl);
    printf("%-14s %8.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %8u  %s\n", name, median(t_h2d), c, m, l,
           median(t_ccl_kernels), median(t_d2h), c + m + l, count,
           same_mask && same_labels ? "identical to CPU" : same_mask ? "LABELS DIFFER" : "MASK DIFFERS");
    cudaFreeHost(pinned_in), cudaFreeHost(labels_pinned);
    cudaFree(mask_d), cudaFree(scratch_d), cudaFree(labels_d), cudaFree(rgb_d);
}

/* docs C7: HSV + threshold of `slices` 512x512 RGB slices (3 bytes in, 1 out per pixel) against a
 * device-to-device copy of the RGB bytes (read + write), as effective bandwidths. */
static void bandwidth_check(int slices, int repeats)
{
    const int64_t pixels = (int64_t)512 * 512 * slices;
    std::vector<uint8_t> frame((size_t)512 * 512 * 3);
    bench_make_frame(frame.data(), 512, 512, 7);
    uint8_t *rgb_d = NULL, *mask_d = NULL, *copy_d = NULL;
    CUDA_CHECK(cudaMalloc((void **)&rgb_d, (size_t)pixels * 3));
    CUDA_CHECK(cudaMalloc((void **)&mask_d, (size_t)pixels));
    CUDA_CHECK(cudaMalloc((void **)&copy_d, (size_t)pixels * 3));
    for (int z = 0; z < slices; z++)
        CUDA_CHECK(cudaMemcpy(rgb_d + (size_t)z * frame.size(), frame.data(), frame.size(), cudaMemcpyHostToDevice));
    vl_color_range range;
    vl_color_range_default(&range, VL_COLOR_THESIS);
    std::vector<float> t_kernel, t_copy;
    timer clock;
    for (int r = 0; r < repeats + 1; r++) {
        clock.begin();
        check(vl_color_threshold_device(rgb_d, mask_d, pixels, &range));
        float kernel = clock.end();
        clock.begin();
        CUDA_CHECK(cudaMemcpy(copy_d, rgb_d, (size_t)pixels * 3, cudaMemcpyDeviceToDevice));
        float copy = clock.end();
        if (r > 0)
            t_kernel.push_back(kernel), t_copy.push_back(copy);
    }
    float k = median(t_kernel), c = median(t_copy);
    double kernel_gbs = 4.0 * pixels / (k * 1e6), copy_gbs = 6.0 * pixels / (c * 1e6);
    printf("hsv+thr %dx512x512: %.3f ms = %.0f GB/s (4 B/px); D2D copy of the RGB: %.3f ms = %.0f GB/s; ratio %.2f\n",
           slices, k, kernel_gbs, c, copy_gbs, kernel_gbs / copy_gbs);
    cudaFree(rgb_d), cudaFree(mask_d), cudaFree(copy_d);
}

int main(int argc, char **argv)
{
    int slices = 400, repeats = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--slices") == 0)
            slices = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--repeats") == 0)
            repeats = atoi(argv[i + 1]);
    }
    char device[128];
    vl_device_gpu_name(0, device, sizeof device);
    printf("# %s, device-resident stages, median of %d (ms); total3 = hsv+thr + ero+dil + ccl4\n", device, repeats);
    printf("%-14s %8s %9s %9s %9s %9s %9s %9s %8s\n", "input", "H2D", "hsv+thr", "ero+dil", "ccl4", "(kernels)",
           "D2H(u32)", "total3", "N");
    const int sizes[3][2] = {{640, 480}, {800, 600}, {1600, 1200}};
    for (int s = 0; s < 3; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        std::vector<uint8_t> rgb((size_t)w * h * 3);
        bench_make_frame(rgb.data(), w, h, (uint64_t)s + 1);
        char name[32];
        snprintf(name, sizeof name, "%dx%d", w, h);
        run_case(name, rgb.data(), NULL, w, h, 1, repeats);
    }
    bandwidth_check(600, repeats);
    std::vector<uint8_t> stack((size_t)512 * 512 * slices);
    bench_make_ct_mask(stack.data(), 512, 512, slices);
    char name[32];
    snprintf(name, sizeof name, "512x512x%d", slices);
    run_case(name, NULL, stack.data(), 512, 512, slices, repeats < 5 ? repeats : 5);
    return 0;
}
