/* Colour stage on all 2^24 RGB triples against independent re-implementations written here:
 *   - the thesis appendix kernel, transcribed with its unsigned char variables;
 *   - OpenCV 8-bit RGB2HSV (tables with round-half-even, branchy hue instead of OpenCV's masks);
 *   - the keep rules (thesis kernel rule, inclusive ranges with hue wrap) on several bound sets.
 * Also reproduces the measured thesis-vs-OpenCV-FULL difference statistics (docs/stages2d.md).
 * Usage: image2d_hsv_exhaustive cpu|gpu   (gpu exits 77 when no GPU is usable). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h"
#include "voxlabel/color.h"

#define ALL_TRIPLES (1 << 24)

static void thesis_reference(unsigned char r, unsigned char g, unsigned char b, unsigned char *ho, unsigned char *so,
                             unsigned char *vo)
{
    unsigned char h, s, v;
    unsigned char lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
    unsigned char hi = r > g ? (r > b ? r : b) : (g > b ? g : b);
    v = hi;
    if (v == 0) {
        h = s = 0;
    } else {
        s = (unsigned char)255 * (hi - lo) / v;
        if (s == 0)
            h = 0;
        else if (hi == r)
            h = 0 + 43 * (g - b) / (hi - lo);
        else if (hi == g)
            h = 85 + 43 * (b - r) / (hi - lo);
        else
            h = 171 + 43 * (r - g) / (hi - lo);
    }
    *ho = h, *so = s, *vo = v;
}

static int sdiv_ref[256], hdiv_ref[2][256];

static void opencv_tables(void)
{
    for (int i = 1; i < 256; i++) {
        sdiv_ref[i] = (int)lrint(255.0 * 4096.0 / i);
        hdiv_ref[0][i] = (int)lrint(180.0 * 4096.0 / (6.0 * i));
        hdiv_ref[1][i] = (int)lrint(256.0 * 4096.0 / (6.0 * i));
    }
}

static void opencv_reference(int full, int r, int g, int b, unsigned char out[3])
{
    int v = b > g ? b : g;
    if (r > v)
        v = r;
    int mn = b < g ? b : g;
    if (r < mn)
        mn = r;
    int diff = v - mn;
    int hue_steps = full ? 256 : 180;
    int raw;
    if (v == r)
        raw = g - b;
    else if (v == g)
        raw = b - r + 2 * diff;
    else
        raw = r - g + 4 * diff;
    int s = (diff * sdiv_ref[v] + 2048) >> 12;
    int h = (raw * hdiv_ref[full][diff] + 2048) >> 12;
    if (h < 0)
        h += hue_steps;
    out[0] = (unsigned char)(h > 255 ? 255 : h);
    out[1] = (unsigned char)s;
    out[2] = (unsigned char)v;
}

/* Hue acceptance per hue value, computed once per case by walking the window itself. */
static void hue_table_reference(const vl_color_range *range, unsigned char ok[256])
{
    memset(ok, 0, 256);
    if (range->mode == VL_COLOR_THESIS) {
        for (int h = 0; h < 256; h++) {
            unsigned char d = (unsigned char)(range->hue - h);
            ok[h] = d <= range->hue_tol || d >= 255 - range->hue_tol;
        }
        return;
    }
    for (int k = range->hue_lo;; k = (k + 1) % 256) {
        ok[k] = 1;
        if (k == range->hue_hi)
            break;
    }
}

static int keep_reference(const vl_color_range *range, const unsigned char hue_ok[256], const unsigned char hsv[3])
{
    return hue_ok[hsv[0]] && hsv[1] >= range->s_min && hsv[1] <= range->s_max && hsv[2] >= range->v_min &&
           hsv[2] <= range->v_max;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "gpu"))) {
        fprintf(stderr, "usage: %s cpu|gpu\n", argv[0]);
        return 2;
    }
    const vl_device device = {.kind = strcmp(argv[1], "gpu") == 0 ? VL_DEVICE_GPU : VL_DEVICE_CPU};
    opencv_tables();
    uint8_t *rgb = malloc((size_t)ALL_TRIPLES * 3), *hsv = malloc((size_t)ALL_TRIPLES * 3),
            *mask = malloc(ALL_TRIPLES), *thesis = malloc((size_t)ALL_TRIPLES * 3);
    CHECK(rgb && hsv && mask && thesis, "out of memory");
    if (!rgb || !hsv || !mask || !thesis)
        return test_finish("image2d_hsv_exhaustive");
    for (uint32_t i = 0; i < ALL_TRIPLES; i++) {
        rgb[3 * i] = (uint8_t)(i >> 16);
        rgb[3 * i + 1] = (uint8_t)(i >> 8);
        rgb[3 * i + 2] = (uint8_t)i;
    }
    for (int mode = VL_COLOR_THESIS; mode <= VL_COLOR_OPENCV_FULL; mode++) {
        vl_status status = vl_rgb_to_hsv(rgb, hsv, ALL_TRIPLES, (vl_color_mode)mode, &device);
        /* No usable GPU shows on the first call; a device error after that is a failure. */
        if (status == VL_ERR_DEVICE && device.kind == VL_DEVICE_GPU && mode == VL_COLOR_THESIS)
            TEST_SKIP("no usable GPU: %s", vl_last_error());
        CHECK(status == VL_OK, "vl_rgb_to_hsv %s", vl_color_mode_name(mode));
        if (status != VL_OK)
            return test_finish("image2d_hsv_exhaustive");
        long mismatches = 0;
        for (uint32_t i = 0; i < ALL_TRIPLES; i++) {
            unsigned char want[3];
            if (mode == VL_COLOR_THESIS)
                thesis_reference(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &want[0], &want[1], &want[2]);
            else
                opencv_reference(mode == VL_COLOR_OPENCV_FULL, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], want);
            if (memcmp(want, hsv + 3 * i, 3) != 0 && mismatches++ < 5) /* the first few; the CHECK below counts */
                REPORT_FAILURE("%s rgb(%u,%u,%u): got %u,%u,%u want %u,%u,%u", vl_color_mode_name(mode), rgb[3 * i],
                               rgb[3 * i + 1], rgb[3 * i + 2], hsv[3 * i], hsv[3 * i + 1], hsv[3 * i + 2], want[0],
                               want[1], want[2]);
        }
        printf("%s %s: %ld of %d triples differ from the reference\n", argv[1], vl_color_mode_name(mode), mismatches,
               ALL_TRIPLES);
        CHECK(mismatches == 0, "%s %s: %ld triples differ from the reference", argv[1], vl_color_mode_name(mode),
              mismatches);
        if (mode == VL_COLOR_THESIS)
            memcpy(thesis, hsv, (size_t)ALL_TRIPLES * 3);
    }

    /* hsv now holds OPENCV_FULL: the documented thesis-vs-OpenCV statistics. */
    long same_h = 0, same_s = 0, same_v = 0, gate_differs = 0, h_off_by_more = 0;
    for (uint32_t i = 0; i < ALL_TRIPLES; i++) {
        const uint8_t *t = thesis + 3 * i, *o = hsv + 3 * i;
        same_h += t[0] == o[0];
        same_s += t[1] == o[1];
        same_v += t[2] == o[2];
        uint8_t circular = (uint8_t)(t[0] - o[0]);
        h_off_by_more += circular > 1 && circular < 255;
        gate_differs += (t[1] >= 30 && t[2] >= 30) != (o[1] >= 30 && o[2] >= 30);
    }
    printf("thesis vs opencv-full: H same %.2f%%, S same %.2f%%, V same %.2f%%, H off by >1: %ld, S>=30&V>=30 gate "
           "differs on %ld triples\n",
           100.0 * same_h / ALL_TRIPLES, 100.0 * same_s / ALL_TRIPLES, 100.0 * same_v / ALL_TRIPLES, h_off_by_more,
           gate_differs);
    CHECK(same_v == ALL_TRIPLES && h_off_by_more == 0 && gate_differs == 6840 &&
              fabs(100.0 * same_h / ALL_TRIPLES - 64.58) <= 0.005 && fabs(100.0 * same_s / ALL_TRIPLES - 50.51) <= 0.005,
          "statistics differ from docs/stages2d.md (V 100%%, H 64.58%%, S 50.51%%, gate 6840)");

    /* Threshold rules: thesis centres incl. wrap-around, OpenCV windows incl. red wrap, S/V bounds. */
    struct { vl_color_mode mode; int hue, tol, lo, hi, smin, smax, vmin, vmax; } cases[] = {
        {VL_COLOR_THESIS, 0, 20, 0, 0, 30, 255, 30, 255},     {VL_COLOR_THESIS, 250, 20, 0, 0, 30, 255, 30, 255},
        {VL_COLOR_THESIS, 85, 5, 0, 0, 0, 255, 0, 255},       {VL_COLOR_THESIS, 10, 0, 0, 0, 100, 200, 50, 240},
        {VL_COLOR_THESIS, 171, 127, 0, 0, 30, 255, 30, 255},  {VL_COLOR_OPENCV, -1, 0, 170, 10, 30, 255, 30, 255},
        {VL_COLOR_OPENCV, -1, 0, 35, 85, 43, 255, 46, 255},   {VL_COLOR_OPENCV, -1, 0, 0, 179, 0, 30, 200, 255},
        {VL_COLOR_OPENCV_FULL, -1, 0, 240, 15, 30, 255, 30, 255}, {VL_COLOR_OPENCV_FULL, -1, 0, 100, 140, 60, 220, 20, 250},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        vl_color_range range;
        vl_color_range_default(&range, cases[c].mode);
        if (cases[c].hue >= 0)
            vl_color_range_set_hue(&range, cases[c].hue, cases[c].tol);
        else
            range.hue_lo = cases[c].lo, range.hue_hi = cases[c].hi;
        range.s_min = cases[c].smin, range.s_max = cases[c].smax, range.v_min = cases[c].vmin,
        range.v_max = cases[c].vmax;
        const vl_status thresholded = vl_color_threshold(rgb, mask, ALL_TRIPLES, &range, &device);
        CHECK(thresholded == VL_OK, "vl_color_threshold, case %zu", c);
        if (thresholded != VL_OK)
            return test_finish("image2d_hsv_exhaustive");
        unsigned char hue_ok[256];
        hue_table_reference(&range, hue_ok);
        long mismatches = 0, kept = 0;
        for (uint32_t i = 0; i < ALL_TRIPLES; i++) {
            unsigned char want_hsv[3];
            if (range.mode == VL_COLOR_THESIS)
                thesis_reference(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &want_hsv[0], &want_hsv[1], &want_hsv[2]);
            else
                opencv_reference(range.mode == VL_COLOR_OPENCV_FULL, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2],
                                 want_hsv);
            int want = keep_reference(&range, hue_ok, want_hsv);
            kept += want;
            mismatches += mask[i] != want;
        }
        /* Unaligned starts and lengths that are not a multiple of 4 (the GPU's scalar and tail paths). */
        for (int shift = 1; shift <= 4; shift += 3) {
            const vl_status shifted = vl_color_threshold(rgb + 3 * shift, thesis, ALL_TRIPLES - 2 * shift, &range, &device);
            CHECK(shifted == VL_OK, "vl_color_threshold, case %zu shifted by %d", c, shift);
            if (shifted != VL_OK)
                return test_finish("image2d_hsv_exhaustive");
            mismatches += memcmp(thesis, mask + shift, (size_t)(ALL_TRIPLES - 2 * shift)) != 0;
        }
        printf("%s threshold case %zu (%s): %ld kept, %ld mismatches\n", argv[1], c, vl_color_mode_name(range.mode),
               kept, mismatches);
        CHECK(mismatches == 0, "%s threshold case %zu (%s): %ld mismatches", argv[1], c, vl_color_mode_name(range.mode),
              mismatches);
    }
    free(rgb), free(hsv), free(mask), free(thesis);
    return test_finish("image2d_hsv_exhaustive");
}
