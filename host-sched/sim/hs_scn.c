// SPDX-License-Identifier: MIT
/*
 * Scenario parser.  Trusts nothing in the text: every number is checked
 * for syntax and range, every name for charset, length and uniqueness,
 * every reference for existence; limits keep a run bounded.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_chain.h"
#include "hs_early.h"
#include "hs_scn.h"

#define MAX_WORDS 32
#define MAX_TICKS 2000000.0	/* per run: keeps a scenario bounded */
#define MAX_STEPS 20000000.0	/* ticks * slices per run */

struct ctx {
	const char *fname;
	unsigned line;
	char *err;
	size_t errlen;
	struct hs_scn *s;
	uint32_t cap_vnf, cap_vm, cap_chain, cap_load, cap_group;
};

static int fail(struct ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct ctx *c, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->line)
		snprintf(c->err, c->errlen, "%s:%u: %s", c->fname, c->line, msg);
	else
		snprintf(c->err, c->errlen, "%s: %s", c->fname, msg);
	return -EINVAL;
}

static int grow(struct ctx *c, void **arr, uint32_t *cap, uint32_t n,
		size_t elem)
{
	void *p;
	uint32_t ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	p = realloc(*arr, (size_t)ncap * elem);
	if (!p) {
		fail(c, "out of memory");
		return -ENOMEM;
	}
	memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

static int parse_u32(struct ctx *c, const char *what, const char *v,
		     uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	if (!isdigit((unsigned char)v[0]))
		return fail(c, "%s: '%s' is not a whole number", what, v);
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return fail(c, "%s: '%s' is not a whole number", what, v);
	if (x < lo || x > hi)
		return fail(c, "%s: %s out of range %" PRIu32 "..%" PRIu32,
			    what, v, lo, hi);
	*out = (uint32_t)x;
	return 0;
}

static int parse_dbl(struct ctx *c, const char *what, const char *v,
		     double lo, double hi, double *out)
{
	char *end;
	double x;

	errno = 0;
	if (!(isdigit((unsigned char)v[0]) || v[0] == '.'))
		return fail(c, "%s: '%s' is not a number", what, v);
	x = strtod(v, &end);
	if (errno || *end || !isfinite(x))
		return fail(c, "%s: '%s' is not a number", what, v);
	if (x < lo || x > hi)
		return fail(c, "%s: %s out of range %g..%g", what, v, lo, hi);
	*out = x;
	return 0;
}

static int check_name(struct ctx *c, const char *what, const char *n,
		      size_t room)
{
	size_t i, len = strlen(n);

	if (len == 0 || len >= room)
		return fail(c, "%s name '%.60s' must have 1..%zu characters",
			    what, n, room - 1);
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)n[i]) && !strchr("_.-", n[i]))
			return fail(c, "%s name '%.60s': only letters, digits, '_', '.', '-'",
				    what, n);
	return 0;
}

static int find_vnf(const struct hs_scn *s, const char *n)
{
	uint32_t i;

	for (i = 0; i < s->nvnf; i++)
		if (!strcmp(s->vnf[i].name, n))
			return (int)i;
	return -1;
}

static int find_vm(const struct hs_scn *s, const char *n)
{
	uint32_t i;

	for (i = 0; i < s->nvm; i++)
		if (!strcmp(s->vm[i].name, n))
			return (int)i;
	return -1;
}

static int find_group(const struct hs_scn *s, const char *n)
{
	uint32_t i;

	for (i = 0; i < s->nvm_group; i++)
		if (!strcmp(s->vm_group[i].name, n))
			return (int)i;
	return -1;
}

static int find_chain(const struct hs_scn *s, const char *n)
{
	uint32_t i;

	for (i = 0; i < s->nchain; i++)
		if (!strcmp(s->chain[i].name, n))
			return (int)i;
	return -1;
}

static int find_load(const struct hs_scn *s, const char *n)
{
	uint32_t i;

	for (i = 0; i < s->nload; i++)
		if (!strcmp(s->load[i].name, n))
			return (int)i;
	return -1;
}

/* "key=value": returns value or NULL if @w is not of that form for @key. */
static const char *opt(const char *w, const char *key)
{
	size_t k = strlen(key);

	return strncmp(w, key, k) == 0 && w[k] == '=' ? w + k + 1 : NULL;
}

static int unknown_opt(struct ctx *c, const char *kw, const char *w)
{
	return fail(c, "%s: unknown option '%.60s'", kw, w);
}

/* Member name of a counted group: NAME-i, checked for length. */
static int member_name(struct ctx *c, char *dst, const char *base, uint32_t i,
		       uint32_t count)
{
	int r;

	if (count == 1)
		r = snprintf(dst, HS_SCN_NAME, "%s", base);
	else
		r = snprintf(dst, HS_SCN_NAME, "%s-%" PRIu32, base, i);
	if (r < 0 || r >= HS_SCN_NAME)
		return fail(c, "name '%s' with its count suffix is too long", base);
	return 0;
}

static int kw_vnf(struct ctx *c, char **w, int nw)
{
	struct hs_scn *s = c->s;
	struct hs_scn_vnf v = { .threads = 1 };
	bool have_f = false;
	uint32_t f;
	int i, rc;

	if (nw < 2)
		return fail(c, "vnf: missing name (vnf NAME f=PPS [threads=N] [partition=sync|service])");
	if ((rc = check_name(c, "vnf", w[1], HS_SCN_NAME)))
		return rc;
	if (find_vnf(s, w[1]) >= 0)
		return fail(c, "vnf %s: defined twice", w[1]);
	snprintf(v.name, sizeof(v.name), "%s", w[1]);
	for (i = 2; i < nw; i++) {
		const char *x;

		if ((x = opt(w[i], "f"))) {
			if ((rc = parse_u32(c, "vnf f", x, 1, 1000000000, &f)))
				return rc;
			v.f_pps = f;
			have_f = true;
		} else if ((x = opt(w[i], "threads"))) {
			if ((rc = parse_u32(c, "vnf threads", x, 1, HS_MAX_THREADS,
					    &v.threads)))
				return rc;
		} else if ((x = opt(w[i], "partition"))) {
			if (!strcmp(x, "service"))
				v.service = true;
			else if (strcmp(x, "sync"))
				return fail(c, "vnf partition: '%.60s' is neither sync nor service", x);
		} else {
			return unknown_opt(c, "vnf", w[i]);
		}
	}
	if (!have_f)
		return fail(c, "vnf %s: f=PPS is required", v.name);
	if ((rc = grow(c, (void **)&s->vnf, &c->cap_vnf, s->nvnf, sizeof(v))))
		return rc;
	s->vnf[s->nvnf++] = v;
	return 0;
}

static int kw_vm(struct ctx *c, char **w, int nw)
{
	struct hs_scn *s = c->s;
	uint32_t nvcpu = 1, count = 1, k, g;
	double rx = 10000, busy = 0;
	int i, rc;

	if (nw < 2)
		return fail(c, "vm: missing name (vm NAME [vcpus=N] [rx=PPS] [busy=0..1] [count=N])");
	if ((rc = check_name(c, "vm", w[1], HS_SCN_NAME)))
		return rc;
	if (find_vm(s, w[1]) >= 0 || find_group(s, w[1]) >= 0)
		return fail(c, "vm %s: defined twice", w[1]);
	for (i = 2; i < nw; i++) {
		const char *x;

		if ((x = opt(w[i], "vcpus"))) {
			if ((rc = parse_u32(c, "vm vcpus", x, 1, HS_MAX_VM_VCPUS, &nvcpu)))
				return rc;
		} else if ((x = opt(w[i], "rx"))) {
			if ((rc = parse_dbl(c, "vm rx", x, 1, 1e9, &rx)))
				return rc;
		} else if ((x = opt(w[i], "busy"))) {
			if ((rc = parse_dbl(c, "vm busy", x, 0, 1, &busy)))
				return rc;
		} else if ((x = opt(w[i], "count"))) {
			if ((rc = parse_u32(c, "vm count", x, 1, HS_SCN_MAX_COUNT, &count)))
				return rc;
		} else {
			return unknown_opt(c, "vm", w[i]);
		}
	}
	if (s->nvm + count > HS_SCN_MAX_COUNT)
		return fail(c, "vm: more than %d VMs", HS_SCN_MAX_COUNT);
	if ((rc = grow(c, (void **)&s->vm_group, &c->cap_group, s->nvm_group,
		       sizeof(*s->vm_group))))
		return rc;
	g = s->nvm_group;
	snprintf(s->vm_group[g].name, HS_SCN_NAME, "%s", w[1]);
	s->vm_group[g].first = s->nvm;
	s->vm_group[g].count = count;
	s->vm_group[g].next = 0;
	s->nvm_group++;
	for (k = 0; k < count; k++) {
		struct hs_scn_vm *v;

		if ((rc = grow(c, (void **)&s->vm, &c->cap_vm, s->nvm, sizeof(*v))))
			return rc;
		v = &s->vm[s->nvm];
		if ((rc = member_name(c, v->name, w[1], k, count)))
			return rc;
		if (count > 1 && find_vm(s, v->name) >= 0)
			return fail(c, "vm %s: defined twice", v->name);
		v->nvcpu = nvcpu;
		v->rx_pps = rx;
		v->busy = busy;
		v->group = g;
		s->nvm++;
	}
	return 0;
}

static int parse_hop(struct ctx *c, struct hs_scn_chain *ch, const char *x)
{
	char buf[512], *save = NULL, *tok;
	uint32_t h = ch->nhop;
	int v;

	if (h >= HS_SCN_MAX_HOPS)
		return fail(c, "chain: more than %d hops", HS_SCN_MAX_HOPS);
	if (strlen(x) >= sizeof(buf))
		return fail(c, "chain hop: list too long");
	strcpy(buf, x);
	ch->hop_n[h] = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t k;

		v = find_vnf(c->s, tok);
		if (v < 0)
			return fail(c, "chain hop: unknown vnf '%.60s' (define it with a vnf line first)", tok);
		for (k = 0; k < ch->hop_n[h]; k++)
			if (ch->hop_vnf[h][k] == (uint32_t)v)
				return fail(c, "chain hop: vnf '%s' twice in one hop", tok);
		if (ch->hop_n[h] >= HS_SCN_MAX_PER_HOP)
			return fail(c, "chain hop: more than %d VNFs in one hop",
				    HS_SCN_MAX_PER_HOP);
		ch->hop_vnf[h][ch->hop_n[h]++] = (uint32_t)v;
	}
	if (ch->hop_n[h] == 0)
		return fail(c, "chain hop: empty");
	ch->nhop++;
	return 0;
}

uint32_t hs_scn_sync_vnfs(const struct hs_scn *scn, const struct hs_scn_chain *c)
{
	uint32_t h, k, n = 0;

	for (h = 0; h < c->nhop; h++)
		for (k = 0; k < c->hop_n[h]; k++)
			n += !scn->vnf[c->hop_vnf[h][k]].service;
	return n;
}

static int kw_chain(struct ctx *c, char **w, int nw)
{
	struct hs_scn *s = c->s;
	struct hs_scn_chain ch;
	const char *vmname = NULL;
	uint32_t count = 1, k, sla = 0;
	bool have_sla = false, have_qcap = false;
	int i, rc, vm = -1, grp = -1;

	memset(&ch, 0, sizeof(ch));
	if (nw < 2)
		return fail(c, "chain: missing name (chain NAME vm=VM sla=PPS hop=VNF[,VNF] ...)");
	if ((rc = check_name(c, "chain", w[1], HS_SCN_NAME)))
		return rc;
	for (i = 2; i < nw; i++) {
		const char *x;

		if ((x = opt(w[i], "vm"))) {
			vmname = x;
		} else if ((x = opt(w[i], "sla"))) {
			if ((rc = parse_u32(c, "chain sla", x, 1, 1000000000, &sla)))
				return rc;
			have_sla = true;
		} else if ((x = opt(w[i], "hop"))) {
			if ((rc = parse_hop(c, &ch, x)))
				return rc;
		} else if ((x = opt(w[i], "qcap"))) {
			if ((rc = parse_dbl(c, "chain qcap", x, 1, 1e12, &ch.qcap)))
				return rc;
			have_qcap = true;
		} else if ((x = opt(w[i], "count"))) {
			if ((rc = parse_u32(c, "chain count", x, 1, HS_SCN_MAX_COUNT, &count)))
				return rc;
		} else {
			return unknown_opt(c, "chain", w[i]);
		}
	}
	if (!vmname)
		return fail(c, "chain %s: vm=VM is required", w[1]);
	if (!have_sla)
		return fail(c, "chain %s: sla=PPS is required", w[1]);
	if (ch.nhop == 0)
		return fail(c, "chain %s: at least one hop=VNF[,VNF] is required", w[1]);
	ch.sla_pps = sla;
	if (hs_scn_sync_vnfs(s, &ch) > HS_MAX_VNFS)
		return fail(c, "chain %s: more than %d VNFs on the synchronous partition",
			    w[1], HS_MAX_VNFS);
	if (!have_qcap)
		ch.qcap = 2.0 * (double)sla;	/* two seconds of SLA traffic */
	vm = find_vm(s, vmname);
	if (vm < 0) {
		grp = find_group(s, vmname);
		if (grp < 0)
			return fail(c, "chain %s: unknown vm '%.60s'", w[1], vmname);
	}
	if (s->nchain + count > HS_SCN_MAX_COUNT)
		return fail(c, "chain: more than %d chains", HS_SCN_MAX_COUNT);
	for (k = 0; k < count; k++) {
		struct hs_scn_chain *d;

		if ((rc = grow(c, (void **)&s->chain, &c->cap_chain, s->nchain,
			       sizeof(*d))))
			return rc;
		d = &s->chain[s->nchain];
		*d = ch;
		if ((rc = member_name(c, d->name, w[1], k, count)))
			return rc;
		if (find_chain(s, d->name) >= 0)
			return fail(c, "chain %s: defined twice", d->name);
		if (grp >= 0) {
			/* next member of the VM group, round the group */
			struct hs_scn_vmgroup *gr = &s->vm_group[grp];

			d->vm = gr->first + gr->next++ % gr->count;
		} else {
			d->vm = (uint32_t)vm;
		}
		s->nchain++;
	}
	return 0;
}

static int kw_load(struct ctx *c, char **w, int nw)
{
	struct hs_scn *s = c->s;
	struct hs_scn_load l = { .scale = 1.0 };
	int i, rc;

	if (nw < 2)
		return fail(c, "load: missing name (load NAME [scale=X] [burst=ON_MS/OFF_MS])");
	if ((rc = check_name(c, "load", w[1], HS_SCN_NAME)))
		return rc;
	if (find_load(s, w[1]) >= 0)
		return fail(c, "load %s: defined twice", w[1]);
	snprintf(l.name, sizeof(l.name), "%s", w[1]);
	for (i = 2; i < nw; i++) {
		const char *x;

		if ((x = opt(w[i], "scale"))) {
			if ((rc = parse_dbl(c, "load scale", x, 0, 1000, &l.scale)))
				return rc;
		} else if ((x = opt(w[i], "burst"))) {
			char on[64], *slash;

			if (strlen(x) >= sizeof(on) || !(slash = strchr(strcpy(on, x), '/')))
				return fail(c, "load burst: '%.60s' is not ON_MS/OFF_MS", x);
			*slash = '\0';
			if ((rc = parse_dbl(c, "load burst on", on, 0.001, 1e6, &l.on_ms)) ||
			    (rc = parse_dbl(c, "load burst off", slash + 1, 0, 1e6, &l.off_ms)))
				return rc;
		} else {
			return unknown_opt(c, "load", w[i]);
		}
	}
	if ((rc = grow(c, (void **)&s->load, &c->cap_load, s->nload, sizeof(l))))
		return rc;
	s->load[s->nload++] = l;
	return 0;
}

static int kw_setting(struct ctx *c, char **w, int nw, bool *handled)
{
	struct hs_scn *s = c->s;
	const char *k = w[0];

	*handled = true;
	if (!strcmp(k, "mode")) {
		if (nw != 2)
			return fail(c, "mode: expects sync or cfs");
		if (!strcmp(w[1], "sync"))
			s->mode_sync = true;
		else if (!strcmp(w[1], "cfs"))
			s->mode_cfs = true;
		else
			return fail(c, "mode: '%.60s' is neither sync nor cfs", w[1]);
		return 0;
	}
	if (!strcmp(k, "early_b")) {
		if (nw != 2)
			return fail(c, "early_b: expects busy, literal or off");
		if (!strcmp(w[1], "busy"))
			s->early_b = HS_SCN_EARLY_B_BUSY;
		else if (!strcmp(w[1], "literal"))
			s->early_b = HS_SCN_EARLY_B_LITERAL;
		else if (!strcmp(w[1], "off"))
			s->early_b = HS_SCN_EARLY_B_OFF;
		else
			return fail(c, "early_b: '%.60s' is not busy, literal or off", w[1]);
		return 0;
	}
	if (strcmp(k, "cores") && strcmp(k, "service") && strcmp(k, "tick_ms") &&
	    strcmp(k, "period") && strcmp(k, "duration") && strcmp(k, "warmup") &&
	    strcmp(k, "window") && strcmp(k, "slices") && strcmp(k, "svc_cost_us")) {
		*handled = false;
		return 0;
	}
	if (nw != 2)
		return fail(c, "%s: expects exactly one value", k);
	if (!strcmp(k, "cores"))
		return parse_u32(c, k, w[1], 1, 4096, &s->cores);
	if (!strcmp(k, "service"))
		return parse_u32(c, k, w[1], 0, 4096, &s->service);
	if (!strcmp(k, "tick_ms"))
		return parse_dbl(c, k, w[1], 0.01, 1000, &s->tick_ms);
	if (!strcmp(k, "period"))
		return parse_u32(c, k, w[1], 1, 10000, &s->period);
	if (!strcmp(k, "duration"))
		return parse_dbl(c, k, w[1], 0.001, 1e6, &s->duration_s);
	if (!strcmp(k, "warmup"))
		return parse_dbl(c, k, w[1], 0, 1e6, &s->warmup_s);
	if (!strcmp(k, "window"))
		return parse_u32(c, k, w[1], 1, HS_RXWIN_MAX, &s->window);
	if (!strcmp(k, "slices"))
		return parse_u32(c, k, w[1], 1, 1000, &s->slices);
	return parse_dbl(c, k, w[1], 0, 1e6, &s->svc_cost_us);
}

static int parse_line(struct ctx *c, char *line)
{
	char *w[MAX_WORDS], *p, *save = NULL;
	int nw = 0, rc;
	bool handled;

	if ((p = strchr(line, '#')))
		*p = '\0';
	for (p = strtok_r(line, " \t\r", &save); p; p = strtok_r(NULL, " \t\r", &save)) {
		if (nw == MAX_WORDS)
			return fail(c, "more than %d words on a line", MAX_WORDS);
		w[nw++] = p;
	}
	if (nw == 0)
		return 0;
	if (!strcmp(w[0], "vnf"))
		return kw_vnf(c, w, nw);
	if (!strcmp(w[0], "vm"))
		return kw_vm(c, w, nw);
	if (!strcmp(w[0], "chain"))
		return kw_chain(c, w, nw);
	if (!strcmp(w[0], "load"))
		return kw_load(c, w, nw);
	rc = kw_setting(c, w, nw, &handled);
	if (rc || handled)
		return rc;
	return fail(c, "unknown keyword '%.60s'", w[0]);
}

static int check_whole(struct ctx *c)
{
	struct hs_scn *s = c->s;

	c->line = 0;
	if (s->cores == 0)
		return fail(c, "'cores N' is required");
	if (s->service >= s->cores)
		return fail(c, "service partition (%" PRIu32 ") leaves no synchronous pCPU of %" PRIu32,
			    s->service, s->cores);
	if (s->nchain == 0)
		return fail(c, "no chain defined");
	if (s->nload == 0)
		return fail(c, "no load defined");
	if (s->warmup_s >= s->duration_s)
		return fail(c, "warmup (%g s) must be shorter than duration (%g s)",
			    s->warmup_s, s->duration_s);
	if (s->duration_s * 1000.0 / s->tick_ms > MAX_TICKS)
		return fail(c, "duration/tick_ms is over %.0f ticks", MAX_TICKS);
	if (s->duration_s * 1000.0 / s->tick_ms * s->slices > MAX_STEPS)
		return fail(c, "duration/tick_ms * slices is over %.0f steps", MAX_STEPS);
	if (s->duration_s * 1000.0 / s->tick_ms < s->period)
		return fail(c, "duration is shorter than one period");
	if (!s->mode_sync && !s->mode_cfs)
		s->mode_sync = s->mode_cfs = true;
	return 0;
}

int hs_scn_parse(const char *text, const char *fname, struct hs_scn *scn,
		 char *err, size_t errlen)
{
	struct ctx c = { .fname = fname ? fname : "scenario", .err = err,
			 .errlen = errlen, .s = scn };
	const char *p = text;
	char line[1024];
	int rc;

	memset(scn, 0, sizeof(*scn));
	scn->tick_ms = 10;
	scn->period = 50;
	scn->duration_s = 10;
	scn->warmup_s = 1;
	scn->window = 4;
	scn->slices = 10;
	if (err && errlen)
		err[0] = '\0';
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		c.line++;
		if (len >= sizeof(line))
			return fail(&c, "line longer than %zu characters", sizeof(line) - 1);
		memcpy(line, p, len);
		line[len] = '\0';
		rc = parse_line(&c, line);
		if (rc)
			return rc;
		p += len + (nl ? 1 : 0);
	}
	return check_whole(&c);
}

void hs_scn_free(struct hs_scn *scn)
{
	free(scn->vnf);
	free(scn->vm);
	free(scn->chain);
	free(scn->load);
	free(scn->vm_group);
	memset(scn, 0, sizeof(*scn));
}
