/* Unit: every vl_dtype round-trips through every writable format with its geometry; a volume of many gzip
 * blocks round-trips; label maps shrink to the smallest type; atomic writes leave nothing behind on failure
 * and refuse an existing file without force. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "voxlabel/io.h"
#include "test_check.h"


static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A rotated, slightly sheared (gantry-tilt-like) geometry. */
static void tilted_geometry(vl_geometry *g)
{
    const double angle = 0.3, tilt = 0.2;
    const double direction[9] = {cos(angle), -sin(angle), 0.0, sin(angle), cos(angle), sin(tilt),
                                 0.0, 0.0, cos(tilt)};
    memcpy(g->direction, direction, sizeof direction);
    g->spacing[0] = 0.7;
    g->spacing[1] = 0.8;
    g->spacing[2] = 2.5;
    g->origin[0] = -120.25;
    g->origin[1] = 33.5;
    g->origin[2] = 712.75;
}

static void fill_random(vl_volume *v)
{
    int64_t n = vl_volume_voxels(v);
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = next_random();
        switch (v->dtype) {
        case VL_U8: ((uint8_t *)v->data)[i] = (uint8_t)r; break;
        case VL_I16: ((int16_t *)v->data)[i] = (int16_t)(r & 0xffff); break;
        case VL_U16: ((uint16_t *)v->data)[i] = (uint16_t)r; break;
        case VL_U32: ((uint32_t *)v->data)[i] = (uint32_t)r; break;
        case VL_F32: ((float *)v->data)[i] = (float)((double)(r % 2000001) / 1000.0 - 1000.0); break;
        }
    }
}

static int geometry_close(const vl_geometry *a, const vl_geometry *b, double tolerance)
{
    for (int i = 0; i < 3; i++)
        if (fabs(a->origin[i] - b->origin[i]) > tolerance * 100 || fabs(a->spacing[i] - b->spacing[i]) > tolerance)
            return 0;
    for (int i = 0; i < 9; i++)
        if (fabs(a->direction[i] - b->direction[i]) > tolerance)
            return 0;
    return 1;
}

static int count_entries(const char *directory)
{
    DIR *dir = opendir(directory);
    int count = 0;
    for (struct dirent *e; dir && (e = readdir(dir));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            count++;
    if (dir)
        closedir(dir);
    return count;
}

static void test_roundtrips(const char *directory)
{
    const vl_dtype dtypes[] = {VL_U8, VL_I16, VL_U16, VL_U32, VL_F32};
    const char *extensions[] = {".nii", ".nii.gz", ".raw", ".nrrd", ".mha"};
    for (size_t e = 0; e < sizeof extensions / sizeof extensions[0]; e++)
        for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
            vl_volume v, back;
            vl_volume_create(&v, 7, 13, 5, dtypes[d]);
            fill_random(&v);
            tilted_geometry(&v.geometry);
            char path[4096];
            snprintf(path, sizeof path, "%s/rt_%s%s", directory, vl_dtype_name(dtypes[d]), extensions[e]);
            unlink(path);
            vl_write_options wo;
            vl_write_options_default(&wo);
            vl_status s = vl_write_volume(path, &v, &wo);
            CHECK(s == VL_OK, "write %s", path);
            vl_read_options ro;
            vl_read_options_default(&ro);
            ro.raw_nx = 7;
            ro.raw_ny = 13;
            ro.raw_nz = 5;
            ro.raw_dtype = dtypes[d];
            memset(&back, 0, sizeof back);
            s = vl_read_volume(path, &ro, &back);
            CHECK(s == VL_OK, "read %s", path);
            if (s == VL_OK) {
                CHECK(back.nx == 7 && back.ny == 13 && back.nz == 5, "%s dims", path);
                CHECK(back.dtype == dtypes[d], "%s dtype %s", path, vl_dtype_name(back.dtype));
                CHECK(back.dtype == dtypes[d] &&
                          memcmp(back.data, v.data, (size_t)vl_volume_voxels(&v) * vl_dtype_size(v.dtype)) == 0,
                      "%s voxels differ", path);
                if (strcmp(extensions[e], ".raw") != 0)
                    CHECK(geometry_close(&back.geometry, &v.geometry, 1e-5), "%s geometry", path);
            }
            vl_volume_free(&back);
            vl_volume_free(&v);
        }
}

/* .nii.gz and gzip NRRD are compressed in 1 MiB blocks on every core (io/gzip_parallel.c): a volume of
 * about 20 blocks, runs and noise mixed so that blocks compress differently, must read back exactly. */
static void test_many_gzip_blocks(const char *directory)
{
    vl_volume v, back;
    vl_volume_create(&v, 301, 257, 67, VL_U32);
    uint32_t *data = v.data;
    for (int64_t i = 0; i < vl_volume_voxels(&v); i++)
        data[i] = (i / 977) % 3 ? (uint32_t)(i / 4096) : (uint32_t)next_random();
    const char *extensions[] = {".nii.gz", ".nrrd"};
    for (int e = 0; e < 2; e++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/blocks%s", directory, extensions[e]);
        unlink(path);
        vl_write_options wo;
        vl_write_options_default(&wo);
        CHECK(vl_write_volume(path, &v, &wo) == VL_OK, "write %s", path);
        vl_read_options ro;
        vl_read_options_default(&ro);
        memset(&back, 0, sizeof back);
        CHECK(vl_read_volume(path, &ro, &back) == VL_OK, "read %s", path);
        CHECK(back.dtype == VL_U32 && back.nx == v.nx && back.ny == v.ny && back.nz == v.nz &&
                  memcmp(back.data, v.data, (size_t)vl_volume_voxels(&v) * 4) == 0,
              "%s: voxels differ after the parallel gzip round trip", path);
        vl_volume_free(&back);
    }
    vl_volume_free(&v);
}

static void test_label_narrowing(const char *directory)
{
    const uint32_t maxima[] = {200, 60000, 70000};
    const vl_dtype expected[] = {VL_U8, VL_U16, VL_U32};
    for (int m = 0; m < 3; m++) {
        vl_volume v, back;
        vl_volume_create(&v, 9, 4, 3, VL_U32);
        uint32_t *labels = v.data;
        for (int64_t i = 0; i < vl_volume_voxels(&v); i++)
            labels[i] = (uint32_t)(next_random() % (maxima[m] + 1));
        labels[5] = maxima[m];
        char path[4096];
        snprintf(path, sizeof path, "%s/labels_%u.nii.gz", directory, maxima[m]);
        unlink(path);
        vl_write_options wo;
        vl_write_options_default(&wo);
        wo.is_label_map = 1;
        CHECK(vl_write_volume(path, &v, &wo) == VL_OK, "write %s", path);
        CHECK(vl_read_volume(path, NULL, &back) == VL_OK, "read %s", path);
        CHECK(back.dtype == expected[m], "%s stored as %s", path, vl_dtype_name(back.dtype));
        int same = 1;
        for (int64_t i = 0; i < vl_volume_voxels(&v) && back.data; i++) {
            uint32_t value = back.dtype == VL_U8    ? ((uint8_t *)back.data)[i]
                             : back.dtype == VL_U16 ? ((uint16_t *)back.data)[i]
                                                    : ((uint32_t *)back.data)[i];
            same &= value == labels[i];
        }
        CHECK(same, "%s label values", path);
        vl_volume_free(&back);
        vl_volume_free(&v);
    }
    CHECK(vl_label_dtype_for(0) == VL_U8 && vl_label_dtype_for(255) == VL_U8 && vl_label_dtype_for(256) == VL_U16 &&
              vl_label_dtype_for(65535) == VL_U16 && vl_label_dtype_for(65536) == VL_U32,
          "vl_label_dtype_for");
}

static void test_atomic(const char *directory)
{
    char sub[4000], path[4096];
    snprintf(sub, sizeof sub, "%s/atomic", directory);
    mkdir(sub, 0755);
    snprintf(path, sizeof path, "%s/out.nii.gz", sub);
    unlink(path);
    vl_volume v, big;
    vl_volume_create(&v, 4, 4, 4, VL_U8);
    vl_write_options wo;
    vl_write_options_default(&wo);
    CHECK(vl_write_volume(path, &v, &wo) == VL_OK, "first write");
    CHECK(vl_write_volume(path, &v, &wo) == VL_ERR_OUTPUT, "existing file without force must be refused");
    CHECK(strstr(vl_last_error(), "exists") != NULL, "message names the existing file: %s", vl_last_error());
    wo.force = 1;
    CHECK(vl_write_volume(path, &v, &wo) == VL_OK, "force replaces");
    /* A NIfTI-1 axis cannot exceed 32767: refused before anything is created. */
    vl_volume_create(&big, 40000, 1, 1, VL_U8);
    snprintf(path, sizeof path, "%s/too_long.nii", sub);
    CHECK(vl_write_volume(path, &big, &wo) == VL_ERR_ARGUMENT, "40000-voxel axis refused for NIfTI-1");
    snprintf(path, sizeof path, "%s/missing/out.nii.gz", sub);
    CHECK(vl_write_volume(path, &v, &wo) == VL_ERR_OUTPUT, "missing directory is an output error");
    CHECK(count_entries(sub) == 1, "only out.nii.gz remains, found %d entries", count_entries(sub));
    vl_volume_free(&big);
    vl_volume_free(&v);
}

/* A write that fails half-way (file size limit, as on a full disk) removes its temporary file and never
 * creates the target. */
static void test_failed_write_leaves_nothing(const char *directory)
{
    char sub[4000];
    snprintf(sub, sizeof sub, "%s/full", directory);
    mkdir(sub, 0755);
    const char *extensions[] = {".nii", ".nii.gz", ".raw", ".nrrd", ".mha"};
    vl_volume v;
    vl_volume_create(&v, 64, 64, 64, VL_F32);
    fill_random(&v);
    vl_write_options wo;
    vl_write_options_default(&wo);
    struct rlimit saved, small;
    getrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, SIG_IGN);
    small = saved;
    small.rlim_cur = 64 * 1024;
    setrlimit(RLIMIT_FSIZE, &small);
    for (int e = 0; e < 5; e++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/out%s", sub, extensions[e]);
        vl_status s = vl_write_volume(path, &v, &wo);
        CHECK(s == VL_ERR_OUTPUT, "%s: a write beyond the file size limit must fail with an output error", path);
    }
    setrlimit(RLIMIT_FSIZE, &saved);
    CHECK(count_entries(sub) == 0, "failed writes left %d file(s) behind", count_entries(sub));
    vl_volume_free(&v);
}

static void test_format_names(void)
{
    vl_file_format f;
    CHECK(vl_file_format_parse("nii.gz", &f) == VL_OK && f == VL_FORMAT_NIFTI_GZ, "parse nii.gz");
    CHECK(vl_file_format_parse("mat", &f) == VL_OK && f == VL_FORMAT_MAT, "parse mat");
    CHECK(vl_file_format_parse("png", &f) == VL_ERR_ARGUMENT, "parse png refused");
    CHECK(strcmp(vl_file_format_extension(VL_FORMAT_NRRD), ".nrrd") == 0, "nrrd extension");
    CHECK(vl_file_format_from_path("a/b.NII.GZ") == VL_FORMAT_NIFTI_GZ, "from path .NII.GZ");
    CHECK(vl_file_format_from_path("x.mha") == VL_FORMAT_MHA, "from path mha");
    CHECK(vl_file_format_from_path("x.txt") == VL_FORMAT_AUTO, "from path unknown");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s WORK_DIRECTORY\n", argv[0]);
        return 2;
    }
    mkdir(argv[1], 0755);
    test_format_names();
    test_roundtrips(argv[1]);
    test_many_gzip_blocks(argv[1]);
    test_label_narrowing(argv[1]);
    test_atomic(argv[1]);
    test_failed_write_leaves_nothing(argv[1]);
    return test_finish("io_roundtrip");
}
