/* SPDX-License-Identifier: MIT */
/*
 * The shared flow table (ch_flow_*), seed 002: the TOE parses each
 * connection once; descriptors carry a reference (tcr_desc.flow) to an
 * entry holding the 5-tuple and the TCP state, which the VNFs of the
 * VM's chains read instead of tracking connections themselves.
 *
 * Layout, version 1 (one file per data region, mapped read-write by its
 * writer, the TOE, and read-only by the VNFs it is granted to):
 *   0     struct ch_flow_hdr (64 bytes)
 *   64    struct ch_flow_entry[nflows] (64 bytes each)
 * Every field is written by the TOE (t) only.  An entry is updated under
 * a sequence lock: seq is odd while it is written; readers copy the entry
 * and retry when seq was odd or changed (ch_flow_read).  gen changes each
 * time the entry is reused for another flow, so a reader that keeps
 * per-flow state (a VNF's 64-bit slot) notices reuse.
 *
 * Reuse only after a grace period: a closed entry is stamped with the
 * arrival counts of the VM's two chains (in, out: tcr_chain_counters
 * .arrivals, which the TOE itself bumps when it submits) and becomes free
 * only once both chains finished that many descriptors (.finished): a
 * chain releases in submission order, so every descriptor submitted
 * before the close has then left, and no VNF still works on it.
 *
 * Threads: the table handle belongs to one thread (the TOE's loop);
 * readers (VNFs) use ch_flow_read() on their own mapping.
 */
#ifndef TOCHAIN_CH_FLOW_H
#define TOCHAIN_CH_FLOW_H

#include <errno.h>
#include <linux/types.h>
#include <stdint.h>
#include <string.h>

#include <tochain/barrier.h>

#define CH_FLOW_MAGIC		0x31574f4c46484354ULL	/* "TCHFLOW1" */
#define CH_FLOW_VERSION		1
#define CH_FLOW_MAX		(1u << 22)

enum ch_flow_state {
	CH_FLOW_FREE		= 0,
	CH_FLOW_SYN		= 1,	/* handshake under way */
	CH_FLOW_ESTABLISHED	= 2,
	CH_FLOW_CLOSING		= 3,	/* FIN seen */
	CH_FLOW_CLOSED		= 4,	/* waiting for its grace period */
};

struct ch_flow_hdr {
	__u64 magic;		/* (t) CH_FLOW_MAGIC */
	__u32 version;		/* (t) CH_FLOW_VERSION */
	__u32 nflows;		/* (t) entries */
	__u8 pad[48];
};

struct ch_flow_key {
	__u8 family, l4proto;
	__u16 sport, dport;	/* host byte order */
	__u8 saddr[16], daddr[16];
};

struct ch_flow_entry {
	__u32 seq;		/* (t) sequence lock, odd while written */
	__u32 gen;		/* (t) bumped at each reuse */
	__u8 state;		/* (t) enum ch_flow_state */
	__u8 pad0[3];
	struct ch_flow_key key;	/* (t) 38 bytes */
	__u8 pad1[14];
};

_Static_assert(sizeof(struct ch_flow_hdr) == 64, "flow header");
_Static_assert(sizeof(struct ch_flow_entry) == 64, "flow entry");

/* Bytes of a flow table file of @nflows entries (page multiple). */
static inline uint64_t ch_flow_file_size(uint32_t nflows)
{
	uint64_t b = sizeof(struct ch_flow_hdr) + (uint64_t)nflows * sizeof(struct ch_flow_entry);

	return (b + 4095) & ~4095ull;
}

/*
 * Reader (VNF): copy entry @idx of a mapping of @map_size bytes into
 * @out, consistent (sequence lock, bounded retries).  0, -ERANGE (bad
 * index or table), -EAGAIN (kept changing), -ENOENT (free entry).
 * Inline so that VNFs need only this header.
 */
static inline int ch_flow_read(const void *map, uint64_t map_size, uint32_t idx,
			       struct ch_flow_entry *out)
{
	const struct ch_flow_hdr *h = (const struct ch_flow_hdr *)map;
	const struct ch_flow_entry *e;
	uint32_t n;

	if (!map || map_size < sizeof(*h) || tc_load_relaxed(&h->magic) != CH_FLOW_MAGIC)
		return -ERANGE;
	n = tc_load_relaxed(&h->nflows);
	if (idx >= n || ch_flow_file_size(n) > map_size)
		return -ERANGE;
	e = (const struct ch_flow_entry *)(h + 1) + idx;
	for (int tries = 0; tries < 8; tries++) {
		/* A1 pairs with the writer's R1 (seq odd before its stores). */
		uint32_t s1 = tc_load_acquire(&e->seq), s2;

		if (s1 & 1)
			continue;
		memcpy(out, (const void *)e, sizeof(*out));
		/* Our copy is complete before we re-read seq (pairs with R2). */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = tc_load_relaxed(&e->seq);
		if (s1 != s2)
			continue;
		out->seq = s1;
		return out->state == CH_FLOW_FREE ? -ENOENT : 0;
	}
	return -EAGAIN;
}

/* Writer side (TOE). */
struct ch_flows;

/* Create (truncate) @path with @nflows entries, all free.  NULL+errno. */
struct ch_flows *ch_flows_create(const char *path, uint32_t nflows);
void ch_flows_destroy(struct ch_flows *f);

/* The entry of @k, opened in @state if new.  Index, or -ENOSPC. */
int ch_flow_open(struct ch_flows *f, const struct ch_flow_key *k, uint8_t state);
/* Look up without opening: index or -ENOENT. */
int ch_flow_find(struct ch_flows *f, const struct ch_flow_key *k);
/* Change the TCP state of an open entry.  0 or -EINVAL. */
int ch_flow_set_state(struct ch_flows *f, uint32_t idx, uint8_t state);
/*
 * Close entry @idx after the last descriptor of the flow was submitted;
 * @arr_in/@arr_out: the two chains' arrival counts now.  It cannot be
 * found any more and is reused only after a reclaim past both.  0/-EINVAL.
 */
int ch_flow_close(struct ch_flows *f, uint32_t idx, uint64_t arr_in, uint64_t arr_out);
/*
 * Free the closed entries (oldest first) whose stamps both chains have
 * finished: @fin_in/@fin_out count the arrivals that finished with every
 * older one (ch_psched_settled).  Returns how many.
 */
unsigned int ch_flow_reclaim(struct ch_flows *f, uint64_t fin_in, uint64_t fin_out);
/* Entries free for reuse. */
uint32_t ch_flow_free_count(const struct ch_flows *f);
/* The mapping (for tests and for granting its path). */
const void *ch_flows_map(const struct ch_flows *f, uint64_t *size);

#endif /* TOCHAIN_CH_FLOW_H */
