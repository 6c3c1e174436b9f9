// SPDX-License-Identifier: MIT
/*
 * tochaind: VNFs, chains, stats and apply (see td_priv.h).
 *
 * Every change goes the same way: a complete next state is built and
 * validated (td_apply_plan, td_state_check, td_admit) while nothing has
 * changed yet; then realize() makes the TOEs agree with it (converge:
 * asks each affected TOE what it runs and sends only the difference),
 * saves it, and only then removes what is gone.  When a step fails the
 * affected TOEs are converged back to the old state and the old state
 * stays.  converge() is also how a restarted daemon or a restarted TOE
 * is repaired, so chains the TOEs still run are never set again.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "td_apply.h"
#include "td_grant.h"
#include "td_inst.h"
#include "td_libvirt.h"
#include "td_priv.h"
#include "tochain/util.h"

#define TOE_CALL_MS 5000
#define REPAIR_BACKOFF_MS 2000
#define GUEST_CHECK_MS 2000

static unsigned int ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/* --- the TOE's control socket (R.ctl, host-toe/toe/README.md) --- */

static json_t *toe_call(const struct td_vm *vm, const char *cmd, json_t *args, char *err,
			size_t errlen)
{
	char path[PATH_MAX + 8];
	const char *why = NULL;
	json_t *reply, *res;

	snprintf(path, sizeof(path), "%s.ctl", vm->region);
	reply = ctl_call_timeout(path, cmd, args, TOE_CALL_MS, &why);
	if (!reply) {
		snprintf(err, errlen, "vm %s: the TOE's control socket %.200s: %s", vm->name, path, why);
		return NULL;
	}
	if (!json_is_true(json_object_get(reply, "ok"))) {
		json_t *e = json_object_get(reply, "error");

		snprintf(err, errlen, "vm %s: the TOE refused %s: %s", vm->name, cmd,
			 json_is_string(e) ? json_string_value(e) : "no reason given");
		json_decref(reply);
		return NULL;
	}
	res = json_incref(json_object_get(reply, "result"));
	json_decref(reply);
	if (!json_is_object(res)) {
		json_decref(res);
		snprintf(err, errlen, "vm %s: the TOE's reply to %s has no result", vm->name, cmd);
		return NULL;
	}
	return res;
}

static json_t *find_named(json_t *list, const char *key, const char *val)
{
	size_t i;
	json_t *o;

	json_array_foreach(list, i, o) {
		json_t *v = json_object_get(o, key);

		if (json_is_string(v) && !strcmp(json_string_value(v), val))
			return o;
	}
	return NULL;
}

static const char *dispatch_of(const struct td_vnf *v)
{
	return v->kind == TD_KIND_IDS || v->kind == TD_KIND_WAF ? "flow" : "rr";
}

static void stop_pid(struct daemon *d, const struct td_vm *vm, const char *vnf, pid_t pid)
{
	char region[PATH_MAX + 64];

	td_inst_region(vm, vnf, region, sizeof(region));
	td_inst_stop(d->cfg, pid, region, vnf, vm->name);
}

/* Is instance @in of @vm alive: its tochain-vnf, or its domain's QEMU? */
static bool inst_alive(const struct td_vm *vm, const struct td_inst *in)
{
	char region[PATH_MAX + 64];

	if (in->domain[0])
		return td_libvirt_qemu_alive(in->pid, in->domain);
	td_inst_region(vm, in->vnf, region, sizeof(region));
	return td_inst_alive(in->pid, region);
}

/* Does a VNF of @domain other than @vnf serve @vm's chains in @st? */
static bool domain_serves(struct td_state *st, const char *vm, const char *domain,
			  const char *vnf)
{
	for (unsigned int i = 0; i < st->nvnfs; i++)
		if (strcmp(st->vnfs[i].name, vnf) && !strcmp(st->vnfs[i].domain, domain) &&
		    td_state_vm_uses(st, vm, st->vnfs[i].name))
			return true;
	return false;
}

/* VNF @vnf of @domain serves @vm no more (in @st): its grants go. */
static void take_grants(struct daemon *d, struct td_state *st, struct td_vm *vm, const char *vnf,
			const char *domain)
{
	char err[700];

	td_grant_take(d->lv, d->cfg, vm, vnf, domain, domain_serves(st, vm->name, domain, vnf),
		      &d->glog, err, sizeof(err));
}

/*
 * VNF @v runs in libvirt domain v->domain: give it @vm's grants and
 * attach the domain's QEMU pid in the TOE (unless @tpid, what the TOE
 * has, is that already).  @fresh: the TOE has just added the VNF, so the
 * grants go again on failure.
 */
static int start_guest_inst(struct daemon *d, struct td_state *st, struct td_vm *vm,
			    const struct td_vnf *v, pid_t tpid, bool fresh, char *err, size_t errlen)
{
	struct td_inst *in = td_state_find_inst(st, v->name, vm->name);
	char why[600] = "";
	pid_t qpid = 0;
	json_t *r;

	if (!d->lv) {
		snprintf(err, errlen, "vnf %s: no libvirt connection", v->name);
		return -ENOTCONN;
	}
	if (td_libvirt_qemu_pid(d->lv, v->domain, &qpid, why, sizeof(why))) {
		snprintf(err, errlen, "vnf %s: %s", v->name, why);
		return -EIO;
	}
	if (v->kind == TD_KIND_FW && td_fw_nft(d->cfg, v, vm, err, errlen))
		return -EIO;
	if (td_grant_give(d->lv, d->cfg, vm, v->name, v->domain, why, sizeof(why))) {
		snprintf(err, errlen, "vm %s: vnf %s: %s", vm->name, v->name, why);
		return -EIO;
	}
	if (tpid != qpid) {
		r = toe_call(vm, "vnf.attach", json_pack("{s:s, s:i}", "name", v->name, "pid",
							 (int)qpid), err, errlen);
		if (!r) {
			if (fresh)
				take_grants(d, st, vm, v->name, v->domain);
			return -EIO;
		}
		json_decref(r);
	}
	if (!in) {
		if (st->ninsts >= TD_MAX_INSTS) {
			if (fresh)
				take_grants(d, st, vm, v->name, v->domain);
			snprintf(err, errlen, "too many VNF instances (at most %d)", TD_MAX_INSTS);
			return -ENOSPC;
		}
		in = &st->insts[st->ninsts++];
		memset(in, 0, sizeof(*in));
		strcpy(in->vnf, v->name);
		strcpy(in->vm, vm->name);
	}
	if (in->pid != qpid || strcmp(in->domain, v->domain))
		td_log("vm %s: vnf %s runs in libvirt domain %s (QEMU pid %d), regions granted",
		       vm->name, v->name, v->domain, (int)qpid);
	in->pid = qpid;
	snprintf(in->domain, sizeof(in->domain), "%s", v->domain);
	return 0;
}

/* No fw VNF serves @vm any more (in @st): take its nftables table away. */
static void fw_nft_drop(struct daemon *d, struct td_state *st, struct td_vm *vm)
{
	char err[512];

	for (unsigned int i = 0; i < st->nvnfs; i++)
		if (st->vnfs[i].kind == TD_KIND_FW && td_state_vm_uses(st, vm->name, st->vnfs[i].name))
			return;
	if (td_fw_nft(d->cfg, NULL, vm, err, sizeof(err)))
		td_log("vm %s: %s", vm->name, err);
}

/* Start an instance of @v for @vm and attach it in the TOE. */
static int start_inst(struct daemon *d, struct td_state *st, struct td_vm *vm,
		      const struct td_vnf *v, const char *region, char *err, size_t errlen)
{
	struct td_inst *in = td_state_find_inst(st, v->name, vm->name);
	json_t *r;
	pid_t pid;

	/* a fw VNF's kernel half first: the in-chain half never runs without it */
	if (v->kind == TD_KIND_FW && td_fw_nft(d->cfg, v, vm, err, errlen))
		return -EIO;
	if (td_inst_spawn(d->cfg, v, vm, region, &pid, err, errlen))
		return -EIO;
	r = toe_call(vm, "vnf.attach", json_pack("{s:s, s:i}", "name", v->name, "pid", (int)pid),
		     err, errlen);
	if (!r) {
		td_inst_stop(d->cfg, pid, region, v->name, vm->name);
		return -EIO;
	}
	json_decref(r);
	if (!in) {
		if (st->ninsts >= TD_MAX_INSTS) {
			td_inst_stop(d->cfg, pid, region, v->name, vm->name);
			snprintf(err, errlen, "too many VNF instances (at most %d)", TD_MAX_INSTS);
			return -ENOSPC;
		}
		in = &st->insts[st->ninsts++];
		memset(in, 0, sizeof(*in));
		strcpy(in->vnf, v->name);
		strcpy(in->vm, vm->name);
	}
	in->pid = pid;
	td_log("vm %s: vnf %s started, pid %d", vm->name, v->name, (int)pid);
	return 0;
}

/* VNF @name is needed by @vm's chains: make the TOE have it, served. */
static int ensure_vnf(struct daemon *d, struct td_state *st, struct td_vm *vm, const char *name,
		      json_t *tvnfs, char *err, size_t errlen)
{
	struct td_vnf *v = td_state_find_vnf(st, name);
	struct td_inst *in = td_state_find_inst(st, name, vm->name);
	char region[PATH_MAX + 64];
	json_t *e = find_named(tvnfs, "name", name), *r;
	const char *policy = v->fail_open ? "open" : "closed";

	td_inst_region(vm, name, region, sizeof(region));
	if (e) {
		json_t *th = json_object_get(e, "threads"), *po = json_object_get(e, "policy");
		json_t *di = json_object_get(e, "dispatch"), *pid = json_object_get(e, "pid");
		pid_t tpid = json_is_integer(pid) ? (pid_t)json_integer_value(pid) : 0;

		if ((json_is_integer(th) && json_integer_value(th) != v->threads) ||
		    (json_is_string(po) && strcmp(json_string_value(po), policy)) ||
		    (json_is_string(di) && strcmp(json_string_value(di), dispatch_of(v)))) {
			snprintf(err, errlen, "vm %s: the TOE runs vnf %s with other threads, policy or dispatch",
				 vm->name, name);
			return -EEXIST;
		}
		if (v->domain[0])	/* grants checked, QEMU attached again if it changed */
			return start_guest_inst(d, st, vm, v, tpid, false, err, errlen);
		if (in && in->pid == tpid && td_inst_alive(tpid, region))
			return 0;
		if (!in && td_inst_alive(tpid, region)) {
			/* the state lost it (saved before it started): adopt */
			if (st->ninsts >= TD_MAX_INSTS)
				return -ENOSPC;
			in = &st->insts[st->ninsts++];
			strcpy(in->vnf, name);
			strcpy(in->vm, vm->name);
			in->pid = tpid;
			return 0;
		}
		if (in)
			td_log("vm %s: vnf %s (pid %d) is not running, restarting it", vm->name, name,
			       (int)in->pid);
		if (in)
			td_inst_stop(d->cfg, in->pid, region, name, vm->name);
		td_inst_stop(d->cfg, tpid, region, name, vm->name);
		return start_inst(d, st, vm, v, region, err, errlen);
	}
	/* Not in the TOE (new, or the TOE was restarted): a process left
	 * from before serves nothing. */
	if (in && !in->domain[0])
		td_inst_stop(d->cfg, in->pid, region, name, vm->name);
	r = toe_call(vm, "vnf.add", json_pack("{s:s, s:i, s:s, s:s}", "name", name, "threads",
					      (int)v->threads, "policy", policy, "dispatch",
					      dispatch_of(v)), err, errlen);
	if (!r)
		return -EIO;
	if (json_is_string(json_object_get(r, "region")))
		snprintf(region, sizeof(region), "%s", json_string_value(json_object_get(r, "region")));
	json_decref(r);
	if (v->domain[0] ? start_guest_inst(d, st, vm, v, 0, true, err, errlen)
			 : start_inst(d, st, vm, v, region, err, errlen)) {
		char ignore[256];

		json_decref(toe_call(vm, "vnf.del", json_pack("{s:s}", "name", name), ignore,
				     sizeof(ignore)));
		return -EIO;
	}
	return 0;
}

/*
 * Does the TOE's chain @tc (from its stats) look like @ch?  The TOE
 * reports the name and the number of hops; a chain whose hops changed
 * since @prev (the state the TOE was converged to, NULL: unknown) is
 * set again whatever it looks like.
 */
static bool toe_has_chain(json_t *tc, const struct td_chain *ch, struct td_state *prev)
{
	json_t *name = json_object_get(tc, "name"), *hops = json_object_get(tc, "hops");
	struct td_chain *was = prev ? td_state_find_dir(prev, ch->vm, ch->dir) : NULL;

	if (!tc || !json_is_string(name) || strcmp(json_string_value(name), ch->name))
		return false;
	if (prev && (!was || strcmp(was->name, ch->name) || td_chain_hops_differ(was, ch)))
		return false;
	if (json_is_integer(hops))
		return json_integer_value(hops) == ch->nhops;
	if (json_is_array(hops)) {
		json_t *want = td_hops_json(ch);
		bool same = json_equal(hops, want);

		json_decref(want);
		return same;
	}
	return false;
}

/*
 * Make @vm's TOE run exactly @st's chains of @vm, with one live instance
 * per VNF they use, and nothing else.  Instance pids are written to @st.
 * @prev: the state the TOE was last converged to, or NULL (repair).
 */
static int converge(struct daemon *d, struct td_state *st, struct td_vm *vm,
		    struct td_state *prev, char *err, size_t errlen)
{
	json_t *ls = NULL, *stats = NULL, *tvnfs, *tchains, *r;
	char done[2 * TD_MAX_HOPS * TD_MAX_PER_HOP][TD_OBJ_NAME_MAX];
	unsigned int ndone = 0;
	int rc = -EIO;
	size_t i;
	json_t *o;

	ls = toe_call(vm, "vnf.ls", NULL, err, errlen);
	if (!ls)
		return -EIO;
	stats = toe_call(vm, "stats", NULL, err, errlen);
	if (!stats)
		goto out;
	tvnfs = json_object_get(ls, "vnfs");
	tchains = json_object_get(stats, "chains");
	/* 1. every VNF the chains use, added and served: once, even when both
	 * chains use it (tvnfs is what the TOE had before this loop) */
	for (unsigned int c = 0; c < st->nchains; c++) {
		struct td_chain *ch = &st->chains[c];

		if (strcmp(ch->vm, vm->name))
			continue;
		for (unsigned int h = 0; h < ch->nhops; h++)
			for (unsigned int k = 0; k < ch->hop_len[h]; k++) {
				bool seen = false;

				for (unsigned int x = 0; x < ndone && !seen; x++)
					seen = !strcmp(done[x], ch->hop[h][k]);
				if (seen)
					continue;
				if (ensure_vnf(d, st, vm, ch->hop[h][k], tvnfs, err, errlen))
					goto out;
				if (ndone < 2 * TD_MAX_HOPS * TD_MAX_PER_HOP)
					strcpy(done[ndone++], ch->hop[h][k]);
			}
	}
	/* 2. each direction: set, replaced, or deleted */
	for (int dir = TD_DIR_IN; dir <= TD_DIR_OUT; dir++) {
		struct td_chain *ch = td_state_find_dir(st, vm->name, (enum td_dir)dir);
		json_t *tc = find_named(tchains, "dir", td_dir_name((enum td_dir)dir));

		if (ch) {
			json_t *hops;

			if (toe_has_chain(tc, ch, prev))
				continue;
			hops = td_hops_json(ch);
			r = toe_call(vm, "chain.set", json_pack("{s:s, s:s, s:o}", "dir",
								td_dir_name(ch->dir), "name", ch->name,
								"hops", hops), err, errlen);
			if (!r)
				goto out;
			td_log("vm %s: chain %s set (%s, version %lld)", vm->name, ch->name,
			       td_dir_name(ch->dir), (long long)json_integer_value(json_object_get(r, "version")));
			json_decref(r);
		} else if (tc) {
			r = toe_call(vm, "chain.del", json_pack("{s:s}", "dir",
								td_dir_name((enum td_dir)dir)), err, errlen);
			if (!r)
				goto out;
			json_decref(r);
			td_log("vm %s: %s chain deleted", vm->name, td_dir_name((enum td_dir)dir));
		}
	}
	/* 3. VNFs the TOE has that no chain of this VM uses any more */
	json_array_foreach(tvnfs, i, o) {
		json_t *n = json_object_get(o, "name"), *pid = json_object_get(o, "pid");

		if (!json_is_string(n) || td_state_vm_uses(st, vm->name, json_string_value(n)))
			continue;
		r = toe_call(vm, "vnf.del", json_pack("{s:s}", "name", json_string_value(n)), err,
			     errlen);
		if (!r)
			goto out;
		json_decref(r);
		{
			struct td_inst *gin = td_state_find_inst(st, json_string_value(n), vm->name);
			struct td_vnf *gv = td_state_find_vnf(st, json_string_value(n));

			/* an instance record's grants go in step 4 */
			if (!gin && gv && gv->domain[0])
				take_grants(d, st, vm, gv->name, gv->domain);
			else if (!gin || !gin->domain[0])
				stop_pid(d, vm, json_string_value(n),
					 json_is_integer(pid) ? (pid_t)json_integer_value(pid) : 0);
		}
		td_log("vm %s: vnf %s detached", vm->name, json_string_value(n));
		fw_nft_drop(d, st, vm);
	}
	/* 4. instance records of this VM nothing needs */
	for (unsigned int k = st->ninsts; k-- > 0;) {
		struct td_inst *in = &st->insts[k];

		if (strcmp(in->vm, vm->name) || td_state_vm_uses(st, vm->name, in->vnf))
			continue;
		if (in->domain[0])
			take_grants(d, st, vm, in->vnf, in->domain);
		else
			stop_pid(d, vm, in->vnf, in->pid);
		td_state_drop_inst(st, in);
	}
	rc = 0;
out:
	json_decref(ls);
	json_decref(stats);
	return rc;
}

/* Must @vm's TOE be converged to go from @a to @b? */
static bool vm_dirty(struct td_state *a, struct td_state *b, const char *vm)
{
	for (int dir = TD_DIR_IN; dir <= TD_DIR_OUT; dir++) {
		struct td_chain *ca = td_state_find_dir(a, vm, (enum td_dir)dir);
		struct td_chain *cb = td_state_find_dir(b, vm, (enum td_dir)dir);

		if (!ca != !cb)
			return true;
		if (!ca)
			continue;
		if (strcmp(ca->name, cb->name) || td_chain_hops_differ(ca, cb))
			return true;
		for (unsigned int h = 0; h < cb->nhops; h++)
			for (unsigned int k = 0; k < cb->hop_len[h]; k++) {
				struct td_vnf *va = td_state_find_vnf(a, cb->hop[h][k]);
				struct td_vnf *vb = td_state_find_vnf(b, cb->hop[h][k]);

				if (!va || !vb || td_vnf_runtime_differs(va, vb))
					return true;
			}
	}
	return false;
}

static bool vm_in(struct td_state *st, const char *name)
{
	return td_state_find_vm(st, name) != NULL;
}

/* Rules copies written by realize(), to undo. */
struct rules_undo {
	char vnf[TD_OBJ_NAME_MAX];
	char *old;		/* previous content, NULL: there was none */
	size_t oldlen;
};

static void rules_restore(struct daemon *d, struct rules_undo *u, unsigned int n)
{
	char path[PATH_MAX + 64];

	for (unsigned int i = 0; i < n; i++) {
		td_rules_copy_path(d->cfg, u[i].vnf, path, sizeof(path));
		if (u[i].old)
			td_write_file(path, u[i].old, u[i].oldlen);
		else
			unlink(path);
	}
}

/* SIGHUP the instances of @vnf: they reload their rules copy. */
static void reload_rules(struct daemon *d, const char *vnf)
{
	struct td_vnf *v = td_state_find_vnf(&d->st, vnf);
	char err[512];

	for (unsigned int i = 0; i < d->st.ninsts; i++) {
		struct td_inst *in = &d->st.insts[i];
		struct td_vm *vm = td_state_find_vm(&d->st, in->vm);
		char region[PATH_MAX + 64];

		if (strcmp(in->vnf, vnf) || !vm)
			continue;
		if (in->domain[0]) {
			/* never a signal to QEMU: the guest's VNF has its own rules */
			td_log("vm %s: vnf %s runs in libvirt domain %s: its rules are the guest's, "
			       "not reloaded", vm->name, vnf, in->domain);
			continue;
		}
		td_inst_region(vm, vnf, region, sizeof(region));
		if (v && v->kind == TD_KIND_FW && td_fw_nft(d->cfg, v, vm, err, sizeof(err)))
			td_log("vm %s: %s (the in-chain rules reload anyway)", vm->name, err);
		if (td_inst_alive(in->pid, region)) {
			kill(in->pid, SIGHUP);
			td_log("vm %s: vnf %s (pid %d) reloads its rules", vm->name, vnf, (int)in->pid);
		}
	}
}

/*
 * Go from d->st to @next (validated).  @plan, when given, names the VNFs
 * whose rules copies change.  0, or -errno with @err and d->st unchanged.
 */
static int realize(struct daemon *d, struct td_state *next, const struct td_plan *plan,
		   char *err, size_t errlen)
{
	struct td_state *cur = &d->st;
	struct rules_undo *undo = calloc(TD_MAX_VNFS, sizeof(*undo));
	bool *created = calloc(TD_MAX_VMS, sizeof(bool)), *touched = calloc(TD_MAX_VMS, sizeof(bool));
	unsigned int nundo = 0;
	char ignore[512];
	int rc = -ENOMEM;

	if (!undo || !created || !touched)
		goto out;
	/* 1. VMs to create */
	for (unsigned int i = 0; i < next->nvms; i++) {
		struct td_vm *vm = &next->vms[i];

		if (vm_in(cur, vm->name))
			continue;
		if (td_vm_create(d->cfg, vm, ignore, sizeof(ignore))) {
			snprintf(err, errlen, "vm '%s': %.400s", vm->name, ignore);
			rc = -EIO;
			goto undo;
		}
		created[i] = true;
		td_log("vm %s added: %s in %s, TOE pid %d", vm->name, vm->ip.text, vm->netns,
		       (int)vm->toe_pid);
	}
	/* 2. rules copies of created and updated VNFs */
	for (unsigned int i = 0; plan && i < plan->n; i++) {
		const struct td_change *c = &plan->c[i];
		struct td_vnf *v = td_state_find_vnf(next, c->name);
		char path[PATH_MAX + 64];
		size_t len = 0;
		char *text;

		if (c->obj != TD_OBJ_VNF || c->op == TD_OP_DELETE || !v || !v->rules[0])
			continue;
		text = td_read_file(v->rules, &len);
		if (!text) {
			snprintf(err, errlen, "vnf %s: --rules %.200s: %s", v->name, v->rules, strerror(errno));
			rc = -EIO;
			goto undo;
		}
		td_rules_copy_path(d->cfg, v->name, path, sizeof(path));
		snprintf(undo[nundo].vnf, sizeof(undo[nundo].vnf), "%s", v->name);
		undo[nundo].old = td_read_file(path, &undo[nundo].oldlen);
		nundo++;
		rc = td_write_file(path, text, len);
		free(text);
		if (rc) {
			snprintf(err, errlen, "vnf %s: cannot copy the rules to %.200s: %s", v->name, path,
				 strerror(-rc));
			goto undo;
		}
	}
	/* 3. the TOEs: VMs of the next state, then VMs that go */
	for (unsigned int i = 0; i < next->nvms; i++) {
		struct td_vm *vm = &next->vms[i];

		if (!created[i] && !vm_dirty(cur, next, vm->name))
			continue;
		touched[i] = true;
		rc = converge(d, next, vm, cur, err, errlen);
		if (rc)
			goto undo;
	}
	for (unsigned int i = 0; i < cur->nvms; i++) {
		struct td_vm *vm = &cur->vms[i];

		if (vm_in(next, vm->name) || !vm_dirty(cur, next, vm->name))
			continue;
		rc = converge(d, next, vm, cur, err, errlen);
		if (rc)
			goto undo;
	}
	/* 4. saved; from here on it happened */
	{
		struct td_state *old = malloc(sizeof(*old));

		if (!old) {
			rc = -ENOMEM;
			goto undo;
		}
		*old = *cur;
		*cur = *next;
		rc = td_save(d);
		if (rc) {
			*cur = *old;
			free(old);
			snprintf(err, errlen, "cannot save the state: %s", strerror(-rc));
			goto undo;
		}
		/* VMs that are gone */
		for (unsigned int i = 0; i < old->nvms; i++)
			if (!vm_in(cur, old->vms[i].name)) {
				td_vm_destroy(d->cfg, &old->vms[i]);
				td_log("vm %s deleted", old->vms[i].name);
			}
		/* rules copies of VNFs that are gone */
		for (unsigned int i = 0; i < old->nvnfs; i++)
			if (!td_state_find_vnf(cur, old->vnfs[i].name)) {
				char path[PATH_MAX + 64];

				td_rules_copy_path(d->cfg, old->vnfs[i].name, path, sizeof(path));
				unlink(path);
			}
		free(old);
	}
	for (unsigned int i = 0; plan && i < plan->n; i++)
		if (plan->c[i].obj == TD_OBJ_VNF && plan->c[i].op == TD_OP_UPDATE && plan->c[i].rules)
			reload_rules(d, plan->c[i].name);
	rc = 0;
	goto out;
undo:
	/* TOEs back to the old state, new VMs removed, rules copies restored */
	for (unsigned int i = 0; i < next->nvms; i++) {
		struct td_vm *vm = td_state_find_vm(cur, next->vms[i].name);

		if (created[i])
			td_vm_destroy(d->cfg, &next->vms[i]);
		else if (touched[i] && vm && converge(d, cur, vm, next, ignore, sizeof(ignore)))
			td_log("undo: %s", ignore);
	}
	for (unsigned int i = 0; i < cur->nvms; i++)
		if (!vm_in(next, cur->vms[i].name) && vm_dirty(cur, next, cur->vms[i].name) &&
		    converge(d, cur, &cur->vms[i], next, ignore, sizeof(ignore)))
			td_log("undo: %s", ignore);
	rules_restore(d, undo, nundo);
out:
	for (unsigned int i = 0; undo && i < nundo; i++)
		free(undo[i].old);
	free(undo);
	free(created);
	free(touched);
	return rc;
}

/* --- commands --- */

static bool rules_changed(const struct td_vnf *v, void *arg)
{
	struct daemon *d = arg;
	char path[PATH_MAX + 64];
	size_t la = 0, lb = 0;
	char *a, *b;
	bool diff;

	td_rules_copy_path(d->cfg, v->name, path, sizeof(path));
	a = td_read_file(v->rules, &la);
	b = td_read_file(path, &lb);
	diff = !a || !b || la != lb || memcmp(a, b, la);
	free(a);
	free(b);
	return diff;
}

/*
 * VNF @v (of state @st) runs in a libvirt domain: is that domain running,
 * no VM's, and can regions be granted from the region directory?  0, or
 * -errno with @err.
 */
static int vnf_domain_check(struct daemon *d, struct td_state *st, const struct td_vnf *v,
			    char *err, size_t errlen)
{
	char why[400];
	pid_t qpid;

	for (unsigned int i = 0; i < st->nvms; i++)
		if (!strcmp(st->vms[i].domain, v->domain)) {
			snprintf(err, errlen, "vnf %s: --domain %s is the libvirt domain of vm %s: a "
				 "VNF's guest cannot be one of the VMs it inspects", v->name, v->domain,
				 st->vms[i].name);
			return -EINVAL;
		}
	if (td_grant_check_shm(d->cfg->region_dir, "/dev/shm", why, sizeof(why))) {
		snprintf(err, errlen, "vnf %s: %s", v->name, why);
		return -EXDEV;
	}
	if (!d->lv) {
		snprintf(err, errlen, "vnf %s: no libvirt connection", v->name);
		return -ENOTCONN;
	}
	if (td_libvirt_qemu_pid(d->lv, v->domain, &qpid, why, sizeof(why))) {
		snprintf(err, errlen, "vnf %s: --domain: %s", v->name, why);
		return -ESRCH;
	}
	return 0;
}

/* Plan @topo against the state and realize it.  The reply. */
static json_t *change(struct daemon *d, json_t *topo, const char *what, bool say_plan)
{
	struct td_state *next = malloc(sizeof(*next));
	struct td_plan *plan = malloc(sizeof(*plan));
	char err[512];
	json_t *reply;

	if (!next || !plan) {
		reply = ctl_reply_fail("out of memory");
		goto out;
	}
	if (td_apply_plan(&d->st, topo, ncpus(), rules_changed, d, next, plan, err, sizeof(err))) {
		reply = ctl_reply_fail("%s", err);
		goto out;
	}
	/* VNFs that come with a domain or move to one: checked before anything happens */
	for (unsigned int i = 0; i < plan->n; i++) {
		struct td_vnf *v = td_state_find_vnf(next, plan->c[i].name);
		struct td_vnf *was = td_state_find_vnf(&d->st, plan->c[i].name);

		if (plan->c[i].obj == TD_OBJ_VNF && plan->c[i].op != TD_OP_DELETE && v &&
		    v->domain[0] && (!was || strcmp(was->domain, v->domain)) &&
		    vnf_domain_check(d, next, v, err, sizeof(err))) {
			reply = ctl_reply_fail("%s", err);
			goto out;
		}
	}
	if (plan->n && realize(d, next, plan, err, sizeof(err))) {
		reply = ctl_reply_fail("%s: %s", what, err);
		goto out;
	}
	for (unsigned int i = 0; i < plan->n; i++)
		td_log("%s: %s %s %s", what, plan->c[i].op == TD_OP_CREATE ? "created" :
		       plan->c[i].op == TD_OP_UPDATE ? "updated" : "deleted",
		       plan->c[i].obj == TD_OBJ_VM ? "vm" : plan->c[i].obj == TD_OBJ_VNF ? "vnf" : "chain",
		       plan->c[i].name);
	reply = say_plan ? ctl_reply_ok(json_pack("{s:o, s:b}", "changes", td_plan_json(plan),
						  "changed", plan->n > 0))
			 : NULL;
out:
	free(next);
	free(plan);
	json_decref(topo);
	return reply;
}

/* Realize @next as a deletion (no plan needed).  The reply or NULL. */
static json_t *remove_to(struct daemon *d, struct td_state *next, const char *what)
{
	char err[512];

	if (td_state_check(next, err, sizeof(err)) || realize(d, next, NULL, err, sizeof(err)))
		return ctl_reply_fail("%s: %s", what, err);
	return NULL;
}

/* A VNF instance in a libvirt domain: its grants, asked live. */
static void inst_json_domain(struct daemon *d, const struct td_inst *in, struct td_vm *vm,
			     json_t *o)
{
	struct td_grant g[3];
	json_t *a = json_array();
	char err[400] = "", state[400];
	int n = td_grant_set(d->cfg, vm, in->vnf, in->domain, g);
	int sup = d->lv ? td_libvirt_revoke_supported(d->lv, in->domain, err, sizeof(err))
			: -ENOTCONN;

	json_object_set_new(o, "domain", json_string(in->domain));
	for (int i = 0; i < n; i++) {
		td_grant_state(d->lv, in->domain, g[i].name, state, sizeof(state));
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "name", g[i].name, "file",
						   g[i].path, "state", state));
	}
	json_object_set_new(o, "grants", a);
	json_object_set_new(o, "revocable", json_boolean(sup == 1));
	if (sup == 1)
		snprintf(state, sizeof(state), "revocable: removing the chain revokes the "
			 "guest's access at once");
	else if (sup == 0)
		snprintf(state, sizeof(state), "NOT revocable: the QEMU of libvirt domain %s "
			 "cannot revoke (not a qemu-patches/ build); removing the chain asks the "
			 "guest to unplug the regions and it keeps access until it does",
			 in->domain);
	else
		snprintf(state, sizeof(state), "unknown: %s", err[0] ? err : strerror(-sup));
	json_object_set_new(o, "revoke", json_string(state));
}

static json_t *inst_json(struct daemon *d, const struct td_inst *in)
{
	struct td_vm *vm = td_state_find_vm(&d->st, in->vm);
	char region[PATH_MAX + 64] = "";
	json_t *o;

	if (vm)
		td_inst_region(vm, in->vnf, region, sizeof(region));
	o = json_pack("{s:s, s:s, s:i, s:b, s:s}", "vnf", in->vnf, "vm", in->vm, "pid",
		      (int)in->pid, "running", vm && inst_alive(vm, in), "region", region);
	if (o && vm && in->domain[0])
		inst_json_domain(d, in, vm, o);
	return o;
}

static json_t *vnf_json_full(struct daemon *d, const struct td_vnf *v)
{
	json_t *o = td_vnf_json(v), *insts = json_array(), *chains = json_array();

	json_object_set_new(o, "f", json_integer((json_int_t)td_vnf_f(v)));
	for (unsigned int i = 0; i < d->st.ninsts; i++)
		if (!strcmp(d->st.insts[i].vnf, v->name))
			json_array_append_new(insts, inst_json(d, &d->st.insts[i]));
	for (unsigned int i = 0; i < d->st.nchains; i++)
		if (td_chain_uses(&d->st.chains[i], v->name))
			json_array_append_new(chains, json_string(d->st.chains[i].name));
	json_object_set_new(o, "instances", insts);
	json_object_set_new(o, "chains", chains);
	if (v->domain[0]) {
		json_t *rel = json_array();

		/* oldest first */
		for (unsigned int k = 0; k < TD_GRANT_NOTES; k++) {
			struct td_grant_note *n = &d->glog.n[(d->glog.next + k) % TD_GRANT_NOTES];

			if (!n->vnf[0] || strcmp(n->vnf, v->name))
				continue;
			json_t *e = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s}", "vm", n->vm, "domain",
				n->domain, "grant", n->grant, "time", (json_int_t)n->when, "outcome",
				n->rc == 0 ? "revoked" : n->rc == TD_LIBVIRT_UNGRANT_PENDING ? "pending" :
				"error", "text", n->text);

			/* a pending one: has the guest let the device go since? */
			if (e && n->rc == TD_LIBVIRT_UNGRANT_PENDING) {
				char now[400];

				td_grant_state(d->lv, n->domain, n->grant, now, sizeof(now));
				json_object_set_new(e, "now", json_string(now));
			}
			json_array_append_new(rel, e);
		}
		json_object_set_new(o, "released", rel);
	}
	return o;
}

static json_t *cmd_vnf_add(struct daemon *d, json_t *args)
{
	json_t *name = json_object_get(args, "name");
	struct td_vnf v;
	char err[512];
	json_t *reply;

	if (td_vnf_from_json(args, false, &v, err, sizeof(err)))
		return ctl_reply_fail("%s", err);
	if (json_is_string(name) && td_state_find_vnf(&d->st, json_string_value(name)))
		return ctl_reply_fail("vnf '%s' already exists", json_string_value(name));
	if (v.rules[0] && access(v.rules, R_OK))
		return ctl_reply_fail("vnf %s: --rules %s: %s", v.name, v.rules, strerror(errno));
	/* its domain is checked by change() */
	reply = change(d, json_pack("{s:[O]}", "vnfs", args), "vnf add", false);
	if (reply)
		return reply;
	return ctl_reply_ok(vnf_json_full(d, td_state_find_vnf(&d->st, v.name)));
}

static struct td_vnf *need_vnf(struct daemon *d, json_t *args, json_t **fail)
{
	int bad = 0;
	const char *name = td_arg_str(args, "name", &bad);
	struct td_vnf *v;

	if (bad || !name) {
		*fail = ctl_reply_fail("vnf: NAME is required");
		return NULL;
	}
	v = td_state_find_vnf(&d->st, name);
	if (!v)
		*fail = ctl_reply_fail("no vnf named '%.40s'", name);
	return v;
}

static json_t *cmd_vnf_del(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *reply;
	struct td_vnf *v = need_vnf(d, args, &fail);
	struct td_state *next;
	char name[TD_OBJ_NAME_MAX];

	if (!v)
		return fail;
	for (unsigned int i = 0; i < d->st.nchains; i++)
		if (td_chain_uses(&d->st.chains[i], v->name))
			return ctl_reply_fail("vnf %s is used by chain %s", v->name, d->st.chains[i].name);
	next = malloc(sizeof(*next));
	if (!next)
		return ctl_reply_fail("out of memory");
	strcpy(name, v->name);
	*next = d->st;
	{
		struct td_vnf *gone = td_state_find_vnf(next, name);

		*gone = next->vnfs[--next->nvnfs];
	}
	for (unsigned int i = next->ninsts; i-- > 0;)
		if (!strcmp(next->insts[i].vnf, name))
			td_state_drop_inst(next, &next->insts[i]);
	reply = remove_to(d, next, "vnf del");
	free(next);
	return reply ? reply : ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

static json_t *cmd_vnf_calibrate(struct daemon *d, json_t *args)
{
	json_t *fail = NULL;
	struct td_vnf *v = need_vnf(d, args, &fail);
	char err[512], path[PATH_MAX + 64];
	uint64_t pps, old;

	if (!v)
		return fail;
	if (v->rules[0]) {
		td_rules_copy_path(d->cfg, v->name, path, sizeof(path));
		if (access(path, R_OK))
			return ctl_reply_fail("vnf %s: its rules copy %s: %s", v->name, path, strerror(errno));
	}
	if (td_vnf_calibrate(d->cfg, v, &pps, err, sizeof(err)))
		return ctl_reply_fail("vnf %s: %s", v->name, err);
	old = v->calibrated;
	v->calibrated = pps;
	if (td_save(d)) {
		v->calibrated = old;
		return ctl_reply_fail("vnf %s: cannot save the state", v->name);
	}
	td_log("vnf %s calibrated: %llu packets/s", v->name, (unsigned long long)pps);
	return ctl_reply_ok(json_pack("{s:s, s:I, s:I}", "name", v->name, "calibrated",
				      (json_int_t)pps, "f", (json_int_t)td_vnf_f(v)));
}

/* --- tochain-sched registration (host-sched/README.md, sched.register) --- */

static struct td_schedreg *sched_slot(struct daemon *d, const char *chain, bool make)
{
	struct td_schedreg *free_slot = NULL;

	for (unsigned int i = 0; i < TD_MAX_CHAINS; i++) {
		if (!strcmp(d->sched[i].chain, chain))
			return &d->sched[i];
		if (!d->sched[i].chain[0] && !free_slot)
			free_slot = &d->sched[i];
	}
	if (make && free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		snprintf(free_slot->chain, sizeof(free_slot->chain), "%s", chain);
	}
	return make ? free_slot : NULL;
}

static const char *sched_note(struct daemon *d, const struct td_chain *c)
{
	struct td_schedreg *r = sched_slot(d, c->name, false);

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
static void sched_register(struct daemon *d, const struct td_chain *c)
{
	struct td_schedreg *r = sched_slot(d, c->name, true);
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
					TOE_CALL_MS, &why);
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

static json_t *chain_json_full(struct daemon *d, const struct td_chain *c, bool live)
{
	json_t *o = td_chain_json(c), *insts = json_array();
	struct td_vm *vm = td_state_find_vm(&d->st, c->vm);

	for (unsigned int h = 0; h < c->nhops; h++)
		for (unsigned int k = 0; k < c->hop_len[h]; k++) {
			struct td_inst *in = td_state_find_inst(&d->st, c->hop[h][k], c->vm);

			if (in)
				json_array_append_new(insts, inst_json(d, in));
		}
	json_object_set_new(o, "instances", insts);
	if (live && vm) {
		char err[512];
		json_t *st = toe_call(vm, "stats", NULL, err, sizeof(err));
		json_t *tc = st ? find_named(json_object_get(st, "chains"), "name", c->name) : NULL;

		if (tc)
			json_object_set(o, "toe", tc);
		else
			json_object_set_new(o, "toe_error", json_string(st ? "the TOE does not run this chain" : err));
		json_decref(st);
	}
	json_object_set_new(o, "sched", json_string(sched_note(d, c)));
	return o;
}

static json_t *cmd_chain_add(struct daemon *d, json_t *args)
{
	json_t *name = json_object_get(args, "name"), *reply;
	struct td_chain c;
	char err[512];

	if (td_chain_from_json(args, &c, err, sizeof(err)))
		return ctl_reply_fail("%s", err);
	if (json_is_string(name) && td_state_find_chain(&d->st, json_string_value(name)))
		return ctl_reply_fail("chain '%s' already exists", json_string_value(name));
	reply = change(d, json_pack("{s:[O]}", "chains", args), "chain add", false);
	if (reply)
		return reply;
	return ctl_reply_ok(chain_json_full(d, td_state_find_chain(&d->st, c.name), false));
}

static struct td_chain *need_chain(struct daemon *d, json_t *args, json_t **fail)
{
	int bad = 0;
	const char *name = td_arg_str(args, "name", &bad);
	struct td_chain *c;

	if (bad || !name) {
		*fail = ctl_reply_fail("chain: NAME is required");
		return NULL;
	}
	c = td_state_find_chain(&d->st, name);
	if (!c)
		*fail = ctl_reply_fail("no chain named '%.40s'", name);
	return c;
}

static json_t *cmd_chain_del(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *reply;
	struct td_chain *c = need_chain(d, args, &fail);
	struct td_state *next;
	char name[TD_OBJ_NAME_MAX];

	if (!c)
		return fail;
	next = malloc(sizeof(*next));
	if (!next)
		return ctl_reply_fail("out of memory");
	strcpy(name, c->name);
	*next = d->st;
	{
		/* two statements: the order of a = b's sides is unspecified */
		struct td_chain *gone = td_state_find_chain(next, name);

		*gone = next->chains[--next->nchains];
	}
	reply = remove_to(d, next, "chain del");
	free(next);
	return reply ? reply : ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

static json_t *cmd_chain_set_sla(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *sla = json_object_get(args, "sla"), *o, *reply;
	struct td_chain *c = need_chain(d, args, &fail);
	char name[TD_OBJ_NAME_MAX];

	if (!c)
		return fail;
	if (!json_is_integer(sla) || json_integer_value(sla) < 0 ||
	    json_integer_value(sla) > (json_int_t)TD_MAX_RATE)
		return ctl_reply_fail("chain %s: the SLA must be 0 to %llu packets/s", c->name,
				      (unsigned long long)TD_MAX_RATE);
	strcpy(name, c->name);
	o = td_chain_json(c);
	json_object_set(o, "sla", sla);
	reply = change(d, json_pack("{s:[o]}", "chains", o), "chain set-sla", false);
	if (reply)
		return reply;
	return ctl_reply_ok(chain_json_full(d, td_state_find_chain(&d->st, name), false));
}

/* stats: each VM's TOE asked once. */
static json_t *cmd_stats(struct daemon *d, json_t *args)
{
	int bad = 0;
	const char *only = td_arg_str(args, "name", &bad);
	json_t *chains = json_array(), *denials = json_array();

	if (bad)
		return ctl_reply_fail("stats: CHAIN must be a string");
	if (only && !td_state_find_chain(&d->st, only)) {
		json_decref(chains);
		json_decref(denials);
		return ctl_reply_fail("no chain named '%.40s'", only);
	}
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		struct td_vm *vm = &d->st.vms[i];
		json_t *st = NULL;
		char err[512] = "";
		size_t k;
		json_t *x;

		for (unsigned int c = 0; c < d->st.nchains; c++) {
			struct td_chain *ch = &d->st.chains[c];
			json_t *o, *tc;

			if (strcmp(ch->vm, vm->name) || (only && strcmp(only, ch->name)))
				continue;
			if (!st && !err[0])
				st = toe_call(vm, "stats", NULL, err, sizeof(err));
			tc = st ? find_named(json_object_get(st, "chains"), "name", ch->name) : NULL;
			o = tc ? json_deep_copy(tc) : json_object();
			json_object_set_new(o, "name", json_string(ch->name));
			json_object_set_new(o, "vm", json_string(vm->name));
			json_object_set_new(o, "dir", json_string(td_dir_name(ch->dir)));
			json_object_set_new(o, "sla", json_integer((json_int_t)ch->sla));
			{
				uint64_t ticks;
				uint32_t nv;

				/* what admission reserves: CPUs' worth over its VNF vCPUs */
				if (!td_chain_quota(&d->st, ncpus(), ch->name, &ticks, &nv)) {
					json_object_set_new(o, "cpu_quota", json_real((double)ticks / TD_ADMIT_G));
					json_object_set_new(o, "vnf_vcpus", json_integer(nv));
				}
			}
			if (!tc)
				json_object_set_new(o, "error", json_string(st ? "the TOE does not run this chain" : err));
			json_array_append_new(chains, o);
		}
		json_array_foreach(json_object_get(st, "denials"), k, x) {
			json_t *cn = json_object_get(x, "chain");

			if (only && !(json_is_string(cn) && !strcmp(json_string_value(cn), only)))
				continue;
			x = json_deep_copy(x);
			json_object_set_new(x, "vm", json_string(vm->name));
			json_array_append_new(denials, x);
		}
		json_decref(st);
	}
	return ctl_reply_ok(json_pack("{s:o, s:o}", "chains", chains, "denials", denials));
}

static json_t *cmd_ls(struct daemon *d, bool vnfs)
{
	json_t *a = json_array();

	if (vnfs)
		for (unsigned int i = 0; i < d->st.nvnfs; i++)
			json_array_append_new(a, vnf_json_full(d, &d->st.vnfs[i]));
	else
		for (unsigned int i = 0; i < d->st.nchains; i++)
			json_array_append_new(a, chain_json_full(d, &d->st.chains[i], false));
	return ctl_reply_ok(json_pack("{s:o}", vnfs ? "vnfs" : "chains", a));
}

json_t *td_chains_dispatch(struct daemon *d, const char *cmd, json_t *args)
{
	json_t *fail = NULL;

	if (!strcmp(cmd, "vnf.add"))
		return cmd_vnf_add(d, args);
	if (!strcmp(cmd, "vnf.del"))
		return cmd_vnf_del(d, args);
	if (!strcmp(cmd, "vnf.ls"))
		return cmd_ls(d, true);
	if (!strcmp(cmd, "vnf.show")) {
		struct td_vnf *v = need_vnf(d, args, &fail);

		return v ? ctl_reply_ok(vnf_json_full(d, v)) : fail;
	}
	if (!strcmp(cmd, "vnf.calibrate"))
		return cmd_vnf_calibrate(d, args);
	if (!strcmp(cmd, "chain.add"))
		return cmd_chain_add(d, args);
	if (!strcmp(cmd, "chain.del"))
		return cmd_chain_del(d, args);
	if (!strcmp(cmd, "chain.ls"))
		return cmd_ls(d, false);
	if (!strcmp(cmd, "chain.show")) {
		struct td_chain *c = need_chain(d, args, &fail);

		return c ? ctl_reply_ok(chain_json_full(d, c, true)) : fail;
	}
	if (!strcmp(cmd, "chain.set-sla"))
		return cmd_chain_set_sla(d, args);
	if (!strcmp(cmd, "stats"))
		return cmd_stats(d, args);
	if (!strcmp(cmd, "apply"))
		return change(d, json_incref(args), "apply", true);
	return NULL;
}

const struct td_vnf *td_chains_domain_vnf(struct daemon *d, const char *domain)
{
	for (unsigned int i = 0; i < d->st.nvnfs; i++)
		if (!strcmp(d->st.vnfs[i].domain, domain))
			return &d->st.vnfs[i];
	return NULL;
}

const struct td_chain *td_chains_of_vm(struct daemon *d, const char *vm)
{
	for (unsigned int i = 0; i < d->st.nchains; i++)
		if (!strcmp(d->st.chains[i].vm, vm))
			return &d->st.chains[i];
	return NULL;
}

/* --- repair --- */

static bool vm_has_work(struct daemon *d, const char *vm)
{
	if (td_chains_of_vm(d, vm))
		return true;
	for (unsigned int i = 0; i < d->st.ninsts; i++)
		if (!strcmp(d->st.insts[i].vm, vm))
			return true;
	return false;
}

static void repair(struct daemon *d, unsigned int i)
{
	struct td_vm *vm = &d->st.vms[i];
	char err[512];

	if (!vm_has_work(d, vm->name))
		return;
	if (converge(d, &d->st, vm, NULL, err, sizeof(err))) {
		td_log("%s (retrying in %d ms)", err, REPAIR_BACKOFF_MS);
		d->retry_ms[i] = (long long)tu_now_ms() + REPAIR_BACKOFF_MS;
	}
	td_save(d);
}

void td_chains_reconcile(struct daemon *d)
{
	for (unsigned int i = 0; i < d->st.nvms; i++)
		repair(d, i);
}

void td_chains_toe_restarted(struct daemon *d, struct td_vm *vm)
{
	/* The old instances served regions the new TOE does not have. */
	for (unsigned int k = 0; k < d->st.ninsts; k++)
		if (!strcmp(d->st.insts[k].vm, vm->name) && !d->st.insts[k].domain[0])
			stop_pid(d, vm, d->st.insts[k].vnf, d->st.insts[k].pid);
	repair(d, (unsigned int)(vm - d->st.vms));
}

/*
 * A VM run by a libvirt domain: tochain-sched finds the domain's vCPU
 * threads itself (sched.register by "domain", host-sched/README.md) and
 * follows them across domain restarts, so tochaind registers it once.
 * Not reachable is not an error: retried at the next tick.
 */
static struct td_schedvm *schedvm_slot(struct daemon *d, const char *vm, bool make)
{
	struct td_schedvm *free_slot = NULL;

	for (unsigned int i = 0; i < TD_MAX_VMS; i++) {
		if (!strcmp(d->schedvm[i].vm, vm))
			return &d->schedvm[i];
		if (!d->schedvm[i].vm[0] && !free_slot)
			free_slot = &d->schedvm[i];
	}
	if (make && free_slot) {
		memset(free_slot, 0, sizeof(*free_slot));
		snprintf(free_slot->vm, sizeof(free_slot->vm), "%s", vm);
	}
	return make ? free_slot : NULL;
}

static void sched_register_vm(struct daemon *d, const struct td_vm *vm)
{
	struct td_schedvm *r = schedvm_slot(d, vm->name, true);
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
			       TOE_CALL_MS, &why);
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

const char *td_chains_sched_vm_note(struct daemon *d, const char *vm)
{
	struct td_schedvm *r = schedvm_slot(d, vm, false);

	return r && r->note[0] ? r->note : NULL;
}

/*
 * The VNFs of @vm that run in a libvirt domain whose QEMU lives but which
 * the TOE failed (no progress for 5 s: say the guest's agent was not up
 * yet when the grants came back after a domain restart, or its VNF hung)
 * are attached again: the TOE reopens their channels for the guest.  A
 * host instance is restarted when its process dies; the guest's VNF
 * process cannot be seen from here, the TOE's verdict stands for it.
 */
static void guest_check(struct daemon *d, struct td_vm *vm)
{
	json_t *ls = NULL;
	char err[512];

	for (unsigned int k = 0; k < d->st.ninsts; k++) {
		struct td_inst *in = &d->st.insts[k];
		json_t *e, *r;

		if (strcmp(in->vm, vm->name) || !in->domain[0] ||
		    !td_libvirt_qemu_alive(in->pid, in->domain))
			continue;
		if (!ls && !(ls = toe_call(vm, "vnf.ls", NULL, err, sizeof(err))))
			return;
		e = find_named(json_object_get(ls, "vnfs"), "name", in->vnf);
		if (!e || !json_is_true(json_object_get(e, "failed")))
			continue;
		r = toe_call(vm, "vnf.attach", json_pack("{s:s, s:i}", "name", in->vnf, "pid",
							 (int)in->pid), err, sizeof(err));
		if (r)
			td_log("vm %s: vnf %s (libvirt domain %s) failed in the TOE: attached "
			       "again, its channels reopened for the guest", vm->name, in->vnf,
			       in->domain);
		else
			td_log("%s", err);
		json_decref(r);
	}
	json_decref(ls);
}

void td_chains_tick(struct daemon *d)
{
	long long now = (long long)tu_now_ms();

	for (unsigned int i = 0; i < TD_MAX_VMS; i++)
		if (d->schedvm[i].vm[0] && !td_state_find_vm(&d->st, d->schedvm[i].vm))
			d->schedvm[i].vm[0] = '\0';
	for (unsigned int i = 0; i < d->st.nvms; i++)
		if (d->st.vms[i].domain[0])
			sched_register_vm(d, &d->st.vms[i]);

	for (unsigned int i = 0; i < TD_MAX_CHAINS; i++)
		if (d->sched[i].chain[0] && !td_state_find_chain(&d->st, d->sched[i].chain))
			d->sched[i].chain[0] = '\0';
	for (unsigned int i = 0; i < d->st.nchains; i++)
		sched_register(d, &d->st.chains[i]);

	for (unsigned int i = 0; i < d->st.nvms; i++) {
		struct td_vm *vm = &d->st.vms[i];
		bool dead = false;

		if (d->retry_ms[i] > now || !td_vm_toe_alive(vm))
			continue;
		for (unsigned int k = 0; k < d->st.ninsts && !dead; k++) {
			struct td_inst *in = &d->st.insts[k];

			if (strcmp(in->vm, vm->name))
				continue;
			dead = !inst_alive(vm, in);
			if (dead && in->domain[0])
				td_log("vm %s: vnf %s: the QEMU of libvirt domain %s (pid %d) is gone: "
				       "grants and attach to be redone", vm->name, in->vnf, in->domain,
				       (int)in->pid);
		}
		if (dead || d->retry_ms[i]) {
			d->retry_ms[i] = 0;
			repair(d, i);
		} else if (now >= d->guest_retry_ms[i]) {
			d->guest_retry_ms[i] = now + GUEST_CHECK_MS;
			guest_check(d, vm);
		}
	}
}
