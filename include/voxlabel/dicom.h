/* voxlabel: DICOM series in (CT -> HU volume with geometry), DICOM series out (the phantom writer),
 * folder discovery for `voxlabel info`, and colour decoding for the 2D colour stage.
 * The loading rules, anomalies and flags are documented for users in docs/dicom.md. */
#ifndef VOXLABEL_DICOM_H
#define VOXLABEL_DICOM_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Writing (synthetic series) ------------------------------------------------------------------- */

typedef struct vl_dicom_write_options {
    int force;                        /* replace an existing directory that holds only plain files */
    const char *series_description;   /* NULL: "voxlabel phantom" */
    const char *study_description;    /* NULL: "voxlabel synthetic CT" */
    int series_number;                /* default 1 */
    vl_progress progress;
} vl_dicom_write_options;

void vl_dicom_write_options_default(vl_dicom_write_options *options);

/* Writes `hu` (I16) as CT Image Storage files, one per slice (slice_0001.dcm ...), Explicit VR Little
 * Endian, unsigned stored values = HU + 1024 (RescaleIntercept -1024, slope 1; BitsStored 12 when every
 * value is within -1024..3071, else 16). Geometry (IPP, IOP, PixelSpacing) comes from hu->geometry.
 * The series is written into a temporary sibling directory that is renamed into place, so a failure
 * leaves nothing. An existing non-empty `directory` is an error (VL_ERR_OUTPUT) unless options->force,
 * and even then only when it holds nothing but plain files. */
vl_status vl_dicom_write_series(const char *directory, const vl_volume *hu, const vl_dicom_write_options *options);

/* ---- Reading a CT series --------------------------------------------------------------------------- */

/* What to do with an irregular stack (duplicates, gaps, variable spacing, gantry tilt). */
typedef enum vl_dicom_irregular {
    VL_IRREGULAR_DEFAULT = 0, /* tilt and variable spacing: warn; gaps and duplicate positions: error */
    VL_IRREGULAR_ERROR,       /* any irregularity is an error */
    VL_IRREGULAR_WARN,        /* load the native grid and warn (duplicates: keep the lowest InstanceNumber) */
    VL_IRREGULAR_RESAMPLE     /* warn, then resample to uniform spacing on an un-sheared grid (trilinear) */
} vl_dicom_irregular;

/* Parses "error", "warn", "resample" (and "default"). */
vl_status vl_dicom_irregular_parse(const char *text, vl_dicom_irregular *policy);
const char *vl_dicom_irregular_name(vl_dicom_irregular policy);

typedef struct vl_dicom_read_options {
    const char *series;           /* SeriesInstanceUID or SeriesNumber; NULL: the largest CT-like series */
    vl_dicom_irregular on_irregular;
    int keep_padding;             /* 0 (default): PixelPaddingValue voxels become padding_fill_hu */
    double padding_fill_hu;       /* default -1024 (air) */
    int threads;                  /* decode threads; 0 = online cores */
    vl_progress progress;
    /* A block of the caller's for the voxels, or NULL (default): a caller that reads series after series passes
     * the previous volume's data, so the new one needs no fresh pages. When its `reuse_bytes` hold the voxels
     * they are decoded into it and hu->data is the block (to be freed as the volume's data); otherwise, and on
     * failure, the block is left as it was, still the caller's. */
    void *reuse;
    size_t reuse_bytes;
} vl_dicom_read_options;

void vl_dicom_read_options_default(vl_dicom_read_options *options);

typedef struct vl_dicom_report {
    char series_uid[80];
    char series_description[80];
    char modality[24];
    long series_number;           /* -1 when absent */
    int64_t slice_count;          /* slices in the volume */
    char transfer_syntax[160];    /* names, comma-separated when the files differ */
    double tilt_degrees;          /* angle between the slice step and the slice normal, from the positions */
    double gantry_tilt_tag;       /* GantryDetectorTilt (0018,1120), NAN when absent */
    double window_center, window_width; /* the first slice's WindowCenter/WindowWidth (first values), NAN when absent */
    double step_min_mm, step_median_mm, step_max_mm; /* steps between slice positions along the normal */
    int64_t gap_count, duplicate_count;
    int resampled;                /* the volume was resampled (VL_IRREGULAR_RESAMPLE and irregular input) */
    int64_t padded_voxels;        /* voxels equal to PixelPaddingValue (outside the field of view) */
    /* Native slice positions along the normal (mm), ascending, one per slice of the native stack: with
     * variable spacing the physical thickness of slice k is local, e.g. (d[k+1] - d[k-1]) / 2. */
    double *slice_positions;
    int64_t slice_position_count;
    char **warnings;
    size_t warning_count;
    char **notes;
    size_t note_count;
} vl_dicom_report;

/* Loads one CT series from `path` (a directory, scanned recursively, or one file) into `hu`: I16 when
 * every slice has slope 1, an integral intercept and every value fits, else F32. Geometry follows
 * docs/design.md §3: slices sorted by IPP . (row x col), spacing from the positions, a sheared z axis for tilt.
 * `report` may be NULL; otherwise it is filled (also on failure, as far as the scan got) and must be
 * released with vl_dicom_report_free. Errors: VL_ERR_INPUT with the file and reason. */
vl_status vl_dicom_read_series(const char *path, const vl_dicom_read_options *options, vl_volume *hu,
                               vl_dicom_report *report);
void vl_dicom_report_free(vl_dicom_report *report);
/* As vl_dicom_read_series, from exactly these files (a series' `paths` from vl_dicom_scan_path) without
 * listing any directory; `what` names them in messages. */
vl_status vl_dicom_read_series_files(const char *const *paths, size_t count, const char *what,
                                     const vl_dicom_read_options *options, vl_volume *hu, vl_dicom_report *report);

/* ---- Discovery (voxlabel info) --------------------------------------------------------------------- */

typedef struct vl_dicom_series_info {
    char series_uid[80];
    char description[80];
    char modality[24];
    char sop_class[80];           /* name of the SOP class, e.g. "CTImageStorage" */
    char image_type[80];
    char photometric[24];
    char transfer_syntax[160];
    long series_number;           /* -1 when absent */
    int rows, columns, samples_per_pixel;
    int64_t file_count;           /* files */
    int64_t slice_count;          /* frames (= files for single-frame series) */
    double orientation[6];        /* IOP, zeros when absent */
    double spacing[3];            /* x, y, z mm; z: the step between slice positions along the (possibly sheared)
                                   * z axis, as the volumes read have it (SliceThickness for one slice) */
    double normal_step[3];        /* min, median, max step along the slice normal (0 without positions) */
    int variable_spacing;         /* the steps differ (docs/dicom.md) */
    double tilt_degrees;
    int is_ct_like;               /* candidate for CT labelling */
    int is_localizer, is_derived, is_colour;
    int is_default_choice;        /* the group vl_dicom_read_series takes without --series */
    char **anomalies;             /* one line each: gaps, duplicates, tilt, variable spacing, ... */
    size_t anomaly_count;
    char patient_id[68];          /* PatientID (0010,0020), "" when absent */
    char study_uid[68];           /* StudyInstanceUID (0020,000D), "" when absent */
    char **paths;                 /* the series' files, sorted, each once (vl_dicom_read_series_files) */
    size_t path_count;
} vl_dicom_series_info;

typedef struct vl_dicom_scan {
    vl_dicom_series_info *series;
    size_t series_count;
    int64_t files_seen;           /* regular files looked at */
    int64_t files_not_dicom;      /* skipped: no DICOM signature or unparseable */
    int64_t files_directory;      /* skipped: DICOMDIR / DIRFILE records */
    int64_t files_non_image;      /* skipped: no pixel matrix (SR, presentation states, ...) */
    char **notes;
    size_t note_count;
} vl_dicom_scan;

/* Scans `path` (directory, recursively, or one file) and groups its images into series
 * (SeriesInstanceUID + Rows + Columns + SamplesPerPixel + orientation). No pixel data is decoded. */
vl_status vl_dicom_scan_path(const char *path, const vl_dicom_read_options *options, vl_dicom_scan *scan);
void vl_dicom_scan_free(vl_dicom_scan *scan);

/* ---- Colour images (2D colour stage) -------------------------------------------------------------- */

typedef struct vl_dicom_rgb {
    int64_t width, height, frames;
    uint8_t *rgb;                 /* width*height*3 bytes per frame, interleaved R,G,B, frames one after another */
} vl_dicom_rgb;

/* Decodes a colour DICOM file (RGB planar 0/1, YBR_FULL, YBR_FULL_422, PALETTE COLOR; uncompressed, RLE
 * or JPEG) to interleaved 8-bit RGB. A monochrome file is VL_ERR_INPUT (read it with vl_dicom_read_series). */
vl_status vl_dicom_read_rgb(const char *path, vl_dicom_rgb *image);
void vl_dicom_rgb_free(vl_dicom_rgb *image);

#ifdef __cplusplus
}
#endif
#endif
