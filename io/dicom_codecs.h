/* Internal: one-time DCMTK set-up shared by every DICOM entry point, and transfer syntax names. */
#ifndef VL_DICOM_CODECS_H
#define VL_DICOM_CODECS_H

#include <string>

/* Registers the JPEG, JPEG-LS and RLE decoders and silences DCMTK's logger (the library never prints).
 * Thread-safe and idempotent. */
void vl_dicom_initialise();

/* Human-readable name of a transfer syntax UID. */
std::string vl_dicom_transfer_syntax_name(const std::string &uid);

#endif
