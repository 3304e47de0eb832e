/* vl_dicom_read_rgb on the shared colour samples: planar configurations 0 and 1 give the same pixels,
 * lossless encodings (RLE, JPEG lossless) equal the uncompressed RGB, YBR/palette decode, monochrome is
 * refused. Usage: dicom_rgb SHARED_TEST_DATA (exit 77 when absent). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "voxlabel/dicom.h"
#include "test_check.h"


static char root[4096];

static int load(const char *name, vl_dicom_rgb *image)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", root, name);
    vl_status status = vl_dicom_read_rgb(path, image);
    CHECK(status == VL_OK, "%s: %s", name, vl_last_error());
    return status == VL_OK;
}

static void same_pixels(const char *a_name, const char *b_name)
{
    vl_dicom_rgb a, b;
    if (load(a_name, &a) && load(b_name, &b)) {
        CHECK(a.width == b.width && a.height == b.height && a.frames == b.frames, "%s vs %s: sizes differ", a_name,
              b_name);
        if (a.width == b.width && a.height == b.height && a.frames == b.frames)
            CHECK(memcmp(a.rgb, b.rgb, (size_t)(a.width * a.height * 3 * a.frames)) == 0, "%s vs %s: pixels differ",
                  a_name, b_name);
    }
    vl_dicom_rgb_free(&a);
    vl_dicom_rgb_free(&b);
}

static void decodes(const char *name, int64_t width, int64_t height, int64_t frames)
{
    vl_dicom_rgb image;
    if (load(name, &image)) {
        CHECK(image.width == width && image.height == height && image.frames == frames, "%s: %lldx%lldx%lld", name,
              (long long)image.width, (long long)image.height, (long long)image.frames);
        uint64_t sum = 0;
        for (int64_t i = 0; i < image.width * image.height * 3 * image.frames; i++)
            sum += image.rgb[i];
        CHECK(sum > 0, "%s: all black", name);
    }
    vl_dicom_rgb_free(&image);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    snprintf(root, sizeof root, "%s/dicom/color", argv[1]);
    struct stat info;
    if (stat(root, &info) != 0)
        TEST_SKIP("no shared colour samples at %s", root);
    same_pixels("color-pl.dcm", "color-px.dcm");
    same_pixels("SC_rgb.dcm", "SC_rgb_rle.dcm");
    same_pixels("SC_rgb.dcm", "SC_rgb_jpeg_gdcm.dcm");
    same_pixels("SC_rgb_2frame.dcm", "SC_rgb_rle_2frame.dcm");
    decodes("SC_rgb_2frame.dcm", 100, 100, 2);
    decodes("SC_ybr_full_uncompressed.dcm", 100, 100, 1);
    decodes("SC_ybr_full_422_uncompressed.dcm", 100, 100, 1);
    decodes("SC_rgb_jpeg_dcmtk.dcm", 100, 100, 1);
    decodes("OT-PAL-8-face.dcm", 640, 480, 1);
    decodes("US1_UNCR.dcm", 640, 480, 1);
    /* Two frames are different images (RGB test pattern vs its inverse), not one frame twice. */
    vl_dicom_rgb two;
    if (load("SC_rgb_2frame.dcm", &two)) {
        size_t bytes = (size_t)(two.width * two.height * 3);
        CHECK(memcmp(two.rgb, two.rgb + bytes, bytes) != 0, "SC_rgb_2frame: both frames identical");
    }
    vl_dicom_rgb_free(&two);
    /* The Philips RGB secondary capture (planar configuration 1). */
    char philips[4200];
    snprintf(philips, sizeof philips, "%s/../dcm_qa_ct_philips_study/S21570/S4010/I40", root);
    vl_dicom_rgb sc;
    CHECK(vl_dicom_read_rgb(philips, &sc) == VL_OK && sc.width == 650 && sc.height == 741, "Philips SC: %s",
          vl_last_error());
    vl_dicom_rgb_free(&sc);
    /* Monochrome CT is refused with a pointer to the series reader. */
    snprintf(philips, sizeof philips, "%s/../dcm_qa_ct_philips_study/S21570/S2010/I10", root);
    CHECK(vl_dicom_read_rgb(philips, &sc) == VL_ERR_INPUT && strstr(vl_last_error(), "monochrome"), "monochrome: %s",
          vl_last_error());
    return test_finish("dicom_rgb");
}
