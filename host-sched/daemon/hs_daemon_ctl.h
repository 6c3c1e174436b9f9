/* SPDX-License-Identifier: MIT */
/*
 * hs_daemon_ctl — tochain-sched's control socket and its scheduler loop.
 *
 * The socket speaks the control protocol of include/tochain/ctl_proto.h (one JSON
 * request line, one reply line, per connection) with the commands
 *   sched.show                          the state and the current plan
 *   sched.mode     {"mode": "sync"|"cfs"}   applied at the next period
 *   sched.register {"role": "vnf"|"vm", "tid": N, "vm": NAME,
 *                   "chain": NAME, "vnf": NAME, "sla": PPS, "f": PPS,
 *                   "region": PATH, "index": I, "threads": N}
 *   sched.register {"role": "vm", "domain": NAME, "vm": NAME}
 *                                       a libvirt domain's vCPUs
 *   version
 * It is served by its own thread; each request runs under hsd.lock.
 *
 * hsd_run() is the scheduler thread's loop: period boundaries and ticks
 * on CLOCK_MONOTONIC, absolute sleeps, so a late tick does not shift the
 * ones after it.
 */
#ifndef HS_DAEMON_CTL_H
#define HS_DAEMON_CTL_H

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>

#include "hs_daemon.h"

struct hsd_ctl {
	struct hsd *d;
	int fd;				/* listening socket */
	const int *stop;		/* set by a signal handler; read relaxed */
	pthread_t th;
	char path[108];
};

/* Serves one parsed request; returns the reply (caller decrefs).  Takes
 * d->lock itself. */
json_t *hsd_ctl_handle(struct hsd *d, json_t *req);

/* Listens on @path (mode 0600, a stale socket file is replaced) and starts
 * the serving thread.  0 or -errno. */
int hsd_ctl_start(struct hsd_ctl *c, struct hsd *d, const char *path, const int *stop);
/* Joins the thread (after *stop was set) and removes the socket. */
void hsd_ctl_stop(struct hsd_ctl *c);

/*
 * Runs periods until *stop is set or @duration_s (0: forever) has passed;
 * every @print_every periods (0: never) prints the state and plan to
 * @out.  Returns 0.
 */
int hsd_run(struct hsd *d, const int *stop, double duration_s,
	    uint32_t print_every, FILE *out);

#endif
