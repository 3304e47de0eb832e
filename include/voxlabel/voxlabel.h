/* voxlabel: connected components of CT volumes, numbered exactly as MATLAB's bwlabeln numbers them.
 *
 * The umbrella header: every public header of the library, and its version. Programs may include the
 * single headers instead; each stands on its own. The contract behind them is docs/design.md. */
#ifndef VOXLABEL_VOXLABEL_H
#define VOXLABEL_VOXLABEL_H

#include "voxlabel/atomic_file.h"
#include "voxlabel/color.h"
#include "voxlabel/compare.h"
#include "voxlabel/device.h"
#include "voxlabel/dicom.h"
#include "voxlabel/error.h"
#include "voxlabel/features.h"
#include "voxlabel/image2d.h"
#include "voxlabel/io.h"
#include "voxlabel/label.h"
#include "voxlabel/label_device.h"
#include "voxlabel/morphology.h"
#include "voxlabel/phantom.h"
#include "voxlabel/preview.h"
#include "voxlabel/progress.h"
#include "voxlabel/seg.h"
#include "voxlabel/shape.h"
#include "voxlabel/stats.h"
#include "voxlabel/stats_table.h"
#include "voxlabel/struct_sizes.h"
#include "voxlabel/threads.h"
#include "voxlabel/threshold.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "MAJOR.MINOR.PATCH" (the CMake project version it was built as). */
const char *vl_version(void);

#ifdef __cplusplus
}
#endif
#endif
