/* Pixel decoding: DCMTK decompresses (JPEG, JPEG-LS, RLE, Deflate are registered), the rules of
 * docs/dicom.md §4 turn stored values into HU. JPEG 2000 has no decoder in DCMTK's free build. */
#include <cmath>
#include <cstring>
#include <memory>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmdata/dcpixel.h>
#include <dcmtk/dcmdata/dcpixseq.h>
#include <dcmtk/dcmdata/dcpxitem.h>
#include <dcmtk/dcmdata/dcxfer.h>

#include "dicom_codecs.h"
#include "dicom_pixels.h"
#include "voxlabel/error.h"

namespace {

bool is_jpeg2000(const std::string &uid)
{
    static const char *const uids[] = {"1.2.840.10008.1.2.4.90",  "1.2.840.10008.1.2.4.91",  "1.2.840.10008.1.2.4.92",
                                       "1.2.840.10008.1.2.4.93",  "1.2.840.10008.1.2.4.201", "1.2.840.10008.1.2.4.202",
                                       "1.2.840.10008.1.2.4.203"};
    for (const char *candidate : uids)
        if (uid == candidate)
            return true;
    return false;
}

/* Stored values of one frame -> HU in `destination`, for 8- or 16-bit samples. */
template <typename Sample, typename Out>
void convert_frame(const Sample *samples, size_t count, const vl_dicom_frame &f, const vl_dicom_pixel_rules &rules,
                   Out *destination, int64_t &padded, bool &overflow)
{
    const unsigned shift = f.high_bit + 1 - f.bits_stored;
    const uint32_t mask = f.bits_stored >= 32 ? 0xFFFFFFFFu : ((1u << f.bits_stored) - 1u);
    const int32_t sign_bit = (int32_t)1 << (f.bits_stored - 1);
    const bool is_signed = f.pixel_representation == 1;
    /* Padding is compared in stored units; bring the tag value into the same signedness first. */
    int32_t pad_lo = 0, pad_hi = -1;
    if (f.has_padding && !rules.keep_padding) {
        auto normalise = [&](long value) {
            int32_t v = (int32_t)((uint32_t)value & mask);
            return is_signed && (v & sign_bit) ? v - (int32_t)(mask + 1u) : v;
        };
        pad_lo = pad_hi = normalise(f.padding);
        if (f.has_padding_limit) {
            int32_t limit = normalise(f.padding_limit);
            pad_lo = std::min(pad_lo, limit);
            pad_hi = std::max(pad_hi, limit);
        }
    }
    const bool integral = f.slope == 1.0 && f.intercept == std::floor(f.intercept);
    const int32_t offset = integral ? (int32_t)f.intercept : 0;
    for (size_t i = 0; i < count; i++) {
        int32_t v = (int32_t)(((uint32_t)samples[i] >> shift) & mask);
        if (is_signed && (v & sign_bit))
            v -= (int32_t)(mask + 1u);
        if (v >= pad_lo && v <= pad_hi) {
            destination[i] = (Out)rules.padding_fill_hu;
            padded++;
            continue;
        }
        if constexpr (std::is_same<Out, int16_t>::value) {
            int32_t hu = v + offset;
            if (hu < -32768 || hu > 32767) {
                overflow = true;
                return;
            }
            destination[i] = (int16_t)hu;
        } else {
            destination[i] = (float)((double)v * f.slope + f.intercept);
        }
    }
}

uint32_t little_u32(const Uint8 *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

} // namespace

bool vl_dicom_rle_is_sane(DcmDataset *dataset, std::string &reason)
{
    if (dataset->getOriginalXfer() != EXS_RLELossless)
        return true;
    DcmElement *element = nullptr;
    if (dataset->findAndGetElement(DCM_PixelData, element).bad() || !element)
        return true; /* missing pixel data is reported later */
    DcmPixelSequence *sequence = nullptr;
    E_TransferSyntax xfer = EXS_Unknown;
    const DcmRepresentationParameter *parameter = nullptr;
    static_cast<DcmPixelData *>(element)->getOriginalRepresentationKey(xfer, parameter);
    if (static_cast<DcmPixelData *>(element)->getEncapsulatedRepresentation(xfer, parameter, sequence).bad() ||
        !sequence) {
        reason = "RLE pixel data is not encapsulated";
        return false;
    }
    /* Item 0 is the offset table; every other item is one fragment with a 64-byte RLE header. */
    for (unsigned long i = 1; i < sequence->card(); i++) {
        DcmPixelItem *item = nullptr;
        Uint8 *bytes = nullptr;
        if (sequence->getItem(item, i).bad() || !item || item->getUint8Array(bytes).bad()) {
            reason = "RLE fragment " + std::to_string(i) + " cannot be read";
            return false;
        }
        uint32_t length = item->getLength();
        if (length < 64 || !bytes) {
            reason = "RLE fragment " + std::to_string(i) + " is shorter than its 64-byte header";
            return false;
        }
        uint32_t segments = little_u32(bytes);
        if (segments < 1 || segments > 15) {
            reason = "RLE fragment " + std::to_string(i) + " declares " + std::to_string(segments) + " segments";
            return false;
        }
        uint32_t previous = 63;
        for (uint32_t s = 0; s < segments; s++) {
            uint32_t offset = little_u32(bytes + 4 + 4 * s);
            if (offset <= previous || offset >= length) {
                reason = "RLE fragment " + std::to_string(i) + " has segment offset " + std::to_string(offset) +
                         " outside its " + std::to_string(length) + " bytes";
                return false;
            }
            previous = offset;
        }
    }
    return true;
}

vl_status vl_dicom_decode_file(const std::string &path, const std::vector<vl_dicom_slice_target> &targets,
                               const vl_dicom_pixel_rules &rules)
{
    const vl_dicom_frame &header = *targets[0].frame;
    if (!header.broken.empty())
        return vl_fail(VL_ERR_INPUT, "%s: %s", path.c_str(), header.broken.c_str());
    DcmFileFormat format;
    /* Values up to the size of the native pixel data are read as the file is parsed, the pixel data with them:
     * DCMTK's default defers values over 4 KiB, and opens the file a second time to fetch the pixels. A
     * larger value (a corrupt length) is still left where it is until asked for. */
    const double pixel_bytes = (double)header.rows * header.columns * header.samples_per_pixel *
                               (header.bits_allocated / 8) * (double)header.frames_in_file;
    const Uint32 eager = pixel_bytes < 4294967295.0 ? (Uint32)pixel_bytes : 4294967295u;
    OFCondition condition = format.loadFile(path.c_str(), EXS_Unknown, EGL_noChange,
                                            eager > DCM_MaxReadLength ? eager : DCM_MaxReadLength);
    if (condition.bad())
        return vl_fail(VL_ERR_INPUT, "%s: cannot read DICOM: %s", path.c_str(), condition.text());
    DcmDataset *ds = format.getDataset();
    DcmXfer xfer(ds->getOriginalXfer());
    if (xfer.isEncapsulated()) {
        std::string reason;
        if (!vl_dicom_rle_is_sane(ds, reason))
            return vl_fail(VL_ERR_INPUT, "%s: corrupt RLE data: %s", path.c_str(), reason.c_str());
        if (is_jpeg2000(header.transfer_syntax_uid))
            return vl_fail(VL_ERR_INPUT,
                           "%s: transfer syntax %s (%s) has no decoder here (DCMTK's free build lacks JPEG 2000); "
                           "convert it first with 'gdcmconv --raw IN OUT' (Debian libgdcm-tools)",
                           path.c_str(), vl_dicom_transfer_syntax_name(header.transfer_syntax_uid).c_str(),
                           header.transfer_syntax_uid.c_str());
        condition = ds->chooseRepresentation(EXS_LittleEndianExplicit, nullptr);
        if (condition.bad() || !ds->canWriteXfer(EXS_LittleEndianExplicit))
            return vl_fail(VL_ERR_INPUT, "%s: cannot decode transfer syntax %s (%s): %s", path.c_str(),
                           xfer.getXferName(), header.transfer_syntax_uid.c_str(),
                           condition.bad() ? condition.text() : "no decoder");
    }
    DcmElement *element = nullptr;
    if (ds->findAndGetElement(DCM_PixelData, element).bad() || !element)
        return vl_fail(VL_ERR_INPUT, "%s: no pixel data", path.c_str());

    const size_t frame_samples = (size_t)header.rows * header.columns * header.samples_per_pixel;
    const Uint8 *bytes8 = nullptr;
    const Uint16 *words = nullptr;
    size_t available = 0; /* samples */
    if (header.bits_allocated == 8) {
        Uint8 *data = nullptr;
        if (element->getUint8Array(data).bad() || !data)
            return vl_fail(VL_ERR_INPUT, "%s: pixel data cannot be read as 8-bit samples", path.c_str());
        bytes8 = data;
        available = element->getLength();
    } else {
        Uint16 *data = nullptr;
        if (element->getUint16Array(data).good() && data) {
            words = data;
            available = element->getLength() / 2;
        } else {
            Uint8 *raw = nullptr;
            if (element->getUint8Array(raw).bad() || !raw)
                return vl_fail(VL_ERR_INPUT, "%s: pixel data cannot be read as 16-bit samples", path.c_str());
            words = reinterpret_cast<const Uint16 *>(raw);
            available = element->getLength() / 2;
        }
    }
    int64_t padded = 0;
    bool overflow = false;
    for (const vl_dicom_slice_target &target : targets) {
        const vl_dicom_frame &f = *target.frame;
        size_t start = (size_t)f.frame * frame_samples;
        if (start + frame_samples > available)
            return vl_fail(VL_ERR_INPUT,
                           "%s: pixel data holds %zu samples, frame %ld of %ux%u needs %zu (truncated or wrong "
                           "Rows/Columns?)",
                           path.c_str(), available, f.frame + 1, f.columns, f.rows, start + frame_samples);
        if (rules.to_int16) {
            if (bytes8)
                convert_frame(bytes8 + start, frame_samples, f, rules, (int16_t *)target.destination, padded, overflow);
            else
                convert_frame(words + start, frame_samples, f, rules, (int16_t *)target.destination, padded, overflow);
        } else {
            if (bytes8)
                convert_frame(bytes8 + start, frame_samples, f, rules, (float *)target.destination, padded, overflow);
            else
                convert_frame(words + start, frame_samples, f, rules, (float *)target.destination, padded, overflow);
        }
        if (overflow) {
            rules.int16_overflow->store(true);
            return VL_OK;
        }
    }
    rules.padded_voxels->fetch_add(padded);
    return VL_OK;
}
