/* SPDX-License-Identifier: MIT */
/*
 * Adaptive spin budgets (tcr_spin_*): how long a party that is about to
 * sleep on a doorbell may poll first.  Seed 003's "poll under load,
 * notify when idle", and DESIGN.md §6: polling pays only when a core is
 * free and the work arrives within the spin.
 *
 *  - The budget shrinks (halves, then 0) when a spin found nothing, and
 *    grows (doubles from TCR_SPIN_MIN_NS, up to the ceiling) when a sleep
 *    ended with work sooner than the ceiling: the spin would have caught
 *    it without the two context switches of a sleep and a wake-up.
 *  - It is 0 whenever the runnable threads of the machine outnumber the
 *    CPUs this thread may run on (the running count of /proc/loadavg,
 *    read at most every TCR_SPIN_RECHECK_NS, against sched_getaffinity):
 *    then a spin takes the CPU from the thread that would produce the
 *    awaited work.
 *
 * One struct per waiting thread (or per lock that serialises the waits):
 * no locking inside.  Reads /proc with raw system calls, so it is safe in
 * the preload runtime (no interposed libc call) and never fails: without
 * /proc the machine counts as not crowded and only the feedback rules.
 */
#ifndef TOCHAIN_SPIN_H
#define TOCHAIN_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#define TCR_SPIN_MIN_NS		1000u		/* first step up from 0 */
#define TCR_SPIN_RECHECK_NS	10000000ull	/* look at the run queue every 10 ms */

struct tcr_spin {
	uint32_t budget_ns;	/* what the next wait may spin, before crowding */
	uint32_t max_ns;	/* ceiling */
	uint32_t ncpus;		/* CPUs this thread may use (at init) */
	bool crowded;		/* runnable threads outnumbered ncpus at the last look */
	uint64_t recheck_ns;	/* CLOCK_MONOTONIC time of the next look */
};

/* Start at 0 (an idle party sleeps at once); never above @max_ns. */
void tcr_spin_init(struct tcr_spin *s, uint32_t max_ns);

/* Nanoseconds to poll before sleeping now: 0 when crowded. */
uint32_t tcr_spin_budget(struct tcr_spin *s);

/* A spin of the last budget ended: @found work, or ran out (shrink). */
void tcr_spin_spun(struct tcr_spin *s, bool found);

/* A sleep of @slept_ns ended with work: grow when it came within the ceiling. */
void tcr_spin_woke(struct tcr_spin *s, uint64_t slept_ns);

/*
 * Is a machine with /proc/loadavg text @loadavg crowded for a thread that
 * may use @ncpus CPUs?  Its fourth field is "running/total"; text that
 * does not parse is not crowded.  (The policy's input, exposed for tests.)
 */
bool tcr_spin_crowded_text(const char *loadavg, uint32_t ncpus);

#endif /* TOCHAIN_SPIN_H */
