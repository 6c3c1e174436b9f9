// SPDX-License-Identifier: MIT
/* Topology files; see sc_topo.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_topo.h"

#define MAX_LINE 4096
#define MAX_WORDS 64

int sc_parse_size(const char *s, long long *out)
{
	char *end;
	long long v, mul = 1;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || v <= 0)
		return -1;
	if (*end) {
		switch (*end) {
		case 'K': case 'k': mul = 1LL << 10; break;
		case 'M': case 'm': mul = 1LL << 20; break;
		case 'G': case 'g': mul = 1LL << 30; break;
		default: return -1;
		}
		if (end[1])
			return -1;
	}
	if (v > (1LL << 50) / mul)
		return -1;
	*out = v * mul;
	return 0;
}

int sc_parse_uint(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

json_t *sc_parse_hop(const char *s)
{
	json_t *a = json_array();
	const char *p = s;

	for (;;) {
		size_t n = strcspn(p, ",");

		if (n == 0) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, json_stringn(p, n));
		if (!p[n])
			return a;
		p += n + 1;
	}
}

struct ctx {
	const char *file;
	unsigned int line;
	char *err;
	size_t errlen;
};

static json_t *fail(struct ctx *c, json_t *o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static json_t *fail(struct ctx *c, json_t *o, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%u: %s", c->file, c->line, msg);
	json_decref(o);
	return NULL;
}

/* One "key=value" word of an object of kind @what into @o. */
static json_t *word(struct ctx *c, const char *what, char *w, const char *dir, json_t *o)
{
	char *eq = strchr(w, '='), *val;
	long long n;

	if (!eq || eq == w || !eq[1])
		return fail(c, o, "%s: expected KEY=VALUE, got '%.60s'", what, w);
	*eq = '\0';
	val = eq + 1;
	if (strcmp(w, "hop") && strcmp(w, "arg")) {
		const char *key = !strcmp(w, "region-size") ? "region_size" :
				  !strcmp(w, "slot-size") ? "slot_size" :
				  !strcmp(w, "guest-mode") ? "guest_mode" :
				  !strcmp(w, "guest-group") ? "guest_group" :
				  !strcmp(w, "on-failure") ? "on_failure" : w;

		if (json_object_get(o, key))
			return fail(c, o, "%s: '%s' given twice", what, w);
	}
	if (!strcmp(what, "vm")) {
		if (!strcmp(w, "ip"))
			json_object_set_new(o, "ip", json_string(val));
		else if (!strcmp(w, "region-size")) {
			if (sc_parse_size(val, &n))
				return fail(c, o, "vm: region-size '%.40s' is not a size such as 16M", val);
			json_object_set_new(o, "region_size", json_integer(n));
		} else if (!strcmp(w, "slot-size")) {
			if (sc_parse_size(val, &n))
				return fail(c, o, "vm: slot-size '%.40s' is not a size such as 8K", val);
			json_object_set_new(o, "slot_size", json_integer(n));
		} else if (!strcmp(w, "guest-mode") || !strcmp(w, "guest-group"))
			/* tochaind validates both */
			json_object_set_new(o, w[6] == 'm' ? "guest_mode" : "guest_group",
					    json_string(val));
		else
			return fail(c, o, "vm: unknown key '%.40s' (ip, region-size, slot-size, "
				    "guest-mode, guest-group)", w);
	} else if (!strcmp(what, "vnf")) {
		if (!strcmp(w, "kind"))
			json_object_set_new(o, "kind", json_string(val));
		else if (!strcmp(w, "threads") || !strcmp(w, "rate")) {
			if (sc_parse_uint(val, 1, 1000000000, &n))
				return fail(c, o, "vnf: %s '%.40s' is not a positive number", w, val);
			json_object_set_new(o, w, json_integer(n));
		} else if (!strcmp(w, "rules") || !strcmp(w, "vars")) {
			char path[4096];

			if (val[0] == '/')
				snprintf(path, sizeof(path), "%s", val);
			else
				snprintf(path, sizeof(path), "%s/%s", dir, val);
			json_object_set_new(o, w, json_string(path));
		} else if (!strcmp(w, "on-failure"))
			json_object_set_new(o, "on_failure", json_string(val));
		else if (!strcmp(w, "domain"))
			json_object_set_new(o, "domain", json_string(val));
		else if (!strcmp(w, "arg")) {
			json_t *a = json_object_get(o, "args");

			if (!a)
				json_object_set_new(o, "args", a = json_array());
			json_array_append_new(a, json_string(val));
		} else
			return fail(c, o, "vnf: unknown key '%.40s' (kind, threads, rate, rules, vars, on-failure, arg, domain)", w);
	} else {
		if (!strcmp(w, "vm") || !strcmp(w, "dir"))
			json_object_set_new(o, w, json_string(val));
		else if (!strcmp(w, "sla")) {
			if (sc_parse_uint(val, 0, 1000000000, &n))
				return fail(c, o, "chain: sla '%.40s' is not a number", val);
			json_object_set_new(o, "sla", json_integer(n));
		} else if (!strcmp(w, "hop")) {
			json_t *hop = sc_parse_hop(val), *hops = json_object_get(o, "hops");

			if (!hop)
				return fail(c, o, "chain: hop '%.40s' has an empty VNF name", val);
			if (!hops)
				json_object_set_new(o, "hops", hops = json_array());
			json_array_append_new(hops, hop);
		} else
			return fail(c, o, "chain: unknown key '%.40s' (vm, dir, hop, sla)", w);
	}
	return o;
}

json_t *sc_topo_parse(const char *text, size_t len, const char *file, const char *dir,
		      char *err, size_t errlen)
{
	json_t *vms = json_array(), *vnfs = json_array(), *chains = json_array();
	json_t *topo = json_pack("{s:o, s:o, s:o}", "vms", vms, "vnfs", vnfs, "chains", chains);
	struct ctx c = { .file = file, .err = err, .errlen = errlen };
	size_t pos = 0;

	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file", file);
		json_decref(topo);
		return NULL;
	}
	while (pos < len) {
		char line[MAX_LINE + 1], *words[MAX_WORDS], *save = NULL, *w;
		size_t end = pos;
		int nw = 0;
		json_t *o;

		while (end < len && text[end] != '\n')
			end++;
		c.line++;
		if (end - pos > MAX_LINE)
			return fail(&c, topo, "line longer than %d characters", MAX_LINE);
		memcpy(line, text + pos, end - pos);
		line[end - pos] = '\0';
		pos = end + 1;
		line[strcspn(line, "#")] = '\0';
		for (w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
			if (nw == MAX_WORDS)
				return fail(&c, topo, "more than %d words", MAX_WORDS);
			words[nw++] = w;
		}
		if (nw == 0)
			continue;
		if (strcmp(words[0], "vm") && strcmp(words[0], "vnf") && strcmp(words[0], "chain"))
			return fail(&c, topo, "expected vm, vnf or chain, got '%.40s'", words[0]);
		if (nw < 2 || strchr(words[1], '='))
			return fail(&c, topo, "%s: a NAME is needed after '%s'", words[0], words[0]);
		o = json_pack("{s:s, s:i}", "name", words[1], "line", (int)c.line);
		for (int i = 2; i < nw; i++)
			if (!(o = word(&c, words[0], words[i], dir, o))) {
				json_decref(topo);
				return NULL;
			}
		json_array_append_new(!strcmp(words[0], "vm") ? vms : !strcmp(words[0], "vnf") ? vnfs : chains, o);
	}
	return topo;
}
