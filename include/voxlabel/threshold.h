/* voxlabel: the mask of a volume's values in a closed range, the first stage of every labelling run. */
#ifndef VOXLABEL_THRESHOLD_H
#define VOXLABEL_THRESHOLD_H

#include "voxlabel/error.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mask[i] = lo <= value[i] <= hi, for an I16, U16, U8 or F32 volume; mask gets the source geometry. */
vl_status vl_threshold(const vl_volume *source, double lo, double hi, vl_volume *mask);

#ifdef __cplusplus
}
#endif
#endif
