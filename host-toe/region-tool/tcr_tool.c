// SPDX-License-Identifier: MIT
/*
 * tochain-region: look into a region file as the host sees it.
 *
 *   tochain-region info PATH [--json]
 *
 * Attaches read-only with full host-side validation (a corrupt region is
 * reported, not trusted) and prints the header, each open channel's ring
 * fill levels and each chain's counters.  Exit 0, or 1 with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <tochain/barrier.h>
#include <tochain/counters.h>
#include <tochain/region.h>
#include <tochain/ring.h>

int tcr_tool_main(int argc, char **argv);

static const char *const ring_names[TCR_CH_NRINGS] = { "free", "tx", "rx", "done" };

static int ring_fill(const struct tcr_region *r, uint32_t ch, int which)
{
	struct tcr_ring ring;

	if (tcr_ring_attach(&ring, tcr_region_ring_mem(r, ch, which), r->geo.ring_size,
			    r->geo.nbufs, 0))
		return -EINVAL;
	return tcr_ring_count(&ring);
}

int tcr_tool_main(int argc, char **argv)
{
	struct tcr_region *r;
	const struct tcr_geometry *g;
	int json = argc > 3 && !strcmp(argv[3], "--json");

	if (argc < 3 || strcmp(argv[1], "info") || (argc > 3 && !json) || argc > 4) {
		fprintf(stderr, "usage: tochain-region info PATH [--json]\n");
		return 2;
	}
	r = tcr_region_attach(argv[2], TCR_ATTACH_HOST | TCR_ATTACH_RDONLY);
	if (!r) {
		fprintf(stderr, "tochain-region: %s: %s\n", argv[2],
			errno == EBADMSG ? "not a valid region (corrupt or not a region)" :
			errno == EAGAIN ? "region is being formatted or was killed by its host" :
			strerror(errno));
		return 1;
	}
	g = &r->geo;
	if (json)
		printf("{\"name\":\"%s\",\"kind\":%u,\"generation\":%llu,\"size\":%llu,"
		       "\"nbufs\":%u,\"slot_size\":%u,\"nchannels\":%u,\"ring_size\":%u,"
		       "\"nchains\":%u,\"channels\":[",
		       r->name, g->kind, (unsigned long long)r->generation,
		       (unsigned long long)g->region_size, g->nbufs, g->slot_size,
		       g->nchannels, g->ring_size, g->nchains);
	else
		printf("region %s: kind %s, generation %llu, %llu bytes\n"
		       "  %u buffers of %u bytes, %u channels, rings of %u, %u chains\n",
		       r->name, g->kind == TCR_KIND_HOST ? "host" : "guest",
		       (unsigned long long)r->generation, (unsigned long long)g->region_size,
		       g->nbufs, g->slot_size, g->nchannels, g->ring_size, g->nchains);
	for (uint32_t ch = 0, first = 1; ch < g->nchannels; ch++) {
		const struct tcr_channel *c = tcr_region_channel(r, ch);
		uint32_t state = tc_load_relaxed(&c->state);

		if (state != TCR_CH_OPEN)
			continue;
		if (json) {
			printf("%s{\"id\":%u", first ? "" : ",", ch);
			for (int w = 0; w < TCR_CH_NRINGS; w++)
				printf(",\"%s\":%d", ring_names[w], ring_fill(r, ch, w));
			printf("}");
		} else {
			printf("  channel %u open:", ch);
			for (int w = 0; w < TCR_CH_NRINGS; w++)
				printf(" %s %d", ring_names[w], ring_fill(r, ch, w));
			printf("\n");
		}
		first = 0;
	}
	if (json)
		printf("],\"chains\":[");
	for (uint32_t i = 0; i < g->nchains; i++) {
		struct tcr_counters_snap s;
		int err = tcr_counters_snapshot(tcr_region_chain(r, i), NULL, g->ring_size, &s);

		if (json)
			printf("%s{\"chain\":%u,\"valid\":%s,\"arrivals\":%llu,\"finished\":%llu,"
			       "\"denied\":%llu,\"taken\":%llu,\"in_qlen\":%u,\"out_qlen\":%u}",
			       i ? "," : "", i, err ? "false" : "true",
			       (unsigned long long)s.arrivals, (unsigned long long)s.finished,
			       (unsigned long long)s.denied, (unsigned long long)s.taken,
			       s.in_qlen, s.out_qlen);
		else
			printf("  chain %u: %s arrivals %llu finished %llu denied %llu taken %llu "
			       "queues in %u out %u\n", i, err ? "(invalid counters)" : "",
			       (unsigned long long)s.arrivals, (unsigned long long)s.finished,
			       (unsigned long long)s.denied, (unsigned long long)s.taken,
			       s.in_qlen, s.out_qlen);
	}
	if (json)
		printf("]}\n");
	tcr_region_destroy(r);
	return 0;
}
