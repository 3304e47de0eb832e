/* vl_maxflow: checks the graph, then runs the CPU reference (maxflow_cpu.c) or the GPU half
 * (cuda/graphcut/maxflow_gpu.cu) under the device policy. */
#include <string.h>

#include "core/device.h"
#include "graphcut/maxflow_internal.h"
#include "voxlabel/error.h"

void vl_maxflow_options_default(vl_maxflow_options *options)
{
    memset(options, 0, sizeof *options);
    vl_device_default(&options->device);
}

typedef struct maxflow_call {
    const vl_grid_graph *graph;
    uint8_t *segment;
    const vl_maxflow_options *options;
    vl_maxflow_result *result;
} maxflow_call;

static vl_status maxflow_gpu(void *context)
{
    maxflow_call *c = context;
    return vl_maxflow_gpu(c->graph, c->segment, c->options->gpu_relabel_interval, 1, c->result);
}

static vl_status maxflow_cpu(void *context)
{
    maxflow_call *c = context;
    return vl_maxflow_cpu(c->graph, c->segment, c->result);
}

vl_status vl_maxflow(const vl_grid_graph *graph, uint8_t *segment, const vl_maxflow_options *options,
                     vl_maxflow_result *result)
{
    memset(result, 0, sizeof *result);
    vl_maxflow_options defaults;
    if (!options) {
        vl_maxflow_options_default(&defaults);
        options = &defaults;
    }
    maxflow_call call = {graph, segment, options, result};
    vl_device_outcome outcome;
    memset(&outcome, 0, sizeof outcome);
    vl_status status = vl_device_run(&options->device, maxflow_gpu, maxflow_cpu, &call, &outcome);
    result->outcome = outcome;
    return status;
}
