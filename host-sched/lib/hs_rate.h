/* SPDX-License-Identifier: MIT */
/*
 * hs_rate — a VNF's measured service rate for one chain: the quota
 * feedback that sizes eq. 2 from what the real path finishes.
 *
 * Eq. 2 gives VNF k of chain i q_ik = ceil(t_i·C / (f_ik·R)) ticks, with
 * f_ik calibrated once, one thread on a dedicated pCPU.  On a real chain
 * a packet costs more than the calibration saw (cache and TLB misses
 * after a freeze, wake-ups, interrupts charged to the thread, a busy
 * host), and t_i counts packets of the chain the SLA is set on while the
 * VNF may also serve the VM's other direction.  So the quota is sized
 * from
 *
 *     f̂_ik = F_i / B_ik
 *
 * F_i the packets of the SLA's own unit the chain finished in the period
 * (t_i's unit: the descriptors of the chain the SLA is set on, one per
 * request for requests that fit one descriptor), B_ik the time VNF k's
 * service threads were busy in it (their CPU time, summed over its R
 * threads: not frozen, not asleep, not waiting for a CPU): packets per
 * CPU-second of a thread, eq. 2's f measured in t's unit on the path as
 * it runs.  Time a thread waited for its CPU is left out: a thread that
 * shares its pCPU (gang presence, standby in tochain-sched) would
 * otherwise read slower the more it waits, get a larger quota, and wait
 * more.
 * Each period with at least HS_RATE_MIN_PKTS packets is folded into an
 * exponential mean of the cost 1/f̂ (weight HS_RATE_ALPHA); the
 * calibrated f is the starting point and bounds how far the estimate may
 * move (HS_RATE_MAX_DRIFT either way), because F_i comes from counters in
 * a region a guest can write.  The quota then is
 *
 *     q_ik = ceil(t_i·C·(1 + HS_RATE_HEADROOM) / (f̂_ik·R)),  1 <= q_ik <= C.
 *
 * The headroom costs little: a slot whose input runs dry ends early.
 *
 * Pure functions over caller memory; safe from any thread.
 */
#ifndef HS_RATE_H
#define HS_RATE_H

#include <stdbool.h>
#include <stdint.h>

#define HS_RATE_MIN_PKTS	4	/* fewer packets in a period: no sample */
#define HS_RATE_ALPHA		0.5	/* weight of the newest period */
#define HS_RATE_MAX_DRIFT	8.0	/* f̂ stays within f/8 .. 8f */
#define HS_RATE_HEADROOM	0.20	/* on top of the measured need: ticks
					 * lost to freezing, interrupts, others */

struct hs_rate {
	double cost_s;		/* 1/f̂: busy seconds of one thread per packet */
	double cal_cost_s;	/* 1/f, the calibrated starting point */
	uint64_t samples;	/* periods folded in; 0: eq. 2 as admitted */
};

/* Starts from the calibrated @f_pps (> 0; 0 is taken as 1). */
void hs_rate_init(struct hs_rate *r, uint64_t f_pps);

/*
 * Folds one period in: @served packets (t's unit) finished while the
 * VNF's threads were busy @busy_s seconds in all.  Returns true if the
 * period was taken (at least HS_RATE_MIN_PKTS packets and busy_s > 0).
 */
bool hs_rate_update(struct hs_rate *r, uint64_t served, double busy_s);

/* f̂ in packets per second of one busy thread. */
double hs_rate_f(const struct hs_rate *r);

/*
 * q_ik from f̂ for SLA @sla_pps, @period ticks (C) and @threads service
 * threads: ceil(t·C·(1 + headroom)·cost / R), at least 1 (0 for t = 0),
 * at most C.
 */
uint32_t hs_rate_ticks(const struct hs_rate *r, uint64_t sla_pps, uint32_t period,
		       uint32_t threads);

#endif
