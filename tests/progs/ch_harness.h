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

/*
 * What the scheduler promises about order (ch_psched.h): each descriptor
 * comes back once, and one connection's descriptors in the order they
 * were pushed; connections of a chain may pass each other.  One checker
 * per chain: chh_order_push() what was pushed, chh_order_back() what
 * came back.
 */
struct chh_order {
	uint64_t *cookie, *conn;	/* pushed, oldest first */
	uint8_t *back;			/* [i]: came back */
	uint64_t cap, n;
	uint64_t head;			/* oldest that has not come back */
};

/* Room for @cap descriptors.  0 or -ENOMEM. */
int chh_order_init(struct chh_order *o, uint64_t cap);
void chh_order_free(struct chh_order *o);
/* false when the checker is full. */
bool chh_order_push(struct chh_order *o, uint64_t cookie, uint64_t conn);
/*
 * A result: true if it is the oldest descriptor of its connection still
 * out; else false, with that descriptor's cookie in *@want (UINT64_MAX:
 * none of the connection is out).  Either way it counts as back.
 */
bool chh_order_back(struct chh_order *o, uint64_t cookie, uint64_t conn, uint64_t *want);

uint64_t chh_now_ns(void);
void chh_sleep_us(unsigned int us);

#endif /* TOCHAIN_CH_HARNESS_H */
