// SPDX-License-Identifier: MIT
/* SPSC record queues; see ch_queue.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <tochain/barrier.h>

#include "ch_queue.h"

struct ch_queue *ch_queue_create(uint32_t cap, size_t esize)
{
	struct ch_queue *q;
	uint32_t size = 2;

	if (cap == 0 || cap > (1u << 24) || esize == 0 || esize > 4096) {
		errno = EINVAL;
		return NULL;
	}
	while (size < cap)
		size <<= 1;
	if (posix_memalign((void **)&q, 64, sizeof(*q)))
		return NULL;
	memset(q, 0, sizeof(*q));
	q->mem = calloc(size, esize);
	if (!q->mem) {
		free(q);
		return NULL;
	}
	q->size = size;
	q->mask = size - 1;
	q->esize = esize;
	return q;
}

void ch_queue_destroy(struct ch_queue *q)
{
	if (!q)
		return;
	free(q->mem);
	free(q);
}

unsigned int ch_queue_push(struct ch_queue *q, const void *recs, unsigned int n)
{
	uint32_t tail = tc_load_relaxed(&q->tail);
	uint32_t head = tc_load_acquire(&q->head);	/* A2 pairs with R2 */
	uint32_t room = q->size - (tail - head);
	const uint8_t *src = recs;

	if (n > room)
		n = room;
	for (unsigned int i = 0; i < n; i++)
		memcpy(q->mem + ((tail + i) & q->mask) * q->esize, src + i * q->esize, q->esize);
	tc_store_release(&q->tail, tail + n);		/* R1 pairs with A1 */
	return n;
}

unsigned int ch_queue_pop(struct ch_queue *q, void *recs, unsigned int n)
{
	uint32_t head = tc_load_relaxed(&q->head);
	uint32_t avail = tc_load_acquire(&q->tail) - head;	/* A1 pairs with R1 */
	uint8_t *dst = recs;

	if (n > avail)
		n = avail;
	for (unsigned int i = 0; i < n; i++)
		memcpy(dst + i * q->esize, q->mem + ((head + i) & q->mask) * q->esize, q->esize);
	tc_store_release(&q->head, head + n);		/* R2 pairs with A2 */
	return n;
}

const void *ch_queue_peek(struct ch_queue *q)
{
	uint32_t head = tc_load_relaxed(&q->head);

	if (tc_load_acquire(&q->tail) == head)		/* A1 */
		return NULL;
	return q->mem + (head & q->mask) * q->esize;
}

uint32_t ch_queue_len(const struct ch_queue *q)
{
	uint32_t head = tc_load_acquire(&q->head);
	uint32_t n = tc_load_acquire(&q->tail) - head;

	/* Seen from the producer, head may be older than tail: clamp. */
	return n > q->size ? q->size : n;
}

uint32_t ch_queue_room(const struct ch_queue *q)
{
	return q->size - ch_queue_len(q);
}
