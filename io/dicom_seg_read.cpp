// DICOM Segmentation -> class map with DCMTK dcmseg (voxlabel/seg_read.h, docs/multilabel.md).
// C++17 shim behind a C API; nothing here prints (DCMTK's logger is silenced by vl_dicom_initialise).
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmfg/fginterface.h>
#include <dcmtk/dcmfg/fgpixmsr.h>
#include <dcmtk/dcmfg/fgplanor.h>
#include <dcmtk/dcmfg/fgplanpo.h>
#include <dcmtk/dcmiod/iodreferences.h>
#include <dcmtk/dcmseg/segdoc.h>
#include <dcmtk/dcmseg/segment.h>
#include <dcmtk/dcmseg/segutils.h>

#include "dicom_codecs.h"
#include "voxlabel/error.h"
#include "voxlabel/seg_read.h"

namespace {

// SOP classes of segmentations: binary/fractional, and the label map form of later standards.
constexpr const char *kSegmentationStorage = "1.2.840.10008.5.1.4.1.1.66.4";
constexpr const char *kLabelMapSegmentationStorage = "1.2.840.10008.5.1.4.1.1.66.7";

std::string sop_class_in(DcmFileFormat &format)
{
    OFString uid;
    if (format.getDataset()->findAndGetOFString(DCM_SOPClassUID, uid).bad())
        format.getMetaInfo()->findAndGetOFString(DCM_MediaStorageSOPClassUID, uid);
    return uid.c_str();
}

std::string sop_class_of(const char *path)
{
    DcmFileFormat format;
    if (format.loadFileUntilTag(path, EXS_Unknown, EGL_noChange, 4096, ERM_autoDetect, DCM_SOPClassUID).bad())
        return "";
    return sop_class_in(format);
}

/* The SOP class, Rows and Columns from one read of the header (dcmseg keeps its image pixel module protected);
 * rows and columns stay 0 when the header up to the pixel data cannot be read. */
void header_of(const char *path, std::string &sop_class, Uint16 &rows, Uint16 &columns)
{
    DcmFileFormat format;
    if (format.loadFileUntilTag(path, EXS_Unknown, EGL_noChange, 4096, ERM_autoDetect, DCM_PixelData).bad()) {
        sop_class = sop_class_of(path);
        return;
    }
    sop_class = sop_class_in(format);
    if (format.getDataset()->findAndGetUint16(DCM_Rows, rows).good())
        format.getDataset()->findAndGetUint16(DCM_Columns, columns);
}

struct Frame {
    double position[3];
    double along; // position along the slice normal
};

vl_status input_error(const char *path, const char *format, ...) __attribute__((format(printf, 2, 3)));
vl_status input_error(const char *path, const char *format, ...)
{
    char why[512];
    va_list arguments;
    va_start(arguments, format);
    std::vsnprintf(why, sizeof why, format, arguments);
    va_end(arguments);
    return vl_fail(VL_ERR_INPUT, "%s: %s", path, why);
}

} // namespace

extern "C" int vl_dicom_file_is_seg(const char *path)
{
    vl_dicom_initialise();
    const std::string uid = sop_class_of(path);
    return uid == kSegmentationStorage || uid == kLabelMapSegmentationStorage;
}

extern "C" void vl_seg_class_map_free(vl_seg_class_map *map)
{
    if (!map)
        return;
    vl_volume_free(&map->classes);
    std::free(map->names);
    map->names = nullptr;
    map->segment_count = 0;
}

extern "C" vl_status vl_read_dicom_seg(const char *path, vl_seg_class_map *map)
{
    std::memset(map, 0, sizeof *map);
    vl_dicom_initialise();
    std::string sop_class;
    Uint16 rows = 0, columns = 0;
    header_of(path, sop_class, rows, columns);
    if (sop_class == kLabelMapSegmentationStorage)
        return input_error(path, "a LABELMAP segmentation, which DCMTK 3.6.7 cannot read (binary SEGs are read)");
    DcmSegmentation *loaded = nullptr;
    OFCondition condition = DcmSegmentation::loadFile(path, loaded);
    std::unique_ptr<DcmSegmentation> seg(loaded);
    if (condition.bad() || !seg)
        return input_error(path, "not a DICOM Segmentation DCMTK can read: %s", condition.text());
    if (seg->getSegmentationType() != DcmSegTypes::ST_BINARY)
        return input_error(path, "a fractional segmentation; only binary SEGs are read as class maps");
    const size_t frame_count = seg->getNumberOfFrames(), segment_count = seg->getNumberOfSegments();
    if (rows == 0 || columns == 0 || frame_count == 0 || segment_count == 0)
        return input_error(path, "%ux%u pixels, %zu frames, %zu segments: nothing to read", rows, columns,
                           frame_count, segment_count);
    if (segment_count > 65535)
        return input_error(path, "%zu segments exceed the 65535 a class map of u16 holds", segment_count);

    // The grid: one orientation and pixel spacing, frames along the normal.
    FGInterface &groups = seg->getFunctionalGroups();
    auto *orientation = OFstatic_cast(FGPlaneOrientationPatient *, groups.get(0, DcmFGTypes::EFG_PLANEORIENTPATIENT));
    auto *measures = OFstatic_cast(FGPixelMeasures *, groups.get(0, DcmFGTypes::EFG_PIXELMEASURES));
    double row_dir[3], col_dir[3], spacing_rows = 0, spacing_columns = 0, between = 0;
    if (!orientation || !measures ||
        orientation->getImageOrientationPatient(row_dir[0], row_dir[1], row_dir[2], col_dir[0], col_dir[1], col_dir[2])
            .bad() ||
        measures->getPixelSpacing(spacing_rows, 0).bad() || measures->getPixelSpacing(spacing_columns, 1).bad() ||
        !(spacing_rows > 0) || !(spacing_columns > 0))
        return input_error(path, "no plane orientation or pixel spacing in the functional groups");
    const double normal[3] = {row_dir[1] * col_dir[2] - row_dir[2] * col_dir[1],
                              row_dir[2] * col_dir[0] - row_dir[0] * col_dir[2],
                              row_dir[0] * col_dir[1] - row_dir[1] * col_dir[0]};
    std::vector<Frame> frames(frame_count);
    for (size_t f = 0; f < frame_count; f++) {
        auto *position = OFstatic_cast(FGPlanePosPatient *, groups.get((Uint32)f, DcmFGTypes::EFG_PLANEPOSPATIENT));
        Frame &frame = frames[f];
        if (!position ||
            position->getImagePositionPatient(frame.position[0], frame.position[1], frame.position[2]).bad())
            return input_error(path, "frame %zu has no ImagePositionPatient", f + 1);
        frame.along = frame.position[0] * normal[0] + frame.position[1] * normal[1] + frame.position[2] * normal[2];
    }
    std::vector<double> positions;
    for (const Frame &frame : frames)
        positions.push_back(frame.along);
    std::sort(positions.begin(), positions.end());
    std::vector<double> distinct;
    for (double p : positions)
        if (distinct.empty() || p - distinct.back() > 1e-3)
            distinct.push_back(p);
    if (measures->getSpacingBetweenSlices(between, 0).bad() || !(between > 0)) {
        between = 0;
        for (size_t k = 1; k < distinct.size(); k++)
            between = between == 0 ? distinct[k] - distinct[k - 1] : std::min(between, distinct[k] - distinct[k - 1]);
        if (between == 0 && (measures->getSliceThickness(between, 0).bad() || !(between > 0)))
            between = 1;
    }
    const double first = distinct.front();
    int64_t depth = 0;
    for (double p : distinct) {
        const double step = (p - first) / between;
        if (std::fabs(step - std::round(step)) > 0.1)
            return input_error(path, "frames at %.3f and %.3f mm along the normal are not on a grid of %.3f mm", first,
                               p, between);
        depth = std::max<int64_t>(depth, (int64_t)std::llround(step) + 1);
    }
    // The frames' positions come from the header: refuse a span no segmentation has before allocating it.
    if (depth > 100000 || (uint64_t)depth * rows * columns > (1ull << 34))
        return input_error(path, "frames of %ux%u pixels span %lld slices of %.3f mm: not a plausible volume", columns,
                           rows, (long long)depth, between);
    // Every frame must start at the same in-plane corner: the first frame at the lowest position.
    const Frame *origin_frame = &frames[0];
    for (const Frame &frame : frames)
        if (frame.along < origin_frame->along)
            origin_frame = &frame;
    for (size_t f = 0; f < frame_count; f++) {
        double offset[3];
        for (int a = 0; a < 3; a++)
            offset[a] = frames[f].position[a] - origin_frame->position[a];
        const double in_row = offset[0] * row_dir[0] + offset[1] * row_dir[1] + offset[2] * row_dir[2];
        const double in_col = offset[0] * col_dir[0] + offset[1] * col_dir[1] + offset[2] * col_dir[2];
        if (std::fabs(in_row) > 0.1 * spacing_columns || std::fabs(in_col) > 0.1 * spacing_rows)
            return input_error(path, "frame %zu is shifted in its plane by (%.3f, %.3f) mm from frame %zu", f + 1,
                               in_row, in_col, (size_t)(origin_frame - frames.data()) + 1);
    }

    const vl_dtype dtype = segment_count <= 255 ? VL_U8 : VL_U16;
    vl_status status = vl_volume_create(&map->classes, columns, rows, depth, dtype);
    if (status != VL_OK)
        return status;
    vl_geometry &geometry = map->classes.geometry;
    for (int r = 0; r < 3; r++) {
        geometry.origin[r] = origin_frame->position[r];
        geometry.direction[3 * r + 0] = row_dir[r];
        geometry.direction[3 * r + 1] = col_dir[r];
        geometry.direction[3 * r + 2] = normal[r];
    }
    geometry.spacing[0] = spacing_columns;
    geometry.spacing[1] = spacing_rows;
    geometry.spacing[2] = between;
    map->names = static_cast<char (*)[65]>(std::calloc(segment_count, sizeof *map->names));
    if (!map->names) {
        vl_seg_class_map_free(map);
        return vl_fail(VL_ERR_MEMORY, "%s: no memory for %zu segment names", path, segment_count);
    }
    map->segment_count = (uint32_t)segment_count;

    const int64_t plane = (int64_t)rows * columns;
    for (size_t s = 1; s <= segment_count; s++) {
        DcmSegment *segment = seg->getSegment(s);
        OFString label;
        if (segment && segment->getSegmentLabel(label).good())
            std::snprintf(map->names[s - 1], sizeof map->names[s - 1], "%s", label.c_str());
        OFVector<size_t> numbers;
        seg->getFramesForSegment(s, numbers);
        for (size_t f : numbers) {
            const DcmIODTypes::Frame *packed = seg->getFrame(f);
            std::unique_ptr<DcmIODTypes::Frame> frame(packed ? DcmSegUtils::unpackBinaryFrame(packed, rows, columns)
                                                             : nullptr);
            if (!frame || frame->length < (size_t)plane) {
                vl_seg_class_map_free(map);
                return input_error(path, "frame %zu of segment %zu cannot be unpacked", f + 1, s);
            }
            const int64_t z = (int64_t)std::llround((frames[f].along - first) / between);
            for (int64_t i = 0; i < plane; i++) {
                if (!frame->pixData[i])
                    continue;
                const int64_t v = z * plane + i;
                const uint32_t held = dtype == VL_U8 ? static_cast<uint8_t *>(map->classes.data)[v]
                                                     : static_cast<uint16_t *>(map->classes.data)[v];
                if (held && held != s) {
                    vl_seg_class_map_free(map);
                    return input_error(path,
                                       "segments %u and %zu overlap at voxel (%lld, %lld, %lld); a class map holds "
                                       "one class per voxel",
                                       held, s, (long long)(i % columns), (long long)(i / columns), (long long)z);
                }
                if (dtype == VL_U8)
                    static_cast<uint8_t *>(map->classes.data)[v] = (uint8_t)s;
                else
                    static_cast<uint16_t *>(map->classes.data)[v] = (uint16_t)s;
            }
        }
    }
    OFVector<IODSeriesAndInstanceReferenceMacro::ReferencedSeriesItem *> &series =
        seg->getCommonInstanceReference().getReferencedSeriesItems();
    OFString uid;
    if (!series.empty() && series[0]->getSeriesInstanceUID(uid).good())
        std::snprintf(map->referenced_series_uid, sizeof map->referenced_series_uid, "%s", uid.c_str());
    return VL_OK;
}

extern "C" vl_status vl_seg_class_map_place(vl_seg_class_map *map, const vl_volume *reference)
{
    const vl_volume *seg = &map->classes;
    const vl_geometry &gs = seg->geometry, &gr = reference->geometry;
    if (seg->nx != reference->nx || seg->ny != reference->ny)
        return vl_fail(VL_ERR_INPUT, "the SEG's frames are %lldx%lld pixels, the CT's slices %lldx%lld",
                       (long long)seg->nx, (long long)seg->ny, (long long)reference->nx, (long long)reference->ny);
    for (int axis = 0; axis < 2; axis++) {
        double cosine = 0;
        for (int r = 0; r < 3; r++)
            cosine += gs.direction[3 * r + axis] * gr.direction[3 * r + axis];
        if (cosine < 0.9999 || std::fabs(gs.spacing[axis] - gr.spacing[axis]) > 1e-3 * gr.spacing[axis])
            return vl_fail(VL_ERR_INPUT, "the SEG's frames differ from the CT's slices in orientation or pixel "
                                         "spacing along %c", "xy"[axis]);
    }
    // Every SEG slice at a whole slice index of the reference, with no in-plane shift.
    const double step[3] = {gr.direction[2] * gr.spacing[2], gr.direction[5] * gr.spacing[2],
                            gr.direction[8] * gr.spacing[2]};
    const double step_length2 = step[0] * step[0] + step[1] * step[1] + step[2] * step[2];
    std::vector<int64_t> target((size_t)seg->nz);
    std::vector<bool> taken((size_t)reference->nz, false);
    for (int64_t k = 0; k < seg->nz; k++) {
        double position[3], offset[3];
        vl_geometry_index_to_lps(&gs, 0, 0, (double)k, position);
        for (int r = 0; r < 3; r++)
            offset[r] = position[r] - gr.origin[r];
        const double index = (offset[0] * step[0] + offset[1] * step[1] + offset[2] * step[2]) / step_length2;
        const int64_t slice = (int64_t)std::llround(index);
        double residual = 0;
        for (int r = 0; r < 3; r++)
            residual += (offset[r] - slice * step[r]) * (offset[r] - slice * step[r]);
        if (std::fabs(index - slice) > 0.1 || std::sqrt(residual) > 0.1 * std::min(gr.spacing[0], gr.spacing[1]) ||
            slice < 0 || slice >= reference->nz)
            return vl_fail(VL_ERR_INPUT, "the SEG's slice at (%.2f, %.2f, %.2f) mm is not one of the CT's slices",
                           position[0], position[1], position[2]);
        if (taken[(size_t)slice])
            return vl_fail(VL_ERR_INPUT, "two of the SEG's slices fall on the CT's slice %lld", (long long)slice);
        taken[(size_t)slice] = true;
        target[(size_t)k] = slice;
    }
    vl_volume placed;
    vl_status status = vl_volume_create(&placed, reference->nx, reference->ny, reference->nz, seg->dtype);
    if (status != VL_OK)
        return status;
    placed.geometry = gr;
    const size_t slice_bytes = (size_t)(seg->nx * seg->ny) * vl_dtype_size(seg->dtype);
    for (int64_t k = 0; k < seg->nz; k++)
        std::memcpy(static_cast<char *>(placed.data) + (size_t)target[(size_t)k] * slice_bytes,
                    static_cast<const char *>(seg->data) + (size_t)k * slice_bytes, slice_bytes);
    vl_volume_free(&map->classes);
    map->classes = placed;
    return VL_OK;
}
