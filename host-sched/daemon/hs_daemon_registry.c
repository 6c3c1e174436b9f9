// SPDX-License-Identifier: MIT
/* tochain-sched: lookups in the registry, counter regions, and the
 * library configuration built from the registry (hsd_rebuild). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hs_daemon_int.h"

bool hsd_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n >= HSD_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

bool hsd_thread_exists(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	return access(path, F_OK) == 0;
}

void hsd_busy_close(struct hsd *d, uint32_t t)
{
	if (t < HSD_MAX_THREADS && d->busy_fd[t] >= 0) {
		close(d->busy_fd[t]);
		d->busy_fd[t] = -1;
	}
}

static int busy_open(struct hsd *d, uint32_t t)
{
	char path[64];

	hsd_busy_close(d, t);
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)d->thread[t].tid);
	d->busy_fd[t] = open(path, O_RDONLY | O_CLOEXEC);
	d->busy_fd_tid[t] = d->thread[t].tid;
	return d->busy_fd[t];
}

/*
 * The file stays open between reads and is read again from offset 0
 * (a /proc seq file renders anew then): the open and close of
 * /proc/TID/schedstat, a path walk each, were most of what reading it
 * cost, and the daemon reads standby threads' files at nearly every tick
 * (README, "The daemon's own CPU").  An open file names the task it was
 * opened for: once that thread is gone it reads nothing, so a failed
 * read opens the path once more (a new thread with the same tid).
 */
bool hsd_busy_ns(struct hsd *d, uint32_t t, uint64_t *ns)
{
	char buf[96], *end;
	unsigned long long run;
	ssize_t n = -1;

	if (t >= HSD_MAX_THREADS)
		return false;
	if (d->busy_fd[t] >= 0 && d->busy_fd_tid[t] == d->thread[t].tid)
		n = pread(d->busy_fd[t], buf, sizeof(buf) - 1, 0);
	if (n <= 0 && busy_open(d, t) >= 0)
		n = pread(d->busy_fd[t], buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		hsd_busy_close(d, t);
		return false;
	}
	buf[n] = '\0';
	errno = 0;
	run = strtoull(buf, &end, 10);
	if (end == buf || errno || *end != ' ')
		return false;
	*ns = run;	/* CPU time; the second field, waiting for a CPU, is not work */
	return true;
}

uint32_t hsd_find_vm(const struct hsd *d, const char *name)
{
	for (uint32_t i = 0; i < d->nvm; i++)
		if (!strcmp(d->vm[i].name, name))
			return i;
	return NONE;
}

uint32_t hsd_find_chain(const struct hsd *d, const char *name)
{
	for (uint32_t i = 0; i < d->nchain; i++)
		if (!d->chain[i].dead && !strcmp(d->chain[i].name, name))
			return i;
	return NONE;
}

/* Builds the library configuration from live threads into @cs. */
static void build_cfgset(const struct hsd *d, struct hsd_cfgset *cs)
{
	memset(cs, 0, sizeof(*cs));
	for (uint32_t v = 0; v < d->nvm; v++) {
		struct hs_vm_cfg *vc = &cs->vm[cs->nvm];

		cs->vm_cfg_of[v] = NONE;
		memset(vc, 0, sizeof(*vc));
		vc->name = d->vm[v].name;
		for (uint32_t t = 0; t < d->nthread; t++) {
			const struct hsd_thread *th = &d->thread[t];

			if (!th->dead && th->role == HSD_ROLE_VM && th->vm == v &&
			    vc->nvcpu < HS_MAX_VM_VCPUS)
				vc->vcpu[vc->nvcpu++] = t;
		}
		if (vc->nvcpu)
			cs->vm_cfg_of[v] = cs->nvm++;
	}
	for (uint32_t c = 0; c < d->nchain; c++) {
		const struct hsd_chain *ch = &d->chain[c];
		struct hs_chain_cfg *cc = &cs->chain[cs->nchain];

		if (ch->dead)
			continue;
		memset(cc, 0, sizeof(*cc));
		cc->name = ch->name;
		cc->sla_pps = ch->sla_pps;
		cc->vm = ch->vm == NONE || cs->vm_cfg_of[ch->vm] == NONE ?
			-1 : (int32_t)cs->vm_cfg_of[ch->vm];
		for (uint32_t k = 0; k < ch->nvnf; k++) {
			struct hs_vnf_cfg *vf = &cc->vnf[cc->nvnf];

			vf->name = ch->vnf[k].name;
			vf->f_pps = ch->vnf[k].f_pps;
			vf->max_threads = 0;
			for (uint32_t t = 0; t < d->nthread; t++) {
				const struct hsd_thread *th = &d->thread[t];

				if (!th->dead && th->role == HSD_ROLE_VNF && th->chain == c &&
				    th->vnf == k && vf->max_threads < HS_MAX_THREADS)
					vf->vcpu[vf->max_threads++] = t;
			}
			/* A VNF waits for all its declared threads. */
			if (vf->max_threads && ch->vnf[k].registered >= ch->vnf[k].threads)
				cc->nvnf++;
			else if (ch->vnf[k].registered < ch->vnf[k].threads)
				break;
		}
		if (cc->nvnf && cc->nvnf == ch->nvnf)
			cs->chain_of[cs->nchain++] = c;
	}
}

/*
 * What the old scheduler learnt of each VNF's rate (hs_rate.h) goes to
 * the new one for the same chain and VNF (same calibration), so that a
 * registration elsewhere does not send every quota back to eq. 2.
 */
static void carry_rates(const struct hs_sched *old, const struct hsd_cfgset *ocs,
			struct hs_sched *s, const struct hsd_cfgset *cs)
{
	for (uint32_t i = 0; i < cs->nchain; i++)
		for (uint32_t o = 0; o < ocs->nchain; o++) {
			if (strcmp(cs->chain[i].name, ocs->chain[o].name))
				continue;
			for (uint32_t k = 0; k < cs->chain[i].nvnf; k++)
				for (uint32_t ok = 0; ok < ocs->chain[o].nvnf; ok++) {
					const struct hs_rate *r = hs_sched_rate(old, o, ok);

					if (r && !strcmp(cs->chain[i].vnf[k].name,
							 ocs->chain[o].vnf[ok].name))
						hs_sched_set_rate(s, i, k, r);
				}
		}
}

/* Swaps in a scheduler for the current registry; nothing changes on error. */
int hsd_rebuild(struct hsd *d, char *why, size_t len)
{
	struct hsd_cfgset *spare = d->cs == &d->set[0] ? &d->set[1] : &d->set[0];
	struct hs_sched_cfg sc;
	struct hs_sched *s = NULL;
	struct hs_plan *plan = NULL;

	build_cfgset(d, spare);
	if (spare->nchain || spare->nvm) {
		sc = (struct hs_sched_cfg){
			.npcpu = d->cfg.npcpu, .g = d->cfg.g,
			.period_s = (double)d->cfg.tick_us * d->cfg.g / 1e6,
			.nchain = spare->nchain, .chains = spare->chain,
			.nvm = spare->nvm, .vms = spare->vm,
			/* idle slots end at once (hs_daemon_tick.c) */
			.place_idle = true,
		};
		s = hs_sched_create(&sc, why, len);
		if (!s)
			return -errno;
		plan = hs_plan_create(d->cfg.npcpu, d->cfg.g, hs_sched_plan_cap(s));
		if (!plan) {
			int err = -errno;

			hs_sched_destroy(s);
			snprintf(why, len, "out of memory");
			return err;
		}
	}
	if (s && d->sched)
		carry_rates(d->sched, d->cs, s, spare);
	hs_sched_destroy(d->sched);
	hs_plan_destroy(d->plan);
	d->sched = s;
	d->plan = plan;
	d->plan_valid = false;
	d->cs = spare;
	return 0;
}

int hsd_attach_region(struct hsd *d, const char *path, uint32_t index,
			 uint32_t *out, char *why, size_t len)
{
	struct tcr_region *r;

	uint32_t slot = d->nregion;

	for (uint32_t i = 0; i < d->nregion; i++) {
		if (!d->region[i].r) {
			if (slot == d->nregion)
				slot = i;
			continue;
		}
		if (!strcmp(d->region[i].path, path)) {
			if (index >= d->region[i].r->geo.nchains) {
				snprintf(why, len, "region %s has %u chain blocks, not %u",
					 path, d->region[i].r->geo.nchains, index + 1);
				return -EINVAL;
			}
			*out = i;
			return 0;
		}
	}
	if ((slot == d->nregion && d->nregion == HSD_MAX_REGIONS) ||
	    strlen(path) >= sizeof(d->region[0].path)) {
		snprintf(why, len, "too many regions or path too long");
		return -ENOSPC;
	}
	/* The region's writer is not trusted: validate it as a host. */
	r = tcr_region_attach(path, TCR_ATTACH_HOST);
	if (!r) {
		int err = -errno;

		snprintf(why, len, "region %s: %s", path, strerror(-err));
		return err;
	}
	if (index >= r->geo.nchains) {
		snprintf(why, len, "region %s has %u chain blocks, not %u",
			 path, r->geo.nchains, index + 1);
		tcr_region_destroy(r);
		return -EINVAL;
	}
	snprintf(d->region[slot].path, sizeof(d->region[0].path), "%s", path);
	d->region[slot].r = r;
	*out = slot;
	if (slot == d->nregion)
		d->nregion++;
	return 0;
}
