/* Sample types of foreign files and their conversion to and from the vl_dtype set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "status.h"
#include "volume_formats.h"

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

int64_t vl_checked_voxel_count(const int64_t dims[3], size_t element)
{
    const int64_t limit = ((int64_t)1 << 62) / (int64_t)(element ? element : 1);
    int64_t count = 1;
    for (int i = 0; i < 3; i++) {
        if (dims[i] <= 0 || dims[i] > limit / count)
            return -1;
        count *= dims[i];
    }
    return count;
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
    double lo = INFINITY, hi = -INFINITY;
    int integral = 1, finite = 1;
    for (int64_t i = 0; i < count; i++) {
        double v = sample_value(samples, type, i);
        if (scaled)
            v = v * slope + intercept;
        if (!isfinite(v)) {
            finite = 0;
            integral = 0;
            continue;
        }
        if (v < lo)
            lo = v;
        if (v > hi)
            hi = v;
        if (integral && v != floor(v))
            integral = 0;
    }
    if (count == 0 || lo > hi)
        lo = hi = 0.0;
    vl_dtype dtype;
    if (type == VL_SAMPLE_I8 && !scaled)
        dtype = VL_I16;
    else if (integral && lo >= 0.0 && hi <= (double)UINT32_MAX)
        dtype = VL_U32;
    else if (integral && lo >= INT16_MIN && hi <= INT16_MAX)
        dtype = VL_I16;
    else if (integral && fabs(lo) <= 16777216.0 && fabs(hi) <= 16777216.0)
        dtype = VL_F32;
    else if (!integral && fabs(lo) <= 3.4e38 && fabs(hi) <= 3.4e38)
        dtype = VL_F32;
    else {
        free(samples);
        return vl_fail(VL_ERR_INPUT, "%s: %s values from %.17g to %.17g%s cannot be held by u8, i16, u16, u32 or f32",
                       what, vl_sample_name(type), lo, hi, finite ? "" : " (with NaN/Inf)");
    }
    vl_volume out;
    vl_status status = vl_volume_create_uninitialised(&out, volume->nx, volume->ny, volume->nz, dtype);
    if (status != VL_OK) {
        free(samples);
        return status;
    }
    for (int64_t i = 0; i < count; i++) {
        double v = sample_value(samples, type, i);
        store_value(out.data, dtype, i, scaled ? v * slope + intercept : v);
    }
    free(samples);
    out.geometry = geometry;
    *volume = out;
    return VL_OK;
}

vl_dtype vl_disk_dtype_for(const vl_volume *volume, const vl_write_options *options)
{
    if (!options->is_label_map || volume->dtype != VL_U32)
        return volume->dtype;
    const uint32_t *labels = volume->data;
    uint32_t max_label = 0;
    for (int64_t i = 0, n = vl_volume_voxels(volume); i < n; i++)
        if (labels[i] > max_label)
            max_label = labels[i];
    return vl_label_dtype_for(max_label);
}

void vl_convert_voxels(const vl_volume *volume, int64_t first, int64_t count, vl_dtype dtype, void *out)
{
    if (dtype == volume->dtype) {
        size_t element = vl_dtype_size(dtype);
        memcpy(out, (const unsigned char *)volume->data + (size_t)first * element, (size_t)count * element);
        return;
    }
    vl_sample_type source = vl_sample_type_of(volume->dtype);
    for (int64_t i = 0; i < count; i++)
        store_value(out, dtype, i, sample_value(volume->data, source, first + i));
}
