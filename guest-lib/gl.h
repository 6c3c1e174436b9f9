/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime (gl_*), libtochain-preload.so.
 *
 * LOCKING: one mutex per process, gl_rt.mu, protects the channel, the
 * socket objects, the epoll tables and the list of sleeping threads.
 * Every gl_* function that takes a struct gl_rt * expects it held ("mu
 * held") unless it says otherwise; a blocking wait releases it while it
 * sleeps (gl_sleep; how sleepers are woken: gl_wait.c).  The fd table
 * (gl_fd_sock) is read without the lock through atomic loads, so that
 * calls on ordinary fds never contend.
 *
 * Return convention: 0 / counts, or -errno; the interposers in gl_api.c
 * turn that into -1 and errno.  Nothing here exits or aborts.
 */
#ifndef TOCHAIN_GL_H
#define TOCHAIN_GL_H

#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <tochain/chan.h>
#include <tochain/region.h>

#include "tochain/srpc.h"

#include "gl_vm.h"

/* ---- the real libc (gl_real.c) ---- */
struct gl_real {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	int (*shutdown)(int, int);
	int (*close)(int);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*fcntl)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*close_range)(unsigned int, unsigned int, int);
	void (*closefrom)(int);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*getaddrinfo)(const char *, const char *, const struct addrinfo *,
			   struct addrinfo **);
	struct hostent *(*gethostbyname)(const char *);
	struct hostent *(*gethostbyname2)(const char *, int);
	int (*gethostbyname_r)(const char *, struct hostent *, char *, size_t, struct hostent **,
			       int *);
	int (*gethostbyname2_r)(const char *, int, struct hostent *, char *, size_t,
				struct hostent **, int *);
};
extern struct gl_real gl_real;
/* Resolve every symbol with dlsym(RTLD_NEXT); idempotent, thread-safe. */
void gl_real_init(void);

/* ---- the doorbell (gl_wake.c): the one place that knows how we sleep ---- */
struct gl_wake {
	int efd_mine;	/* the TOE writes it to wake us (in a VM: gl_vm.h) */
	int efd_host;	/* we write it to wake the TOE (-1 in a VM) */
	struct gl_vm_wake vm;	/* in a VM: the link's doorbell (vm.dev >= 0) */
};
/* The fd a sleeper adds to its real wait. */
int gl_wake_fd(const struct gl_wake *w);
void gl_wake_host(struct gl_wake *w);
void gl_wake_drain(struct gl_wake *w);
void gl_wake_close(struct gl_wake *w);

/* ---- sockets ---- */
struct gl_sock {
	uint32_t id;		/* TOE socket id */
	int refs;		/* fds of this process naming it */
	int family;
	bool nonblock;
	bool listening, connecting, connected, acceptable, eof, shut_rd, shut_wr;
	bool reset;		/* connection failed or was reset */
	bool connect_unseen;	/* async connect completed, no connect() since */
	int err;		/* error for the next call (reported once) */
	int so_error;		/* SO_ERROR */
	uint32_t *rxq;		/* buffers with data, in order */
	uint32_t rx_head, rx_n, rx_cap;
	uint32_t rx_off;	/* bytes of the head buffer consumed */
	size_t rx_bytes;
	uint32_t tx_inflight;	/* buffers sent, not yet written by the TOE */
	uint32_t rseq, wseq;	/* bumped on read/write readiness changes (edge triggering) */
	int rcvtimeo_ms, sndtimeo_ms;	/* -1: none */
	bool dgram;		/* UDP: each rxq buffer is one datagram (struct srpc_dgram) */
	/*
	 * Shared after fork (host-toe/toe/toe_int.h, ownership): a holder reads only
	 * after TAKE made it the owner.  need_take: not (or no longer) the
	 * owner; frozen_n/frozen_bytes: the head of rxq (and pre) received
	 * before the fork, dropped if another holder claimed it first; fk: a
	 * private copy of that data for the child (fk_mine), which becomes
	 * @pre, a readable prefix, when the child's TAKE claims it.
	 */
	bool need_take, fk_mine;
	bool frozen;		/* frozen_* and pre are the fork's: dropped unless claimed */
	bool take_posted;	/* poll posted a TAKE, its answer is on the way */
	uint32_t frozen_n;
	size_t frozen_bytes;
	uint8_t *fk, *pre;
	size_t fk_len, pre_len, pre_off;
};

#define GL_TX_BYTES	(128u << 10)	/* bytes in flight per socket towards the TOE, */
#define GL_TX_MIN	8		/* but at least this many buffers (gl_rt.tx_bound) */
/*
 * FREE buffers stream data never takes: a socket whose peer stopped
 * reading must not starve the requests of other sockets (their buffers
 * come back as soon as the TOE has copied the request).
 */
#define GL_CTRL_RESERVE	2

struct gl_rt;
/*
 * Readiness of @s as poll(2) reports it (mu held).  A shared socket this
 * process does not own is claimed (TAKE posted without waiting): it shows
 * data once the TOE answered.
 */
short gl_sock_revents(struct gl_rt *rt, struct gl_sock *s);

/* ---- the runtime ---- */
struct gl_waiter;

struct gl_rt {
	pthread_mutex_t mu;
	bool configured;	/* TOCHAIN_REGION was given */
	bool vm;		/* it is the guest driver's device (gl_vm.h) */
	bool attached;
	bool broken;		/* the channel failed: calls return ENETDOWN */
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
	struct gl_waiter *waiters;
	uint32_t *stash;	/* FREE buffers we hold */
	uint32_t nstash;
	uint32_t tx_bound;	/* buffers in flight per socket (GL_TX_*) */
	uint32_t *buf_off, *buf_len;	/* private copy of RX descriptors */
	uint32_t done[64];
	uint32_t ndone;
	struct gl_sock **by_id;	/* 65536 slots, indexed by id & 0xffff */
	struct gl_sleeper *sleepers;	/* threads inside gl_sleep (gl_wait.c) */
	int nsleep;		/* how many */
	int *kick_free;		/* idle kick eventfds (gl_wait.c) */
	int nkick_free, nkick;	/* idle ones; all that exist */
	struct gl_epoll *epolls;
};

extern struct gl_rt gl_rt;

/* Socket of fd @fd, or NULL (no lock needed). */
struct gl_sock *gl_fd_sock(int fd);
/* Set/clear the table entry (mu held). */
void gl_fd_set(int fd, struct gl_sock *s);
int gl_fd_max(void);

void gl_lock(void);
void gl_unlock(void);

/* Attach this process if needed (mu held): 0, -ENETDOWN, -EAFNOSUPPORT (not configured). */
int gl_ensure(struct gl_rt *rt);
/*
 * Drain RX and FREE, return DONE buffers (mu held).  When it took
 * anything, or found the channel broken, it kicks every sleeper.
 */
void gl_pump(struct gl_rt *rt);

/* ---- sleeping and waking threads (gl_wait.c; its top comment has the rules) ---- */
struct gl_sleeper;
/*
 * Sleep until the TOE publishes something, another thread changed socket
 * state (a kick), one of @pfd is ready, or @timeout_ms (-1: none) passes;
 * with @mask, the real wait runs under that signal mask (ppoll).  mu held;
 * released while sleeping.  Returns how many of @pfd are ready (>= 0), or
 * -errno (-EINTR).  A return says "look again", never "ready": callers
 * loop until their own condition holds or their own deadline passes.
 */
int gl_sleep(struct gl_rt *rt, struct pollfd *pfd, nfds_t n, int timeout_ms,
	     const sigset_t *mask);
/* Socket state changed in a way a sleeper may wait for: every sleeper looks again (mu held). */
void gl_wake_sleepers(struct gl_rt *rt);
/* In a forked child (mu held): the parent's sleepers and kick fds are not ours. */
void gl_wait_after_fork(struct gl_rt *rt);

/* Calls (mu held); -errno on failure. */
int gl_socket(struct gl_rt *rt, int domain, int type, int protocol);
int gl_bind(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l);
int gl_listen(struct gl_rt *rt, struct gl_sock *s, int backlog);
int gl_accept(struct gl_rt *rt, struct gl_sock *s, struct sockaddr *a, socklen_t *l, int flags);
int gl_connect(struct gl_rt *rt, struct gl_sock *s, const struct sockaddr *a, socklen_t l);
ssize_t gl_sendv(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n, int flags);
ssize_t gl_recvv(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n, int flags);
/*
 * Datagram sockets: one datagram per call.  @a NULL: the connected peer.
 * Receiving fills @a/@l with the source (as recvfrom) and ORs MSG_TRUNC
 * into *@mflags when the datagram was longer than @iov (the rest is lost).
 */
ssize_t gl_dgram_send(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, const struct sockaddr *a, socklen_t l);
ssize_t gl_dgram_recv(struct gl_rt *rt, struct gl_sock *s, const struct iovec *iov, int n,
		      int flags, struct sockaddr *a, socklen_t *l, int *mflags);
ssize_t gl_sendfile(struct gl_rt *rt, struct gl_sock *s, int in_fd, off_t *off, size_t count);
int gl_shutdown(struct gl_rt *rt, struct gl_sock *s, int how);
int gl_setsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, const void *v, socklen_t l);
int gl_getsockopt(struct gl_rt *rt, struct gl_sock *s, int level, int name, void *v, socklen_t *l);
int gl_getname(struct gl_rt *rt, struct gl_sock *s, bool peer, struct sockaddr *a, socklen_t *l);
/* A new fd for @s (placeholder memfd); @cloexec; returns the fd or -errno. */
int gl_new_fd(struct gl_rt *rt, struct gl_sock *s, bool cloexec);
/* The fd @fd naming @s goes away (mu held). */
void gl_sock_put(struct gl_rt *rt, struct gl_sock *s);
/*
 * fork (pthread_atfork): the parent attaches the child's channel and has
 * the TOE give it every socket (FORK) before fork(); the child uses it.
 */
void gl_fork_prepare(void);
void gl_fork_parent(void);
void gl_after_fork_child(void);
/* In a new image: adopt the sockets inherited across exec, drop the old channel. */
void gl_after_exec(void);

/*
 * ---- the resolver (gl_resolv.c), used when the runtime is configured ----
 * Same contracts as libc's getaddrinfo / gethostbyname2_r / gethostbyname2;
 * called without mu (they use the interposed socket calls).
 */
int gl_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		   struct addrinfo **res);
int gl_gethostbyname2_r(const char *name, int family, struct hostent *he, char *buf,
			size_t buflen, struct hostent **result, int *h_errnop);
struct hostent *gl_gethostbyname2(const char *name, int family);

/* ---- poll / select / epoll emulation (gl_poll.c) ---- */
int gl_poll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask);
struct gl_epoll;
int gl_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
int gl_epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *mask);
void gl_epoll_forget_fd(int fd);	/* fd closed (mu held) */
void gl_epoll_forget_sock(struct gl_sock *s);	/* socket gone (mu held) */
void gl_epoll_forget_epfd(int epfd);	/* an epoll fd closed (mu held) */

#endif /* TOCHAIN_GL_H */
