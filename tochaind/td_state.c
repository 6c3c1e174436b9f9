// SPDX-License-Identifier: MIT
/* tochaind's persistent state; see td_state.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "td_state.h"

#define STATE_VERSION 1

bool td_name_valid(const char *name, const char **why)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= TD_NAME_MAX) {
		*why = "must be 1 to 12 characters";
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
			*why = "may hold only a-z, 0-9 and '-'";
			return false;
		}
	}
	if (name[0] == '-') {
		*why = "must not start with '-'";
		return false;
	}
	return true;
}

bool td_domain_valid(const char *name, const char **why)
{
	size_t n = name ? strlen(name) : 0;

	/* stricter than libvirt: the name goes into XML and messages unquoted */
	if (n == 0 || n >= TD_DOMAIN_MAX) {
		*why = "must be 1 to 63 characters";
		return false;
	}
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != n) {
		*why = "may hold only A-Z, a-z, 0-9 and '.', '_', '+', '-'";
		return false;
	}
	if (name[0] == '-' || name[0] == '.') {
		*why = "must not start with '-' or '.'";
		return false;
	}
	return true;
}

int td_addr_parse(const char *s, struct td_addr *a, const char **why)
{
	char buf[64], *slash, *end;
	unsigned long prefix;

	memset(a, 0, sizeof(*a));
	if (!s || strlen(s) >= sizeof(buf)) {
		*why = "expected ADDR/PREFIX";
		return -EINVAL;
	}
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash || !slash[1]) {
		*why = "expected ADDR/PREFIX";
		return -EINVAL;
	}
	*slash = '\0';
	errno = 0;
	prefix = strtoul(slash + 1, &end, 10);
	if (*end || errno || slash[1] == '+' || slash[1] == '-') {
		*why = "prefix is not a number";
		return -EINVAL;
	}
	if (inet_pton(AF_INET, buf, a->addr) == 1) {
		a->family = AF_INET;
		if (prefix < 1 || prefix > 32) {
			*why = "IPv4 prefix must be 1..32";
			return -EINVAL;
		}
	} else if (inet_pton(AF_INET6, buf, a->addr) == 1) {
		a->family = AF_INET6;
		if (prefix < 1 || prefix > 128) {
			*why = "IPv6 prefix must be 1..128";
			return -EINVAL;
		}
	} else {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	a->prefix = (unsigned int)prefix;
	inet_ntop(a->family, a->addr, buf, sizeof(buf));
	snprintf(a->text, sizeof(a->text), "%s/%u", buf, a->prefix);
	return 0;
}

int td_size_parse(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		switch (*end) {
		case 'K': case 'k': mul = 1ull << 10; break;
		case 'M': case 'm': mul = 1ull << 20; break;
		case 'G': case 'g': mul = 1ull << 30; break;
		default: return -EINVAL;
		}
		if (end[1] && !(end[1] == 'i' && end[2] == 'B' && !end[3]) &&
		    !((end[1] == 'B' || end[1] == 'b') && !end[2]))
			return -EINVAL;
	}
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

struct td_vm *td_state_find_vm(struct td_state *st, const char *name)
{
	for (unsigned int i = 0; i < st->nvms; i++)
		if (!strcmp(st->vms[i].name, name))
			return &st->vms[i];
	return NULL;
}

struct td_vnf *td_state_find_vnf(struct td_state *st, const char *name)
{
	for (unsigned int i = 0; i < st->nvnfs; i++)
		if (!strcmp(st->vnfs[i].name, name))
			return &st->vnfs[i];
	return NULL;
}

struct td_chain *td_state_find_chain(struct td_state *st, const char *name)
{
	for (unsigned int i = 0; i < st->nchains; i++)
		if (!strcmp(st->chains[i].name, name))
			return &st->chains[i];
	return NULL;
}

struct td_chain *td_state_find_dir(struct td_state *st, const char *vm, enum td_dir dir)
{
	for (unsigned int i = 0; i < st->nchains; i++)
		if (!strcmp(st->chains[i].vm, vm) && st->chains[i].dir == dir)
			return &st->chains[i];
	return NULL;
}

struct td_inst *td_state_find_inst(struct td_state *st, const char *vnf, const char *vm)
{
	for (unsigned int i = 0; i < st->ninsts; i++)
		if (!strcmp(st->insts[i].vnf, vnf) && !strcmp(st->insts[i].vm, vm))
			return &st->insts[i];
	return NULL;
}

void td_state_drop_inst(struct td_state *st, struct td_inst *i)
{
	*i = st->insts[--st->ninsts];
}

bool td_chain_uses(const struct td_chain *c, const char *vnf)
{
	for (unsigned int h = 0; h < c->nhops; h++)
		for (unsigned int k = 0; k < c->hop_len[h]; k++)
			if (!strcmp(c->hop[h][k], vnf))
				return true;
	return false;
}

bool td_state_vm_uses(const struct td_state *st, const char *vm, const char *vnf)
{
	for (unsigned int i = 0; i < st->nchains; i++)
		if (!strcmp(st->chains[i].vm, vm) && td_chain_uses(&st->chains[i], vnf))
			return true;
	return false;
}

struct td_chain *td_state_vm_chain(struct td_state *st, const char *vm)
{
	for (unsigned int i = 0; i < st->nchains; i++)
		if (!strcmp(st->chains[i].vm, vm))
			return &st->chains[i];
	return NULL;
}

struct td_vnf *td_state_domain_vnf(struct td_state *st, const char *domain)
{
	for (unsigned int i = 0; i < st->nvnfs; i++)
		if (!strcmp(st->vnfs[i].domain, domain))
			return &st->vnfs[i];
	return NULL;
}

uint64_t td_vnf_f(const struct td_vnf *v)
{
	return v->rate ? v->rate : v->calibrated;
}

bool td_objname_valid(const char *name, const char **why)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= TD_OBJ_NAME_MAX) {
		*why = "must be 1 to 32 characters";
		return false;
	}
	if (strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n) {
		*why = "may hold only a-z, 0-9, '_' and '-'";
		return false;
	}
	if (name[0] == '-') {
		*why = "must not start with '-'";
		return false;
	}
	return true;
}

static const char *const kind_names[] = { "fw", "ids", "waf", "null" };

const char *td_kind_name(enum td_kind k)
{
	return (unsigned int)k < 4 ? kind_names[k] : "?";
}

int td_kind_parse(const char *s)
{
	for (int k = 0; s && k < 4; k++)
		if (!strcmp(s, kind_names[k]))
			return k;
	return -EINVAL;
}

const char *td_dir_name(enum td_dir d)
{
	return d == TD_DIR_IN ? "in" : "out";
}

json_t *td_vnf_json(const struct td_vnf *v)
{
	json_t *o = json_pack("{s:s, s:s, s:i, s:s, s:I}", "name", v->name,
			      "kind", td_kind_name(v->kind), "threads", (int)v->threads,
			      "on_failure", v->fail_open ? "open" : "closed",
			      "calibrated", (json_int_t)v->calibrated);
	json_t *a;

	if (!o)
		return NULL;
	/* absent, not 0: a given rate is at least 1 */
	if (v->rate)
		json_object_set_new(o, "rate", json_integer((json_int_t)v->rate));
	if (v->rules[0])
		json_object_set_new(o, "rules", json_string(v->rules));
	if (v->vars[0])
		json_object_set_new(o, "vars", json_string(v->vars));
	if (v->nargs) {
		a = json_array();
		for (unsigned int i = 0; i < v->nargs; i++)
			json_array_append_new(a, json_string(v->args[i]));
		json_object_set_new(o, "args", a);
	}
	if (v->domain[0])
		json_object_set_new(o, "domain", json_string(v->domain));
	return o;
}

json_t *td_hops_json(const struct td_chain *c)
{
	json_t *hops = json_array();

	for (unsigned int h = 0; h < c->nhops; h++) {
		json_t *hop = json_array();

		for (unsigned int k = 0; k < c->hop_len[h]; k++)
			json_array_append_new(hop, json_string(c->hop[h][k]));
		json_array_append_new(hops, hop);
	}
	return hops;
}

json_t *td_chain_json(const struct td_chain *c)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:o}", "name", c->name, "vm", c->vm,
			 "dir", td_dir_name(c->dir), "sla", (json_int_t)c->sla,
			 "hops", td_hops_json(c));
}

/* Only @keys (NULL-terminated) and "line" may appear in @o. */
static int only_keys(json_t *o, const char *const *keys, const char *what, char *err,
		     size_t errlen)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		bool known = !strcmp(key, "line");

		for (const char *const *k = keys; *k && !known; k++)
			known = !strcmp(key, *k);
		if (!known) {
			snprintf(err, errlen, "%s: unknown field '%.40s'", what, key);
			return -EINVAL;
		}
	}
	return 0;
}

/* A whole number in [lo, hi], or absent (@def). */
static int get_uint(json_t *o, const char *key, uint64_t lo, uint64_t hi, uint64_t def,
		    uint64_t *out)
{
	json_t *v = json_object_get(o, key);

	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    (uint64_t)json_integer_value(v) < lo || (uint64_t)json_integer_value(v) > hi)
		return -EINVAL;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

bool td_vnf_arg_valid(const char *arg, const char **why)
{
	static const char *const ours[] = { "--kind", "--region", "--threads", "--rules",
					    "--vars", "--calibrate", "--check",
					    "--exit-with-parent", NULL };
	size_t n = strlen(arg), name;

	if (n < 3 || n >= TD_VNF_ARG_MAX || strncmp(arg, "--", 2)) {
		*why = "must be --OPTION or --OPTION=VALUE, at most 127 characters";
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)arg[i] <= ' ' || (unsigned char)arg[i] >= 127) {
			*why = "must be printable, without spaces";
			return false;
		}
	name = strcspn(arg, "=");
	for (const char *const *o = ours; *o; o++)
		if (strlen(*o) == name && !strncmp(arg, *o, name)) {
			*why = "is an option tochaind sets itself";
			return false;
		}
	return true;
}

int td_vnf_from_json(json_t *o, bool stored, struct td_vnf *v, char *err, size_t errlen)
{
	static const char *const keys[] = { "name", "kind", "threads", "rate", "rules", "vars",
					    "on_failure", "args", "calibrated", "domain", NULL };
	const char *why, *name;
	json_t *x;
	uint64_t n;
	int k;

	memset(v, 0, sizeof(*v));
	if (!json_is_object(o)) {
		snprintf(err, errlen, "a VNF is not an object");
		return -EINVAL;
	}
	x = json_object_get(o, "name");
	name = json_is_string(x) ? json_string_value(x) : NULL;
	if (!name || strlen(name) != json_string_length(x) || !td_objname_valid(name, &why)) {
		snprintf(err, errlen, "vnf name '%.40s' %s", name ? name : "",
			 name ? why : "is missing");
		return -EINVAL;
	}
	strcpy(v->name, name);
	if (only_keys(o, keys, "vnf", err, errlen))
		return -EINVAL;
	if (!stored && json_object_get(o, "calibrated")) {
		snprintf(err, errlen, "vnf %s: 'calibrated' is measured, not given", name);
		return -EINVAL;
	}
	x = json_object_get(o, "kind");
	k = json_is_string(x) ? td_kind_parse(json_string_value(x)) : -EINVAL;
	if (k < 0) {
		snprintf(err, errlen, "vnf %s: --kind must be fw, ids, waf or null", name);
		return -EINVAL;
	}
	v->kind = (enum td_kind)k;
	if (get_uint(o, "threads", 1, TD_MAX_THREADS, 1, &n)) {
		snprintf(err, errlen, "vnf %s: --threads must be 1 to %d", name, TD_MAX_THREADS);
		return -EINVAL;
	}
	v->threads = (unsigned int)n;
	if (get_uint(o, "rate", 0, TD_MAX_RATE, 0, &v->rate) ||
	    (json_object_get(o, "rate") && !v->rate)) {
		snprintf(err, errlen, "vnf %s: --rate must be 1 to %llu packets/s", name,
			 (unsigned long long)TD_MAX_RATE);
		return -EINVAL;
	}
	if (get_uint(o, "calibrated", 0, TD_MAX_RATE, 0, &v->calibrated)) {
		snprintf(err, errlen, "vnf %s: invalid calibrated rate", name);
		return -EINVAL;
	}
	x = json_object_get(o, "on_failure");
	if (x && !(json_is_string(x) && (!strcmp(json_string_value(x), "open") ||
					 !strcmp(json_string_value(x), "closed")))) {
		snprintf(err, errlen, "vnf %s: --on-failure must be open or closed", name);
		return -EINVAL;
	}
	v->fail_open = x && !strcmp(json_string_value(x), "open");
	x = json_object_get(o, "rules");
	if (x) {
		const char *r = json_is_string(x) ? json_string_value(x) : "";

		if (r[0] != '/' || strlen(r) != json_string_length(x) || strlen(r) >= sizeof(v->rules) ||
		    strpbrk(r, "\n\r\t")) {
			snprintf(err, errlen, "vnf %s: --rules must be an absolute file path", name);
			return -EINVAL;
		}
		strcpy(v->rules, r);
	}
	x = json_object_get(o, "vars");
	if (x) {
		const char *r = json_is_string(x) ? json_string_value(x) : "";

		if (r[0] != '/' || strlen(r) != json_string_length(x) || strlen(r) >= sizeof(v->vars) ||
		    strpbrk(r, "\n\r\t")) {
			snprintf(err, errlen, "vnf %s: --vars must be an absolute file path", name);
			return -EINVAL;
		}
		strcpy(v->vars, r);
		if (v->kind != TD_KIND_IDS) {
			snprintf(err, errlen, "vnf %s: --vars is for kind ids (a Snort variables file)",
				 name);
			return -EINVAL;
		}
	}
	if ((v->kind == TD_KIND_FW || v->kind == TD_KIND_IDS) && !v->rules[0]) {
		snprintf(err, errlen, "vnf %s: kind %s needs --rules FILE", name, td_kind_name(v->kind));
		return -EINVAL;
	}
	if (v->kind == TD_KIND_NULL && v->rules[0]) {
		snprintf(err, errlen, "vnf %s: kind null takes no --rules", name);
		return -EINVAL;
	}
	x = json_object_get(o, "args");
	if (x) {
		size_t i;
		json_t *a;

		if (!json_is_array(x) || json_array_size(x) > TD_MAX_VNF_ARGS) {
			snprintf(err, errlen, "vnf %s: at most %d --arg options", name, TD_MAX_VNF_ARGS);
			return -EINVAL;
		}
		json_array_foreach(x, i, a) {
			const char *s = json_is_string(a) ? json_string_value(a) : "";

			if (strlen(s) != json_string_length(a) || !td_vnf_arg_valid(s, &why)) {
				snprintf(err, errlen, "vnf %s: --arg '%.40s' %s", name, s,
					 json_is_string(a) ? why : "is not a string");
				return -EINVAL;
			}
			strcpy(v->args[v->nargs++], s);
		}
	}
	x = json_object_get(o, "domain");
	if (x) {
		const char *dom = json_is_string(x) ? json_string_value(x) : NULL;

		if (!dom || strlen(dom) != json_string_length(x) || !td_domain_valid(dom, &why)) {
			snprintf(err, errlen, "vnf %s: --domain '%.63s' %s", name, dom ? dom : "",
				 dom ? why : "is not a string");
			return -EINVAL;
		}
		strcpy(v->domain, dom);
	}
	return 0;
}

int td_chain_from_json(json_t *o, struct td_chain *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "name", "vm", "dir", "sla", "hops", NULL };
	const char *why, *name, *s;
	json_t *x, *hop, *e;
	size_t h, k;

	memset(c, 0, sizeof(*c));
	if (!json_is_object(o)) {
		snprintf(err, errlen, "a chain is not an object");
		return -EINVAL;
	}
	x = json_object_get(o, "name");
	name = json_is_string(x) ? json_string_value(x) : NULL;
	if (!name || strlen(name) != json_string_length(x) || !td_objname_valid(name, &why)) {
		snprintf(err, errlen, "chain name '%.40s' %s", name ? name : "",
			 name ? why : "is missing");
		return -EINVAL;
	}
	strcpy(c->name, name);
	if (only_keys(o, keys, "chain", err, errlen))
		return -EINVAL;
	x = json_object_get(o, "vm");
	s = json_is_string(x) ? json_string_value(x) : NULL;
	if (!s || strlen(s) != json_string_length(x) || !td_name_valid(s, &why)) {
		snprintf(err, errlen, "chain %s: --vm '%.40s' %s", name, s ? s : "",
			 s ? why : "is missing");
		return -EINVAL;
	}
	strcpy(c->vm, s);
	x = json_object_get(o, "dir");
	s = json_is_string(x) ? json_string_value(x) : "";
	if (strcmp(s, "in") && strcmp(s, "out")) {
		snprintf(err, errlen, "chain %s: --dir must be in or out", name);
		return -EINVAL;
	}
	c->dir = !strcmp(s, "in") ? TD_DIR_IN : TD_DIR_OUT;
	if (get_uint(o, "sla", 0, TD_MAX_RATE, 0, &c->sla)) {
		snprintf(err, errlen, "chain %s: --sla must be 0 to %llu packets/s", name,
			 (unsigned long long)TD_MAX_RATE);
		return -EINVAL;
	}
	x = json_object_get(o, "hops");
	if (!json_is_array(x) || json_array_size(x) == 0 || json_array_size(x) > TD_MAX_HOPS) {
		snprintf(err, errlen, "chain %s: 1 to %d --hop options are needed", name, TD_MAX_HOPS);
		return -EINVAL;
	}
	json_array_foreach(x, h, hop) {
		if (!json_is_array(hop) || json_array_size(hop) == 0 ||
		    json_array_size(hop) > TD_MAX_PER_HOP) {
			snprintf(err, errlen, "chain %s: hop %zu must name 1 to %d VNFs", name, h + 1,
				 TD_MAX_PER_HOP);
			return -EINVAL;
		}
		json_array_foreach(hop, k, e) {
			s = json_is_string(e) ? json_string_value(e) : NULL;
			if (!s || strlen(s) != json_string_length(e) || !td_objname_valid(s, &why)) {
				snprintf(err, errlen, "chain %s: hop %zu: VNF name '%.40s' %s", name,
					 h + 1, s ? s : "", s ? why : "is not a string");
				return -EINVAL;
			}
			if (td_chain_uses(c, s)) {
				snprintf(err, errlen, "chain %s: VNF '%s' appears twice", name, s);
				return -EINVAL;
			}
			strcpy(c->hop[h][k], s);
			c->hop_len[h] = (unsigned int)k + 1;
		}
		c->nhops = (unsigned int)h + 1;
	}
	return 0;
}

int td_state_check(const struct td_state *cst, char *err, size_t errlen)
{
	struct td_state *st = (struct td_state *)cst;	/* the finders do not write */

	for (unsigned int i = 0; i < st->nvnfs; i++) {
		const struct td_vnf *v = &st->vnfs[i];

		if (td_state_find_vnf(st, v->name) != v) {
			snprintf(err, errlen, "vnf '%s' is defined twice", v->name);
			return -EINVAL;
		}
		/* a VNF's guest inspects other VMs: never the guest of one of them */
		for (unsigned int k = 0; v->domain[0] && k < st->nvms; k++)
			if (!strcmp(st->vms[k].domain, v->domain)) {
				snprintf(err, errlen, "vnf %s: --domain %s is the libvirt domain of vm %s",
					 v->name, v->domain, st->vms[k].name);
				return -EINVAL;
			}
	}
	for (unsigned int i = 0; i < st->nchains; i++) {
		const struct td_chain *c = &st->chains[i];

		if (td_state_find_chain(st, c->name) != c) {
			snprintf(err, errlen, "chain '%s' is defined twice", c->name);
			return -EINVAL;
		}
		if (!td_state_find_vm(st, c->vm)) {
			snprintf(err, errlen, "chain %s: no vm named '%s'", c->name, c->vm);
			return -EINVAL;
		}
		if (td_state_find_dir(st, c->vm, c->dir) != c) {
			snprintf(err, errlen, "chain %s: vm %s already has the %s chain '%s'", c->name,
				 c->vm, td_dir_name(c->dir), td_state_find_dir(st, c->vm, c->dir)->name);
			return -EINVAL;
		}
		for (unsigned int h = 0; h < c->nhops; h++)
			for (unsigned int k = 0; k < c->hop_len[h]; k++)
				if (!td_state_find_vnf(st, c->hop[h][k])) {
					snprintf(err, errlen, "chain %s: hop %u names unknown vnf '%s'",
						 c->name, h + 1, c->hop[h][k]);
					return -EINVAL;
				}
	}
	for (unsigned int i = 0; i < st->ninsts; i++) {
		const struct td_inst *in = &st->insts[i];

		if (!td_state_find_vnf(st, in->vnf) || !td_state_find_vm(st, in->vm) ||
		    td_state_find_inst(st, in->vnf, in->vm) != in) {
			snprintf(err, errlen, "instance of vnf '%s' for vm '%s' is unknown or twice",
				 in->vnf, in->vm);
			return -EINVAL;
		}
	}
	return 0;
}

json_t *td_vm_json(const struct td_vm *vm)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:i}",
			      "name", vm->name, "ip", vm->ip.text, "netns", vm->netns,
			      "veth", vm->veth, "cgroup", vm->cgroup, "region", vm->region,
			      "region_size", (json_int_t)vm->region_size,
			      "slot_size", (json_int_t)vm->slot_size,
			      "toe_pid", (int)vm->toe_pid);

	/* only VMs that have a libvirt domain carry the field */
	if (o && vm->domain[0])
		json_object_set_new(o, "domain", json_string(vm->domain));
	/* and the VM link's wait mode and pid (td_link.h) */
	if (o && vm->domain[0] && vm->wait != TD_WAIT_NONE) {
		json_object_set_new(o, "wait", json_string(vm->wait == TD_WAIT_POLL ? "poll" : "doorbell"));
		json_object_set_new(o, "link_pid", json_integer(vm->link_pid));
	}
	if (o)
		td_guest_to_json(vm->guest_mode, vm->guest_group, o);
	return o;
}

static int copy_str(json_t *o, const char *key, char *dst, size_t size, bool required)
{
	json_t *v = json_object_get(o, key);
	const char *s;

	if (!v) {
		dst[0] = '\0';
		return required ? -EINVAL : 0;
	}
	if (!json_is_string(v))
		return -EINVAL;
	s = json_string_value(v);
	if (strlen(s) >= size || strlen(s) != json_string_length(v))
		return -EINVAL;
	strcpy(dst, s);
	return 0;
}

static int vm_from_json(json_t *o, struct td_vm *vm, const char **why)
{
	char ip[64];
	json_t *v;

	memset(vm, 0, sizeof(*vm));
	if (!json_is_object(o)) {
		*why = "a VM entry is not an object";
		return -EINVAL;
	}
	if (copy_str(o, "name", vm->name, sizeof(vm->name), true) ||
	    !td_name_valid(vm->name, why)) {
		*why = "a VM has an invalid name";
		return -EINVAL;
	}
	if (copy_str(o, "ip", ip, sizeof(ip), true) || td_addr_parse(ip, &vm->ip, why) ||
	    copy_str(o, "netns", vm->netns, sizeof(vm->netns), true) ||
	    copy_str(o, "veth", vm->veth, sizeof(vm->veth), true) ||
	    copy_str(o, "cgroup", vm->cgroup, sizeof(vm->cgroup), true) ||
	    copy_str(o, "region", vm->region, sizeof(vm->region), true)) {
		*why = "a VM entry has a missing or invalid field";
		return -EINVAL;
	}
	v = json_object_get(o, "region_size");
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		*why = "a VM entry has an invalid region_size";
		return -EINVAL;
	}
	vm->region_size = (uint64_t)json_integer_value(v);
	/* absent: a state written before slot sizes, whose TOEs ran 2 KiB */
	v = json_object_get(o, "slot_size");
	vm->slot_size = TD_SLOT_SIZE_OLD;
	if (v && (!json_is_integer(v) || !td_slot_size_valid(json_integer_value(v)))) {
		*why = "a VM entry has an invalid slot_size";
		return -EINVAL;
	}
	if (v)
		vm->slot_size = (uint32_t)json_integer_value(v);
	v = json_object_get(o, "toe_pid");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
		  json_integer_value(v) > 4194304)) {
		*why = "a VM entry has an invalid toe_pid";
		return -EINVAL;
	}
	vm->toe_pid = v ? (pid_t)json_integer_value(v) : 0;
	if (copy_str(o, "domain", vm->domain, sizeof(vm->domain), false) ||
	    (json_object_get(o, "domain") && !td_domain_valid(vm->domain, why))) {
		*why = "a VM entry has an invalid domain";
		return -EINVAL;
	}
	/* a domain VM of an older state has its region as ivshmem-plain: poll */
	v = json_object_get(o, "wait");
	vm->wait = vm->domain[0] ? TD_WAIT_POLL : TD_WAIT_NONE;
	if (v && (!vm->domain[0] || !json_is_string(v) ||
		  (strcmp(json_string_value(v), "poll") && strcmp(json_string_value(v), "doorbell")))) {
		*why = "a VM entry has an invalid wait mode";
		return -EINVAL;
	}
	if (v && !strcmp(json_string_value(v), "doorbell"))
		vm->wait = TD_WAIT_DOORBELL;
	v = json_object_get(o, "link_pid");
	if (v && (!vm->domain[0] || !json_is_integer(v) || json_integer_value(v) < 0 ||
		  json_integer_value(v) > 4194304)) {
		*why = "a VM entry has an invalid link_pid";
		return -EINVAL;
	}
	vm->link_pid = v ? (pid_t)json_integer_value(v) : 0;
	/* the form only: a group deleted since makes the TOE refuse to start */
	if (td_guest_from_json(o, false, &vm->guest_mode, vm->guest_group, NULL, 0) ||
	    (vm->domain[0] && (vm->guest_mode || vm->guest_group[0]))) {
		*why = "a VM entry has an invalid guest_mode or guest_group";
		return -EINVAL;
	}
	return 0;
}

/* VNFs, chains and instances; absent lists are empty (older states). */
static int objects_from_json(json_t *root, struct td_state *st, char *err, size_t errlen)
{
	json_t *vnfs = json_object_get(root, "vnfs"), *chains = json_object_get(root, "chains");
	json_t *insts = json_object_get(root, "instances"), *v;
	size_t i;

	if ((vnfs && (!json_is_array(vnfs) || json_array_size(vnfs) > TD_MAX_VNFS)) ||
	    (chains && (!json_is_array(chains) || json_array_size(chains) > TD_MAX_CHAINS)) ||
	    (insts && (!json_is_array(insts) || json_array_size(insts) > TD_MAX_INSTS))) {
		snprintf(err, errlen, "\"vnfs\", \"chains\" or \"instances\" is not a list within the limits");
		return -EINVAL;
	}
	json_array_foreach(vnfs, i, v) {
		if (td_vnf_from_json(v, true, &st->vnfs[st->nvnfs], err, errlen))
			return -EINVAL;
		st->nvnfs++;
	}
	json_array_foreach(chains, i, v) {
		if (td_chain_from_json(v, &st->chains[st->nchains], err, errlen))
			return -EINVAL;
		st->nchains++;
	}
	json_array_foreach(insts, i, v) {
		struct td_inst *in = &st->insts[st->ninsts];
		json_t *pid = json_object_get(v, "pid");
		const char *why;

		memset(in, 0, sizeof(*in));
		if (!json_is_object(v) ||
		    json_object_size(v) != (json_object_get(v, "domain") ? 4u : 3u) ||
		    copy_str(v, "domain", in->domain, sizeof(in->domain), false) ||
		    (in->domain[0] && !td_domain_valid(in->domain, &why)) ||
		    (json_object_get(v, "domain") && !in->domain[0]) ||
		    copy_str(v, "vnf", in->vnf, sizeof(in->vnf), true) ||
		    !td_objname_valid(in->vnf, &why) ||
		    copy_str(v, "vm", in->vm, sizeof(in->vm), true) || !td_name_valid(in->vm, &why) ||
		    !json_is_integer(pid) || json_integer_value(pid) < 0 ||
		    json_integer_value(pid) > 4194304) {
			snprintf(err, errlen, "instance %zu has a missing or invalid field", i);
			return -EINVAL;
		}
		in->pid = (pid_t)json_integer_value(pid);
		st->ninsts++;
	}
	return td_state_check(st, err, errlen);
}

static int from_json(json_t *root, const char *name, struct td_state *st, char *err,
		     size_t errlen)
{
	const char *why = NULL;
	json_t *vms, *v;
	size_t i;

	v = json_object_get(root, "version");
	if (!json_is_object(root) || !json_is_integer(v) || json_integer_value(v) != STATE_VERSION) {
		snprintf(err, errlen, "%s: unknown state version", name);
		return -EBADMSG;
	}
	vms = json_object_get(root, "vms");
	if (!json_is_array(vms) || json_array_size(vms) > TD_MAX_VMS) {
		snprintf(err, errlen, "%s: \"vms\" is not a list of at most %d", name, TD_MAX_VMS);
		return -EBADMSG;
	}
	json_array_foreach(vms, i, v) {
		struct td_vm *vm = &st->vms[st->nvms];

		why = NULL;
		if (vm_from_json(v, vm, &why) || td_state_find_vm(st, vm->name)) {
			snprintf(err, errlen, "%s: VM %zu: %s", name, i, why ? why : "duplicate name");
			memset(st, 0, sizeof(*st));
			return -EBADMSG;
		}
		st->nvms++;
	}
	if (objects_from_json(root, st, err, errlen)) {
		char msg[400];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "%s: %s", name, msg);
		memset(st, 0, sizeof(*st));
		return -EBADMSG;
	}
	return 0;
}

int td_state_parse(const char *text, size_t len, const char *name, struct td_state *st,
		   char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(st, 0, sizeof(*st));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "%s:%d: %s", name, jerr.line, jerr.text);
		return -EBADMSG;
	}
	rc = from_json(root, name, st, err, errlen);
	json_decref(root);
	return rc;
}

int td_state_load(const char *path, struct td_state *st, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(st, 0, sizeof(*st));
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (access(path, F_OK) && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
		return -EBADMSG;
	}
	rc = from_json(root, path, st, err, errlen);
	json_decref(root);
	return rc;
}

int td_state_save(const char *path, const struct td_state *st)
{
	char tmp[PATH_MAX + 16], dir[PATH_MAX];
	json_t *root, *vms = json_array(), *vnfs = json_array(), *chains = json_array();
	json_t *insts = json_array();
	int fd, err = 0;
	char *text;
	size_t len;

	for (unsigned int i = 0; i < st->nvms; i++)
		json_array_append_new(vms, td_vm_json(&st->vms[i]));
	for (unsigned int i = 0; i < st->nvnfs; i++)
		json_array_append_new(vnfs, td_vnf_json(&st->vnfs[i]));
	for (unsigned int i = 0; i < st->nchains; i++)
		json_array_append_new(chains, td_chain_json(&st->chains[i]));
	for (unsigned int i = 0; i < st->ninsts; i++) {
		json_t *in = json_pack("{s:s, s:s, s:i}", "vnf", st->insts[i].vnf, "vm",
				       st->insts[i].vm, "pid", (int)st->insts[i].pid);

		if (in && st->insts[i].domain[0])
			json_object_set_new(in, "domain", json_string(st->insts[i].domain));
		json_array_append_new(insts, in);
	}
	root = json_pack("{s:i, s:o, s:o, s:o, s:o}", "version", STATE_VERSION, "vms", vms,
			 "vnfs", vnfs, "chains", chains, "instances", insts);
	text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
	json_decref(root);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd))
		err = -errno ? -errno : -EIO;
	free(text);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	/* Make the rename itself durable. */
	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}
