/* Discovery: find the DICOM images under a path, read their headers (never their pixels) and group
 * them into series by SeriesInstanceUID + Rows + Columns + SamplesPerPixel + orientation. */
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <fstream>
#include <system_error>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcmetinf.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmdata/dcxfer.h>

#include "dicom_codecs.h"
#include "dicom_series.h"
#include "dicom_workers.h"
#include "voxlabel/error.h"
extern "C" {
#include "core/parallel.h"
}

namespace {

const char *const kDirectoryStorageUid = "1.2.840.10008.1.3.10";
const double kOrientationTolerance = 1e-3;

/* "DICM" at offset 128, or a preamble-less stream that starts with group 0002 or 0008 (as GDCM accepts). */
bool looks_like_dicom(const std::string &path)
{
    unsigned char head[132];
    std::ifstream in(path, std::ios::binary);
    in.read((char *)head, sizeof head);
    std::streamsize got = in.gcount();
    if (got >= 132 && memcmp(head + 128, "DICM", 4) == 0)
        return true;
    if (got < 8)
        return false;
    unsigned group = head[0] | (head[1] << 8);
    return group == 0x0002 || group == 0x0008;
}

std::string get_string(DcmItem *item, const DcmTagKey &tag)
{
    OFString value;
    if (item->findAndGetOFStringArray(tag, value).bad())
        return "";
    /* Control characters (corrupt or hostile files) never reach a terminal. */
    std::string text(value.c_str());
    for (char &c : text)
        if ((unsigned char)c < 0x20 || c == 0x7f)
            c = '?';
    return text;
}

bool get_long(DcmItem *item, const DcmTagKey &tag, long &value)
{
    Sint32 s32;
    if (item->findAndGetSint32(tag, s32).good()) {
        value = s32;
        return true;
    }
    OFString text;
    if (item->findAndGetOFString(tag, text).good() && !text.empty()) {
        char *end = nullptr;
        long parsed = strtol(text.c_str(), &end, 10);
        if (end != text.c_str()) {
            value = parsed;
            return true;
        }
    }
    return false;
}

bool get_unsigned(DcmItem *item, const DcmTagKey &tag, unsigned &value)
{
    Uint16 u16;
    if (item->findAndGetUint16(tag, u16).good()) {
        value = u16;
        return true;
    }
    return false;
}

/* US-or-SS attributes (PixelPaddingValue): the VR decides how the bits read. */
bool get_us_or_ss(DcmItem *item, const DcmTagKey &tag, long &value)
{
    DcmElement *element = nullptr;
    if (item->findAndGetElement(tag, element).bad() || !element || element->getLength() < 2)
        return false;
    if (element->ident() == EVR_SS) {
        Sint16 s16;
        if (element->getSint16(s16).good()) {
            value = s16;
            return true;
        }
    }
    Uint16 u16;
    if (element->getUint16(u16).good()) {
        value = u16;
        return true;
    }
    Sint16 s16;
    if (element->getSint16(s16).good()) {
        value = s16;
        return true;
    }
    return false;
}

bool get_doubles(DcmItem *item, const DcmTagKey &tag, double *values, int count)
{
    for (int i = 0; i < count; i++) {
        Float64 v;
        if (item->findAndGetFloat64(tag, v, (unsigned long)i).bad() || !std::isfinite(v))
            return false;
        values[i] = v;
    }
    return true;
}

/* The first item of a functional group sequence, from the per-frame item first, then the shared one. */
DcmItem *functional_group(DcmItem *per_frame, DcmItem *shared, const DcmTagKey &sequence)
{
    DcmItem *item = nullptr;
    if (per_frame && per_frame->findAndGetSequenceItem(sequence, item, 0).good() && item)
        return item;
    if (shared && shared->findAndGetSequenceItem(sequence, item, 0).good() && item)
        return item;
    return nullptr;
}

/* Reads the per-frame geometry and rescale of one image from `item` (the dataset or a functional group). */
void read_plane(DcmItem *item, vl_dicom_frame &frame)
{
    if (!item)
        return;
    double v[6];
    if (get_doubles(item, DCM_ImagePositionPatient, v, 3)) {
        std::copy(v, v + 3, frame.position);
        frame.has_position = true;
    }
    if (get_doubles(item, DCM_ImageOrientationPatient, v, 6)) {
        std::copy(v, v + 6, frame.orientation);
        frame.has_orientation = true;
    }
    if (get_doubles(item, DCM_PixelSpacing, v, 2) && v[0] > 0 && v[1] > 0) {
        frame.pixel_spacing[0] = v[0];
        frame.pixel_spacing[1] = v[1];
        frame.has_pixel_spacing = true;
    }
    if (get_doubles(item, DCM_SliceThickness, v, 1))
        frame.slice_thickness = v[0];
    if (get_doubles(item, DCM_RescaleSlope, v, 1) && v[0] != 0)
        frame.slope = v[0];
    if (get_doubles(item, DCM_RescaleIntercept, v, 1))
        frame.intercept = v[0];
}

bool is_encapsulated(const std::string &uid)
{
    DcmXfer xfer(uid.c_str());
    return xfer.getXfer() == EXS_Unknown || xfer.isEncapsulated() || xfer.getXfer() == EXS_DeflatedLittleEndianExplicit;
}

bool contains_word(const std::string &text, const char *word)
{
    size_t start = 0;
    while (start <= text.size()) {
        size_t end = text.find('\\', start);
        if (end == std::string::npos)
            end = text.size();
        if (text.compare(start, end - start, word) == 0)
            return true;
        start = end + 1;
    }
    return false;
}

/* Adds the frames of one file; returns false (with the reason counted) when it is not an image. */
void read_file(const std::string &path, vl_dicom_files &files)
{
    files.files_seen++;
    if (!looks_like_dicom(path)) {
        files.files_not_dicom++;
        return;
    }
    DcmFileFormat format;
    OFCondition condition = format.loadFileUntilTag(path.c_str(), EXS_Unknown, EGL_noChange, 4096, ERM_autoDetect,
                                                    DCM_PixelData);
    if (condition.bad()) {
        files.files_not_dicom++;
        files.notes.push_back(path + ": skipped, not readable as DICOM (" + condition.text() + ")");
        return;
    }
    DcmDataset *ds = format.getDataset();
    DcmMetaInfo *meta = format.getMetaInfo();
    std::string media_class = meta ? get_string(meta, DCM_MediaStorageSOPClassUID) : "";
    std::string sop_class = get_string(ds, DCM_SOPClassUID);
    if (media_class == kDirectoryStorageUid || sop_class == kDirectoryStorageUid ||
        ds->tagExists(DCM_DirectoryRecordSequence)) {
        files.files_directory++;
        return;
    }
    vl_dicom_frame base;
    if (!get_unsigned(ds, DCM_Rows, base.rows) || !get_unsigned(ds, DCM_Columns, base.columns) || base.rows == 0 ||
        base.columns == 0) {
        files.files_non_image++;
        return;
    }
    base.path = path;
    base.sop_class_uid = sop_class.empty() ? media_class : sop_class;
    base.patient_id = get_string(ds, DCM_PatientID);
    base.study_uid = get_string(ds, DCM_StudyInstanceUID);
    base.series_uid = get_string(ds, DCM_SeriesInstanceUID);
    base.description = get_string(ds, DCM_SeriesDescription);
    base.modality = get_string(ds, DCM_Modality);
    base.sop_instance_uid = get_string(ds, DCM_SOPInstanceUID);
    base.image_type = get_string(ds, DCM_ImageType);
    base.photometric = get_string(ds, DCM_PhotometricInterpretation);
    std::string transfer = meta ? get_string(meta, DCM_TransferSyntaxUID) : "";
    if (transfer.empty())
        transfer = DcmXfer(ds->getOriginalXfer()).getXferID();
    base.transfer_syntax_uid = transfer;
    get_long(ds, DCM_SeriesNumber, base.series_number);
    get_long(ds, DCM_InstanceNumber, base.instance_number);
    get_unsigned(ds, DCM_SamplesPerPixel, base.samples_per_pixel);
    get_unsigned(ds, DCM_BitsAllocated, base.bits_allocated);
    if (!get_unsigned(ds, DCM_BitsStored, base.bits_stored))
        base.bits_stored = base.bits_allocated;
    if (!get_unsigned(ds, DCM_HighBit, base.high_bit))
        base.high_bit = base.bits_stored - 1;
    get_unsigned(ds, DCM_PixelRepresentation, base.pixel_representation);
    base.gantry_tilt = NAN;
    double tilt;
    if (get_doubles(ds, DCM_GantryDetectorTilt, &tilt, 1))
        base.gantry_tilt = tilt;
    double window;
    if (get_doubles(ds, DCM_WindowCenter, &window, 1))
        base.window_center = window;
    if (get_doubles(ds, DCM_WindowWidth, &window, 1))
        base.window_width = window;
    base.has_padding = get_us_or_ss(ds, DCM_PixelPaddingValue, base.padding);
    base.has_padding_limit = get_us_or_ss(ds, DCM_PixelPaddingRangeLimit, base.padding_limit);
    read_plane(ds, base);

    long frame_count = 1;
    if (get_long(ds, DCM_NumberOfFrames, frame_count) && frame_count < 1)
        frame_count = 1;
    base.frames_in_file = frame_count;

    if (base.samples_per_pixel < 1 || base.samples_per_pixel > 4)
        base.broken = "SamplesPerPixel " + std::to_string(base.samples_per_pixel) + " is not 1 or 3";
    else if ((base.bits_allocated != 8 && base.bits_allocated != 16) || base.bits_stored < 1 ||
             base.bits_stored > base.bits_allocated || base.high_bit >= base.bits_allocated ||
             base.high_bit + 1 < base.bits_stored)
        base.broken = "unsupported bit layout (BitsAllocated " + std::to_string(base.bits_allocated) + ", BitsStored " +
                      std::to_string(base.bits_stored) + ", HighBit " + std::to_string(base.high_bit) + ")";
    else if (!is_encapsulated(transfer)) {
        /* A native pixel matrix must fit in the file; this catches absurd Rows/Columns and truncation early. */
        struct stat info;
        double needed = (double)base.rows * base.columns * base.samples_per_pixel * (base.bits_allocated / 8) *
                        (double)frame_count;
        if (stat(path.c_str(), &info) == 0 && needed > (double)info.st_size)
            base.broken = "pixel data needs " + std::to_string((long long)needed) + " bytes for " +
                          std::to_string(frame_count) + " frame(s) of " + std::to_string(base.columns) + "x" +
                          std::to_string(base.rows) + " but the file has only " + std::to_string((long long)info.st_size);
    }

    DcmItem *shared = nullptr;
    ds->findAndGetSequenceItem(DCM_SharedFunctionalGroupsSequence, shared, 0);
    DcmSequenceOfItems *per_frame_sequence = nullptr;
    ds->findAndGetSequence(DCM_PerFrameFunctionalGroupsSequence, per_frame_sequence);
    bool enhanced = shared || per_frame_sequence;
    if (frame_count > 1000000) {
        base.broken = "NumberOfFrames " + std::to_string(frame_count) + " is absurd";
        frame_count = 1;
    }
    for (long f = 0; f < frame_count; f++) {
        vl_dicom_frame frame = base;
        frame.frame = f;
        if (enhanced) {
            DcmItem *per_frame = per_frame_sequence && (unsigned long)f < per_frame_sequence->card()
                                     ? per_frame_sequence->getItem((unsigned long)f)
                                     : nullptr;
            read_plane(functional_group(per_frame, shared, DCM_PlanePositionSequence), frame);
            read_plane(functional_group(per_frame, shared, DCM_PlaneOrientationSequence), frame);
            read_plane(functional_group(per_frame, shared, DCM_PixelMeasuresSequence), frame);
            read_plane(functional_group(per_frame, shared, DCM_PixelValueTransformationSequence), frame);
        }
        files.frames.push_back(std::move(frame));
    }
}

bool same_orientation(const vl_dicom_frame &a, const vl_dicom_frame &b)
{
    if (a.has_orientation != b.has_orientation)
        return false;
    for (int i = 0; i < 6; i++)
        if (std::fabs(a.orientation[i] - b.orientation[i]) > kOrientationTolerance)
            return false;
    return true;
}

bool same_group(const vl_dicom_frame &a, const vl_dicom_frame &b)
{
    return a.series_uid == b.series_uid && a.rows == b.rows && a.columns == b.columns &&
           a.samples_per_pixel == b.samples_per_pixel && same_orientation(a, b);
}

void classify(vl_dicom_files &files, vl_dicom_group &group)
{
    const vl_dicom_frame &first = files.frames[group.frames[0]];
    const std::string &pi = first.photometric;
    group.is_colour = first.samples_per_pixel != 1 || pi == "RGB" || pi.rfind("YBR", 0) == 0 || pi == "PALETTE COLOR";
    group.is_localizer = contains_word(first.image_type, "LOCALIZER");
    group.is_derived = contains_word(first.image_type, "SECONDARY") ||
                       first.sop_class_uid.rfind("1.2.840.10008.5.1.4.1.1.7", 0) == 0;
    group.is_ct_like = first.modality == "CT" && !group.is_colour && !group.is_localizer && !group.is_derived;
    std::vector<std::string> paths;
    for (size_t index : group.frames)
        paths.push_back(files.frames[index].path);
    std::sort(paths.begin(), paths.end());
    group.file_count = (size_t)(std::unique(paths.begin(), paths.end()) - paths.begin());
}

std::string describe_group(const vl_dicom_files &files, const vl_dicom_group &group)
{
    const vl_dicom_frame &first = files.frames[group.frames[0]];
    char text[512];
    snprintf(text, sizeof text, "series %ld \"%s\" (%s, %ux%u, %zu image%s%s%s%s) UID %s", first.series_number,
             first.description.c_str(), first.modality.empty() ? "no modality" : first.modality.c_str(), first.columns,
             first.rows, group.frames.size(), group.frames.size() == 1 ? "" : "s",
             group.is_localizer ? ", localizer" : "", group.is_derived ? ", derived" : "",
             group.is_colour ? ", colour" : "", first.series_uid.c_str());
    return text;
}

} // namespace

vl_status vl_dicom_discover(const char *path, const vl_progress *progress, vl_dicom_files &files)
{
    vl_dicom_initialise();
    namespace fs = std::filesystem;
    std::error_code error;
    fs::file_status status = fs::status(path, error);
    if (error || !fs::exists(status))
        return vl_fail(VL_ERR_INPUT, "%s: does not exist", path);
    std::vector<std::string> paths;
    if (fs::is_directory(status)) {
        /* Symbolic links to directories are followed (a study often links its series in); each directory and file
         * is taken once by device and inode, so a link back up the tree is not a loop and a linked file not a
         * copy. */
        fs::recursive_directory_iterator it(
            path, fs::directory_options::skip_permission_denied | fs::directory_options::follow_directory_symlink,
            error), end;
        if (error)
            return vl_fail(VL_ERR_INPUT, "%s: cannot list the directory: %s", path, error.message().c_str());
        std::set<std::pair<dev_t, ino_t>> seen_directories, seen_files;
        struct stat root;
        if (stat(path, &root) == 0)
            seen_directories.insert({root.st_dev, root.st_ino});
        for (; it != end; it.increment(error)) {
            if (error)
                break;
            std::error_code entry_error;
            struct stat target;
            const bool known = stat(it->path().c_str(), &target) == 0;
            if (it->is_directory(entry_error)) {
                if (known && !seen_directories.insert({target.st_dev, target.st_ino}).second)
                    it.disable_recursion_pending();
            } else if (it->is_regular_file(entry_error)) {
                if (!known || seen_files.insert({target.st_dev, target.st_ino}).second)
                    paths.push_back(it->path().string());
            }
        }
        std::sort(paths.begin(), paths.end());
    } else if (fs::is_regular_file(status)) {
        paths.push_back(path);
    } else {
        return vl_fail(VL_ERR_INPUT, "%s: is neither a file nor a directory", path);
    }
    return vl_dicom_discover_list(paths, path, progress, files);
}

vl_status vl_dicom_discover_list(const std::vector<std::string> &paths, const char *path, const vl_progress *progress,
                                 vl_dicom_files &files)
{
    vl_dicom_initialise();
    /* Headers are read on every core, each file into its own slot, and joined in path order: the frames, notes
     * and so the series come out as one thread would find them. */
    std::vector<vl_dicom_files> found(paths.size());
    std::atomic<size_t> next{0};
    vl_shared_progress shared;
    shared.progress = progress;
    shared.stage = "scanning";
    shared.total = (int64_t)paths.size();
    auto worker = [&] {
        for (size_t i; (i = next.fetch_add(1)) < paths.size();) {
            read_file(paths[i], found[i]);
            shared.advance(1);
        }
    };
    vl_run_workers(std::min<size_t>((size_t)vl_cpu_thread_count(0), std::max<size_t>(1, paths.size() / 16)), worker);
    for (vl_dicom_files &one : found) {
        files.files_seen += one.files_seen;
        files.files_not_dicom += one.files_not_dicom;
        files.files_directory += one.files_directory;
        files.files_non_image += one.files_non_image;
        for (vl_dicom_frame &frame : one.frames)
            files.frames.push_back(std::move(frame));
        for (std::string &note : one.notes)
            files.notes.push_back(std::move(note));
    }
    for (size_t index = 0; index < files.frames.size(); index++) {
        const vl_dicom_frame &frame = files.frames[index];
        auto match = std::find_if(files.groups.begin(), files.groups.end(), [&](const vl_dicom_group &group) {
            return same_group(files.frames[group.frames[0]], frame);
        });
        if (match == files.groups.end()) {
            files.groups.emplace_back();
            match = files.groups.end() - 1;
        }
        match->frames.push_back(index);
    }
    for (vl_dicom_group &group : files.groups)
        classify(files, group);
    if (files.frames.empty())
        return vl_fail(VL_ERR_INPUT,
                       "%s: no DICOM images found (%lld file(s) looked at: %lld not DICOM, %lld DICOMDIR/DIRFILE, "
                       "%lld without an image)%s%s",
                       path, (long long)files.files_seen, (long long)files.files_not_dicom,
                       (long long)files.files_directory, (long long)files.files_non_image,
                       files.notes.empty() ? "" : "; ", files.notes.empty() ? "" : files.notes[0].c_str());
    return VL_OK;
}

namespace {

bool all_digits(const char *text)
{
    if (!*text)
        return false;
    for (const char *p = text; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* Among `candidates`, the CT-like group with the most images, else the largest monochrome one. */
vl_status pick_largest(const vl_dicom_files &files, const std::vector<size_t> &candidates, const char *what,
                       size_t &chosen, std::vector<std::string> &notes)
{
    for (int pass = 0; pass < 2; pass++) {
        std::vector<size_t> pool;
        for (size_t g : candidates) {
            const vl_dicom_group &group = files.groups[g];
            if (pass == 0 ? group.is_ct_like : (!group.is_colour && !group.is_localizer))
                pool.push_back(g);
        }
        if (pool.empty())
            continue;
        std::stable_sort(pool.begin(), pool.end(), [&](size_t a, size_t b) {
            return files.groups[a].frames.size() > files.groups[b].frames.size();
        });
        if (pool.size() > 1 && files.groups[pool[0]].frames.size() == files.groups[pool[1]].frames.size()) {
            std::string list;
            for (size_t g : pool)
                if (files.groups[g].frames.size() == files.groups[pool[0]].frames.size())
                    list += "; " + describe_group(files, files.groups[g]);
            return vl_fail(VL_ERR_INPUT, "%s: ambiguous, %zu series of %zu images each%s (choose one with --series)",
                           what, pool.size(), files.groups[pool[0]].frames.size(), list.c_str());
        }
        chosen = pool[0];
        if (pass == 1) {
            const vl_dicom_group &group = files.groups[chosen];
            notes.push_back("no CT image series here: loading " + describe_group(files, group) +
                            (files.frames[group.frames[0]].modality == "CT" ? ""
                                                                            : "; its values are rescaled stored values, "
                                                                              "not Hounsfield units"));
        }
        for (size_t g = 0; g < files.groups.size(); g++)
            if (g != chosen)
                notes.push_back("also here, not loaded: " + describe_group(files, files.groups[g]));
        return VL_OK;
    }
    for (size_t g : candidates)
        if (files.groups[g].is_colour)
            return vl_fail(VL_ERR_INPUT,
                           "%s: %s is a colour image series, which cannot be labelled as CT (use the 2D colour stage)",
                           what, describe_group(files, files.groups[g]).c_str());
    return vl_fail(VL_ERR_INPUT, "%s: only localizer images here, no CT series to load (%s)", what,
                   describe_group(files, files.groups[candidates[0]]).c_str());
}

} // namespace

vl_status vl_dicom_choose_group(const vl_dicom_files &files, const char *series, size_t &chosen,
                                std::vector<std::string> &notes)
{
    std::vector<size_t> candidates;
    if (series && *series) {
        for (size_t g = 0; g < files.groups.size(); g++) {
            const vl_dicom_frame &first = files.frames[files.groups[g].frames[0]];
            if (first.series_uid == series || (all_digits(series) && first.series_number == atol(series)))
                candidates.push_back(g);
        }
        if (candidates.empty()) {
            std::string list;
            for (const vl_dicom_group &group : files.groups)
                list += "; " + describe_group(files, group);
            return vl_fail(VL_ERR_INPUT, "--series %s: no such series here%s", series, list.c_str());
        }
        std::string what = std::string("--series ") + series;
        return pick_largest(files, candidates, what.c_str(), chosen, notes);
    }
    for (size_t g = 0; g < files.groups.size(); g++)
        candidates.push_back(g);
    return pick_largest(files, candidates, "series choice", chosen, notes);
}
