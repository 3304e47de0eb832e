/* Internal: one-time DCMTK set-up shared by every DICOM entry point. */
#ifndef VL_DICOM_CODECS_H
#define VL_DICOM_CODECS_H

/* Registers the JPEG, JPEG-LS and RLE decoders and silences DCMTK's logger (the library never prints).
 * Thread-safe and idempotent. */
void vl_dicom_initialise();

#endif
