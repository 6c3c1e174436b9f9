// SPDX-License-Identifier: MIT
/* VNF instances of a VM's chains; see td_vnfinst.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "td_grant.h"
#include "td_inst.h"
#include "td_libvirt.h"
#include "td_priv.h"
#include "td_toe.h"
#include "td_vnfinst.h"
#include "tochain/util.h"

static const char *dispatch_of(const struct td_vnf *v)
{
	return v->kind == TD_KIND_IDS || v->kind == TD_KIND_WAF ? "flow" : "rr";
}

void td_vnfinst_stop(struct daemon *d, const struct td_vm *vm, const char *vnf, pid_t pid)
{
	char region[PATH_MAX + 64];

	td_inst_region(vm, vnf, region, sizeof(region));
	td_inst_stop(d->cfg, pid, region, vnf, vm->name);
}

/* Is instance @in of @vm alive: its tochain-vnf, or its domain's QEMU? */
bool td_vnfinst_alive(const struct td_vm *vm, const struct td_inst *in)
{
	char region[PATH_MAX + 64];

	if (in->domain[0])
		return td_libvirt_qemu_alive(in->pid, in->domain);
	td_inst_region(vm, in->vnf, region, sizeof(region));
	return td_inst_alive(in->pid, region);
}

/*
 * Host instance @in of @vm is dead: must its restart wait (back-off)?  The
 * first time it is seen dead, its last log line is kept as the reason.
 */
bool td_vnfinst_waits(struct daemon *d, const struct td_vm *vm, struct td_inst *in)
{
	long long now = (long long)tu_now_ms();

	if (in->domain[0])
		return false;
	if (!in->bo.down) {
		td_backoff_died(&in->bo, now);
		td_inst_last_error(d->cfg, in->vnf, vm->name, in->last_error,
				   sizeof(in->last_error));
		td_log("vm %s: vnf %s (pid %d) died%s%s; restart %u in %lld ms", vm->name, in->vnf,
		       (int)in->pid, in->last_error[0] ? ": " : "", in->last_error,
		       in->bo.restarts + 1, in->bo.retry_ms - now);
	}
	return td_backoff_waits(&in->bo, now);
}

/* A new instance record of @vnf for @vm in @st, or NULL with @err when it is full. */
static struct td_inst *inst_new(struct td_state *st, const char *vnf, const char *vm, char *err,
				size_t errlen)
{
	struct td_inst *in;

	if (st->ninsts >= TD_MAX_INSTS) {
		snprintf(err, errlen, "too many VNF instances (at most %d)", TD_MAX_INSTS);
		return NULL;
	}
	in = &st->insts[st->ninsts++];
	memset(in, 0, sizeof(*in));
	strcpy(in->vnf, vnf);
	strcpy(in->vm, vm);
	return in;
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
void td_vnfinst_take_grants(struct daemon *d, struct td_state *st, struct td_vm *vm, const char *vnf,
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
		r = td_toe_call(vm, "vnf.attach", json_pack("{s:s, s:i}", "name", v->name, "pid",
							 (int)qpid), err, errlen);
		if (!r) {
			if (fresh)
				td_vnfinst_take_grants(d, st, vm, v->name, v->domain);
			return -EIO;
		}
		json_decref(r);
	}
	if (!in && !(in = inst_new(st, v->name, vm->name, err, errlen))) {
		if (fresh)
			td_vnfinst_take_grants(d, st, vm, v->name, v->domain);
		return -ENOSPC;
	}
	if (in->pid != qpid || strcmp(in->domain, v->domain))
		td_log("vm %s: vnf %s runs in libvirt domain %s (QEMU pid %d), regions granted",
		       vm->name, v->name, v->domain, (int)qpid);
	in->pid = qpid;
	snprintf(in->domain, sizeof(in->domain), "%s", v->domain);
	return 0;
}

/* No fw VNF serves @vm any more (in @st): take its nftables table away. */
void td_vnfinst_fw_drop(struct daemon *d, struct td_state *st, struct td_vm *vm)
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
	/* a restart counts even when the attach fails: it died meanwhile, say */
	if (in) {
		in->pid = pid;
		td_backoff_started(&in->bo, (long long)tu_now_ms());
	}
	r = td_toe_call(vm, "vnf.attach", json_pack("{s:s, s:i}", "name", v->name, "pid", (int)pid),
		     err, errlen);
	if (!r) {
		td_inst_stop(d->cfg, pid, region, v->name, vm->name);
		return -EIO;
	}
	json_decref(r);
	if (!in && !(in = inst_new(st, v->name, vm->name, err, errlen))) {
		td_inst_stop(d->cfg, pid, region, v->name, vm->name);
		return -ENOSPC;
	}
	if (in->pid != pid) {	/* a new record */
		in->pid = pid;
		td_backoff_started(&in->bo, (long long)tu_now_ms());
	}
	td_log("vm %s: vnf %s started, pid %d", vm->name, v->name, (int)pid);
	return 0;
}

/* VNF @name is needed by @vm's chains: make the TOE have it, served. */
int td_vnfinst_ensure(struct daemon *d, struct td_state *st, struct td_vm *vm, const char *name,
		      json_t *tvnfs, char *err, size_t errlen)
{
	struct td_vnf *v = td_state_find_vnf(st, name);
	struct td_inst *in = td_state_find_inst(st, name, vm->name);
	char region[PATH_MAX + 64];
	json_t *e = td_toe_find(tvnfs, "name", name), *r;
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
		/* dying again and again (say its rules cannot load): not at once */
		if (in && !td_inst_alive(in->pid, region) && td_vnfinst_waits(d, vm, in))
			return 0;
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
	r = td_toe_call(vm, "vnf.add", json_pack("{s:s, s:i, s:s, s:s}", "name", name, "threads",
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

		json_decref(td_toe_call(vm, "vnf.del", json_pack("{s:s}", "name", name), ignore,
				     sizeof(ignore)));
		return -EIO;
	}
	return 0;
}

/* SIGHUP the instances of @vnf: they reload their rules copy. */
void td_vnfinst_reload_rules(struct daemon *d, const char *vnf)
{
	struct td_vnf *v = td_state_find_vnf(&d->st, vnf);
	char err[512];

	for (unsigned int i = 0; i < d->st.ninsts; i++) {
		struct td_inst *in = &d->st.insts[i];
		struct td_vm *vm = td_state_find_vm(&d->st, in->vm);
		char region[PATH_MAX + 64];

		if (strcmp(in->vnf, vnf) || !vm)
			continue;
		td_backoff_hurry(&in->bo);	/* a dead one tries the new rules at once */
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

void td_vnfinst_health_json(const struct td_inst *in, json_t *o)
{
	long long now = (long long)tu_now_ms();

	json_object_set_new(o, "restarts", json_integer(in->bo.restarts));
	if (in->last_error[0])
		json_object_set_new(o, "last_error", json_string(in->last_error));
	if (in->bo.down)
		json_object_set_new(o, "next_retry_s", json_real(in->bo.retry_ms > now ?
					(double)(in->bo.retry_ms - now) / 1000 : 0));
}

json_t *td_vnfinst_json(struct daemon *d, const struct td_inst *in)
{
	struct td_vm *vm = td_state_find_vm(&d->st, in->vm);
	char region[PATH_MAX + 64] = "";
	json_t *o;

	if (vm)
		td_inst_region(vm, in->vnf, region, sizeof(region));
	o = json_pack("{s:s, s:s, s:i, s:b, s:s}", "vnf", in->vnf, "vm", in->vm, "pid",
		      (int)in->pid, "running", vm && td_vnfinst_alive(vm, in), "region", region);
	if (o && !in->domain[0])
		td_vnfinst_health_json(in, o);
	if (o && vm && in->domain[0])
		inst_json_domain(d, in, vm, o);
	return o;
}
