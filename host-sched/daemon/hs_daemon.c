// SPDX-License-Identifier: MIT
/* tochain-sched: registry, per-period planning and gating; see hs_daemon.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hs_daemon.h"

#define NONE UINT32_MAX

static void dom_apply(struct hsd *d, bool planned, const char *cpus_all, uint64_t period);
static uint64_t period_us(const struct hsd *d);

const char *hsd_mode_name(enum hsd_mode m)
{
	return m == HSD_CFS ? "cfs" : "sync";
}

int hsd_mode_parse(const char *s, enum hsd_mode *m)
{
	if (!strcmp(s, "sync"))
		*m = HSD_SYNC;
	else if (!strcmp(s, "cfs"))
		*m = HSD_CFS;
	else
		return -EINVAL;
	return 0;
}

int hsd_parse_cpus(const char *list, int *cpus, uint32_t max, uint32_t *n)
{
	const char *p = list;

	*n = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a > 4095)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b > 4095)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++) {
			for (uint32_t i = 0; i < *n; i++)
				if (cpus[i] == c)
					return -EINVAL;
			if (*n == max)
				return -EINVAL;
			cpus[(*n)++] = (int)c;
		}
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

void hsd_cfg_default(struct hsd_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->tick_us = 10000;
	cfg->g = 50;
	cfg->npcpu = 1;
	cfg->pcpu[0] = 0;
	snprintf(cfg->sync_cpus, sizeof(cfg->sync_cpus), "0");
	cfg->mode = HSD_SYNC;
	cfg->gating = HSD_GATE_FREEZER;
}

int hsd_init(struct hsd *d, const struct hsd_cfg *cfg, struct hse *enf)
{
	memset(d, 0, sizeof(*d));
	if (!cfg->npcpu || cfg->npcpu > HSD_MAX_PCPU || !cfg->g || cfg->g > HSD_MAX_TICKS ||
	    cfg->tick_us < 1000 || cfg->tick_us > 1000000)
		return -EINVAL;
	if (cfg->gating == HSD_GATE_QUOTA &&
	    (uint64_t)cfg->tick_us * cfg->g > 1000000)
		return -EINVAL;	/* cfs_period_us is at most 1 s */
	d->cfg = *cfg;
	d->mode_next = cfg->mode;
	d->mode_applied = cfg->mode;
	d->enf = enf;
	d->cs = &d->set[0];
	d->timeline = calloc((size_t)cfg->npcpu * cfg->g, sizeof(*d->timeline));
	if (!d->timeline)
		return -ENOMEM;
	for (uint32_t j = 0; j < cfg->npcpu; j++)
		d->cur_owner[j] = -1;
	for (uint32_t i = 0; i < HSD_MAX_THREADS; i++)
		d->pcpu_of[i] = NONE;
	pthread_mutex_init(&d->lock, NULL);
	return 0;
}

void hsd_fini(struct hsd *d)
{
	if (d->lv) {
		/* domain vCPUs back to every online CPU, uncapped */
		char all[32];

		snprintf(all, sizeof(all), "0-%ld", sysconf(_SC_NPROCESSORS_ONLN) - 1);
		dom_apply(d, false, all, period_us(d));
	}
	for (uint32_t i = 0; i < d->nthread; i++)
		if (d->thread[i].enforced) {
			hse_thread_del(d->enf, &d->thread[i].enf);
			d->thread[i].enforced = false;
		}
	for (uint32_t i = 0; i < d->nregion; i++)
		if (d->region[i].r)
			tcr_region_destroy(d->region[i].r);
	d->nregion = 0;
	hs_sched_destroy(d->sched);
	d->sched = NULL;
	hs_plan_destroy(d->plan);
	d->plan = NULL;
	free(d->timeline);
	d->timeline = NULL;
	pthread_mutex_destroy(&d->lock);
}

static bool name_ok(const char *s)
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

static bool thread_exists(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	return access(path, F_OK) == 0;
}

static uint32_t find_vm(const struct hsd *d, const char *name)
{
	for (uint32_t i = 0; i < d->nvm; i++)
		if (!strcmp(d->vm[i].name, name))
			return i;
	return NONE;
}

static uint32_t find_chain(const struct hsd *d, const char *name)
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

/* Swaps in a scheduler for the current registry; nothing changes on error. */
static int rebuild(struct hsd *d, char *why, size_t len)
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
	hs_sched_destroy(d->sched);
	hs_plan_destroy(d->plan);
	d->sched = s;
	d->plan = plan;
	d->plan_valid = false;
	d->cs = spare;
	return 0;
}

static int attach_region(struct hsd *d, const char *path, uint32_t index,
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

int hsd_register(struct hsd *d, const struct hsd_reg *r, char *why, size_t len)
{
	uint32_t nthread0 = d->nthread, nchain0 = d->nchain, nvm0 = d->nvm;
	uint32_t nregion0 = d->nregion, chain_nvnf0 = 0;
	uint32_t vm = NONE, chain = NONE, vnf = 0, reg = 0;
	bool reg_new = false;
	struct hsd_thread *th;
	const char *vnfname;
	int err;

	why[0] = '\0';
	/* A process that just exited frees its names now, not at the next
	 * period boundary. */
	hsd_reap(d);
	if (r->role != HSD_ROLE_VNF && r->role != HSD_ROLE_VM) {
		snprintf(why, len, "role must be vnf or vm");
		return -EINVAL;
	}
	if (r->tid <= 0) {
		snprintf(why, len, "tid must be a positive thread id");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < d->nthread; i++)
		if (!d->thread[i].dead && d->thread[i].tid == r->tid) {
			snprintf(why, len, "tid %d is already registered", (int)r->tid);
			return -EEXIST;
		}
	if (!thread_exists(r->tid)) {
		snprintf(why, len, "no thread %d", (int)r->tid);
		return -ESRCH;
	}
	if (d->nthread == HSD_MAX_THREADS) {
		snprintf(why, len, "registry full (%d threads)", HSD_MAX_THREADS);
		return -ENOSPC;
	}
	if (r->role == HSD_ROLE_VM || r->vm) {
		if (!name_ok(r->vm)) {
			snprintf(why, len, "vm name must be 1-%d of [A-Za-z0-9_.-]",
				 HSD_NAME_MAX - 1);
			return -EINVAL;
		}
	}
	if (r->role == HSD_ROLE_VNF) {
		vnfname = r->vnf ? r->vnf : "vnf";
		if (!name_ok(r->chain) || !name_ok(vnfname)) {
			snprintf(why, len, "chain and vnf names must be 1-%d of [A-Za-z0-9_.-]",
				 HSD_NAME_MAX - 1);
			return -EINVAL;
		}
		if (!r->sla_pps || r->sla_pps > UINT32_MAX || !r->f_pps || r->f_pps > UINT32_MAX) {
			snprintf(why, len, "sla and f must be 1..%u packets/s", UINT32_MAX);
			return -EINVAL;
		}
		if (r->threads > HS_MAX_THREADS) {
			snprintf(why, len, "threads must be 1..%d", HS_MAX_THREADS);
			return -EINVAL;
		}
		if (!r->region || !r->region[0]) {
			snprintf(why, len, "a vnf needs the region holding its chain's counters");
			return -EINVAL;
		}
		chain = find_chain(d, r->chain);
		if (chain != NONE) {
			const struct hsd_chain *ch = &d->chain[chain];
			const char *chvm = ch->vm == NONE ? NULL : d->vm[ch->vm].name;

			if (ch->sla_pps != r->sla_pps || ch->index != r->index ||
			    strcmp(d->region[ch->region].path, r->region) ||
			    (chvm == NULL) != (r->vm == NULL) || (chvm && strcmp(chvm, r->vm))) {
				snprintf(why, len, "chain %s was registered with another sla, vm or region",
					 r->chain);
				return -EINVAL;
			}
			for (vnf = 0; vnf < ch->nvnf; vnf++)
				if (!strcmp(ch->vnf[vnf].name, vnfname))
					break;
			if (vnf < ch->nvnf && (ch->vnf[vnf].f_pps != r->f_pps ||
					       ch->vnf[vnf].threads != (r->threads ? r->threads : 1))) {
				snprintf(why, len, "chain %s vnf %s was registered with f=%" PRIu64
					 " threads=%u", r->chain, vnfname, ch->vnf[vnf].f_pps,
					 ch->vnf[vnf].threads);
				return -EINVAL;
			}
			if (vnf < ch->nvnf && ch->vnf[vnf].registered >= ch->vnf[vnf].threads) {
				snprintf(why, len, "chain %s vnf %s has its %u threads already",
					 r->chain, vnfname, ch->vnf[vnf].threads);
				return -EINVAL;
			}
			if (vnf == ch->nvnf && vnf == HS_MAX_VNFS) {
				snprintf(why, len, "chain %s has %d VNFs already", r->chain, HS_MAX_VNFS);
				return -ENOSPC;
			}
		} else if (d->nchain == HSD_MAX_CHAINS) {
			snprintf(why, len, "too many chains");
			return -ENOSPC;
		}
		for (reg = 0; reg < d->nregion; reg++)
			if (d->region[reg].r && !strcmp(d->region[reg].path, r->region))
				break;
		reg_new = reg == d->nregion || !d->region[reg].r;
		err = attach_region(d, r->region, r->index, &reg, why, len);
		if (err)
			return err;
		/* Two chains must not share one counter block. */
		for (uint32_t c = 0; c < d->nchain; c++)
			if (c != chain && !d->chain[c].dead && d->chain[c].region == reg &&
			    d->chain[c].index == r->index) {
				snprintf(why, len, "chain %s already uses block %u of %s",
					 d->chain[c].name, r->index, r->region);
				err = -EINVAL;
				goto out_rollback;
			}
	}
	if (r->vm) {
		vm = find_vm(d, r->vm);
		if (vm == NONE) {
			if (d->nvm == HSD_MAX_VMS) {
				snprintf(why, len, "too many VMs");
				err = -ENOSPC;
				goto out_rollback;
			}
			vm = d->nvm++;
			memset(&d->vm[vm], 0, sizeof(d->vm[vm]));
			snprintf(d->vm[vm].name, HSD_NAME_MAX, "%s", r->vm);
		}
	}
	if (r->role == HSD_ROLE_VNF) {
		struct hsd_chain *ch;

		if (chain == NONE) {
			chain = d->nchain++;
			ch = &d->chain[chain];
			memset(ch, 0, sizeof(*ch));
			snprintf(ch->name, HSD_NAME_MAX, "%s", r->chain);
			ch->sla_pps = r->sla_pps;
			ch->vm = vm;
			ch->region = reg;
			ch->index = r->index;
		}
		ch = &d->chain[chain];
		chain_nvnf0 = ch->nvnf;
		if (vnf == ch->nvnf) {
			snprintf(ch->vnf[vnf].name, HSD_NAME_MAX, "%s", r->vnf ? r->vnf : "vnf");
			ch->vnf[vnf].f_pps = r->f_pps;
			ch->vnf[vnf].threads = r->threads ? r->threads : 1;
			ch->vnf[vnf].registered = 0;
			ch->nvnf++;
		}
		ch->vnf[vnf].registered++;
	}
	th = &d->thread[d->nthread++];
	memset(th, 0, sizeof(*th));
	th->tid = r->tid;
	th->role = r->role;
	th->chain = chain;
	th->vnf = vnf;
	th->vm = vm;
	err = rebuild(d, why, len);
	if (err)
		goto out_rollback;
	if (d->enf) {
		err = hse_thread_add(d->enf, r->tid, &th->enf);
		if (err) {
			snprintf(why, len, "%s: cannot put thread %d in its cgroup: %s",
				 hse_kind_name(d->enf->kind), (int)r->tid, strerror(-err));
			goto out_rebuild;
		}
		th->enforced = true;
		/* Under freezer gating a thread runs only in its slots: it
		 * waits frozen for the next period's plan. */
		if (d->mode_applied == HSD_SYNC && d->cfg.gating == HSD_GATE_FREEZER &&
		    hse_can_freeze(d->enf))
			hse_gate(d->enf, &th->enf, false);
		hse_place(d->enf, &th->enf, d->cfg.sync_cpus, -1,
			  (uint64_t)d->cfg.tick_us * d->cfg.g > 1000000 ? 1000000 :
			  (uint64_t)d->cfg.tick_us * d->cfg.g);
	}
	d->pcpu_of[d->nthread - 1] = NONE;
	return 0;

out_rebuild:
	th->dead = true;
	rebuild(d, why + strlen(why), len - strlen(why));
out_rollback:
	d->nthread = nthread0;
	if (chain != NONE && chain < nchain0 && chain_nvnf0) {
		if (vnf < chain_nvnf0 && d->chain[chain].vnf[vnf].registered)
			d->chain[chain].vnf[vnf].registered--;
		d->chain[chain].nvnf = chain_nvnf0;	/* drop a VNF this call added */
	}
	d->nchain = nchain0;
	d->nvm = nvm0;
	if (reg_new) {
		tcr_region_destroy(d->region[reg].r);
		d->region[reg].r = NULL;
		d->region[reg].path[0] = '\0';
		if (reg >= nregion0)
			d->nregion = nregion0;
	}
	/* The registry is back as it was; so is the scheduler (rebuild swaps
	 * only on success). */
	return err;
}

/* ---- libvirt domains ---- */

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
static int dom_attach(struct hsd *d, uint32_t di, char *why, size_t len)
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
		if (!thread_exists(tid)) {
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
	err = rebuild(d, why, len);
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

int hsd_register_domain(struct hsd *d, const char *domain, const char *vm,
			char *why, size_t len)
{
	uint32_t nvm0 = d->nvm, di = NONE, vmi;
	struct hsd_domain *dm;
	int err;

	why[0] = '\0';
	if (!d->lv) {
		snprintf(why, len, "this tochain-sched has no libvirt backend "
			 "(--backend auto or libvirt)");
		return -ENOTSUP;
	}
	if (!vm)
		vm = domain;
	if (!name_ok(domain) || !name_ok(vm)) {
		snprintf(why, len, "domain and vm names must be 1-%d of [A-Za-z0-9_.-]",
			 HSD_NAME_MAX - 1);
		return -EINVAL;
	}
	hsd_reap(d);
	for (uint32_t i = 0; i < d->ndom; i++) {
		if (!d->dom[i].gone && !strcmp(d->dom[i].name, domain)) {
			snprintf(why, len, "domain %s is already registered", domain);
			return -EEXIST;
		}
		if (d->dom[i].gone && di == NONE)
			di = i;
	}
	if (di == NONE) {
		if (d->ndom == HSD_MAX_DOMAINS) {
			snprintf(why, len, "too many domains (%d)", HSD_MAX_DOMAINS);
			return -ENOSPC;
		}
		di = d->ndom;
	}
	dm = &d->dom[di];
	/* A reused slot keeps the registry indices of its dead threads
	 * (dom_attach reuses them); everything else starts afresh. */
	dm->gone = true;
	dm->running = false;
	dm->errors = 0;
	dm->restarts = 0;
	dm->last_error[0] = '\0';
	snprintf(dm->name, sizeof(dm->name), "%s", domain);
	err = hsl_discover(d->lv, domain, &dm->st, why, len);
	if (err)
		return err;
	vmi = find_vm(d, vm);
	if (vmi == NONE) {
		if (d->nvm == HSD_MAX_VMS) {
			snprintf(why, len, "too many VMs");
			return -ENOSPC;
		}
		vmi = d->nvm++;
		memset(&d->vm[vmi], 0, sizeof(d->vm[vmi]));
		snprintf(d->vm[vmi].name, HSD_NAME_MAX, "%s", vm);
	}
	dm->vm = vmi;
	if (di == d->ndom)
		d->ndom++;
	err = dom_attach(d, di, why, len);
	if (err) {
		d->nvm = nvm0;
		return err;
	}
	dm->gone = false;
	return 0;
}

/* Follows every registered domain (one libvirt call each); returns how
 * many threads it dropped or replaced. */
static int dom_check(struct hsd *d)
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
			stale |= !thread_exists(dm->st.vcpu[i].tid);
		if (dm->running && id == dm->st.id && !stale)
			continue;
		/* started again (new id, new QEMU) or a thread went: read them anew */
		n += (int)dm->st.nvcpu * dm->running;
		dom_drop_threads(d, dm);
		err = hsl_discover(d->lv, dm->name, &dm->st, why, sizeof(why));
		if (!err)
			err = dom_attach(d, di, why, sizeof(why));
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
static void dom_apply(struct hsd *d, bool planned, const char *cpus_all, uint64_t period)
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

int hsd_reap(struct hsd *d)
{
	int n = dom_check(d);
	char why[256];

	for (uint32_t i = 0; i < d->nthread; i++) {
		struct hsd_thread *th = &d->thread[i];

		if (th->dead || thread_exists(th->tid))
			continue;
		th->dead = true;
		if (th->enforced) {
			hse_thread_del(d->enf, &th->enf);
			th->enforced = false;
		}
		if (th->role == HSD_ROLE_VNF && d->chain[th->chain].vnf[th->vnf].registered)
			d->chain[th->chain].vnf[th->vnf].registered--;
		n++;
	}
	if (!n)
		return 0;
	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hsd_chain *ch = &d->chain[c];
		uint32_t live = 0;

		for (uint32_t k = 0; k < ch->nvnf; k++)
			live += ch->vnf[k].registered;
		if (!ch->dead && !live)
			ch->dead = true;
	}
	for (uint32_t i = 0; i < d->nregion; i++) {
		bool used = false;

		for (uint32_t c = 0; c < d->nchain; c++)
			if (!d->chain[c].dead && d->chain[c].region == i)
				used = true;
		if (d->region[i].r && !used) {
			tcr_region_destroy(d->region[i].r);
			d->region[i].r = NULL;
			d->region[i].path[0] = '\0';
		}
	}
	/* Fewer threads never make admission fail, except a VNF left with
	 * too few threads for its SLA: then the old plan stays in force
	 * for the survivors and the refusal is kept in mind. */
	if (n && rebuild(d, why, sizeof(why)))
		fprintf(stderr, "tochain-sched: after threads exited: %s\n", why);
	return n;
}

int hsd_read_counters(struct hsd *d, uint32_t c, struct hs_chain_stats *st)
{
	struct hsd_chain *ch = &d->chain[c];
	const struct tcr_region *r = d->region[ch->region].r;
	struct tcr_chain_counters *cc = tcr_region_chain(r, ch->index);
	struct tcr_counters_snap s;

	memset(st, 0, sizeof(*st));
	st->oq_head_ts = HS_TS_EMPTY;
	if (!cc || tcr_counters_snapshot(cc, ch->have_prev ? &ch->prev : NULL,
					 r->geo.ring_size, &s)) {
		ch->bad++;
		return -EBADMSG;
	}
	st->in = s.arrivals - (ch->have_prev ? ch->prev.arrivals : 0);
	st->finished = s.finished - (ch->have_prev ? ch->prev.finished : 0);
	st->left = s.in_qlen;
	st->oq_head_ts = s.out_qlen && s.out_head_tsc ? s.out_head_tsc : HS_TS_EMPTY;
	ch->prev = s;
	ch->have_prev = true;
	return 0;
}

int32_t hsd_owner(const struct hsd *d, uint32_t pcpu, uint32_t k)
{
	if (pcpu >= d->cfg.npcpu || k >= d->cfg.g)
		return -1;
	return d->timeline[(size_t)pcpu * d->cfg.g + k];
}

/* Gives @owner @n free ticks of @pcpu, from tick @from on; returns how
 * many it found. */
static uint32_t fill(struct hsd *d, uint32_t pcpu, int32_t owner, uint32_t n, uint32_t from)
{
	int32_t *tl = d->timeline + (size_t)pcpu * d->cfg.g;
	uint32_t got = 0;

	for (uint32_t k = from; k < d->cfg.g && got < n; k++)
		if (tl[k] < 0) {
			tl[k] = owner;
			got++;
		}
	return got;
}

/*
 * The plan on a tick timeline.  Chains in priority order; a chain's VNF
 * slots start at the same tick on all its pCPUs (the latest first free
 * tick among them), which may leave gaps; VM slots then take the free
 * ticks of their pCPU in plan order, gaps included.  If an aligned gang
 * would run past the period, its slots take the earliest free ticks
 * instead (unaligned, never lost).
 */
static void build_timeline(struct hsd *d)
{
	const struct hsd_cfgset *cs = d->cs;
	uint32_t g = d->cfg.g, npcpu = d->cfg.npcpu;
	uint32_t next[HSD_MAX_PCPU] = { 0 };
	uint32_t order[HSD_MAX_CHAINS];
	uint32_t n;

	for (size_t i = 0; i < (size_t)npcpu * g; i++)
		d->timeline[i] = -1;
	for (uint32_t c = 0; c < cs->nchain; c++)
		order[c] = c;
	/* insertion sort by H, descending; stable */
	for (uint32_t i = 1; i < cs->nchain; i++) {
		uint32_t x = order[i], j = i;
		double hx = hs_sched_prio(d->sched, x);

		while (j > 0 && hs_sched_prio(d->sched, order[j - 1]) < hx) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	for (uint32_t oi = 0; oi < cs->nchain; oi++) {
		uint32_t c = order[oi], start = 0;
		bool fits = true;

		for (uint32_t j = 0; j < npcpu; j++) {
			const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

			for (uint32_t i = 0; i < n; i++)
				if (s[i].kind == HS_KIND_VNF && s[i].chain == c) {
					if (next[j] > start)
						start = next[j];
				}
		}
		for (uint32_t j = 0; j < npcpu; j++) {
			const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

			for (uint32_t i = 0; i < n; i++)
				if (s[i].kind == HS_KIND_VNF && s[i].chain == c &&
				    start + s[i].ticks > g)
					fits = false;
		}
		for (uint32_t j = 0; j < npcpu; j++) {
			const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

			for (uint32_t i = 0; i < n; i++) {
				if (s[i].kind != HS_KIND_VNF || s[i].chain != c)
					continue;
				fill(d, j, (int32_t)s[i].vcpu, s[i].ticks, fits ? start : 0);
				if (fits && start + s[i].ticks > next[j])
					next[j] = start + s[i].ticks;
			}
		}
	}
	for (uint32_t j = 0; j < npcpu; j++) {
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

		d->nvmq[j] = 0;
		d->vmq_rr[j] = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (s[i].kind != HS_KIND_VM)
				continue;
			fill(d, j, (int32_t)s[i].vcpu, s[i].ticks, 0);
			if (d->nvmq[j] < HSD_MAX_VMQ)
				d->vmq[j][d->nvmq[j]++] = (int32_t)s[i].vcpu;
		}
	}
}

static uint64_t cpu_used_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec +
	       (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
}

static uint64_t period_us(const struct hsd *d)
{
	uint64_t p = (uint64_t)d->cfg.tick_us * d->cfg.g;

	return p > 1000000 ? 1000000 : p;
}

static void place_all_free(struct hsd *d)
{
	for (uint32_t t = 0; t < d->nthread; t++) {
		struct hsd_thread *th = &d->thread[t];

		d->pcpu_of[t] = NONE;
		if (!th->enforced)
			continue;
		hse_gate(d->enf, &th->enf, true);
		hse_place(d->enf, &th->enf, d->cfg.sync_cpus, -1, period_us(d));
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++)
		d->cur_owner[j] = -1;
	dom_apply(d, false, d->cfg.sync_cpus, period_us(d));
}

static void place_plan(struct hsd *d)
{
	bool freezer = d->cfg.gating == HSD_GATE_FREEZER;

	for (uint32_t t = 0; t < d->nthread; t++) {
		d->pcpu_of[t] = NONE;
		d->ticks_of[t] = 0;
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		uint32_t n;
		const struct hs_slot *s = hs_plan_slots(d->plan, j, &n);

		for (uint32_t i = 0; i < n; i++) {
			if (s[i].vcpu >= d->nthread)
				continue;
			d->pcpu_of[s[i].vcpu] = j;
			d->ticks_of[s[i].vcpu] += s[i].ticks;
		}
	}
	for (uint32_t t = 0; t < d->nthread; t++) {
		struct hsd_thread *th = &d->thread[t];
		char cpu[16];

		if (!th->enforced)
			continue;
		if (d->pcpu_of[t] == NONE) {
			/* Not in this period's plan (H = 0, deferred). */
			if (freezer)
				hse_gate(d->enf, &th->enf, false);
			hse_place(d->enf, &th->enf, d->cfg.sync_cpus,
				  freezer ? -1 : 1000, period_us(d));
			continue;
		}
		snprintf(cpu, sizeof(cpu), "%d", d->cfg.pcpu[d->pcpu_of[t]]);
		if (freezer) {
			hse_place(d->enf, &th->enf, cpu, -1, period_us(d));
		} else {
			hse_gate(d->enf, &th->enf, true);
			hse_place(d->enf, &th->enf, cpu,
				  (int64_t)d->ticks_of[t] * d->cfg.tick_us, period_us(d));
		}
	}
	/* Domain vCPUs have no per-thread freezer through libvirt: they
	 * get their ticks as a quota per period in both gatings. */
	dom_apply(d, true, d->cfg.sync_cpus, period_us(d));
}

/* Closes the period that just ended in every chain's counters. */
static void close_periods(struct hsd *d)
{
	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hsd_chain *ch = &d->chain[c];
		struct tcr_chain_counters *cc;
		uint64_t taken;

		if (ch->dead)
			continue;
		cc = tcr_region_chain(d->region[ch->region].r, ch->index);
		if (!cc || !ch->have_prev)
			continue;
		taken = ch->prev.taken - ch->taken_last;
		ch->taken_last = ch->prev.taken;
		tcr_counters_close_period(cc, d->period, taken > UINT32_MAX ? UINT32_MAX : (uint32_t)taken);
	}
}

int hsd_period_begin(struct hsd *d)
{
	struct hs_chain_stats st[HSD_MAX_CHAINS];
	const struct hsd_cfgset *cs = d->cs;
	uint64_t now = cpu_used_us();
	int err = 0;

	if (d->cpu_mark_us) {
		d->cpu_us_last = now - d->cpu_mark_us;
		d->cpu_us_total += d->cpu_us_last;
		d->cpu_periods++;
	}
	d->cpu_mark_us = now;
	d->mode_applied = d->mode_next;
	/* Every registered chain's counters move forward, planned or not. */
	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hs_chain_stats tmp;

		if (d->chain[c].dead)
			continue;
		hsd_read_counters(d, c, &tmp);
		for (uint32_t i = 0; i < cs->nchain; i++)
			if (cs->chain_of[i] == c)
				st[i] = tmp;
	}
	close_periods(d);
	d->period++;
	d->timeline_valid = false;
	if (d->mode_applied == HSD_CFS || !d->sched) {
		d->plan_valid = false;
		place_all_free(d);
		return 0;
	}
	err = hs_sched_plan(d->sched, st, d->plan);
	if (err < 0) {
		d->plan_valid = false;
		place_all_free(d);
		return err;
	}
	d->plan_valid = true;
	build_timeline(d);
	d->timeline_valid = true;
	place_plan(d);
	hs_sched_rebalance(d->sched);
	return 0;
}

/* Ends the running VNF slots of registry chain @c on every pCPU from tick
 * @k on: their ticks go to the pCPU's VM threads in turn. */
static void early_end(struct hsd *d, uint32_t c, uint32_t k)
{
	uint32_t g = d->cfg.g;

	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t *tl = d->timeline + (size_t)j * g;
		int32_t o = tl[k];

		if (o < 0 || d->thread[o].role != HSD_ROLE_VNF || d->thread[o].chain != c)
			continue;
		for (uint32_t t = k; t < g; t++) {
			if (tl[t] != o)
				continue;
			if (d->nvmq[j]) {
				tl[t] = d->vmq[j][d->vmq_rr[j] % d->nvmq[j]];
				d->vmq_rr[j]++;
			} else {
				tl[t] = -1;
			}
		}
		d->chain[c].early_ends++;
		d->early_total++;
	}
}

void hsd_tick(struct hsd *d, uint32_t k)
{
	/* The timeline holds registry indices, which stay valid when a
	 * registration rebuilds the scheduler mid-period. */
	bool gate = d->mode_applied == HSD_SYNC && d->timeline_valid &&
		    d->cfg.gating == HSD_GATE_FREEZER;

	for (uint32_t c = 0; c < d->nchain; c++) {
		struct hsd_chain *ch = &d->chain[c];
		struct tcr_chain_counters *cc;

		if (ch->dead)
			continue;
		cc = tcr_region_chain(d->region[ch->region].r, ch->index);
		if (cc && tcr_counters_take_early(cc) && gate)
			early_end(d, c, k);
	}
	if (!gate || k >= d->cfg.g)
		return;
	/* Freeze first, then thaw: a pCPU never runs two planned threads,
	 * and the members of a gang are thawed back to back. */
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k], cur = d->cur_owner[j];

		if (cur >= 0 && cur != o && d->thread[cur].enforced) {
			hse_gate(d->enf, &d->thread[cur].enf, false);
			d->gate_writes++;
		}
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

		if (k == 0) {
			/* New period: freeze whatever the plan does not start now. */
			for (uint32_t t = 0; t < d->nthread; t++)
				if (d->pcpu_of[t] == j && (int32_t)t != o && d->thread[t].enforced &&
				    !d->thread[t].enf.frozen) {
					hse_gate(d->enf, &d->thread[t].enf, false);
					d->gate_writes++;
				}
		}
	}
	for (uint32_t j = 0; j < d->cfg.npcpu; j++) {
		int32_t o = d->timeline[(size_t)j * d->cfg.g + k];

		if (o >= 0 && d->thread[o].enforced && d->thread[o].enf.frozen) {
			hse_gate(d->enf, &d->thread[o].enf, true);
			d->gate_writes++;
		}
		d->cur_owner[j] = o;
	}
}

void hsd_render(struct hsd *d)
{
	const struct hsd_cfgset *cs = d->cs;
	size_t n = 0, cap = sizeof(d->plan_text);
	double avg = d->cpu_periods ? (double)d->cpu_us_total / (double)d->cpu_periods : 0;
	double pus = (double)d->cfg.tick_us * d->cfg.g;

	n += (size_t)snprintf(d->plan_text + n, cap - n,
			      "tochain-sched: period %" PRIu64 " mode %s gating %s backend %s%s"
			      " threads %u chains %u early-ends %" PRIu64 "\n"
			      "daemon cpu: last %" PRIu64 " us/period, mean %.0f us/period (%.3f%% of one cpu)\n",
			      d->period, hsd_mode_name(d->mode_applied),
			      d->cfg.gating == HSD_GATE_FREEZER ? "freezer" : "quota",
			      d->enf ? hse_kind_name(d->enf->kind) : "none", d->lv ? "+libvirt" : "",
			      d->nthread, d->nchain, d->early_total,
			      d->cpu_us_last, avg, pus > 0 ? 100.0 * avg / pus : 0.0);
	if (n >= cap)
		n = cap - 1;
	if (d->plan_valid) {
		hs_plan_format_text(d->plan, cs->chain, cs->nchain, d->plan_text + n, cap - n);
		hs_plan_format_json(d->plan, cs->chain, cs->nchain, d->plan_json,
				    sizeof(d->plan_json));
	} else {
		snprintf(d->plan_text + n, cap - n, "no plan: %s\n",
			 d->mode_applied == HSD_CFS ? "cfs mode, the stock scheduler shares the partition" :
			 "nothing registered");
		snprintf(d->plan_json, sizeof(d->plan_json), "null");
	}
}
