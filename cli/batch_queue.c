#include <stdlib.h>

#include "batch_queue.h"

int batch_queue_init(batch_queue *queue, size_t capacity)
{
    queue->items = calloc(capacity, sizeof *queue->items);
    if (!queue->items)
        return -1;
    queue->capacity = capacity;
    queue->head = queue->count = queue->taken = 0;
    pthread_mutex_init(&queue->lock, NULL);
    pthread_cond_init(&queue->changed, NULL);
    return 0;
}

void batch_queue_destroy(batch_queue *queue)
{
    pthread_cond_destroy(&queue->changed);
    pthread_mutex_destroy(&queue->lock);
    free(queue->items);
    queue->items = NULL;
}

void batch_queue_reserve(batch_queue *queue)
{
    pthread_mutex_lock(&queue->lock);
    while (queue->taken == queue->capacity)
        pthread_cond_wait(&queue->changed, &queue->lock);
    queue->taken++;
    pthread_mutex_unlock(&queue->lock);
}

void batch_queue_push(batch_queue *queue, void *item)
{
    pthread_mutex_lock(&queue->lock);
    /* count < taken <= capacity: a reserved token always has room */
    queue->items[(queue->head + queue->count) % queue->capacity] = item;
    queue->count++;
    pthread_cond_broadcast(&queue->changed);
    pthread_mutex_unlock(&queue->lock);
}

void *batch_queue_pop(batch_queue *queue)
{
    pthread_mutex_lock(&queue->lock);
    while (queue->count == 0)
        pthread_cond_wait(&queue->changed, &queue->lock);
    void *item = queue->items[queue->head];
    queue->head = (queue->head + 1) % queue->capacity;
    queue->count--;
    pthread_mutex_unlock(&queue->lock);
    return item;
}

void batch_queue_release(batch_queue *queue)
{
    pthread_mutex_lock(&queue->lock);
    queue->taken--;
    pthread_cond_broadcast(&queue->changed);
    pthread_mutex_unlock(&queue->lock);
}
