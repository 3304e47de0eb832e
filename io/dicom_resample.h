/* Internal: resampling an irregular stack (gaps, variable spacing, tilt) onto a uniform, un-sheared grid. */
#ifndef VL_DICOM_RESAMPLE_H
#define VL_DICOM_RESAMPLE_H

#include <array>
#include <vector>

#include "dicom_series.h"

/* `native` holds the ordered slices; slice k lies at `positions[k]` (IPP[k] . normal) with its first
 * pixel at `origins[k]` (IPP). The output grid has the row, column and normal axes of the stack, origin
 * IPP[0], the native in-plane size and spacing, and z steps of `step` mm from positions[0] to the last
 * position. Values: trilinear (bilinear in each neighbouring slice, linear between them); points outside
 * the native slices get `fill`. I16 input is rounded back to I16. */
vl_status vl_dicom_resample(const vl_volume *native, const vl_dicom_stack &stack,
                            const std::vector<std::array<double, 3>> &origins, double step, double fill,
                            vl_volume *out);

#endif
