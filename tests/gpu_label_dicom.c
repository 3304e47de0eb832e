/* GPU == CPU on real CT: each series is read with the DICOM reader and thresholded at 150 HU (bone,
 * contrast) and at -500 HU (body and air ways), then labelled at conn 6/18/26/8 in every order.
 *   gpu_label_dicom DIR...                    compare (exit 77 without a GPU or without readable series)
 *   gpu_label_dicom --export OUTDIR DIR...    write the masks as OUTDIR/<n>_<nx>x<ny>x<nz>.raw for
 *                                             `gpu_label_test raw` on a GPU machine without DCMTK */
#include <stdio.h>
#include <string.h>

#include "gpu_compare.h"
#include "label/label_gpu.h"
#include "voxlabel/threshold.h"
#include "voxlabel/dicom.h"
#include "test_check.h"

static const double thresholds[] = {150, -500};

static void export_mask(const char *directory, int index, const vl_volume *mask)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%02d_%lldx%lldx%lld.raw", directory, index, (long long)mask->nx,
             (long long)mask->ny, (long long)mask->nz);
    FILE *file = fopen(path, "wb");
    size_t bytes = (size_t)vl_volume_voxels(mask);
    int ok = file && fwrite(mask->data, 1, bytes, file) == bytes;
    if (file && fclose(file) != 0)
        ok = 0;
    CHECK(ok, "cannot write %s", path);
    if (ok)
        printf("wrote %s\n", path);
}

int main(int argc, char **argv)
{
    const char *export_directory = NULL;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "--export") == 0) {
        export_directory = argv[2];
        first = 3;
    }
    char why[256] = "";
    if (!export_directory && !vl_device_gpu_usable(0, why, sizeof why))
        TEST_SKIP("no usable GPU: %s", why);
    static const int conns[] = {6, 18, 26, 8};
    int series = 0, exported = 0;
    for (int i = first; i < argc; i++) {
        vl_dicom_read_options options;
        vl_dicom_read_options_default(&options);
        options.on_irregular = VL_IRREGULAR_WARN;
        vl_volume hu, mask;
        if (vl_dicom_read_series(argv[i], &options, &hu, NULL) != VL_OK) {
            printf("note: %s: %s\n", argv[i], vl_last_error());
            continue;
        }
        series++;
        for (int t = 0; t < 2; t++) {
            const vl_status thresholded = vl_threshold(&hu, thresholds[t], 1e9, &mask);
            CHECK(thresholded == VL_OK, "%s: threshold %.0f", argv[i], thresholds[t]);
            if (thresholded != VL_OK)
                return test_finish("gpu_label_dicom");
            if (export_directory) {
                export_mask(export_directory, exported++, &mask);
            } else {
                char name[600];
                snprintf(name, sizeof name, "%s (%lldx%lldx%lld) >= %.0f HU", argv[i], (long long)hu.nx,
                         (long long)hu.ny, (long long)hu.nz, thresholds[t]);
                const int differing = vl_gpu_test_compare_all(&mask, name, conns, 4);
                CHECK(differing == 0, "%s: %d (connectivity, order) cases GPU != CPU", name, differing);
                if (mask.nz > 1)
                    CHECK(vl_gpu_test_compare_in_slabs(&mask, name, 26, VL_ORDER_MATLAB, (mask.nz + 2) / 3) == 0,
                          "%s in z-slabs: GPU != CPU", name);
            }
            vl_volume_free(&mask);
        }
        vl_volume_free(&hu);
    }
    if (series == 0)
        TEST_SKIP("no readable CT series among the %d paths", argc - first);
    printf("gpu_label_dicom: %d series\n", series);
    return test_finish("gpu_label_dicom");
}
