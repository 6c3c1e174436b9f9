/* SPDX-License-Identifier: MIT */
/*
 * Lock-free rings of descriptor indices in a region (tcr_ring_*).
 *
 * A ring lives in shared memory (struct tcr_ring_ctl + entries, see
 * region_layout.h); each party works on it through a private handle,
 * struct tcr_ring, that holds its own copy of the geometry and, for a
 * single producer or single consumer, its own position.  Nothing the
 * peer can write is trusted:
 *
 *  - the peer's position is read once per call and checked: a consumer
 *    position beyond what was produced, or a producer position more than
 *    a ring ahead, is a corrupted ring (-EPROTO);
 *  - every index dequeued is read once and checked against the handle's
 *    limit (the number of buffers): an index out of range fails the call
 *    (-EBADMSG) and consumes nothing;
 *  - a single-producer or single-consumer handle never reads its own
 *    position back from shared memory, and reads the peer's only when
 *    what it saw last is not enough (fewer cache-line transfers).
 *
 * Roles.  TCR_RING_MP / TCR_RING_MC make a side shareable between
 * processes (after fork) or threads: positions are claimed with
 * compare-and-swap on prod_head / cons_head, then published in order on
 * prod_tail / cons_tail.  A multi-party side waits for the parties ahead
 * of it to publish; if one of them died between claiming and publishing,
 * the wait ends after TCR_RING_STALL_NS with -ETIMEDOUT and the ring is
 * wedged until the host resets it.  For that reason the host never uses
 * MP or MC on a ring it shares with a guest: it is the single producer or
 * single consumer of its side and never waits for the guest.
 *
 * Memory ordering (pairs are named R1..R4 / A1..A4 at the call sites):
 *   producer: write entries; store-release prod_tail (R1)
 *             pairs with the consumer's load-acquire of prod_tail (A2).
 *   consumer: read entries; store-release cons_tail (R2)
 *             pairs with the producer's load-acquire of cons_tail (A1),
 *             so the producer never overwrites an entry still being read.
 *   MP/MC:    head claims are acq_rel CAS (R3/A3), so that a party that
 *             sees a claimed head also sees a peer position at least as
 *             new as the one the claimer checked.
 *   wakeups:  see tcr_ring_*_wait_prepare(): a Dekker pattern with
 *             seq_cst fences (F1 pairs with F2).
 *
 * Return values: enqueue/dequeue return the number of entries moved (0
 * when full/empty) or -errno.
 */
#ifndef TOCHAIN_RING_H
#define TOCHAIN_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tochain/region_layout.h>

#define TCR_RING_MP		0x1u	/* several producers share this side */
#define TCR_RING_MC		0x2u	/* several consumers share this side */

#define TCR_RING_STALL_NS	2000000000ull	/* MP/MC wait for a dead peer */

struct tcr_ring {
	struct tcr_ring_ctl *ctl;	/* shared control block */
	__u32 *entries;			/* shared entries */
	uint32_t size;			/* private copy: entries in the ring */
	uint32_t mask;			/* size - 1 */
	uint32_t limit;			/* dequeued indices must be < limit */
	uint32_t flags;			/* TCR_RING_MP | TCR_RING_MC */
	uint32_t prod;			/* single producer: next position */
	uint32_t cons;			/* single consumer: next position */
	uint32_t seen_cons;		/* single producer: last cons_tail read */
	uint32_t seen_prod;		/* single consumer: last prod_tail read */
};

/* Bytes a ring of @size entries takes in a region (control + entries). */
size_t tcr_ring_bytes(uint32_t size);

/*
 * Zero a ring's shared state (the host, when formatting or resetting a
 * channel; no party may be using it).
 */
void tcr_ring_format(void *mem, uint32_t size);

/*
 * Attach a handle to ring memory.  @size must be a power of two, @limit
 * the bound on dequeued indices.  A single-producer/consumer handle takes
 * its starting position from shared memory once, here.
 * Returns 0 or -EINVAL.
 */
int tcr_ring_attach(struct tcr_ring *r, void *mem, uint32_t size,
		    uint32_t limit, uint32_t flags);

/* Enqueue up to @n indices; returns how many were enqueued, or -errno. */
int tcr_ring_enqueue_burst(struct tcr_ring *r, const uint32_t *idx, unsigned int n);
/* Enqueue all @n indices or none; returns @n, 0, or -errno. */
int tcr_ring_enqueue_bulk(struct tcr_ring *r, const uint32_t *idx, unsigned int n);
/* Dequeue up to @n indices; returns how many were dequeued, or -errno. */
int tcr_ring_dequeue_burst(struct tcr_ring *r, uint32_t *idx, unsigned int n);
/* Dequeue exactly @n indices or none; returns @n, 0, or -errno. */
int tcr_ring_dequeue_bulk(struct tcr_ring *r, uint32_t *idx, unsigned int n);

/*
 * Entries waiting to be consumed, as seen by this handle; -EPROTO if the
 * shared positions are inconsistent.  A snapshot, for counters.
 */
int tcr_ring_count(const struct tcr_ring *r);

/*
 * Sleeping consumer / producer.  A consumer that found the ring empty
 * calls tcr_ring_cons_wait_prepare(), which announces it will sleep and
 * returns the futex word value to sleep on; it then re-checks the ring
 * and only if still empty sleeps until cons_seq changes (see wait.h).
 * A producer calls tcr_ring_prod_kick_needed() after publishing; when it
 * returns true, it bumps cons_seq (tcr_ring_kick_consumer) and wakes the
 * sleeper through its wait backend.  The call takes the flag down as it
 * reads it, so one sleep gets one wake-up however many producers publish
 * before the consumer runs: a woken consumer drains the ring and raises
 * the flag again before its next sleep, and a producer that found the
 * flag already down published where that re-check sees it (F1/F2).
 */
uint32_t tcr_ring_cons_wait_prepare(struct tcr_ring *r);
void tcr_ring_cons_wait_done(struct tcr_ring *r);
bool tcr_ring_prod_kick_needed(struct tcr_ring *r);

/*
 * How a sleeping consumer wants its wake-up: the futex on cons_seq
 * (tcr_ring_cons_wait_prepare) or, with TCR_WAKE_BELL, the eventfd the
 * producer announced in its channel (struct tcr_channel.bell), for a
 * consumer that sleeps in epoll.  tcr_ring_prod_kick() takes the flag
 * down like tcr_ring_prod_kick_needed() and returns what it said
 * (0: nobody sleeps).  The value is the consumer's word: a producer that
 * has no bell, or reads a value it does not know, wakes the futex.
 */
#define TCR_WAKE_FUTEX	1u
#define TCR_WAKE_BELL	2u
uint32_t tcr_ring_cons_wait_arm(struct tcr_ring *r, uint32_t how);
uint32_t tcr_ring_prod_kick(struct tcr_ring *r);
__u32 *tcr_ring_kick_consumer(struct tcr_ring *r);

#endif /* TOCHAIN_RING_H */
