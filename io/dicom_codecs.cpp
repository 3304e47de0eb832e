/* The bottom DICOM room: DCMTK set-up and transfer syntax names, used by the other dicom_*.cpp files;
 * it calls no other io/ file. */
#include <mutex>
#include <string>

#include <dcmtk/config/osconfig.h>
#include <dcmtk/dcmdata/dcrledrg.h>
#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmdata/dcxfer.h>
#include <dcmtk/dcmjpeg/djdecode.h>
#include <dcmtk/dcmjpls/djdecode.h>
#include <dcmtk/oflog/oflog.h>

#include "dicom_codecs.h"

void vl_dicom_initialise()
{
    static std::once_flag once;
    std::call_once(once, [] {
        OFLog::configure(OFLogger::OFF_LOG_LEVEL);
        DJDecoderRegistration::registerCodecs();
        DJLSDecoderRegistration::registerCodecs();
        DcmRLEDecoderRegistration::registerCodecs();
    });
}

std::string vl_dicom_transfer_syntax_name(const std::string &uid)
{
    DcmXfer xfer(uid.c_str());
    if (xfer.getXfer() == EXS_Unknown) {
        const char *name = dcmFindNameOfUID(uid.c_str(), nullptr);
        return name ? name : uid;
    }
    return xfer.getXferName();
}
