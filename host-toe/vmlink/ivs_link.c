// SPDX-License-Identifier: MIT
/*
 * The VM link (see ivs_link.h for the contract and the trust rules).
 *
 * One epoll loop over: a signalfd, a timerfd (poll mode: the scan
 * period; doorbell mode: 1 s housekeeping, 5 ms while a slot waits to be
 * re-offered), the ivshmem server (doorbell mode), and per slot the UNIX
 * connection to the TOE (hang-up: the TOE is gone), the eventfd the TOE
 * writes to wake "the guest" and, in doorbell mode, the host peer's
 * eventfd of the slot's vector (the guest rang).
 *
 * The claim table is written in this order: a slot's channel, epoch and
 * vector, then its state OFFERED with store-release (pairs with the
 * driver's load-acquire in tivs_claim); the table's nslots, mode and
 * host_peer, then its magic with store-release (pairs with the driver's
 * load-acquire of magic).  We read a slot's state with load-acquire
 * (pairs with the driver's store-release of CLAIMED/RELEASED).
 *
 * Following (ivs_link.h): the TOE is "lost" when a channel hangs up and
 * the region is not READY, the attach socket refuses, or the channel
 * attached instead belongs to another process (SO_PEERCRED) than the
 * first TOE; a new TOE is "found" when pread of the header says READY and
 * an attach works.  While lost nothing touches the mapping: the new TOE
 * truncates the file to zero before it formats it, and a load from a
 * truncated page would be SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/region_layout.h>

#include "tochain/srpc.h"
#include "ivs_link.h"
#include "ivs_server.h"

#define RECYCLE_MIN_NS		(2 * 1000000LL)	/* per slot, between re-attaches */
#define HOUSEKEEP_NS		(1000 * 1000000LL)
#define PENDING_NS		(5 * 1000000LL)
#define ATTACH_TIMEOUT_S	5
#define MAX_LEFT		16
#define IDLE_SCANS		50		/* poll mode: empty scans before slowing down */
#define POLL_IDLE_NS		(50 * 1000000LL)	/* slowest scan period: idle costs a wake-up per 50 ms */
#define FOLLOW_NS		(50 * 1000000LL)	/* following: look for a new TOE */

enum tok_kind { TOK_SIG = 1, TOK_SRV, TOK_TIMER, TOK_CONN, TOK_GEFD, TOK_HVEC };
#define TOK(kind, i)	(((uint64_t)(kind) << 32) | (uint32_t)(i))

struct link_slot {
	int conn;		/* UNIX connection to the TOE, -1 when not attached */
	int efd_guest;		/* the TOE writes it to wake the guest */
	int efd_toe;		/* we write it to wake the TOE */
	uint32_t channel, epoch;
	uint32_t kick_seen;	/* poll mode: last kick counter value seen */
	pid_t toe_pid;		/* the process that answered the attach */
	int64_t last_attach_ns;
	bool pending;		/* to be (re)offered */
};

struct ivs_link {
	struct ivs_link_config cfg;
	char *region_path, *doorbell_socket;
	int fd;			/* region file */
	struct tcr_header *hdr;	/* its first page, mapped shared */
	struct tcr_link *tab;
	struct ivs_server *srv;	/* doorbell mode */
	int ep, sfd, tfd;
	int64_t timer_ns;	/* current period of tfd */
	int64_t poll_ns;	/* poll mode: current scan period (backs off when idle) */
	unsigned int idle_scans;
	sigset_t oldmask;
	bool stop;
	bool doorbell;
	uint16_t left[MAX_LEFT];	/* peers that left, handled after dispatch */
	unsigned int nleft;
	struct link_slot slot[TCR_LINK_SLOTS];
	struct ivs_link_stats st;
	/* following */
	pid_t toe_pid;		/* the TOE we serve (SO_PEERCRED of the first attach) */
	uint64_t bar_size;	/* the file's size once grown: QEMU's BAR */
	dev_t dev;		/* the region file's identity */
	ino_t ino;
	bool lost;		/* the TOE is gone; waiting for the next one */
	bool rung;		/* found: old claimers rung, table not published yet */
	int err;		/* following: fatal (-ESTALE), stop with it */
	uint32_t seq;		/* publications, also across a new TOE's zeroed table */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void say(const struct ivs_link *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct ivs_link *l, const char *fmt, ...)
{
	va_list ap;

	if (!l->cfg.verbose)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "tochain-vmlink: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void kick_fd(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, the reader wakes anyway */
	}
}

static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing pending */
	}
}

static int ep_add(struct ivs_link *l, int fd, uint64_t tok)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tok };

	return epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* ---- the TOE side: one attach per slot ------------------------------------ */

/* The hello/welcome handshake of include/tochain/srpc.h, as a guest process does it. */
static int toe_attach(struct ivs_link *l, struct link_slot *s)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct srpc_hello h = { SRPC_HELLO_MAGIC, SRPC_VERSION, (uint32_t)getpid(), 0 };
	struct srpc_welcome w;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &h, sizeof(h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct timeval tv = { .tv_sec = ATTACH_TIMEOUT_S };
	struct cmsghdr *cm;
	ssize_t n;
	int err;

	s->conn = s->efd_guest = s->efd_toe = -1;
	if (snprintf(sun.sun_path, sizeof(sun.sun_path), "%s.sock", l->region_path) >=
	    (int)sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	s->efd_guest = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->conn = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->efd_guest < 0 || s->conn < 0)
		return -errno;
	setsockopt(s->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s->conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s->conn, (struct sockaddr *)&sun, sizeof(sun)))
		return -errno;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &s->efd_guest, sizeof(int));
	if (sendmsg(s->conn, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return -EIO;

	memset(cbuf, 0, sizeof(cbuf));
	iov.iov_base = &w;
	iov.iov_len = sizeof(w);
	mh.msg_controllen = sizeof(cbuf);
	do
		n = recvmsg(s->conn, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
		    cm->cmsg_len == CMSG_LEN(sizeof(int)) && s->efd_toe < 0)
			memcpy(&s->efd_toe, CMSG_DATA(cm), sizeof(int));
	if (n != (ssize_t)sizeof(w) || w.magic != SRPC_WELCOME_MAGIC)
		return -EPROTO;
	if (w.status)
		return w.status < 0 ? w.status : -EPROTO;
	if (s->efd_toe < 0)
		return -EPROTO;
	fcntl(s->efd_toe, F_SETFL, O_NONBLOCK);
	{
		struct ucred uc;
		socklen_t ul = sizeof(uc);

		s->toe_pid = getsockopt(s->conn, SOL_SOCKET, SO_PEERCRED, &uc, &ul) ? 0 : uc.pid;
	}
	s->channel = w.channel;
	s->epoch = w.epoch;
	err = ep_add(l, s->conn, TOK(TOK_CONN, s - l->slot));
	if (!err)
		err = ep_add(l, s->efd_guest, TOK(TOK_GEFD, s - l->slot));
	return err;
}

/*
 * Close a slot's channel: the TOE sees the hang-up and reclaims it.  The
 * eventfds are shared with the TOE (SCM_RIGHTS), so closing ours would
 * not remove them from our epoll set: remove them first.
 */
static void toe_detach(struct ivs_link *l, struct link_slot *s)
{
	int *fds[3] = { &s->conn, &s->efd_guest, &s->efd_toe };

	for (int i = 0; i < 3; i++) {
		if (*fds[i] < 0)
			continue;
		epoll_ctl(l->ep, EPOLL_CTL_DEL, *fds[i], NULL);
		close(*fds[i]);
		*fds[i] = -1;
	}
}

/* ---- the claim table ------------------------------------------------------ */

static uint32_t slot_state(const struct ivs_link *l, unsigned int i)
{
	/* Pairs with the driver's store-release of CLAIMED/RELEASED. */
	return tc_load_acquire(&l->tab->slot[i].state);
}

/* Attach a channel and offer it in slot @i; on failure retry later. */
static int offer(struct ivs_link *l, unsigned int i)
{
	struct tcr_link_slot *ts = &l->tab->slot[i];
	struct link_slot *s = &l->slot[i];
	int err;

	s->last_attach_ns = now_ns();
	err = toe_attach(l, s);
	if (err) {
		toe_detach(l, s);
		s->pending = true;
		say(l, "slot %u: attach failed: %s (retrying)", i, strerror(-err));
		return err;
	}
	s->pending = false;
	s->kick_seen = 0;
	tc_store_relaxed(&ts->channel, s->channel);
	tc_store_relaxed(&ts->epoch, s->epoch);
	tc_store_relaxed(&ts->vector, i);
	tc_store_relaxed(&ts->guest_peer, 0);
	tc_store_relaxed(&ts->pid, 0);
	tc_store_relaxed(&ts->kick, 0);
	tc_store_relaxed(&ts->cookie, 0);
	/* Pairs with the load-acquire of state in the driver's tivs_claim. */
	tc_store_release(&ts->state, (uint32_t)TCR_LINK_OFFERED);
	l->st.offers++;
	say(l, "slot %u: offered channel %u epoch %u", i, s->channel, s->epoch);
	return 0;
}

/* Take slot @i back (its process is gone) and offer a fresh channel. */
static void recycle(struct ivs_link *l, unsigned int i)
{
	struct link_slot *s = &l->slot[i];

	if (s->pending)
		return;
	say(l, "slot %u: released (channel %u, pid %u)", i, s->channel,
	    tc_load_relaxed(&l->tab->slot[i].pid));
	toe_detach(l, s);
	tc_store_release(&l->tab->slot[i].state, (uint32_t)TCR_LINK_FREE);
	l->st.recycles++;
	s->pending = true;
	if (now_ns() - s->last_attach_ns >= RECYCLE_MIN_NS)
		offer(l, i);
}

static bool peer_connected(const struct ivs_link *l, uint32_t peer)
{
	uint16_t ids[IVS_DEFAULT_MAX_PEERS];
	size_t n;

	if (!l->srv || peer > IVS_MAX_PEER_ID)
		return false;
	n = ivs_server_peers(l->srv, ids, IVS_DEFAULT_MAX_PEERS);
	for (size_t k = 0; k < n && k < IVS_DEFAULT_MAX_PEERS; k++)
		if (ids[k] == peer)
			return true;
	return false;
}

/* The TOE wants the guest of slot @i awake. */
static void to_guest(struct ivs_link *l, unsigned int i)
{
	uint32_t peer;

	drain_fd(l->slot[i].efd_guest);
	if (!l->doorbell) {
		/* poll mode: the guest finds its rings itself; scan at full rate */
		l->poll_ns = (int64_t)l->cfg.poll_us * 1000;
		l->idle_scans = 0;
		return;
	}
	if (slot_state(l, i) != TCR_LINK_CLAIMED)
		return;
	peer = tc_load_relaxed(&l->tab->slot[i].guest_peer);
	if (!peer_connected(l, peer))
		return;
	if (ivs_server_ring(l->srv, peer, i) == 0)
		l->st.to_guest++;
}

/* The guest of slot @i rang (doorbell) or may have kicked (poll). */
static void from_guest(struct ivs_link *l, unsigned int i, bool rang)
{
	struct link_slot *s = &l->slot[i];
	uint32_t st = slot_state(l, i), k;

	if (s->pending || s->efd_toe < 0)
		return;
	if (st == TCR_LINK_RELEASED) {
		recycle(l, i);
		return;
	}
	if (st != TCR_LINK_CLAIMED)
		return;
	if (!rang) {
		k = tc_load_relaxed(&l->tab->slot[i].kick);
		if (k == s->kick_seen)
			return;
		s->kick_seen = k;
	}
	kick_fd(s->efd_toe);
	l->st.to_toe++;
	l->poll_ns = (int64_t)l->cfg.poll_us * 1000;
	l->idle_scans = 0;
}

/*
 * The TOE hung up slot @i's channel: it dropped that channel (its guest
 * process broke the protocol) or the TOE is gone.  Offer a new channel in
 * the slot at once; the TOE is gone when that cannot connect (or the
 * region says DEAD).  Returns true when the link should stop.  A process
 * still holding the old claim finds its channel closed (ENETDOWN).
 */
static void toe_lost(struct ivs_link *l);
static bool region_ready(struct ivs_link *l);

static bool toe_hangup(struct ivs_link *l, unsigned int i)
{
	struct link_slot *s = &l->slot[i];
	int err;

	if (l->lost || s->conn < 0)
		return false;	/* a hang-up of this batch, already handled */
	say(l, "slot %u: the TOE closed channel %u", i, s->channel);
	toe_detach(l, s);
	s->pending = true;
	if (!region_ready(l)) {
		if (!l->cfg.follow)
			return true;
		toe_lost(l);
		return false;
	}
	tc_store_release(&l->tab->slot[i].state, (uint32_t)TCR_LINK_FREE);
	err = offer(l, i);
	if (l->cfg.follow && (err == -ECONNREFUSED || err == -ENOENT ||
			      (!err && s->toe_pid != l->toe_pid))) {
		toe_lost(l);
		return false;
	}
	return err == -ECONNREFUSED || err == -ENOENT;
}

/* ---- following the TOE across restarts ------------------------------------- */

/*
 * The header's magic, version and state through pread: safe while a new
 * TOE truncates the file (the mapping is not).  Pairs with the TOE's
 * store-release of READY as far as a read() of the page cache can: the
 * rest of the header is only read after an attach worked, which the TOE
 * answers after formatting.
 */
static bool region_ready(struct ivs_link *l)
{
	struct tcr_header h;

	if (pread(l->fd, &h, offsetof(struct tcr_header, kind), 0) !=
	    (ssize_t)offsetof(struct tcr_header, kind))
		return false;
	return h.magic == TCR_MAGIC && h.version == TCR_LAYOUT_VERSION &&
	       h.state == TCR_STATE_READY;
}

/* Ring every slot's vector of every guest: sleepers look at their channels. */
static void ring_all(struct ivs_link *l)
{
	uint16_t ids[IVS_DEFAULT_MAX_PEERS];
	size_t n;

	if (!l->srv)
		return;
	n = ivs_server_peers(l->srv, ids, IVS_DEFAULT_MAX_PEERS);
	for (size_t k = 0; k < n && k < IVS_DEFAULT_MAX_PEERS; k++)
		for (unsigned int i = 0; i < l->cfg.nslots; i++)
			ivs_server_ring(l->srv, ids[k], i);
}

/* The TOE went away: close every channel, withdraw the table, wait. */
static void toe_lost(struct ivs_link *l)
{
	struct stat st;

	if (l->lost)
		return;
	l->lost = true;
	l->rung = false;
	l->st.toe_losses++;
	say(l, "the TOE (pid %d) is gone: waiting for the next one", (int)l->toe_pid);
	for (unsigned int i = 0; i < TCR_LINK_SLOTS; i++) {
		toe_detach(l, &l->slot[i]);
		l->slot[i].pending = false;
	}
	/*
	 * The old TOE is dead and its successor has not started yet (it takes
	 * its supervisor a fork and an exec at least): the file is still
	 * whole.  Guests that claim now get ENOENT until we publish again.
	 */
	if (fstat(l->fd, &st) == 0 && (uint64_t)st.st_size >= TCR_PAGE) {
		tc_store_release(&l->tab->magic, 0u);
		for (unsigned int i = 0; i < TCR_LINK_SLOTS; i++)
			tc_store_relaxed(&l->tab->slot[i].state, (uint32_t)TCR_LINK_FREE);
		/*
		 * Tell the claimers now, while the old region is whole: they
		 * find their claim withdrawn (guest-lib/gl_vm.c), reset their
		 * connections and wait for the table of the next TOE, instead
		 * of finding out only when that TOE has formatted the region.
		 */
		ring_all(l);
	}
}

static void publish(struct ivs_link *l);

/*
 * Lost: is a new TOE serving the region?  In two timer ticks: first the
 * region READY (grow the file back, ring the old claimers), then, a tick
 * later so that their wake-ups are taken before a new claimer rebinds a
 * vector, the channels and the table.
 */
static void follow(struct ivs_link *l)
{
	struct stat now, st;
	int err;

	if (stat(l->region_path, &now) || now.st_dev != l->dev || now.st_ino != l->ino) {
		say(l, "the region file %s was replaced: stopping", l->region_path);
		l->err = -ESTALE;
		l->stop = true;
		return;
	}
	if (!region_ready(l)) {
		l->rung = false;
		return;
	}
	if (fstat(l->fd, &st))
		return;
	if ((uint64_t)st.st_size < l->bar_size && ftruncate(l->fd, (off_t)l->bar_size))
		return;
	if (tc_load_relaxed(&l->hdr->region_size) > l->bar_size)
		return;		/* not ours to serve: wait for a TOE that fits */
	if (!l->rung) {
		ring_all(l);
		l->rung = true;
		return;
	}
	err = offer(l, 0);
	if (err) {
		toe_detach(l, &l->slot[0]);
		l->slot[0].pending = false;
		return;
	}
	l->toe_pid = l->slot[0].toe_pid;
	for (unsigned int i = 1; i < l->cfg.nslots; i++)
		offer(l, i);	/* a failure stays pending: retried by scan */
	l->lost = false;
	l->rung = false;
	publish(l);
	l->st.toe_follows++;
	say(l, "following the new TOE (pid %d)", (int)l->toe_pid);
}

static void on_peer(void *arg, unsigned int peer, bool joined)
{
	struct ivs_link *l = arg;

	if (joined) {
		l->st.peer_joins++;
		say(l, "guest peer %u joined", peer);
		return;
	}
	l->st.peer_leaves++;
	say(l, "guest peer %u left", peer);
	if (l->nleft < MAX_LEFT)
		l->left[l->nleft++] = (uint16_t)peer;
}

/* Slots claimed by guests that left the server: their processes are gone. */
static void handle_left(struct ivs_link *l)
{
	if (l->lost) {
		l->nleft = 0;	/* no claims while lost */
		return;
	}
	for (unsigned int k = 0; k < l->nleft; k++)
		for (unsigned int i = 0; i < l->cfg.nslots; i++)
			if (!l->slot[i].pending && slot_state(l, i) == TCR_LINK_CLAIMED &&
			    tc_load_relaxed(&l->tab->slot[i].guest_peer) == l->left[k])
				recycle(l, i);
	l->nleft = 0;
}

static void arm_timer(struct ivs_link *l)
{
	int64_t ns = l->doorbell ? HOUSEKEEP_NS : l->poll_ns;
	struct itimerspec its;

	if (l->lost)
		ns = FOLLOW_NS;	/* also in poll mode: nothing to scan meanwhile */
	for (unsigned int i = 0; i < l->cfg.nslots; i++)
		if (l->slot[i].pending && ns > PENDING_NS)
			ns = PENDING_NS;
	if (ns == l->timer_ns)
		return;
	its.it_value.tv_sec = its.it_interval.tv_sec = ns / 1000000000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = ns % 1000000000;
	timerfd_settime(l->tfd, 0, &its, NULL);
	l->timer_ns = ns;
}

/*
 * Poll mode: every poll_us while anything moves; after IDLE_SCANS scans
 * without a kick or a wake-up from the TOE the period doubles, up to
 * POLL_IDLE_NS (the guest's timer backs off the same way, gl_vm.h).
 */
static void scan(struct ivs_link *l)
{
	int64_t now = now_ns();

	if (l->lost) {
		follow(l);
		return;
	}
	if (!l->doorbell && ++l->idle_scans >= IDLE_SCANS && l->poll_ns < POLL_IDLE_NS) {
		l->poll_ns = l->poll_ns * 2 > POLL_IDLE_NS ? POLL_IDLE_NS : l->poll_ns * 2;
		l->idle_scans = 0;
	}

	for (unsigned int i = 0; i < l->cfg.nslots; i++) {
		struct link_slot *s = &l->slot[i];

		if (s->pending) {
			if (now - s->last_attach_ns >= RECYCLE_MIN_NS)
				offer(l, i);
			continue;
		}
		from_guest(l, i, false);
	}
}

/* ---- setup ------------------------------------------------------------------ */

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* Map the header page; the region must be formatted (READY). */
static int map_region(struct ivs_link *l)
{
	struct stat st;
	uint64_t rsize, want;

	l->fd = open(l->region_path, O_RDWR | O_CLOEXEC);
	if (l->fd < 0)
		return -errno;
	if (fstat(l->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < TCR_PAGE)
		return -EINVAL;
	l->hdr = mmap(NULL, TCR_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, l->fd, 0);
	if (l->hdr == MAP_FAILED) {
		l->hdr = NULL;
		return -errno;
	}
	/* Pairs with the TOE's store-release of READY after formatting. */
	if (tc_load_acquire(&l->hdr->state) != TCR_STATE_READY ||
	    tc_load_relaxed(&l->hdr->magic) != TCR_MAGIC ||
	    tc_load_relaxed(&l->hdr->version) != TCR_LAYOUT_VERSION)
		return -EINVAL;
	rsize = tc_load_relaxed(&l->hdr->region_size);
	if (rsize > (uint64_t)st.st_size)
		return -EINVAL;
	want = pow2_at_least((uint64_t)st.st_size);
	if (want != (uint64_t)st.st_size && ftruncate(l->fd, (off_t)want))
		return -errno;
	l->bar_size = want;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	l->tab = &l->hdr->link;
	l->seq = tc_load_relaxed(&l->tab->seq);
	return 0;
}

struct ivs_link *ivs_link_create(const struct ivs_link_config *cfg)
{
	struct ivs_link *l;
	sigset_t mask;
	int err;

	if (!cfg || !cfg->region_path || cfg->nslots > TCR_LINK_SLOTS) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->cfg = *cfg;
	if (!l->cfg.nslots)
		l->cfg.nslots = IVS_LINK_DEFAULT_SLOTS;
	if (!l->cfg.poll_us)
		l->cfg.poll_us = IVS_LINK_DEFAULT_POLL_US;
	l->poll_ns = (int64_t)l->cfg.poll_us * 1000;
	if (!l->cfg.max_peers)
		l->cfg.max_peers = 4;
	l->doorbell = cfg->doorbell_socket != NULL;
	l->fd = l->ep = l->sfd = l->tfd = -1;
	for (unsigned int i = 0; i < TCR_LINK_SLOTS; i++)
		l->slot[i].conn = l->slot[i].efd_guest = l->slot[i].efd_toe = -1;
	l->region_path = strdup(cfg->region_path);
	l->doorbell_socket = cfg->doorbell_socket ? strdup(cfg->doorbell_socket) : NULL;
	if (!l->region_path || (cfg->doorbell_socket && !l->doorbell_socket)) {
		err = -ENOMEM;
		goto out;
	}
	l->cfg.region_path = l->region_path;
	l->cfg.doorbell_socket = l->doorbell_socket;

	err = map_region(l);
	if (err)
		goto out;
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->ep < 0 || l->tfd < 0) {
		err = -errno;
		goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, &l->oldmask);
	l->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (l->sfd < 0) {
		err = -errno;
		goto out;
	}
	if ((err = ep_add(l, l->sfd, TOK(TOK_SIG, 0))) ||
	    (err = ep_add(l, l->tfd, TOK(TOK_TIMER, 0))))
		goto out;

	/* Withdraw whatever an earlier link published before offering anew. */
	tc_store_release(&l->tab->magic, 0u);
	for (unsigned int i = 0; i < TCR_LINK_SLOTS; i++)
		tc_store_relaxed(&l->tab->slot[i].state, (uint32_t)TCR_LINK_FREE);

	if (l->doorbell) {
		struct ivs_server_config sc = {
			.socket_path = l->doorbell_socket,
			.shm_fd = l->fd,
			.nvectors = l->cfg.nslots,
			.max_peers = l->cfg.max_peers,
			.host_peer = true,
		};

		l->srv = ivs_server_create(&sc);
		if (!l->srv) {
			err = -errno;
			goto out;
		}
		ivs_server_set_callback(l->srv, on_peer, l);
		if ((err = ep_add(l, ivs_server_fd(l->srv), TOK(TOK_SRV, 0))))
			goto out;
		for (unsigned int i = 0; i < l->cfg.nslots; i++)
			if ((err = ep_add(l, ivs_server_host_eventfd(l->srv, i), TOK(TOK_HVEC, i))))
				goto out;
	}
	for (unsigned int i = 0; i < l->cfg.nslots; i++) {
		/* the first attach must work: no TOE, or no channel for us */
		if ((err = offer(l, i)))
			goto out;
	}
	l->toe_pid = l->slot[0].toe_pid;
	publish(l);
	arm_timer(l);
	return l;

out:
	ivs_link_destroy(l);
	errno = -err;
	return NULL;
}

/* The table's header, then its magic: guests may claim from here on. */
static void publish(struct ivs_link *l)
{
	tc_store_relaxed(&l->tab->nslots, l->cfg.nslots);
	tc_store_relaxed(&l->tab->mode,
			 (uint32_t)(l->doorbell ? TCR_LINK_DOORBELL : TCR_LINK_POLL));
	tc_store_relaxed(&l->tab->host_peer,
			 (uint32_t)(l->srv ? ivs_server_host_id(l->srv) : 0));
	tc_store_relaxed(&l->tab->poll_us, l->cfg.poll_us);
	tc_store_relaxed(&l->tab->link_pid, (uint32_t)getpid());
	tc_store_relaxed(&l->tab->seq, ++l->seq);
	/* Pairs with the driver's load-acquire of magic. */
	tc_store_release(&l->tab->magic, (uint32_t)TCR_LINK_MAGIC);
}

/* ---- the loop ----------------------------------------------------------------- */

int ivs_link_run(struct ivs_link *l)
{
	struct epoll_event ev[64];
	int ret = 0;

	l->stop = false;
	while (!l->stop) {
		int n = epoll_wait(l->ep, ev, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int k = 0; k < n && !l->stop; k++) {
			uint32_t kind = (uint32_t)(ev[k].data.u64 >> 32);
			uint32_t i = (uint32_t)ev[k].data.u64;
			struct signalfd_siginfo si;
			uint64_t v;

			switch (kind) {
			case TOK_SIG:
				if (read(l->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					l->stop = true;
				break;
			case TOK_SRV:
				ivs_server_dispatch(l->srv, 0);
				handle_left(l);
				break;
			case TOK_TIMER:
				if (read(l->tfd, &v, sizeof(v)) > 0)
					scan(l);
				break;
			case TOK_CONN:
				/* The TOE never writes here after the welcome. */
				if (i < l->cfg.nslots && toe_hangup(l, i)) {
					ret = -EPIPE;
					l->stop = true;
				}
				break;
			case TOK_GEFD:
				if (i < l->cfg.nslots && l->slot[i].efd_guest >= 0)
					to_guest(l, i);
				break;
			case TOK_HVEC:
				if (i < l->cfg.nslots) {
					drain_fd(ivs_server_host_eventfd(l->srv, i));
					from_guest(l, i, true);
				}
				break;
			}
		}
		arm_timer(l);
	}
	return l->err ? l->err : ret;
}

void ivs_link_stop(struct ivs_link *l)
{
	l->stop = true;
}

void ivs_link_destroy(struct ivs_link *l)
{
	if (!l)
		return;
	if (l->tab && (!l->lost || region_ready(l))) {
		tc_store_release(&l->tab->magic, 0u);
		for (unsigned int i = 0; i < l->cfg.nslots; i++) {
			uint32_t peer = tc_load_relaxed(&l->tab->slot[i].guest_peer);

			/* wake a claimed guest's sleepers: its channel is going */
			if (l->srv && slot_state(l, i) == TCR_LINK_CLAIMED &&
			    peer_connected(l, peer))
				ivs_server_ring(l->srv, peer, i);
			tc_store_relaxed(&l->tab->slot[i].state, (uint32_t)TCR_LINK_FREE);
		}
	}
	for (unsigned int i = 0; i < TCR_LINK_SLOTS; i++)
		toe_detach(l, &l->slot[i]);
	if (l->srv)
		ivs_server_destroy(l->srv);
	if (l->sfd >= 0) {
		close(l->sfd);
		pthread_sigmask(SIG_SETMASK, &l->oldmask, NULL);
	}
	if (l->tfd >= 0)
		close(l->tfd);
	if (l->ep >= 0)
		close(l->ep);
	if (l->hdr)
		munmap(l->hdr, TCR_PAGE);
	if (l->fd >= 0)
		close(l->fd);
	free(l->region_path);
	free(l->doorbell_socket);
	free(l);
}

void ivs_link_get_stats(const struct ivs_link *l, struct ivs_link_stats *st)
{
	*st = l->st;
}
