#include "forest/forest_internal.h"
#include "forest/forest_predict.h"
vl_status vl_forest_predict_gpu(vl_forest_prediction *prediction)
{
    (void)prediction;
    return vl_fail(VL_ERR_DEVICE, "gpu: forest prediction pending");
}
vl_status vl_forest_train_gpu(const vl_forest_binned *binned, const vl_forest_plan *plan, int gpu_index,
                              uint64_t chunk_samples, const vl_progress *progress, vl_tree *trees)
{
    (void)binned, (void)plan, (void)gpu_index, (void)chunk_samples, (void)progress, (void)trees;
    return vl_fail(VL_ERR_DEVICE, "gpu: forest training pending");
}
