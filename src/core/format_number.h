/* Internal: numbers as decimal text without printf, for tables of millions of fields (components.csv).
 * Each writes at most 32 bytes at `out`, no terminating NUL, and returns the length written. */
#ifndef VL_FORMAT_NUMBER_H
#define VL_FORMAT_NUMBER_H

#include <stddef.h>

size_t vl_format_unsigned(char *out, unsigned long long value);
size_t vl_format_signed(char *out, long long value);

/* Exactly what snprintf's "%.12g" writes for `value` (finite, infinite or NaN). */
size_t vl_format_g12(char *out, double value);

#endif
