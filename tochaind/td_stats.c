// SPDX-License-Identifier: MIT
/* The stats command; see td_stats.h. */
#include <string.h>

#include "tochain/ctl_proto.h"
#include "td_apply.h"
#include "td_priv.h"
#include "td_stats.h"
#include "td_toe.h"
#include "td_vnfinst.h"

/* The host instances of @ch's VNFs on @vm that are not running, and why. */
static json_t *vnfs_down(struct daemon *d, const struct td_vm *vm, const struct td_chain *ch)
{
	json_t *a = json_array();

	for (unsigned int k = 0; k < d->st.ninsts; k++) {
		struct td_inst *in = &d->st.insts[k];
		json_t *o;

		if (strcmp(in->vm, vm->name) || in->domain[0] || !td_chain_uses(ch, in->vnf) ||
		    td_vnfinst_alive(vm, in))
			continue;
		o = json_pack("{s:s, s:i}", "vnf", in->vnf, "pid", (int)in->pid);
		td_vnfinst_health_json(in, o);
		json_array_append_new(a, o);
	}
	return a;
}

json_t *td_stats_gather(struct daemon *d, const char *only)
{
	json_t *chains = json_array(), *denials = json_array();

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
				st = td_toe_call(vm, "stats", NULL, err, sizeof(err));
			tc = st ? td_toe_find(json_object_get(st, "chains"), "name", ch->name) : NULL;
			o = tc ? json_deep_copy(tc) : json_object();
			json_object_set_new(o, "name", json_string(ch->name));
			json_object_set_new(o, "vm", json_string(vm->name));
			json_object_set_new(o, "dir", json_string(td_dir_name(ch->dir)));
			json_object_set_new(o, "sla", json_integer((json_int_t)ch->sla));
			{
				uint64_t ticks;
				uint32_t nv;

				/* what admission reserves: CPUs' worth over its VNF vCPUs */
				if (!td_chain_quota(&d->st, td_ncpus(), ch->name, &ticks, &nv)) {
					json_object_set_new(o, "cpu_quota", json_real((double)ticks / TD_ADMIT_G));
					json_object_set_new(o, "vnf_vcpus", json_integer(nv));
				}
			}
			if (!tc)
				json_object_set_new(o, "error", json_string(st ? "the TOE does not run this chain" : err));
			json_object_set_new(o, "vnfs_down", vnfs_down(d, vm, ch));
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
	return json_pack("{s:o, s:o}", "chains", chains, "denials", denials);
}

/* stats: each VM's TOE asked once. */
json_t *td_stats_cmd(struct daemon *d, json_t *args)
{
	int bad = 0;
	const char *only = td_arg_str(args, "name", &bad);

	if (bad)
		return ctl_reply_fail("stats: CHAIN must be a string");
	if (only && !td_state_find_chain(&d->st, only))
		return ctl_reply_fail("no chain named '%.40s'", only);
	return ctl_reply_ok(td_stats_gather(d, only));
}
