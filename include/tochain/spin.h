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
 *  - It is 0 while the host is crowded for this thread: then a spin
 *    takes the CPU from the thread that would produce the awaited work.
 *    Crowded means the waiting thread itself waited for a CPU (its run
 *    delay, the second field of /proc/thread-self/schedstat) more than
 *    1/TCR_SPIN_DELAY_SHARE of the wall time since the last look (at most
 *    every TCR_SPIN_RECHECK_NS).  The machine's run queue (the running
 *    count of /proc/loadavg against sched_getaffinity), the signal used
 *    before, said "crowded" whenever one more thread was runnable than
 *    there are CPUs, for an instant, anywhere: on a 2-CPU host under a
 *    closed-loop load that is nearly always, and the TOE alone lost a
 *    quarter of its requests per second to sleeps and wake-ups a short
 *    spin would have saved (docs/EVALUATION.md).  The run delay counts
 *    only the contention this thread met.  It is the fallback when
 *    schedstat cannot be read (kernels without CONFIG_SCHED_INFO), and
 *    for a look without a baseline: the thread's first, another thread's
 *    on a shared struct, or one after TCR_SPIN_BASELINE_NS without a look.
 *
 * One struct per waiting thread (or per lock that serialises the waits;
 * a look by another thread than the last starts that thread's baseline):
 * no locking inside.  Reads /proc with raw system calls, so it is safe in
 * the preload runtime (no interposed libc call) and never fails: without
 * /proc the machine counts as not crowded and only the feedback rules.
 */
#ifndef TOCHAIN_SPIN_H
#define TOCHAIN_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#define TCR_SPIN_MIN_NS		1000u		/* first step up from 0 */
#define TCR_SPIN_RECHECK_NS	10000000ull	/* look at the run delay every 10 ms */
#define TCR_SPIN_DELAY_SHARE	8u		/* crowded: run delay > 1/8 of the time */
#define TCR_SPIN_BASELINE_NS	50000000ull	/* an older last look is no baseline */

struct tcr_spin {
	uint32_t budget_ns;	/* what the next wait may spin, before crowding */
	uint32_t max_ns;	/* ceiling */
	uint32_t ncpus;		/* CPUs this thread may use (at init) */
	bool crowded;		/* the verdict of the last look */
	uint64_t recheck_ns;	/* CLOCK_MONOTONIC time of the next look */
	uint64_t look_ns;	/* ... of the last look at the run delay, 0: none */
	uint64_t delay_ns;	/* the run delay it read */
	int32_t tid;		/* the thread it read it of */
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

/*
 * The run delay (ns) in /proc/<tid>/schedstat text @schedstat ("cpu_ns
 * delay_ns timeslices"): true with *@delay_ns set, false if it does not
 * parse.  (The policy's input, exposed for tests.)
 */
bool tcr_spin_schedstat_text(const char *schedstat, uint64_t *delay_ns);

/* Is a thread that waited @delay_ns for a CPU during @wall_ns crowded? */
bool tcr_spin_crowded_delay(uint64_t delay_ns, uint64_t wall_ns);

#endif /* TOCHAIN_SPIN_H */
