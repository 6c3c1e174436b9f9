/* SPDX-License-Identifier: MIT */
/*
 * The serving loop of every kind (vnf_serve), which the command line and
 * the guest agent run, and the calibration run (vnf_calibrate).  See
 * vnfs/runtime/README.md.
 */
#ifndef TOCHAIN_VNF_SERVE_H
#define TOCHAIN_VNF_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "vnf_kind.h"

struct vnf_serve_opts {
	const char *region;		/* VNF region path (guest mode: its device) */
	const char *dev_dir;		/* guest mode (vnf_attach_guest); NULL: host */
	uint32_t threads;		/* 0: one per channel of the region */
	uint64_t cost_ns;		/* extra busy time per packet */
	const char *stats_path;		/* written at exit, NULL: none */
	int attach_timeout_ms;
};

/*
 * Serve the region's channels with engines @es until *stop becomes non-zero
 * or the region dies.  With @sighup, the calling thread waits for SIGHUP
 * (reload), SIGTERM/SIGINT (stop) itself: call it with those blocked.
 * 0 or -errno.
 */
int vnf_serve(struct vnf_engines *es, const struct vnf_serve_opts *o, volatile int *stop,
	      bool sighup);

struct vnf_calib {
	uint64_t packets, bytes, requests, denied;
	double seconds;
};

/*
 * One thread, no scheduler: judge the built-in mix (vnf_mix.h) as
 * 1448-byte descriptors of one connection per request for @seconds, with
 * @cost_ns of extra busy time per descriptor (--cost-ns, as when serving).
 * 0 or -errno.
 */
int vnf_calibrate(struct vnf_engines *es, double seconds, uint64_t cost_ns,
		  struct vnf_calib *out);

#endif /* TOCHAIN_VNF_SERVE_H */
