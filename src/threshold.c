#include <math.h>

#include "status.h"
#include "voxlabel/volume.h"

/* One loop per source type keeps the compare vectorisable. */
#define THRESHOLD_LOOP(type)                                                                     \
    do {                                                                                         \
        const type *in = (const type *)source->data;                                             \
        for (int64_t i = 0; i < n; i++)                                                          \
            out[i] = (uint8_t)((double)in[i] >= lo) & (uint8_t)((double)in[i] <= hi);            \
    } while (0)

vl_status vl_threshold(const vl_volume *source, double lo, double hi, vl_volume *mask)
{
    if (isnan(lo) || isnan(hi) || lo > hi)
        return vl_fail(VL_ERR_ARGUMENT, "threshold: range %g:%g is empty", lo, hi);
    vl_status status = vl_volume_create_uninitialised(mask, source->nx, source->ny, source->nz, VL_U8);
    if (status != VL_OK)
        return status;
    mask->geometry = source->geometry;
    uint8_t *out = (uint8_t *)mask->data;
    const int64_t n = vl_volume_voxels(source);
    switch (source->dtype) {
    case VL_U8: THRESHOLD_LOOP(uint8_t); break;
    case VL_I16: THRESHOLD_LOOP(int16_t); break;
    case VL_U16: THRESHOLD_LOOP(uint16_t); break;
    case VL_F32: THRESHOLD_LOOP(float); break;
    case VL_U32: THRESHOLD_LOOP(uint32_t); break;
    }
    return VL_OK;
}
