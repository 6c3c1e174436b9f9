// SPDX-License-Identifier: MIT
/*
 * fw_desc.c - snapshot of a region descriptor's parsed header fields for
 * the matcher.  See fw_desc.h for what is trusted.
 */
#include <tochain/barrier.h>

#include "fw_desc.h"

void fw_packet_from_desc(struct fw_packet *p, const struct tcr_desc *d,
			 enum fw_dir dir, enum fw_ct ct)
{
	unsigned int i;

	/* Single relaxed loads: the guest may be writing concurrently; what
	 * we read is what we judge (no double fetch). */
	p->family = tc_load_relaxed(&d->family);
	p->proto = tc_load_relaxed(&d->l4proto);
	p->tcp_flags = tc_load_relaxed(&d->tcp_flags);
	p->sport = tc_load_relaxed(&d->sport);
	p->dport = tc_load_relaxed(&d->dport);
	for (i = 0; i < 16; i++) {
		p->src[i] = tc_load_relaxed(&d->saddr[i]);
		p->dst[i] = tc_load_relaxed(&d->daddr[i]);
	}
	p->dir = (uint8_t)dir;
	p->ct = (uint8_t)ct;
}
