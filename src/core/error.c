#include <stdarg.h>
#include <stdio.h>

#include "voxlabel/error.h"

/* Room for two PATH_MAX paths and the reason, so the reason at the end of a line is not cut (issue 16 B11). */
static _Thread_local char last_error[16384];

const char *vl_last_error(void)
{
    return last_error;
}

vl_status vl_fail(vl_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return status;
}

const char *vl_status_name(vl_status status)
{
    switch (status) {
    case VL_OK: return "ok";
    case VL_ERR_ARGUMENT: return "invalid argument";
    case VL_ERR_INPUT: return "bad input";
    case VL_ERR_OUTPUT: return "cannot write output";
    case VL_ERR_DEVICE: return "device error";
    case VL_ERR_MEMORY: return "out of memory";
    case VL_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

int vl_status_exit_code(vl_status status)
{
    switch (status) {
    case VL_OK: return 0;
    case VL_ERR_ARGUMENT: return 2;
    case VL_ERR_INPUT: return 3;
    case VL_ERR_OUTPUT: return 4;
    default: return 5;
    }
}

vl_status vl_size_product(int64_t a, int64_t b, int64_t c, int64_t elem, const char *what, int64_t *bytes)
{
    int64_t r = 0;
    if (a < 0 || b < 0 || c < 0 || elem < 0 || __builtin_mul_overflow(a, b, &r) ||
        __builtin_mul_overflow(r, c, &r) || __builtin_mul_overflow(r, elem, &r)) {
        *bytes = 0;
        return vl_fail(VL_ERR_INPUT, "%s: %lldx%lldx%lld voxels of %lld byte(s) overflow 64 bits", what ? what : "size",
                       (long long)a, (long long)b, (long long)c, (long long)elem);
    }
    *bytes = r;
    return VL_OK;
}
