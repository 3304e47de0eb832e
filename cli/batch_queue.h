/* voxlabel batch: a bounded hand-over of items from one producer thread to one consumer thread, in order.
 * `capacity` tokens bound the items alive: the producer takes one before it starts making an item
 * (batch_queue_reserve) and the consumer gives it back once it is done with the item (batch_queue_release),
 * so the items being made, waiting and being used number at most `capacity`. Items are released in the order
 * they were pushed, so item n may live in slot n % capacity of an array the two threads share. */
#ifndef VL_BATCH_QUEUE_H
#define VL_BATCH_QUEUE_H

#include <pthread.h>
#include <stddef.h>

typedef struct batch_queue {
    void **items;
    size_t capacity, head, count, taken; /* taken: tokens held by the producer or the consumer */
    pthread_mutex_t lock;
    pthread_cond_t changed;
} batch_queue;

/* 0, or -1 when out of memory. */
int batch_queue_init(batch_queue *queue, size_t capacity);
void batch_queue_destroy(batch_queue *queue);
/* Producer: waits for a free token. */
void batch_queue_reserve(batch_queue *queue);
/* Producer: hands over an item made under a reserved token (never waits). */
void batch_queue_push(batch_queue *queue, void *item);
/* Consumer: waits for the next item. */
void *batch_queue_pop(batch_queue *queue);
/* Consumer: done with the item popped last; its token is free again. */
void batch_queue_release(batch_queue *queue);

#endif
