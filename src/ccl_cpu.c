#include "status.h"
#include "voxlabel/label.h"

vl_status vl_label_volume_cpu(const vl_volume *mask, vl_volume *labels,
                              const vl_label_options *options, vl_label_result *result)
{
    (void)mask; (void)labels; (void)options; (void)result;
    return vl_fail(VL_ERR_INTERNAL, "label: not built yet");
}

vl_status vl_label_filter(vl_volume *labels, vl_label_result *result, uint64_t min_size, uint32_t largest)
{
    (void)labels; (void)result; (void)min_size; (void)largest;
    return vl_fail(VL_ERR_INTERNAL, "label: not built yet");
}
