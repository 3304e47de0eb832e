/* Phantom -> DICOM series -> reader: HU identical, geometry within 1e-6 mm, and the writer's
 * refusal/force/atomic rules. Usage: dicom_roundtrip WORKDIR */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "voxlabel/dicom.h"
#include "voxlabel/phantom.h"
#include "test_check.h"


static int count_entries(const char *path, const char *prefix)
{
    DIR *dir = opendir(path);
    int count = 0;
    if (!dir)
        return -1;
    for (struct dirent *e; (e = readdir(dir));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            count++;
    closedir(dir);
    return count;
}

static void round_trip(const char *dir, vl_phantom_options *po)
{
    vl_volume hu, back;
    CHECK(vl_phantom_generate(po, &hu) == VL_OK, "generate: %s", vl_last_error());
    vl_dicom_write_options wo;
    vl_dicom_write_options_default(&wo);
    wo.force = 1;
    CHECK(vl_dicom_write_series(dir, &hu, &wo) == VL_OK, "write: %s", vl_last_error());
    CHECK(count_entries(dir, "slice_") == (int)po->nz, "%s: expected %lld slice files", dir, (long long)po->nz);
    vl_dicom_read_options ro;
    vl_dicom_read_options_default(&ro);
    vl_dicom_report report;
    vl_status status = vl_dicom_read_series(dir, &ro, &back, &report);
    CHECK(status == VL_OK, "read: %s", vl_last_error());
    if (status != VL_OK)
        return;
    CHECK(back.dtype == VL_I16, "dtype %d", back.dtype);
    CHECK(back.nx == hu.nx && back.ny == hu.ny && back.nz == hu.nz, "dims %lldx%lldx%lld", (long long)back.nx,
          (long long)back.ny, (long long)back.nz);
    if (back.nx == hu.nx && back.ny == hu.ny && back.nz == hu.nz)
        CHECK(memcmp(back.data, hu.data, (size_t)vl_volume_voxels(&hu) * 2) == 0, "HU differ");
    for (int i = 0; i < 3; i++) {
        CHECK(fabs(back.geometry.origin[i] - hu.geometry.origin[i]) < 1e-6, "origin[%d] %.9f vs %.9f", i,
              back.geometry.origin[i], hu.geometry.origin[i]);
        CHECK(fabs(back.geometry.spacing[i] - hu.geometry.spacing[i]) < 1e-6, "spacing[%d] %.9f vs %.9f", i,
              back.geometry.spacing[i], hu.geometry.spacing[i]);
    }
    for (int i = 0; i < 9; i++)
        CHECK(fabs(back.geometry.direction[i] - hu.geometry.direction[i]) < 1e-9, "direction[%d]", i);
    CHECK(report.slice_count == hu.nz, "report slices %lld", (long long)report.slice_count);
    CHECK(strcmp(report.modality, "CT") == 0, "modality %s", report.modality);
    CHECK(report.warning_count == (hu.nz == 1 ? 1u : 0u), "unexpected warning: %s", report.warning_count ? report.warnings[0] : "");
    CHECK(report.gap_count == 0 && report.duplicate_count == 0 && report.tilt_degrees < 1e-6, "irregular report");
    CHECK(strstr(report.transfer_syntax, "Little Endian Explicit") != NULL, "transfer syntax %s",
          report.transfer_syntax);
    vl_dicom_report_free(&report);
    vl_volume_free(&back);
    vl_volume_free(&hu);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s WORKDIR\n", argv[0]);
        return 2;
    }
    char dir[4200], parent[4096];
    snprintf(parent, sizeof parent, "%s/roundtrip", argv[1]);
    mkdir(argv[1], 0755);
    mkdir(parent, 0755);
    snprintf(dir, sizeof dir, "%s/series", parent);

    vl_phantom_options po;
    vl_phantom_options_default(&po);
    po.nx = 96;
    po.ny = 80;
    po.nz = 24;
    po.pixel_spacing_mm = 3.1;
    po.slice_spacing_mm = 7.5;
    round_trip(dir, &po);

    /* Odd sizes and a single slice. */
    po.nx = 33, po.ny = 17, po.nz = 1, po.seed = 99;
    round_trip(dir, &po);

    /* Determinism: the same seed gives the same voxels, another seed other noise. */
    vl_volume a, b, c;
    vl_phantom_options_default(&po);
    po.nx = po.ny = 64, po.nz = 30;
    vl_phantom_generate(&po, &a);
    vl_phantom_generate(&po, &b);
    po.seed = 2;
    vl_phantom_generate(&po, &c);
    CHECK(memcmp(a.data, b.data, (size_t)vl_volume_voxels(&a) * 2) == 0, "phantom not deterministic");
    CHECK(memcmp(a.data, c.data, (size_t)vl_volume_voxels(&a) * 2) != 0, "seed has no effect");
    /* Content: air, lungs, soft tissue and bone are all present. */
    int air = 0, lung = 0, soft = 0, bone = 0;
    for (int64_t i = 0; i < vl_volume_voxels(&a); i++) {
        int v = ((int16_t *)a.data)[i];
        air += v < -950;
        lung += v > -900 && v < -800;
        soft += v > 0 && v < 80;
        bone += v > 600;
    }
    CHECK(air > 0 && lung > 0 && soft > 0 && bone > 0, "tissues air %d lung %d soft %d bone %d", air, lung, soft, bone);

    /* Existing non-empty directory without force: refused, untouched; no temporary left behind. */
    vl_dicom_write_options wo;
    vl_dicom_write_options_default(&wo);
    CHECK(vl_dicom_write_series(dir, &a, &wo) == VL_ERR_OUTPUT, "overwrote without force");
    CHECK(strstr(vl_last_error(), "not empty") != NULL, "message: %s", vl_last_error());
    CHECK(count_entries(dir, "slice_") == 1, "directory changed by a refused write");
    CHECK(count_entries(parent, ".series") == 0, "temporary directory left behind");
    /* A volume the format cannot hold is refused before anything is written. */
    ((int16_t *)a.data)[0] = -2000;
    char fresh[4200];
    snprintf(fresh, sizeof fresh, "%s/never", parent);
    CHECK(vl_dicom_write_series(fresh, &a, &wo) == VL_ERR_ARGUMENT, "HU -2000 accepted");
    struct stat info;
    CHECK(stat(fresh, &info) != 0, "failed write left a directory");
    vl_volume_free(&a);
    vl_volume_free(&b);
    vl_volume_free(&c);

    return test_finish("dicom_roundtrip");
}
