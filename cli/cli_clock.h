/* Wall-clock durations of the commands' stages, for their summary lines and timings. */
#ifndef VL_CLI_CLOCK_H
#define VL_CLI_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock since `start` (taken with clock_gettime(CLOCK_MONOTONIC, ...)). */
double cli_seconds_since(const struct timespec *start);

#endif
