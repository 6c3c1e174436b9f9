// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: a guest scribbles anywhere in its region, then the
 * host-side accessors run over it.  Nothing may crash, read out of
 * bounds or break the host's invariants (every buffer has exactly one
 * holder; counts add up to nbufs).
 *
 * Input: a list of patches {u32 offset, u8 length, bytes} applied to a
 * freshly formatted region while the host has channels open and buffers
 * granted and delivered; the first byte chooses whether the header is
 * fair game too (then attach validation runs on the result).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tochain/chan.h>
#include <tochain/counters.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>

#define SIZE (256 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_conserved(const struct tcr_pool *p, uint32_t nch, uint32_t nbufs)
{
	int sum = 0;

	for (uint32_t h = 0; h < TCR_HOLDER_CH(nch); h++)
		sum += tcr_pool_count(p, h);
	if (sum != (int)nbufs)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *mem;
	const struct tcr_params prm = {
		.name = "fuzz", .kind = TCR_KIND_GUEST, .nbufs = 16, .slot_size = 64,
		.nchannels = 2, .nchains = 1, .ring_size = 16,
	};
	struct tcr_region *r, *again;
	struct tcr_pool *p;
	struct tcr_chan ch[2];
	struct tcr_counters_snap snap;
	uint32_t idx[16];
	size_t pos = 1;
	uint32_t min_off;

	if (!mem)
		mem = aligned_alloc(4096, SIZE);
	memset(mem, 0, SIZE);
	r = tcr_region_create_mem(mem, SIZE, &prm);
	if (!r)
		abort();
	p = tcr_pool_create(r);
	tcr_chan_open(&ch[0], r, 0);
	tcr_chan_open(&ch[1], r, 1);
	tcr_chan_grant(&ch[0], p, 4);
	{
		unsigned int k = tcr_pool_alloc(p, idx, 4);

		tcr_chan_send(&ch[1], p, idx, k);
	}

	/* The guest's scribbles. */
	min_off = (size && (data[0] & 1)) ? 0 : sizeof(struct tcr_header);
	while (pos + 5 <= size) {
		uint32_t off, len;

		memcpy(&off, data + pos, 4);
		len = data[pos + 4];
		pos += 5;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		off = min_off + off % (uint32_t)(r->geo.region_size - min_off);
		if (off + len > r->geo.region_size)
			len = (uint32_t)r->geo.region_size - off;
		memcpy(mem + off, data + pos, len);
		pos += len;
	}

	/* The host at work on what the guest left. */
	for (int round = 0; round < 3; round++) {
		for (int c = 0; c < 2; c++) {
			for (int w = TCR_CH_TX; w <= TCR_CH_DONE; w += 2) {
				int n = tcr_chan_recv(&ch[c], p, w, idx, 16);

				if (n < 0) {
					tcr_chan_close(&ch[c], p);
					tcr_chan_open(&ch[c], r, (uint32_t)c);
					continue;
				}
				for (int i = 0; i < n; i++) {
					struct tcr_desc d;

					if (tcr_desc_load(r, idx[i], &d) == 0) {
						const uint8_t *pl = tcr_desc_payload(r, &d);
						volatile uint8_t sink = 0;

						for (uint32_t b = 0; b < d.len; b++)
							sink ^= pl[b];
						(void)sink;
					}
				}
				if (n > 0 && tcr_pool_free(p, idx, (unsigned int)n))
					abort();	/* just taken: must be host-held */
			}
			tcr_chan_grant(&ch[c], p, 2);
			if (tcr_ring_count(&ch[c].ring[TCR_CH_RX]) < 0)
				tcr_chan_close(&ch[c], p);
		}
		check_conserved(p, 2, 16);
	}
	tcr_counters_snapshot(tcr_region_chain(r, 0), NULL, 16, &snap);
	tcr_counters_mean_taken(tcr_region_chain(r, 0), 8);
	tcr_region_stale(r);

	/* A host attaching afresh (a restarted TOE) validates the header. */
	again = tcr_region_attach_mem(mem, SIZE, TCR_ATTACH_HOST);
	if (again) {
		struct tcr_desc d;

		for (uint32_t i = 0; i < again->geo.nbufs; i++)
			tcr_desc_load(again, i, &d);
		if (again->geo.region_size > SIZE)
			abort();
		tcr_region_destroy(again);
	}

	tcr_chan_close(&ch[0], p);
	tcr_chan_close(&ch[1], p);
	if (tcr_pool_count(p, TCR_HOLDER_FREE) + tcr_pool_count(p, TCR_HOLDER_HOST) != 16)
		abort();
	tcr_pool_destroy(p);
	tcr_region_destroy(r);
	return 0;
}
