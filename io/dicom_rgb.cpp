/* vl_dicom_read_rgb: colour DICOM images to interleaved 8-bit RGB through DCMTK's DicomImage, which
 * handles planar configuration 0 and 1, YBR_FULL, YBR_FULL_422, PALETTE COLOR and, with the registered
 * decoders, RLE and JPEG. */
#include <cstdlib>
#include <cstring>
#include <memory>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcdeftag.h>
#include <dcmtk/dcmdata/dcfilefo.h>
#include <dcmtk/dcmimage/diregist.h>
#include <dcmtk/dcmimgle/dcmimage.h>

#include "dicom_codecs.h"
#include "dicom_pixels.h"
#include "voxlabel/error.h"
#include "voxlabel/dicom.h"

extern "C" vl_status vl_dicom_read_rgb(const char *path, vl_dicom_rgb *image)
{
    memset(image, 0, sizeof *image);
    if (!path || !*path)
        return vl_fail(VL_ERR_ARGUMENT, "DICOM colour input: no path given");
    vl_dicom_initialise();
    try {
        DcmFileFormat format;
        OFCondition condition = format.loadFile(path);
        if (condition.bad())
            return vl_fail(VL_ERR_INPUT, "%s: cannot read DICOM: %s", path, condition.text());
        DcmDataset *ds = format.getDataset();
        OFString photometric;
        ds->findAndGetOFString(DCM_PhotometricInterpretation, photometric);
        Uint16 samples = 1;
        ds->findAndGetUint16(DCM_SamplesPerPixel, samples);
        if (photometric.compare(0, 10, "MONOCHROME") == 0 || (samples == 1 && photometric != "PALETTE COLOR"))
            return vl_fail(VL_ERR_INPUT, "%s: is a monochrome image (%s), not colour: read it with vl_dicom_read_series",
                           path, photometric.c_str());
        Uint16 rows = 0, columns = 0;
        if (ds->findAndGetUint16(DCM_Rows, rows).bad() || ds->findAndGetUint16(DCM_Columns, columns).bad() || !rows ||
            !columns)
            return vl_fail(VL_ERR_INPUT, "%s: no Rows/Columns", path);
        if (!ds->tagExists(DCM_PixelData))
            return vl_fail(VL_ERR_INPUT, "%s: no pixel data", path);
        std::string reason;
        if (!vl_dicom_rle_is_sane(ds, reason))
            return vl_fail(VL_ERR_INPUT, "%s: corrupt RLE data: %s", path, reason.c_str());
        std::unique_ptr<DicomImage> dicom(new DicomImage(&format, ds->getOriginalXfer(), CIF_UsePartialAccessToPixelData));
        if (dicom->getStatus() != EIS_Normal)
            return vl_fail(VL_ERR_INPUT, "%s: cannot decode the colour image: %s", path,
                           DicomImage::getString(dicom->getStatus()));
        if (dicom->isMonochrome())
            return vl_fail(VL_ERR_INPUT, "%s: decodes as monochrome, not colour", path);
        const int64_t width = (int64_t)dicom->getWidth(), height = (int64_t)dicom->getHeight();
        const int64_t frames = (int64_t)dicom->getNumberOfFrames();
        const size_t frame_bytes = (size_t)(width * height * 3);
        uint8_t *rgb = (uint8_t *)malloc(frame_bytes * (size_t)frames);
        if (!rgb)
            return vl_fail(VL_ERR_MEMORY, "%s: cannot allocate %lld RGB frames of %lldx%lld", path, (long long)frames,
                           (long long)width, (long long)height);
        for (int64_t f = 0; f < frames; f++) {
            /* With partial access each frame is decoded on its own; getOutputData(8, 0) renders the
             * first frame held, so the image is advanced to the next frame after each copy. */
            const void *data = dicom->getOutputData(8, (unsigned long)f, 0);
            if (!data) {
                free(rgb);
                return vl_fail(VL_ERR_INPUT, "%s: frame %lld cannot be rendered: %s", path, (long long)f + 1,
                               DicomImage::getString(dicom->getStatus()));
            }
            memcpy(rgb + (size_t)f * frame_bytes, data, frame_bytes);
        }
        image->width = width;
        image->height = height;
        image->frames = frames;
        image->rgb = rgb;
        return VL_OK;
    } catch (const std::bad_alloc &) {
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory while decoding", path);
    }
}

extern "C" void vl_dicom_rgb_free(vl_dicom_rgb *image)
{
    if (!image)
        return;
    free(image->rgb);
    memset(image, 0, sizeof *image);
}
