// SPDX-License-Identifier: MIT
/* Per-connection stream state of a service thread; see vnf_stream.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnf_kind.h"
#include "vnf_stream.h"

struct vnf_streams {
	uint32_t max, count, nbuckets;
	uint64_t evicted;
	const char *kind;
	void (*free_priv)(void *priv);
	struct vnf_stream **bucket;
	struct vnf_stream *head, *tail;	/* LRU: head newest */
};

static uint32_t hash_conn(uint64_t c, uint32_t n)
{
	c ^= c >> 33;
	c *= 0xff51afd7ed558ccdull;
	c ^= c >> 33;
	return (uint32_t)c & (n - 1);
}

struct vnf_streams *vnf_streams_create(uint32_t max, const char *kind,
				       void (*free_priv)(void *priv))
{
	struct vnf_streams *t = calloc(1, sizeof(*t));
	uint32_t n = 64;

	if (!t)
		return NULL;
	t->max = max ? max : VNF_STREAMS_DEFAULT;
	while (n < t->max * 2 && n < (1u << 24))
		n <<= 1;
	t->nbuckets = n;
	t->bucket = calloc(n, sizeof(*t->bucket));
	if (!t->bucket) {
		free(t);
		return NULL;
	}
	t->kind = kind;
	t->free_priv = free_priv;
	return t;
}

static void lru_unlink(struct vnf_streams *t, struct vnf_stream *s)
{
	if (s->lprev)
		s->lprev->lnext = s->lnext;
	else
		t->head = s->lnext;
	if (s->lnext)
		s->lnext->lprev = s->lprev;
	else
		t->tail = s->lprev;
	s->lprev = s->lnext = NULL;
}

static void lru_front(struct vnf_streams *t, struct vnf_stream *s)
{
	s->lnext = t->head;
	s->lprev = NULL;
	if (t->head)
		t->head->lprev = s;
	t->head = s;
	if (!t->tail)
		t->tail = s;
}

void vnf_stream_drop(struct vnf_streams *t, struct vnf_stream *s)
{
	struct vnf_stream **pp = &t->bucket[hash_conn(s->conn_id, t->nbuckets)];

	while (*pp && *pp != s)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = s->hnext;
	lru_unlink(t, s);
	if (s->priv && t->free_priv)
		t->free_priv(s->priv);
	free(s);
	t->count--;
}

void vnf_streams_destroy(struct vnf_streams *t)
{
	if (!t)
		return;
	while (t->head)
		vnf_stream_drop(t, t->head);
	free(t->bucket);
	free(t);
}

static void pick_server(struct vnf_stream *s, const struct vnf_pkt *pk)
{
	const struct tcr_desc *d = &pk->d;
	bool recv_is_server;

	if (d->dport != d->sport)
		recv_is_server = d->dport < d->sport;
	else
		recv_is_server = d->chain == 0;
	s->family = d->family;
	if (recv_is_server) {
		s->server_port = d->dport, s->client_port = d->sport;
		memcpy(s->server_addr, d->daddr, 16);
		memcpy(s->client_addr, d->saddr, 16);
	} else {
		s->server_port = d->sport, s->client_port = d->dport;
		memcpy(s->server_addr, d->saddr, 16);
		memcpy(s->client_addr, d->daddr, 16);
	}
}

struct vnf_stream *vnf_stream_get(struct vnf_streams *t, const struct vnf_pkt *pk,
				  const struct vnf_flow *f, bool *created)
{
	uint32_t b = hash_conn(pk->d.conn_id, t->nbuckets);
	struct vnf_stream *s;

	*created = false;
	for (s = t->bucket[b]; s; s = s->hnext)
		if (s->conn_id == pk->d.conn_id)
			break;
	if (s && f && s->has_flow && s->gen != f->gen) {
		/* The conn id's flow entry was reused: a new connection. */
		vnf_stream_drop(t, s);
		s = NULL;
	}
	if (s && f && !s->has_flow) {
		/* The flow table came after the first bytes: the same connection. */
		s->has_flow = true;
		s->gen = f->gen;
		s->region = f->region;
		s->fidx = f->idx;
	}
	if (s) {
		/* Without @f (an entry that kept changing while read) nothing is known: same. */
		if (t->head != s) {
			lru_unlink(t, s);
			lru_front(t, s);
		}
		return s;
	}
	if (t->count >= t->max && t->tail) {
		struct vnf_stream *old = t->tail;

		t->evicted++;
		vnf_log_limited(5, "tochain-vnf: %s: %u connections tracked, forgetting the oldest"
				" (conn %" PRIu64 "): its later bytes will be refused\n",
				t->kind, t->max, old->conn_id);
		vnf_stream_drop(t, old);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->conn_id = pk->d.conn_id;
	s->has_flow = f != NULL;
	s->gen = f ? f->gen : 0;
	s->region = f ? f->region : 0;
	s->fidx = f ? f->idx : 0;
	pick_server(s, pk);
	s->hnext = t->bucket[b];
	t->bucket[b] = s;
	lru_front(t, s);
	t->count++;
	*created = true;
	return s;
}

enum vnf_sdir vnf_stream_dir(const struct vnf_stream *s, const struct vnf_pkt *pk)
{
	const struct tcr_desc *d = &pk->d;

	if (d->sport == s->server_port && !memcmp(d->saddr, s->server_addr, 16) &&
	    (d->dport != s->server_port || memcmp(d->daddr, s->server_addr, 16)))
		return VNF_TO_CLIENT;
	return VNF_TO_SERVER;
}

int vnf_stream_span(struct vnf_stream *s, enum vnf_sdir dir, const struct vnf_pkt *pk,
		    uint32_t *skip)
{
	uint64_t seq = pk->d.seq, end = seq + pk->len;

	*skip = 0;
	if (!s->seen[dir]) {
		/* A stream starts at offset 0; later means bytes we never saw. */
		if (seq != 0)
			return -EPIPE;
		s->seen[dir] = true;
		s->next[dir] = end;
		return 0;
	}
	if (seq > s->next[dir])
		return -EPIPE;
	if (end <= s->next[dir]) {
		*skip = pk->len;	/* all seen before: nothing new */
		return 0;
	}
	*skip = (uint32_t)(s->next[dir] - seq);
	s->next[dir] = end;
	return 0;
}

void vnf_stream_forget(struct vnf_streams *t, uint64_t conn_id)
{
	for (struct vnf_stream *s = t->bucket[hash_conn(conn_id, t->nbuckets)]; s; s = s->hnext)
		if (s->conn_id == conn_id) {
			vnf_stream_drop(t, s);
			return;
		}
}

unsigned int vnf_streams_sweep(struct vnf_streams *t,
			       bool (*gone)(void *ctx, const struct vnf_stream *s), void *ctx)
{
	struct vnf_stream *s = t->head, *next;
	unsigned int n = 0;

	for (; s; s = next) {
		next = s->lnext;
		if (gone(ctx, s)) {
			vnf_stream_drop(t, s);
			n++;
		}
	}
	return n;
}

uint32_t vnf_streams_count(const struct vnf_streams *t)
{
	return t->count;
}

uint64_t vnf_streams_evicted(const struct vnf_streams *t)
{
	return t->evicted;
}

void vnf_addr_str(uint8_t family, const uint8_t *addr, char *buf, size_t size)
{
	if (!inet_ntop(family == 6 ? AF_INET6 : AF_INET, addr, buf, (socklen_t)size))
		snprintf(buf, size, "0.0.0.0");
}
