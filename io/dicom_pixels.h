/* Internal: decoding the frames of one DICOM file into HU slices. */
#ifndef VL_DICOM_PIXELS_H
#define VL_DICOM_PIXELS_H

#include <atomic>
#include <vector>

#include "dicom_series.h"

struct vl_dicom_slice_target {
    const vl_dicom_frame *frame;
    void *destination;              /* columns*rows voxels of the output type */
};

struct vl_dicom_pixel_rules {
    bool to_int16;                  /* else float */
    bool keep_padding;
    double padding_fill_hu;
    std::atomic<int64_t> *padded_voxels;
    std::atomic<bool> *int16_overflow; /* set when a value does not fit int16: the caller retries in float */
};

class DcmDataset;
/* DCMTK 3.6.7's RLE decoder reads past its input when segment offsets are corrupt:
 * false (with the reason) unless every RLE fragment header is consistent. Other syntaxes pass. */
bool vl_dicom_rle_is_sane(DcmDataset *dataset, std::string &reason);

/* Decodes every target (all from one file) following the pixel rules of docs/dicom.md §4:
 * bit extraction, sign, padding (in stored units), then HU = v * slope + intercept. */
vl_status vl_dicom_decode_file(const std::string &path, const std::vector<vl_dicom_slice_target> &targets,
                               const vl_dicom_pixel_rules &rules);

#endif
