/* Internal: the series model shared by discovery, geometry analysis, pixel decoding and the reader.
 * A "frame" is one 2D image: a single-frame file, or one frame of a multi-frame (Enhanced) object. */
#ifndef VL_DICOM_SERIES_H
#define VL_DICOM_SERIES_H

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "voxlabel/dicom.h"

struct vl_dicom_frame {
    std::string path;
    long frame = 0;                 /* index inside the file */
    long frames_in_file = 1;
    std::string patient_id, study_uid, series_uid, description, modality, sop_instance_uid, sop_class_uid, image_type;
    std::string transfer_syntax_uid, photometric;
    long series_number = -1, instance_number = 0;
    unsigned rows = 0, columns = 0, samples_per_pixel = 1;
    unsigned bits_allocated = 16, bits_stored = 16, high_bit = 15, pixel_representation = 0;
    bool has_position = false, has_orientation = false, has_pixel_spacing = false;
    double position[3] = {0, 0, 0};
    double orientation[6] = {0, 0, 0, 0, 0, 0};
    double pixel_spacing[2] = {1, 1}; /* DICOM order: row spacing (y), column spacing (x) */
    double slope = 1, intercept = 0, slice_thickness = 0, gantry_tilt;
    double window_center = NAN, window_width = NAN; /* first values of WindowCenter / WindowWidth */
    bool has_padding = false, has_padding_limit = false;
    long padding = 0, padding_limit = 0;
    std::string broken;             /* why this frame cannot be decoded, found while scanning; "" if fine */
};

struct vl_dicom_group {
    std::vector<size_t> frames;     /* indices into vl_dicom_files::frames */
    size_t file_count = 0;
    bool is_colour = false, is_localizer = false, is_derived = false, is_ct_like = false;
};

struct vl_dicom_files {
    std::vector<vl_dicom_frame> frames;
    std::vector<vl_dicom_group> groups;
    int64_t files_seen = 0, files_not_dicom = 0, files_directory = 0, files_non_image = 0;
    std::vector<std::string> notes;
};

/* Finds and groups every image under `path` (a directory, recursively, or one file). */
vl_status vl_dicom_discover(const char *path, const vl_progress *progress, vl_dicom_files &files);
/* The same for a given list of files; `what` names them in messages. */
vl_status vl_dicom_discover_list(const std::vector<std::string> &paths, const char *what, const vl_progress *progress,
                                 vl_dicom_files &files);

/* The group to load: `series` (UID or number) or the default choice. Explains the choice in `notes`;
 * VL_ERR_INPUT when nothing fits or the choice is ambiguous. */
vl_status vl_dicom_choose_group(const vl_dicom_files &files, const char *series, size_t &chosen,
                                std::vector<std::string> &notes);

/* A group's slices in order, and everything irregular about them. */
struct vl_dicom_stack {
    std::vector<size_t> order;      /* frame indices, sorted, duplicates (after the first) removed */
    std::vector<double> positions;  /* IPP . normal of each ordered frame */
    bool has_geometry = false;      /* every frame had IPP and IOP */
    double row[3], column[3], normal[3];
    double tilt_degrees = 0, step_min = 0, step_median = 0, step_max = 0;
    int64_t gap_count = 0, duplicate_count = 0, copies_dropped = 0;
    bool variable_spacing = false, single_position = false;
    double gantry_tilt_tag;
    vl_geometry geometry;           /* native grid: origin = first IPP, z axis = mean slice step (sheared) */
    std::vector<std::string> anomalies;
};

void vl_dicom_analyse_stack(const vl_dicom_files &files, const vl_dicom_group &group, vl_dicom_stack &stack);

#endif
