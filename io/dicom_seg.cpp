// Labels -> DICOM Segmentation (binary, one segment per component) with DCMTK dcmseg (docs/formats.md, "DICOM SEG").
// C++17 shim behind the C API of voxlabel/seg.h; nothing here prints (DCMTK's logger is silenced).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dctk.h>
#include <dcmtk/dcmfg/fgderimg.h>
#include <dcmtk/dcmfg/fgfracon.h>
#include <dcmtk/dcmfg/fgpixmsr.h>
#include <dcmtk/dcmfg/fgplanor.h>
#include <dcmtk/dcmfg/fgplanpo.h>
#include <dcmtk/dcmiod/iodreferences.h>
#include <dcmtk/dcmseg/segdoc.h>
#include <dcmtk/dcmseg/segment.h>
#include <dcmtk/ofstd/ofstd.h>

#include "voxlabel/atomic_file.h"
#include "dicom_codecs.h"
#include "voxlabel/error.h"
#include "voxlabel/seg.h"

namespace {

constexpr uint32_t kDefaultMaxSegments = 256;
constexpr uint32_t kSegmentNumberLimit = 65535;

struct SourceImage {
    std::string file;
    std::string series_uid;
    std::unique_ptr<DcmFileFormat> header;  // everything before the pixel data
    int64_t slice = -1;                     // the label slice it matches
    // Where its first pixel lies in that label slice, in label pixels: (0, 0) on the series' own grid; k times
    // the shear's in-plane step on the deskewed grid of a gantry-tilted series (docs/dicom.md).
    double offset[2] = {0, 0};
};

// The labels' z axis is along the normal of their x and y axes (an un-sheared grid, as deskewed labels are).
bool is_unsheared(const vl_geometry &g)
{
    const double *d = g.direction;
    const double n[3] = {d[3] * d[7] - d[6] * d[4], d[6] * d[1] - d[0] * d[7], d[0] * d[4] - d[3] * d[1]};
    return std::fabs(n[0] * d[2] + n[1] * d[5] + n[2] * d[8]) > 1.0 - 1e-9;
}

// A series matched with in-plane offsets is the deskewed grid's own series only when the offsets are k times
// one step: (0, 0) on slice 0 and proportional to the slice index (within 1e-3 pixel).
bool offsets_are_a_shear(const std::vector<SourceImage> &images)
{
    double step[2] = {0, 0};
    bool have_step = false;
    for (const SourceImage &image : images) {
        if (image.slice == 0) {
            if (std::fabs(image.offset[0]) > 1e-3 || std::fabs(image.offset[1]) > 1e-3)
                return false;
            continue;
        }
        const double k = static_cast<double>(image.slice);
        if (!have_step) {
            step[0] = image.offset[0] / k, step[1] = image.offset[1] / k;
            have_step = true;
        } else if (std::fabs(image.offset[0] - k * step[0]) > 1e-3 || std::fabs(image.offset[1] - k * step[1]) > 1e-3) {
            return false;
        }
    }
    return true;
}

std::string decimal(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", std::fabs(value) < 1e-12 ? 0.0 : value);
    return text;
}

uint32_t label_at(const vl_volume *v, int64_t i)
{
    switch (v->dtype) {
    case VL_U8: return static_cast<const uint8_t *>(v->data)[i];
    case VL_U16: return static_cast<const uint16_t *>(v->data)[i];
    case VL_I16: return static_cast<uint32_t>(std::max<int16_t>(0, static_cast<const int16_t *>(v->data)[i]));
    default: return static_cast<const uint32_t *>(v->data)[i];
    }
}

// Solves origin + axes * index = point for the (fractional) voxel index.
bool world_to_index(const vl_geometry &g, const double point[3], double index[3])
{
    double a[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            a[3 * r + c] = g.direction[3 * r + c] * g.spacing[c];
    const double det = a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
                       a[2] * (a[3] * a[7] - a[4] * a[6]);
    if (std::fabs(det) < 1e-12)
        return false;
    const double d[3] = {point[0] - g.origin[0], point[1] - g.origin[1], point[2] - g.origin[2]};
    // Cramer's rule, one column replaced by d at a time.
    for (int c = 0; c < 3; c++) {
        double m[9];
        std::memcpy(m, a, sizeof m);
        for (int r = 0; r < 3; r++)
            m[3 * r + c] = d[r];
        index[c] = (m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                    m[2] * (m[3] * m[7] - m[4] * m[6])) /
                   det;
    }
    return true;
}

// Reads the headers under `directory` and keeps the CT images that sit exactly on one label slice.
vl_status find_source_images(const char *directory, const vl_volume *labels, const vl_seg_options *options,
                             std::vector<SourceImage> &per_slice)
{
    OFList<OFString> files;
    OFStandard::searchDirectoryRecursively(directory, files, "", "", OFTrue);
    if (files.empty())
        return vl_fail(VL_ERR_INPUT, "%s: no files found (the source CT series is needed for a SEG)", directory);
    const vl_geometry &g = labels->geometry;
    const double tolerance_mm = 0.01 * g.spacing[2];
    const bool unsheared = is_unsheared(g);
    std::map<std::string, std::vector<SourceImage>> by_series;
    for (const OFString &file : files) {
        auto header = std::make_unique<DcmFileFormat>();
        if (header->loadFileUntilTag(file.c_str(), EXS_Unknown, EGL_noChange, DCM_MaxReadLength, ERM_autoDetect,
                                     DCM_PixelData)
                .bad())
            continue;
        DcmDataset *data = header->getDataset();
        Uint16 rows = 0, columns = 0;
        Float64 ipp[3], iop[6];
        OFString series_uid, sop_class;
        bool usable = data->findAndGetUint16(DCM_Rows, rows).good() &&
                      data->findAndGetUint16(DCM_Columns, columns).good() &&
                      data->findAndGetOFString(DCM_SeriesInstanceUID, series_uid).good() &&
                      data->findAndGetOFString(DCM_SOPClassUID, sop_class).good() &&
                      sop_class != UID_SegmentationStorage && rows == labels->ny && columns == labels->nx;
        for (int i = 0; usable && i < 3; i++)
            usable = data->findAndGetFloat64(DCM_ImagePositionPatient, ipp[i], i).good();
        for (int i = 0; usable && i < 6; i++)
            usable = data->findAndGetFloat64(DCM_ImageOrientationPatient, iop[i], i).good();
        if (!usable || (options->series_uid && series_uid != options->series_uid))
            continue;
        for (int r = 0; usable && r < 3; r++)
            usable = std::fabs(iop[r] - g.direction[3 * r]) < 1e-3 && std::fabs(iop[3 + r] - g.direction[3 * r + 1]) < 1e-3;
        double index[3];
        if (!usable || !world_to_index(g, ipp, index))
            continue;
        const double k = std::round(index[2]);
        if (k < 0 || k >= static_cast<double>(labels->nz))
            continue;
        double expected[3];
        vl_geometry_index_to_lps(&g, 0, 0, k, expected);
        const double distance = std::sqrt((ipp[0] - expected[0]) * (ipp[0] - expected[0]) +
                                           (ipp[1] - expected[1]) * (ipp[1] - expected[1]) +
                                           (ipp[2] - expected[2]) * (ipp[2] - expected[2]));
        // Off the slice's origin but in its plane, on an un-sheared label grid: a deskewed tilted series' image,
        // kept with its in-plane offset (checked to be a shear below).
        const bool shifted = distance > tolerance_mm && unsheared &&
                             std::fabs(index[2] - k) * g.spacing[2] <= tolerance_mm &&
                             std::fabs(index[0]) < static_cast<double>(labels->nx) &&
                             std::fabs(index[1]) < static_cast<double>(labels->ny);
        if (distance > tolerance_mm && !shifted)
            continue;
        SourceImage image;
        if (shifted)
            image.offset[0] = index[0], image.offset[1] = index[1];
        image.file = file.c_str();
        image.series_uid = series_uid.c_str();
        image.header = std::move(header);
        image.slice = static_cast<int64_t>(k);
        by_series[image.series_uid].push_back(std::move(image));
    }
    // The series that covers every label slice (one image per slice).
    std::vector<std::string> complete;
    for (auto &entry : by_series) {
        std::vector<bool> seen(static_cast<size_t>(labels->nz), false);
        int64_t covered = 0;
        for (const SourceImage &image : entry.second)
            if (!seen[static_cast<size_t>(image.slice)]) {
                seen[static_cast<size_t>(image.slice)] = true;
                covered++;
            }
        if (covered == labels->nz && offsets_are_a_shear(entry.second))
            complete.push_back(entry.first);
    }
    if (complete.empty())
        return vl_fail(VL_ERR_INPUT,
                       "%s: no CT series there has a %lldx%lld image at every one of the %lld label slice positions "
                       "and orientation: the labels were not made from this series (or it was resampled)",
                       directory, static_cast<long long>(labels->nx), static_cast<long long>(labels->ny),
                       static_cast<long long>(labels->nz));
    if (complete.size() > 1)
        return vl_fail(VL_ERR_INPUT, "%s: %zu series match the label grid; choose one by its SeriesInstanceUID",
                       directory, complete.size());
    per_slice.clear();
    per_slice.resize(static_cast<size_t>(labels->nz));
    for (SourceImage &image : by_series[complete[0]])
        if (per_slice[static_cast<size_t>(image.slice)].file.empty())
            per_slice[static_cast<size_t>(image.slice)] = std::move(image);
    return VL_OK;
}

#define VL_SEG_CHECK(expression, what)                                                                        \
    do {                                                                                                       \
        OFCondition condition_ = (expression);                                                                 \
        if (condition_.bad())                                                                                  \
            return vl_fail(VL_ERR_INTERNAL, "%s: %s: %s", path, what, condition_.text());                      \
    } while (0)

vl_status build_segmentation(const char *path, const vl_volume *labels, const std::vector<uint32_t> &values,
                             const std::vector<SourceImage> &sources, const vl_seg_options *options,
                             DcmDataset &out)
{
    const vl_geometry &g = labels->geometry;
    IODGeneralEquipmentModule::EquipmentInfo equipment("voxlabel", "voxlabel", "0", VL_VERSION);
    ContentIdentificationMacro content("1", "COMPONENTS", "connected components labelled by voxlabel", "");
    DcmSegmentation *raw = nullptr;
    VL_SEG_CHECK(DcmSegmentation::createBinarySegmentation(raw, static_cast<Uint16>(labels->ny),
                                                           static_cast<Uint16>(labels->nx), equipment, content),
                 "creating the segmentation");
    std::unique_ptr<DcmSegmentation> seg(raw);
    VL_SEG_CHECK(seg->importFromSourceImage(*sources[0].header->getDataset()), "copying patient and study");
    seg->getSeries().setSeriesDescription(options->series_description ? options->series_description
                                                                     : "voxlabel components");
    seg->getSeries().setSeriesNumber("9001");

    char dimension_uid[100];
    dcmGenerateUniqueIdentifier(dimension_uid);
    IODMultiframeDimensionModule &dimensions = seg->getDimensions();
    VL_SEG_CHECK(dimensions.addDimensionIndex(DCM_ReferencedSegmentNumber, dimension_uid,
                                              DCM_SegmentIdentificationSequence, "ReferencedSegmentNumber"),
                 "dimension index");
    VL_SEG_CHECK(dimensions.addDimensionIndex(DCM_ImagePositionPatient, dimension_uid, DCM_PlanePositionSequence,
                                              "ImagePositionPatient"),
                 "dimension index");

    FGPixelMeasures measures;
    VL_SEG_CHECK(measures.setPixelSpacing((decimal(g.spacing[1]) + "\\" + decimal(g.spacing[0])).c_str()),
                 "pixel spacing");
    VL_SEG_CHECK(measures.setSliceThickness(decimal(g.spacing[2]).c_str()), "slice thickness");
    VL_SEG_CHECK(measures.setSpacingBetweenSlices(decimal(g.spacing[2]).c_str()), "slice spacing");
    VL_SEG_CHECK(seg->addForAllFrames(measures), "pixel measures");
    std::unique_ptr<FGPlaneOrientationPatient> orientation(FGPlaneOrientationPatient::createMinimal(
        decimal(g.direction[0]).c_str(), decimal(g.direction[3]).c_str(), decimal(g.direction[6]).c_str(),
        decimal(g.direction[1]).c_str(), decimal(g.direction[4]).c_str(), decimal(g.direction[7]).c_str()));
    if (!orientation)
        return vl_fail(VL_ERR_INTERNAL, "%s: cannot build the plane orientation", path);
    VL_SEG_CHECK(seg->addForAllFrames(*orientation), "plane orientation");

    const CodeSequenceMacro tissue("85756007", "SCT", "Tissue");
    // Segment descriptions of a class map's source SEG: label value k keeps its segment k's.
    std::unique_ptr<DcmSegmentation> described;
    if (options->segments_from) {
        DcmSegmentation *loaded = nullptr;
        OFCondition read = DcmSegmentation::loadFile(options->segments_from, loaded);
        described.reset(loaded);
        if (read.bad() || !described)
            return vl_fail(VL_ERR_INPUT, "%s: not a SEG to take segment names from: %s", options->segments_from,
                           read.bad() ? read.text() : "empty");
    }
    std::map<uint32_t, Uint16> segment_of;
    for (uint32_t value : values) {
        DcmSegment *segment = nullptr;
        DcmSegment *source = described && value <= described->getNumberOfSegments() ? described->getSegment(value) : nullptr;
        OFString label;
        if (!source || source->getSegmentLabel(label).bad() || label.empty())
            label = ("component " + std::to_string(value)).c_str();
        VL_SEG_CHECK(DcmSegment::create(segment, label, source ? source->getSegmentedPropertyCategoryCode() : tissue,
                                        source ? source->getSegmentedPropertyTypeCode() : tissue,
                                        DcmSegTypes::SAT_AUTOMATIC, "voxlabel"),
                     "creating a segment");
        Uint16 L = 0, a = 0, b = 0;
        if (source && source->getRecommendedDisplayCIELabValue(L, a, b).good())
            segment->setRecommendedDisplayCIELabValue(L, a, b);
        Uint16 number = 0;
        OFCondition added = seg->addSegment(segment, number);
        if (added.bad()) {
            delete segment;
            return vl_fail(VL_ERR_INTERNAL, "%s: adding segment %u: %s", path, value, added.text());
        }
        segment_of[value] = number;
    }

    // Frames slice by slice: bucket the slice's voxels by label, then one frame per label present.
    const CodeSequenceMacro derivation_code("113076", "DCM", "Segmentation");
    const CodeSequenceMacro purpose("121322", "DCM", "Source image for image processing operation");
    const int64_t plane = labels->nx * labels->ny;
    std::vector<Uint8> frame(static_cast<size_t>(plane));
    std::map<uint32_t, std::vector<int64_t>> pixels_of;
    for (int64_t z = 0; z < labels->nz; z++) {
        pixels_of.clear();
        // The source image's pixel (i, j) lies at label pixel (i + offset) of slice z: nearest neighbour.
        const double *offset = sources[static_cast<size_t>(z)].offset;
        const bool shifted = offset[0] != 0 || offset[1] != 0;
        for (int64_t p = 0; p < plane; p++) {
            int64_t at = z * plane + p;
            if (shifted) {
                const double li = std::floor(static_cast<double>(p % labels->nx) + offset[0] + 0.5);
                const double lj = std::floor(static_cast<double>(p / labels->nx) + offset[1] + 0.5);
                if (li < 0 || lj < 0 || li >= static_cast<double>(labels->nx) || lj >= static_cast<double>(labels->ny))
                    continue;
                at = z * plane + static_cast<int64_t>(lj) * labels->nx + static_cast<int64_t>(li);
            }
            uint32_t value = label_at(labels, at);
            if (value)
                pixels_of[value].push_back(p);
        }
        double position[3];
        vl_geometry_index_to_lps(&g, offset[0], offset[1], static_cast<double>(z), position);
        std::unique_ptr<FGPlanePosPatient> plane_position(FGPlanePosPatient::createMinimal(
            decimal(position[0]).c_str(), decimal(position[1]).c_str(), decimal(position[2]).c_str()));
        if (!plane_position)
            return vl_fail(VL_ERR_INTERNAL, "%s: cannot build a plane position", path);
        for (const auto &entry : pixels_of) {
            std::fill(frame.begin(), frame.end(), 0);
            for (int64_t p : entry.second)
                frame[static_cast<size_t>(p)] = 1;
            FGFrameContent content_group;
            VL_SEG_CHECK(content_group.setDimensionIndexValues(segment_of[entry.first], 0), "frame content");
            VL_SEG_CHECK(content_group.setDimensionIndexValues(static_cast<Uint32>(z + 1), 1), "frame content");
            FGDerivationImage derivation;
            DerivationImageItem *item = nullptr;
            VL_SEG_CHECK(derivation.addDerivationImageItem(derivation_code, "", item), "derivation image");
            OFVector<DcmDataset *> source_datasets;
            source_datasets.push_back(sources[static_cast<size_t>(z)].header->getDataset());
            OFVector<SourceImageItem *> source_items;
            /* This fails on the source CT's own attributes (a UID with invalid characters, a violated VR): bad
             * input, named by the source file. */
            OFCondition source_condition = item->addSourceImageItems(source_datasets, purpose, source_items);
            if (source_condition.bad())
                return vl_fail(VL_ERR_INPUT, "%s: cannot reference it as a source image: %s",
                               sources[static_cast<size_t>(z)].file.c_str(), source_condition.text());
            OFVector<FGBase *> per_frame;
            per_frame.push_back(plane_position.get());
            per_frame.push_back(&content_group);
            per_frame.push_back(&derivation);
            VL_SEG_CHECK(seg->addFrame(frame.data(), segment_of[entry.first], per_frame), "adding a frame");
        }
        vl_progress_report(&options->progress, "writing SEG", static_cast<double>(z + 1) / labels->nz);
    }

    IODReferences references;
    OFVector<OFString> files;
    for (const SourceImage &image : sources)
        files.push_back(image.file.c_str());
    if (references.addFromFiles(files) != files.size())
        return vl_fail(VL_ERR_INPUT, "%s: cannot reference every source image", path);
    OFString study_uid;
    sources[0].header->getDataset()->findAndGetOFString(DCM_StudyInstanceUID, study_uid);
    seg->getCommonInstanceReference().addReferences(references, study_uid);
    VL_SEG_CHECK(seg->writeDataset(out), "encoding the SEG");
    VL_SEG_CHECK(out.putAndInsertString(DCM_SegmentsOverlap, "NO"), "SegmentsOverlap");
    return VL_OK;
}

}  // namespace

extern "C" void vl_seg_options_default(vl_seg_options *options)
{
    std::memset(options, 0, sizeof *options);
    options->max_segments = kDefaultMaxSegments;
}

extern "C" vl_status vl_write_dicom_seg(const char *path, const vl_volume *labels, const char *source_directory,
                                        const vl_seg_options *options)
{
    vl_seg_options defaults;
    if (!options) {
        vl_seg_options_default(&defaults);
        options = &defaults;
    }
    if (!path || !labels || !labels->data || !source_directory)
        return vl_fail(VL_ERR_ARGUMENT, "vl_write_dicom_seg: output path, labels and source directory are required");
    if (labels->dtype == VL_F32)
        return vl_fail(VL_ERR_ARGUMENT, "%s: labels must be integers (u8, u16, u32 or non-negative i16), not f32", path);
    if (labels->dtype == VL_I16)
        for (int64_t i = 0, n = vl_volume_voxels(labels); i < n; i++)
            if (static_cast<const int16_t *>(labels->data)[i] < 0)
                return vl_fail(VL_ERR_INPUT, "%s: negative label values cannot be segments", path);
    if (labels->nx > 65535 || labels->ny > 65535)
        return vl_fail(VL_ERR_ARGUMENT, "%s: a SEG frame holds at most 65535x65535 pixels", path);
    const uint32_t limit = options->max_segments ? std::min(options->max_segments, kSegmentNumberLimit) : kDefaultMaxSegments;
    vl_status status = vl_atomic_file_check(path, options->force);
    if (status != VL_OK)
        return status;
    vl_dicom_initialise();

    std::vector<bool> present;
    uint32_t max_label = 0;
    const int64_t count = vl_volume_voxels(labels);
    for (int64_t i = 0; i < count; i++)
        max_label = std::max(max_label, label_at(labels, i));
    std::vector<uint32_t> values;
    try {
        /* Segments are the labels present, in increasing order. A table indexed by value serves labels up to
         * 2^24 (2 MiB of bits); beyond that (a sparse or huge label such as 4294967295) the labels present are
         * sorted instead, so the work follows the voxels and never the largest value. */
        if (max_label < (1u << 24)) {
            present.assign(static_cast<size_t>(max_label) + 1, false);
            for (int64_t i = 0; i < count; i++)
                present[label_at(labels, i)] = true;
            for (uint64_t v = 1; v <= max_label; v++)
                if (present[v])
                    values.push_back(static_cast<uint32_t>(v));
        } else {
            for (int64_t i = 0; i < count; i++) {
                const uint32_t v = label_at(labels, i);
                if (v && (values.empty() || values.back() != v))
                    values.push_back(v);
            }
            std::sort(values.begin(), values.end());
            values.erase(std::unique(values.begin(), values.end()), values.end());
        }
    } catch (const std::bad_alloc &) {
        return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate the label table", path);
    }
    if (values.empty())
        return vl_fail(VL_ERR_INPUT, "%s: the labels hold no component, so there is nothing to segment", path);
    if (values.size() > limit)
        return vl_fail(VL_ERR_ARGUMENT,
                       "%s: %zu components exceed the SEG limit of %u segments (each component is one segment with a "
                       "frame per slice it touches): keep the biggest with 'voxlabel label --largest %u', or raise the "
                       "limit (at most %u)",
                       path, values.size(), limit, limit, kSegmentNumberLimit);

    try {
        std::vector<SourceImage> sources;
        status = find_source_images(source_directory, labels, options, sources);
        if (status != VL_OK)
            return status;
        DcmFileFormat file;
        status = build_segmentation(path, labels, values, sources, options, *file.getDataset());
        if (status != VL_OK)
            return status;
        vl_atomic_file output;
        status = vl_atomic_file_begin(&output, path, options->force);
        if (status != VL_OK)
            return status;
        OFCondition saved = file.saveFile(output.temp_path, EXS_LittleEndianExplicit);
        if (saved.bad()) {
            vl_atomic_file_discard(&output);
            return vl_fail(VL_ERR_OUTPUT, "%s: cannot write the SEG: %s", path, saved.text());
        }
        return vl_atomic_file_commit(&output);
    } catch (const std::bad_alloc &) {
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory while building the SEG", path);
    }
}
