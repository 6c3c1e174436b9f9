// SPDX-License-Identifier: MIT
/* The chain commands; see td_chain.h. */
#include <stdlib.h>
#include <string.h>

#include "tochain/ctl_proto.h"
#include "td_chain.h"
#include "td_change.h"
#include "td_cpusched.h"
#include "td_priv.h"
#include "td_toe.h"
#include "td_vnfinst.h"

static json_t *chain_json_full(struct daemon *d, const struct td_chain *c, bool live)
{
	json_t *o = td_chain_json(c), *insts = json_array();
	struct td_vm *vm = td_state_find_vm(&d->st, c->vm);

	for (unsigned int h = 0; h < c->nhops; h++)
		for (unsigned int k = 0; k < c->hop_len[h]; k++) {
			struct td_inst *in = td_state_find_inst(&d->st, c->hop[h][k], c->vm);

			if (in)
				json_array_append_new(insts, td_vnfinst_json(d, in));
		}
	json_object_set_new(o, "instances", insts);
	if (live && vm) {
		char err[512];
		json_t *st = td_toe_call(vm, "stats", NULL, err, sizeof(err));
		json_t *tc = st ? td_toe_find(json_object_get(st, "chains"), "name", c->name) : NULL;

		if (tc)
			json_object_set(o, "toe", tc);
		else
			json_object_set_new(o, "toe_error", json_string(st ? "the TOE does not run this chain" : err));
		json_decref(st);
	}
	json_object_set_new(o, "sched", json_string(td_cpusched_chain_note(d, c)));
	return o;
}

json_t *td_chain_cmd_add(struct daemon *d, json_t *args)
{
	json_t *name = json_object_get(args, "name"), *reply;
	struct td_chain c;
	char err[512];

	if (td_chain_from_json(args, &c, err, sizeof(err)))
		return ctl_reply_fail("%s", err);
	if (json_is_string(name) && td_state_find_chain(&d->st, json_string_value(name)))
		return ctl_reply_fail("chain '%s' already exists", json_string_value(name));
	reply = td_change_apply(d, json_pack("{s:[O]}", "chains", args), "chain add", false);
	if (reply)
		return reply;
	return ctl_reply_ok(chain_json_full(d, td_state_find_chain(&d->st, c.name), false));
}

struct td_chain *td_chain_need(struct daemon *d, json_t *args, json_t **fail)
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

json_t *td_chain_cmd_del(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *reply;
	struct td_chain *c = td_chain_need(d, args, &fail);
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
	reply = td_change_remove(d, next, "chain del");
	free(next);
	return reply ? reply : ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

json_t *td_chain_cmd_set_sla(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *sla = json_object_get(args, "sla"), *o, *reply;
	struct td_chain *c = td_chain_need(d, args, &fail);
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
	reply = td_change_apply(d, json_pack("{s:[o]}", "chains", o), "chain set-sla", false);
	if (reply)
		return reply;
	return ctl_reply_ok(chain_json_full(d, td_state_find_chain(&d->st, name), false));
}

json_t *td_chain_cmd_show(struct daemon *d, json_t *args)
{
	json_t *fail = NULL;
	struct td_chain *c = td_chain_need(d, args, &fail);

	return c ? ctl_reply_ok(chain_json_full(d, c, true)) : fail;
}

json_t *td_chain_cmd_ls(struct daemon *d, json_t *args)
{
	json_t *a = json_array();

	(void)args;
	for (unsigned int i = 0; i < d->st.nchains; i++)
		json_array_append_new(a, chain_json_full(d, &d->st.chains[i], false));
	return ctl_reply_ok(json_pack("{s:o}", "chains", a));
}
