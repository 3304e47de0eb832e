/* Two labellings of one mask compared exactly (tests/label_compare.c), for the tests that hold one
 * labeller against another: GPU against CPU, z-slabs against the whole volume. */
#ifndef VL_TEST_LABEL_COMPARE_H
#define VL_TEST_LABEL_COMPARE_H

#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when `b` (named b_name) equals the reference `a` (a_name): N, every voxel, every size and (multilabel)
 * every class. Otherwise
 * reports the first difference (REPORT_FAILURE of tests/test_check.h, on stderr) and returns 0, for the
 * caller to count. */
int vl_test_same_labelling(const vl_volume *a, const vl_label_result *ra, const char *a_name, const vl_volume *b,
                           const vl_label_result *rb, const char *b_name, const char *what);

#ifdef __cplusplus
}
#endif
#endif
