// SPDX-License-Identifier: MIT
/* A VM's TOE made to run the chains of a state; see td_converge.h. */
#include <errno.h>
#include <string.h>

#include "td_apply.h"
#include "td_capture.h"
#include "td_converge.h"
#include "td_priv.h"
#include "td_toe.h"
#include "td_vnfinst.h"

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
int td_converge(struct daemon *d, struct td_state *st, struct td_vm *vm,
		    struct td_state *prev, char *err, size_t errlen)
{
	json_t *ls = NULL, *stats = NULL, *tvnfs, *tchains, *r;
	char done[2 * TD_MAX_HOPS * TD_MAX_PER_HOP][TD_OBJ_NAME_MAX];
	unsigned int ndone = 0;
	int rc = -EIO;
	size_t i;
	json_t *o;

	ls = td_toe_call(vm, "vnf.ls", NULL, err, errlen);
	if (!ls)
		return -EIO;
	stats = td_toe_call(vm, "stats", NULL, err, errlen);
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
				if (td_vnfinst_ensure(d, st, vm, ch->hop[h][k], tvnfs, err, errlen))
					goto out;
				if (ndone < 2 * TD_MAX_HOPS * TD_MAX_PER_HOP)
					strcpy(done[ndone++], ch->hop[h][k]);
			}
	}
	/* 2. each direction: set, replaced, or deleted */
	for (int dir = TD_DIR_IN; dir <= TD_DIR_OUT; dir++) {
		struct td_chain *ch = td_state_find_dir(st, vm->name, (enum td_dir)dir);
		json_t *tc = td_toe_find(tchains, "dir", td_dir_name((enum td_dir)dir));

		if (ch) {
			json_t *hops;

			if (toe_has_chain(tc, ch, prev))
				continue;
			hops = td_hops_json(ch);
			r = td_toe_call(vm, "chain.set", json_pack("{s:s, s:s, s:o}", "dir",
								td_dir_name(ch->dir), "name", ch->name,
								"hops", hops), err, errlen);
			if (!r)
				goto out;
			td_log("vm %s: chain %s set (%s, version %lld)", vm->name, ch->name,
			       td_dir_name(ch->dir), (long long)json_integer_value(json_object_get(r, "version")));
			json_decref(r);
			td_capture_restore(d, vm, ch);
		} else if (tc) {
			r = td_toe_call(vm, "chain.del", json_pack("{s:s}", "dir",
								td_dir_name((enum td_dir)dir)), err, errlen);
			if (!r)
				goto out;
			json_decref(r);
			td_log("vm %s: %s chain deleted", vm->name, td_dir_name((enum td_dir)dir));
			td_capture_forget(d, vm, td_dir_name((enum td_dir)dir),
					  json_string_value(json_object_get(tc, "name")));
		}
	}
	/* 3. VNFs the TOE has that no chain of this VM uses any more */
	json_array_foreach(tvnfs, i, o) {
		json_t *n = json_object_get(o, "name"), *pid = json_object_get(o, "pid");

		if (!json_is_string(n) || td_state_vm_uses(st, vm->name, json_string_value(n)))
			continue;
		r = td_toe_call(vm, "vnf.del", json_pack("{s:s}", "name", json_string_value(n)), err,
			     errlen);
		if (!r)
			goto out;
		json_decref(r);
		{
			struct td_inst *gin = td_state_find_inst(st, json_string_value(n), vm->name);
			struct td_vnf *gv = td_state_find_vnf(st, json_string_value(n));

			/* an instance record's grants go in step 4 */
			if (!gin && gv && gv->domain[0])
				td_vnfinst_take_grants(d, st, vm, gv->name, gv->domain);
			else if (!gin || !gin->domain[0])
				td_vnfinst_stop(d, vm, json_string_value(n),
					 json_is_integer(pid) ? (pid_t)json_integer_value(pid) : 0);
		}
		td_log("vm %s: vnf %s detached", vm->name, json_string_value(n));
		td_vnfinst_fw_drop(d, st, vm);
	}
	/* 4. instance records of this VM nothing needs */
	for (unsigned int k = st->ninsts; k-- > 0;) {
		struct td_inst *in = &st->insts[k];

		if (strcmp(in->vm, vm->name) || td_state_vm_uses(st, vm->name, in->vnf))
			continue;
		if (in->domain[0])
			td_vnfinst_take_grants(d, st, vm, in->vnf, in->domain);
		else
			td_vnfinst_stop(d, vm, in->vnf, in->pid);
		td_state_drop_inst(st, in);
	}
	/* 5. the chains are the TOE's: it may serve (held since its start, td_vm.c) */
	td_toe_ready(vm);
	rc = 0;
out:
	json_decref(ls);
	json_decref(stats);
	return rc;
}
