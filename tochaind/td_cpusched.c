// SPDX-License-Identifier: MIT
/* tochaind's registry with the CPU scheduler; see td_cpusched.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "td_cpusched.h"
#include "td_priv.h"

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

	if (!c->sla)
		return "no SLA";
	return r && r->note[0] ? r->note : "not registered yet";
}

/* The service threads of @pid (all tasks but the main one when it has
 * others).  Count, at most @max. */
static int service_tids(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((e = readdir(dir)) && n < max) {
		int tid = atoi(e->d_name);

		if (tid > 0 && tid != pid)
			tids[n++] = tid;
	}
	closedir(dir);
	return n;
}

/*
 * Register the service threads of @c's instances as role vnf with
 * tochain-sched, once all of them run; again when an instance was
 * replaced.  Not reachable is not an error (the note says so).
 */
static void register_chain(struct daemon *d, const struct td_chain *c)
{
	struct td_cpusched_chain *r = chain_slot(d, c->name, true);
	struct td_vm *vm = td_state_find_vm(&d->st, c->vm);
	pid_t pids[TD_MAX_HOPS * TD_MAX_PER_HOP] = { 0 };
	unsigned int k = 0, nthreads = 0;
	char counters[PATH_MAX + 16];

	if (!r || !vm || !c->sla)
		return;
	for (unsigned int h = 0; h < c->nhops; h++)
		for (unsigned int j = 0; j < c->hop_len[h]; j++) {
			struct td_vnf *v = td_state_find_vnf(&d->st, c->hop[h][j]);

			if (v && v->domain[0] && !r->done) {
				snprintf(r->note, sizeof(r->note), "vnf %.32s runs in libvirt domain "
					 "%.63s: not registered (its CPU is the domain's vCPUs)",
					 v->name, v->domain);
				r->done = true;
				td_log("chain %s: %s", c->name, r->note);
			}
			if (v && v->domain[0])
				return;
		}
	for (unsigned int h = 0; h < c->nhops; h++)
		for (unsigned int j = 0; j < c->hop_len[h]; j++, k++) {
			struct td_inst *in = td_state_find_inst(&d->st, c->hop[h][j], c->vm);

			pids[k] = in ? in->pid : 0;
		}
	if (r->done && !memcmp(pids, r->pids, sizeof(pids)))
		return;
	if (access(d->cfg->sched_socket, F_OK)) {
		snprintf(r->note, sizeof(r->note),
			 "tochain-sched is not reachable at %.100s: the SLA is admitted, not enforced",
			 d->cfg->sched_socket);
		return;
	}
	snprintf(counters, sizeof(counters), "%s.counters", vm->region);
	k = 0;
	for (unsigned int h = 0; h < c->nhops; h++)
		for (unsigned int j = 0; j < c->hop_len[h]; j++, k++) {
			struct td_vnf *v = td_state_find_vnf(&d->st, c->hop[h][j]);
			pid_t tids[TD_MAX_THREADS + 8];
			int n = pids[k] ? service_tids(pids[k], tids, TD_MAX_THREADS + 8) : 0;

			if (!v || n < (int)v->threads)
				return;	/* not all threads run yet: next tick */
			for (int t = 0; t < n; t++) {
				const char *why = NULL;
				json_t *rep = ctl_call_timeout(d->cfg->sched_socket, "sched.register",
					json_pack("{s:s, s:i, s:s, s:s, s:s, s:I, s:I, s:i, s:s, s:i}",
						  "role", "vnf", "tid", (int)tids[t], "vm", c->vm,
						  "chain", c->name, "vnf", v->name,
						  "sla", (json_int_t)c->sla, "f", (json_int_t)td_vnf_f(v),
						  "threads", n, "region", counters, "index", (int)c->dir),
					SCHED_CALL_MS, &why);
				json_t *e = json_object_get(rep, "error");

				if (!rep || !json_is_true(json_object_get(rep, "ok"))) {
					snprintf(r->note, sizeof(r->note), "tochain-sched: %.160s",
						 rep ? (json_is_string(e) ? json_string_value(e) : "refused")
						     : why);
					json_decref(rep);
					memcpy(r->pids, pids, sizeof(pids));
					r->done = true;
					td_log("chain %s: %s", c->name, r->note);
					return;
				}
				json_decref(rep);
			}
			nthreads += (unsigned int)n;
		}
	snprintf(r->note, sizeof(r->note), "registered with tochain-sched: %u threads", nthreads);
	memcpy(r->pids, pids, sizeof(pids));
	r->done = true;
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
	for (unsigned int i = 0; i < d->st.nchains; i++)
		register_chain(d, &d->st.chains[i]);
}
