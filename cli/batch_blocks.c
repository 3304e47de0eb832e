#include <stdlib.h>

#include "batch_blocks.h"

int batch_blocks_init(batch_blocks *blocks, size_t capacity, size_t least_bytes, vl_series_engine *engine,
                      const vl_device *device)
{
    blocks->spare = calloc(capacity ? capacity : 1, sizeof *blocks->spare);
    blocks->count = 0;
    blocks->capacity = capacity;
    blocks->least_bytes = least_bytes;
    blocks->engine = engine;
    blocks->device = device;
    if (!blocks->spare)
        return -1;
    pthread_mutex_init(&blocks->lock, NULL);
    return 0;
}

static batch_block new_block(const batch_blocks *blocks, size_t bytes)
{
    batch_block block = {vl_allocate_large(bytes), bytes};
    if (block.data && blocks->engine && blocks->device) /* left unpinned when the engine cannot pin it */
        vl_series_engine_pin(blocks->engine, blocks->device, block.data, bytes);
    return block.data ? block : (batch_block){NULL, 0};
}

/* The engine unpins only what it pinned, so an unpinned block may go through it too. */
static void release(const batch_blocks *blocks, batch_block block)
{
    if (blocks->engine)
        vl_series_engine_unpin(blocks->engine, block.data);
    free(block.data);
}

batch_block batch_blocks_take(batch_blocks *blocks, size_t needed)
{
    batch_block block = {NULL, 0};
    pthread_mutex_lock(&blocks->lock);
    size_t largest = blocks->count;
    for (size_t b = 0; b < blocks->count; b++)
        if (largest == blocks->count || blocks->spare[b].bytes > blocks->spare[largest].bytes)
            largest = b;
    if (largest < blocks->count) {
        block = blocks->spare[largest];
        blocks->spare[largest] = blocks->spare[--blocks->count];
    }
    pthread_mutex_unlock(&blocks->lock);
    if (block.data && block.bytes >= needed)
        return block;
    if (block.data)
        release(blocks, block);
    return new_block(blocks, needed > blocks->least_bytes ? needed : blocks->least_bytes);
}

void batch_blocks_give(batch_blocks *blocks, batch_block block)
{
    if (!block.data)
        return;
    pthread_mutex_lock(&blocks->lock);
    const int kept = blocks->count < blocks->capacity;
    if (kept)
        blocks->spare[blocks->count++] = block;
    pthread_mutex_unlock(&blocks->lock);
    if (!kept)
        release(blocks, block);
}

void batch_blocks_destroy(batch_blocks *blocks)
{
    for (size_t b = 0; b < blocks->count; b++)
        release(blocks, blocks->spare[b]);
    free(blocks->spare);
    blocks->spare = NULL;
    blocks->count = 0;
    pthread_mutex_destroy(&blocks->lock);
}
