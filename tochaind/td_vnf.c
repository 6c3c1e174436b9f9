// SPDX-License-Identifier: MIT
/* The VNF commands; see td_vnf.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "td_change.h"
#include "td_grant.h"
#include "td_inst.h"
#include "td_priv.h"
#include "td_vnf.h"
#include "td_vnfinst.h"

static json_t *vnf_json_full(struct daemon *d, const struct td_vnf *v)
{
	json_t *o = td_vnf_json(v), *insts = json_array(), *chains = json_array();

	json_object_set_new(o, "f", json_integer((json_int_t)td_vnf_f(v)));
	for (unsigned int i = 0; i < d->st.ninsts; i++)
		if (!strcmp(d->st.insts[i].vnf, v->name))
			json_array_append_new(insts, td_vnfinst_json(d, &d->st.insts[i]));
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

json_t *td_vnf_cmd_add(struct daemon *d, json_t *args)
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
	if (v.vars[0] && access(v.vars, R_OK))
		return ctl_reply_fail("vnf %s: --vars %s: %s", v.name, v.vars, strerror(errno));
	/* its domain is checked by td_change_apply() */
	reply = td_change_apply(d, json_pack("{s:[O]}", "vnfs", args), "vnf add", false);
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

json_t *td_vnf_cmd_del(struct daemon *d, json_t *args)
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
	reply = td_change_remove(d, next, "vnf del");
	free(next);
	return reply ? reply : ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

json_t *td_vnf_cmd_calibrate(struct daemon *d, json_t *args)
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

json_t *td_vnf_cmd_show(struct daemon *d, json_t *args)
{
	json_t *fail = NULL;
	struct td_vnf *v = need_vnf(d, args, &fail);

	return v ? ctl_reply_ok(vnf_json_full(d, v)) : fail;
}

json_t *td_vnf_cmd_ls(struct daemon *d, json_t *args)
{
	json_t *a = json_array();

	(void)args;
	for (unsigned int i = 0; i < d->st.nvnfs; i++)
		json_array_append_new(a, vnf_json_full(d, &d->st.vnfs[i]));
	return ctl_reply_ok(json_pack("{s:o}", "vnfs", a));
}
