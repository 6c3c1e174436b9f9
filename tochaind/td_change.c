// SPDX-License-Identifier: MIT
/* Changes of tochaind's state, and the apply command; see td_change.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "td_apply.h"
#include "td_change.h"
#include "td_converge.h"
#include "td_grant.h"
#include "td_inst.h"
#include "td_libvirt.h"
#include "td_priv.h"
#include "td_vnfinst.h"

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

/* Rules (and variables) copies written by realize(), to undo. */
struct rules_undo {
	char path[PATH_MAX + 64];
	char *old;		/* previous content, NULL: there was none */
	size_t oldlen;
};

static void rules_restore(struct rules_undo *u, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (u[i].old)
			td_write_file(u[i].path, u[i].old, u[i].oldlen);
		else
			unlink(u[i].path);
	}
}

/* Copy @from to @to (NULL: remove @to), remembering what @to held in @u.  0 or -errno. */
static int copy_undoably(const char *from, const char *to, struct rules_undo *u)
{
	size_t len = 0;
	char *text;
	int rc;

	snprintf(u->path, sizeof(u->path), "%s", to);
	u->old = td_read_file(to, &u->oldlen);
	if (!from)
		return unlink(to) && errno != ENOENT ? -errno : 0;
	text = td_read_file(from, &len);
	if (!text)
		return -errno;
	rc = td_write_file(to, text, len);
	free(text);
	return rc;
}

/*
 * Go from d->st to @next (validated).  @plan, when given, names the VNFs
 * whose rules copies change.  0, or -errno with @err and d->st unchanged.
 */
static int realize(struct daemon *d, struct td_state *next, const struct td_plan *plan,
		   char *err, size_t errlen)
{
	struct td_state *cur = &d->st;
	struct rules_undo *undo = calloc(2 * TD_MAX_VNFS, sizeof(*undo));
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

		if (c->obj != TD_OBJ_VNF || c->op == TD_OP_DELETE || !v || !v->rules[0])
			continue;
		td_rules_copy_path(d->cfg, v->name, path, sizeof(path));
		rc = copy_undoably(v->rules, path, &undo[nundo++]);
		if (rc) {
			snprintf(err, errlen, "vnf %s: cannot copy --rules %.200s to %.200s: %s",
				 v->name, v->rules, path, strerror(-rc));
			rc = -EIO;
			goto undo;
		}
		/* no --vars (any more): the instances run without a copy */
		td_vars_copy_path(d->cfg, v->name, path, sizeof(path));
		rc = copy_undoably(v->vars[0] ? v->vars : NULL, path, &undo[nundo++]);
		if (rc) {
			snprintf(err, errlen, "vnf %s: cannot copy --vars %.200s to %.200s: %s",
				 v->name, v->vars, path, strerror(-rc));
			rc = -EIO;
			goto undo;
		}
	}
	/* 3. the TOEs: VMs of the next state, then VMs that go */
	for (unsigned int i = 0; i < next->nvms; i++) {
		struct td_vm *vm = &next->vms[i];

		if (!created[i] && !vm_dirty(cur, next, vm->name))
			continue;
		touched[i] = true;
		rc = td_converge(d, next, vm, cur, err, errlen);
		if (rc)
			goto undo;
	}
	for (unsigned int i = 0; i < cur->nvms; i++) {
		struct td_vm *vm = &cur->vms[i];

		if (vm_in(next, vm->name) || !vm_dirty(cur, next, vm->name))
			continue;
		rc = td_converge(d, next, vm, cur, err, errlen);
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
				td_vars_copy_path(d->cfg, old->vnfs[i].name, path, sizeof(path));
				unlink(path);
			}
		free(old);
	}
	for (unsigned int i = 0; plan && i < plan->n; i++)
		if (plan->c[i].obj == TD_OBJ_VNF && plan->c[i].op == TD_OP_UPDATE && plan->c[i].rules)
			td_vnfinst_reload_rules(d, plan->c[i].name);
	rc = 0;
	goto out;
undo:
	/* TOEs back to the old state, new VMs removed, rules copies restored */
	for (unsigned int i = 0; i < next->nvms; i++) {
		struct td_vm *vm = td_state_find_vm(cur, next->vms[i].name);

		if (created[i])
			td_vm_destroy(d->cfg, &next->vms[i]);
		else if (touched[i] && vm && td_converge(d, cur, vm, next, ignore, sizeof(ignore)))
			td_log("undo: %s", ignore);
	}
	for (unsigned int i = 0; i < cur->nvms; i++)
		if (!vm_in(next, cur->vms[i].name) && vm_dirty(cur, next, cur->vms[i].name) &&
		    td_converge(d, cur, &cur->vms[i], next, ignore, sizeof(ignore)))
			td_log("undo: %s", ignore);
	rules_restore(undo, nundo);
out:
	for (unsigned int i = 0; undo && i < nundo; i++)
		free(undo[i].old);
	free(undo);
	free(created);
	free(touched);
	return rc;
}

/* Do the contents of @user and the copy @copy differ? */
static bool file_differs(const char *user, const char *copy)
{
	size_t la = 0, lb = 0;
	char *a, *b;
	bool diff;

	a = td_read_file(user, &la);
	b = td_read_file(copy, &lb);
	diff = !a || !b || la != lb || memcmp(a, b, la);
	free(a);
	free(b);
	return diff;
}

static bool rules_changed(const struct td_vnf *v, void *arg)
{
	struct daemon *d = arg;
	char path[PATH_MAX + 64];

	td_rules_copy_path(d->cfg, v->name, path, sizeof(path));
	if (file_differs(v->rules, path))
		return true;
	td_vars_copy_path(d->cfg, v->name, path, sizeof(path));
	return v->vars[0] && file_differs(v->vars, path);
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
json_t *td_change_apply(struct daemon *d, json_t *topo, const char *what, bool say_plan)
{
	struct td_state *next = malloc(sizeof(*next));
	struct td_plan *plan = malloc(sizeof(*plan));
	char err[512];
	json_t *reply;

	if (!next || !plan) {
		reply = ctl_reply_fail("out of memory");
		goto out;
	}
	if (td_apply_plan(&d->st, topo, td_ncpus(), rules_changed, d, next, plan, err, sizeof(err))) {
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
	/* Rules files: checked by their engine before anything happens. */
	for (unsigned int i = 0; i < plan->n; i++) {
		struct td_vnf *v = td_state_find_vnf(next, plan->c[i].name);
		json_t *problems = NULL;

		if (plan->c[i].obj != TD_OBJ_VNF || plan->c[i].op == TD_OP_DELETE || !v ||
		    !v->rules[0])
			continue;
		if (td_rules_check(d->cfg, v, &problems, err, sizeof(err))) {
			reply = ctl_reply_fail("%s", err);
			if (problems)
				json_object_set_new(reply, "problems", problems);
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
json_t *td_change_remove(struct daemon *d, struct td_state *next, const char *what)
{
	char err[512];

	if (td_state_check(next, err, sizeof(err)) || realize(d, next, NULL, err, sizeof(err)))
		return ctl_reply_fail("%s: %s", what, err);
	return NULL;
}

json_t *td_change_cmd_apply(struct daemon *d, json_t *args)
{
	return td_change_apply(d, json_incref(args), "apply", true);
}
