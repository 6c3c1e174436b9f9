// SPDX-License-Identifier: MIT
/*
 * The packet scheduler, scheduler thread: VNF liveness (dead pid, no
 * progress), failure and restart.
 * State and rules: ch_psched_int.h.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/chan.h>
#include <tochain/desc.h>
#include <tochain/pool.h>
#include <tochain/region.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "ch_psched_int.h"
#include "ch_psched_collect.h"
#include "ch_psched_dispatch.h"
#include "ch_psched_live.h"
#include "ch_psched_loop.h"

void ch_psched_live_fail(struct ch_psched *s, struct vnf *vn, const char *why)
{
	if (vn->failed)
		return;
	fprintf(stderr, "chain: vnf %s failed (%s), policy %s\n", vn->name, why,
		vn->policy == CH_FAIL_OPEN ? "open: bypassing it" : "closed: denying");
	tc_store_relaxed(&vn->failed, true);
	stat_add(&vn->failures, 1);
	for (uint32_t idx = 0; idx < s->cfg.vnf_nbufs; idx++) {
		int h = tcr_pool_holder(vn->pool, idx);

		if (h >= (int)TCR_HOLDER_CH(0))
			ch_psched_collect_verdict(s, vn, &vn->vd[idx], 0, 0, true);
	}
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		tcr_chan_close(&vn->chan[c], vn->pool);
		vn->vc[c].outstanding = 0;
		tc_store_relaxed(&vn->vc[c].outstanding, 0);
		vn->vc[c].kick = false;
	}
	pool_note(vn);
	/* Wake threads sleeping on RX so that they see the channel closed. */
	for (uint32_t c = 0; c < vn->nthreads; c++)
		futex_wake(tcr_ring_kick_consumer(&vn->chan[c].ring[TCR_CH_RX]));
}

static void vnf_reopen(struct ch_psched *s, struct vnf *vn, int pid)
{
	ch_psched_live_fail(s, vn, "restart");
	/* The bells were the old process's; the reopened channels announce none yet. */
	ch_psched_loop_forget(s, vn);
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		tcr_chan_open(&vn->chan[c], vn->r, c);
		vn->vc[c].last_progress = tu_now_ns();
	}
	tc_store_relaxed(&vn->epoch, vn->epoch + 1);
	tc_store_relaxed(&vn->failed, false);
	tc_store_relaxed(&vn->pid, pid);
	for (uint32_t r = 0; r < CH_MAX_REGIONS; r++)
		if (vn->grants[r])
			ch_psched_dispatch_ctrl_all(s, vn, VNF_CTRL_GRANT, r);
	fprintf(stderr, "chain: vnf %s reopened for pid %d\n", vn->name, pid);
}

/*
 * Whether a VNF's process is alive is asked of a pidfd: readable once
 * the process exited, a zombie included, so one poll(2) answers for
 * every VNF every check (2 ms) and nothing is read from /proc.  Where
 * pidfd_open(2) is refused (before Linux 5.3, a seccomp filter), kill(pid,
 * 0) answers, and since a zombie still answers kill(), its state is read
 * from /proc every ZOMBIE_EVERY-th check (100 ms): the open, read and
 * close of /proc/PID/stat of every VNF every 2 ms were a sixth of the
 * TOE's CPU in bench 92's closed-loop sync run (perf), a cost per second
 * that weighs most per request where the chain is held at its SLA.  A
 * VNF's parent (tochaind) reaps it at once anyway.
 */
#define ZOMBIE_EVERY	50

static bool pid_dead(int pid, bool look)
{
	char path[64], buf[256];
	FILE *f;
	char *p;
	bool dead = false;

	if (pid <= 0)
		return false;
	if (kill(pid, 0) && errno == ESRCH)
		return true;
	if (!look)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) && p[1] == ' ')
		dead = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return dead;
}

void ch_psched_live_forget(struct ch_psched *s, struct vnf *vn)
{
	ch_psched_loop_forget(s, vn);	/* taken through the pidfd */
	if (vn->pidfd_of > 0 && vn->pidfd >= 0)
		close(vn->pidfd);
	vn->pidfd_of = 0;
	vn->pidfd = -1;
}

/*
 * The pidfd of @vn's process @pid, opened when @pid is new; -1: ask
 * kill(2).  *@gone: the process was gone before we could open one.
 */
static int vnf_pidfd(struct ch_psched *s, struct vnf *vn, int pid, bool *gone)
{
	*gone = false;
	if (pid <= 0)
		return -1;
	if (vn->pidfd_of == pid)
		return vn->pidfd;
	ch_psched_live_forget(s, vn);
	vn->pidfd_of = pid;
	vn->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (vn->pidfd < 0 && errno == ESRCH) {
		*gone = true;
		vn->pidfd_of = 0;	/* a later pid gets its own try */
	}
	return vn->pidfd;
}

/* Of the first @nvnfs VNFs, mark in @dead[] those whose process exited. */
static void find_dead(struct ch_psched *s, uint32_t nvnfs, bool look, bool *dead)
{
	struct pollfd pf[CH_MAX_VNFS];
	uint32_t who[CH_MAX_VNFS], n = 0;

	for (uint32_t v = 0; v < nvnfs; v++) {
		struct vnf *vn = &s->vnf[v];
		int pid = tc_load_acquire(&vn->pid);
		bool gone;
		int fd;

		dead[v] = false;
		if (vn->failed || tc_load_relaxed(&vn->restart_pid) >= 0)
			continue;
		fd = vnf_pidfd(s, vn, pid, &gone);
		if (gone)
			dead[v] = true;
		else if (fd >= 0) {
			ch_psched_loop_take(s, vn, fd);
			pf[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
			who[n++] = v;
		} else
			dead[v] = pid_dead(pid, look);
	}
	if (n && poll(pf, n, 0) > 0)
		for (uint32_t i = 0; i < n; i++)
			if (pf[i].revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL))
				dead[who[i]] = true;
}

void ch_psched_live_check(struct ch_psched *s, uint32_t nvnfs)
{
	bool look = s->live_round++ % ZOMBIE_EVERY == 0;
	bool dead[CH_MAX_VNFS];

	find_dead(s, nvnfs, look, dead);
	for (uint32_t v = 0; v < nvnfs; v++) {
		struct vnf *vn = &s->vnf[v];
		int rp = tc_load_acquire(&vn->restart_pid);
		/* Per VNF: failing one may just have dispatched work to the next. */
		uint64_t now = tu_now_ns();

		if (rp >= 0) {
			tc_store_relaxed(&vn->restart_pid, -1);
			vnf_reopen(s, vn, rp);
			continue;
		}
		if (vn->failed)
			continue;
		if (dead[v]) {
			ch_psched_live_fail(s, vn, "process died");
			continue;
		}
		for (uint32_t c = 0; c < vn->nthreads; c++)
			if (vn->vc[c].outstanding && now > vn->vc[c].last_progress &&
			    now - vn->vc[c].last_progress > s->cfg.hang_ns) {
				ch_psched_live_fail(s, vn, "no progress: hung");
				break;
			}
	}
}
