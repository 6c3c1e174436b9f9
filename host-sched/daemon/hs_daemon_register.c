// SPDX-License-Identifier: MIT
/* tochain-sched: what comes and goes: registration of threads and
 * domains (validated, all or nothing) and reaping of the dead. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hs_daemon_int.h"

static bool uses_block(const struct hsd_chain *ch, uint32_t index)
{
	return ch->index == index || (ch->index2 != NONE && ch->index2 == index);
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
	if (!hsd_thread_exists(r->tid)) {
		snprintf(why, len, "no thread %d", (int)r->tid);
		return -ESRCH;
	}
	if (d->nthread == HSD_MAX_THREADS) {
		snprintf(why, len, "registry full (%d threads)", HSD_MAX_THREADS);
		return -ENOSPC;
	}
	if (r->role == HSD_ROLE_VM || r->vm) {
		if (!hsd_name_ok(r->vm)) {
			snprintf(why, len, "vm name must be 1-%d of [A-Za-z0-9_.-]",
				 HSD_NAME_MAX - 1);
			return -EINVAL;
		}
	}
	if (r->role == HSD_ROLE_VNF) {
		vnfname = r->vnf ? r->vnf : "vnf";
		if (!hsd_name_ok(r->chain) || !hsd_name_ok(vnfname)) {
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
		chain = hsd_find_chain(d, r->chain);
		if (chain != NONE) {
			const struct hsd_chain *ch = &d->chain[chain];
			const char *chvm = ch->vm == NONE ? NULL : d->vm[ch->vm].name;

			if (ch->sla_pps != r->sla_pps || ch->index != r->index ||
			    ch->index2 != (r->has_index2 ? r->index2 : NONE) ||
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
		err = hsd_attach_region(d, r->region, r->index, &reg, why, len);
		if (err)
			return err;
		if (r->has_index2 && (r->index2 == r->index ||
				      r->index2 >= d->region[reg].r->geo.nchains)) {
			snprintf(why, len, "index2 must be another block of %s (it has %u)",
				 r->region, d->region[reg].r->geo.nchains);
			err = -EINVAL;
			goto out_rollback;
		}
		/* Two chains must not share one counter block. */
		for (uint32_t c = 0; c < d->nchain; c++) {
			const struct hsd_chain *o = &d->chain[c];

			if (c == chain || o->dead || o->region != reg)
				continue;
			if (uses_block(o, r->index) || (r->has_index2 && uses_block(o, r->index2))) {
				snprintf(why, len, "chain %s already uses block %u of %s", o->name,
					 uses_block(o, r->index) ? r->index : r->index2, r->region);
				err = -EINVAL;
				goto out_rollback;
			}
		}
	}
	if (r->vm) {
		vm = hsd_find_vm(d, r->vm);
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
			ch->index2 = r->has_index2 ? r->index2 : NONE;
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
	err = hsd_rebuild(d, why, len);
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
		hse_place(d->enf, &th->enf, d->cfg.sync_cpus, -1, hsd_period_us(d));
	}
	d->pcpu_of[d->nthread - 1] = NONE;
	return 0;

out_rebuild:
	th->dead = true;
	hsd_rebuild(d, why + strlen(why), len - strlen(why));
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
	if (!hsd_name_ok(domain) || !hsd_name_ok(vm)) {
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
	vmi = hsd_find_vm(d, vm);
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
	err = hsd_dom_attach(d, di, why, len);
	if (err) {
		d->nvm = nvm0;
		return err;
	}
	dm->gone = false;
	return 0;
}

/* Thread @th leaves the registry (its groups too: it runs unmanaged). */
static void drop_thread(struct hsd *d, struct hsd_thread *th)
{
	th->dead = true;
	hsd_busy_close(d, (uint32_t)(th - d->thread));
	if (th->enforced) {
		hse_thread_del(d->enf, &th->enf);
		th->enforced = false;
	}
	if (th->role == HSD_ROLE_VNF && d->chain[th->chain].vnf[th->vnf].registered)
		d->chain[th->chain].vnf[th->vnf].registered--;
}

/* After threads were dropped: chains and regions left without any go. */
static void forget_unused(struct hsd *d)
{
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
}

int hsd_reap(struct hsd *d)
{
	int n = hsd_dom_check(d);
	char why[256];

	for (uint32_t i = 0; i < d->nthread; i++) {
		struct hsd_thread *th = &d->thread[i];

		if (th->dead || hsd_thread_exists(th->tid))
			continue;
		drop_thread(d, th);
		n++;
	}
	if (!n)
		return 0;
	forget_unused(d);
	/* Fewer threads never make admission fail, except a VNF left with
	 * too few threads for its SLA: then the old plan stays in force
	 * for the survivors and the refusal is kept in mind. */
	if (hsd_rebuild(d, why, sizeof(why)))
		fprintf(stderr, "tochain-sched: after threads exited: %s\n", why);
	return n;
}

int hsd_unregister_chain(struct hsd *d, const char *chain, char *why, size_t len)
{
	uint32_t c;
	int err;

	why[0] = '\0';
	hsd_reap(d);
	c = chain ? hsd_find_chain(d, chain) : NONE;
	if (c == NONE) {
		snprintf(why, len, "no chain %.64s registered", chain ? chain : "(none)");
		return -ENOENT;
	}
	for (uint32_t i = 0; i < d->nthread; i++) {
		struct hsd_thread *th = &d->thread[i];

		if (!th->dead && th->role == HSD_ROLE_VNF && th->chain == c)
			drop_thread(d, th);
	}
	forget_unused(d);
	/* One chain less never makes admission fail. */
	err = hsd_rebuild(d, why, len);
	if (err)
		fprintf(stderr, "tochain-sched: after chain %s left: %s\n", chain, why);
	return 0;
}
