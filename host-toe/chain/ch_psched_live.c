// SPDX-License-Identifier: MIT
/*
 * The packet scheduler, scheduler thread: VNF liveness (dead pid, no
 * progress), failure and restart.
 * State and rules: ch_psched_int.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	for (uint32_t c = 0; c < vn->nthreads; c++) {
		tcr_chan_open(&vn->chan[c], vn->r, c);
		vn->vc[c].last_progress = tu_now_ns();
		vn->vc[c].rings = false;	/* the new process shows whether it rings */
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
 * A zombie still answers kill(), so its state is read from /proc, but
 * only every ZOMBIE_EVERY-th check (100 ms): the open, read and close of
 * /proc/PID/stat of every VNF every 2 ms were a sixth of the TOE's CPU
 * in bench 92's closed-loop sync run (perf), a cost per second that
 * weighs most per request where the chain is held at its SLA.  A VNF's
 * parent (tochaind) reaps it at once anyway.
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

void ch_psched_live_check(struct ch_psched *s, uint32_t nvnfs)
{
	bool look = s->live_round++ % ZOMBIE_EVERY == 0;

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
		if (pid_dead(tc_load_acquire(&vn->pid), look)) {
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
