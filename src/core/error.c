#include <stdarg.h>
#include <stdio.h>

#include "voxlabel/error.h"

static _Thread_local char last_error[1024];

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
