#include "cli_gpu_warm_up.h"

#include "label_gpu.h"

static void *create_context(void *argument)
{
    const cli_gpu_warm_up *warm_up = argument;
    char why[256];
    vl_gpu_usable(warm_up->gpu_index, why, sizeof why);
    return NULL;
}

void cli_gpu_warm_up_start(cli_gpu_warm_up *warm_up, vl_device_kind device, int gpu_index)
{
    warm_up->gpu_index = gpu_index;
    warm_up->started = device != VL_DEVICE_CPU && pthread_create(&warm_up->thread, NULL, create_context, warm_up) == 0;
}

void cli_gpu_warm_up_finish(cli_gpu_warm_up *warm_up)
{
    if (warm_up->started)
        pthread_join(warm_up->thread, NULL);
    warm_up->started = 0;
}
