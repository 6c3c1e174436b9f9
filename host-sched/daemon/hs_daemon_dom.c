// SPDX-License-Identifier: MIT
/* tochain-sched: libvirt domains, their vCPU threads in the registry
 * and the plan applied to them through hs_libvirt. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hs_daemon_int.h"

/* A failed libvirt call: remembered for sched.show, printed the first
 * time and then every 100th, so a libvirtd that is down does not flood
 * the log (the daemon goes on with the rest). */
static void dom_error(struct hsd_domain *dm, int err, const char *why)
{
	dm->errors++;
	snprintf(dm->last_error, sizeof(dm->last_error), "%s", why[0] ? why : strerror(-err));
	if (dm->errors % 100 == 1)
		fprintf(stderr, "tochain-sched: domain %s: %s (%" PRIu64 " errors)\n",
			dm->name, dm->last_error, dm->errors);
}

static void dom_drop_threads(struct hsd *d, struct hsd_domain *dm)
{
	for (uint32_t i = 0; i < d->nthread; i++) {
		struct hsd_thread *th = &d->thread[i];

		if (th->lv && &d->dom[th->dom] == dm)
			th->dead = true;
	}
	dm->running = false;
}

/*
 * Registers the vCPUs in dm->st as threads of the domain (reusing the
 * domain's dead registry slots first, so restarts do not fill the
 * registry) and rebuilds the scheduler.  All or nothing.
 */
int hsd_dom_attach(struct hsd *d, uint32_t di, char *why, size_t len)
{
	struct hsd_domain *dm = &d->dom[di];
	uint32_t nthread0 = d->nthread, used[HSL_MAX_VCPUS];
	uint32_t nused = 0;
	int err;

	for (uint32_t i = 0; i < dm->st.nvcpu; i++) {
		pid_t tid = dm->st.vcpu[i].tid;
		uint32_t slot = NONE;

		for (uint32_t t = 0; t < d->nthread; t++)
			if (!d->thread[t].dead && d->thread[t].tid == tid) {
				snprintf(why, len, "domain %s vcpu %d: thread %d is already registered",
					 dm->name, dm->st.vcpu[i].index, (int)tid);
				err = -EEXIST;
				goto out_rollback;
			}
		if (!hsd_thread_exists(tid)) {
			snprintf(why, len, "domain %s vcpu %d: no thread %d", dm->name,
				 dm->st.vcpu[i].index, (int)tid);
			err = -ESRCH;
			goto out_rollback;
		}
		/* the same tid twice (QEMU without one thread per vCPU) */
		for (uint32_t k = 0; k < i; k++)
			if (dm->st.vcpu[k].tid == tid) {
				snprintf(why, len, "domain %s: vcpus %d and %d share thread %d; "
					 "one thread per vCPU needed", dm->name,
					 dm->st.vcpu[k].index, dm->st.vcpu[i].index, (int)tid);
				err = -EINVAL;
				goto out_rollback;
			}
		for (uint32_t t = 0; t < nthread0 && slot == NONE; t++) {
			const struct hsd_thread *th = &d->thread[t];
			bool taken = false;

			for (uint32_t k = 0; k < nused; k++)
				taken |= used[k] == t;
			if (th->dead && th->lv && th->dom == di && !taken)
				slot = t;
		}
		if (slot == NONE) {
			if (d->nthread == HSD_MAX_THREADS) {
				snprintf(why, len, "registry full (%d threads)", HSD_MAX_THREADS);
				err = -ENOSPC;
				goto out_rollback;
			}
			slot = d->nthread++;
		}
		used[nused++] = slot;
	}
	for (uint32_t i = 0; i < nused; i++) {
		struct hsd_thread *th = &d->thread[used[i]];

		memset(th, 0, sizeof(*th));
		th->tid = dm->st.vcpu[i].tid;
		th->role = HSD_ROLE_VM;
		th->chain = NONE;
		th->vm = dm->vm;
		th->lv = true;
		th->dom = di;
		th->vcpu_index = dm->st.vcpu[i].index;
		dm->slot[i] = used[i];
		d->pcpu_of[used[i]] = NONE;
	}
	err = hsd_rebuild(d, why, len);
	if (err)
		goto out_rollback;
	dm->running = true;
	return 0;

out_rollback:
	for (uint32_t i = 0; i < nused; i++)
		if (used[i] < nthread0) {
			d->thread[used[i]].dead = true;
			d->thread[used[i]].lv = true;
			d->thread[used[i]].dom = di;
		}
	d->nthread = nthread0;
	return err;
}

/* Follows every registered domain (one libvirt call each); returns how
 * many threads it dropped or replaced. */
int hsd_dom_check(struct hsd *d)
{
	char why[256];
	int n = 0;

	for (uint32_t di = 0; d->lv && di < d->ndom; di++) {
		struct hsd_domain *dm = &d->dom[di];
		bool stale = false;
		int id, err;

		if (dm->gone)
			continue;
		id = hsl_domain_id(d->lv, dm->name);
		if (id == -ECONNREFUSED || id == -EIO) {
			/* libvirt cannot say: keep the threads (/proc still
			 * tells whether they live) */
			dom_error(dm, id, "libvirt not reachable");
			continue;
		}
		if (id < 0) {
			/* not running (-ESRCH): wait for it; gone (-ENOENT): drop */
			n += (int)dm->st.nvcpu * dm->running;
			dom_drop_threads(d, dm);
			if (id == -ENOENT) {
				dm->gone = true;
				fprintf(stderr, "tochain-sched: domain %s is gone: dropped\n", dm->name);
			}
			continue;
		}
		for (uint32_t i = 0; dm->running && i < dm->st.nvcpu; i++)
			stale |= !hsd_thread_exists(dm->st.vcpu[i].tid);
		if (dm->running && id == dm->st.id && !stale)
			continue;
		/* started again (new id, new QEMU) or a thread went: read them anew */
		n += (int)dm->st.nvcpu * dm->running;
		dom_drop_threads(d, dm);
		err = hsl_discover(d->lv, dm->name, &dm->st, why, sizeof(why));
		if (!err)
			err = hsd_dom_attach(d, di, why, sizeof(why));
		if (err) {
			dom_error(dm, err, why);
			continue;
		}
		dm->restarts++;
	}
	return n;
}

/* The plan's pCPU and ticks of every domain vCPU, through libvirt.
 * @planned: sync mode with a plan (else: the partition, uncapped). */
void hsd_dom_apply(struct hsd *d, bool planned, const char *cpus_all, uint64_t period)
{
	char why[256];

	for (uint32_t di = 0; d->lv && di < d->ndom; di++) {
		struct hsd_domain *dm = &d->dom[di];
		char cpu[HSL_MAX_VCPUS][16];
		const char *cpus[HSL_MAX_VCPUS];
		int64_t q[HSL_MAX_VCPUS];
		int err;

		if (dm->gone || !dm->running)
			continue;
		for (uint32_t i = 0; i < dm->st.nvcpu; i++) {
			uint32_t t = dm->slot[i];

			cpus[i] = cpus_all;
			q[i] = -1;
			if (!planned)
				continue;
			if (d->pcpu_of[t] == NONE) {
				q[i] = 1000;	/* not in this period's plan */
				continue;
			}
			snprintf(cpu[i], sizeof(cpu[i]), "%d", d->cfg.pcpu[d->pcpu_of[t]]);
			cpus[i] = cpu[i];
			q[i] = (int64_t)d->ticks_of[t] * d->cfg.tick_us;
		}
		why[0] = '\0';
		err = hsl_apply(d->lv, &dm->st, cpus, q, period, why, sizeof(why));
		if (err)
			dom_error(dm, err, why);
	}
}
