// SPDX-License-Identifier: MIT
/* Channels of a region; see include/tochain/chan.h. */
#include <errno.h>
#include <string.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>

static int attach_rings(struct tcr_chan *c, uint32_t guest_flags)
{
	const struct tcr_geometry *g = &c->r->geo;

	for (int i = 0; i < TCR_CH_NRINGS; i++) {
		uint32_t flags = 0;
		int err;

		if (!c->host) {
			/* The guest produces on TX/DONE and consumes FREE/RX. */
			if (i == TCR_CH_TX || i == TCR_CH_DONE)
				flags = guest_flags & TCR_RING_MP;
			else
				flags = guest_flags & TCR_RING_MC;
		}
		err = tcr_ring_attach(&c->ring[i], tcr_region_ring_mem(c->r, c->id, i),
				      g->ring_size, g->nbufs, flags);
		if (err)
			return err;
	}
	return 0;
}

int tcr_chan_open(struct tcr_chan *c, const struct tcr_region *r, uint32_t id)
{
	struct tcr_channel *ch = tcr_region_channel(r, id);
	uint32_t epoch;

	if (!ch)
		return -EINVAL;
	if (!(r->flags & TCR_ATTACH_HOST) || (r->flags & TCR_ATTACH_RDONLY))
		return -EPERM;
	memset(c, 0, sizeof(*c));
	c->r = r;
	c->id = id;
	c->host = true;
	tc_store_release(&ch->state, TCR_CH_CLOSED);
	for (int i = 0; i < TCR_CH_NRINGS; i++)
		tcr_ring_format(tcr_region_ring_mem(r, id, i), r->geo.ring_size);
	/*
	 * The bell belongs to the process that attaches next, not to the one
	 * before: a restarted VNF's new bell may carry the dead one's number,
	 * and the host would take it for the old announcement.
	 */
	tc_store_relaxed(&ch->bell, 0);
	epoch = tc_load_relaxed(&ch->epoch) + 1;
	tc_store_relaxed(&ch->epoch, epoch);
	c->epoch = epoch;
	attach_rings(c, 0);
	/* Pairs with the load-acquire of state in tcr_chan_attach(). */
	tc_store_release(&ch->state, TCR_CH_OPEN);
	return 0;
}

unsigned int tcr_chan_close(struct tcr_chan *c, struct tcr_pool *p)
{
	struct tcr_channel *ch = tcr_region_channel(c->r, c->id);
	unsigned int n;

	tc_store_release(&ch->state, TCR_CH_CLOSED);
	tc_store_relaxed(&ch->epoch, c->epoch + 1);
	c->epoch++;
	n = tcr_pool_reclaim(p, c->id);
	for (int i = 0; i < TCR_CH_NRINGS; i++)
		tcr_ring_format(tcr_region_ring_mem(c->r, c->id, i), c->r->geo.ring_size);
	return n;
}

int tcr_chan_attach(struct tcr_chan *c, const struct tcr_region *r, uint32_t id,
		    uint32_t flags)
{
	struct tcr_channel *ch = tcr_region_channel(r, id);

	if (!ch || (flags & ~(TCR_RING_MP | TCR_RING_MC)))
		return -EINVAL;
	if (tc_load_acquire(&ch->state) != TCR_CH_OPEN)
		return -ENOTCONN;
	memset(c, 0, sizeof(*c));
	c->r = r;
	c->id = id;
	c->host = false;
	c->epoch = tc_load_relaxed(&ch->epoch);
	return attach_rings(c, flags);
}

bool tcr_chan_stale(const struct tcr_chan *c)
{
	const struct tcr_channel *ch = tcr_region_channel(c->r, c->id);

	/*
	 * A region formatted again (a new TOE) starts every epoch afresh:
	 * the same channel may be open again at our epoch for another party,
	 * so the region's generation counts too.
	 */
	return tcr_region_stale(c->r) || tc_load_acquire(&ch->state) != TCR_CH_OPEN ||
	       tc_load_relaxed(&ch->epoch) != c->epoch;
}

#define BATCH 64

int tcr_chan_grant(struct tcr_chan *c, struct tcr_pool *p, unsigned int n)
{
	uint32_t idx[BATCH];
	int total = 0;

	while (n > 0) {
		unsigned int want = n < BATCH ? n : BATCH;
		unsigned int k = tcr_pool_alloc(p, idx, want);
		int sent;

		if (k == 0)
			break;
		sent = tcr_chan_send_ring(c, p, TCR_CH_FREE, idx, k);
		if (sent < 0) {
			tcr_pool_free(p, idx, k);
			return total ? total : sent;
		}
		if ((unsigned int)sent < k)
			tcr_pool_free(p, idx + sent, k - (unsigned int)sent);
		total += sent;
		if ((unsigned int)sent < k)
			break;
		n -= k;
	}
	return total;
}

int tcr_chan_send_ring(struct tcr_chan *c, struct tcr_pool *p, enum tcr_channel_ring which,
		       const uint32_t *idx, unsigned int n)
{
	int err, k;

	if (!c->host || (which != TCR_CH_FREE && which != TCR_CH_RX))
		return -EINVAL;
	err = tcr_pool_to_channel(p, c->id, idx, n);
	if (err)
		return err;
	k = tcr_ring_enqueue_burst(&c->ring[which], idx, n);
	if (k < 0) {
		tcr_pool_from_channel(p, c->id, idx, n);
		return k;
	}
	/* What did not fit stays with the host. */
	tcr_pool_from_channel(p, c->id, idx + k, n - (unsigned int)k);
	return k;
}

int tcr_chan_send(struct tcr_chan *c, struct tcr_pool *p, const uint32_t *idx,
		  unsigned int n)
{
	return tcr_chan_send_ring(c, p, TCR_CH_RX, idx, n);
}

int tcr_chan_recv(struct tcr_chan *c, struct tcr_pool *p, enum tcr_channel_ring which,
		  uint32_t *idx, unsigned int n)
{
	int k, err;

	if (!c->host || (which != TCR_CH_TX && which != TCR_CH_DONE))
		return -EINVAL;
	k = tcr_ring_dequeue_burst(&c->ring[which], idx, n);
	if (k <= 0)
		return k;
	err = tcr_pool_from_channel(p, c->id, idx, (unsigned int)k);
	return err ? err : k;
}
