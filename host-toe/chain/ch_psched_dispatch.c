// SPDX-License-Identifier: MIT
/*
 * The packet scheduler, scheduler thread: VNF channels and grants,
 * admission of descriptors and their dispatch hop by hop.
 * State and rules: ch_psched_int.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "ch_psched_int.h"
#include "ch_psched_dispatch.h"
#include "ch_psched_plan.h"

/* ---- scheduler thread: VNF channels -------------------------------- */

void ch_psched_dispatch_kick(struct vnf *vn)
{
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		struct tcr_ring *rx = &vn->chan[c].ring[TCR_CH_RX];

		if (!vn->vc[c].kick)
			continue;
		vn->vc[c].kick = false;
		if (tcr_ring_prod_kick_needed(rx))
			futex_wake(tcr_ring_kick_consumer(rx));
	}
}

/* Send one work descriptor @d on channel @c; 0, or -EAGAIN (no room). */
static int vnf_send(struct vnf *vn, uint32_t c, struct tcr_desc *d, const struct vdesc *vd,
		    const void *slot_data, uint32_t slot_len)
{
	uint32_t idx;
	int k;

	if (tcr_pool_alloc(vn->pool, &idx, 1) != 1)
		return -EAGAIN;
	d->slot = idx;
	tcr_desc_store(vn->r, idx, d);
	if (slot_len)
		memcpy(tcr_region_slot(vn->r, idx), slot_data, slot_len);
	vn->vd[idx] = *vd;
	vn->vd[idx].chan = (uint8_t)c;
	k = tcr_chan_send(&vn->chan[c], vn->pool, &idx, 1);
	if (k != 1) {
		tcr_pool_free(vn->pool, &idx, 1);
		return -EAGAIN;
	}
	pool_note(vn);
	if (vn->vc[c].outstanding++ == 0)
		vn->vc[c].last_progress = tu_now_ns();
	tc_store_relaxed(&vn->vc[c].outstanding, vn->vc[c].outstanding);
	vn->vc[c].kick = true;
	return 0;
}

/*
 * The slot of a control message: @path (d.len bytes), and with a @name,
 * a NUL, the name and a NUL (the data region's header name, vnf_proto.h);
 * ch_psched_region_name() checked that both fit.
 */
static void vnf_ctrl(struct vnf *vn, uint32_t c, uint32_t op, uint32_t region,
		     const char *path, const char *name)
{
	struct vdesc vd = { .flight = FLIGHT_CTRL };
	struct tcr_desc d;
	char slot[VNF_REGION_SLOT];
	uint32_t len = (uint32_t)strlen(path), slen = len;

	memcpy(slot, path, len);
	if (name && len + 1 + strlen(name) + 1 <= sizeof(slot)) {
		slot[slen++] = '\0';
		memcpy(slot + slen, name, strlen(name) + 1);
		slen += (uint32_t)strlen(name) + 1;
	}

	memset(&d, 0, sizeof(d));
	d.op = TCR_OP_CTRL;
	d.flags = (__u16)op;
	d.aux = region;
	d.len = len;
	d.flow = TCR_FLOW_NONE;
	if (vnf_send(vn, c, &d, &vd, slot, slen))
		fprintf(stderr, "chain: vnf %s: no room for a control message\n", vn->name);
}

void ch_psched_dispatch_ctrl_all(struct ch_psched *s, struct vnf *vn, uint32_t op,
				 uint32_t region)
{
	const struct dregion *dr = dregion_get(s, region);

	if (!dr || vn->failed)
		return;
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		vnf_ctrl(vn, c, op, region, dr->path,
			 op == VNF_CTRL_GRANT && tc_load_acquire(&dr->has_name) ? dr->name : NULL);
		/* The flow table goes with the data region (seed 002). */
		if (op == VNF_CTRL_GRANT && tc_load_acquire(&dr->has_flows))
			vnf_ctrl(vn, c, VNF_CTRL_GRANT_FLOWS, region, dr->flows_path, NULL);
	}
}

static void table_grant(struct ch_psched *s, struct ch_table *tb)
{
	for (uint32_t h = 0; h < tb->cfg.nhops; h++)
		for (uint32_t i = 0; i < tb->cfg.hop[h].nvnfs; i++) {
			struct vnf *vn = &s->vnf[tb->cfg.hop[h].vnf[i]];

			if (vn->grants[tb->cfg.region]++ == 0)
				ch_psched_dispatch_ctrl_all(s, vn, VNF_CTRL_GRANT, tb->cfg.region);
		}
	tb->granted = true;
}

void ch_psched_dispatch_revoke(struct ch_psched *s, struct ch_table *tb)
{
	if (!tb->granted)
		return;
	for (uint32_t h = 0; h < tb->cfg.nhops; h++)
		for (uint32_t i = 0; i < tb->cfg.hop[h].nvnfs; i++) {
			struct vnf *vn = &s->vnf[tb->cfg.hop[h].vnf[i]];

			if (--vn->grants[tb->cfg.region] == 0)
				ch_psched_dispatch_ctrl_all(s, vn, VNF_CTRL_REVOKE, tb->cfg.region);
		}
}

/* ---- scheduler thread: flights ------------------------------------- */

static void flight_complete(struct ch_psched *s, struct flight *f)
{
	if (f->verdict != CH_DENY)
		f->verdict = CH_ALLOW;
	f->state = FL_DONE;
	s->chain[f->chain].ndone++;
}

static void stall_push(struct ch_psched *s, uint32_t id)
{
	if (s->fl[id].stalled)
		return;
	s->fl[id].stalled = 1;
	s->stall[s->stail++ & s->flight_mask] = id;
}

/* Dispatch what is pending of flight @id's hop; stall what cannot go yet. */
void ch_psched_dispatch_flight(struct ch_psched *s, uint32_t id)
{
	struct flight *f = &s->fl[id];
	const struct ch_hop_cfg *hop = &f->tb->cfg.hop[f->hop];

	for (uint32_t i = 0; i < hop->nvnfs; i++) {
		struct vnf *vn = &s->vnf[hop->vnf[i]];
		struct vdesc vd = { .flight = id, .gen = f->gen, .slot = (uint8_t)i };
		const struct ch_pkt *p = &f->pkt;
		struct tcr_desc d;
		uint32_t c;

		if (!(f->pending & (1u << i)))
			continue;
		if (vn->failed) {
			f->pending &= (uint16_t)~(1u << i);
			if (vn->policy == CH_FAIL_OPEN) {
				f->bypassed++;
				stat_add(&vn->bypassed, 1);
			} else {
				flight_deny(f, CH_REASON_VNF_FAILED, vn->id, 0);
			}
			continue;
		}
		memset(&d, 0, sizeof(d));
		d.op = TCR_OP_DATA;
		d.conn_id = p->conn_id;
		d.seq = p->seq;
		d.tsc = p->tsc;
		d.off = p->off;
		d.len = p->len;
		d.family = p->family;
		d.l4proto = p->l4proto;
		d.tcp_flags = p->tcp_flags;
		d.hop = f->hop;
		d.sport = p->sport;
		d.dport = p->dport;
		memcpy(d.saddr, p->saddr, 16);
		memcpy(d.daddr, p->daddr, 16);
		d.flow = p->flow;
		d.chain = f->chain;
		d.aux = VNF_AUX(p->region, p->buf);
		d.arg = VNF_VERDICT_NONE;	/* the VNF must write its own */
		c = ch_psched_plan_thread(vn, p->conn_id);
		if (vnf_send(vn, c, &d, &vd, NULL, 0)) {
			stall_push(s, id);
			continue;
		}
		f->pending &= (uint16_t)~(1u << i);
		f->outstanding |= (uint16_t)(1u << i);
		stat_add(&vn->dispatched, 1);
	}
}

/* Move flight @id on after an event: next hop, completion. */
void ch_psched_dispatch_advance(struct ch_psched *s, uint32_t id)
{
	struct flight *f = &s->fl[id];

	while (f->state == FL_BUSY && !f->pending && !f->outstanding) {
		if (f->verdict == CH_DENY || f->hop + 1u >= f->tb->cfg.nhops) {
			if (f->verdict != CH_DENY)
				f->hop++;	/* count the last hop as passed */
			flight_complete(s, f);
			return;
		}
		f->hop++;
		f->pending = (uint16_t)((1u << f->tb->cfg.hop[f->hop].nvnfs) - 1);
		ch_psched_dispatch_flight(s, id);
	}
}

static bool pkt_valid(struct ch_psched *s, const struct ch_pkt *p, const struct ch_table *tb)
{
	const struct dregion *dr = dregion_get(s, p->region);

	return dr && p->region == tb->cfg.region && p->buf < dr->nbufs &&
	       (uint64_t)p->off + p->len <= dr->slot_size;
}

unsigned int ch_psched_dispatch_admit(struct ch_psched *s, uint32_t chain)
{
	struct chain_rt *ch = &s->chain[chain];
	struct ch_pkt pkts[BURST];
	uint32_t room, oroom, want;
	unsigned int n;

	/*
	 * Never more in processing than the output queue can take, nor than
	 * the order ring holds (released slots wait there for the oldest).
	 */
	room = ch_queue_room(ch->out);
	if (room <= ch->inflight || !s->nfree)
		return 0;
	want = room - ch->inflight;
	if (want > s->nfree)
		want = s->nfree;
	oroom = s->flight_mask + 1 - (ch->otail - ch->ohead);
	if (want > oroom)
		want = oroom;
	if (want > BURST)
		want = BURST;
	n = ch_queue_pop(ch->in, pkts, want);
	for (unsigned int i = 0; i < n; i++) {
		uint32_t id = s->free_fl[--s->nfree];
		struct flight *f = &s->fl[id];
		uint32_t gen = f->gen + 1;
		uint8_t stalled = f->stalled;	/* may still sit in the stall ring */

		memset(f, 0, sizeof(*f));
		f->gen = gen;
		f->stalled = stalled;
		f->pkt = pkts[i];
		if (!f->pkt.tsc)
			f->pkt.tsc = tcr_tsc_now();
		f->chain = chain;
		f->state = FL_BUSY;
		f->deny_vnf = CH_VNF_NONE;
		f->alert_vnf = CH_VNF_NONE;
		ch->order[ch->otail++ & s->flight_mask] = id;
		ch->inflight++;
		f->tb = ch_tables_get(s->tables, chain);
		if (!f->tb) {
			flight_deny(f, CH_REASON_NO_CHAIN, CH_VNF_NONE, 0);
			flight_complete(s, f);
			continue;
		}
		if (!pkt_valid(s, &f->pkt, f->tb)) {
			flight_deny(f, CH_REASON_BAD_DESC, CH_VNF_NONE, 0);
			flight_complete(s, f);
			continue;
		}
		if (!f->tb->granted)
			table_grant(s, f->tb);
		if (f->tb->cfg.nhops == 0) {
			flight_complete(s, f);
			continue;
		}
		f->pending = (uint16_t)((1u << f->tb->cfg.hop[0].nvnfs) - 1);
		ch_psched_dispatch_flight(s, id);
		ch_psched_dispatch_advance(s, id);
	}
	if (n)
		tc_store_relaxed(&s->in_flight, s->cfg.max_flight - s->nfree);
	return n;
}
