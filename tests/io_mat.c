/* Unit: MAT files. Our writer round-trips through our reader in every class and axis convention; files written
 * here with libmatio directly (v5, v7 and v7.3/HDF5, every numeric class, logical, complex, 4-D) read with the
 * MATLAB-to-voxlabel axis mapping of DESIGN §4, or are refused with an input error. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <matio.h>

#include "voxlabel/io.h"
#include "test_check.h"


enum { W = 5, H = 4, D = 3 }; /* x extent (MATLAB columns), y extent (rows), slices */

static void test_our_roundtrip(const char *dir)
{
    vl_volume labels;
    vl_volume_create(&labels, W, H, D, VL_U32);
    for (int64_t i = 0; i < vl_volume_voxels(&labels); i++)
        ((uint32_t *)labels.data)[i] = (uint32_t)((i * 37) % 301);
    const vl_mat_class classes[] = {VL_MAT_DOUBLE, VL_MAT_UINT32, VL_MAT_NATIVE};
    for (int c = 0; c < 3; c++)
        for (int xy = 0; xy < 2; xy++) {
            char path[4096];
            snprintf(path, sizeof path, "%.4000s/ours_%d_%d.mat", dir, c, xy);
            unlink(path);
            vl_write_options wo;
            vl_write_options_default(&wo);
            wo.mat_class = classes[c];
            wo.mat_xy = xy;
            wo.is_label_map = 1;
            CHECK(vl_write_volume(path, &labels, &wo) == VL_OK, "write %s", path);
            /* The stored MATLAB array: class and dims as MATLAB's load will see them. */
            mat_t *mat = Mat_Open(path, MAT_ACC_RDONLY);
            matvar_t *var = mat ? Mat_VarRead(mat, "L") : NULL;
            CHECK(var != NULL, "%s: variable L", path);
            if (var) {
                enum matio_classes want = classes[c] == VL_MAT_DOUBLE ? MAT_C_DOUBLE : MAT_C_UINT32;
                CHECK(var->class_type == want, "%s: class %d", path, (int)var->class_type);
                CHECK(var->rank == 3 && var->dims[0] == (size_t)(xy ? W : H) && var->dims[1] == (size_t)(xy ? H : W) &&
                          var->dims[2] == D,
                      "%s: dims", path);
                /* MATLAB V(y+1,x+1,z+1) (or V(x+1,y+1,z+1)) equals our voxel (x,y,z). */
                int same = 1;
                for (int z = 0; z < D; z++)
                    for (int y = 0; y < H; y++)
                        for (int x = 0; x < W; x++) {
                            size_t at = xy ? (size_t)(x + W * (y + H * z)) : (size_t)(y + H * (x + W * z));
                            double stored = want == MAT_C_DOUBLE ? ((double *)var->data)[at] : ((uint32_t *)var->data)[at];
                            same &= stored == ((uint32_t *)labels.data)[x + W * (y + H * z)];
                        }
                CHECK(same, "%s: MATLAB element order", path);
            }
            Mat_VarFree(var);
            if (mat)
                Mat_Close(mat);
            vl_read_options ro;
            vl_read_options_default(&ro);
            ro.mat_xy = xy;
            vl_volume back;
            CHECK(vl_read_volume(path, &ro, &back) == VL_OK, "read %s", path);
            CHECK(back.dtype == VL_U32 && back.nx == W && back.ny == H && back.nz == D &&
                      memcmp(back.data, labels.data, sizeof(uint32_t) * W * H * D) == 0,
                  "%s: round trip", path);
            vl_volume_free(&back);
        }
    vl_volume_free(&labels);
}

/* A W x H x D array written by libmatio in MATLAB's V(y,x,z) layout with value 1 + the C index x + W*(y + H*z). */
static void write_reference(const char *path, enum mat_ft version, enum matio_classes class_type,
                            enum matio_types data_type, size_t element, int logical, int with_decoy)
{
    unlink(path);
    mat_t *mat = Mat_CreateVer(path, NULL, version);
    CHECK(mat != NULL, "libmatio cannot create %s", path);
    if (!mat)
        return;
    if (with_decoy) {
        size_t text_dims[2] = {1, 5};
        matvar_t *text = Mat_VarCreate("note", MAT_C_CHAR, MAT_T_UINT8, 2, text_dims, (void *)"hello", 0);
        Mat_VarWrite(mat, text, MAT_COMPRESSION_NONE);
        Mat_VarFree(text);
    }
    unsigned char *data = calloc(W * H * D, element);
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                double v = logical ? (x + y + z) % 2 : 1 + x + W * (y + H * z);
                size_t at = (size_t)(y + H * (x + W * z));
                switch (class_type) {
                case MAT_C_DOUBLE: ((double *)data)[at] = v; break;
                case MAT_C_SINGLE: ((float *)data)[at] = (float)v; break;
                case MAT_C_INT8: ((int8_t *)data)[at] = (int8_t)v; break;
                case MAT_C_UINT8: ((uint8_t *)data)[at] = (uint8_t)v; break;
                case MAT_C_INT16: ((int16_t *)data)[at] = (int16_t)-v; break;
                case MAT_C_INT32: ((int32_t *)data)[at] = (int32_t)v; break;
                case MAT_C_INT64: ((int64_t *)data)[at] = (int64_t)v; break;
                case MAT_C_UINT64: ((uint64_t *)data)[at] = (uint64_t)v; break;
                default: break;
                }
            }
    size_t dims[3] = {H, W, D};
    matvar_t *var = Mat_VarCreate("L", class_type, data_type, 3, dims, data, logical ? MAT_F_LOGICAL : 0);
    CHECK(Mat_VarWrite(mat, var, version == MAT_FT_MAT73 || version == MAT_FT_MAT5 ? MAT_COMPRESSION_ZLIB
                                                                                    : MAT_COMPRESSION_NONE) == 0,
          "libmatio write %s", path);
    Mat_VarFree(var);
    free(data);
    Mat_Close(mat);
}

static void test_reference_files(const char *dir)
{
    const struct {
        const char *name;
        enum mat_ft version;
        enum matio_classes class_type;
        enum matio_types data_type;
        size_t element;
        int logical;
        vl_dtype expected;
    } cases[] = {
        {"v73_double", MAT_FT_MAT73, MAT_C_DOUBLE, MAT_T_DOUBLE, 8, 0, VL_U32},
        {"v73_uint8", MAT_FT_MAT73, MAT_C_UINT8, MAT_T_UINT8, 1, 0, VL_U8},
        {"v7_double", MAT_FT_MAT5, MAT_C_DOUBLE, MAT_T_DOUBLE, 8, 0, VL_U32},
        {"v7_single", MAT_FT_MAT5, MAT_C_SINGLE, MAT_T_SINGLE, 4, 0, VL_F32},
        {"v7_int8", MAT_FT_MAT5, MAT_C_INT8, MAT_T_INT8, 1, 0, VL_I16},
        {"v7_int16", MAT_FT_MAT5, MAT_C_INT16, MAT_T_INT16, 2, 0, VL_I16},
        {"v7_int32", MAT_FT_MAT5, MAT_C_INT32, MAT_T_INT32, 4, 0, VL_U32},
        {"v7_int64", MAT_FT_MAT5, MAT_C_INT64, MAT_T_INT64, 8, 0, VL_U32},
        {"v7_uint64", MAT_FT_MAT5, MAT_C_UINT64, MAT_T_UINT64, 8, 0, VL_U32},
        {"v7_logical", MAT_FT_MAT5, MAT_C_UINT8, MAT_T_UINT8, 1, 1, VL_U8},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%.4000s/ref_%s.mat", dir, cases[c].name);
        write_reference(path, cases[c].version, cases[c].class_type, cases[c].data_type, cases[c].element,
                        cases[c].logical, c == 0);
        for (int xy = 0; xy < 2; xy++) {
            vl_read_options ro;
            vl_read_options_default(&ro);
            ro.mat_xy = xy;
            vl_volume v;
            vl_status s = vl_read_volume(path, &ro, &v);
            CHECK(s == VL_OK, "read %s", path);
            if (s != VL_OK)
                continue;
            CHECK(v.dtype == cases[c].expected, "%s: dtype %s", path, vl_dtype_name(v.dtype));
            CHECK(xy ? (v.nx == H && v.ny == W && v.nz == D) : (v.nx == W && v.ny == H && v.nz == D), "%s: dims", path);
            int same = 1;
            for (int z = 0; z < D; z++)
                for (int y = 0; y < H; y++)
                    for (int x = 0; x < W; x++) {
                        double want = cases[c].logical ? (x + y + z) % 2 : 1 + x + W * (y + H * z);
                        if (cases[c].class_type == MAT_C_INT16)
                            want = -want;
                        /* matlab-xy: MATLAB's row index is our x. */
                        int64_t at = xy ? y + H * (x + (int64_t)W * z) : x + W * (y + (int64_t)H * z);
                        same &= vl_volume_value(&v, at) == want;
                    }
            CHECK(same, "%s (mat_xy %d): values in the wrong place", path, xy);
            vl_volume_free(&v);
        }
    }
    /* Variable choice: by name, a missing name, a non-numeric one. */
    char path[4096];
    snprintf(path, sizeof path, "%.4000s/ref_v73_double.mat", dir);
    vl_read_options ro;
    vl_read_options_default(&ro);
    vl_volume v;
    ro.mat_variable = "L";
    CHECK(vl_read_volume(path, &ro, &v) == VL_OK, "variable L by name");
    vl_volume_free(&v);
    ro.mat_variable = "missing";
    CHECK(vl_read_volume(path, &ro, &v) == VL_ERR_INPUT && strstr(vl_last_error(), "missing"), "missing variable");
    ro.mat_variable = "note";
    CHECK(vl_read_volume(path, &ro, &v) == VL_ERR_INPUT && strstr(vl_last_error(), "char"), "char variable refused");
}

static void test_refusals(const char *dir)
{
    char path[4096];
    vl_volume v;
    /* Complex. */
    snprintf(path, sizeof path, "%.4000s/complex.mat", dir);
    unlink(path);
    mat_t *mat = Mat_CreateVer(path, NULL, MAT_FT_MAT5);
    double re[4] = {1, 2, 3, 4}, im[4] = {0};
    mat_complex_split_t split = {re, im};
    size_t dims2[2] = {2, 2};
    matvar_t *var = Mat_VarCreate("C", MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims2, &split, MAT_F_COMPLEX);
    Mat_VarWrite(mat, var, MAT_COMPRESSION_NONE);
    Mat_VarFree(var);
    Mat_Close(mat);
    CHECK(vl_read_volume(path, NULL, &v) == VL_ERR_INPUT, "complex-only file refused");
    /* 4-D with a non-singleton 4th dimension; and fractional/negative doubles become f32. */
    snprintf(path, sizeof path, "%.4000s/four_d.mat", dir);
    unlink(path);
    mat = Mat_CreateVer(path, NULL, MAT_FT_MAT5);
    double values[16];
    for (int i = 0; i < 16; i++)
        values[i] = i * 0.5 - 3;
    size_t dims4[4] = {2, 2, 2, 2};
    var = Mat_VarCreate("Q", MAT_C_DOUBLE, MAT_T_DOUBLE, 4, dims4, values, 0);
    Mat_VarWrite(mat, var, MAT_COMPRESSION_NONE);
    Mat_VarFree(var);
    size_t dims4_flat[4] = {2, 2, 4, 1};
    var = Mat_VarCreate("R", MAT_C_DOUBLE, MAT_T_DOUBLE, 4, dims4_flat, values, 0);
    Mat_VarWrite(mat, var, MAT_COMPRESSION_NONE);
    Mat_VarFree(var);
    Mat_Close(mat);
    vl_read_options ro;
    vl_read_options_default(&ro);
    ro.mat_variable = "Q";
    CHECK(vl_read_volume(path, &ro, &v) == VL_ERR_INPUT, "4-D variable refused");
    ro.mat_variable = NULL; /* the first usable one is R (2x2x4x1) */
    CHECK(vl_read_volume(path, &ro, &v) == VL_OK && v.dtype == VL_F32 && v.nz == 4 && vl_volume_value(&v, 1) == -2.0,
          "2x2x4x1 doubles read as f32");
    if (v.data)
        vl_volume_free(&v);
    /* Not a MAT file at all. */
    snprintf(path, sizeof path, "%.4000s/garbage.mat", dir);
    FILE *f = fopen(path, "wb");
    fputs("this is not a MAT file, just text long enough to have a 128-byte header.................................", f);
    fclose(f);
    CHECK(vl_read_volume(path, NULL, &v) == VL_ERR_INPUT, "garbage refused");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s WORK_DIRECTORY\n", argv[0]);
        return 2;
    }
    char command[4200];
    snprintf(command, sizeof command, "mkdir -p '%.4000s'", argv[1]);
    if (system(command) != 0)
        return 2;
    test_our_roundtrip(argv[1]);
    test_reference_files(argv[1]);
    test_refusals(argv[1]);
    return test_finish("io_mat");
}
