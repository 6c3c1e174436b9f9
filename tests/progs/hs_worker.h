/* SPDX-License-Identifier: MIT */
/*
 * hs_worker — stand-in VNFs and VMs for tochain-sched (hsw_*): real
 * threads with a calibrated CPU cost per packet, so the daemon can be
 * tested on real threads without QEMU.
 *
 * One process plays every party of a small host:
 *   - a *chain* has an input queue fed at a fixed rate (load x SLA,
 *     capped at 2 s of SLA, the rest dropped), one synchronous-partition
 *     VNF with N service threads (data parallel) that spend vnf_us of CPU
 *     per packet, and an output queue;
 *   - a *VM* has vCPU threads that take packets from the output queues of
 *     its chains (oldest head first) at rx_us of CPU per packet; a
 *     *tenant* VM's vCPUs spin all the time (CPU-bound batch work);
 *   - the main thread is the packet scheduler: every millisecond it
 *     admits arrivals and writes the chains' counters into a region file
 *     (tcr_counters_*), the daemon's only view of the chains.
 * CPU cost is spent by spinning until the thread's own CPU clock
 * (CLOCK_THREAD_CPUTIME_ID) has advanced by the cost, so a packet costs
 * the same CPU whether the thread is preempted, frozen or not.
 *
 * An idle service thread sleeps on a futex (the chain's kick word) that
 * the main thread bumps when it admits packets, as the real runtime's
 * threads sleep on their ring (vnf_recv): tochain-sched sizes a VNF's
 * quota from its threads' CPU time per packet, and a thread that polled
 * while idle (100 us naps cost ~14% of a CPU here) read as a dearer
 * packet the more it idled.
 *
 * Service threads raise early end (a) in the region when they find
 * their input queue empty (once per period), and stamp CLOCK_MONOTONIC
 * when they first run in each period (the period number the daemon
 * closes in the counters), so the gang skew of a chain is max - min of
 * its threads' stamps.
 *
 * Threading: queues are lock-free counters (atomics, relaxed unless
 * noted): a frozen thread never holds anything another one waits for.
 * Pairs: chain.arrived is stored (seq_cst, so release) by the main
 * thread and loaded with acquire by service threads.  The sleep: a
 * service thread reads chain.kick, bumps chain.sleepers, then loads
 * chain.arrived; the main thread stores chain.arrived, bumps chain.kick,
 * then loads chain.sleepers; all of them seq_cst, so either the thread
 * sees the packets or the main thread sees the sleeper and wakes it (a
 * kick after the thread read chain.kick fails its FUTEX_WAIT).
 * chain.done is bumped with release by a service thread and loaded
 * with acquire by VM threads and the main thread; fin_ts[i] (the head's
 * arrival time, for Algorithm 2) is written right after and may be read
 * one lap stale for a moment, which only misorders heads briefly;
 * stamp_p[r][s] is stored with release after stamp_ns[r][s] and loaded
 * with acquire by the report.  Claims (claimed, vm_claimed) are relaxed CAS: they order
 * nothing but themselves.
 */
#ifndef HS_WORKER_H
#define HS_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define HSW_MAX_CHAINS	16
#define HSW_MAX_VMS	16
#define HSW_MAX_THREADS	8
#define HSW_RING	65536		/* finish-time ring per chain */
#define HSW_STAMPS	512		/* periods of first-run stamps kept */

struct hsw_chain {
	char name[48];
	uint32_t vm;			/* VM index */
	uint64_t sla;			/* packets/s */
	double load;			/* offered = load x sla */
	uint64_t vnf_ns;		/* CPU per packet in the VNF */
	uint32_t nthreads;
	/* queues (atomics) */
	uint64_t arrived, claimed, done, vm_claimed, taken, dropped;
	uint32_t kick;			/* futex word: bumped on arrivals */
	uint32_t sleepers;		/* service threads asleep on kick */
	uint64_t *fin_ts;		/* [HSW_RING] finish time of packet i */
	/* per-thread first-run stamps: stamp[r][p % HSW_STAMPS] = (p, ns) */
	uint64_t stamp_p[HSW_MAX_THREADS][HSW_STAMPS];
	uint64_t stamp_ns[HSW_MAX_THREADS][HSW_STAMPS];
	pid_t tid[HSW_MAX_THREADS];
	/* main thread's bookkeeping */
	uint64_t gen;			/* packets generated */
	uint64_t pub_arrived, pub_done, pub_taken;	/* written to counters */
	uint64_t m_taken, m_gen, m_dropped;		/* at measure start */
};

struct hsw_vm {
	char name[48];
	bool tenant;
	uint32_t nvcpu;
	uint64_t rx_ns;			/* CPU per packet taken */
	pid_t tid[HSW_MAX_THREADS];
	uint64_t work_ns;		/* tenant: CPU spent (atomic) */
	uint64_t m_work;
};

struct hsw;

/* What a thread is told at start. */
struct hsw_targ {
	struct hsw *w;
	uint32_t idx, r;		/* chain or VM index, thread number */
};

struct hsw {
	uint32_t nchain, nvm;
	struct hsw_chain chain[HSW_MAX_CHAINS];
	struct hsw_vm vm[HSW_MAX_VMS];
	struct tcr_region *region;
	double headroom;		/* f registered = (1 - headroom) / vnf cost */
	bool aligned;			/* measure whole daemon periods */
	int stop;			/* atomic */
	int go;				/* atomic: threads start work */
	uint32_t nstarted;		/* atomic */
	struct hsw_targ targ[HSW_MAX_CHAINS * HSW_MAX_THREADS + HSW_MAX_VMS * HSW_MAX_THREADS];
};

/* Parses "chain NAME k=v ...", "vm NAME k=v ..." or "tenant NAME k=v ..."
 * from argv[*i] on; advances *i.  0 or -EINVAL with @why. */
int hsw_parse(struct hsw *w, int argc, char **argv, int *i, char *why, size_t len);

/* Creates the region at @path, starts every thread (idle until go). */
int hsw_start(struct hsw *w, const char *path);

/* Registers every thread with the daemon at @sock; 0 or -errno. */
int hsw_register(struct hsw *w, const char *sock, const char *region, char *why, size_t len);

/* Runs the packet scheduler for @warmup + @measure seconds, then prints
 * the results (JSON if @json) to @out.  Threads are left running. */
void hsw_run(struct hsw *w, double warmup, double measure, bool json, FILE *out);

/* Jain's fairness index of @n values (1 for n = 0). */
double hsw_jain(const double *x, uint32_t n);

#endif
