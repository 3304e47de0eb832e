/* voxlabel: status codes and error detail.
 *
 * Every library function returns a vl_status. On failure a one-line, human-readable detail
 * ("<object>: <reason>") is kept per thread and returned by vl_last_error(). The library never
 * exits, aborts or prints. */
#ifndef VOXLABEL_ERROR_H
#define VOXLABEL_ERROR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vl_status {
    VL_OK = 0,
    VL_ERR_ARGUMENT,    /* caller passed an invalid option or value (CLI exit 2) */
    VL_ERR_INPUT,       /* input missing, unreadable, malformed or unsupported (CLI exit 3) */
    VL_ERR_OUTPUT,      /* output cannot be written, or exists without --force (CLI exit 4) */
    VL_ERR_DEVICE,      /* no usable GPU, driver too old, kernel failure (CLI exit 5) */
    VL_ERR_MEMORY,      /* host or device allocation failed (CLI exit 5) */
    VL_ERR_INTERNAL     /* a broken invariant: a bug in voxlabel (CLI exit 5) */
} vl_status;

/* Detail of the last failure on this thread, "" when none. Valid until the next failing call. */
const char *vl_last_error(void);

/* Stable name of a status ("ok", "invalid argument", "bad input", ...). */
const char *vl_status_name(vl_status status);

/* The CLI exit code docs/design.md §8 assigns to a status (0, 2, 3, 4 or 5). */
int vl_status_exit_code(vl_status status);

/* Records "<formatted detail>" for vl_last_error() and returns `status`, so that a function of the library,
 * or of a program built on it, fails in one statement:
 *   return vl_fail(VL_ERR_INPUT, "%s: not a DICOM file", path); */
vl_status vl_fail(vl_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The one checked size product (issue 16 A5): *bytes = a * b * c * elem when every factor is >= 0 and the
 * product fits in int64_t; otherwise *bytes = 0 and it fails with VL_ERR_INPUT,
 * "<what>: AxBxC voxels of E byte(s) overflow 64 bits" (dimensions that cannot exist are bad input).
 * Every product of dimensions taken from a header or an option goes through it. */
vl_status vl_size_product(int64_t a, int64_t b, int64_t c, int64_t elem, const char *what, int64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
