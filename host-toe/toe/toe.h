/* SPDX-License-Identifier: MIT */
/*
 * The TCP offload engine of one VM (toe_*): executes the guest's socket
 * calls with kernel sockets in the current network namespace and moves
 * payload between those sockets and the region's buffers.
 *
 * One thread runs everything (toe_run): an epoll loop over the attach
 * socket, the per-channel eventfds and UNIX connections, the kernel
 * sockets and a signalfd.  Nothing here blocks: kernel sockets are
 * non-blocking, and the guest is never waited for.
 *
 * Data path, per direction (the chain stage, toe_chain.h, sits between the
 * two queues; with no chain set in a direction buffers pass straight on):
 *   inbound:  kernel socket -> input queue -> [chain] -> output queue -> RX ring
 *   outbound: TX ring -> input queue -> [chain] -> output queue -> kernel socket
 *
 * Flow control: at most rx_bound buffers per socket (1 MiB worth by
 * default) are on their way to
 * or held by the guest; at the bound the TOE stops reading that kernel
 * socket (TCP's window then pushes back on the sender) and resumes when
 * the guest returns buffers on DONE.  Outbound, each channel owns a fixed
 * set of granted buffers; a buffer is granted again once its bytes are in
 * the kernel, so a guest cannot queue more than its grants.
 */
#ifndef TOCHAIN_TOE_H
#define TOCHAIN_TOE_H

#include <stdbool.h>
#include <stdint.h>

#include <tochain/srpc.h>

/*
 * What tochain-toe grants each process at least, in bytes of slots: as
 * much as one of its sockets may have in flight (SRPC_TX_BYTES).
 */
#define TOE_GRANT_BYTES	SRPC_TX_BYTES

struct toe_params {
	const char *region_path;	/* created/formatted; "<path>.sock" is the attach socket */
	const char *name;		/* region name */
	uint32_t nbufs;			/* default 4096 */
	uint32_t slot_size;		/* default 16384 */
	uint32_t nchannels;		/* default 16 */
	uint32_t grants;		/* buffers granted per channel, default 64;
					   tochain-toe: at least TOE_GRANT_BYTES worth */
	uint32_t rx_bound;		/* buffers in flight per socket towards the guest;
					   0: 1 MiB worth, at least 16, at most nbufs/8 */
	uint32_t max_socks;		/* default 4096 */
	int ready_fd;			/* -1, or written one byte when serving */
	unsigned guest_mode;		/* 0: the region file and attach socket are the
					   TOE user's alone (0600); else their mode (rw
					   bits only): which users of a stand-in VM may
					   use the runtime (toe_perm.c) */
	long guest_gid;			/* -1, or the group given those files */
	bool hold;			/* nothing inbound until chains.ready (toe_hold.h) */
	bool verbose;
};

struct toe;

/* Defaults for every field but region_path and name. */
void toe_params_default(struct toe_params *p);

/* Create the region and the attach socket.  NULL with errno set. */
struct toe *toe_create(const struct toe_params *p);

/*
 * Serve until SIGTERM/SIGINT (blocked by toe_create and taken through a
 * signalfd) or toe_stop().  Returns 0 on a clean stop, -errno on a fatal
 * error of the TOE itself (never because of a guest).
 */
int toe_run(struct toe *t);

/* Ask toe_run to return (from a callback or another thread). */
void toe_stop(struct toe *t);

/* Mark the region dead, remove the socket file, free everything. */
void toe_destroy(struct toe *t);

/* Counters for tests and logs. */
struct toe_stats {
	uint64_t guests_attached, guests_dropped, bad_messages;
	uint64_t socks_open, bytes_in, bytes_out;
	uint64_t denials;	/* descriptors a chain denied (connections reset) */
	uint64_t alerts;	/* descriptors a chain passed with an Alert */
};
void toe_get_stats(const struct toe *t, struct toe_stats *s);

#endif /* TOCHAIN_TOE_H */
