/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime (gl_*), libtochain-preload.so: the
 * process's runtime object, one per process, and its mutex (gl_rt.c).
 *
 * LOCKING: the rules are written once, at the top of gl_rt.c.  Every
 * gl_* function that takes a struct gl_rt * expects gl_rt.mu held ("mu
 * held") unless it says otherwise.
 *
 * Return convention of the runtime: 0 / counts, or -errno; the
 * interposers in gl_api.c turn that into -1 and errno.  Nothing exits or
 * aborts.
 */
#ifndef TOCHAIN_GL_RT_H
#define TOCHAIN_GL_RT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <tochain/chan.h>
#include <tochain/region.h>
#include <tochain/spin.h>

#include "gl_wake.h"

struct gl_epoll;
struct gl_sleeper;
struct gl_sock;
struct gl_waiter;

struct gl_rt {
	pthread_mutex_t mu;
	bool configured;	/* TOCHAIN_REGION was given */
	bool vm;		/* it is the guest driver's device (gl_vm.h) */
	bool attached;
	bool broken;		/* the channel failed: calls return ENETDOWN */
	/* the TOE died; a new one may come (gl_revive.c) */
	bool hup;		/* its connection hung up: the pump calls gl_revive_lost */
	bool lost;		/* detached, waiting for a new TOE */
	uint32_t incarnation;	/* bumped at each loss: answers owed by the dead TOE never come */
	uint64_t revive_at;	/* next look for a new TOE (ns, CLOCK_MONOTONIC) */
	struct gl_sock **revive;	/* sockets to re-create on it (NULL: closed meanwhile) */
	uint32_t nrevive;
	pid_t pid;		/* process the channel belongs to */
	uint32_t chan_no, chan_epoch;	/* our channel (exec: we name ourselves heir) */
	struct {		/* fork: the child's channel, attached by the parent */
		bool ok;
		int conn;
		struct gl_wake wake;
		uint32_t chan_no, chan_epoch;
	} kid;
	char *path;
	struct tcr_region *r;
	struct tcr_chan ch;
	struct gl_wake wake;
	int conn;		/* UNIX connection to the TOE */
	uint32_t tag;
	struct gl_waiter *waiters;	/* calls waiting for a response (gl_chan.c) */
	uint32_t *stash;	/* FREE buffers we hold */
	uint32_t nstash;
	/*
	 * The stash is shared by every socket: a send that stopped because
	 * it was down to GL_CTRL_RESERVE while its socket had room marks the
	 * socket (gl_sock.starved_gen = stash_gen, starved = true); buffers
	 * coming back then bump stash_gen, which makes those sockets writable
	 * again for edge-triggered epoll (gl_poll_revents), since no TXDONE
	 * of their own may ever come.
	 */
	uint32_t stash_gen;
	bool starved;
	uint32_t tx_bound;	/* buffers in flight per socket (GL_TX_*, gl_chan.h) */
	uint32_t stash_peak;	/* the most the stash held since attaching: about the grants */
	uint32_t *buf_off, *buf_len;	/* private copy of RX descriptors */
	uint32_t done[64];
	uint32_t ndone;
	struct gl_sock **by_id;	/* 65536 slots, indexed by id & 0xffff */
	struct gl_sleeper *sleepers;	/* threads inside gl_wait_sleep (gl_wait.c) */
	int nsleep;		/* how many */
	int *kick_free;		/* idle kick eventfds (gl_wait.c) */
	int nkick_free, nkick;	/* idle ones; all that exist */
	struct tcr_spin spin;	/* poll before sleeping (gl_wait.c), under mu */
	struct gl_epoll *epolls;	/* offloaded epoll registrations (gl_epoll.c) */
};

extern struct gl_rt gl_rt;

/* Take and release gl_rt.mu (the rules: gl_rt.c). */
void gl_rt_lock(void);
void gl_rt_unlock(void);
/* Does the calling thread hold mu (then a close() is the runtime's own)? */
bool gl_rt_held(void);

#endif /* TOCHAIN_GL_RT_H */
