/* Sample types of foreign files and their conversion to and from the vl_dtype set, and the dtype a label
 * map is stored in (vl_label_dtype_for, docs/design.md §7). The bottom volume room: it calls no io/ file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "voxlabel/error.h"
#include "core/parallel.h"
#include "volume_helpers.h"

size_t vl_sample_size(vl_sample_type type)
{
    switch (type) {
    case VL_SAMPLE_U8:
    case VL_SAMPLE_I8: return 1;
    case VL_SAMPLE_U16:
    case VL_SAMPLE_I16: return 2;
    case VL_SAMPLE_U32:
    case VL_SAMPLE_I32:
    case VL_SAMPLE_F32: return 4;
    case VL_SAMPLE_U64:
    case VL_SAMPLE_I64:
    case VL_SAMPLE_F64: return 8;
    }
    return 0;
}

const char *vl_sample_name(vl_sample_type type)
{
    static const char *names[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32",
                                  "float64"};
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "unknown";
}

vl_dtype vl_sample_native_dtype(vl_sample_type type)
{
    switch (type) {
    case VL_SAMPLE_U8: return VL_U8;
    case VL_SAMPLE_I16: return VL_I16;
    case VL_SAMPLE_U16: return VL_U16;
    case VL_SAMPLE_U32: return VL_U32;
    case VL_SAMPLE_F32: return VL_F32;
    default: return (vl_dtype)0;
    }
}

vl_sample_type vl_sample_type_of(vl_dtype dtype)
{
    switch (dtype) {
    case VL_U8: return VL_SAMPLE_U8;
    case VL_I16: return VL_SAMPLE_I16;
    case VL_U16: return VL_SAMPLE_U16;
    case VL_U32: return VL_SAMPLE_U32;
    case VL_F32: return VL_SAMPLE_F32;
    }
    return VL_SAMPLE_U8;
}

void vl_swap_bytes(void *data, int64_t count, size_t element_size)
{
    if (element_size < 2)
        return;
    unsigned char *bytes = data;
    for (int64_t i = 0; i < count; i++, bytes += element_size)
        for (size_t a = 0, b = element_size - 1; a < b; a++, b--) {
            unsigned char t = bytes[a];
            bytes[a] = bytes[b];
            bytes[b] = t;
        }
}

static double sample_value(const void *samples, vl_sample_type type, int64_t i)
{
    switch (type) {
    case VL_SAMPLE_U8: return ((const uint8_t *)samples)[i];
    case VL_SAMPLE_I8: return ((const int8_t *)samples)[i];
    case VL_SAMPLE_U16: return ((const uint16_t *)samples)[i];
    case VL_SAMPLE_I16: return ((const int16_t *)samples)[i];
    case VL_SAMPLE_U32: return ((const uint32_t *)samples)[i];
    case VL_SAMPLE_I32: return ((const int32_t *)samples)[i];
    case VL_SAMPLE_U64: return (double)((const uint64_t *)samples)[i];
    case VL_SAMPLE_I64: return (double)((const int64_t *)samples)[i];
    case VL_SAMPLE_F32: return ((const float *)samples)[i];
    case VL_SAMPLE_F64: return ((const double *)samples)[i];
    }
    return 0.0;
}

static void store_value(void *data, vl_dtype dtype, int64_t i, double value)
{
    switch (dtype) {
    case VL_U8: ((uint8_t *)data)[i] = (uint8_t)value; break;
    case VL_I16: ((int16_t *)data)[i] = (int16_t)value; break;
    case VL_U16: ((uint16_t *)data)[i] = (uint16_t)value; break;
    case VL_U32: ((uint32_t *)data)[i] = (uint32_t)value; break;
    case VL_F32: ((float *)data)[i] = (float)value; break;
    }
}

/* Range and integrality of the (scaled) samples, one typed loop per sample type. An integral test through
 * int64_t avoids a floor() call per voxel; values beyond 2^63 are integral in double anyway. */
typedef struct sample_range {
    double lo, hi;
    int integral, finite;
} sample_range;

#define VL_SCAN_SAMPLES(T)                                                                                         \
    do {                                                                                                           \
        const T *s = samples;                                                                                      \
        for (int64_t i = 0; i < count; i++) {                                                                      \
            double v = scaled ? (double)s[i] * slope + intercept : (double)s[i];                                  \
            if (!isfinite(v)) {                                                                                    \
                r.finite = r.integral = 0;                                                                         \
                continue;                                                                                          \
            }                                                                                                      \
            r.lo = v < r.lo ? v : r.lo;                                                                            \
            r.hi = v > r.hi ? v : r.hi;                                                                            \
            if (fabs(v) < 9.2e18 && (double)(int64_t)v != v)                                                       \
                r.integral = 0;                                                                                    \
        }                                                                                                          \
    } while (0)

static sample_range scan_samples(const void *samples, vl_sample_type type, int64_t count, int scaled, double slope,
                                 double intercept)
{
    sample_range r = {INFINITY, -INFINITY, 1, 1};
    switch (type) {
    case VL_SAMPLE_U8: VL_SCAN_SAMPLES(uint8_t); break;
    case VL_SAMPLE_I8: VL_SCAN_SAMPLES(int8_t); break;
    case VL_SAMPLE_U16: VL_SCAN_SAMPLES(uint16_t); break;
    case VL_SAMPLE_I16: VL_SCAN_SAMPLES(int16_t); break;
    case VL_SAMPLE_U32: VL_SCAN_SAMPLES(uint32_t); break;
    case VL_SAMPLE_I32: VL_SCAN_SAMPLES(int32_t); break;
    case VL_SAMPLE_U64: VL_SCAN_SAMPLES(uint64_t); break;
    case VL_SAMPLE_I64: VL_SCAN_SAMPLES(int64_t); break;
    case VL_SAMPLE_F32: VL_SCAN_SAMPLES(float); break;
    case VL_SAMPLE_F64: VL_SCAN_SAMPLES(double); break;
    }
    if (count == 0 || r.lo > r.hi)
        r.lo = r.hi = 0.0;
    return r;
}

#define VL_CONVERT_TO(T, D)                                                                                        \
    do {                                                                                                           \
        const T *s = samples;                                                                                      \
        D *d = out;                                                                                                \
        for (int64_t i = 0; i < count; i++)                                                                        \
            d[i] = (D)(scaled ? (double)s[i] * slope + intercept : (double)s[i]);                                 \
    } while (0)

#define VL_CONVERT_FROM(T)                                                                                         \
    do {                                                                                                           \
        switch (dtype) {                                                                                           \
        case VL_U8: VL_CONVERT_TO(T, uint8_t); break;                                                              \
        case VL_I16: VL_CONVERT_TO(T, int16_t); break;                                                             \
        case VL_U16: VL_CONVERT_TO(T, uint16_t); break;                                                            \
        case VL_U32: VL_CONVERT_TO(T, uint32_t); break;                                                            \
        case VL_F32: VL_CONVERT_TO(T, float); break;                                                               \
        }                                                                                                          \
    } while (0)

static void convert_samples(const void *samples, vl_sample_type type, int64_t count, int scaled, double slope,
                            double intercept, vl_dtype dtype, void *out)
{
    switch (type) {
    case VL_SAMPLE_U8: VL_CONVERT_FROM(uint8_t); break;
    case VL_SAMPLE_I8: VL_CONVERT_FROM(int8_t); break;
    case VL_SAMPLE_U16: VL_CONVERT_FROM(uint16_t); break;
    case VL_SAMPLE_I16: VL_CONVERT_FROM(int16_t); break;
    case VL_SAMPLE_U32: VL_CONVERT_FROM(uint32_t); break;
    case VL_SAMPLE_I32: VL_CONVERT_FROM(int32_t); break;
    case VL_SAMPLE_U64: VL_CONVERT_FROM(uint64_t); break;
    case VL_SAMPLE_I64: VL_CONVERT_FROM(int64_t); break;
    case VL_SAMPLE_F32: VL_CONVERT_FROM(float); break;
    case VL_SAMPLE_F64: VL_CONVERT_FROM(double); break;
    }
}

vl_status vl_samples_to_volume(void *samples, vl_sample_type type, int scaled, double slope, double intercept,
                               vl_volume *volume, const char *what)
{
    const int64_t count = vl_volume_voxels(volume);
    const vl_geometry geometry = volume->geometry;
    vl_dtype native = vl_sample_native_dtype(type);
    if (native && !scaled) {
        volume->dtype = native;
        volume->data = samples;
        return VL_OK;
    }
    const sample_range r = scan_samples(samples, type, count, scaled, slope, intercept);
    vl_dtype dtype;
    if (type == VL_SAMPLE_I8 && !scaled)
        dtype = VL_I16;
    else if (r.integral && r.lo >= 0.0 && r.hi <= (double)UINT32_MAX)
        dtype = VL_U32;
    else if (r.integral && r.lo >= INT16_MIN && r.hi <= INT16_MAX)
        dtype = VL_I16;
    else if (r.integral && fabs(r.lo) <= 16777216.0 && fabs(r.hi) <= 16777216.0)
        dtype = VL_F32;
    else if (!r.integral && fabs(r.lo) <= 3.4e38 && fabs(r.hi) <= 3.4e38)
        dtype = VL_F32;
    else {
        free(samples);
        return vl_fail(VL_ERR_INPUT, "%s: %s values from %.17g to %.17g%s cannot be held by u8, i16, u16, u32 or f32",
                       what, vl_sample_name(type), r.lo, r.hi, r.finite ? "" : " (with NaN/Inf)");
    }
    vl_volume out;
    vl_status status = vl_volume_create_uninitialised(&out, volume->nx, volume->ny, volume->nz, dtype);
    if (status != VL_OK) {
        free(samples);
        return status;
    }
    convert_samples(samples, type, count, scaled, slope, intercept, dtype, out.data);
    free(samples);
    out.geometry = geometry;
    *volume = out;
    return VL_OK;
}

vl_dtype vl_label_dtype_for(uint32_t max_label)
{
    if (max_label <= UINT8_MAX)
        return VL_U8;
    if (max_label <= UINT16_MAX)
        return VL_U16;
    return VL_U32;
}

typedef struct max_label_job {
    const uint32_t *labels;
    int64_t first, end;
    uint32_t max_label;
} max_label_job;

static void *find_max_label(void *argument)
{
    max_label_job *job = argument;
    uint32_t max_label = 0;
    for (int64_t i = job->first; i < job->end; i++)
        max_label = job->labels[i] > max_label ? job->labels[i] : max_label;
    job->max_label = max_label;
    return NULL;
}

/* The largest label decides the dtype: one read of the whole volume, so on every core. */
vl_dtype vl_disk_dtype_for(const vl_volume *volume, const vl_write_options *options)
{
    if (!options->is_label_map || volume->dtype != VL_U32)
        return volume->dtype;
    const int64_t voxels = vl_volume_voxels(volume);
    const int threads = voxels < ((int64_t)1 << 22) ? 1 : vl_cpu_thread_count(0);
    max_label_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (max_label_job){volume->data, voxels * t / threads, voxels * (t + 1) / threads, 0};
    vl_run_parallel(find_max_label, jobs, sizeof jobs[0], threads);
    uint32_t max_label = 0;
    for (int t = 0; t < threads; t++)
        max_label = jobs[t].max_label > max_label ? jobs[t].max_label : max_label;
    return vl_label_dtype_for(max_label);
}

void vl_convert_voxels(const vl_volume *volume, int64_t first, int64_t count, vl_dtype dtype, void *out)
{
    if (dtype == volume->dtype) {
        size_t element = vl_dtype_size(dtype);
        memcpy(out, (const unsigned char *)volume->data + (size_t)first * element, (size_t)count * element);
        return;
    }
    /* Label maps narrowed to their disk type: a plain integer loop (the values fit, so it equals the general one). */
    const uint32_t *labels = (const uint32_t *)volume->data + first;
    if (volume->dtype == VL_U32 && dtype == VL_U8) {
        for (int64_t i = 0; i < count; i++)
            ((uint8_t *)out)[i] = (uint8_t)labels[i];
        return;
    }
    if (volume->dtype == VL_U32 && dtype == VL_U16) {
        for (int64_t i = 0; i < count; i++)
            ((uint16_t *)out)[i] = (uint16_t)labels[i];
        return;
    }
    vl_sample_type source = vl_sample_type_of(volume->dtype);
    for (int64_t i = 0; i < count; i++)
        store_value(out, dtype, i, sample_value(volume->data, source, first + i));
}

vl_status vl_finish_samples(vl_status status, void *samples, vl_sample_type type, int big_endian,
                            const int64_t dims[3], vl_volume *out, const vl_read_options *options, vl_volume *volume,
                            const char *path)
{
    if (status != VL_OK) {
        free(samples);
        return status;
    }
    out->nx = dims[0];
    out->ny = dims[1];
    out->nz = dims[2];
    if (big_endian)
        vl_swap_bytes(samples, vl_volume_voxels(out), vl_sample_size(type));
    status = vl_samples_to_volume(samples, type, 0, 1.0, 0.0, out, path);
    if (status != VL_OK)
        return status;
    vl_progress_report(&options->progress, "reading", 1.0);
    *volume = *out;
    return VL_OK;
}

void vl_detached_path(const char *header_path, const char *data_file, char *out, size_t size)
{
    const char *slash = strrchr(header_path, '/');
    if (data_file[0] == '/' || !slash)
        snprintf(out, size, "%s", data_file);
    else
        snprintf(out, size, "%.*s/%s", (int)(slash - header_path), header_path, data_file);
}
