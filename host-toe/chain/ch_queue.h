/* SPDX-License-Identifier: MIT */
/*
 * Single-producer single-consumer queues of fixed-size records in private
 * memory (ch_queue_*): a chain's input queue (the TOE produces, the
 * scheduler consumes) and output queue (the scheduler produces, the TOE
 * consumes).  A full queue refuses new records (the producer keeps them;
 * seed 004: drop or retry, never block).
 *
 * Ordering: the producer writes records, then store-releases tail (R1),
 * paired with the consumer's load-acquire of tail (A1); the consumer
 * copies records out, then store-releases head (R2), paired with the
 * producer's load-acquire of head (A2).
 */
#ifndef TOCHAIN_CH_QUEUE_H
#define TOCHAIN_CH_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct ch_queue {
	uint32_t head __attribute__((aligned(64)));	/* consumer */
	uint32_t tail __attribute__((aligned(64)));	/* producer */
	uint32_t size __attribute__((aligned(64)));	/* power of two */
	uint32_t mask;
	size_t esize;
	uint8_t *mem;
};

/* A queue of at least @cap records of @esize bytes.  NULL with errno. */
struct ch_queue *ch_queue_create(uint32_t cap, size_t esize);
void ch_queue_destroy(struct ch_queue *q);

/* Producer: copy in up to @n records; returns how many. */
unsigned int ch_queue_push(struct ch_queue *q, const void *recs, unsigned int n);
/* Consumer: copy out up to @n records; returns how many. */
unsigned int ch_queue_pop(struct ch_queue *q, void *recs, unsigned int n);
/* Consumer: pointer to the oldest record or NULL (valid until the next pop). */
const void *ch_queue_peek(struct ch_queue *q);
/* Records queued (a snapshot from either side). */
uint32_t ch_queue_len(const struct ch_queue *q);
/* Free places (a snapshot). */
uint32_t ch_queue_room(const struct ch_queue *q);

#endif /* TOCHAIN_CH_QUEUE_H */
