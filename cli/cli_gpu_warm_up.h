/* CUDA creates its context on first use (slow on a cold host); starting that on a side
 * thread while the inputs are read takes it off the computing stage. */
#ifndef VL_CLI_GPU_WARM_UP_H
#define VL_CLI_GPU_WARM_UP_H

#include <pthread.h>

#include "voxlabel/device.h"

typedef struct cli_gpu_warm_up {
    pthread_t thread;
    int started;
    int gpu_index;
} cli_gpu_warm_up;

/* Starts the warm-up unless `device` is the CPU; a thread that cannot start is simply not used. */
void cli_gpu_warm_up_start(cli_gpu_warm_up *warm_up, const vl_device *device);
/* Waits for it (before the first GPU call, and on every exit path); safe to call twice. */
void cli_gpu_warm_up_finish(cli_gpu_warm_up *warm_up);

#endif
