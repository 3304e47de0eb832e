#include "cli_gpu_warm_up.h"

#include "voxlabel/device.h"

static void *create_context(void *argument)
{
    const cli_gpu_warm_up *warm_up = argument;
    char why[256];
    vl_device_gpu_usable(warm_up->gpu_index, why, sizeof why);
    return NULL;
}

void cli_gpu_warm_up_start(cli_gpu_warm_up *warm_up, const vl_device *device)
{
    warm_up->gpu_index = device->gpu_index;
    warm_up->started = device->kind != VL_DEVICE_CPU && pthread_create(&warm_up->thread, NULL, create_context, warm_up) == 0;
}

void cli_gpu_warm_up_finish(cli_gpu_warm_up *warm_up)
{
    if (warm_up->started)
        pthread_join(warm_up->thread, NULL);
    warm_up->started = 0;
}
