/* The assertion every C unit test uses: count the failure, say where and why, carry on. */
#ifndef VL_TEST_CHECK_H
#define VL_TEST_CHECK_H

#include <stdio.h>

#include "voxlabel/error.h"

static int failures;

/* CHECK(condition, printf-style message): on failure prints "FAIL file:line: message" plus the library's
 * last error when there is one. */
#define CHECK(cond, ...)                                                                                          \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            failures++;                                                                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                  \
            fprintf(stderr, __VA_ARGS__);                                                                         \
            if (vl_last_error()[0])                                                                               \
                fprintf(stderr, " (last error: %s)", vl_last_error());                                            \
            fputc('\n', stderr);                                                                                  \
        }                                                                                                         \
    } while (0)

#endif
