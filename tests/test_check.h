/* The assertions every C and CUDA test (and test tool) uses: count the failure, say where and why, carry on.
 *
 *   CHECK(cond, fmt, ...)      on failure: failures++ and "FAIL file:line: message" on stderr, plus the
 *                              library's last error when there is one
 *   CHECK_TRUE(cond)           the same, the condition's own text being the message
 *   CHECK_NEAR(a, b, tol)      |a - b| <= tol * (1 + |b|), NaN equal only to NaN; prints both values
 *   REPORT_FAILURE(fmt, ...)   the FAIL line without counting, for shared helpers (label_compare.c,
 *                              gpu_compare.c) that return their verdict to a caller who counts it with CHECK
 *   TEST_SKIP(fmt, ...)        "SKIP: message" on stdout and exit 77, ctest's SKIP_RETURN_CODE
 *   test_finish(name)          "NAME: all checks passed" on stdout, or "NAME: N check(s) failed" on stderr;
 *                              returns the exit status (0 or 1)
 *
 * Every failure is counted; only the first TEST_CHECK_PRINT_LIMIT (100) are printed, so that a test
 * comparing millions of values stays readable when it breaks. */
#ifndef VL_TEST_CHECK_H
#define VL_TEST_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "voxlabel/error.h"

#define TEST_CHECK_PRINT_LIMIT 100
#define TEST_SKIP_CODE 77

/* Per translation unit: a helper file that includes this header but does not count leaves it unused. */
static int failures __attribute__((unused));
static int test_check_printed __attribute__((unused));

/* A test's reproducible random stream (xorshift64; the state must not be 0): seed test_random_state, then
 * draw with test_random(). */
static uint64_t test_random_state __attribute__((unused)) = 0x9e3779b97f4a7c15ull;
static inline uint64_t test_random(void)
{
    test_random_state ^= test_random_state << 13;
    test_random_state ^= test_random_state >> 7;
    test_random_state ^= test_random_state << 17;
    return test_random_state;
}

/* 1 when the FAIL line should be printed (the first TEST_CHECK_PRINT_LIMIT), with its prefix written. */
static inline int test_check_begin(const char *file, int line)
{
    if (test_check_printed >= TEST_CHECK_PRINT_LIMIT) {
        if (test_check_printed++ == TEST_CHECK_PRINT_LIMIT)
            fprintf(stderr, "FAIL ...: further failures are counted, not printed\n");
        return 0;
    }
    test_check_printed++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    return 1;
}

static inline void test_check_end(void)
{
    if (vl_last_error()[0])
        fprintf(stderr, " (last error: %s)", vl_last_error());
    fputc('\n', stderr);
}

#define REPORT_FAILURE(...)                                                                                       \
    do {                                                                                                          \
        if (test_check_begin(__FILE__, __LINE__)) {                                                               \
            fprintf(stderr, __VA_ARGS__);                                                                         \
            test_check_end();                                                                                     \
        }                                                                                                         \
    } while (0)

#define CHECK(cond, ...)                                                                                          \
    do {                                                                                                          \
        if (!(cond)) {                                                                                            \
            failures++;                                                                                           \
            REPORT_FAILURE(__VA_ARGS__);                                                                          \
        }                                                                                                         \
    } while (0)

#define CHECK_TRUE(cond) CHECK(cond, "%s", #cond)

static inline int test_near(double a, double b, double tolerance)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return fabs(a - b) <= tolerance * (1 + fabs(b));
}

#define CHECK_NEAR(a, b, tolerance)                                                                               \
    do {                                                                                                          \
        const double check_a_ = (a), check_b_ = (b);                                                              \
        CHECK(test_near(check_a_, check_b_, (tolerance)), "%s = %.15g, expected %.15g (tolerance %g)", #a,        \
              check_a_, check_b_, (double)(tolerance));                                                           \
    } while (0)

#define TEST_SKIP(...)                                                                                            \
    do {                                                                                                          \
        printf("SKIP: ");                                                                                         \
        printf(__VA_ARGS__);                                                                                      \
        printf("\n");                                                                                             \
        exit(TEST_SKIP_CODE);                                                                                     \
    } while (0)

static inline int test_finish(const char *name)
{
    if (failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
