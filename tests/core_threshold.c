/* vl_threshold against the plain definition lo <= value <= hi in double, for every source type, with
 * fractional, infinite and out-of-range bounds, on volumes large enough to run threaded. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h"
#include "voxlabel/threshold.h"
#include "voxlabel/volume.h"

static void fill(vl_volume *v, uint64_t seed)
{
    for (int64_t i = 0; i < vl_volume_voxels(v); i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        switch (v->dtype) {
        case VL_U8: ((uint8_t *)v->data)[i] = (uint8_t)seed; break;
        case VL_I16: ((int16_t *)v->data)[i] = (int16_t)(uint16_t)seed; break;
        case VL_U16: ((uint16_t *)v->data)[i] = (uint16_t)seed; break;
        case VL_U32: ((uint32_t *)v->data)[i] = (uint32_t)seed; break;
        case VL_F32: ((float *)v->data)[i] = (float)((int64_t)(seed % 8001) - 4000) / 4.0f; break;
        }
    }
}

int main(void)
{
    static const vl_dtype types[] = {VL_U8, VL_I16, VL_U16, VL_U32, VL_F32};
    static const double ranges[][2] = {{300, INFINITY}, {-INFINITY, -900}, {-100.5, 200.5}, {99.5, 99.7},
                                       {7, 7},          {-1e12, 1e12},     {70000, 80000},  {-5, -1},
                                       {4294967295.0, INFINITY}, {0.25, 255}};
    int cases = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        vl_volume source, mask;
        CHECK(vl_volume_create(&source, 173, 129, 211, types[t]) == VL_OK, "cannot allocate"); /* 4.7 M voxels: threaded */
        fill(&source, 0x9E3779B97F4A7C15ull + t);
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
            const double lo = ranges[r][0], hi = ranges[r][1];
            CHECK(vl_threshold(&source, lo, hi, &mask) == VL_OK, "%s %g:%g failed", vl_dtype_name(types[t]), lo, hi);
            int64_t wrong = 0;
            for (int64_t i = 0; i < vl_volume_voxels(&source); i++) {
                const double value = vl_volume_value(&source, i);
                wrong += ((const uint8_t *)mask.data)[i] != (value >= lo && value <= hi);
            }
            CHECK(wrong == 0, "%s %g:%g: %lld voxels wrong", vl_dtype_name(types[t]), lo, hi, (long long)wrong);
            vl_volume_free(&mask);
            cases++;
        }
        vl_volume_free(&source);
    }
    vl_volume source, mask;
    vl_volume_create(&source, 4, 4, 4, VL_I16);
    CHECK(vl_threshold(&source, 5, 1, &mask) == VL_ERR_ARGUMENT, "an empty range is an error");
    CHECK(vl_threshold(&source, NAN, 1, &mask) == VL_ERR_ARGUMENT, "NaN is an error");
    vl_volume_free(&source);
    printf("core_threshold: %d cases\n", cases);
    return test_finish("core_threshold");
}
