/* Internal: allocation of large working arrays and outputs. */
#ifndef VL_MEMORY_H
#define VL_MEMORY_H

#include <stddef.h>

/* malloc for arrays of many MiB that are written once, front to back (labels, run tables): 2 MiB alignment
 * plus transparent huge pages cut the first-touch page faults, which otherwise cost as much as the writes.
 * Small sizes fall back to malloc (0 bytes gives a valid 1-byte block). Release with free(). */
void *vl_allocate_large(size_t bytes);

#endif
