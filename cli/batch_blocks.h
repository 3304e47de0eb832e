/* voxlabel batch: the CT voxel blocks that series after series are decoded into. The labelling thread hands each
 * CT's block back once the series is measured, and the reader decodes a later series into it, so the run touches
 * fresh pages only for its first blocks. A new block is made as large as the largest CT
 * of the run (as i16), so any later series fits it; blocks are on huge pages where the system allows, and
 * pinned through the series engine when the labels are made on a GPU, so that each CT is uploaded straight
 * from its block. A pinned block must never reach free() other than through this pool. */
#ifndef VL_BATCH_BLOCKS_H
#define VL_BATCH_BLOCKS_H

#include <pthread.h>
#include <stddef.h>

#include "voxlabel/series.h"

typedef struct batch_block {
    void *data;
    size_t bytes;
} batch_block;

typedef struct batch_blocks {
    pthread_mutex_t lock;
    batch_block *spare;
    size_t count, capacity;
    size_t least_bytes;             /* the size of a new block, unless a series needs more */
    vl_series_engine *engine;       /* pins new blocks for `device`, when both are set */
    const vl_device *device;
} batch_blocks;

/* Room for `capacity` spare blocks (the series alive at once); new blocks are pinned through `engine` for
 * `device` when both are given (and the engine can). 0, or -1 when out of memory. */
int batch_blocks_init(batch_blocks *blocks, size_t capacity, size_t least_bytes, vl_series_engine *engine,
                      const vl_device *device);
/* The largest spare block when it holds `needed` bytes, else a new one (the too small spare is released); a
 * block with data NULL when there is no memory (the reader then allocates itself). Any thread. */
batch_block batch_blocks_take(batch_blocks *blocks, size_t needed);
/* Keeps `block` for a later series (releases it when there is no room). Any thread. */
void batch_blocks_give(batch_blocks *blocks, batch_block block);
/* Releases every spare block. */
void batch_blocks_destroy(batch_blocks *blocks);

#endif
