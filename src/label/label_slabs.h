/* Internal: labelling a volume in z-slabs (docs/design.md §11), for volumes larger than a device holds.
 * Each slab is labelled on its own; the faces between slabs are joined by a union-find over the slabs'
 * labels; one pass then renumbers every voxel in the requested order, exactly as the whole volume
 * labelled at once would be numbered. */
#ifndef VL_LABEL_SLABS_H
#define VL_LABEL_SLABS_H

#include <stdint.h>

#include "voxlabel/label.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Labels `slab_mask` (a view of consecutive slices) into `slab_labels` (its voxels, u32) in `order`,
 * sets *count and *sizes (malloc'd, sizes[k-1] = voxels of label k) and, when `classes` is not NULL (a
 * class map, multilabel), *classes (malloc'd, classes[k-1] = class of label k). VL_ERR_MEMORY makes the
 * driver retry with half as many slices. */
typedef vl_status (*vl_slab_labeller)(void *context, const vl_volume *slab_mask, uint32_t *slab_labels,
                                      vl_label_order order, uint32_t *count, uint64_t **sizes, uint32_t **classes);

/* Labels `mask` (or, with `multilabel`, a class map: the faces between slabs then join only equal
 * classes, and result->classes is filled) into `labels` (created here, U32) in slabs of at most `depth` slices, each through
 * `label_slab`. A volume that fits in one slab is labelled in one call in the requested order; otherwise
 * the slabs are labelled in `matlab` or `matlab-xy` order (the order's key family) and merged. *slabs gets the number of slabs.
 * Fills result->count and result->sizes; the device fields are the caller's. */
vl_status vl_label_in_slabs(const vl_volume *mask, int multilabel, vl_volume *labels, const vl_label_options *options,
                            int64_t depth, vl_slab_labeller label_slab, void *context, vl_label_result *result,
                            int64_t *slabs);

#ifdef __cplusplus
}
#endif
#endif
