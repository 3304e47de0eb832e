/* Exact comparison of two labellings (tests/label_compare.h). */
#include <stdio.h>

#include "label_compare.h"
#include "test_check.h"

int vl_test_same_labelling(const vl_volume *a, const vl_label_result *ra, const char *a_name, const vl_volume *b,
                           const vl_label_result *rb, const char *b_name, const char *what)
{
    if (b->nx != a->nx || b->ny != a->ny || b->nz != a->nz || b->dtype != VL_U32) {
        REPORT_FAILURE("%s: label volume shape or type", what);
        return 0;
    }
    if (ra->count != rb->count) {
        REPORT_FAILURE("%s: count %s %u %s %u", what, a_name, ra->count, b_name, rb->count);
        return 0;
    }
    const uint32_t *la = a->data, *lb = b->data;
    for (int64_t i = 0; i < vl_volume_voxels(a); i++)
        if (la[i] != lb[i]) {
            const int64_t x = i % a->nx, y = i / a->nx % a->ny, z = i / (a->nx * a->ny);
            REPORT_FAILURE("%s: voxel (%lld,%lld,%lld) %s %u %s %u", what, (long long)x, (long long)y, (long long)z,
                           a_name, la[i], b_name, lb[i]);
            return 0;
        }
    for (uint32_t k = 0; k < ra->count; k++)
        if (ra->sizes[k] != rb->sizes[k]) {
            REPORT_FAILURE("%s: size of label %u %s %llu %s %llu", what, k + 1, a_name,
                           (unsigned long long)ra->sizes[k], b_name, (unsigned long long)rb->sizes[k]);
            return 0;
        }
    if (!ra->classes != !rb->classes) {
        REPORT_FAILURE("%s: %s has component classes, %s has not", what, ra->classes ? a_name : b_name,
                       ra->classes ? b_name : a_name);
        return 0;
    }
    for (uint32_t k = 0; ra->classes && k < ra->count; k++)
        if (ra->classes[k] != rb->classes[k]) {
            REPORT_FAILURE("%s: class of label %u %s %u %s %u", what, k + 1, a_name, ra->classes[k], b_name,
                           rb->classes[k]);
            return 0;
        }
    return 1;
}
