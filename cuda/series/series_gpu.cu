/* vl_series_label's GPU half: one CT series on the device from the threshold to the statistics.
 *
 * The CT goes up once (straight from host memory pinned through the engine, else through the pinned staging of
 * cuda/core/gpu_transfer.cu); the mask is made on the device
 * (the comparison of src/core/threshold.c, in the CT's own type for integers and in double for floats), labelled
 * there (vl_gpu_label_device), and the statistics' sums are taken from the device labels and CT
 * (vl_stats_compute_resident). Only the sizes, the sums and the labels come back, the labels narrowed on the
 * device to the type the label file stores when the caller allows. The CT, mask, labels and narrowed buffers are
 * kept in vl_series_gpu for the next series and grow only when a series needs more. */
#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cuda_check.h"
#include "core/gpu_transfer.h"
#include "label/ccl_gpu.h"
#include "label/label_gpu.h"
#include "series/series_gpu.h"
#include "stats/stats_resident.h"
#include "voxlabel/threshold.h"

struct vl_series_gpu {
    int gpu_index;
    size_t ct_bytes, voxels; /* what the buffers hold */
    void *ct;
    uint8_t *mask;
    uint32_t *labels;
    void *narrow;            /* 2 bytes per voxel: u8 or u16 labels */
    cudaEvent_t uploaded;    /* a pinned CT's upload, waited for asleep; made on first use */
};

namespace {

double seconds_since(const timespec &start)
{
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9;
}

void release_buffers(vl_series_gpu *s)
{
    cudaFree(s->ct);
    cudaFree(s->mask);
    cudaFree(s->labels);
    cudaFree(s->narrow);
    s->ct = s->mask = nullptr;
    s->labels = nullptr;
    s->narrow = nullptr;
    s->ct_bytes = s->voxels = 0;
}

/* Device bytes a series of `voxels` with a CT of `ct_bytes` needs: its four buffers and the labeller's
 * union-find scratch (label_gpu.h plans 1/4 byte per voxel beyond the mask and labels), plus room for the
 * statistics' O(N) arrays and CUB. */
uint64_t series_bytes(int64_t nx, int64_t ny, int64_t nz, size_t ct_bytes)
{
    const uint64_t voxels = (uint64_t)nx * ny * nz;
    return ct_bytes + voxels * (1 + 4 + 2) + voxels / 4 + ((uint64_t)64 << 20);
}

/* The buffers for this series, kept when large enough. */
cudaError_t reserve(vl_series_gpu *s, int64_t voxels, size_t ct_bytes)
{
    if ((size_t)voxels <= s->voxels && ct_bytes <= s->ct_bytes)
        return cudaSuccess;
    const size_t keep_voxels = (size_t)voxels > s->voxels ? (size_t)voxels : s->voxels;
    const size_t keep_ct = ct_bytes > s->ct_bytes ? ct_bytes : s->ct_bytes;
    release_buffers(s);
    cudaError_t error = cudaMalloc(&s->ct, keep_ct);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&s->mask, keep_voxels);
    if (error == cudaSuccess)
        error = cudaMalloc((void **)&s->labels, keep_voxels * sizeof(uint32_t));
    if (error == cudaSuccess)
        error = cudaMalloc(&s->narrow, keep_voxels * sizeof(uint16_t));
    if (error != cudaSuccess) {
        release_buffers(s);
        return error;
    }
    s->voxels = keep_voxels;
    s->ct_bytes = keep_ct;
    return cudaSuccess;
}

template <typename T>
__global__ void threshold_integers(const T *in, uint8_t *out, long long n, T low, T high)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = (uint8_t)(in[i] >= low) & (uint8_t)(in[i] <= high);
}

__global__ void threshold_floats(const float *in, uint8_t *out, long long n, double lo, double hi)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = (uint8_t)((double)in[i] >= lo) & (uint8_t)((double)in[i] <= hi);
}

template <typename T>
__global__ void narrow_labels(const uint32_t *in, T *out, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        out[i] = (T)in[i];
}

constexpr int kThreads = 256, kBlocks = 4096;

/* src/core/threshold.c for integer types: the range narrowed to the whole values T holds, empty when none. */
template <typename T>
cudaError_t threshold_in_type(const void *ct, uint8_t *mask, long long n, double lo, double hi, double type_min,
                              double type_max)
{
    const double low = ceil(lo), high = floor(hi);
    if (low > type_max || high < type_min || low > high)
        return cudaMemsetAsync(mask, 0, (size_t)n);
    const T l = low < type_min ? (T)type_min : (T)low;
    const T h = high > type_max ? (T)type_max : (T)high;
    threshold_integers<T><<<kBlocks, kThreads>>>(static_cast<const T *>(ct), mask, n, l, h);
    return cudaGetLastError();
}

cudaError_t threshold_on_device(const void *ct, vl_dtype dtype, uint8_t *mask, long long n, double lo, double hi)
{
    switch (dtype) {
    case VL_U8: return threshold_in_type<uint8_t>(ct, mask, n, lo, hi, 0, UINT8_MAX);
    case VL_I16: return threshold_in_type<int16_t>(ct, mask, n, lo, hi, INT16_MIN, INT16_MAX);
    case VL_U16: return threshold_in_type<uint16_t>(ct, mask, n, lo, hi, 0, UINT16_MAX);
    case VL_U32: return threshold_in_type<uint32_t>(ct, mask, n, lo, hi, 0, UINT32_MAX);
    case VL_F32:
        threshold_floats<<<kBlocks, kThreads>>>(static_cast<const float *>(ct), mask, n, lo, hi);
        return cudaGetLastError();
    }
    return cudaErrorInvalidValue;
}

/* The series as the separate GPU stages run it, for a volume the resident buffers do not take: the host
 * threshold, the labeller in z-slabs, the statistics with their own uploads. */
vl_status separate_stages(const vl_volume *ct, const vl_series_request *request, vl_volume *labels,
                          vl_label_result *result, vl_component_stats **stats, vl_series_timings *timings)
{
    timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    vl_volume mask = {};
    vl_status status = vl_threshold(ct, request->lo, request->hi, &mask);
    if (status != VL_OK)
        return status;
    timings->threshold = seconds_since(start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    status = vl_label_volume_gpu(&mask, labels, request->label, result);
    vl_volume_free(&mask);
    if (status != VL_OK)
        return status;
    timings->label = seconds_since(start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    vl_stats_options options;
    if (request->stats)
        options = *request->stats;
    else
        vl_stats_options_default(&options);
    options.device = request->label->device;
    options.device.kind = VL_DEVICE_GPU;
    options.outcome = nullptr;
    status = vl_component_stats_compute(labels, ct, result->count, &options, stats);
    if (status != VL_OK) {
        vl_label_result_free(result);
        vl_volume_free(labels);
        return status;
    }
    timings->stats = seconds_since(start);
    return VL_OK;
}

/* The resident run; on failure the caller frees what it made. */
vl_status resident(vl_series_gpu *s, const vl_volume *ct, bool ct_pinned, const vl_series_request *request,
                   vl_volume *labels, vl_label_result *result, vl_component_stats **stats,
                   vl_series_timings *timings)
{
    const long long n = (long long)vl_volume_voxels(ct);
    const size_t ct_bytes = (size_t)n * vl_dtype_size(ct->dtype);
    timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    VL_CUDA_TRY(reserve(s, n, ct_bytes), "allocating the series buffers");
    /* Page-locked memory goes by DMA as it is, this thread asleep meanwhile (CUDA's default wait spins); pageable
     * memory through the staging buffers. */
    if (ct_pinned) {
        if (!s->uploaded)
            VL_CUDA_TRY(cudaEventCreateWithFlags(&s->uploaded, cudaEventDisableTiming | cudaEventBlockingSync),
                        "uploading the CT");
        VL_CUDA_TRY(cudaMemcpyAsync(s->ct, ct->data, ct_bytes, cudaMemcpyHostToDevice, nullptr), "uploading the CT");
        VL_CUDA_TRY(cudaEventRecord(s->uploaded, nullptr), "uploading the CT");
        VL_CUDA_TRY(cudaEventSynchronize(s->uploaded), "uploading the CT");
    } else {
        VL_CUDA_TRY(vl_gpu_upload(s->ct, ct->data, ct_bytes), "uploading the CT");
    }
    timings->upload = seconds_since(start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    VL_CUDA_TRY(threshold_on_device(s->ct, ct->dtype, s->mask, n, request->lo, request->hi), "thresholding");
    VL_CUDA_TRY(cudaStreamSynchronize(nullptr), "thresholding");
    timings->threshold = seconds_since(start);

    clock_gettime(CLOCK_MONOTONIC, &start);
    const vl_label_options *options = request->label;
    vl_progress_report(&options->progress, "labelling (gpu)", 0.0);
    vl_gpu_label_run run;
    vl_status status = vl_gpu_label_device(s->mask, s->labels, ct->nx, ct->ny, ct->nz, options->connectivity,
                                           options->order, nullptr, 0, &run);
    if (status != VL_OK)
        return status;
    result->sizes = static_cast<uint64_t *>(malloc(((size_t)run.count + 1) * sizeof(uint64_t)));
    cudaError_t error = result->sizes ? cudaSuccess : cudaErrorMemoryAllocation;
    if (result->sizes && run.count > 0)
        error = cudaMemcpy(result->sizes, run.sizes, (size_t)run.count * sizeof(uint64_t), cudaMemcpyDeviceToHost);
    vl_gpu_label_run_free(&run);
    if (!result->sizes)
        return vl_fail(VL_ERR_MEMORY, "label: no memory for %u component sizes", run.count);
    VL_CUDA_TRY(error, "downloading the sizes");
    result->count = run.count;
    result->slabs = 1;
    char name[96]; /* as vl_label_volume_gpu names it */
    vl_device_gpu_name(options->device.gpu_index, name, sizeof name);
    snprintf(result->device_name, sizeof result->device_name, "%s", name);
    vl_progress_report(&options->progress, "labelling (gpu)", 1.0);
    timings->label = seconds_since(start);

    clock_gettime(CLOCK_MONOTONIC, &start);
    const vl_dtype dtype = !request->narrow_labels ? VL_U32
                           : run.count <= UINT8_MAX ? VL_U8
                           : run.count <= UINT16_MAX ? VL_U16
                                                     : VL_U32;
    if ((status = vl_volume_create_uninitialised(labels, ct->nx, ct->ny, ct->nz, dtype)) != VL_OK)
        return status;
    labels->geometry = ct->geometry;
    const void *from = s->labels;
    if (dtype == VL_U8)
        narrow_labels<uint8_t><<<kBlocks, kThreads>>>(s->labels, static_cast<uint8_t *>(s->narrow), n);
    else if (dtype == VL_U16)
        narrow_labels<uint16_t><<<kBlocks, kThreads>>>(s->labels, static_cast<uint16_t *>(s->narrow), n);
    if (dtype != VL_U32) {
        VL_CUDA_TRY(cudaGetLastError(), "narrowing the labels");
        VL_CUDA_TRY(cudaStreamSynchronize(nullptr), "narrowing the labels");
        from = s->narrow;
    }
    VL_CUDA_TRY(vl_gpu_download(labels->data, from, (size_t)n * vl_dtype_size(dtype)), "downloading the labels");
    timings->download = seconds_since(start);
    clock_gettime(CLOCK_MONOTONIC, &start);
    status = vl_stats_compute_resident(s->labels, s->ct, labels, ct, result->count, request->stats, stats);
    timings->stats = seconds_since(start);
    return status;
}

} // namespace

extern "C" void vl_series_gpu_free(vl_series_gpu *state)
{
    if (!state)
        return;
    if (state->ct || state->mask || state->labels || state->narrow || state->uploaded) {
        int previous = 0;
        cudaGetDevice(&previous);
        cudaSetDevice(state->gpu_index);
        release_buffers(state);
        if (state->uploaded)
            cudaEventDestroy(state->uploaded);
        cudaSetDevice(previous);
    }
    free(state);
}

extern "C" vl_status vl_series_gpu_pin(int gpu_index, void *data, size_t bytes)
{
    int previous = 0;
    cudaGetDevice(&previous);
    cudaError_t error = cudaSetDevice(gpu_index);
    if (error == cudaSuccess)
        error = cudaHostRegister(data, bytes, cudaHostRegisterPortable);
    cudaSetDevice(previous);
    if (error != cudaSuccess) {
        cudaGetLastError(); /* not sticky: clear it for the calls that follow */
        return vl_fail(VL_ERR_DEVICE, "series: cannot pin %zu bytes of host memory: %s", bytes,
                       cudaGetErrorString(error));
    }
    return VL_OK;
}

extern "C" void vl_series_gpu_unpin(void *data)
{
    if (cudaHostUnregister(data) != cudaSuccess)
        cudaGetLastError();
}

extern "C" vl_status vl_series_label_gpu(vl_series_gpu **state, const vl_volume *ct, int ct_pinned,
                                         const vl_series_request *request, vl_volume *labels,
                                         vl_label_result *result, vl_component_stats **stats,
                                         vl_series_timings *timings)
{
    const vl_label_options *options = request->label;
    if (!vl_connectivity_is_valid(options->connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "--conn: %d is not one of 6, 18, 26, 4, 8", options->connectivity);
    VL_CUDA_TRY(cudaSetDevice(options->device.gpu_index), "selecting the device");
    if (*state && (*state)->gpu_index != options->device.gpu_index) {
        vl_series_gpu_free(*state);
        *state = nullptr;
        VL_CUDA_TRY(cudaSetDevice(options->device.gpu_index), "selecting the device");
    }
    if (!*state) {
        *state = static_cast<vl_series_gpu *>(calloc(1, sizeof **state));
        if (!*state)
            return vl_fail(VL_ERR_MEMORY, "series: out of memory");
        (*state)->gpu_index = options->device.gpu_index;
    }
    vl_series_gpu *s = *state;
    /* The budget: what is free beside the buffers already held, less an eighth for CUB and the O(N) arrays
     * (as the labeller plans), and --gpu-memory when given. */
    size_t free_bytes = 0, total_bytes = 0;
    VL_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes), "reading the free device memory");
    const uint64_t held = s->ct_bytes + (uint64_t)s->voxels * (1 + 4 + 2);
    uint64_t budget = free_bytes - free_bytes / 8 + held;
    if (options->device.gpu_memory && options->device.gpu_memory < budget)
        budget = options->device.gpu_memory;
    const size_t ct_bytes = (size_t)vl_volume_voxels(ct) * vl_dtype_size(ct->dtype);
    if (!vl_gpu_label_shape_ok(ct->nx, ct->ny, ct->nz) || series_bytes(ct->nx, ct->ny, ct->nz, ct_bytes) > budget) {
        release_buffers(s);
        return separate_stages(ct, request, labels, result, stats, timings);
    }
    vl_status status = resident(s, ct, ct_pinned != 0, request, labels, result, stats, timings);
    if (status == VL_OK)
        return VL_OK;
    vl_label_result_free(result);
    vl_volume_free(labels);
    memset(result, 0, sizeof *result);
    if (status == VL_ERR_MEMORY) {
        /* Another process took the memory meanwhile: the separate stages need less at once. */
        release_buffers(s);
        return separate_stages(ct, request, labels, result, stats, timings);
    }
    return status;
}
