// SPDX-License-Identifier: MIT
/* tochaind's registry with the CPU scheduler; see td_cpusched.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hs_quota.h"
#include "tochain/ctl_proto.h"
#include "td_apply.h"
#include "td_cpusched.h"
#include "td_priv.h"
#include "td_toe.h"

#define SCHED_CALL_MS 5000	/* as long as a TOE call (td_toe.h) */

static struct td_cpusched_chain *chain_slot(struct daemon *d, const char *chain, bool make)
{
	struct td_cpusched_chain *free_slot = NULL;

	for (unsigned int i = 0; i < TD_MAX_CHAINS; i++) {
		if (!strcmp(d->cpusched.chains[i].chain, chain))
			return &d->cpusched.chains[i];
		if (!d->cpusched.chains[i].chain[0] && !free_slot)
			free_slot = &d->cpusched.chains[i];
	}
	if (make && free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		snprintf(free_slot->chain, sizeof(free_slot->chain), "%s", chain);
	}
	return make ? free_slot : NULL;
}

const char *td_cpusched_chain_note(struct daemon *d, const struct td_chain *c)
{
	struct td_cpusched_chain *r = chain_slot(d, c->name, false);

	if (!c->sla) {
		for (unsigned int i = 0; i < d->st.nchains; i++) {
			const struct td_chain *o = &d->st.chains[i];

			if (o->dir != c->dir && o->sla && !strcmp(o->vm, c->vm))
				return "no SLA of its own: covered by the VM's chain of the other "
				       "direction";
		}
		return "no SLA";
	}
	return r && r->note[0] ? r->note : "not registered yet";
}

/* Service thread @tid's channel: its name is "svcN" (vnfs/runtime/vnf_serve.c), else -1. */
static int service_index(pid_t pid, pid_t tid)
{
	char path[64], comm[32] = "";
	unsigned int k;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	if (sscanf(comm, "svc%u", &k) != 1 || k >= TD_MAX_THREADS + 8)
		return -1;
	return (int)k;
}

/*
 * The service threads of @pid (all tasks but the main one when it has
 * others), those named for their channel in channel order first.  Count,
 * at most @max.
 */
static int service_tids(pid_t pid, pid_t *tids, int max)
{
	pid_t byidx[TD_MAX_THREADS + 8] = { 0 }, rest[TD_MAX_THREADS + 8];
	int n = 0, nrest = 0;
	char path[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir)) && nrest < TD_MAX_THREADS + 8) {
		int tid = atoi(e->d_name), k;

		if (tid <= 0 || tid == pid)
			continue;
		k = service_index(pid, tid);
		if (k >= 0 && !byidx[k])
			byidx[k] = tid;
		else
			rest[nrest++] = tid;
	}
	closedir(dir);
	for (int k = 0; k < TD_MAX_THREADS + 8 && n < max; k++)
		if (byidx[k])
			tids[n++] = byidx[k];
	for (int i = 0; i < nrest && n < max; i++)
		tids[n++] = rest[i];
	return n;
}

/*
 * Eq. 2's thread count R of VNF @v for chain @c (hs_quota): the threads
 * the CPU scheduler runs.  All of them when the SLA needs more than it
 * has (admission refuses that chain anyway).
 */
static unsigned int planned_threads(const struct td_chain *c, const struct td_vnf *v)
{
	struct hs_quota q;

	if (hs_quota(c->sla, td_vnf_f(v), TD_ADMIT_G, v->threads, &q) || !q.threads)
		return v->threads;
	return q.threads < v->threads ? q.threads : v->threads;
}

/*
 * Tell @vm's TOE to hand VNF @v's work to its first @n threads only,
 * before tochain-sched plans just those (a descriptor given to a thread
 * that never runs would hang the VNF).  0, or -1 with @r's note set.
 */
static int run_threads(struct td_cpusched_chain *r, const struct td_vm *vm,
		       const struct td_vnf *v, unsigned int n)
{
	char err[200];
	json_t *res = td_toe_call(vm, "vnf.run", json_pack("{s:s, s:i}", "name", v->name,
							   "threads", (int)n), err, sizeof(err));

	if (!res) {
		snprintf(r->note, sizeof(r->note), "vnf %.32s: %.150s", v->name, err);
		return -1;
	}
	json_decref(res);
	return 0;
}

/*
 * The chain's SLA changed: tochain-sched drops its threads (they run
 * unmanaged until registered again, with the new SLA and R, at once
 * after this) and forgets the chain.  0, or -1 with the note set.
 */
static int unregister_chain(struct daemon *d, struct td_cpusched_chain *r,
			    const struct td_chain *c)
{
	const char *why = NULL;
	json_t *rep = ctl_call_timeout(d->cfg->sched_socket, "sched.unregister",
				       json_pack("{s:s}", "chain", c->name), SCHED_CALL_MS, &why);
	json_t *e = json_object_get(rep, "error");

	if (!rep) {
		snprintf(r->note, sizeof(r->note), "tochain-sched: %.160s", why ? why : "no reply");
		json_decref(rep);
		return -1;
	}
	/* Refused: it no longer knows the chain (its threads exited). */
	if (!json_is_true(json_object_get(rep, "ok")))
		td_log("chain %s: sched.unregister: %s", c->name,
		       json_is_string(e) ? json_string_value(e) : "refused");
	json_decref(rep);
	r->registered = false;
	r->done = false;
	td_log("chain %s: SLA %llu -> %llu: registering again", c->name,
	       (unsigned long long)r->sla, (unsigned long long)c->sla);
	return 0;
}

/*
 * Register the service threads of @c's instances as role vnf with
 * tochain-sched, once all of them run; again when an instance was
 * replaced.  Not reachable is not an error (the note says so).
 */
/* The VM's chain of the other direction when it has no SLA of its own, else NULL. */
static const struct td_chain *other_direction(struct daemon *d, const struct td_chain *c)
{
	for (unsigned int i = 0; i < d->st.nchains; i++) {
		const struct td_chain *o = &d->st.chains[i];

		if (o != c && o->dir != c->dir && !strcmp(o->vm, c->vm))
			return o->sla ? NULL : o;
	}
	return NULL;
}

/* Adds @ch's VNFs not in @names yet; false if one runs in a libvirt domain. */
static bool add_vnfs(struct daemon *d, const struct td_chain *ch, const char **names,
		     unsigned int *n, const struct td_vnf **in_domain)
{
	for (unsigned int h = 0; h < ch->nhops; h++)
		for (unsigned int j = 0; j < ch->hop_len[h]; j++) {
			const struct td_vnf *v = td_state_find_vnf(&d->st, ch->hop[h][j]);
			unsigned int k;

			if (v && v->domain[0]) {
				*in_domain = v;
				return false;
			}
			for (k = 0; k < *n && strcmp(names[k], ch->hop[h][j]); k++)
				;
			if (k == *n && *n < TD_CPUSCHED_VNFS)
				names[(*n)++] = ch->hop[h][j];
		}
	return true;
}

static void register_chain(struct daemon *d, const struct td_chain *c)
{
	struct td_cpusched_chain *r = chain_slot(d, c->name, true);
	struct td_vm *vm = td_state_find_vm(&d->st, c->vm);
	const struct td_chain *o = other_direction(d, c);
	const char *names[TD_CPUSCHED_VNFS];
	pid_t pids[TD_CPUSCHED_VNFS] = { 0 };
	const struct td_vnf *in_domain = NULL;
	unsigned int nv = 0, nthreads = 0;
	char counters[PATH_MAX + 16];

	if (!r || !vm || !c->sla)
		return;
	if (!add_vnfs(d, c, names, &nv, &in_domain)) {
		if (!r->done) {
			snprintf(r->note, sizeof(r->note), "vnf %.32s runs in libvirt domain "
				 "%.63s: not registered (its CPU is the domain's vCPUs)",
				 in_domain->name, in_domain->domain);
			r->done = true;
			td_log("chain %s: %s", c->name, r->note);
		}
		return;
	}
	/* The other direction too, unless one of its VNFs runs in a domain. */
	if (o) {
		unsigned int nv0 = nv;

		if (!add_vnfs(d, o, names, &nv, &in_domain)) {
			nv = nv0;
			o = NULL;
		}
	}
	for (unsigned int k = 0; k < nv; k++) {
		struct td_inst *in = td_state_find_inst(&d->st, names[k], c->vm);

		pids[k] = in ? in->pid : 0;
		if (!pids[k])
			return;		/* not running yet: next tick */
	}
	if (r->done && !memcmp(pids, r->pids, sizeof(pids)) && r->sla == c->sla)
		return;
	if (access(d->cfg->sched_socket, F_OK)) {
		snprintf(r->note, sizeof(r->note),
			 "tochain-sched is not reachable at %.100s: the SLA is admitted, not enforced",
			 d->cfg->sched_socket);
		return;
	}
	/* Another SLA, instance or VNF set: registered again from scratch. */
	if (r->registered && unregister_chain(d, r, c))
		return;		/* next tick */
	snprintf(counters, sizeof(counters), "%s.counters", vm->region);
	for (unsigned int k = 0; k < nv; k++) {
		struct td_vnf *v = td_state_find_vnf(&d->st, names[k]);
		pid_t tids[TD_MAX_THREADS + 8];
		int n = service_tids(pids[k], tids, TD_MAX_THREADS + 8);

		/*
		 * Next tick: not all threads run yet, or the TOE did not take
		 * the thread count.  What this pass registered already must be
		 * unregistered first then, or it is refused as registered.
		 */
		if (!v || n < (int)v->threads) {
			r->registered = r->registered || nthreads > 0;
			return;
		}
		n = (int)planned_threads(c, v);
		if (run_threads(r, vm, v, (unsigned int)n)) {
			r->registered = r->registered || nthreads > 0;
			return;
		}
		for (int t = 0; t < n; t++) {
			const char *why = NULL;
			json_t *args = json_pack("{s:s, s:i, s:s, s:s, s:s, s:I, s:I, s:i, s:s, s:i}",
						 "role", "vnf", "tid", (int)tids[t], "vm", c->vm,
						 "chain", c->name, "vnf", v->name,
						 "sla", (json_int_t)c->sla, "f", (json_int_t)td_vnf_f(v),
						 "threads", n, "region", counters, "index", (int)c->dir);
			json_t *rep, *e;

			if (o)
				json_object_set_new(args, "index2", json_integer(o->dir));
			rep = ctl_call_timeout(d->cfg->sched_socket, "sched.register", args,
					       SCHED_CALL_MS, &why);
			e = json_object_get(rep, "error");
			if (!rep || !json_is_true(json_object_get(rep, "ok"))) {
				snprintf(r->note, sizeof(r->note), "tochain-sched: %.160s",
					 rep ? (json_is_string(e) ? json_string_value(e) : "refused")
					     : why);
				json_decref(rep);
				memcpy(r->pids, pids, sizeof(pids));
				r->done = true;
				r->registered = t > 0 || nthreads > 0;
				r->sla = c->sla;
				td_log("chain %s: %s", c->name, r->note);
				return;
			}
			json_decref(rep);
		}
		nthreads += (unsigned int)n;
	}
	snprintf(r->note, sizeof(r->note), "registered with tochain-sched: %u threads%s%.64s",
		 nthreads, o ? ", with chain " : "", o ? o->name : "");
	memcpy(r->pids, pids, sizeof(pids));
	r->done = true;
	r->registered = true;
	r->sla = c->sla;
	td_log("chain %s: %s", c->name, r->note);
}

/*
 * A VM run by a libvirt domain: tochain-sched finds the domain's vCPU
 * threads itself (sched.register by "domain", host-sched/README.md) and
 * follows them across domain restarts, so tochaind registers it once.
 * Not reachable is not an error: retried at the next tick.
 */
static struct td_cpusched_vm *vm_slot(struct daemon *d, const char *vm, bool make)
{
	struct td_cpusched_vm *free_slot = NULL;

	for (unsigned int i = 0; i < TD_MAX_VMS; i++) {
		if (!strcmp(d->cpusched.vms[i].vm, vm))
			return &d->cpusched.vms[i];
		if (!d->cpusched.vms[i].vm[0] && !free_slot)
			free_slot = &d->cpusched.vms[i];
	}
	if (make && free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		snprintf(free_slot->vm, sizeof(free_slot->vm), "%s", vm);
	}
	return make ? free_slot : NULL;
}

static void register_vm(struct daemon *d, const struct td_vm *vm)
{
	struct td_cpusched_vm *r = vm_slot(d, vm->name, true);
	const char *why = NULL;
	json_t *rep, *e;

	if (!r || r->done)
		return;
	if (access(d->cfg->sched_socket, F_OK)) {
		snprintf(r->note, sizeof(r->note),
			 "tochain-sched is not reachable at %.100s: vCPUs not scheduled",
			 d->cfg->sched_socket);
		return;
	}
	rep = ctl_call_timeout(d->cfg->sched_socket, "sched.register",
			       json_pack("{s:s, s:s, s:s}", "role", "vm", "domain", vm->domain,
					 "vm", vm->name),
			       SCHED_CALL_MS, &why);
	if (!rep) {
		snprintf(r->note, sizeof(r->note), "tochain-sched: %.160s", why ? why : "no reply");
		return;		/* retried at the next tick */
	}
	r->done = true;
	e = json_object_get(rep, "error");
	if (json_is_true(json_object_get(rep, "ok")))
		snprintf(r->note, sizeof(r->note), "registered with tochain-sched: %zu vCPU threads",
			 json_array_size(json_object_get(json_object_get(rep, "result"), "tids")));
	else
		snprintf(r->note, sizeof(r->note), "tochain-sched: %.160s",
			 json_is_string(e) ? json_string_value(e) : "refused");
	td_log("vm %s (domain %s): %s", vm->name, vm->domain, r->note);
	json_decref(rep);
}

const char *td_cpusched_vm_note(struct daemon *d, const char *vm)
{
	struct td_cpusched_vm *r = vm_slot(d, vm, false);

	return r && r->note[0] ? r->note : NULL;
}

/*
 * The CPU scheduler is its own daemon (host-sched/, tochain-sched); its
 * commands are passed to it as they are and its reply comes back as ours.
 */
json_t *td_cpusched_cmd_forward(struct daemon *d, const char *cmd, json_t *args)
{
	const char *why = NULL;
	json_t *reply = ctl_call(d->cfg->sched_socket, cmd, json_deep_copy(args), &why);

	if (!reply)
		return ctl_reply_fail("the CPU scheduler (tochain-sched at %s) is not reachable: %s",
			    d->cfg->sched_socket, why);
	return reply;
}

json_t *td_cpusched_show(struct daemon *d, int timeout_ms)
{
	const char *why = NULL;
	json_t *rep, *res;

	if (access(d->cfg->sched_socket, F_OK))
		return NULL;
	rep = ctl_call_timeout(d->cfg->sched_socket, "sched.show", NULL, timeout_ms, &why);
	res = json_is_true(json_object_get(rep, "ok")) ? json_object_get(rep, "result") : NULL;
	json_incref(res);
	json_decref(rep);
	return json_is_object(res) ? res : (json_decref(res), NULL);
}

void td_cpusched_tick(struct daemon *d)
{
	for (unsigned int i = 0; i < TD_MAX_VMS; i++)
		if (d->cpusched.vms[i].vm[0] && !td_state_find_vm(&d->st, d->cpusched.vms[i].vm))
			d->cpusched.vms[i].vm[0] = '\0';
	for (unsigned int i = 0; i < d->st.nvms; i++)
		if (d->st.vms[i].domain[0])
			register_vm(d, &d->st.vms[i]);

	for (unsigned int i = 0; i < TD_MAX_CHAINS; i++)
		if (d->cpusched.chains[i].chain[0] && !td_state_find_chain(&d->st, d->cpusched.chains[i].chain))
			d->cpusched.chains[i].chain[0] = '\0';
	/* Chains that lost their SLA first: their threads may move to the
	 * registration of the VM's chain of the other direction. */
	for (unsigned int i = 0; i < d->st.nchains; i++) {
		const struct td_chain *c = &d->st.chains[i];
		struct td_cpusched_chain *r = chain_slot(d, c->name, false);

		if (r && r->registered && !c->sla)
			unregister_chain(d, r, c);
	}
	for (unsigned int i = 0; i < d->st.nchains; i++)
		register_chain(d, &d->st.chains[i]);
}
