/* SPDX-License-Identifier: MIT */
/*
 * The host's buffer pool (tcr_pool_*): who holds each buffer of a region.
 *
 * Buffers move between parties by index through rings (seed 004's free
 * and busy rings); their payload never moves.  The host keeps, in its own
 * memory, the holder of every buffer:
 *
 *   TCR_HOLDER_FREE     in the host's free stock
 *   TCR_HOLDER_HOST     taken by the host (being filled, in a chain ...)
 *   TCR_HOLDER_CH(k)    on channel k: in one of its rings or in the hands
 *                       of the guest party attached to it
 *
 * Whatever the guest enqueues towards the host is checked against this
 * table (tcr_pool_from_channel): an index the channel does not hold, or
 * the same index twice, is refused as a whole and nothing changes.  When a
 * guest party dies or misbehaves, tcr_pool_reclaim() takes back all the
 * buffers of its channel, so no slot ever leaks; the total over all
 * holders is always nbufs (tcr_pool_count).
 *
 * Threading: a pool belongs to one host thread (the TOE's event loop);
 * nothing in it is shared with other processes.
 */
#ifndef TOCHAIN_POOL_H
#define TOCHAIN_POOL_H

#include <stdint.h>
#include <tochain/region.h>

#define TCR_HOLDER_FREE		0u
#define TCR_HOLDER_HOST		1u
#define TCR_HOLDER_CH(k)	(2u + (k))

struct tcr_pool {
	uint32_t nbufs;
	uint32_t nchannels;
	uint16_t *holder;	/* per buffer */
	uint32_t *stock;	/* free stock, a stack */
	uint32_t nstock;
	uint32_t *held;		/* buffers per holder value */
};

/* A pool for @r's buffers, all free.  NULL with errno on error. */
struct tcr_pool *tcr_pool_create(const struct tcr_region *r);
void tcr_pool_destroy(struct tcr_pool *p);

/* Take up to @n free buffers for the host; returns how many. */
unsigned int tcr_pool_alloc(struct tcr_pool *p, uint32_t *idx, unsigned int n);

/* Return host-held buffers to the stock; -EINVAL (nothing freed) if one is not host-held. */
int tcr_pool_free(struct tcr_pool *p, const uint32_t *idx, unsigned int n);

/* Hand host-held buffers to channel @ch (before enqueueing them to it). */
int tcr_pool_to_channel(struct tcr_pool *p, uint32_t ch, const uint32_t *idx, unsigned int n);

/*
 * Take back buffers that channel @ch handed to the host.  Every index
 * must be held by @ch and appear once; otherwise -EPERM and nothing
 * changes (the channel misbehaved: reclaim it).
 */
int tcr_pool_from_channel(struct tcr_pool *p, uint32_t ch, const uint32_t *idx, unsigned int n);

/* Move every buffer channel @ch holds to the free stock; returns how many. */
unsigned int tcr_pool_reclaim(struct tcr_pool *p, uint32_t ch);

/* Buffers held by @holder (TCR_HOLDER_*); -EINVAL for an unknown holder. */
int tcr_pool_count(const struct tcr_pool *p, uint32_t holder);

/* Holder of buffer @idx, or -ERANGE. */
int tcr_pool_holder(const struct tcr_pool *p, uint32_t idx);

#endif /* TOCHAIN_POOL_H */
