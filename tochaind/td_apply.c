// SPDX-License-Identifier: MIT
/* Declarative apply and admission; see td_apply.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_admit.h"
#include "td_apply.h"
#include "td_vm.h"

bool td_vnf_runtime_differs(const struct td_vnf *a, const struct td_vnf *b)
{
	if (a->kind != b->kind || a->threads != b->threads || a->fail_open != b->fail_open ||
	    a->nargs != b->nargs || strcmp(a->domain, b->domain) ||
	    !a->vars[0] != !b->vars[0])	/* --vars COPY on the command line */
		return true;
	for (unsigned int i = 0; i < a->nargs; i++)
		if (strcmp(a->args[i], b->args[i]))
			return true;
	return false;
}

bool td_chain_hops_differ(const struct td_chain *a, const struct td_chain *b)
{
	if (a->nhops != b->nhops)
		return true;
	for (unsigned int h = 0; h < a->nhops; h++) {
		if (a->hop_len[h] != b->hop_len[h])
			return true;
		for (unsigned int k = 0; k < a->hop_len[h]; k++)
			if (strcmp(a->hop[h][k], b->hop[h][k]))
				return true;
	}
	return false;
}

/* Prefix @err with the entry's topology line, when it has one. */
static int at_line(json_t *o, char *err, size_t errlen)
{
	json_t *line = json_object_get(o, "line");
	char msg[512];

	if (json_is_integer(line)) {
		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "line %lld: %s", (long long)json_integer_value(line), msg);
	}
	return -EINVAL;
}

static void add_change(struct td_plan *p, enum td_op op, enum td_obj obj, const char *name,
		       bool rules)
{
	struct td_change *c = &p->c[p->n++];

	c->op = op;
	c->obj = obj;
	c->rules = rules;
	snprintf(c->name, sizeof(c->name), "%s", name);
}

static const char *used_by(const struct td_state *st, const char *vnf)
{
	for (unsigned int i = 0; i < st->nchains; i++)
		if (td_chain_uses(&st->chains[i], vnf))
			return st->chains[i].name;
	return NULL;
}

static int plan_vm(json_t *o, struct td_state *next, struct td_plan *plan, char *err,
		   size_t errlen)
{
	static const char *const keys[] = { "name", "ip", "region_size", "slot_size",
					    "guest_mode", "guest_group", "line" };
	const size_t nkeys = sizeof(keys) / sizeof(keys[0]);
	json_t *name = json_object_get(o, "name"), *ip = json_object_get(o, "ip");
	json_t *size = json_object_get(o, "region_size"), *slot = json_object_get(o, "slot_size");
	json_t *v;
	char msg[256];
	const char *why = NULL, *key;
	struct td_vm vm, *old;

	memset(&vm, 0, sizeof(vm));
	if (!json_is_object(o) || !json_is_string(name) ||
	    !td_name_valid(json_string_value(name), &why)) {
		snprintf(err, errlen, "vm name '%.40s' %s",
			 json_is_string(name) ? json_string_value(name) : "",
			 why ? why : "is missing");
		return at_line(o, err, errlen);
	}
	strcpy(vm.name, json_string_value(name));
	json_object_foreach(o, key, v) {
		size_t k = 0;

		while (k < nkeys && strcmp(key, keys[k]))
			k++;
		if (k == nkeys) {
			snprintf(err, errlen, "vm %s: unknown field '%.40s'", vm.name, key);
			return at_line(o, err, errlen);
		}
	}
	if (!json_is_string(ip) || td_addr_parse(json_string_value(ip), &vm.ip, &why)) {
		snprintf(err, errlen, "vm %s: ip '%.64s': %s", vm.name,
			 json_is_string(ip) ? json_string_value(ip) : "",
			 json_is_string(ip) ? why : "is missing");
		return at_line(o, err, errlen);
	}
	if (td_vm_sizes_from_json(o, &vm, msg, sizeof(msg))) {
		snprintf(err, errlen, "vm %s: %s", vm.name, msg);
		return at_line(o, err, errlen);
	}
	/* who in the stand-in VM may use the runtime (td_guest.h) */
	if (td_guest_from_json(o, true, &vm.guest_mode, vm.guest_group, err, errlen)) {
		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "vm %s: %s", vm.name, msg);
		return at_line(o, err, errlen);
	}
	old = td_state_find_vm(next, vm.name);
	if (old && ((json_object_get(o, "guest_mode") && old->guest_mode != vm.guest_mode) ||
		    (json_object_get(o, "guest_group") && strcmp(old->guest_group, vm.guest_group)))) {
		snprintf(err, errlen, "vm %s exists with guest-mode %04o and guest-group '%s': "
			 "changing them needs 'vm del' first", vm.name, old->guest_mode,
			 old->guest_group);
		return at_line(o, err, errlen);
	}
	if (old) {
		if (strcmp(old->ip.text, vm.ip.text) || (size && old->region_size != vm.region_size) ||
		    (slot && old->slot_size != vm.slot_size)) {
			snprintf(err, errlen,
				 "vm %s exists with ip %s, region size %llu and slot size %u: changing them "
				 "needs 'vm del' first", vm.name, old->ip.text,
				 (unsigned long long)old->region_size, old->slot_size);
			return at_line(o, err, errlen);
		}
		return 0;
	}
	for (unsigned int i = 0; i < next->nvms; i++)
		if (next->vms[i].ip.family == vm.ip.family &&
		    !memcmp(next->vms[i].ip.addr, vm.ip.addr, 16)) {
			snprintf(err, errlen, "vm %s: ip %s is already used by vm '%s'", vm.name,
				 vm.ip.text, next->vms[i].name);
			return at_line(o, err, errlen);
		}
	if (next->nvms >= TD_MAX_VMS) {
		snprintf(err, errlen, "too many VMs (at most %d)", TD_MAX_VMS);
		return at_line(o, err, errlen);
	}
	next->vms[next->nvms++] = vm;
	add_change(plan, TD_OP_CREATE, TD_OBJ_VM, vm.name, false);
	return 0;
}

static int plan_vnf(json_t *o, const struct td_state *cur, struct td_state *next,
		    struct td_plan *plan, td_rules_changed_fn rules_changed, void *arg,
		    char *err, size_t errlen)
{
	struct td_vnf v, *old;
	const char *user;

	if (td_vnf_from_json(o, false, &v, err, errlen))
		return at_line(o, err, errlen);
	old = td_state_find_vnf(next, v.name);
	if (!old) {
		if (next->nvnfs >= TD_MAX_VNFS) {
			snprintf(err, errlen, "too many VNFs (at most %d)", TD_MAX_VNFS);
			return at_line(o, err, errlen);
		}
		next->vnfs[next->nvnfs++] = v;
		add_change(plan, TD_OP_CREATE, TD_OBJ_VNF, v.name, false);
		return 0;
	}
	if (old->kind == v.kind && !strcmp(old->rules, v.rules))
		v.calibrated = old->calibrated;
	if (td_vnf_runtime_differs(old, &v)) {
		user = used_by(cur, v.name);
		if (user) {
			snprintf(err, errlen,
				 "vnf %s is used by chain %s: its kind, threads, on-failure, args and domain cannot change under a chain (delete the chain first)",
				 v.name, user);
			return at_line(o, err, errlen);
		}
		*old = v;
		add_change(plan, TD_OP_UPDATE, TD_OBJ_VNF, v.name, false);
		return 0;
	}
	if (old->rate != v.rate || strcmp(old->rules, v.rules) || strcmp(old->vars, v.vars) ||
	    (v.rules[0] && rules_changed && rules_changed(&v, arg))) {
		*old = v;
		add_change(plan, TD_OP_UPDATE, TD_OBJ_VNF, v.name, true);
	}
	return 0;
}

static int plan_chain(json_t *o, struct td_state *next, struct td_plan *plan, char *err,
		      size_t errlen)
{
	struct td_chain c, *old, *other;

	if (td_chain_from_json(o, &c, err, errlen))
		return at_line(o, err, errlen);
	if (!td_state_find_vm(next, c.vm)) {
		snprintf(err, errlen, "chain %s: no vm named '%s'", c.name, c.vm);
		return at_line(o, err, errlen);
	}
	for (unsigned int h = 0; h < c.nhops; h++)
		for (unsigned int k = 0; k < c.hop_len[h]; k++)
			if (!td_state_find_vnf(next, c.hop[h][k])) {
				snprintf(err, errlen, "chain %s: hop %u names unknown vnf '%s'", c.name,
					 h + 1, c.hop[h][k]);
				return at_line(o, err, errlen);
			}
	old = td_state_find_chain(next, c.name);
	other = td_state_find_dir(next, c.vm, c.dir);
	if (other && other != old) {
		snprintf(err, errlen, "chain %s: vm %s already has the %s chain '%s'", c.name, c.vm,
			 td_dir_name(c.dir), other->name);
		return at_line(o, err, errlen);
	}
	if (!old) {
		if (next->nchains >= TD_MAX_CHAINS) {
			snprintf(err, errlen, "too many chains (at most %d)", TD_MAX_CHAINS);
			return at_line(o, err, errlen);
		}
		next->chains[next->nchains++] = c;
		add_change(plan, TD_OP_CREATE, TD_OBJ_CHAIN, c.name, false);
		return 0;
	}
	if (strcmp(old->vm, c.vm) || old->dir != c.dir || old->sla != c.sla ||
	    td_chain_hops_differ(old, &c)) {
		*old = c;
		add_change(plan, TD_OP_UPDATE, TD_OBJ_CHAIN, c.name, false);
	}
	return 0;
}

/* Names seen in the topology, to find duplicates and what prune deletes. */
static bool seen_in(json_t *list, size_t upto, const char *name)
{
	for (size_t i = 0; i < upto; i++) {
		json_t *n = json_object_get(json_array_get(list, i), "name");

		if (json_is_string(n) && !strcmp(json_string_value(n), name))
			return true;
	}
	return false;
}

static int check_list(json_t *topo, const char *key, json_t **out, size_t max, char *err,
		      size_t errlen)
{
	json_t *l = json_object_get(topo, key);

	*out = l;
	if (!l)
		return 0;
	if (!json_is_array(l) || json_array_size(l) > max) {
		snprintf(err, errlen, "\"%s\" must be a list of at most %zu", key, max);
		return -EINVAL;
	}
	for (size_t i = 0; i < json_array_size(l); i++) {
		json_t *o = json_array_get(l, i), *n = json_object_get(o, "name");

		if (json_is_string(n) && seen_in(l, i, json_string_value(n))) {
			snprintf(err, errlen, "%.*s %s is defined twice", (int)strlen(key) - 1, key,
				 json_string_value(n));
			return at_line(o, err, errlen);
		}
	}
	return 0;
}

static void prune(struct td_state *next, json_t *vms, json_t *vnfs, json_t *chains,
		  struct td_plan *plan)
{
	for (unsigned int i = next->nchains; i-- > 0;)
		if (!seen_in(chains, json_array_size(chains), next->chains[i].name)) {
			add_change(plan, TD_OP_DELETE, TD_OBJ_CHAIN, next->chains[i].name, false);
			next->chains[i] = next->chains[--next->nchains];
		}
	for (unsigned int i = next->nvnfs; i-- > 0;)
		if (!seen_in(vnfs, json_array_size(vnfs), next->vnfs[i].name)) {
			add_change(plan, TD_OP_DELETE, TD_OBJ_VNF, next->vnfs[i].name, false);
			next->vnfs[i] = next->vnfs[--next->nvnfs];
		}
	for (unsigned int i = next->nvms; i-- > 0;)
		if (!seen_in(vms, json_array_size(vms), next->vms[i].name)) {
			add_change(plan, TD_OP_DELETE, TD_OBJ_VM, next->vms[i].name, false);
			next->vms[i] = next->vms[--next->nvms];
		}
	/* Instances of what is gone: the daemon stops them through the TOE. */
	for (unsigned int i = next->ninsts; i-- > 0;)
		if (!td_state_find_vnf(next, next->insts[i].vnf) ||
		    !td_state_find_vm(next, next->insts[i].vm))
			td_state_drop_inst(next, &next->insts[i]);
}

int td_apply_plan(const struct td_state *cur, json_t *topo, unsigned int npcpu,
		  td_rules_changed_fn rules_changed, void *arg, struct td_state *next,
		  struct td_plan *plan, char *err, size_t errlen)
{
	json_t *vms, *vnfs, *chains, *pr = json_object_get(topo, "prune"), *o;
	const char *key;
	size_t i;

	*next = *cur;
	plan->n = 0;
	if (!json_is_object(topo)) {
		snprintf(err, errlen, "the topology is not an object");
		return -EINVAL;
	}
	json_object_foreach(topo, key, o)
		if (strcmp(key, "vms") && strcmp(key, "vnfs") && strcmp(key, "chains") &&
		    strcmp(key, "prune")) {
			snprintf(err, errlen, "topology: unknown field '%.40s'", key);
			return -EINVAL;
		}
	if (pr && !json_is_boolean(pr)) {
		snprintf(err, errlen, "topology: \"prune\" must be true or false");
		return -EINVAL;
	}
	if (check_list(topo, "vms", &vms, TD_MAX_VMS, err, errlen) ||
	    check_list(topo, "vnfs", &vnfs, TD_MAX_VNFS, err, errlen) ||
	    check_list(topo, "chains", &chains, TD_MAX_CHAINS, err, errlen))
		return -EINVAL;
	json_array_foreach(vms, i, o)
		if (plan_vm(o, next, plan, err, errlen))
			return -EINVAL;
	json_array_foreach(vnfs, i, o)
		if (plan_vnf(o, cur, next, plan, rules_changed, arg, err, errlen))
			return -EINVAL;
	if (json_is_true(pr))
		prune(next, vms, vnfs, chains, plan);
	json_array_foreach(chains, i, o)
		if (plan_chain(o, next, plan, err, errlen))
			return -EINVAL;
	if (td_state_check(next, err, errlen))
		return -EINVAL;
	if (plan->n && td_admit(next, npcpu, err, errlen))
		return -EINVAL;
	return 0;
}

json_t *td_plan_json(const struct td_plan *p)
{
	static const char *const ops[] = { "create", "update", "delete" };
	static const char *const objs[] = { "vm", "vnf", "chain" };
	json_t *a = json_array();

	for (unsigned int i = 0; i < p->n; i++)
		json_array_append_new(a, json_pack("{s:s, s:s, s:s}", "op", ops[p->c[i].op],
						   "object", objs[p->c[i].obj], "name", p->c[i].name));
	return a;
}

static int admit(const struct td_state *st, unsigned int npcpu, char *why, size_t whylen,
		 const char *want, uint64_t *ticks, uint32_t *nvcpu);

int td_admit(const struct td_state *st, unsigned int npcpu, char *why, size_t whylen)
{
	return admit(st, npcpu, why, whylen, NULL, NULL, NULL);
}

int td_chain_quota(const struct td_state *st, unsigned int npcpu, const char *name,
		   uint64_t *ticks, uint32_t *nvcpu)
{
	char why[256];

	*ticks = UINT64_MAX;
	if (admit(st, npcpu, why, sizeof(why), name, ticks, nvcpu))
		return -EINVAL;
	return *ticks == UINT64_MAX ? -ENOENT : 0;
}

static int admit(const struct td_state *st, unsigned int npcpu, char *why, size_t whylen,
		 const char *want, uint64_t *ticks, uint32_t *nvcpu)
{
	struct hs_chain_cfg *cfg;
	struct hs_chain_quota *q;
	uint32_t n = 0;
	int rc;

	cfg = calloc(TD_MAX_CHAINS, sizeof(*cfg));
	q = calloc(TD_MAX_CHAINS, sizeof(*q));
	if (!cfg || !q) {
		free(cfg);
		free(q);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	rc = 0;
	for (unsigned int i = 0; i < st->nchains && !rc; i++) {
		const struct td_chain *c = &st->chains[i];
		struct hs_chain_cfg *h = &cfg[n];

		if (!c->sla)
			continue;
		h->name = c->name;
		h->sla_pps = c->sla;
		h->vm = -1;
		for (unsigned int vi = 0; vi < st->nvms; vi++)
			if (!strcmp(st->vms[vi].name, c->vm))
				h->vm = (int32_t)vi;
		for (unsigned int hp = 0; hp < c->nhops && !rc; hp++)
			for (unsigned int k = 0; k < c->hop_len[hp] && !rc; k++) {
				const struct td_vnf *v = td_state_find_vnf((struct td_state *)st,
									   c->hop[hp][k]);

				if (h->nvnf >= HS_MAX_VNFS) {
					snprintf(why, whylen, "chain %s: an SLA chain has at most %d VNFs",
						 c->name, HS_MAX_VNFS);
					rc = -EINVAL;
				} else if (!v || !td_vnf_f(v)) {
					snprintf(why, whylen,
						 "chain %s has an SLA but vnf %s has no rate: run 'sfc-ctl vnf calibrate %s' or give it --rate PPS",
						 c->name, c->hop[hp][k], c->hop[hp][k]);
					rc = -EINVAL;
				} else {
					struct hs_vnf_cfg *hv = &h->vnf[h->nvnf++];

					hv->name = v->name;
					hv->f_pps = td_vnf_f(v);
					hv->max_threads = v->threads > HS_MAX_THREADS ? HS_MAX_THREADS
										      : v->threads;
				}
			}
		n++;
	}
	if (!rc) {
		rc = hs_admit(cfg, n, npcpu ? npcpu : 1, TD_ADMIT_G, q, why, whylen);
		if (rc) {
			char msg[400];

			snprintf(msg, sizeof(msg), "%s", why);
			snprintf(why, whylen, "SLA refused on %u CPUs: %s", npcpu, msg);
		}
	}
	for (uint32_t i = 0; !rc && want && i < n; i++)
		if (!strcmp(cfg[i].name, want)) {
			*ticks = q[i].ticks;
			*nvcpu = q[i].nvcpu;
		}
	free(cfg);
	free(q);
	return rc;
}
