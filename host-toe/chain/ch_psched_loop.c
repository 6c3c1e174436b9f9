// SPDX-License-Identifier: MIT
/*
 * The packet scheduler run by its owner's epoll loop (the TOE's, or a
 * test driver's), the only way it runs: the VNF threads' bells and the
 * loop's sleep.
 *
 * WHY.  With a scheduler thread of its own (removed), each batch cost two
 * hand-offs between threads: the TOE's submit woke the scheduler, the
 * scheduler's release woke the TOE (docs/EVALUATION.md, "Tried: the packet
 * scheduler polled by the TOE loop").  In the TOE's loop the scheduler is
 * a call per turn.
 * But that loop sleeps in epoll, and epoll cannot wait on the futexes a
 * VNF thread rings on its verdict (TX) ring.  So each host VNF thread
 * owns an eventfd, its bell, and announces its number in its channel
 * (struct tcr_channel.bell, fd + 1 in its process); the scheduler takes
 * the file through the pidfd it opened for the VNF's pid (the control
 * plane's pid, never the channel's owner_pid: ch_psched_live.c) with
 * pidfd_getfd(2) and adds it to the loop's epoll set, edge-triggered.
 * Before the loop sleeps, every TX ring of a thread that holds work of
 * ours is armed with TCR_WAKE_BELL (tochain/ring.h), and the thread
 * writes its bell after its next verdicts (vnf_flush()).  A bell is never
 * read: with EPOLLET each write is an edge, and the counter cannot fill.
 *
 * TRUST.  A VNF region is writable by its VNF, which may run in a VM or be
 * hostile.  The announcement is a hint: it may name
 * any file of the VNF's process, so only an eventfd is kept, and only
 * waited on.  For a VNF in a VM the process is its QEMU (tochaind's pid):
 * a guest that writes the field can name one of QEMU's eventfds; we then
 * wake when it fires (muted below if that brings no verdicts) or sleep
 * longer on that thread's verdicts, which delays only what the VNF
 * could delay anyway by not answering.  A thread without a bell (a VNF in a VM, whose wake-ups
 * would not reach the host; a kernel without pidfd_getfd; a take the
 * kernel refused) is napped for NAP_NS while it holds work.  A bell that
 * rings without verdicts (FRUITLESS_MAX wake-ups in a row) is muted, its
 * epoll entry disabled, for FRUITLESS_NS, and its thread napped
 * meanwhile.  A thread's announcement is taken at most TAKES_MAX times
 * per process (a thread re-attaches with a new bell; one that keeps
 * changing it costs a system call each).  Nothing a VNF writes makes the
 * loop sleep forever or spin:
 * a VNF that holds work without answering is failed as hung
 * (ch_psched_live.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/region.h>
#include <tochain/ring.h>
#include <tochain/util.h>

#include "ch_psched_loop.h"
#include "ch_psched_sla.h"

#define TAKES_MAX	4		/* announcements taken per thread and process */

#define BELL_ID(v, c)	((uint32_t)(v) << 8 | (uint32_t)(c))

int ch_psched_loop_attach(struct ch_psched *s, int epfd, uint64_t tag)
{
	if (epfd < 0 || (uint32_t)tag)
		return -EINVAL;
	s->loop_epfd = epfd;
	s->loop_tag = tag;
	return 0;
}

/* Whether the file behind our @fd is an eventfd. */
static bool is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

static void bell_drop(struct ch_psched *s, struct vchan *vc)
{
	if (vc->bell_of && vc->bell >= 0) {
		/* The VNF keeps the file open: our close alone would not remove it. */
		epoll_ctl(s->loop_epfd, EPOLL_CTL_DEL, vc->bell, NULL);
		close(vc->bell);
	}
	vc->bell_of = 0;
	tc_store_relaxed(&vc->bell, -1);	/* bell and bell_muted: read by info */
	vc->bell_pending = false;
	vc->bell_fruitless = 0;
	tc_store_relaxed(&vc->bell_muted, 0);
}

void ch_psched_loop_forget(struct ch_psched *s, struct vnf *vn)
{
	for (uint32_t c = 0; c < VNF_MAX_THREADS; c++) {
		bell_drop(s, &vn->vc[c]);
		vn->vc[c].bell_takes = 0;
	}
}

/* Add (@op EPOLL_CTL_ADD) or change thread @c's bell @fd in the loop's set. */
static int bell_ctl(struct ch_psched *s, struct vnf *vn, uint32_t c, int op, int fd,
		    uint32_t events)
{
	struct epoll_event ev = { .events = events,
				  .data.u64 = s->loop_tag | BELL_ID(vn - s->vnf, c) };

	return epoll_ctl(s->loop_epfd, op, fd, &ev);
}

static int bell_mod(struct ch_psched *s, struct vnf *vn, uint32_t c, uint32_t events)
{
	return bell_ctl(s, vn, c, EPOLL_CTL_MOD, vn->vc[c].bell, events);
}

void ch_psched_loop_take(struct ch_psched *s, struct vnf *vn, int pidfd)
{
	if (s->loop_epfd < 0 || pidfd < 0)
		return;
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		struct tcr_channel *ch = tcr_region_channel(vn->r, c);
		struct vchan *vc = &vn->vc[c];
		uint32_t said = ch ? tc_load_relaxed(&ch->bell) : 0;
		int fd;

		/* Taken (or refused) already; a process that keeps changing it is not heard. */
		if (said == vc->bell_of || vc->bell_takes >= TAKES_MAX)
			continue;
		bell_drop(s, vc);
		vc->bell_takes++;
		vc->bell_of = said;
		if (!said || said > INT_MAX)
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)(said - 1), 0);
		if (fd < 0) {
			fprintf(stderr, "chain: vnf %s thread %u: its bell cannot be taken (%s): "
				"napping while it holds work\n", vn->name, c, strerror(errno));
			continue;
		}
		if (!is_eventfd(fd) || bell_ctl(s, vn, c, EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLET)) {
			fprintf(stderr, "chain: vnf %s thread %u: its bell is not an eventfd: "
				"napping while it holds work\n", vn->name, c);
			close(fd);
			continue;
		}
		tc_store_relaxed(&vc->bell, fd);
	}
}

void ch_psched_bell_rang(struct ch_psched *s, uint32_t id)
{
	uint32_t v = id >> 8, c = id & 0xff;
	struct vchan *vc;

	if (v >= CH_MAX_VNFS || c >= VNF_MAX_THREADS)
		return;
	vc = &s->vnf[v].vc[c];
	if (!vc->bell_pending) {
		vc->bell_pending = true;
		vc->bell_taken = vc->taken;
	}
}

/*
 * Judge @vc's rings since the last sleep: one that brought no verdict is
 * fruitless, FRUITLESS_MAX in a row mute the bell (top); a muted bell
 * whose time is up is heard again.  Whether a thread can wake us.
 */
static bool bell_heard(struct ch_psched *s, struct vnf *vn, uint32_t c, uint64_t now)
{
	struct vchan *vc = &vn->vc[c];

	if (!vc->bell_of || vc->bell < 0)
		return false;
	if (vc->bell_pending) {
		vc->bell_pending = false;
		if (vc->taken != vc->bell_taken)
			vc->bell_fruitless = 0;
		else if (++vc->bell_fruitless >= FRUITLESS_MAX && !vc->bell_muted &&
			 !bell_mod(s, vn, c, 0))
			tc_store_relaxed(&vc->bell_muted, now + FRUITLESS_NS);
	}
	if (vc->bell_muted && now >= vc->bell_muted &&
	    !bell_mod(s, vn, c, EPOLLIN | EPOLLET)) {
		tc_store_relaxed(&vc->bell_muted, 0);
		vc->bell_fruitless = 0;
	}
	return !vc->bell_muted;
}

uint32_t ch_psched_loop_bells(struct vnf *vn)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < vn->nthreads; c++)
		if (tc_load_relaxed(&vn->vc[c].bell) >= 0 && !tc_load_relaxed(&vn->vc[c].bell_muted))
			n++;
	return n;
}

bool ch_psched_sleep_prepare(struct ch_psched *s, uint64_t *ns)
{
	uint32_t nvnfs = tc_load_acquire(&s->nvnfs);
	uint64_t now = tu_now_ns();
	bool quiet = false, ready = false;

	s->narmed = 0;
	for (uint32_t v = 0; v < nvnfs; v++) {
		struct vnf *vn = &s->vnf[v];

		if (!tc_load_acquire(&vn->present) || vn->failed)
			continue;
		for (uint32_t c = 0; c < vn->nthreads; c++) {
			struct tcr_ring *tx = &vn->chan[c].ring[TCR_CH_TX];

			if (!bell_heard(s, vn, c, now)) {
				if (vn->vc[c].outstanding)
					quiet = true;
				continue;
			}
			if (!vn->vc[c].outstanding || ready)
				continue;
			/* ring.c F1: the flag is up before we re-check the ring */
			tcr_ring_cons_wait_arm(tx, TCR_WAKE_BELL);
			s->armed[s->narmed++] = tx;
			if (tcr_ring_count(tx) != 0)
				ready = true;
		}
	}
	if (ready) {
		ch_psched_sleep_done(s);
		return false;
	}
	/* The CPU scheduler never judges a chain idle from older numbers. */
	ch_psched_sla_queues(s);
	if (quiet)
		*ns = NAP_NS;
	else if (nvnfs)
		*ns = SLEEP_NS;
	else
		*ns = UINT64_MAX;
	return true;
}

void ch_psched_sleep_done(struct ch_psched *s)
{
	for (uint32_t i = 0; i < s->narmed; i++)
		tcr_ring_cons_wait_done(s->armed[i]);
	s->narmed = 0;
}
