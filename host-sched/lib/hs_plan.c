// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs_plan.h"

struct hs_plan *hs_plan_create(uint32_t npcpu, uint32_t g, uint32_t cap)
{
	struct hs_plan *p;

	if (npcpu == 0 || g == 0) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->npcpu = npcpu;
	p->g = g;
	p->cap = cap;
	p->slot = calloc(cap ? cap : 1, sizeof(*p->slot));
	p->tmp = calloc(cap ? cap : 1, sizeof(*p->tmp));
	p->pcpu_of = calloc(cap ? cap : 1, sizeof(*p->pcpu_of));
	p->first = calloc((size_t)npcpu + 1, sizeof(*p->first));
	p->vnf_ticks = calloc(npcpu, sizeof(*p->vnf_ticks));
	if (!p->slot || !p->tmp || !p->pcpu_of || !p->first || !p->vnf_ticks) {
		hs_plan_destroy(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void hs_plan_destroy(struct hs_plan *p)
{
	if (!p)
		return;
	free(p->vnf_ticks);
	free(p->first);
	free(p->pcpu_of);
	free(p->tmp);
	free(p->slot);
	free(p);
}

void hs_plan_reset(struct hs_plan *p)
{
	p->nslot = 0;
	p->ndeferred = 0;
	memset(p->first, 0, ((size_t)p->npcpu + 1) * sizeof(*p->first));
	memset(p->vnf_ticks, 0, (size_t)p->npcpu * sizeof(*p->vnf_ticks));
}

int hs_plan_add(struct hs_plan *p, uint32_t pcpu, uint32_t vcpu,
		uint32_t chain, uint32_t owner, uint32_t ticks, enum hs_kind kind)
{
	struct hs_slot *s;

	if (pcpu >= p->npcpu || (kind != HS_KIND_VNF && kind != HS_KIND_VM))
		return -EINVAL;
	if (p->nslot >= p->cap)
		return -ENOSPC;
	s = &p->slot[p->nslot];
	s->vcpu = vcpu;
	s->chain = chain;
	s->owner = owner;
	s->ticks = ticks;
	s->start = 0;
	s->kind = (uint8_t)kind;
	s->early = 0;
	p->pcpu_of[p->nslot] = pcpu;
	p->nslot++;
	if (kind == HS_KIND_VNF)
		p->vnf_ticks[pcpu] += ticks;
	return 0;
}

/* Stable counting sort of the staged slots by pCPU, then start offsets. */
void hs_plan_finish(struct hs_plan *p)
{
	uint32_t i, j, *pos = p->first;

	memset(pos, 0, ((size_t)p->npcpu + 1) * sizeof(*pos));
	for (i = 0; i < p->nslot; i++)
		pos[p->pcpu_of[i] + 1]++;
	for (j = 0; j < p->npcpu; j++)
		pos[j + 1] += pos[j];
	/* pos[j] is now the first index of pCPU j; use it as a cursor and
	 * shift back afterwards. */
	for (i = 0; i < p->nslot; i++)
		p->tmp[pos[p->pcpu_of[i]]++] = p->slot[i];
	for (j = p->npcpu; j > 0; j--)
		pos[j] = pos[j - 1];
	pos[0] = 0;
	memcpy(p->slot, p->tmp, (size_t)p->nslot * sizeof(*p->slot));
	for (j = 0; j < p->npcpu; j++) {
		uint32_t t = 0;

		for (i = pos[j]; i < pos[j + 1]; i++) {
			p->slot[i].start = t;
			t += p->slot[i].ticks;
			p->pcpu_of[i] = j;
		}
	}
}

const struct hs_slot *hs_plan_slots(const struct hs_plan *p, uint32_t pcpu,
				    uint32_t *n)
{
	if (pcpu >= p->npcpu) {
		*n = 0;
		return NULL;
	}
	*n = p->first[pcpu + 1] - p->first[pcpu];
	return &p->slot[p->first[pcpu]];
}

/* Appending writer with snprintf semantics over a caller buffer. */
struct out {
	char *buf;
	size_t len;
	size_t need;
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->need < o->len ? o->len - o->need : 0;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
	va_end(ap);
	if (r > 0)
		o->need += (size_t)r;
}

/* Names in JSON: escape what needs escaping, drop control characters. */
static void put_jstr(struct out *o, const char *s)
{
	put(o, "\"");
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

static const char *chain_name(const struct hs_chain_cfg *chains,
			      uint32_t nchain, uint32_t i)
{
	return chains && i < nchain && chains[i].name ? chains[i].name : NULL;
}

static const char *vnf_name(const struct hs_chain_cfg *chains,
			    uint32_t nchain, uint32_t i, uint32_t k)
{
	if (!chains || i >= nchain || k >= chains[i].nvnf)
		return NULL;
	return chains[i].vnf[k].name;
}

size_t hs_plan_format_text(const struct hs_plan *p,
			   const struct hs_chain_cfg *chains, uint32_t nchain,
			   char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	uint32_t j, i, n;

	if (len)
		buf[0] = '\0';
	put(&o, "period %" PRIu32 " ticks, %" PRIu32 " pCPUs, %" PRIu32
	    " slots, %" PRIu32 " chains deferred\n",
	    p->g, p->npcpu, p->nslot, p->ndeferred);
	for (j = 0; j < p->npcpu; j++) {
		const struct hs_slot *s = hs_plan_slots(p, j, &n);

		put(&o, "pcpu %" PRIu32 " vnf %" PRIu32 "/%" PRIu32 ":", j,
		    p->vnf_ticks[j], p->g);
		for (i = 0; i < n; i++) {
			if (s[i].kind == HS_KIND_VNF) {
				const char *cn = chain_name(chains, nchain, s[i].chain);
				const char *vn = vnf_name(chains, nchain, s[i].chain,
							  s[i].owner);

				put(&o, " [%" PRIu32 "+%" PRIu32 " vnf vcpu %" PRIu32,
				    s[i].start, s[i].ticks, s[i].vcpu);
				if (cn)
					put(&o, " %s", cn);
				else
					put(&o, " chain %" PRIu32, s[i].chain);
				if (vn)
					put(&o, "/%s", vn);
				put(&o, "]");
			} else {
				put(&o, " [%" PRIu32 "+%" PRIu32 " vm vcpu %" PRIu32 "]",
				    s[i].start, s[i].ticks, s[i].vcpu);
			}
		}
		put(&o, "\n");
	}
	return o.need;
}

size_t hs_plan_format_json(const struct hs_plan *p,
			   const struct hs_chain_cfg *chains, uint32_t nchain,
			   char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	uint32_t j, i, n;

	if (len)
		buf[0] = '\0';
	put(&o, "{\"period\":%" PRIu32 ",\"deferred\":%" PRIu32 ",\"pcpus\":[",
	    p->g, p->ndeferred);
	for (j = 0; j < p->npcpu; j++) {
		const struct hs_slot *s = hs_plan_slots(p, j, &n);

		put(&o, "%s{\"pcpu\":%" PRIu32 ",\"vnf_ticks\":%" PRIu32 ",\"slots\":[",
		    j ? "," : "", j, p->vnf_ticks[j]);
		for (i = 0; i < n; i++) {
			put(&o, "%s{\"vcpu\":%" PRIu32 ",\"start\":%" PRIu32
			    ",\"ticks\":%" PRIu32 ",\"kind\":\"%s\"",
			    i ? "," : "", s[i].vcpu, s[i].start, s[i].ticks,
			    s[i].kind == HS_KIND_VNF ? "vnf" : "vm");
			if (s[i].kind == HS_KIND_VNF) {
				const char *cn = chain_name(chains, nchain, s[i].chain);
				const char *vn = vnf_name(chains, nchain, s[i].chain,
							  s[i].owner);

				put(&o, ",\"chain\":%" PRIu32, s[i].chain);
				if (cn) {
					put(&o, ",\"chain_name\":");
					put_jstr(&o, cn);
				}
				if (vn) {
					put(&o, ",\"vnf\":");
					put_jstr(&o, vn);
				}
			} else {
				put(&o, ",\"vm\":%" PRIu32, s[i].owner);
			}
			put(&o, "}");
		}
		put(&o, "]}");
	}
	put(&o, "]}");
	return o.need;
}
