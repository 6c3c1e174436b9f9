// SPDX-License-Identifier: MIT
/*
 * Lock-free rings of descriptor indices.  The contract, the trust rules
 * and the memory-ordering pairs are in include/tochain/ring.h.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <tochain/barrier.h>
#include <tochain/ring.h>

enum ring_behaviour { RING_FIXED, RING_VARIABLE };

size_t tcr_ring_bytes(uint32_t size)
{
	size_t b = sizeof(struct tcr_ring_ctl) + (size_t)size * sizeof(__u32);

	return (b + TCR_CACHELINE - 1) & ~(size_t)(TCR_CACHELINE - 1);
}

void tcr_ring_format(void *mem, uint32_t size)
{
	memset(mem, 0, tcr_ring_bytes(size));
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

int tcr_ring_attach(struct tcr_ring *r, void *mem, uint32_t size,
		    uint32_t limit, uint32_t flags)
{
	if (!mem || !is_pow2(size) || size > TCR_MAX_RING || limit == 0 ||
	    (flags & ~(TCR_RING_MP | TCR_RING_MC)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->ctl = mem;
	r->entries = (__u32 *)(r->ctl + 1);
	r->size = size;
	r->mask = size - 1;
	r->limit = limit;
	r->flags = flags;
	/* Starting positions, read once: later the handle trusts only itself. */
	r->prod = tc_load_acquire(&r->ctl->prod_tail);
	r->cons = tc_load_acquire(&r->ctl->cons_tail);
	r->seen_cons = r->cons;
	r->seen_prod = r->prod;
	return 0;
}

/*
 * Wait until the parties ahead of us on a multi-party side published
 * @pos on *tail.  Bounded: a party that died after claiming never
 * publishes, and then the side is wedged until the host resets it.
 */
static int wait_turn(const __u32 *tail, uint32_t pos)
{
	struct timespec t0, now;
	unsigned int spins = 0;

	while (tc_load_acquire(tail) != pos) {
		if (++spins < 4096) {
			tc_cpu_relax();
			continue;
		}
		if (spins == 4096) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			continue;
		}
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)(now.tv_sec - t0.tv_sec) * 1000000000ull +
		    (uint64_t)(now.tv_nsec - t0.tv_nsec) > TCR_RING_STALL_NS)
			return -ETIMEDOUT;
	}
	return 0;
}

/*
 * A multi-party side read its shared head, then the peer's position.  If
 * the peer's position looks impossible, our head may just have been stale
 * (others moved it meanwhile): re-read it, and report corruption only if
 * it did not move.
 */
static bool still_moving(const __u32 *head, uint32_t *seen)
{
	uint32_t now = tc_load_acquire(head);

	if (now == *seen)
		return false;
	*seen = now;
	return true;
}

static void copy_in(struct tcr_ring *r, uint32_t pos, const uint32_t *idx, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		tc_store_relaxed(&r->entries[(pos + i) & r->mask], idx[i]);
}

/* Reads each entry once; fails on the first index out of range. */
static int copy_out(const struct tcr_ring *r, uint32_t pos, uint32_t *idx, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t v = tc_load_relaxed(&r->entries[(pos + i) & r->mask]);

		if (tc_unlikely(v >= r->limit))
			return -EBADMSG;
		idx[i] = v;
	}
	return 0;
}

/* How many of @n fit given @used entries in flight; -EPROTO if corrupt. */
static int fit(const struct tcr_ring *r, uint32_t used, unsigned int n,
	       enum ring_behaviour how)
{
	uint32_t room;

	if (tc_unlikely(used > r->size))
		return -EPROTO;
	room = r->size - used;
	if (n > room)
		return how == RING_FIXED ? 0 : (int)room;
	return (int)n;
}

static int enqueue(struct tcr_ring *r, const uint32_t *idx, unsigned int n,
		   enum ring_behaviour how)
{
	struct tcr_ring_ctl *c = r->ctl;
	uint32_t head;
	int k;

	if (n > r->size)
		n = how == RING_FIXED ? r->size + 1 : r->size;

	if (!(r->flags & TCR_RING_MP)) {
		head = r->prod;
		k = fit(r, head - r->seen_cons, n, how);
		if (k < 0 || (unsigned int)k < n) {
			/* A1: pairs with the consumer's R2, entries it read are free. */
			r->seen_cons = tc_load_acquire(&c->cons_tail);
			k = fit(r, head - r->seen_cons, n, how);
		}
		if (k <= 0)
			return k;
		copy_in(r, head, idx, (unsigned int)k);
		/* R1: pairs with the consumer's A2; entries before position. */
		tc_store_release(&c->prod_tail, head + (uint32_t)k);
		r->prod = head + (uint32_t)k;
		return k;
	}

	/* A3: a claimed head comes with the consumer position its claimer saw. */
	head = tc_load_acquire(&c->prod_head);
	for (;;) {
		/* A1 */
		k = fit(r, head - tc_load_acquire(&c->cons_tail), n, how);
		if (k < 0 && still_moving(&c->prod_head, &head))
			continue;	/* our head was stale, not the ring corrupt */
		if (k <= 0)
			return k;
		/* R3: publishes our claim with what we read before it. */
		if (__atomic_compare_exchange_n(&c->prod_head, &head, head + (uint32_t)k,
						0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	copy_in(r, head, idx, (unsigned int)k);
	if (wait_turn(&c->prod_tail, head))
		return -ETIMEDOUT;
	/* R1 */
	tc_store_release(&c->prod_tail, head + (uint32_t)k);
	return k;
}

static int dequeue(struct tcr_ring *r, uint32_t *idx, unsigned int n,
		   enum ring_behaviour how)
{
	struct tcr_ring_ctl *c = r->ctl;
	uint32_t tail, avail;
	int err;

	if (!(r->flags & TCR_RING_MC)) {
		tail = r->cons;
		avail = r->seen_prod - tail;
		if (avail < n) {
			/* A2: pairs with the producer's R1, entries are written. */
			r->seen_prod = tc_load_acquire(&c->prod_tail);
			avail = r->seen_prod - tail;
		}
		if (tc_unlikely(avail > r->size))
			return -EPROTO;
		if (n > avail) {
			if (how == RING_FIXED)
				return 0;
			n = avail;
		}
		if (n == 0)
			return 0;
		err = copy_out(r, tail, idx, n);
		if (err)
			return err;
		/* R2: pairs with the producer's A1; we are done reading. */
		tc_store_release(&c->cons_tail, tail + n);
		r->cons = tail + n;
		return (int)n;
	}

	/* A4: as A3, for consumers. */
	tail = tc_load_acquire(&c->cons_head);
	for (;;) {
		unsigned int k = n;

		/* A2 */
		avail = tc_load_acquire(&c->prod_tail) - tail;
		if (tc_unlikely(avail > r->size)) {
			if (still_moving(&c->cons_head, &tail))
				continue;	/* our tail was stale */
			return -EPROTO;
		}
		if (k > avail) {
			if (how == RING_FIXED)
				return 0;
			k = avail;
		}
		if (k == 0)
			return 0;
		/* Validate before claiming, so a bad entry consumes nothing. */
		err = copy_out(r, tail, idx, k);
		if (err) {
			if (still_moving(&c->cons_head, &tail))
				continue;	/* entries were reused under us */
			return err;
		}
		/* R4: claim; entries were read before the claim is visible. */
		if (__atomic_compare_exchange_n(&c->cons_head, &tail, tail + k, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			if (wait_turn(&c->cons_tail, tail))
				return -ETIMEDOUT;
			/* R2 */
			tc_store_release(&c->cons_tail, tail + k);
			return (int)k;
		}
	}
}

int tcr_ring_enqueue_burst(struct tcr_ring *r, const uint32_t *idx, unsigned int n)
{
	return enqueue(r, idx, n, RING_VARIABLE);
}

int tcr_ring_enqueue_bulk(struct tcr_ring *r, const uint32_t *idx, unsigned int n)
{
	return enqueue(r, idx, n, RING_FIXED);
}

int tcr_ring_dequeue_burst(struct tcr_ring *r, uint32_t *idx, unsigned int n)
{
	return dequeue(r, idx, n, RING_VARIABLE);
}

int tcr_ring_dequeue_bulk(struct tcr_ring *r, uint32_t *idx, unsigned int n)
{
	return dequeue(r, idx, n, RING_FIXED);
}

int tcr_ring_count(const struct tcr_ring *r)
{
	/* Snapshot of both published positions; either may be the peer's. */
	uint32_t cons = tc_load_acquire(&r->ctl->cons_tail);
	uint32_t used = tc_load_acquire(&r->ctl->prod_tail) - cons;

	if (used > r->size)
		return -EPROTO;
	return (int)used;
}

uint32_t tcr_ring_cons_wait_arm(struct tcr_ring *r, uint32_t how)
{
	uint32_t seq = tc_load_acquire(&r->ctl->cons_seq);

	tc_store_relaxed(&r->ctl->cons_wait, how);
	/* F1: our wait flag is visible before we re-check the ring; pairs with F2. */
	tc_fence_seq_cst();
	return seq;
}

uint32_t tcr_ring_cons_wait_prepare(struct tcr_ring *r)
{
	return tcr_ring_cons_wait_arm(r, TCR_WAKE_FUTEX);
}

void tcr_ring_cons_wait_done(struct tcr_ring *r)
{
	tc_store_relaxed(&r->ctl->cons_wait, 0);
}

uint32_t tcr_ring_prod_kick(struct tcr_ring *r)
{
	/* F2: our publication is visible before we look at the flag; pairs with F1. */
	tc_fence_seq_cst();
	/* Whoever takes the flag down rings; the rest find the consumer woken. */
	if (!tc_load_relaxed(&r->ctl->cons_wait))
		return 0;
	return tc_xchg_relaxed(&r->ctl->cons_wait, 0);
}

bool tcr_ring_prod_kick_needed(struct tcr_ring *r)
{
	return tcr_ring_prod_kick(r) != 0;
}

__u32 *tcr_ring_kick_consumer(struct tcr_ring *r)
{
	tc_fetch_add_release(&r->ctl->cons_seq, 1);
	return &r->ctl->cons_seq;
}
