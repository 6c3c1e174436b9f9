/* SPDX-License-Identifier: MIT */
/*
 * Channels (tcr_chan_*): one guest attachment to a region, four rings.
 *
 *   FREE  h->g  empty buffers the host grants the guest to fill
 *   TX    g->h  buffers the guest filled (outbound payload)
 *   RX    h->g  buffers the host filled (inbound payload)
 *   DONE  g->h  buffers the guest is done with (read RX data, unused grants)
 *
 * The host opens a channel, is the single producer of FREE and RX and
 * the single consumer of TX and DONE, and checks every buffer that comes
 * back against its pool (pool.h).  A guest attaches to an open channel;
 * processes that share a channel after fork attach with TCR_RING_MP |
 * TCR_RING_MC so that their sides are multi-producer/multi-consumer.
 *
 * Closing a channel (the guest party died, or sent something invalid)
 * reclaims every buffer the channel held and empties its rings; the
 * channel's epoch changes so a surviving guest party notices
 * (tcr_chan_stale) and reattaches.
 */
#ifndef TOCHAIN_CHAN_H
#define TOCHAIN_CHAN_H

#include <stdbool.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/ring.h>

struct tcr_chan {
	const struct tcr_region *r;
	uint32_t id;
	uint32_t epoch;			/* epoch at open/attach */
	bool host;
	struct tcr_ring ring[TCR_CH_NRINGS];
};

/* Host: (re)format channel @id's rings and open it.  0 or -EINVAL/-EPERM. */
int tcr_chan_open(struct tcr_chan *c, const struct tcr_region *r, uint32_t id);

/*
 * Host: close the channel, take back all its buffers into @p's stock,
 * empty its rings.  Returns the number of buffers reclaimed.
 */
unsigned int tcr_chan_close(struct tcr_chan *c, struct tcr_pool *p);

/*
 * Guest: attach to open channel @id; @flags TCR_RING_MP|TCR_RING_MC make
 * the guest's sides shareable.  0, -EINVAL, or -ENOTCONN if not open.
 */
int tcr_chan_attach(struct tcr_chan *c, const struct tcr_region *r, uint32_t id,
		    uint32_t flags);

/* Guest: was the channel closed or reopened, or its region formatted again, since we attached? */
bool tcr_chan_stale(const struct tcr_chan *c);

/* Host: grant up to @n free buffers on FREE; returns how many, or -errno. */
int tcr_chan_grant(struct tcr_chan *c, struct tcr_pool *p, unsigned int n);

/* Host: as tcr_chan_send() on ring @which (TCR_CH_FREE or TCR_CH_RX). */
int tcr_chan_send_ring(struct tcr_chan *c, struct tcr_pool *p, enum tcr_channel_ring which,
		       const uint32_t *idx, unsigned int n);

/*
 * Host: deliver host-held buffers on RX.  Returns how many were enqueued
 * (the rest stay host-held), or -errno.
 */
int tcr_chan_send(struct tcr_chan *c, struct tcr_pool *p, const uint32_t *idx,
		  unsigned int n);

/*
 * Host: take up to @n buffers from TX or DONE; they become host-held.
 * -EPERM: the guest returned a buffer it does not hold (close the channel);
 * -EPROTO/-EBADMSG: the ring is corrupt (close the channel).
 */
int tcr_chan_recv(struct tcr_chan *c, struct tcr_pool *p, enum tcr_channel_ring which,
		  uint32_t *idx, unsigned int n);

#endif /* TOCHAIN_CHAN_H */
