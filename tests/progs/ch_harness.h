/* SPDX-License-Identifier: MIT */
/*
 * Test and benchmark harness for the chain scheduler (chh_*): a synthetic
 * data region standing in for a VM's region, payload patterns, VNF
 * processes (tochain-vnf) and their statistics.  Not part of the library.
 */
#ifndef TOCHAIN_CH_HARNESS_H
#define TOCHAIN_CH_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <tochain/region.h>

#include "ch_psched.h"
#include "vnf_null.h"

/* A host-kind stand-in for a guest data region with @nbufs buffers. */
struct tcr_region *chh_data_region(const char *path, uint32_t nbufs, uint32_t slot_size);

/* Write payload @seqno into buffer @buf (length varies with seqno); returns len. */
uint32_t chh_fill(struct tcr_region *r, uint32_t buf, uint64_t seqno, const char *marker);

/* A descriptor for buffer @buf of data region @region. */
void chh_pkt(struct ch_pkt *p, uint32_t region, uint32_t buf, uint32_t len, uint64_t cookie);

/* Start tochain-vnf (@bin) for VNF region @region; extra args NULL-terminated. */
pid_t chh_spawn_vnf(const char *bin, const char *region, const char *stats, ...);

/* SIGTERM, wait up to @ms, then SIGKILL; returns the wait status or -1. */
int chh_stop(pid_t pid, int ms);

/* Parse a stats file of the null VNF; per-thread counts into @thr (may be NULL). */
int chh_read_stats(const char *path, struct vnf_null_stats *st, uint64_t *thr, uint32_t nthr);

/* Wait (up to @ms) until a file exists / the scheduler has nothing in flight. */
int chh_wait_file(const char *path, int ms);

/*
 * The scheduler run in the driver's own epoll loop, as the TOE runs it
 * (ch_psched_loop_attach(); toe_run() in host-toe/toe/toe.c): the set
 * holds only the bells of the scheduler's VNF threads.  The driver's loop
 * calls ch_psched_poll() every iteration and, when an iteration moved
 * nothing, chh_loop_sleep().  One thread does all of it (the scheduler's
 * thread, ch_psched_int.h), registered with liburcu
 * (urcu_memb_register_thread()).  chh_loop_close() after
 * ch_psched_destroy(), which takes the bells out of the set.
 */
struct chh_loop {
	struct ch_psched *s;
	int epfd;
};

/* A new epoll set, and @s attached to it.  0 or -errno. */
int chh_loop_attach(struct chh_loop *l, struct ch_psched *s);
void chh_loop_close(struct chh_loop *l);
/*
 * Sleep in the set while the scheduler allows (ch_psched_sleep_prepare()),
 * at most @max_ns, and hand the bells that rang to the scheduler.  Returns
 * at once when the scheduler has work ready.
 */
void chh_loop_sleep(struct chh_loop *l, uint64_t max_ns);
/* Run the scheduler for @ns: poll, and sleep when a poll found nothing. */
void chh_loop_run_for(struct chh_loop *l, uint64_t ns);

uint64_t chh_now_ns(void);
void chh_sleep_us(unsigned int us);

#endif /* TOCHAIN_CH_HARNESS_H */
