/* The GPU labeller on a device that is nearly full (issue 3: out of memory means z-slabs or the CPU, with
 * a warning, never a crash). The test takes all but a little of the device's free memory itself, then:
 *   1. with 96 MiB left, 512x512x200 volumes (0.4 GB of mask and labels) are labelled in z-slabs sized
 *      from the real free memory, exactly as the CPU labels them (conn 26 matlab; conn 6 size order,
 *      whose 1 M+ sizes are not planned for, so slabs may run out and be retried at half the depth);
 *   2. with 2 to 4 MiB left, not one 1024x1024 slice (5.5 MiB) fits: --device gpu fails with VL_ERR_MEMORY and
 *      leaves nothing allocated, --device auto labels on the CPU and says why (gpu_failed).
 * Exits 77 without a usable GPU. Run alone (RUN_SERIAL): it starves every other user of the device. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>

#include <vector>

#include "label_compare.h"
#include "label/label_gpu.h"
#include "voxlabel/label.h"
#include "test_check.h"

namespace {

/* Device memory held by the test, so that the labeller sees only `leave` bytes free. */
struct Hog {
    std::vector<void *> blocks;
    size_t take_all_but(size_t leave)
    {
        size_t free_bytes = 0, total_bytes = 0;
        for (size_t chunk = (size_t)1 << 30; chunk >= ((size_t)2 << 20); chunk /= 2)
            for (;;) {
                cudaMemGetInfo(&free_bytes, &total_bytes);
                void *block = nullptr;
                if (free_bytes < leave + chunk || cudaMalloc(&block, chunk) != cudaSuccess)
                    break;
                blocks.push_back(block);
            }
        cudaGetLastError();
        cudaMemGetInfo(&free_bytes, &total_bytes);
        return free_bytes;
    }
    void release()
    {
        for (void *block : blocks)
            cudaFree(block);
        blocks.clear();
    }
};

uint64_t rng_state = 0x2545F4914F6CDD1Dull;

void fill_noise(vl_volume *mask, double density)
{
    uint8_t *m = static_cast<uint8_t *>(mask->data);
    const uint64_t threshold = (uint64_t)(density * 18446744073709551615.0);
    for (int64_t i = 0; i < vl_volume_voxels(mask); i++) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        m[i] = rng_state < threshold;
    }
}

/* Case 1: labelled on the nearly full GPU, in z-slabs, identical to the CPU. */
void slabs_under_pressure(const vl_volume &mask, int connectivity, vl_label_order order)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = order;
    vl_volume cpu_labels, gpu_labels;
    vl_label_result cpu, gpu;
    const vl_status on_cpu = vl_label_volume_cpu(&mask, &cpu_labels, &options, &cpu);
    CHECK(on_cpu == VL_OK, "conn %d %s: cpu labelling failed", connectivity, vl_label_order_name(order));
    if (on_cpu != VL_OK)
        return;
    options.device.kind = VL_DEVICE_GPU;
    const vl_status on_gpu = vl_label_volume(&mask, &gpu_labels, &options, &gpu);
    CHECK(on_gpu == VL_OK, "conn %d %s on the nearly full GPU: labelling failed", connectivity,
          vl_label_order_name(order));
    if (on_gpu == VL_OK) {
        const bool same = vl_test_same_labelling(&cpu_labels, &cpu, "cpu", &gpu_labels, &gpu, "gpu", "nearly full GPU");
        CHECK(same, "conn %d %s on the nearly full GPU: labels differ from the CPU's", connectivity,
              vl_label_order_name(order));
        CHECK(gpu.slabs >= 2, "conn %d %s on the nearly full GPU: %lld z-slab(s), expected at least 2", connectivity,
              vl_label_order_name(order), (long long)gpu.slabs);
        const bool failed = !same || gpu.slabs < 2;
        printf("%s conn %d %s on the nearly full GPU: %s, %u components%s\n", failed ? "FAIL" : "ok", connectivity,
               vl_label_order_name(order), gpu.device_name, gpu.count, same ? "" : ", labels differ from the CPU's");
        vl_volume_free(&gpu_labels);
        vl_label_result_free(&gpu);
    }
    vl_volume_free(&cpu_labels);
    vl_label_result_free(&cpu);
}

/* Case 2: not one slice fits. */
void no_slice_fits(const vl_volume &mask)
{
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_GPU;
    vl_volume labels;
    vl_label_result result;
    const vl_status status = vl_label_volume(&mask, &labels, &options, &result);
    CHECK(status == VL_ERR_MEMORY && !labels.data && !result.sizes,
          "--device gpu with no room for a slice: status %d (want VL_ERR_MEMORY), %s", (int)status,
          labels.data || result.sizes ? "outputs left allocated" : "nothing left allocated");
    if (status != VL_ERR_MEMORY || labels.data || result.sizes) {
        if (status == VL_OK) {
            vl_volume_free(&labels);
            vl_label_result_free(&result);
        }
    } else {
        printf("ok --device gpu with no room for a slice: %s\n", vl_last_error());
    }
    options.device.kind = VL_DEVICE_AUTO;
    const vl_status automatic = vl_label_volume(&mask, &labels, &options, &result);
    CHECK(automatic == VL_OK, "--device auto with no room for a slice: labelling failed");
    if (automatic != VL_OK)
        return;
    vl_volume cpu_labels;
    vl_label_result cpu;
    options.device.kind = VL_DEVICE_CPU;
    const bool labelled = vl_label_volume_cpu(&mask, &cpu_labels, &options, &cpu) == VL_OK;
    const bool ok = labelled && result.outcome.used == VL_DEVICE_CPU && result.outcome.gpu_failed &&
                    result.outcome.fallback_reason[0] &&
                    vl_test_same_labelling(&cpu_labels, &cpu, "cpu", &labels, &result, "auto", "no room for a slice");
    CHECK(ok, "--device auto with no room for a slice: not the CPU's labels with gpu_failed and a reason");
    printf("%s --device auto with no room for a slice: on %s, gpu_failed %d, reason '%s'\n", ok ? "ok" : "FAIL",
           result.device_name, result.outcome.gpu_failed, result.outcome.fallback_reason);
    if (labelled) {
        vl_volume_free(&cpu_labels);
        vl_label_result_free(&cpu);
    }
    vl_volume_free(&labels);
    vl_label_result_free(&result);
}

} // namespace

int main()
{
    char why[256] = "";
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    vl_volume noise, wide;
    const bool allocated = vl_volume_create(&noise, 512, 512, 200, VL_U8) == VL_OK &&
                           vl_volume_create(&wide, 1024, 1024, 8, VL_U8) == VL_OK;
    CHECK(allocated, "host memory for the masks");
    if (!allocated)
        return test_finish("gpu_memory_test");
    fill_noise(&noise, 0.3);
    fill_noise(&wide, 0.3);
    Hog hog;
    const size_t left = hog.take_all_but((size_t)96 << 20);
    printf("device memory left free: %.1f MiB\n", left / 1048576.0);
    slabs_under_pressure(noise, 26, VL_ORDER_MATLAB);
    slabs_under_pressure(noise, 6, VL_ORDER_SIZE);
    const size_t little = hog.take_all_but((size_t)2 << 20);
    printf("device memory left free: %.1f MiB (a 1024x1024 slice needs %.1f MiB)\n", little / 1048576.0,
           vl_gpu_label_bytes_per_slice(1024, 1024) / 1048576.0);
    no_slice_fits(wide);
    hog.release();
    vl_volume_free(&noise);
    vl_volume_free(&wide);
    return test_finish("gpu_memory_test");
}
