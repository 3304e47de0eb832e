/* 64-bit indexing: labels a 2048x2048x1100 volume (4.6e9 voxels > 2^32; 2.3e9 voxel pairs > 2^31) on
 * the device and checks every voxel and every size against a closed form.
 * `gpu_large_test slabs`: a 2048x2048x2200 volume (9.2e9 voxels: more voxel pairs than one labelling call
 * numbers) from host memory through vl_label_volume, which labels it in z-slabs; same checks, on the host.
 *
 * The volume: 2x2 columns along z on a 3-voxel pitch, fg(x,y,z) = x%3 < 2 && y%3 < 2, and the columns
 * with (x/3 + y/3) even are cut by the planes z%7 == 6. Columns are 2 voxels apart, so every
 * connectivity gives the same components: whole columns (odd parity) and 6-slice segments (even).
 * In key order the components starting at z = 0 come first, column by column (cx-major for matlab,
 * cy-major for matlab-xy), then segment k of the even columns for k = 1, 2, ...
 * Exits 77 when no GPU with enough memory is present. */
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "label/ccl_gpu.h"
#include "label/label_gpu.h"
#include "test_check.h"

namespace {

struct Columns {
    int64_t nx, ny, nz;
    int64_t ncx, ncy;       /* columns along x and y */
    int64_t segments;       /* along z for the cut columns */
    bool xy;                /* key order matlab-xy (else matlab) */
};

__host__ __device__ bool foreground(const Columns &c, int64_t x, int64_t y, int64_t z)
{
    return x % 3 < 2 && y % 3 < 2 && !(z % 7 == 6 && (x / 3 + y / 3) % 2 == 0);
}

/* Even-parity columns that precede column (a, b) in (a-major, b-minor) order over a grid with nb
 * columns along b. */
__host__ __device__ int64_t even_before(int64_t a, int64_t b, int64_t nb)
{
    int64_t rows = (a + 1) / 2 * ((nb + 1) / 2) + a / 2 * (nb / 2);
    return rows + (a % 2 == 0 ? (b + 1) / 2 : b / 2);
}

__host__ __device__ int64_t even_columns(int64_t na, int64_t nb) { return even_before(na, 0, nb); }

__host__ __device__ uint32_t expected_label(const Columns &c, int64_t x, int64_t y, int64_t z)
{
    if (!foreground(c, x, y, z))
        return 0;
    const int64_t cx = x / 3, cy = y / 3;
    const int64_t a = c.xy ? cy : cx, b = c.xy ? cx : cy, na = c.xy ? c.ncy : c.ncx, nb = c.xy ? c.ncx : c.ncy;
    const bool cut = (cx + cy) % 2 == 0;
    const int64_t k = cut ? z / 7 : 0;
    if (k == 0)
        return (uint32_t)(1 + a * nb + b);
    return (uint32_t)(na * nb + (k - 1) * even_columns(na, nb) + even_before(a, b, nb) + 1);
}

__global__ void fill_kernel(uint8_t *mask, Columns c)
{
    const int64_t voxels = c.nx * c.ny * c.nz;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < voxels; i += (int64_t)gridDim.x * blockDim.x)
        mask[i] = foreground(c, i % c.nx, i / c.nx % c.ny, i / (c.nx * c.ny)) ? 1 : 0;
}

__global__ void check_kernel(const uint32_t *labels, Columns c, unsigned long long *wrong,
                             unsigned long long *first_wrong)
{
    const int64_t voxels = c.nx * c.ny * c.nz;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < voxels; i += (int64_t)gridDim.x * blockDim.x)
        if (labels[i] != expected_label(c, i % c.nx, i / c.nx % c.ny, i / (c.nx * c.ny))) {
            atomicAdd(wrong, 1ull);
            atomicMin(first_wrong, (unsigned long long)i);
        }
}

int check_cuda(cudaError_t error, const char *what)
{
    CHECK(error == cudaSuccess, "%s: %s", what, cudaGetErrorString(error));
    return error == cudaSuccess;
}

/* Every component's size from the closed form, indexed by expected label; 0 (counted) at the first difference. */
int check_sizes(const Columns &c, const unsigned long long *sizes, uint32_t count)
{
    const int64_t total = c.ncx * c.ncy + (c.segments - 1) * even_columns(c.ncx, c.ncy);
    CHECK((int64_t)count == total, "count %u, expected %lld", count, (long long)total);
    if ((int64_t)count != total)
        return 0;
    for (int64_t cx = 0; cx < c.ncx; cx++)
        for (int64_t cy = 0; cy < c.ncy; cy++) {
            const int64_t area = (c.nx - 3 * cx < 2 ? 1 : 2) * (c.ny - 3 * cy < 2 ? 1 : 2);
            const bool cut = (cx + cy) % 2 == 0;
            for (int64_t k = 0; k < (cut ? c.segments : 1); k++) {
                const int64_t z0 = 7 * k, z1 = cut ? (7 * k + 5 < c.nz - 1 ? 7 * k + 5 : c.nz - 1) : c.nz - 1;
                const uint32_t label = expected_label(c, 3 * cx, 3 * cy, z0);
                const bool same = sizes[label - 1] == (unsigned long long)(area * (z1 - z0 + 1));
                CHECK(same, "size of label %u: %llu, expected %lld", label, sizes[label - 1],
                      (long long)(area * (z1 - z0 + 1)));
                if (!same)
                    return 0;
            }
        }
    return 1;
}

/* Runs work(z_begin, z_end) over the slices on every core. */
template <typename Work>
void over_slices(int64_t nz, Work work)
{
    const int64_t threads = (int64_t)std::thread::hardware_concurrency() > 0 ? std::thread::hardware_concurrency() : 1;
    std::vector<std::thread> pool;
    for (int64_t t = 0; t < threads; t++)
        pool.emplace_back(work, nz * t / threads, nz * (t + 1) / threads);
    for (auto &thread : pool)
        thread.join();
}

double seconds_now()
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* The volume from host memory through vl_label_volume (conn 26, matlab order), in z-slabs. */
int run_in_slabs(Columns c)
{
    const int64_t voxels = c.nx * c.ny * c.nz, slice = c.nx * c.ny;
    const double host_bytes = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (host_bytes < (double)voxels * 5.5)
        TEST_SKIP("%lld voxels need %.1f GiB of host memory, %.1f GiB here", (long long)voxels,
                  voxels * 5.5 / (1 << 30), host_bytes / (1 << 30));
    vl_volume mask, labels;
    const vl_status created = vl_volume_create_uninitialised(&mask, c.nx, c.ny, c.nz, VL_U8);
    CHECK(created == VL_OK, "host mask");
    if (created != VL_OK)
        return test_finish("gpu_large_test slabs");
    over_slices(c.nz, [&](int64_t z0, int64_t z1) {
        uint8_t *m = static_cast<uint8_t *>(mask.data);
        for (int64_t z = z0; z < z1; z++)
            for (int64_t y = 0; y < c.ny; y++)
                for (int64_t x = 0; x < c.nx; x++)
                    m[x + c.nx * y + slice * z] = foreground(c, x, y, z);
    });
    vl_label_options options;
    vl_label_options_default(&options);
    options.device.kind = VL_DEVICE_GPU;
    vl_label_result result;
    c.xy = false;
    const double start = seconds_now();
    const vl_status labelled = vl_label_volume(&mask, &labels, &options, &result);
    CHECK(labelled == VL_OK, "labelling in z-slabs");
    if (labelled != VL_OK) {
        vl_volume_free(&mask);
        return test_finish("gpu_large_test slabs");
    }
    const double seconds = seconds_now() - start;
    vl_volume_free(&mask);
    std::vector<unsigned long long> wrong(c.nz, 0);
    over_slices(c.nz, [&](int64_t z0, int64_t z1) {
        const uint32_t *l = static_cast<const uint32_t *>(labels.data);
        for (int64_t z = z0; z < z1; z++)
            for (int64_t y = 0; y < c.ny; y++)
                for (int64_t x = 0; x < c.nx; x++)
                    wrong[z] += l[x + c.nx * y + slice * z] != expected_label(c, x, y, z);
    });
    unsigned long long wrong_voxels = 0;
    for (unsigned long long w : wrong)
        wrong_voxels += w;
    std::vector<unsigned long long> sizes(result.sizes, result.sizes + result.count);
    CHECK(wrong_voxels == 0, "in z-slabs: %llu wrong voxels", wrong_voxels);
    CHECK(result.slabs > 1, "labelled in %lld z-slab(s), expected more than one", (long long)result.slabs);
    const int ok = wrong_voxels == 0 && result.slabs > 1 && check_sizes(c, sizes.data(), result.count);
    printf("%s %lldx%lldx%lld (%lld voxels) conn 26 order matlab from host memory on %s: %u components, %.2f s\n",
           ok ? "ok" : "FAIL", (long long)c.nx, (long long)c.ny, (long long)c.nz, (long long)voxels,
           result.device_name, result.count, seconds);
    vl_volume_free(&labels);
    vl_label_result_free(&result);
    return test_finish("gpu_large_test slabs");
}

} // namespace

int main(int argc, char **argv)
{
    char why[256] = "";
    if (!vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    const bool slabs = argc > 1 && strcmp(argv[1], "slabs") == 0;
    if (slabs)
        argc--, argv++;
    Columns c;
    c.nx = argc > 3 ? atoll(argv[1]) : 2048;
    c.ny = argc > 3 ? atoll(argv[2]) : 2048;
    c.nz = argc > 3 ? atoll(argv[3]) : slabs ? 2200 : 1100;
    c.ncx = (c.nx + 2) / 3;
    c.ncy = (c.ny + 2) / 3;
    c.segments = (c.nz + 6) / 7;
    if (slabs)
        return run_in_slabs(c);
    const int64_t voxels = c.nx * c.ny * c.nz;
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    if ((double)free_bytes < (double)voxels * 5.2)
        TEST_SKIP("%lld voxels need %.1f GiB of device memory, %.1f GiB free", (long long)voxels,
                  voxels * 5.2 / (1 << 30), (double)free_bytes / (1 << 30));
    uint8_t *mask = nullptr;
    uint32_t *labels = nullptr;
    unsigned long long *counters = nullptr;
    if (!check_cuda(cudaMalloc(&mask, (size_t)voxels), "mask") ||
        !check_cuda(cudaMalloc(&labels, (size_t)voxels * 4), "labels") ||
        !check_cuda(cudaMalloc(&counters, 2 * sizeof(unsigned long long)), "counters"))
        return test_finish("gpu_large_test");
    fill_kernel<<<132 * 16, 256>>>(mask, c);
    const struct {
        int connectivity;
        vl_label_order order;
    } runs[] = {{26, VL_ORDER_MATLAB}, {6, VL_ORDER_MATLAB_XY}, {18, VL_ORDER_MATLAB}};
    for (const auto &r : runs) {
        c.xy = r.order == VL_ORDER_MATLAB_XY;
        if (!check_cuda(cudaMemset(labels, 0xAB, (size_t)voxels * 4), "poisoning labels"))
            return test_finish("gpu_large_test");
        vl_gpu_label_run run;
        const vl_status labelled = vl_gpu_label_device(mask, labels, c.nx, c.ny, c.nz, r.connectivity, r.order, nullptr,
                                                       1, &run);
        CHECK(labelled == VL_OK, "conn %d %s: labelling failed", r.connectivity, vl_label_order_name(r.order));
        if (labelled != VL_OK)
            continue;
        unsigned long long init[2] = {0, ~0ull}, found[2];
        check_cuda(cudaMemcpy(counters, init, sizeof init, cudaMemcpyHostToDevice), "counters");
        check_kernel<<<132 * 16, 256>>>(labels, c, counters, counters + 1);
        check_cuda(cudaMemcpy(found, counters, sizeof found, cudaMemcpyDeviceToHost), "checking labels");
        unsigned long long *sizes = (unsigned long long *)malloc((size_t)run.count * sizeof *sizes + 1);
        check_cuda(cudaMemcpy(sizes, run.sizes, (size_t)run.count * sizeof *sizes, cudaMemcpyDeviceToHost), "sizes");
        CHECK(found[0] == 0, "conn %d %s: %llu wrong voxels, first at index %llu", r.connectivity,
              vl_label_order_name(r.order), found[0], found[1]);
        const int ok = found[0] == 0 && check_sizes(c, sizes, run.count);
        printf("%s %lldx%lldx%lld (%lld voxels) conn %d order %s: %u components, %.2f ms union-find, %.2f ms total, "
               "scratch %.1f MiB\n",
               ok ? "ok" : "FAIL", (long long)c.nx, (long long)c.ny, (long long)c.nz, (long long)voxels,
               r.connectivity, vl_label_order_name(r.order), run.count, run.union_ms, run.total_ms,
               run.scratch_bytes / 1048576.0);
        free(sizes);
        vl_gpu_label_run_free(&run);
    }
    cudaFree(mask);
    cudaFree(labels);
    cudaFree(counters);
    return test_finish("gpu_large_test");
}
