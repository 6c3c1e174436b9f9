// SPDX-License-Identifier: MIT
/*
 * Ring benchmark between two processes on different cores (make bench).
 *
 *   latency:    one descriptor at a time, host -> guest over RX and back
 *               over DONE; the one-way hop time is the TSC at dequeue minus
 *               the TSC the producer stamped in the descriptor (the TSC is
 *               synchronised across cores where it is invariant), cross-
 *               checked with half the round trip.
 *   throughput: a stream of descriptor indices through one ring, with
 *               burst sizes 1 and 32 on both sides.
 *
 * Prints medians and p99 over repetitions; asserts nothing.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/region.h>
#include <tochain/tsc.h>

#define NBUFS 4096
#define LAT_SAMPLES 200000
#define LAT_WARMUP 20000
#define TPUT_COUNT 20000000u
#define REPS 5

struct shared {
	uint32_t go;
	uint32_t done;
	uint64_t t_end;
	uint64_t oneway[LAT_SAMPLES];
};

static char path[64];
static struct shared *sh;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Guest side of the latency test: echo every descriptor back on DONE. */
static void lat_child(void)
{
	struct tcr_region *r = tcr_region_attach(path, TCR_ATTACH_GUEST);
	struct tcr_chan c;
	uint32_t idx;

	pin(1);
	if (!r || tcr_chan_attach(&c, r, 0, 0))
		_exit(3);
	for (uint32_t i = 0; i < LAT_WARMUP + LAT_SAMPLES; i++) {
		while (tcr_ring_dequeue_burst(&c.ring[TCR_CH_RX], &idx, 1) != 1)
			tc_cpu_relax();
		uint64_t t = tcr_tsc_now();

		if (i >= LAT_WARMUP)
			sh->oneway[i - LAT_WARMUP] = t - tc_load_relaxed(&tcr_region_desc(r, idx)->tsc);
		while (tcr_ring_enqueue_burst(&c.ring[TCR_CH_DONE], &idx, 1) != 1)
			tc_cpu_relax();
	}
	_exit(0);
}

static void latency(struct tcr_region *r, const struct tcr_tsc_cal *cal)
{
	struct tcr_pool *p = tcr_pool_create(r);
	struct tcr_chan h;
	uint64_t *rtt = calloc(LAT_SAMPLES, sizeof(*rtt));
	uint32_t idx;
	pid_t pid;
	int st;

	tcr_chan_open(&h, r, 0);
	pid = fork();
	if (pid == 0)
		lat_child();
	pin(0);
	tcr_pool_alloc(p, &idx, 1);
	for (uint32_t i = 0; i < LAT_WARMUP + LAT_SAMPLES; i++) {
		uint64_t t0 = tcr_tsc_now();

		tcr_region_desc(r, idx)->tsc = t0;
		while (tcr_chan_send(&h, p, &idx, 1) != 1)
			tc_cpu_relax();
		while (tcr_chan_recv(&h, p, TCR_CH_DONE, &idx, 1) != 1)
			tc_cpu_relax();
		if (i >= LAT_WARMUP)
			rtt[i - LAT_WARMUP] = tcr_tsc_now() - t0;
	}
	waitpid(pid, &st, 0);
	qsort(sh->oneway, LAT_SAMPLES, sizeof(uint64_t), cmp_u64);
	qsort(rtt, LAT_SAMPLES, sizeof(uint64_t), cmp_u64);
	printf("%-28s %10s %10s %10s\n", "one-way hop latency (ns)", "median", "p99", "p99.9");
	printf("%-28s %10llu %10llu %10llu\n", "  TSC stamp at dequeue",
	       (unsigned long long)tcr_tsc_to_ns(cal, sh->oneway[LAT_SAMPLES / 2]),
	       (unsigned long long)tcr_tsc_to_ns(cal, sh->oneway[LAT_SAMPLES * 99 / 100]),
	       (unsigned long long)tcr_tsc_to_ns(cal, sh->oneway[LAT_SAMPLES * 999 / 1000]));
	printf("%-28s %10llu %10llu %10llu\n", "  round trip / 2",
	       (unsigned long long)tcr_tsc_to_ns(cal, rtt[LAT_SAMPLES / 2]) / 2,
	       (unsigned long long)tcr_tsc_to_ns(cal, rtt[LAT_SAMPLES * 99 / 100]) / 2,
	       (unsigned long long)tcr_tsc_to_ns(cal, rtt[LAT_SAMPLES * 999 / 1000]) / 2);
	tcr_chan_close(&h, p);
	tcr_pool_destroy(p);
	free(rtt);
}

static void tput_child(unsigned int burst)
{
	struct tcr_region *r = tcr_region_attach(path, TCR_ATTACH_GUEST);
	struct tcr_ring ring;
	uint32_t idx[64], got = 0;

	pin(1);
	if (!r || tcr_ring_attach(&ring, tcr_region_ring_mem(r, 0, TCR_CH_RX),
				  r->geo.ring_size, r->geo.nbufs, 0))
		_exit(3);
	tc_store_release(&sh->go, 1);
	while (got < TPUT_COUNT) {
		int n = tcr_ring_dequeue_burst(&ring, idx, burst);

		if (n < 0)
			_exit(4);
		if (n == 0)
			tc_cpu_relax();
		got += (uint32_t)n;
	}
	sh->t_end = (uint64_t)ns_now();
	_exit(0);
}

/* Descriptors per second for one run with @burst. */
static double tput_once(struct tcr_region *r, unsigned int burst)
{
	struct tcr_ring ring;
	uint32_t idx[64], sent = 0;
	double t0;
	pid_t pid;
	int st;

	for (unsigned int i = 0; i < 64; i++)
		idx[i] = i;
	tcr_ring_format(tcr_region_ring_mem(r, 0, TCR_CH_RX), r->geo.ring_size);
	tcr_ring_attach(&ring, tcr_region_ring_mem(r, 0, TCR_CH_RX), r->geo.ring_size,
			r->geo.nbufs, 0);
	sh->go = 0;
	pid = fork();
	if (pid == 0)
		tput_child(burst);
	pin(0);
	while (!tc_load_acquire(&sh->go))
		tc_cpu_relax();
	t0 = ns_now();
	while (sent < TPUT_COUNT) {
		unsigned int want = TPUT_COUNT - sent < burst ? TPUT_COUNT - sent : burst;
		int n = tcr_ring_enqueue_burst(&ring, idx, want);

		if (n == 0)
			tc_cpu_relax();
		sent += (uint32_t)n;
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 0;
	return (double)TPUT_COUNT / (((double)sh->t_end - t0) / 1e9);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	struct tcr_params prm = {
		.name = "bench", .kind = TCR_KIND_GUEST, .nbufs = NBUFS, .slot_size = 2048,
		.nchannels = 1,
	};
	const struct tcr_tsc_cal *cal = tcr_tsc_calibration();
	struct tcr_region *r;
	unsigned int bursts[] = { 1, 32 };
	double med[2];

	snprintf(path, sizeof(path), "/dev/shm/tochain-bench-%d", getpid());
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r = tcr_region_create(path, &prm);
	if (sh == MAP_FAILED || !r) {
		perror("setup");
		return 1;
	}
	printf("region ring benchmark: 2 processes pinned to CPUs 0 and 1, TSC %.3f GHz%s\n\n",
	       (double)cal->hz / 1e9, cal->invariant ? "" : " (not invariant)");
	latency(r, cal);
	printf("\n%-28s %10s %10s %10s   (%d runs of %u descriptors)\n",
	       "throughput (M desc/s)", "median", "min", "max", REPS, TPUT_COUNT);
	for (int b = 0; b < 2; b++) {
		double v[REPS];

		for (int i = 0; i < REPS; i++)
			v[i] = tput_once(r, bursts[b]) / 1e6;
		qsort(v, REPS, sizeof(double), cmp_d);
		med[b] = v[REPS / 2];
		printf("  burst %-20u %10.1f %10.1f %10.1f\n", bursts[b], v[REPS / 2], v[0],
		       v[REPS - 1]);
	}
	printf("  ratio burst 32 / burst 1    %10.2f\n", med[1] / med[0]);
	tcr_region_destroy(r);
	unlink(path);
	return 0;
}
