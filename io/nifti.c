/* NIfTI-1 single-file volumes (.nii, .nii.gz) with the LPS <-> RAS affine (docs/formats.md, "NIfTI-1";
 * docs/design.md §7).
 *
 * The writer stores the exact (possibly sheared) affine as the sform and its orthonormal part as the
 * qform, both NIFTI_XFORM_SCANNER_ANAT, so tools that trust either one overlay the labels on the CT.
 * The reader prefers the sform, then the qform, then bare pixdim, and always returns LPS geometry. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"
#include "volume_formats.h"
#include "volume_helpers.h"

enum {
    NIFTI_HEADER_SIZE = 348,
    NIFTI_DATA_OFFSET = 352, /* header + 4 zero extension bytes */
    NIFTI_MAX_AXIS = 32767,  /* dim[] is int16 */
    NIFTI_INTENT_LABEL = 1002,
    NIFTI_XFORM_SCANNER_ANAT = 1,
    NIFTI_UNITS_MM = 2
};

static const struct {
    short code;
    vl_sample_type type;
} nifti_types[] = {
    {2, VL_SAMPLE_U8},     {256, VL_SAMPLE_I8},  {4, VL_SAMPLE_I16},  {512, VL_SAMPLE_U16}, {8, VL_SAMPLE_I32},
    {768, VL_SAMPLE_U32},  {1024, VL_SAMPLE_I64}, {1280, VL_SAMPLE_U64}, {16, VL_SAMPLE_F32}, {64, VL_SAMPLE_F64},
};

static short nifti_code_of(vl_sample_type type)
{
    for (size_t i = 0; i < sizeof nifti_types / sizeof nifti_types[0]; i++)
        if (nifti_types[i].type == type)
            return nifti_types[i].code;
    return 0;
}

/* ---- header fields at their byte offsets (host is little endian; big-endian files are swapped on read) ---- */

static void put_i16(unsigned char *h, int offset, short value) { memcpy(h + offset, &value, 2); }
static void put_i32(unsigned char *h, int offset, int value) { memcpy(h + offset, &value, 4); }
static void put_f32(unsigned char *h, int offset, double value)
{
    float f = (float)value;
    memcpy(h + offset, &f, 4);
}

static void swap_field(unsigned char *h, int offset, int size, int count)
{
    vl_swap_bytes(h + offset, count, (size_t)size);
}

static short get_i16(const unsigned char *h, int offset)
{
    short v;
    memcpy(&v, h + offset, 2);
    return v;
}
static int get_i32(const unsigned char *h, int offset)
{
    int v;
    memcpy(&v, h + offset, 4);
    return v;
}
static double get_f32(const unsigned char *h, int offset)
{
    float v;
    memcpy(&v, h + offset, 4);
    return v;
}

/* Byte-swaps every numeric field of a big-endian header (offsets of the NIfTI-1 layout). */
static void swap_header(unsigned char *h)
{
    swap_field(h, 0, 4, 1);     /* sizeof_hdr */
    swap_field(h, 32, 4, 1);    /* extents */
    swap_field(h, 36, 2, 1);    /* session_error */
    swap_field(h, 40, 2, 8);    /* dim */
    swap_field(h, 56, 4, 3);    /* intent_p1..3 */
    swap_field(h, 68, 2, 4);    /* intent_code, datatype, bitpix, slice_start */
    swap_field(h, 76, 4, 11);   /* pixdim[8], vox_offset, scl_slope, scl_inter */
    swap_field(h, 120, 2, 1);   /* slice_end */
    swap_field(h, 124, 4, 6);   /* cal_max, cal_min, slice_duration, toffset, glmax, glmin */
    swap_field(h, 252, 2, 2);   /* qform_code, sform_code */
    swap_field(h, 256, 4, 18);  /* quatern_b..qoffset_z, srow_x/y/z */
}

/* ---- affine <-> quaternion (the standard NIfTI algorithm) ---- */

static void normalise(double v[3])
{
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0)
        for (int i = 0; i < 3; i++)
            v[i] /= n;
}

/* Quaternion (b, c, d) and qfac of a proper or improper orthonormal rotation r (row-major). */
static void rotation_to_quaternion(double r[9], double quaternion[3], double *qfac)
{
    double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) +
                 r[2] * (r[3] * r[7] - r[4] * r[6]);
    *qfac = det < 0 ? -1.0 : 1.0;
    if (det < 0)
        for (int row = 0; row < 3; row++)
            r[3 * row + 2] = -r[3 * row + 2];
    double a = r[0] + r[4] + r[8] + 1.0, b, c, d;
    if (a > 0.5) {
        a = 0.5 * sqrt(a);
        b = 0.25 * (r[7] - r[5]) / a;
        c = 0.25 * (r[2] - r[6]) / a;
        d = 0.25 * (r[3] - r[1]) / a;
    } else {
        double xd = 1.0 + r[0] - (r[4] + r[8]), yd = 1.0 + r[4] - (r[0] + r[8]), zd = 1.0 + r[8] - (r[0] + r[4]);
        if (xd > 1.0) {
            b = 0.5 * sqrt(xd);
            c = 0.25 * (r[1] + r[3]) / b;
            d = 0.25 * (r[2] + r[6]) / b;
            a = 0.25 * (r[7] - r[5]) / b;
        } else if (yd > 1.0) {
            c = 0.5 * sqrt(yd);
            b = 0.25 * (r[1] + r[3]) / c;
            d = 0.25 * (r[5] + r[7]) / c;
            a = 0.25 * (r[2] - r[6]) / c;
        } else {
            d = 0.5 * sqrt(zd);
            b = 0.25 * (r[2] + r[6]) / d;
            c = 0.25 * (r[5] + r[7]) / d;
            a = 0.25 * (r[3] - r[1]) / d;
        }
        if (a < 0.0) {
            b = -b;
            c = -c;
            d = -d;
        }
    }
    quaternion[0] = b;
    quaternion[1] = c;
    quaternion[2] = d;
}

static void quaternion_to_axes(double b, double c, double d, double qfac, const double pixdim[3], double axes[9])
{
    double a = 1.0 - (b * b + c * c + d * d);
    if (a < 1e-7) {
        a = 1.0 / sqrt(b * b + c * c + d * d);
        b *= a;
        c *= a;
        d *= a;
        a = 0.0;
    } else {
        a = sqrt(a);
    }
    const double r[9] = {a * a + b * b - c * c - d * d, 2 * (b * c - a * d), 2 * (b * d + a * c),
                         2 * (b * c + a * d), a * a + c * c - b * b - d * d, 2 * (c * d - a * b),
                         2 * (b * d - a * c), 2 * (c * d + a * b), a * a + d * d - c * c - b * b};
    const double scale[3] = {pixdim[0], pixdim[1], qfac < 0 ? -pixdim[2] : pixdim[2]};
    for (int row = 0; row < 3; row++)
        for (int col = 0; col < 3; col++)
            axes[3 * row + col] = r[3 * row + col] * scale[col];
}

/* ---- writer ---- */

static void build_header(const vl_volume *volume, vl_dtype disk_dtype, int is_label_map, unsigned char *h)
{
    const vl_geometry *g = &volume->geometry;
    memset(h, 0, NIFTI_DATA_OFFSET);
    put_i32(h, 0, NIFTI_HEADER_SIZE);
    h[39] = 0; /* dim_info */
    const short dims[8] = {3, (short)volume->nx, (short)volume->ny, (short)volume->nz, 1, 1, 1, 1};
    for (int i = 0; i < 8; i++)
        put_i16(h, 40 + 2 * i, dims[i]);
    put_i16(h, 68, is_label_map ? NIFTI_INTENT_LABEL : 0);
    put_i16(h, 70, nifti_code_of(vl_sample_type_of(disk_dtype)));
    put_i16(h, 72, (short)(8 * vl_dtype_size(disk_dtype)));

    /* RAS affine: LPS axis steps and origin with the x and y rows negated. */
    double axes[9], offset[3];
    for (int row = 0; row < 3; row++) {
        double sign = row < 2 ? -1.0 : 1.0;
        for (int col = 0; col < 3; col++)
            axes[3 * row + col] = sign * g->direction[3 * row + col] * g->spacing[col];
        offset[row] = sign * g->origin[row];
    }
    /* qform: orthonormal frame of the row and column directions, the slice axis along their normal
     * (its sign taken from the slice step), pixdim[3] the slice step projected onto that normal. */
    double u[3], v[3], n[3], step[3];
    for (int row = 0; row < 3; row++) {
        u[row] = axes[3 * row];
        v[row] = axes[3 * row + 1];
        step[row] = axes[3 * row + 2];
    }
    normalise(u);
    double uv = u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    for (int i = 0; i < 3; i++)
        v[i] -= uv * u[i];
    normalise(v);
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
    double along = step[0] * n[0] + step[1] * n[1] + step[2] * n[2];
    double slice_sign = along < 0 ? -1.0 : 1.0;
    double rotation[9];
    for (int row = 0; row < 3; row++) {
        rotation[3 * row] = u[row];
        rotation[3 * row + 1] = v[row];
        rotation[3 * row + 2] = slice_sign * n[row];
    }
    double quaternion[3], qfac;
    rotation_to_quaternion(rotation, quaternion, &qfac);
    put_f32(h, 76, qfac);
    put_f32(h, 80, g->spacing[0]);
    put_f32(h, 84, g->spacing[1]);
    put_f32(h, 88, fabs(along));
    for (int i = 4; i < 8; i++)
        put_f32(h, 76 + 4 * i, 1.0);
    put_f32(h, 108, NIFTI_DATA_OFFSET);
    put_f32(h, 112, 1.0); /* scl_slope */
    put_f32(h, 116, 0.0); /* scl_inter */
    h[123] = NIFTI_UNITS_MM;
    snprintf((char *)h + 148, 80, "voxlabel %s", VL_VERSION);
    put_i16(h, 252, NIFTI_XFORM_SCANNER_ANAT);
    put_i16(h, 254, NIFTI_XFORM_SCANNER_ANAT);
    for (int i = 0; i < 3; i++)
        put_f32(h, 256 + 4 * i, quaternion[i]);
    for (int i = 0; i < 3; i++)
        put_f32(h, 268 + 4 * i, offset[i]);
    for (int row = 0; row < 3; row++) {
        for (int col = 0; col < 3; col++)
            put_f32(h, 280 + 16 * row + 4 * col, axes[3 * row + col]);
        put_f32(h, 280 + 16 * row + 12, offset[row]);
    }
    if (is_label_map)
        snprintf((char *)h + 328, 16, "labels");
    memcpy(h + 344, "n+1", 4);
}

vl_status vl_nifti_write(const char *path, const vl_volume *volume, const vl_write_options *options, int compress)
{
    if (volume->nx > NIFTI_MAX_AXIS || volume->ny > NIFTI_MAX_AXIS || volume->nz > NIFTI_MAX_AXIS)
        return vl_fail(VL_ERR_ARGUMENT, "%s: %lldx%lldx%lld has an axis over %d voxels, which NIfTI-1 cannot store "
                                        "(use --format nrrd or mha)",
                       path, (long long)volume->nx, (long long)volume->ny, (long long)volume->nz, NIFTI_MAX_AXIS);
    if (!vl_geometry_is_valid(&volume->geometry))
        return vl_fail(VL_ERR_ARGUMENT, "%s: the volume's geometry is singular or not finite", path);
    vl_dtype disk_dtype = vl_disk_dtype_for(volume, options);
    unsigned char header[NIFTI_DATA_OFFSET];
    build_header(volume, disk_dtype, options->is_label_map, header);

    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, options->force, "wb", &out);
    if (status != VL_OK)
        return status;
    status = vl_write_volume_data(out, compress, header, sizeof header, volume, disk_dtype, options, path);
    return vl_atomic_file_close_stream(&file, out, status);
}

/* ---- reader ---- */

/* The file's RAS axes (columns: mm per index step) and origin, flipped to LPS. */
static vl_status geometry_from_ras(const double axes[9], const double offset[3], vl_geometry *geometry,
                                   const char *path)
{
    double lps_axes[9], lps_origin[3];
    for (int row = 0; row < 3; row++) {
        const double sign = row < 2 ? -1.0 : 1.0;
        for (int col = 0; col < 3; col++)
            lps_axes[3 * row + col] = sign * axes[3 * row + col];
        lps_origin[row] = sign * offset[row];
    }
    return vl_geometry_from_axes(lps_axes, lps_origin, geometry, path);
}

static vl_status geometry_from_header(const unsigned char *h, const char *path, vl_geometry *geometry)
{
    double pixdim[3];
    for (int i = 0; i < 3; i++) {
        pixdim[i] = fabs(get_f32(h, 80 + 4 * i));
        if (!isfinite(pixdim[i]) || pixdim[i] == 0.0)
            pixdim[i] = 1.0;
    }
    double axes[9] = {0}, offset[3] = {0};
    int have = 0;
    if (get_i16(h, 254) > 0) {
        for (int row = 0; row < 3; row++) {
            for (int col = 0; col < 3; col++)
                axes[3 * row + col] = get_f32(h, 280 + 16 * row + 4 * col);
            offset[row] = get_f32(h, 280 + 16 * row + 12);
        }
        have = 1;
    }
    vl_geometry g;
    if (have && geometry_from_ras(axes, offset, &g, path) == VL_OK) {
        *geometry = g;
        return VL_OK;
    }
    if (get_i16(h, 252) > 0) {
        double qfac = get_f32(h, 76) < 0 ? -1.0 : 1.0;
        quaternion_to_axes(get_f32(h, 256), get_f32(h, 260), get_f32(h, 264), qfac, pixdim, axes);
        for (int i = 0; i < 3; i++)
            offset[i] = get_f32(h, 268 + 4 * i);
    } else {
        memset(axes, 0, sizeof axes);
        memset(offset, 0, sizeof offset);
        for (int i = 0; i < 3; i++)
            axes[4 * i] = pixdim[i];
    }
    return geometry_from_ras(axes, offset, geometry, path);
}

static vl_status parse_header(unsigned char *h, const char *path, int64_t dims[3], vl_sample_type *type,
                              double *data_offset, int *swapped)
{
    int size = get_i32(h, 0);
    *swapped = 0;
    if (size != NIFTI_HEADER_SIZE) {
        swap_field(h, 0, 4, 1);
        if (get_i32(h, 0) == NIFTI_HEADER_SIZE) {
            swap_field(h, 0, 4, 1);
            swap_header(h);
            *swapped = 1;
        } else if (size == 540 || get_i32(h, 0) == 540) {
            return vl_fail(VL_ERR_INPUT, "%s: NIfTI-2 is not supported (convert it to NIfTI-1 or NRRD)", path);
        } else {
            return vl_fail(VL_ERR_INPUT, "%s: not a NIfTI-1 file (header size %d, expected 348)", path, size);
        }
    }
    if (memcmp(h + 344, "ni1", 4) == 0)
        return vl_fail(VL_ERR_INPUT, "%s: a two-file NIfTI (.hdr/.img) is not supported; use a single .nii", path);
    if (memcmp(h + 344, "n+1", 4) != 0)
        return vl_fail(VL_ERR_INPUT, "%s: not a NIfTI-1 file (bad magic)", path);
    short rank = get_i16(h, 40);
    if (rank < 1 || rank > 7)
        return vl_fail(VL_ERR_INPUT, "%s: invalid dim[0] = %d", path, rank);
    for (int i = 1; i <= 7; i++) {
        short extent = i <= rank ? get_i16(h, 40 + 2 * i) : 1;
        if (extent < 1)
            return vl_fail(VL_ERR_INPUT, "%s: invalid dim[%d] = %d", path, i, extent);
        if (i <= 3)
            dims[i - 1] = extent;
        else if (extent != 1)
            return vl_fail(VL_ERR_INPUT, "%s: a %d-D image (dim[%d] = %d) is not a 3-D volume", path, rank, i, extent);
    }
    short code = get_i16(h, 70);
    size_t t = 0;
    while (t < sizeof nifti_types / sizeof nifti_types[0] && nifti_types[t].code != code)
        t++;
    if (t == sizeof nifti_types / sizeof nifti_types[0])
        return vl_fail(VL_ERR_INPUT, "%s: NIfTI datatype %d is not supported (use an integer or real scalar type)",
                       path, code);
    *type = nifti_types[t].type;
    *data_offset = get_f32(h, 108);
    if (!(*data_offset >= NIFTI_HEADER_SIZE) || *data_offset > 1e9)
        return vl_fail(VL_ERR_INPUT, "%s: invalid vox_offset %g", path, *data_offset);
    return VL_OK;
}

vl_status vl_nifti_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    gzFile in = gzopen(path, "rb");
    if (!in)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open", path);
    gzbuffer(in, 1 << 20);
    unsigned char h[NIFTI_HEADER_SIZE];
    int64_t dims[3] = {0, 0, 0};
    vl_sample_type type = VL_SAMPLE_U8;
    double data_offset = NIFTI_DATA_OFFSET;
    int swapped = 0;
    vl_status status = vl_gz_read_exact(in, h, sizeof h, path);
    if (status == VL_OK)
        status = parse_header(h, path, dims, &type, &data_offset, &swapped);
    vl_volume out;
    memset(&out, 0, sizeof out);
    out.nx = dims[0];
    out.ny = dims[1];
    out.nz = dims[2];
    if (status == VL_OK)
        status = geometry_from_header(h, path, &out.geometry);
    void *samples = NULL;
    if (status == VL_OK) {
        for (long skip = (long)data_offset - NIFTI_HEADER_SIZE; skip > 0 && status == VL_OK;) {
            unsigned char discard[4096];
            long piece = skip > (long)sizeof discard ? (long)sizeof discard : skip;
            status = vl_gz_read_exact(in, discard, (size_t)piece, path);
            skip -= piece;
        }
    }
    const size_t element = vl_sample_size(type);
    int64_t count = 0, bytes = 0;
    if (status == VL_OK && (status = vl_size_product(dims[0], dims[1], dims[2], (int64_t)element, path, &bytes)) == VL_OK)
        count = bytes / (int64_t)element;
    if (status == VL_OK && !gzdirect(in)) {
        struct stat info;
        status = vl_check_deflate_claim(bytes, stat(path, &info) == 0 ? (int64_t)info.st_size : -1, path);
    }
    if (status == VL_OK && gzdirect(in)) {
        /* An uncompressed .nii must hold what its header claims: refuse before allocating it. */
        FILE *plain = fopen(path, "rb");
        int64_t size = plain ? vl_file_remaining_bytes(plain) : -1;
        if (plain)
            fclose(plain);
        if (size >= 0 && (uint64_t)size < (uint64_t)data_offset + (uint64_t)count * element)
            status = vl_fail(VL_ERR_INPUT, "%s: truncated: %lld bytes, but the header needs %.0f + %llu", path,
                             (long long)size, data_offset, (unsigned long long)count * element);
    }
    int inflated = 0; /* by libdeflate, from the whole file at once; else through gzread below */
    if (status == VL_OK && !gzdirect(in)) {
        vl_progress_report(&options->progress, "reading", 0.0);
        FILE *whole = fopen(path, "rb");
        if (whole) {
            inflated = vl_gunzip_exact(whole, (size_t)data_offset, (size_t)bytes, &samples, &status, path);
            fclose(whole);
        }
    }
    if (status == VL_OK && !inflated) {
        samples = malloc((size_t)count * element);
        if (!samples)
            status = vl_fail(VL_ERR_MEMORY, "%s: cannot allocate %lld voxels", path, (long long)count);
    }
    if (status == VL_OK && !inflated) {
        vl_progress_report(&options->progress, "reading", 0.0);
        status = vl_gz_read_exact(in, samples, (size_t)count * element, path);
    }
    gzclose(in);
    if (status != VL_OK) {
        free(samples);
        return status;
    }
    if (swapped)
        vl_swap_bytes(samples, count, element);
    double slope = get_f32(h, 112), intercept = get_f32(h, 116);
    int scaled = isfinite(slope) && slope != 0.0 && isfinite(intercept) && (slope != 1.0 || intercept != 0.0);
    status = vl_samples_to_volume(samples, type, scaled, slope, intercept, &out, path);
    if (status != VL_OK)
        return status;
    vl_progress_report(&options->progress, "reading", 1.0);
    *volume = out;
    return VL_OK;
}
