// SPDX-License-Identifier: MIT
/*
 * The TOE: life cycle and the event loop, which ties the layers together
 * (stage -> socket -> channel, toe_int.h): it hands the channel layer the
 * socket layer's handlers, dispatches epoll events to the layer they
 * belong to and runs each layer's turn.  See toe.h for the API and
 * toe_int.h for the threading and trust rules of all its files.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <urcu/urcu-memb.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "tochain/srpc.h"
#include "toe_chan.h"
#include "toe_flow.h"
#include "toe_hold.h"
#include "toe_perm.h"
#include "toe_sock.h"
#include "toe_ready.h"
#include "toe_stage.h"

#define SPIN_MAX_NS 20000	/* ceiling of the event loop's spin (spin_for_work) */

/* What the channel layer hands up goes to the socket layer. */
static const struct toe_chan_ops chan_ops = {
	.tx_data = toe_sock_on_tx_data,
	.request = toe_sock_on_request,
	.rx_done = toe_sock_on_rx_done,
	.uncapped = toe_sock_on_uncapped,
	.dropped = toe_sock_on_dropped,
	.ev_done = toe_sock_on_ev_done,
};

void toe_params_default(struct toe_params *p)
{
	memset(p, 0, sizeof(*p));
	p->nbufs = 4096;	/* 64 MiB: 16 channels keep 64 grants (tochain-toe) */
	p->slot_size = 16384;
	p->nchannels = 16;
	p->grants = 64;
	p->rx_bound = 0;	/* toe_create: 1 MiB worth, at least 16 buffers */
	p->max_socks = 4096;
	p->ready_fd = -1;
	p->guest_gid = -1;
}


/* ---- life cycle ------------------------------------------------------------- */

/* The TOE object and its arrays (any of them may be NULL). */
static void toe_free(struct toe *t)
{
	free(t->ctl_path);
	free(t->buf_txf);
	free(t->buf_src);
	free(t->buf_seq);
	free(t->sock_path);
	free(t->buf_epoch);
	free(t->buf_dst);
	free(t->buf_chan);
	free(t->buf_off);
	free(t->buf_len);
	free(t->buf_sock);
	free(t->buf_ev);
	free(t->buf_next);
	free(t->socks);
	free(t->forks);
	free(t->ch);
	free(t);
}

/* The capture's question: is socket @id still open, and its tuple (the loop thread)? */
static bool cap_alive(void *ctx, uint32_t id, struct ch_pkt *pkt)
{
	struct toe_sock *s = toe_sock_get(ctx, id);

	if (s && pkt)
		toe_flow_tuple(ctx, s, 0, TOE_DIR_IN, pkt);	/* TCP: the socket's own tuple */
	return s != NULL;
}

struct toe *toe_create(const struct toe_params *p)
{
	struct tcr_params rp = {
		.name = p->name, .kind = TCR_KIND_GUEST, .nbufs = p->nbufs,
		.slot_size = p->slot_size, .nchannels = p->nchannels,
	};
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct epoll_event ev;
	sigset_t sigs;
	struct toe *t;
	uint32_t out_nbufs;
	int err = EINVAL;

	if (!p->region_path || !tcr_name_valid(p->name) || p->slot_size < SRPC_MSG_MAX ||
	    p->nchannels == 0 || p->nchannels > TCR_MAX_CHANNELS ||
	    p->max_socks == 0 || p->max_socks > 0xffff ||
	    (uint64_t)p->nchannels * p->grants + RESERVE_BUFS * 2 > p->nbufs)
		goto out_errno;
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = ENOMEM;
		goto out_errno;
	}
	t->p = *p;
	t->chan_ops = &chan_ops;
	tcr_spin_init(&t->spin, SPIN_MAX_NS);
	t->chan_cap = p->nbufs / 4;
	if (t->chan_cap < p->grants + 4 * 16)
		t->chan_cap = p->grants + 4 * 16;
	if (!t->p.rx_bound) {
		/*
		 * 1 MiB: with 256 KiB one stream went in lock-step, the TOE
		 * reading up to the bound and sleeping while the guest
		 * copied it out (docs/EVALUATION.md, "Issue 14: the download
		 * direction").
		 */
		t->p.rx_bound = (1024u << 10) / p->slot_size;
		if (t->p.rx_bound < 16)
			t->p.rx_bound = 16;
		if (t->p.rx_bound > p->nbufs / 8)
			t->p.rx_bound = p->nbufs / 8 > 1 ? p->nbufs / 8 : 1;
	}
	t->epfd = t->lfd = t->sfd = -1;
	for (int i = 0; i < HELLO_MAX; i++)
		t->hello[i].fd = -1;
	err = ENOMEM;
	/*
	 * One R.out slot per region buffer: a copy lives only while its guest
	 * buffer is held, so R.out can never be what a socket waits for
	 * (the file is sparse: untouched slots cost no memory).
	 */
	out_nbufs = p->nbufs;
	t->nitems = p->nbufs + out_nbufs;
	t->ch = calloc(p->nchannels, sizeof(*t->ch));
	t->forks = calloc(p->nchannels, sizeof(*t->forks));
	t->socks = calloc(p->max_socks, sizeof(*t->socks));
	t->buf_next = calloc(t->nitems, sizeof(uint32_t));
	t->buf_sock = calloc(t->nitems, sizeof(uint32_t));
	t->buf_ev = calloc(p->nbufs, sizeof(uint32_t));
	t->buf_len = calloc(t->nitems, sizeof(uint32_t));
	t->buf_off = calloc(t->nitems, sizeof(uint32_t));
	t->buf_chan = calloc(p->nbufs, sizeof(uint16_t));
	t->buf_epoch = calloc(p->nbufs, sizeof(uint32_t));
	t->buf_dst = calloc(t->nitems, sizeof(*t->buf_dst));
	t->buf_seq = calloc(t->nitems, sizeof(uint64_t));
	t->buf_src = calloc(t->nitems, sizeof(uint32_t));
	t->buf_txf = calloc(t->nitems, sizeof(uint8_t));
	t->sock_path = malloc(strlen(p->region_path) + 6);
	t->ctl_path = malloc(strlen(p->region_path) + 5);
	if (!t->ch || !t->forks || !t->socks || !t->buf_next || !t->buf_sock || !t->buf_ev || !t->buf_len ||
	    !t->buf_off || !t->buf_chan || !t->buf_epoch || !t->buf_dst || !t->buf_seq || !t->buf_src ||
	    !t->buf_txf ||
	    !t->sock_path || !t->ctl_path)
		goto out_free;
	sprintf(t->ctl_path, "%s.ctl", p->region_path);
	sprintf(t->sock_path, "%s.sock", p->region_path);
	err = ENAMETOOLONG;
	if (strlen(t->sock_path) >= sizeof(sun.sun_path))
		goto out_free;
	strcpy(sun.sun_path, t->sock_path);

	t->r = tcr_region_create(p->region_path, &rp);
	if (!t->r) {
		err = errno;
		goto out_free;
	}
	t->pool = tcr_pool_create(t->r);
	if (!t->pool) {
		err = errno;
		goto out_region;
	}
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	t->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (t->epfd < 0 || t->lfd < 0) {
		err = errno;
		goto out_fds;
	}
	unlink(t->sock_path);
	if (bind(t->lfd, (struct sockaddr *)&sun, sizeof(sun)) || listen(t->lfd, 64)) {
		err = errno;
		goto out_fds;
	}
	err = -toe_perm_apply(p, t->sock_path);
	if (err)
		goto out_unlink;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);	/* print the counters (dump_stats) */
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	t->sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->sfd < 0) {
		err = errno;
		goto out_unlink;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = EV_KEY(EV_ATTACH, 0);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->lfd, &ev)) {
		err = errno;
		goto out_unlink;
	}
	ev.data.u64 = EV_KEY(EV_SIGNAL, 0);
	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->sfd, &ev)) {
		err = errno;
		goto out_unlink;
	}
	t->tc = toe_chain_create(p->region_path, p->name, p->nbufs, p->slot_size, out_nbufs,
				 2 * p->max_socks, t->epfd, EV_KEY(EV_BELL, 0));
	if (!t->tc) {
		err = errno;
		goto out_unlink;
	}
	t->held = p->hold;
	t->hold = toe_hold_create(p->hold);
	ev.data.u64 = EV_KEY(EV_HOLD, 0);
	if (!t->hold || epoll_ctl(t->epfd, EPOLL_CTL_ADD, toe_hold_fd(t->hold), &ev)) {
		err = errno;
		goto out_hold;
	}
	t->cap = toe_capture_create(p->max_socks, p->slot_size, cap_alive, t);
	if (!t->cap) {
		err = errno;
		goto out_hold;
	}
	t->ctl = toe_ctl_start(t->ctl_path, p->name, t->tc, t->cap, t->hold);
	if (!t->ctl) {
		err = errno;
		goto out_capture;
	}
	return t;

out_capture:
	toe_capture_destroy(t->cap);
out_hold:
	toe_hold_destroy(t->hold);
	toe_chain_destroy(t->tc);
out_unlink:
	unlink(t->sock_path);
out_fds:
	if (t->sfd >= 0)
		close(t->sfd);
	if (t->lfd >= 0)
		close(t->lfd);
	if (t->epfd >= 0)
		close(t->epfd);
	tcr_pool_destroy(t->pool);
out_region:
	tcr_region_kill(t->r);
	tcr_region_destroy(t->r);
out_free:
	toe_free(t);
out_errno:
	errno = err;
	return NULL;
}

void toe_stop(struct toe *t)
{
	t->stop = true;
}

/*
 * Under load, poll a little before sleeping: a request/response exchange
 * then costs no wake-up on either side.  How long is the adaptive budget's
 * call (tochain/spin.h): nothing on a crowded host or after spins that
 * found nothing, up to SPIN_MAX_NS when work kept arriving soon after we
 * slept.  Everything in the epoll set is level-triggered, so a peek with
 * epoll_wait(0) loses nothing.
 */
static bool spin_for_work(struct toe *t)
{
	uint32_t budget = tcr_spin_budget(&t->spin);
	uint64_t end = tu_now_ns() + budget;
	struct epoll_event ev;

	if (!budget)
		return false;
	do {
		if (toe_chan_work_waiting(t) || toe_chain_poll(t->tc) ||
		    toe_chain_results_waiting(t->tc) || epoll_wait(t->epfd, &ev, 1, 0) > 0) {
			tcr_spin_spun(&t->spin, true);
			return true;
		}
		tc_cpu_relax();
	} while (tu_now_ns() < end);
	tcr_spin_spun(&t->spin, false);
	return false;
}

/* SIGUSR1: one line of counters on stderr (tests check for leaked sockets;
 * make soak for leaked buffers: the pool's free stock and host-held count). */
static void dump_stats(const struct toe *t)
{
	uint32_t chans = toe_chan_count_open(t);

	fprintf(stderr, "tochain-toe[%s]: stats: channels_open=%u sockets_open=%llu "
		"guests_attached=%llu guests_dropped=%llu bad_messages=%llu bytes_in=%llu "
		"bytes_out=%llu bufs=%u bufs_free=%d bufs_host=%d\n", t->p.name, chans,
		(unsigned long long)t->st.socks_open,
		(unsigned long long)t->st.guests_attached,
		(unsigned long long)t->st.guests_dropped,
		(unsigned long long)t->st.bad_messages, (unsigned long long)t->st.bytes_in,
		(unsigned long long)t->st.bytes_out, t->pool->nbufs,
		tcr_pool_count(t->pool, TCR_HOLDER_FREE), tcr_pool_count(t->pool, TCR_HOLDER_HOST));
}

static void take_signals(struct toe *t)
{
	struct signalfd_siginfo si;

	while (read(t->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			dump_stats(t);
		else
			t->stop = true;
	}
}

int toe_run(struct toe *t)
{
	struct epoll_event evs[64];
	bool busy = true;

	if (t->p.ready_fd >= 0) {
		char c = 'R';

		if (write(t->p.ready_fd, &c, 1) != 1)
			return -errno;
		close(t->p.ready_fd);
		t->p.ready_fd = -1;
	}
	urcu_memb_register_thread();	/* the chain's scheduler runs here */
	while (!t->stop) {
		uint64_t slept = 0, ns = 0;
		bool prepared = false, chain_prepared = false;
		int n;

		/*
		 * Sleep once a turn did nothing, the spin found nothing, and
		 * the guests' rings, the chain's results and the verdict rings
		 * of VNF threads holding work stayed empty after we announced
		 * the sleep.  The guests' doorbells, the sockets and the VNFs'
		 * bells wake us; the scheduler bounds the sleep only for its
		 * liveness checks (50 ms) and for VNF threads without a bell.
		 */
		if (!busy && !spin_for_work(t)) {
			prepared = true;
			if (toe_chan_sleep_prepare(t)) {
				chain_prepared = toe_chain_sleep_prepare(t->tc, &ns);
				if (!chain_prepared)
					ns = 0;
				else
					slept = tu_now_ns();
			}
		}
		n = tu_epoll_wait_ns(t->epfd, evs, 64, ns);
		if (chain_prepared)
			toe_chain_sleep_done(t->tc);
		if (prepared)
			toe_chan_sleep_done(t);	/* also when the re-check found work */
		if (slept && n > 0)
			tcr_spin_woke(&t->spin, tu_now_ns() - slept);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n; i++) {
			uint32_t kind = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t idx = (uint32_t)evs[i].data.u64;

			switch (kind) {
			case EV_ATTACH:
				toe_chan_accept(t);
				break;
			case EV_HELLO:
				toe_chan_attach(t, (int)idx);
				break;
			case EV_SIGNAL:
				take_signals(t);
				break;
			case EV_CONN:
				toe_chan_conn_event(t, idx, evs[i].events);
				break;
			case EV_DOORBELL:
				toe_chan_doorbell(t, idx);
				break;
			case EV_SOCK:
				toe_sock_event(t, idx, evs[i].events);
				break;
			case EV_BELL:
				toe_chain_bell_rang(t->tc, idx);
				break;
			case EV_HOLD:
				if (!toe_hold_held(t->hold) && t->held) {
					t->held = false;
					toe_sock_unhold(t);
				}
				break;
			}
		}
		busy = false;
		/* Verdicts the bells announced: results for this turn to take. */
		toe_chain_poll(t->tc);
		for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
			if (t->ch[ch].open && toe_chan_service(t, ch))
				busy = true;
		if (toe_stage_step(t))
			busy = true;
		toe_stage_drain(t);
		/* This turn's submits to the VNFs; results it released wait for the next. */
		toe_chain_poll(t->tc);
		if (toe_chain_results_waiting(t->tc))
			busy = true;
		for (uint32_t ch = 0; ch < t->p.nchannels; ch++) {
			toe_sock_fork_check(t, ch);
			toe_chan_end_turn(t, ch);
		}
	}
	urcu_memb_unregister_thread();
	return 0;
}

void toe_destroy(struct toe *t)
{
	if (!t)
		return;
	toe_ctl_stop(t->ctl);
	toe_capture_destroy(t->cap);	/* writes what is queued */
	for (uint32_t ch = 0; ch < t->p.nchannels; ch++)
		toe_chan_drop(t, ch, "shutting down");
	for (uint32_t i = 0; i < t->p.max_socks; i++)
		if (t->socks[i].id)
			toe_sock_free(t, &t->socks[i]);
	for (int i = 0; i < HELLO_MAX; i++)
		if (t->hello[i].fd >= 0)
			toe_chan_hello_drop(t, i);
	toe_chain_destroy(t->tc);	/* stops the scheduler: nothing reads the region now */
	toe_hold_destroy(t->hold);
	tcr_region_kill(t->r);
	unlink(t->sock_path);
	close(t->sfd);
	close(t->lfd);
	close(t->epfd);
	tcr_pool_destroy(t->pool);
	tcr_region_destroy(t->r);
	toe_free(t);
}

void toe_get_stats(const struct toe *t, struct toe_stats *s)
{
	*s = t->st;
}
