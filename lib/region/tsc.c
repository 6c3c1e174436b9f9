// SPDX-License-Identifier: MIT
/* TSC calibration; see include/tochain/tsc.h. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tochain/tsc.h>

uint64_t tcr_tsc_fallback_now(void);

uint64_t tcr_tsc_fallback_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct tcr_tsc_cal cal;
static pthread_once_t cal_once = PTHREAD_ONCE_INIT;

void tcr_tsc_cal_from_hz(struct tcr_tsc_cal *c, uint64_t hz)
{
	/*
	 * Largest shift that keeps mult in 32 bits: mult = 1e9 << shift / hz.
	 * The 128-bit product in tcr_tsc_to_ns() cannot overflow.
	 */
	uint32_t shift = 32;

	while (shift > 0 && ((1000000000ull << shift) / hz) > UINT32_MAX)
		shift--;
	c->hz = hz;
	c->shift = shift;
	c->mult = (uint32_t)((1000000000ull << shift) / hz);
}

static bool cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	bool constant = false, nonstop = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
#else
	return false;
#endif
}

static uint64_t mono_raw_ns(void)
{
	return tcr_tsc_fallback_now();
}

static void calibrate(void)
{
	uint64_t best_hz = 0, best_err = UINT64_MAX;

#if !defined(__x86_64__)
	cal.hz = 1000000000ull;
	cal.mult = 1;
	cal.shift = 0;
	cal.invariant = false;
	return;
#endif
	/* Three 5 ms windows; keep the one whose edges were read tightest. */
	for (int i = 0; i < 3; i++) {
		uint64_t n0a = mono_raw_ns(), t0 = tcr_tsc_now(), n0b = mono_raw_ns();
		struct timespec d = { 0, 5000000 };
		uint64_t n1a, t1, n1b, err;

		nanosleep(&d, NULL);
		n1a = mono_raw_ns();
		t1 = tcr_tsc_now();
		n1b = mono_raw_ns();
		err = (n0b - n0a) + (n1b - n1a);
		if (err < best_err && n1a > n0b) {
			uint64_t ns = ((n1a + n1b) - (n0a + n0b)) / 2;

			best_err = err;
			best_hz = (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000ull / ns);
		}
	}
	if (!best_hz)
		best_hz = 1000000000ull;	/* clock never moved: keep ns-ish */
	tcr_tsc_cal_from_hz(&cal, best_hz);
	/* Without an invariant TSC the conversion drifts with frequency. */
	cal.invariant = cpu_has_invariant_tsc();
}

const struct tcr_tsc_cal *tcr_tsc_calibration(void)
{
	pthread_once(&cal_once, calibrate);
	return &cal;
}
