// SPDX-License-Identifier: MIT
/* The TOE's control socket; see td_toe.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tochain/ctl_proto.h"
#include "td_priv.h"
#include "td_toe.h"

json_t *td_toe_call(const struct td_vm *vm, const char *cmd, json_t *args, char *err,
			size_t errlen)
{
	char path[PATH_MAX + 8];
	const char *why = NULL;
	json_t *reply, *res;

	snprintf(path, sizeof(path), "%s.ctl", vm->region);
	reply = ctl_call_timeout(path, cmd, args, TD_TOE_CALL_MS, &why);
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

void td_toe_ready(const struct td_vm *vm)
{
	char err[512];
	json_t *r = td_toe_call(vm, "chains.ready", NULL, err, sizeof(err));

	if (!r) {
		td_log("%s (its TOE stays held)", err);
		return;
	}
	if (json_is_true(json_object_get(r, "was_held")))
		td_log("vm %s: chains set, the TOE serves inbound connections", vm->name);
	json_decref(r);
}

json_t *td_toe_find(json_t *list, const char *key, const char *val)
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
