/* Internal: recording failures for vl_last_error(). */
#ifndef VL_STATUS_INTERNAL_H
#define VL_STATUS_INTERNAL_H

#include "voxlabel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records "<formatted detail>" for vl_last_error() and returns `status`, so callers write
 *   return vl_fail(VL_ERR_INPUT, "%s: not a DICOM file", path); */
vl_status vl_fail(vl_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif
