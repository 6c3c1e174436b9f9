/* SPDX-License-Identifier: MIT */
/*
 * TSC timestamps (tcr_tsc_*): descriptors carry the TSC of the payload's
 * arrival (tens of ns to take, against hundreds for gettimeofday; seed
 * 004).  A calibration against CLOCK_MONOTONIC_RAW converts TSC ticks to
 * nanoseconds as ns = (ticks * mult) >> shift.  Off x86, tcr_tsc_now()
 * returns CLOCK_MONOTONIC_RAW nanoseconds and the conversion is the
 * identity; on x86 without an invariant TSC (cal.invariant false) the
 * conversion is approximate.
 */
#ifndef TOCHAIN_TSC_H
#define TOCHAIN_TSC_H

#include <stdbool.h>
#include <stdint.h>

struct tcr_tsc_cal {
	uint64_t hz;		/* ticks per second */
	uint32_t mult;		/* ns = (ticks * mult) >> shift */
	uint32_t shift;
	bool invariant;		/* false: ticks are nanoseconds already */
};

static inline uint64_t tcr_tsc_now(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	extern uint64_t tcr_tsc_fallback_now(void);
	return tcr_tsc_fallback_now();
#endif
}

/*
 * The process-wide calibration, measured on first use (about 20 ms) and
 * cached; thread-safe.
 */
const struct tcr_tsc_cal *tcr_tsc_calibration(void);

/* Derive mult/shift for @hz ticks per second (exposed for tests). */
void tcr_tsc_cal_from_hz(struct tcr_tsc_cal *cal, uint64_t hz);

static inline uint64_t tcr_tsc_to_ns(const struct tcr_tsc_cal *cal, uint64_t ticks)
{
	return (uint64_t)(((unsigned __int128)ticks * cal->mult) >> cal->shift);
}

#endif /* TOCHAIN_TSC_H */
