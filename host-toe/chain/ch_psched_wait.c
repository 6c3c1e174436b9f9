// SPDX-License-Identifier: MIT
/*
 * The packet scheduler's sleep: one futex_waitv(2) on its doorbell (a
 * private futex the TOE's submits ring, F1/F2 in ch_psched.c) and on the
 * cons_seq word of the verdict (TX) ring of every VNF thread that holds
 * work of ours (shared futexes in the VNF regions, rung by vnf_flush()
 * after tcr_ring_prod_kick_needed(), ring.c F1/F2).  So a verdict wakes
 * the scheduler at once, and nobody polls.
 *
 * DEAF CHAINS (issue 15).  When every VNF thread that holds work of ours
 * is stalled: still has some of it untaken on its RX ring and gave no
 * verdict for STALL_NS (frozen by the CPU scheduler outside its slot, or
 * waiting for a CPU), and we wait on the verdict word of each, a chain
 * with descriptors in processing (and room for more results) is deaf
 * while we sleep: its submits ring no doorbell (chain_rt.deaf, read by
 * ch_psched_submit after F2) and its waiting input does not keep us
 * awake.  Such input could only join the untaken work, and what it needs
 * is the chain's head, whose VNF's verdicts wake us anyway; then one
 * wake-up admits everything that arrived meanwhile.  Before, under sync,
 * every request that arrived while its VNFs were frozen woke the
 * scheduler once for nothing but that (bench 92, heavy load: more
 * wake-ups than requests).  A chain with nothing in processing is never
 * deaf, so an idle or pass-through chain's first arrival is dispatched
 * at once, and a VNF that keeps answering (the unscheduled path) never
 * stalls.
 * The sleep's timeout (SLEEP_NS) bounds the delay if a VNF stops ringing;
 * the chains' queue counters are written before every sleep, so the CPU
 * scheduler never judges a chain idle from numbers older than its input.
 *
 * TRUST.  A VNF region is writable by its VNF, which may run in a VM
 * (guest mode) whose futex wake-ups never reach the host, or be hostile.
 * Its wait flag and cons_seq are hints: a VNF that does not ring costs
 * the scheduler naps of NAP_NS while it holds work (what the scheduler
 * did for every VNF before), one that rings is learnt from the word
 * having moved (vchan.rings), and one that moves the word without giving
 * verdicts (wake-ups that find nothing, FRUITLESS_MAX in a row) loses its
 * word for a while: the scheduler then waits on its doorbell alone,
 * looking again every FRUITLESS_NS.  Nothing a VNF writes can make the
 * scheduler sleep forever (every wait has a timeout) or spin.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/ring.h>
#include <tochain/util.h>

#include "ch_psched_sla.h"
#include "ch_psched_wait.h"

#define STALL_NS	1000000ull	/* untaken work and no verdict this long: stalled */

/*
 * Deaf (top): the VNF threads holding work are @stalled and chain @c has
 * descriptors in processing; not when its output queue is what holds
 * admission back (results wait for the TOE, whose takes ring nothing).
 */
static bool chain_deaf(struct ch_psched *s, uint32_t c, bool stalled)
{
	struct chain_rt *ch = &s->chain[c];

	return stalled && ch->inflight && ch_queue_room(ch->out) > ch->inflight;
}

/* Input waits on a chain that is not deaf: a reason not to sleep. */
static bool inputs_waiting(struct ch_psched *s, bool stalled)
{
	for (uint32_t c = 0; c < s->cfg.nchains; c++)
		if (!chain_deaf(s, c, stalled) && ch_queue_len(s->chain[c].in))
			return true;
	return false;
}

/* The single-futex wait of kernels without futex_waitv (before 5.16). */
static void wait_doorbell(struct ch_psched *s, uint32_t bell, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	syscall(SYS_futex, &s->doorbell, FUTEX_WAIT_PRIVATE, bell, &ts, NULL, 0);
}

bool ch_psched_wait(struct ch_psched *s)
{
	struct futex_waitv w[FUTEX_WAITV_MAX];
	struct tcr_ring *rings[FUTEX_WAITV_MAX];
	struct vchan *vcs[FUTEX_WAITV_MAX];
	uint32_t nvnfs = tc_load_acquire(&s->nvnfs);
	bool out = s->nfree != s->cfg.max_flight || s->shead != s->stail;
	bool fruitless = s->fruitless >= FRUITLESS_MAX, quiet = fruitless, ready = false;
	bool stalled = out && !fruitless;	/* every holder of work stalled (top) */
	bool held = false;			/* some VNF thread holds work */
	uint64_t ns = SLEEP_NS;
	uint32_t bell = tc_load_acquire(&s->doorbell);
	uint64_t t = tu_now_ns();
	struct timespec now, end;
	unsigned int n = 1;
	long r;

	w[0] = (struct futex_waitv){ .uaddr = (uintptr_t)&s->doorbell, .val = bell,
				     .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	for (uint32_t v = 0; v < nvnfs && !ready; v++) {
		struct vnf *vn = &s->vnf[v];

		if (!tc_load_acquire(&vn->present) || vn->failed)
			continue;
		for (uint32_t c = 0; c < vn->nthreads; c++) {
			struct tcr_ring *tx = &vn->chan[c].ring[TCR_CH_TX];
			struct vchan *vc = &vn->vc[c];

			if (!vc->outstanding)
				continue;
			held = true;
			if (!vc->rings)
				quiet = true;
			if (fruitless || n == FUTEX_WAITV_MAX) {
				quiet = true;
				continue;
			}
			/* ring.c F1: its wait flag is up before we re-check it */
			w[n] = (struct futex_waitv){ .uaddr = (uintptr_t)&tx->ctl->cons_seq,
						     .val = tcr_ring_cons_wait_prepare(tx),
						     .flags = FUTEX_32 };
			rings[n] = tx;
			vcs[n] = vc;
			n++;
			if (tcr_ring_count(tx) != 0)
				ready = true;
			/* stalled: work untaken, no verdict for STALL_NS (top) */
			if (tcr_ring_count(&vn->chan[c].ring[TCR_CH_RX]) <= 0 ||
			    t - vc->last_progress < STALL_NS)
				stalled = false;
		}
	}
	stalled = stalled && held && !quiet && !ready;
	for (uint32_t c = 0; c < s->cfg.nchains; c++)
		tc_store_relaxed(&s->chain[c].deaf, chain_deaf(s, c, stalled));
	/* Pairs with the submitter's load-acquire: it sees this sleep's deaf flags. */
	tc_store_release(&s->sleeping, 1);
	/* F1: the flag is visible before we re-check the queues; pairs with F2. */
	tc_fence_seq_cst();
	/*
	 * Input that poll() could not admit (out of flights or of output
	 * room) does not count once wake-ups keep finding nothing: then the
	 * scheduler looks again every FRUITLESS_NS instead of spinning.
	 */
	if (!fruitless && inputs_waiting(s, stalled))
		ready = true;
	if (quiet)
		ns = fruitless ? FRUITLESS_NS : NAP_NS;
	r = 0;
	if (!ready) {
		ch_psched_sla_queues(s);
		clock_gettime(CLOCK_MONOTONIC, &now);
		end.tv_sec = now.tv_sec + (time_t)(ns / 1000000000ull);
		end.tv_nsec = now.tv_nsec + (long)(ns % 1000000000ull);
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
		r = syscall(SYS_futex_waitv, w, n, 0, &end, CLOCK_MONOTONIC);
		if (r < 0 && errno == ENOSYS) {
			wait_doorbell(s, bell, quiet || !out ? ns : NAP_NS);
			r = tc_load_acquire(&s->doorbell) != bell ? 0 : -1;
			errno = ETIMEDOUT;
		}
	}
	tc_store_relaxed(&s->sleeping, 0);
	for (unsigned int i = 1; i < n; i++) {
		tcr_ring_cons_wait_done(rings[i]);
		/* the word moved: this VNF thread rings (a hint, see the top) */
		if (tc_load_relaxed(&rings[i]->ctl->cons_seq) != w[i].val)
			vcs[i]->rings = true;
	}
	return !(r < 0 && errno == ETIMEDOUT);
}
