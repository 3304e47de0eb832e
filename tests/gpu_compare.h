/* GPU == CPU comparison shared by the GPU tests (tests/gpu_compare.c). */
#ifndef VL_TEST_GPU_COMPARE_H
#define VL_TEST_GPU_COMPARE_H

#include "voxlabel/label.h"

extern const vl_label_order vl_gpu_test_orders[4];

/* Labels `mask` on the CPU and on GPU 0; 1 when labels, count and sizes are identical (otherwise reports the
 * first difference with REPORT_FAILURE of tests/test_check.h and returns 0, for the caller to count). With slab_depth > 0 the GPU gets device memory for that many slices only, so it
 * labels in z-slabs (src/label/label_slabs.c), and the number of slabs is checked too. */
int vl_gpu_test_compare(const vl_volume *mask, int connectivity, vl_label_order order, int64_t slab_depth,
                        const char *what);

/* The same in z-slabs of `depth` slices, printing "ok NAME ..." on success; returns the failed cases (0 or 1). */
int vl_gpu_test_compare_in_slabs(const vl_volume *mask, const char *name, int connectivity, vl_label_order order,
                                 int64_t depth);

/* The same for each connectivity in conns and each of the four orders; returns the failed cases. */
int vl_gpu_test_compare_all(const vl_volume *mask, const char *name, const int *conns, int conn_count);

#endif
