/* voxlabel: a CT series thresholded, labelled and measured in one call (docs/cohorts.md, "Throughput").
 *
 * The same results as vl_threshold, then vl_label_volume, then vl_component_stats_compute on the labels with the
 * CT as intensity (docs/design.md §5), under one device policy. On the GPU the CT is uploaded once and the mask,
 * the labels and the statistics' sums stay on the device; the labels come back in the narrowest unsigned type
 * that holds N when the caller allows it. An engine keeps the device buffers for the next series, so a cohort
 * allocates them once. */
#ifndef VOXLABEL_SERIES_H
#define VOXLABEL_SERIES_H

#include "voxlabel/error.h"
#include "voxlabel/label.h"
#include "voxlabel/stats.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device buffers kept from one series to the next; one engine serves one vl_series_label call at a time (its
 * pinning calls may come from any thread meanwhile). */
typedef struct vl_series_engine vl_series_engine;

/* A new engine; it holds no device memory until its first GPU series. */
vl_status vl_series_engine_create(vl_series_engine **engine);
/* Frees the engine and its device buffers (NULL is allowed); memory still pinned by it is unpinned. */
void vl_series_engine_free(vl_series_engine *engine);

/* Page-locks `bytes` of host memory at `data` that the caller decodes CTs into series after series, for the
 * GPU that `device` selects: a CT lying inside it is then uploaded by vl_series_label with this engine in one
 * direct copy, not through the staging buffers. VL_ERR_DEVICE, with nothing done, when `device` is the CPU,
 * no GPU is usable or the driver refuses; the memory then serves unpinned. Any thread. */
vl_status vl_series_engine_pin(vl_series_engine *engine, const vl_device *device, void *data, size_t bytes);
/* Undoes vl_series_engine_pin (nothing when `data` is not pinned by the engine): before the memory is freed,
 * and never while a vl_series_label call uses it. Any thread. */
void vl_series_engine_unpin(vl_series_engine *engine, void *data);

typedef struct vl_series_request {
    double lo, hi;                    /* the mask: lo <= value <= hi, as vl_threshold */
    const vl_label_options *label;    /* connectivity, order, threads and the device policy of the whole call */
    const vl_stats_options *stats;    /* level, extras, threads, connectivity, hulls (NULL: the defaults); its
                                       * outcome, when set, is filled like the labelling's; its device is not used */
    int narrow_labels;                /* 1: the labels may be u8 or u16, the narrowest type for N (the type
                                       * NIfTI, NRRD and MHA label files are written in); 0: always u32 */
} vl_series_request;

/* Seconds per phase. The CPU has no transfers (upload and download 0); on the GPU, upload is the CT's way to the
 * device, label includes the sizes' way back, download the labels' (narrowed on the device). */
typedef struct vl_series_timings {
    double upload, threshold, label, download, stats;
} vl_series_timings;

/* Thresholds `ct`, labels the mask into `labels` (created here) with result->count components and measures
 * them into *stats (count entries; NULL when count is 0), with the CT as intensity. Labels, N, sizes and integer
 * statistics equal the three separate calls' on every device; float statistics are within docs/csv.md's
 * tolerance. `engine` may be NULL (buffers for this call only). `timings` may be NULL. */
vl_status vl_series_label(vl_series_engine *engine, const vl_volume *ct, const vl_series_request *request,
                          vl_volume *labels, vl_label_result *result, vl_component_stats **stats,
                          vl_series_timings *timings);

#ifdef __cplusplus
}
#endif
#endif
