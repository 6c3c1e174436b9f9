// SPDX-License-Identifier: MIT
/*
 * The metrics endpoint; see td_metrics.h.  Runs on the daemon's one
 * thread (td_priv.h): nothing here locks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tochain/util.h"
#include "td_cpusched.h"
#include "td_link.h"
#include "td_metrics.h"
#include "td_priv.h"
#include "td_stats.h"
#include "td_vnfinst.h"

#define MAX_RULES 512		/* denial series kept (vm, chain, vnf, rule, reason) */
#define DRAIN_MS 1000		/* reading what a client still sends after the answer */

/* ---- the exposition format (pure) ---------------------------------- */

void td_mbuf_printf(struct td_mbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = b->cap ? b->cap : 4096;
		char *s;

		while (cap <= b->len + (size_t)n)
			cap *= 2;
		s = realloc(b->s, cap);
		if (!s) {
			b->oom = true;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
}

void td_mbuf_free(struct td_mbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

bool td_metrics_name_valid(const char *name, bool label)
{
	if (!name || !*name || (*name >= '0' && *name <= '9'))
		return false;
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || (c == ':' && !label)))
			return false;
	}
	return true;
}

/* @v with \\ and \n escaped, and \" too when @quote (label values). */
static void escape(struct td_mbuf *b, const char *v, bool quote)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\\')
			td_mbuf_printf(b, "\\\\");
		else if (*p == '\n')
			td_mbuf_printf(b, "\\n");
		else if (*p == '"' && quote)
			td_mbuf_printf(b, "\\\"");
		else
			td_mbuf_printf(b, "%c", *p);
	}
}

void td_metrics_escape_label(struct td_mbuf *b, const char *v)
{
	escape(b, v, true);
}

void td_metrics_family(struct td_mbuf *b, const char *name, const char *type, const char *help)
{
	td_mbuf_printf(b, "# HELP %s ", name);
	escape(b, help, false);
	td_mbuf_printf(b, "\n# TYPE %s %s\n", name, type);
}

void td_metrics_sample(struct td_mbuf *b, const char *name, const char *const *labels, double v)
{
	bool first = true;

	td_mbuf_printf(b, "%s", name);
	for (unsigned int i = 0; labels && labels[i]; i += 2) {
		if (!labels[i + 1])
			continue;
		td_mbuf_printf(b, "%s%s=\"", first ? "{" : ",", labels[i]);
		td_metrics_escape_label(b, labels[i + 1]);
		td_mbuf_printf(b, "\"");
		first = false;
	}
	if (!first)
		td_mbuf_printf(b, "}");
	if (isnan(v))
		td_mbuf_printf(b, " NaN\n");
	else if (isinf(v))
		td_mbuf_printf(b, " %sInf\n", v > 0 ? "+" : "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		td_mbuf_printf(b, " %.0f\n", v);
	else {
		/* the shortest of 15 or 17 digits that reads back as @v */
		char t[32];

		snprintf(t, sizeof(t), "%.15g", v);
		if (strtod(t, NULL) != v)
			snprintf(t, sizeof(t), "%.17g", v);
		td_mbuf_printf(b, " %s\n", t);
	}
}

/* ---- HTTP (pure) ---------------------------------------------------- */

int td_metrics_http_route(const char *buf, size_t len)
{
	const char *eol = memchr(buf, '\n', len), *sp1, *sp2, *end;
	size_t mlen, tlen, i;

	if (!eol)
		return 0;
	end = eol > buf && eol[-1] == '\r' ? eol - 1 : eol;
	sp1 = memchr(buf, ' ', (size_t)(end - buf));
	if (!sp1)
		return 400;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2)
		return 400;
	mlen = (size_t)(sp1 - buf);
	tlen = (size_t)(sp2 - sp1 - 1);
	if (!mlen || mlen > 16 || !tlen || sp1[1] != '/')
		return 400;
	for (i = 0; i < mlen; i++)
		if (buf[i] < 'A' || buf[i] > 'Z')
			return 400;
	for (i = 0; i < tlen; i++)
		if ((unsigned char)sp1[1 + i] <= ' ' || (unsigned char)sp1[1 + i] >= 0x7f)
			return 400;
	if ((size_t)(end - sp2 - 1) != 8 || (memcmp(sp2 + 1, "HTTP/1.0", 8) && memcmp(sp2 + 1, "HTTP/1.1", 8)))
		return 400;
	/* the head: header lines up to an empty one, no NUL or bare control bytes */
	for (const char *p = eol + 1, *q; p < buf + len; p = q + 1) {
		q = memchr(p, '\n', (size_t)(buf + len - p));
		if (!q)
			break;
		if (q == p || (q == p + 1 && *p == '\r'))
			return mlen == 3 && !memcmp(buf, "GET", 3) &&
			       ((tlen == 8 && !memcmp(sp1 + 1, "/metrics", 8)) ||
				(tlen > 8 && !memcmp(sp1 + 1, "/metrics?", 9))) ? 200 : 404;
		for (const char *c = p; c < q; c++)
			if ((unsigned char)*c < ' ' && *c != '\t' && !(*c == '\r' && c == q - 1))
				return 400;
		if (!memchr(p, ':', (size_t)(q - p)))
			return 400;
	}
	for (const char *c = eol + 1; c < buf + len; c++)
		if (!*c)
			return 400;
	return 0;
}

int td_metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *sslen)
{
	char host[64];
	const char *colon, *h = s;
	size_t hlen;
	char *endp;
	long port;

	memset(ss, 0, sizeof(*ss));
	colon = strrchr(s, ':');
	if (!colon)
		return -EINVAL;
	hlen = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hlen < 2 || colon[-1] != ']')
			return -EINVAL;
		h = s + 1;
		hlen -= 2;
	}
	if (!hlen || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	errno = 0;
	port = strtol(colon + 1, &endp, 10);
	if (errno || endp == colon + 1 || *endp || port < 1 || port > 65535 ||
	    colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	if (s[0] != '[') {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*a);
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*a);
	}
	return 0;
}

/* ---- what is served --------------------------------------------------- */

struct rule_count {		/* a denial series */
	char vm[TD_NAME_MAX], chain[TD_OBJ_NAME_MAX], vnf[TD_OBJ_NAME_MAX], reason[24];
	long long rule;
	unsigned long long n;
};

struct last_denial {		/* the newest denial counted of a VM */
	char vm[TD_NAME_MAX];
	double time;
	char key[160];		/* chain, vnf, rule, reason, conn */
};

enum conn_state { C_FREE, C_READ, C_WRITE, C_DRAIN };

struct conn {
	enum conn_state st;
	int fd;
	long long deadline_ms;
	char in[TD_METRICS_REQ_MAX];
	size_t inlen;
	struct td_mbuf out;
	size_t outoff;
};

struct td_metrics {
	int lfd;
	struct conn c[TD_METRICS_MAX_CONNS];
	struct rule_count rules[MAX_RULES];
	unsigned int nrules;
	unsigned long long rules_dropped;	/* denials of series beyond MAX_RULES */
	struct last_denial last[TD_MAX_VMS];
};

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : "";
}

static void denial_key(json_t *x, char *key, size_t len)
{
	snprintf(key, len, "%.32s|%.32s|%lld|%.23s|%.60s", jstr(x, "chain"), jstr(x, "vnf"),
		 (long long)json_integer_value(json_object_get(x, "rule")), jstr(x, "reason"),
		 jstr(x, "conn"));
}

static void count_denial(struct td_metrics *m, json_t *x)
{
	const char *vm = jstr(x, "vm"), *chain = jstr(x, "chain"), *vnf = jstr(x, "vnf"),
		   *reason = jstr(x, "reason");
	long long rule = (long long)json_integer_value(json_object_get(x, "rule"));
	struct rule_count *r;

	for (unsigned int i = 0; i < m->nrules; i++) {
		r = &m->rules[i];
		if (!strcmp(r->vm, vm) && !strcmp(r->chain, chain) && !strcmp(r->vnf, vnf) &&
		    !strcmp(r->reason, reason) && r->rule == rule) {
			r->n++;
			return;
		}
	}
	if (m->nrules == MAX_RULES) {
		m->rules_dropped++;
		return;
	}
	r = &m->rules[m->nrules++];
	snprintf(r->vm, sizeof(r->vm), "%s", vm);
	snprintf(r->chain, sizeof(r->chain), "%s", chain);
	snprintf(r->vnf, sizeof(r->vnf), "%s", vnf);
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	r->rule = rule;
	r->n = 1;
}

/*
 * Count the denials of VM @vm in @dens (stats' "denials", each VM's oldest
 * first) newer than the newest one counted before: those after its last
 * occurrence, or all of them when it is gone from the log (rolled out, or
 * the TOE restarted).
 */
static void count_vm_denials(struct td_metrics *m, const char *vm, json_t *dens)
{
	struct last_denial *l = NULL, *free_slot = NULL;
	size_t i, from = 0, n = json_array_size(dens);
	json_t *x, *newest = NULL;
	char key[160];

	for (unsigned int k = 0; k < TD_MAX_VMS; k++) {
		if (!strcmp(m->last[k].vm, vm))
			l = &m->last[k];
		else if (!m->last[k].vm[0] && !free_slot)
			free_slot = &m->last[k];
	}
	for (i = n; i-- > 0 && l;) {
		x = json_array_get(dens, i);
		if (strcmp(jstr(x, "vm"), vm))
			continue;
		denial_key(x, key, sizeof(key));
		if (json_real_value(json_object_get(x, "time")) == l->time && !strcmp(key, l->key)) {
			from = i + 1;
			break;
		}
	}
	for (i = from; i < n; i++) {
		x = json_array_get(dens, i);
		if (strcmp(jstr(x, "vm"), vm))
			continue;
		count_denial(m, x);
		newest = x;
	}
	if (!newest)
		return;
	if (!l)
		l = free_slot;
	if (!l)
		return;
	snprintf(l->vm, sizeof(l->vm), "%s", vm);
	l->time = json_real_value(json_object_get(newest, "time"));
	denial_key(newest, l->key, sizeof(l->key));
}

/* A family of every chain's number @key (skipped where absent). */
static void chain_family(struct td_mbuf *b, json_t *chains, const char *name, const char *type,
			 const char *help, const char *key)
{
	size_t i;
	json_t *c;

	td_metrics_family(b, name, type, help);
	json_array_foreach(chains, i, c) {
		json_t *v = json_object_get(c, key);
		const char *l[] = { "vm", jstr(c, "vm"), "chain", jstr(c, "name"), "dir", jstr(c, "dir"), NULL };

		if (json_is_number(v))
			td_metrics_sample(b, name, l, json_number_value(v));
	}
}

static void render_chains(struct td_metrics *m, struct daemon *d, struct td_mbuf *b)
{
	json_t *st = td_stats_gather(d, NULL);
	json_t *chains = json_object_get(st, "chains"), *dens = json_object_get(st, "denials");
	size_t i;
	json_t *c;

	td_metrics_family(b, "tochain_chain_up", "gauge",
			  "1 when the VM's TOE runs the chain (stats has its counters), else 0");
	json_array_foreach(chains, i, c) {
		const char *l[] = { "vm", jstr(c, "vm"), "chain", jstr(c, "name"), "dir", jstr(c, "dir"), NULL };

		td_metrics_sample(b, "tochain_chain_up", l, json_object_get(c, "error") ? 0 : 1);
	}
	chain_family(b, chains, "tochain_chain_hops", "gauge", "Hops of the chain in its TOE", "hops");
	chain_family(b, chains, "tochain_chain_arrivals_total", "counter",
		     "Buffers that entered the chain's input queue (TOE stats arrivals)", "arrivals");
	chain_family(b, chains, "tochain_chain_taken_total", "counter",
		     "Buffers the packet scheduler took into the chain (TOE stats taken)", "taken");
	chain_family(b, chains, "tochain_chain_done_total", "counter",
		     "Buffers that went through the chain, passed or denied (TOE stats finished)",
		     "finished");
	chain_family(b, chains, "tochain_chain_denied_total", "counter",
		     "Buffers the chain denied (TOE stats denied)", "denied");
	chain_family(b, chains, "tochain_chain_alerted_total", "counter",
		     "Buffers the chain passed with an Alert, e.g. an ids alert rule (TOE stats alerted)",
		     "alerted");
	td_metrics_family(b, "tochain_chain_queue_length", "gauge",
			  "Buffers waiting in the chain's input (queue=in) or output (queue=out) queue");
	json_array_foreach(chains, i, c) {
		const char *q[2] = { "in_qlen", "out_qlen" };

		for (unsigned int k = 0; k < 2; k++) {
			json_t *v = json_object_get(c, q[k]);
			const char *l[] = { "vm", jstr(c, "vm"), "chain", jstr(c, "name"), "dir",
					    jstr(c, "dir"), "queue", k ? "out" : "in", NULL };

			if (json_is_number(v))
				td_metrics_sample(b, "tochain_chain_queue_length", l, json_number_value(v));
		}
	}
	chain_family(b, chains, "tochain_chain_sla_packets_per_second", "gauge",
		     "The chain's SLA (0: none)", "sla");
	chain_family(b, chains, "tochain_chain_rate_packets_per_second", "gauge",
		     "Rate achieved: buffers done per second over the last ~1 s (TOE stats pps)",
		     "pps");
	chain_family(b, chains, "tochain_chain_admitted_quota_cpus", "gauge",
		     "CPUs' worth SLA admission reserves for the chain (stats cpu_quota)",
		     "cpu_quota");
	chain_family(b, chains, "tochain_chain_vnf_vcpus", "gauge",
		     "VNF service threads admission counts for the chain (stats vnf_vcpus)",
		     "vnf_vcpus");
	td_metrics_family(b, "tochain_chain_vnfs_down", "gauge",
			  "Host instances of the chain's VNFs on its VM that are not running");
	json_array_foreach(chains, i, c) {
		const char *l[] = { "vm", jstr(c, "vm"), "chain", jstr(c, "name"), "dir", jstr(c, "dir"), NULL };

		td_metrics_sample(b, "tochain_chain_vnfs_down", l,
				  (double)json_array_size(json_object_get(c, "vnfs_down")));
	}

	for (unsigned int k = 0; k < TD_MAX_VMS; k++)	/* VMs gone: their slots free */
		if (m->last[k].vm[0] && !td_state_find_vm(&d->st, m->last[k].vm))
			m->last[k].vm[0] = '\0';
	for (unsigned int k = 0; k < d->st.nvms; k++)
		count_vm_denials(m, d->st.vms[k].name, dens);
	td_metrics_family(b, "tochain_denials_total", "counter",
			  "Denials by VNF and rule (sid) as the TOEs' denial logs name them, counted "
			  "by tochaind since it started; reason: rule, vnf-failed, bad-verdict, "
			  "no-chain, bad-descriptor");
	for (unsigned int k = 0; k < m->nrules; k++) {
		const struct rule_count *r = &m->rules[k];
		char rule[24];
		const char *l[] = { "vm", r->vm, "chain", r->chain, "vnf", r->vnf, "rule", rule,
				    "reason", r->reason, NULL };

		snprintf(rule, sizeof(rule), "%lld", r->rule);
		td_metrics_sample(b, "tochain_denials_total", l, (double)r->n);
	}
	td_metrics_family(b, "tochain_denials_unlabelled_total", "counter",
			  "Denials not counted by rule: more distinct series than tochaind keeps");
	td_metrics_sample(b, "tochain_denials_unlabelled_total", NULL, (double)m->rules_dropped);
	json_decref(st);
}

static void render_vms(struct daemon *d, struct td_mbuf *b)
{
	td_metrics_family(b, "tochain_vm_toe_up", "gauge", "1 when the VM's tochain-toe runs, else 0");
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		const struct td_vm *vm = &d->st.vms[i];
		const char *l[] = { "vm", vm->name, "domain", vm->domain[0] ? vm->domain : NULL, NULL };

		td_metrics_sample(b, "tochain_vm_toe_up", l, td_vm_toe_alive(vm));
	}
	td_metrics_family(b, "tochain_vm_link_up", "gauge",
			  "1 when the tochain-vmlink of a VM run by libvirt runs, else 0");
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		const struct td_vm *vm = &d->st.vms[i];
		const char *l[] = { "vm", vm->name, "domain", vm->domain, NULL };

		if (vm->domain[0])
			td_metrics_sample(b, "tochain_vm_link_up", l, td_link_alive(vm));
	}
	td_metrics_family(b, "tochain_vm_region_size_bytes", "gauge", "Size of the VM's region");
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		const char *l[] = { "vm", d->st.vms[i].name, NULL };

		td_metrics_sample(b, "tochain_vm_region_size_bytes", l, (double)d->st.vms[i].region_size);
	}
}

/* Every host instance's restarts: @total (never reset) or its back-off's. */
static void host_inst_family(struct daemon *d, struct td_mbuf *b, const char *name, const char *type,
			     const char *help, bool total)
{
	td_metrics_family(b, name, type, help);
	for (unsigned int i = 0; i < d->st.ninsts; i++) {
		const struct td_inst *in = &d->st.insts[i];
		const char *l[] = { "vnf", in->vnf, "vm", in->vm, NULL };

		if (!in->domain[0])
			td_metrics_sample(b, name, l, total ? (double)in->bo.total : in->bo.restarts);
	}
}

static void render_vnfs(struct daemon *d, struct td_mbuf *b)
{
	td_metrics_family(b, "tochain_vnf_rate_packets_per_second", "gauge",
			  "The VNF's f in use: --rate, else its calibration (0: unknown)");
	for (unsigned int i = 0; i < d->st.nvnfs; i++) {
		const struct td_vnf *v = &d->st.vnfs[i];
		const char *l[] = { "vnf", v->name, "kind", td_kind_name(v->kind), NULL };

		td_metrics_sample(b, "tochain_vnf_rate_packets_per_second", l, (double)td_vnf_f(v));
	}
	td_metrics_family(b, "tochain_vnf_instance_up", "gauge",
			  "1 when the VNF's instance for the VM runs, else 0");
	for (unsigned int i = 0; i < d->st.ninsts; i++) {
		const struct td_inst *in = &d->st.insts[i];
		const struct td_vm *vm = td_state_find_vm(&d->st, in->vm);
		const char *l[] = { "vnf", in->vnf, "vm", in->vm,
				    "domain", in->domain[0] ? in->domain : NULL, NULL };

		td_metrics_sample(b, "tochain_vnf_instance_up", l, vm && td_vnfinst_alive(vm, in));
	}
	host_inst_family(d, b, "tochain_vnf_instance_restarts_total", "counter",
			 "Restarts of the VNF's host instance for the VM since tochaind started", true);
	host_inst_family(d, b, "tochain_vnf_instance_backoff_restarts", "gauge",
			 "Restarts since the host instance last ran 10 s (its restart back-off)", false);
}

/* A counter of sched.show's integer @key. */
static void sched_scalar(struct td_mbuf *b, json_t *s, const char *name, const char *help,
			 const char *key)
{
	td_metrics_family(b, name, "counter", help);
	td_metrics_sample(b, name, NULL, (double)json_integer_value(json_object_get(s, key)));
}

/* A counter of every chain's integer @key in sched.show's "chains". */
static void sched_chains(struct td_mbuf *b, json_t *s, const char *name, const char *help,
			 const char *key)
{
	size_t i;
	json_t *x;

	td_metrics_family(b, name, "counter", help);
	json_array_foreach(json_object_get(s, "chains"), i, x) {
		const char *l[] = { "chain", jstr(x, "chain"), "vm", jstr(x, "vm"), NULL };

		td_metrics_sample(b, name, l, (double)json_integer_value(json_object_get(x, key)));
	}
}

/* tochain-sched's view, when its socket is there. */
static void render_sched(struct daemon *d, struct td_mbuf *b)
{
	json_t *s = td_cpusched_show(d, TD_METRICS_SCHED_MS), *pc, *sl;
	json_t *plan = json_object_get(s, "plan");
	double period = (double)json_integer_value(json_object_get(plan, "period"));
	size_t i, j, k;

	td_metrics_family(b, "tochain_sched_up", "gauge",
			  "1 when tochain-sched answered sched.show at --sched-socket, else 0");
	td_metrics_sample(b, "tochain_sched_up", NULL, s ? 1 : 0);
	if (!s)
		return;
	td_metrics_family(b, "tochain_sched_mode", "gauge", "1 for the mode tochain-sched runs (sync, cfs)");
	{
		const char *l[] = { "mode", jstr(s, "mode"), NULL };

		td_metrics_sample(b, "tochain_sched_mode", l, 1);
	}
	sched_scalar(b, s, "tochain_sched_periods_total", "Periods tochain-sched ran", "periods");
	sched_scalar(b, s, "tochain_sched_early_ends_total",
		     "Slots that ended early (a chain's work done), all chains", "early_ends");
	td_metrics_family(b, "tochain_sched_period_seconds", "gauge", "Length of a scheduling period");
	td_metrics_sample(b, "tochain_sched_period_seconds", NULL,
			  (double)json_integer_value(json_object_get(s, "tick_us")) *
			  (double)json_integer_value(json_object_get(s, "period")) / 1e6);
	sched_chains(b, s, "tochain_sched_chain_early_ends_total", "Slots of the chain that ended early",
		     "early_ends");
	sched_chains(b, s, "tochain_sched_chain_bad_counters_total",
		     "Counter snapshots of the chain tochain-sched refused", "bad_counters");
	/* the plan's slots of each (chain, VNF), over the period: CPUs' worth */
	td_metrics_family(b, "tochain_sched_quota_cpus", "gauge",
			  "CPUs' worth tochain-sched's plan gives a chain's VNF (its slots' ticks "
			  "over the period; sync mode)");
	if (period > 0) {
		struct { const char *chain, *vnf; double ticks; } q[TD_MAX_CHAINS];
		unsigned int nq = 0;

		json_array_foreach(json_object_get(plan, "pcpus"), i, pc)
			json_array_foreach(json_object_get(pc, "slots"), j, sl) {
				const char *cn = jstr(sl, "chain_name"), *vn = jstr(sl, "vnf");

				if (strcmp(jstr(sl, "kind"), "vnf") || !cn[0])
					continue;
				for (k = 0; k < nq; k++)
					if (!strcmp(q[k].chain, cn) && !strcmp(q[k].vnf, vn))
						break;
				if (k == nq && nq == TD_MAX_CHAINS)
					continue;
				if (k == nq)
					q[nq++] = (typeof(q[0])){ cn, vn, 0 };
				q[k].ticks += (double)json_integer_value(json_object_get(sl, "ticks"));
			}
		for (k = 0; k < nq; k++) {
			const char *l[] = { "chain", q[k].chain, "vnf", q[k].vnf, NULL };

			td_metrics_sample(b, "tochain_sched_quota_cpus", l, q[k].ticks / period);
		}
	}
	json_decref(s);
}

static void render(struct td_metrics *m, struct daemon *d, struct td_mbuf *b)
{
	uint64_t t0 = tu_now_ns();

	render_vms(d, b);
	render_chains(m, d, b);
	render_vnfs(d, b);
	render_sched(d, b);
	td_metrics_family(b, "tochain_scrape_duration_seconds", "gauge",
			  "Time tochaind took to gather this answer");
	td_metrics_sample(b, "tochain_scrape_duration_seconds", NULL,
			  (double)(tu_now_ns() - t0) / 1e9);
}

/* ---- the endpoint ----------------------------------------------------- */

struct td_metrics *td_metrics_create(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	struct td_metrics *m;
	int one = 1;

	if (td_metrics_parse_addr(addr, &ss, &sslen)) {
		snprintf(err, errlen, "--metrics %.100s: not ADDR:PORT or [ADDR6]:PORT", addr);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->lfd < 0)
		goto out_err;
	setsockopt(m->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(m->lfd, (struct sockaddr *)&ss, sslen) || listen(m->lfd, 16))
		goto out_close;
	for (unsigned int i = 0; i < TD_METRICS_MAX_CONNS; i++)
		m->c[i].fd = -1;
	return m;

out_close:
	snprintf(err, errlen, "--metrics %.100s: %s", addr, strerror(errno));
	close(m->lfd);
	free(m);
	return NULL;
out_err:
	snprintf(err, errlen, "--metrics %.100s: %s", addr, strerror(errno));
	free(m);
	return NULL;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	td_mbuf_free(&c->out);
	c->fd = -1;
	c->st = C_FREE;
	c->inlen = 0;
	c->outoff = 0;
}

void td_metrics_destroy(struct td_metrics *m)
{
	if (!m)
		return;
	for (unsigned int i = 0; i < TD_METRICS_MAX_CONNS; i++)
		conn_close(&m->c[i]);
	close(m->lfd);
	free(m);
}

unsigned int td_metrics_pollfds(struct td_metrics *m, struct pollfd *p)
{
	unsigned int n = 0, busy = 0;

	for (unsigned int i = 0; i < TD_METRICS_MAX_CONNS; i++) {
		const struct conn *c = &m->c[i];

		if (c->st == C_FREE)
			continue;
		busy++;
		p[n].fd = c->fd;
		p[n].events = c->st == C_WRITE ? POLLOUT : POLLIN;
		p[n++].revents = 0;
	}
	/* full: the listener waits (the kernel's backlog holds the rest) */
	p[n].fd = busy < TD_METRICS_MAX_CONNS ? m->lfd : -1;
	p[n].events = POLLIN;
	p[n++].revents = 0;
	return n;
}

/* The answer: status @code, and for 200 the metrics. */
static void answer(struct td_metrics *m, struct daemon *d, struct conn *c, int code)
{
	struct td_mbuf body = { 0 };
	const char *reason = code == 200 ? "OK" : code == 404 ? "Not Found" : "Bad Request";

	if (code == 200)
		render(m, d, &body);
	else
		td_mbuf_printf(&body, "%s\n", code == 404 ? "not found: try GET /metrics" : "bad request");
	if (body.oom) {
		td_mbuf_free(&body);
		code = 500;
		reason = "Internal Server Error";
		td_mbuf_printf(&body, "out of memory\n");
	}
	td_mbuf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		       "Connection: close\r\n\r\n", code, reason,
		       code == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain",
		       body.len);
	if (body.len)
		td_mbuf_printf(&c->out, "%s", body.s);	/* text: no NUL in it */
	td_mbuf_free(&body);
	if (c->out.oom) {
		conn_close(c);
		return;
	}
	c->st = C_WRITE;
	c->outoff = 0;
	c->deadline_ms = (long long)tu_now_ms() + TD_METRICS_IDLE_MS;
}

static void conn_read(struct td_metrics *m, struct daemon *d, struct conn *c)
{
	ssize_t n;
	int code;

	if (c->st == C_DRAIN) {
		char junk[1024];

		n = read(c->fd, junk, sizeof(junk));
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			conn_close(c);
		return;
	}
	n = read(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(c);
		return;
	}
	if (n < 0)
		return;
	c->inlen += (size_t)n;
	code = td_metrics_http_route(c->in, c->inlen);
	if (!code && c->inlen == sizeof(c->in))
		code = 400;	/* no end of the head within the limit */
	if (code)
		answer(m, d, c, code);
}

static void conn_write(struct conn *c)
{
	ssize_t n = send(c->fd, c->out.s + c->outoff, c->out.len - c->outoff, MSG_NOSIGNAL);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			conn_close(c);
		return;
	}
	c->outoff += (size_t)n;
	if (c->outoff < c->out.len)
		return;
	/* all sent: read what the client still sends until it closes, so that
	 * closing with unread bytes does not reset the answer away */
	shutdown(c->fd, SHUT_WR);
	td_mbuf_free(&c->out);
	c->st = C_DRAIN;
	c->deadline_ms = (long long)tu_now_ms() + DRAIN_MS;
}

void td_metrics_serve(struct td_metrics *m, struct daemon *d, const struct pollfd *p, unsigned int n)
{
	long long now = (long long)tu_now_ms();

	for (unsigned int k = 0; k < n; k++) {
		if (!p[k].revents)
			continue;
		if (p[k].fd == m->lfd) {
			for (unsigned int i = 0; i < TD_METRICS_MAX_CONNS; i++) {
				struct conn *c = &m->c[i];

				if (c->st != C_FREE)
					continue;
				c->fd = accept4(m->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (c->fd < 0)
					break;
				c->st = C_READ;
				c->inlen = 0;
				c->deadline_ms = now + TD_METRICS_IDLE_MS;
			}
			continue;
		}
		for (unsigned int i = 0; i < TD_METRICS_MAX_CONNS; i++) {
			struct conn *c = &m->c[i];

			if (c->st == C_FREE || c->fd != p[k].fd)
				continue;
			if (c->st == C_WRITE && (p[k].revents & (POLLOUT | POLLERR | POLLHUP)))
				conn_write(c);
			else if (p[k].revents & (POLLIN | POLLERR | POLLHUP))
				conn_read(m, d, c);
			break;
		}
	}
	now = (long long)tu_now_ms();
	for (unsigned int i = 0; i < TD_METRICS_MAX_CONNS; i++)
		if (m->c[i].st != C_FREE && now >= m->c[i].deadline_ms)
			conn_close(&m->c[i]);
}
