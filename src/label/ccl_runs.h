/* Internal: the run table of the CPU labeller (see src/label/ccl_cpu.c for the invariants). */
#ifndef VL_CCL_RUNS_H
#define VL_CCL_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "core/parallel.h"
#include "voxlabel/label.h"

/* Runs of foreground voxels, in raster order. Row r = y + ny*z holds runs row_start[r] .. row_start[r+1]-1;
 * run i covers x0[i]..x1[i] inclusive. Run indices are 32-bit: a volume may hold up to 2^32-2 runs. */
typedef struct vl_runs {
    int64_t nx, ny, nz;
    uint32_t count;
    uint32_t *row_start; /* ny*nz + 1 entries */
    uint32_t *x0, *x1;
    uint32_t *run_class; /* multilabel only (else NULL): the class value of run i */
} vl_runs;

/* Cuts every row of the u8 mask (nonzero = foreground) into runs, slabs of slices in parallel. */
vl_status vl_runs_extract(const vl_volume *mask, int threads, vl_runs *runs);
/* Cuts every row of a class map (u8, u16 or u32; vl_class_map_check passed) into runs of one nonzero
 * class, with run_class set: runs of different classes may be adjacent. */
vl_status vl_runs_extract_classes(const vl_volume *classes, int threads, vl_runs *runs);
void vl_runs_free(vl_runs *runs);

/* Given the joined forest (parent[i] <= i, roots are first runs, not yet flattened), numbers the components 1..N in `order`,
 * fills result->count and result->sizes, and rewrites parent[i] into the final label of run i. */
vl_status vl_runs_number_components(const vl_runs *runs, uint32_t *parent, vl_label_order order,
                                    vl_label_result *result);

/* result->classes[k-1] := the class of label k, from the run labels of vl_runs_number_components. */
vl_status vl_runs_component_classes(const vl_runs *runs, const uint32_t *label_of_run, vl_label_result *result);

/* Writes the U32 label volume from run labels (label_of_run[i] for run i), rows in parallel. */
vl_status vl_runs_write_labels(const vl_runs *runs, const uint32_t *label_of_run, const vl_volume *mask, int threads,
                               vl_volume *labels);

#endif
