// SPDX-License-Identifier: MIT
/*
 * Evidence of denials: histories, record slots, the writer; see
 * toe_capture.h for the design and the threading rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <jansson.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tochain/ring.h>
#include <tochain/tsc.h>
#include <tochain/util.h>
#include <tochain/vnf_proto.h>

#include "toe_capall.h"
#include "toe_capture.h"
#include "toe_pcap.h"

#define PAGE		4096u
#define REC_MAGIC	0x50414354u	/* "TCAP" */
#define REC_HDR		8192u		/* record header area of a slot; data follows */
#define HIST_NONE	0xffffffffu
#define TH_RST		0x04
#define TH_PSH		0x08
#define TH_ACK		0x10
#define ACTIVE_ALL	4u		/* head.active: full capture on (bits 0, 1: directions) */
#define IDLE_MS		200		/* the writer's wait: then the full capture's partial slot */

_Static_assert(TOE_DIR_IN == TOE_PCAP_TO_VM && TOE_DIR_OUT == TOE_PCAP_FROM_VM,
	       "directions are the same numbers in both headers");

/* One chunk as it entered the chain stage: its history offset and arrival. */
struct cap_mark {
	uint64_t off, tsc, cookie;
	uint32_t len, pad;
};

struct cap_dir_hist {
	uint64_t total;			/* bytes seen: history offset of the next byte */
	uint32_t mhead, mn;		/* marks ring: the newest is at mhead - 1 */
	struct cap_mark m[TOE_CAP_MARKS];
};

/* The loop thread's only. */
struct cap_hist {
	uint32_t sock_id;		/* 0: free */
	struct cap_dir_hist d[2];
	uint8_t *buf[2];		/* hist_bytes each */
};

/* A record: header at the start of a slot, then the bytes (in, out, trigger). */
struct cap_rec {
	uint32_t magic, dir, rule, reason;
	uint64_t tsc, unix_ns, seqno;
	struct toe_pcap_conn conn;
	uint8_t dgram, trig_found, alert, pad[5];	/* alert: an Alert, not a denial */
	char chain[TOE_NAME_MAX + 1], vnf[TOE_NAME_MAX + 1];
	char msg[VNF_ALERT_MSG_MAX + 1];	/* the Alert's message, NUL-terminated */
	uint64_t trig_off, trig_tsc;
	uint32_t trig_len, incident;	/* incident: of the VNF's answer, 0 none */
	struct {
		uint64_t start;		/* history offset of the first byte kept */
		uint32_t len, nmarks;	/* bytes kept, marks (oldest first) */
		struct cap_mark m[TOE_CAP_MARKS];
	} d[2];
};
_Static_assert(sizeof(struct cap_rec) <= REC_HDR, "record header fits its area");

struct toe_capture {
	struct toe_capture_head head;	/* first: toe_capture_on() reads it */
	/* control <-> loop: the configuration, under lock; gen published with release */
	pthread_mutex_t lock;
	struct toe_capture_cfg cfg[2];
	uint32_t gen;			/* (c) store-release in _set, pairs with sync_cfg's acquire */
	/* loop thread */
	uint32_t loop_gen, hist_bytes, max_socks, trigger_max;
	struct cap_hist *hist;		/* TOE_CAP_HISTS */
	uint32_t *hist_of;		/* per socket slot (1..max_socks): history entry or HIST_NONE */
	bool (*alive)(void *ctx, uint32_t sock_id, struct ch_pkt *pkt);
	void *ctx;
	struct toe_capall *all;		/* full capture: loop -> writer, its own slots */
	uint32_t all_dir;		/* under lock: the direction whose path full capture uses */
	char all_path[TOE_CAP_PATH_MAX];	/* the writer's: the directory all_est is of */
	uint64_t all_est;		/* the writer's: bytes in it at most, as far as it knows */
	uint64_t seqno;
	/* slots and their rings (seed 004: BUSY loop -> writer, FREE writer -> loop) */
	uint8_t *slots;
	size_t slot_bytes;
	void *busy_mem, *free_mem;
	struct tcr_ring busy_prod, busy_cons, free_prod, free_cons;
	/* the writer */
	int efd;
	bool stop, paused;		/* under lock */
	pthread_t writer;
	uint8_t *pcap;			/* page-aligned */
	size_t pcap_room;
	pthread_cond_t done_cv;
	uint64_t handled;		/* under lock */
	/* counters: relaxed atomics */
	uint64_t records, written, dropped, nohist, errors, removed, buffered, alerts;
};

static size_t round_page(size_t n)
{
	return (n + PAGE - 1) & ~(size_t)(PAGE - 1);
}

size_t toe_capture_slot_bytes(uint32_t trigger_max)
{
	return round_page(REC_HDR + 2u * TOE_CAP_KIB_MAX * 1024u + trigger_max);
}

/* Segments of one record: every byte once, cut at chunk marks and at TOE_PCAP_MSS. */
static size_t max_segs(size_t bytes)
{
	return bytes / TOE_PCAP_MSS + 4u * TOE_CAP_MARKS + 8u;
}

size_t toe_capture_pcap_max(uint32_t trigger_max)
{
	size_t bytes = 2u * TOE_CAP_KIB_MAX * 1024u + trigger_max;

	return round_page(TOE_PCAP_FILE_HDR + bytes + (max_segs(bytes) + 1) * TOE_PCAP_PKT_OVERHEAD);
}

/* ---- building the pcap (the writer; pure) --------------------------------- */

struct seg {
	uint64_t off, tsc;
	const uint8_t *p;
	uint32_t len;
};

/* Cut [off, off + len) of direction bytes at @p (first byte at @off) into MSS segments stamped @tsc. */
static size_t cut(struct seg *s, size_t n, size_t max, uint64_t off, uint64_t len,
		  const uint8_t *p, uint64_t tsc)
{
	while (len && n < max) {
		uint32_t k = len > TOE_PCAP_MSS ? TOE_PCAP_MSS : (uint32_t)len;

		s[n++] = (struct seg){ off, tsc, p, k };
		off += k, p += k, len -= k;
	}
	return n;
}

/*
 * Direction @d's segments, history bytes up to offset @end, each chunk
 * stamped with the TSC of the mark it starts at (bytes before the oldest
 * mark kept: with that mark's).
 */
static size_t dir_segs(const struct cap_rec *r, uint32_t d, const uint8_t *data, uint64_t end,
		       struct seg *s, size_t max)
{
	uint64_t start = r->d[d].start, pos = start;
	uint32_t nm = r->d[d].nmarks, k = 0;
	const struct cap_mark *m = r->d[d].m;
	size_t n = 0;

	if (end > start + r->d[d].len)
		end = start + r->d[d].len;
	while (pos < end && n < max) {
		uint64_t chunk_end = end, tsc = nm ? m[0].tsc : r->tsc;

		while (k + 1 < nm && m[k + 1].off <= pos)
			k++;
		if (nm) {
			tsc = m[k].tsc;
			if (m[k].off > pos)
				chunk_end = m[k].off;
			else if (k + 1 < nm && m[k + 1].off < end)
				chunk_end = m[k + 1].off;
		}
		if (chunk_end > end)
			chunk_end = end;
		n = cut(s, n, max, pos, chunk_end - pos, data + (pos - start), tsc);
		pos = chunk_end;
	}
	return n;
}

static uint64_t tsc_unix_ns(const struct cap_rec *r, uint64_t tsc)
{
	uint64_t back;

	if (tsc >= r->tsc)
		return r->unix_ns;
	back = tcr_tsc_to_ns(tcr_tsc_calibration(), r->tsc - tsc);
	return back < r->unix_ns ? r->unix_ns - back : 0;
}

static bool rec_valid(const struct cap_rec *r)
{
	if (r->magic != REC_MAGIC || r->dir > 1 || r->trig_len > 65536 || r->alert > 1 ||
	    memchr(r->msg, 0, sizeof(r->msg)) == NULL)
		return false;
	for (int d = 0; d < 2; d++)
		if (r->d[d].len > TOE_CAP_KIB_MAX * 1024u || r->d[d].nmarks > TOE_CAP_MARKS)
			return false;
	return true;
}

size_t toe_capture_build_pcap(const void *slot, uint8_t *out, size_t room)
{
	const struct cap_rec *r = slot;
	const uint8_t *data = (const uint8_t *)slot + REC_HDR, *trig;
	uint64_t isn_h, acked[2], end_d;
	uint32_t isn[2];
	struct seg *s[2];
	size_t n[2], i[2] = { 0, 0 }, len, max;
	bool tcp = r->conn.l4proto == IPPROTO_TCP;

	if (room < TOE_PCAP_FILE_HDR || !rec_valid(r))
		return 0;
	trig = data + r->d[0].len + r->d[1].len;
	max = max_segs(r->d[0].len + r->d[1].len + r->trig_len);
	s[0] = calloc(max, sizeof(struct seg));
	s[1] = calloc(max, sizeof(struct seg));
	if (!s[0] || !s[1]) {
		free(s[0]);
		free(s[1]);
		return 0;
	}
	/* the denied direction stops where the trigger starts; the trigger follows */
	for (uint32_t d = 0; d < 2; d++) {
		end_d = d == r->dir ? r->trig_off : UINT64_MAX;
		n[d] = dir_segs(r, d, d == 0 ? data : data + r->d[0].len, end_d, s[d], max);
	}
	n[r->dir] = cut(s[r->dir], n[r->dir], max, r->trig_off, r->trig_len, trig, r->trig_tsc);

	isn_h = tu_fnv1a64(&r->conn, sizeof(r->conn));
	isn[0] = (uint32_t)isn_h;
	isn[1] = (uint32_t)(isn_h >> 32);
	for (uint32_t d = 0; d < 2; d++)
		acked[d] = n[d] ? s[d][0].off : r->d[d].start + (d == r->dir ? 0 : r->d[d].len);

	len = toe_pcap_file_header(out);
	while (i[0] < n[0] || i[1] < n[1]) {
		uint32_t d = i[0] >= n[0] ? 1 : i[1] >= n[1] ? 0 :
			     s[1][i[1]].tsc < s[0][i[0]].tsc ? 1 : 0;
		const struct seg *g = &s[d][i[d]++];
		struct toe_pcap_pkt p = {
			.unix_ns = tsc_unix_ns(r, g->tsc), .dir = d, .tcp_flags = TH_ACK | TH_PSH,
			.seq = isn[d] + (uint32_t)g->off, .ack = isn[!d] + (uint32_t)acked[!d],
			.data = g->p, .len = g->len,
		};
		size_t k = toe_pcap_packet(out + len, room - len, &r->conn, &p);

		if (!k)
			goto fail;
		len += k;
		acked[d] = g->off + g->len;
	}
	if (tcp && !r->alert) {
		/* the TOE's abort: RST from the VM's address to the peer */
		struct toe_pcap_pkt p = {
			.unix_ns = r->unix_ns, .dir = TOE_PCAP_FROM_VM, .tcp_flags = TH_RST | TH_ACK,
			.seq = isn[1] + (uint32_t)acked[1], .ack = isn[0] + (uint32_t)acked[0],
		};
		size_t k = toe_pcap_packet(out + len, room - len, &r->conn, &p);

		if (!k)
			goto fail;
		len += k;
	}
	free(s[0]);
	free(s[1]);
	return len;
fail:
	free(s[0]);
	free(s[1]);
	return 0;
}

/* ---- the loop thread: histories and records --------------------------------- */

static void hist_reset_all(struct toe_capture *c, uint32_t bytes)
{
	for (uint32_t e = 0; e < TOE_CAP_HISTS; e++) {
		struct cap_hist *h = &c->hist[e];

		h->sock_id = 0;
		if (bytes != c->hist_bytes) {
			free(h->buf[0]);
			free(h->buf[1]);
			h->buf[0] = h->buf[1] = NULL;
		}
	}
	for (uint32_t i = 0; i <= c->max_socks; i++)
		c->hist_of[i] = HIST_NONE;
	c->hist_bytes = bytes;
}

/* A configuration change (any) starts every history afresh: offsets stay consistent. */
static void sync_cfg(struct toe_capture *c)
{
	uint32_t g = tc_load_acquire(&c->gen);	/* pairs with the release in toe_capture_set */
	uint32_t kib = 0;

	if (tc_likely(g == c->loop_gen))
		return;
	pthread_mutex_lock(&c->lock);
	for (int d = 0; d < 2; d++)
		if (c->cfg[d].on)
			kib = c->cfg[d].kib;
	pthread_mutex_unlock(&c->lock);
	hist_reset_all(c, kib ? kib * 1024u : c->hist_bytes);
	c->loop_gen = g;
}

static struct cap_hist *hist_get(struct toe_capture *c, uint32_t sock_id, bool create)
{
	uint32_t slot = sock_id & 0xffffu, e;
	struct cap_hist *h;

	if (slot == 0 || slot > c->max_socks || !c->hist_bytes)
		return NULL;
	e = c->hist_of[slot];
	if (e != HIST_NONE && c->hist[e].sock_id == sock_id)
		return &c->hist[e];
	if (!create)
		return NULL;
	if (e == HIST_NONE || c->hist[e].sock_id == 0 ||
	    (c->hist[e].sock_id & 0xffffu) != slot) {
		/* find a free entry, or one of a connection that is gone */
		e = HIST_NONE;
		for (uint32_t k = 0; k < TOE_CAP_HISTS && e == HIST_NONE; k++)
			if (c->hist[k].sock_id == 0)
				e = k;
		for (uint32_t k = 0; k < TOE_CAP_HISTS && e == HIST_NONE; k++)
			if (!c->alive(c->ctx, c->hist[k].sock_id, NULL))
				e = k;
		if (e == HIST_NONE) {
			tc_fetch_add_relaxed(&c->nohist, 1);
			return NULL;
		}
	}
	/* else: the slot's previous socket (same slot, other id) is closed: its entry is ours */
	h = &c->hist[e];
	if (h->sock_id && c->hist_of[h->sock_id & 0xffffu] == e)
		c->hist_of[h->sock_id & 0xffffu] = HIST_NONE;
	for (int d = 0; d < 2; d++) {
		if (!h->buf[d])
			h->buf[d] = malloc(c->hist_bytes);
		if (!h->buf[d]) {
			h->sock_id = 0;
			tc_fetch_add_relaxed(&c->nohist, 1);
			return NULL;
		}
		h->d[d].total = 0;
		h->d[d].mhead = h->d[d].mn = 0;
	}
	h->sock_id = sock_id;
	c->hist_of[slot] = e;
	return h;
}

void toe_capture_data(struct toe_capture *c, uint32_t sock_id, uint32_t dir, uint64_t cookie,
		      const uint8_t *data, uint32_t len)
{
	struct cap_dir_hist *d;
	struct cap_hist *h;
	struct cap_mark *m;
	uint32_t cap, n = len, pos, first;
	uint64_t off;

	if (dir > 1 || !len)
		return;
	if (tc_load_relaxed(&c->head.active) & ACTIVE_ALL)
		toe_capall_chunk(c->all, sock_id, dir, data, len);
	sync_cfg(c);
	h = hist_get(c, sock_id, true);
	if (!h)
		return;
	d = &h->d[dir];
	cap = c->hist_bytes;
	off = d->total;
	if (n > cap) {		/* only the last cap bytes can be kept */
		data += n - cap;
		off += n - cap;
		n = cap;
	}
	pos = (uint32_t)(off % cap);
	first = n < cap - pos ? n : cap - pos;
	memcpy(h->buf[dir] + pos, data, first);
	memcpy(h->buf[dir], data + first, n - first);
	m = &d->m[d->mhead % TOE_CAP_MARKS];
	*m = (struct cap_mark){ .off = d->total, .tsc = tcr_tsc_now(), .cookie = cookie, .len = len };
	d->mhead++;
	if (d->mn < TOE_CAP_MARKS)
		d->mn++;
	d->total += len;
}

/* Copy direction @dir of @h into @r and the bytes to @out; returns the bytes. */
static uint32_t rec_dir(struct toe_capture *c, struct cap_rec *r, uint32_t dir,
			const struct cap_hist *h, uint8_t *out)
{
	const struct cap_dir_hist *d = &h->d[dir];
	uint64_t kept = d->total < c->hist_bytes ? d->total : c->hist_bytes;
	uint64_t start = d->total - kept;
	uint32_t pos = (uint32_t)(start % c->hist_bytes), first;

	first = (uint32_t)(kept < c->hist_bytes - pos ? kept : c->hist_bytes - pos);
	memcpy(out, h->buf[dir] + pos, first);
	memcpy(out + first, h->buf[dir], kept - first);
	r->d[dir].start = start;
	r->d[dir].len = (uint32_t)kept;
	r->d[dir].nmarks = d->mn;
	for (uint32_t k = 0; k < d->mn; k++)
		r->d[dir].m[k] = d->m[(d->mhead - d->mn + k) % TOE_CAP_MARKS];
	return (uint32_t)kept;
}

void toe_capture_conn_of(struct toe_pcap_conn *c, const struct ch_pkt *p, uint32_t dir)
{
	bool in = dir == TOE_DIR_IN;	/* inbound: the peer is the source */

	c->family = p->family;
	c->l4proto = p->l4proto;
	c->peer_port = in ? p->sport : p->dport;
	c->vm_port = in ? p->dport : p->sport;
	memcpy(c->peer_addr, in ? p->saddr : p->daddr, 16);
	memcpy(c->vm_addr, in ? p->daddr : p->saddr, 16);
}

/* The full capture's question: @sock_id's tuple (toe_capall_conn_fn). */
static bool all_conn(void *ctx, uint32_t sock_id, struct toe_pcap_conn *out)
{
	struct toe_capture *c = ctx;
	struct ch_pkt p;

	memset(&p, 0, sizeof(p));
	if (!c->alive(c->ctx, sock_id, &p))
		return false;
	toe_capture_conn_of(out, &p, TOE_DIR_IN);
	return true;
}

static void record(struct toe_capture *c, uint32_t sock_id, bool dgram,
		   const struct ch_result *res, const uint8_t *data, const char *chain,
		   const char *vnf, bool alert);

void toe_capture_deny(struct toe_capture *c, uint32_t sock_id, bool dgram,
		      const struct ch_result *res, const uint8_t *data, const char *chain,
		      const char *vnf)
{
	record(c, sock_id, dgram, res, data, chain, vnf, false);
}

void toe_capture_alert(struct toe_capture *c, uint32_t sock_id, bool dgram,
		       const struct ch_result *res, const uint8_t *data, const char *chain,
		       const char *vnf)
{
	if (res->alert_vnf != CH_VNF_NONE)
		record(c, sock_id, dgram, res, data, chain, vnf, true);
}

/* A record of @res (@alert: its Alert, else its denial); see toe_capture_deny. */
static void record(struct toe_capture *c, uint32_t sock_id, bool dgram,
		   const struct ch_result *res, const uint8_t *data, const char *chain,
		   const char *vnf, bool alert)
{
	uint32_t dir = res->chain, idx, tl;
	const struct cap_hist *h;
	struct cap_rec *r;
	uint8_t *out;
	struct timespec ts;

	if (dir > 1 || !(tc_load_relaxed(&c->head.active) & (1u << dir)))
		return;
	sync_cfg(c);
	if (tcr_ring_dequeue_burst(&c->free_cons, &idx, 1) != 1) {
		tc_fetch_add_relaxed(&c->dropped, 1);	/* the writer is behind: never wait */
		return;
	}
	r = (struct cap_rec *)(c->slots + (size_t)idx * c->slot_bytes);
	out = (uint8_t *)r + REC_HDR;
	memset(r, 0, sizeof(*r));
	r->magic = REC_MAGIC;
	r->dir = dir;
	r->alert = alert;
	if (alert) {
		uint32_t ml = res->alert_msg ? res->alert_msg_len : 0;

		r->rule = res->alert_rule;
		r->reason = CH_REASON_NONE;
		/* the VNF's text: printable ASCII or '?', for the sidecar and the listing */
		for (uint32_t i = 0; i < ml && i < VNF_ALERT_MSG_MAX; i++) {
			uint8_t ch = (uint8_t)res->alert_msg[i];

			r->msg[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
		}
		tc_fetch_add_relaxed(&c->alerts, 1);
	} else {
		r->rule = res->deny_rule;
		r->reason = res->reason;
		r->incident = res->answer ? res->incident : 0;	/* as stats shows it */
	}
	r->dgram = dgram;
	snprintf(r->chain, sizeof(r->chain), "%s", chain);
	snprintf(r->vnf, sizeof(r->vnf), "%s", vnf);
	toe_capture_conn_of(&r->conn, &res->pkt, dir);
	h = dgram ? NULL : hist_get(c, sock_id, false);
	r->trig_tsc = res->pkt.tsc;
	if (h) {
		const struct cap_dir_hist *d = &h->d[dir];

		out += rec_dir(c, r, 0, h, out);
		out += rec_dir(c, r, 1, h, out);
		r->trig_off = d->total;
		/* the trigger's own mark, newest first (its buffer is still held: no later reuse) */
		for (uint32_t k = 1; k <= d->mn; k++) {
			const struct cap_mark *m = &d->m[(d->mhead - k) % TOE_CAP_MARKS];

			if (m->cookie == res->pkt.cookie && m->len == res->pkt.len) {
				r->trig_off = m->off;
				r->trig_tsc = m->tsc;
				r->trig_found = 1;
				break;
			}
		}
	}
	tl = res->pkt.len < c->trigger_max ? res->pkt.len : c->trigger_max;
	memcpy(out, data, tl);
	r->trig_len = tl;
	r->seqno = ++c->seqno;
	clock_gettime(CLOCK_REALTIME, &ts);
	r->tsc = tcr_tsc_now();
	r->unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!r->trig_tsc || r->trig_tsc > r->tsc)
		r->trig_tsc = r->tsc;
	tc_fetch_add_relaxed(&c->records, 1);
	/* cannot be full: there are as many entries as slots */
	tcr_ring_enqueue_burst(&c->busy_prod, &idx, 1);
	{
		uint64_t one = 1;
		ssize_t w = write(c->efd, &one, sizeof(one));	/* never blocks (eventfd counter) */

		(void)w;
	}
}

/* ---- the writer --------------------------------------------------------------- */

static uint64_t file_size(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) ?
	       (uint64_t)st.st_size : 0;
}

/*
 * Remove the oldest captures (names sort by time) of @path past @max
 * bytes; the newest stays.  Returns the bytes left.
 */
static uint64_t enforce_bound(struct toe_capture *c, const char *path, uint64_t max)
{
	DIR *dir = opendir(path);
	char **names, side[NAME_MAX + 1];
	uint64_t total = 0;
	size_t n;

	if (!dir)
		return 0;
	n = tu_dir_names(dirfd(dir), ".pcap", &names);
	for (size_t i = 0; i < n; i++) {
		snprintf(side, sizeof(side), "%.*s.json", (int)strlen(names[i]) - 5, names[i]);
		total += file_size(dirfd(dir), names[i]) + file_size(dirfd(dir), side);
	}
	for (size_t i = 0; i + 1 < n && total > max; i++) {
		snprintf(side, sizeof(side), "%.*s.json", (int)strlen(names[i]) - 5, names[i]);
		total -= file_size(dirfd(dir), names[i]) + file_size(dirfd(dir), side);
		unlinkat(dirfd(dir), names[i], 0);
		unlinkat(dirfd(dir), side, 0);
		tc_fetch_add_relaxed(&c->removed, 1);
	}
	tu_dir_names_free(names, n);
	closedir(dir);
	return total;
}

int toe_capture_write_file(const char *tmp, uint8_t *buf, size_t len, uint64_t *buffered)
{
	size_t al = round_page(len), done = 0;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600);

	if (fd < 0 && errno == EINVAL) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd >= 0)
			tc_fetch_add_relaxed(buffered, 1);
	}
	if (fd < 0)
		return -errno;
	memset(buf + len, 0, al - len);
	while (done < al) {
		ssize_t w = pwrite(fd, buf + done, al - done, (off_t)done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? -errno : -EIO;

			close(fd);
			unlink(tmp);
			return err;
		}
		done += (size_t)w;
	}
	if (ftruncate(fd, (off_t)len) || close(fd)) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

static void conn_str(const struct toe_pcap_conn *k, bool vm_src, char *out, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "?", b[INET6_ADDRSTRLEN] = "?";
	int af = k->family == AF_INET6 ? AF_INET6 : AF_INET;
	const char *f = af == AF_INET6 ? "[%s]:%u>[%s]:%u" : "%s:%u>%s:%u";

	inet_ntop(af, vm_src ? k->vm_addr : k->peer_addr, a, sizeof(a));
	inet_ntop(af, vm_src ? k->peer_addr : k->vm_addr, b, sizeof(b));
	snprintf(out, size, f, a, vm_src ? k->vm_port : k->peer_port, b,
		 vm_src ? k->peer_port : k->vm_port);
}

static int write_sidecar(const struct cap_rec *r, const char *tmp, const char *pcap_name,
			 const char *iso)
{
	char conn[112], inc[9];
	json_t *j;
	int err;

	conn_str(&r->conn, r->dir == TOE_DIR_OUT, conn, sizeof(conn));
	snprintf(inc, sizeof(inc), "%08x", r->incident);
	j = json_pack("{s:s,s:s,s:f,s:I,s:I,s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:I,s:i,s:b,s:I,s:I,s:o}",
		      "pcap", pcap_name, "time", iso, "unix_time", (double)r->unix_ns / 1e9,
		      "tsc", (json_int_t)r->tsc, "seq", (json_int_t)r->seqno, "chain", r->chain,
		      "dir", r->dir == TOE_DIR_IN ? "in" : "out", "vnf", r->vnf,
		      "rule", (int)r->rule, "reason", toe_chain_reason_name(r->reason),
		      "conn", conn, "proto", r->conn.l4proto == IPPROTO_UDP ? "udp" : "tcp",
		      "trigger_offset", (json_int_t)r->trig_off, "trigger_len", (int)r->trig_len,
		      "trigger_in_history", (int)r->trig_found,
		      "bytes_in", (json_int_t)r->d[0].len, "bytes_out", (json_int_t)r->d[1].len,
		      "incident", r->incident ? json_string(inc) : json_null());
	if (!j)
		return -ENOMEM;
	/* an Alert: the data went on (no reset in the pcap), the rule's message */
	json_object_set_new(j, "verdict", json_string(r->alert ? "alert" : "deny"));
	if (r->alert) {
		json_object_set_new(j, "reason", json_string("alert"));
		json_object_set_new(j, "msg", json_string(r->msg));
	}
	err = json_dump_file(j, tmp, JSON_COMPACT) ? -EIO : 0;
	json_decref(j);
	return err;
}

static int write_record(struct toe_capture *c, const struct cap_rec *r)
{
	char path[TOE_CAP_PATH_MAX], stem[160], iso[96], day[64], pcap_tmp[TOE_CAP_PATH_MAX + 200],
	     pcap_fin[TOE_CAP_PATH_MAX + 200], js_tmp[TOE_CAP_PATH_MAX + 200],
	     js_fin[TOE_CAP_PATH_MAX + 200];
	uint64_t max;
	time_t secs = (time_t)(r->unix_ns / 1000000000ull);
	struct tm tm;
	size_t len;
	int err;

	if (!rec_valid(r))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	snprintf(path, sizeof(path), "%s", c->cfg[r->dir].path);
	max = c->cfg[r->dir].max_bytes;
	pthread_mutex_unlock(&c->lock);
	if (!path[0])
		return -ENOENT;
	len = toe_capture_build_pcap(r, c->pcap, c->pcap_room);
	if (!len)
		return -EOVERFLOW;
	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(iso, sizeof(iso), "%s.%09uZ", day, (unsigned int)(r->unix_ns % 1000000000ull));
	/* names sort by time: the bound removes the oldest first */
	strftime(day, sizeof(day), "%Y%m%dT%H%M%S", &tm);
	snprintf(stem, sizeof(stem), "%s.%09uZ-%06llu-%s-r%u", day,
		 (unsigned int)(r->unix_ns % 1000000000ull), (unsigned long long)r->seqno,
		 r->vnf[0] && strcmp(r->vnf, "-") ? r->vnf : "none", r->rule);
	snprintf(pcap_tmp, sizeof(pcap_tmp), "%s/.%s.pcap.tmp", path, stem);
	snprintf(pcap_fin, sizeof(pcap_fin), "%s/%s.pcap", path, stem);
	snprintf(js_tmp, sizeof(js_tmp), "%s/.%s.json.tmp", path, stem);
	snprintf(js_fin, sizeof(js_fin), "%s/%s.json", path, stem);
	if ((err = toe_capture_write_file(pcap_tmp, c->pcap, len, &c->buffered)))
		return err;
	{
		char pname[200];

		snprintf(pname, sizeof(pname), "%s.pcap", stem);
		err = write_sidecar(r, js_tmp, pname, iso);
	}
	/* the sidecar first: a listed pcap always has one */
	if (err || rename(js_tmp, js_fin) || rename(pcap_tmp, pcap_fin)) {
		err = err ? err : -errno;
		unlink(js_tmp);
		unlink(js_fin);
		unlink(pcap_tmp);
		return err;
	}
	tc_fetch_add_relaxed(&c->written, 1);
	enforce_bound(c, path, max);
	return 0;
}

/* The full capture's files: into the path of its direction (kept after off, as for denials). */
static void drain_all(struct toe_capture *c, bool idle)
{
	char path[TOE_CAP_PATH_MAX];
	uint64_t max, n;

	pthread_mutex_lock(&c->lock);
	snprintf(path, sizeof(path), "%s", c->cfg[c->all_dir].path);
	max = c->cfg[c->all_dir].max_bytes;
	pthread_mutex_unlock(&c->lock);
	n = toe_capall_drain(c->all, path[0] ? path : NULL, idle);
	if (!n)
		return;
	/*
	 * A directory scan per file would cost more than the file: rescan
	 * when what is known to be there plus what was written passes the
	 * bound (denial records bound the directory on each write anyway).
	 */
	if (strcmp(path, c->all_path) || c->all_est + n > max) {
		c->all_est = enforce_bound(c, path, max);
		snprintf(c->all_path, sizeof(c->all_path), "%s", path);
	} else {
		c->all_est += n;
	}
}

static void *writer_main(void *arg)
{
	struct toe_capture *c = arg;

	for (;;) {
		struct pollfd pfd = { .fd = c->efd, .events = POLLIN };
		uint64_t v;
		uint32_t idx;
		bool stop;
		int n;

		pthread_mutex_lock(&c->lock);
		while (c->paused && !c->stop)
			pthread_cond_wait(&c->done_cv, &c->lock);
		pthread_mutex_unlock(&c->lock);
		while (tcr_ring_dequeue_burst(&c->busy_cons, &idx, 1) == 1) {
			if (write_record(c, (const void *)(c->slots + (size_t)idx * c->slot_bytes)))
				tc_fetch_add_relaxed(&c->errors, 1);
			tcr_ring_enqueue_burst(&c->free_prod, &idx, 1);
			pthread_mutex_lock(&c->lock);
			c->handled++;
			pthread_cond_broadcast(&c->done_cv);
			pthread_mutex_unlock(&c->lock);
		}
		pthread_mutex_lock(&c->lock);
		stop = c->stop;
		pthread_mutex_unlock(&c->lock);
		drain_all(c, stop);
		if (stop)
			return NULL;
		/* records enqueued after the ring looked empty have written the counter */
		n = poll(&pfd, 1, IDLE_MS);
		if (n > 0 && read(c->efd, &v, sizeof(v)) < 0 && errno != EINTR && errno != EAGAIN)
			return NULL;
		if (n == 0)
			drain_all(c, true);	/* idle: what the loop's current slot holds, to disk */
	}
}

/* ---- life cycle and control --------------------------------------------------- */

int toe_capture_ring_pair(void **mem, struct tcr_ring *prod, struct tcr_ring *cons, uint32_t n)
{
	size_t bytes = tcr_ring_bytes(n);

	*mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	if (!*mem)
		return -ENOMEM;
	tcr_ring_format(*mem, n);
	if (tcr_ring_attach(prod, *mem, n, n, 0) || tcr_ring_attach(cons, *mem, n, n, 0))
		return -EINVAL;
	return 0;
}

/* The memory of @c (the writer stopped or never started). */
static void cap_free(struct toe_capture *c)
{
	for (uint32_t e = 0; c->hist && e < TOE_CAP_HISTS; e++) {
		free(c->hist[e].buf[0]);
		free(c->hist[e].buf[1]);
	}
	toe_capall_destroy(c->all);
	free(c->busy_mem);
	free(c->free_mem);
	free(c->pcap);
	free(c->slots);
	free(c->hist_of);
	free(c->hist);
	free(c);
}

struct toe_capture *toe_capture_create(uint32_t max_socks, uint32_t trigger_max,
				       bool (*alive)(void *ctx, uint32_t sock_id, struct ch_pkt *pkt),
				       void *ctx)
{
	struct toe_capture *c = calloc(1, sizeof(*c));
	int err = ENOMEM;

	if (!c)
		return NULL;
	c->max_socks = max_socks;
	c->trigger_max = trigger_max;
	c->alive = alive;
	c->ctx = ctx;
	c->efd = -1;
	c->slot_bytes = toe_capture_slot_bytes(trigger_max);
	c->pcap_room = toe_capture_pcap_max(trigger_max);
	c->hist = calloc(TOE_CAP_HISTS, sizeof(*c->hist));
	c->hist_of = malloc(((size_t)max_socks + 1) * sizeof(uint32_t));
	c->slots = aligned_alloc(PAGE, c->slot_bytes * TOE_CAP_SLOTS);
	c->pcap = aligned_alloc(PAGE, c->pcap_room);
	if (!c->hist || !c->hist_of || !c->slots || !c->pcap)
		goto out_free;
	for (uint32_t i = 0; i <= max_socks; i++)
		c->hist_of[i] = HIST_NONE;
	err = EINVAL;
	if (toe_capture_ring_pair(&c->busy_mem, &c->busy_prod, &c->busy_cons, TOE_CAP_SLOTS) ||
	    toe_capture_ring_pair(&c->free_mem, &c->free_prod, &c->free_cons, TOE_CAP_SLOTS))
		goto out_free;
	for (uint32_t i = 0; i < TOE_CAP_SLOTS; i++)
		tcr_ring_enqueue_burst(&c->free_prod, &i, 1);
	tcr_tsc_calibration();	/* measured once, here, not at the first denial */
	c->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->efd < 0) {
		err = errno;
		goto out_free;
	}
	c->all = toe_capall_create(max_socks, all_conn, c, c->efd);
	if (!c->all) {
		err = errno;
		close(c->efd);
		goto out_free;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done_cv, NULL);
	err = pthread_create(&c->writer, NULL, writer_main, c);
	if (err)
		goto out_sync;
	return c;

out_sync:
	pthread_cond_destroy(&c->done_cv);
	pthread_mutex_destroy(&c->lock);
	close(c->efd);
out_free:
	cap_free(c);
	errno = err;
	return NULL;
}

void toe_capture_destroy(struct toe_capture *c)
{
	uint64_t one = 1;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->done_cv);
	pthread_mutex_unlock(&c->lock);
	if (write(c->efd, &one, sizeof(one)) < 0) {
		/* cannot happen with an eventfd below its maximum */
	}
	pthread_join(c->writer, NULL);
	pthread_cond_destroy(&c->done_cv);
	pthread_mutex_destroy(&c->lock);
	close(c->efd);
	cap_free(c);
}

int toe_capture_set(struct toe_capture *c, uint32_t dir, const struct toe_capture_cfg *cfg)
{
	struct stat st;
	uint32_t active = 0;
	int err = 0;

	if (dir > 1)
		return -EINVAL;
	if (cfg->on) {
		if (cfg->kib < 1 || cfg->kib > TOE_CAP_KIB_MAX || cfg->max_bytes < TOE_CAP_BYTES_MIN ||
		    cfg->path[0] != '/' || !memchr(cfg->path, 0, sizeof(cfg->path)))
			return -EINVAL;
		if (stat(cfg->path, &st))
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	pthread_mutex_lock(&c->lock);
	if (cfg->on && c->cfg[!dir].on && c->cfg[!dir].kib != cfg->kib) {
		err = -EBUSY;
	} else if (cfg->on && cfg->all && c->cfg[!dir].on && c->cfg[!dir].all) {
		err = -EEXIST;
	} else if (cfg->on) {
		c->cfg[dir] = *cfg;
		if (cfg->all)
			c->all_dir = dir;
	} else {
		c->cfg[dir].on = false;	/* path kept: records already taken still go there */
		c->cfg[dir].all = false;
	}
	if (!err) {
		for (uint32_t d = 0; d < 2; d++)
			if (c->cfg[d].on)
				active |= (1u << d) | (c->cfg[d].all ? ACTIVE_ALL : 0);
		/* release: the loop that sees the new generation sees the configuration (sync_cfg) */
		tc_store_release(&c->gen, c->gen + 1);
		tc_store_release(&c->head.active, active);
	}
	pthread_mutex_unlock(&c->lock);
	return err;
}

void toe_capture_get(struct toe_capture *c, struct toe_capture_stats *st)
{
	pthread_mutex_lock(&c->lock);
	st->cfg[0] = c->cfg[0];
	st->cfg[1] = c->cfg[1];
	pthread_mutex_unlock(&c->lock);
	st->records = tc_load_relaxed(&c->records);
	st->written = tc_load_relaxed(&c->written);
	st->dropped = tc_load_relaxed(&c->dropped);
	st->nohist = tc_load_relaxed(&c->nohist);
	st->errors = tc_load_relaxed(&c->errors);
	st->removed = tc_load_relaxed(&c->removed);
	st->buffered = tc_load_relaxed(&c->buffered);
	st->alerts = tc_load_relaxed(&c->alerts);
	toe_capall_get(c->all, &st->all);
}

void toe_capture_flush(struct toe_capture *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->handled < tc_load_relaxed(&c->records))
		pthread_cond_wait(&c->done_cv, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

void toe_capture_pause(struct toe_capture *c, bool pause)
{
	uint64_t one = 1;

	pthread_mutex_lock(&c->lock);
	c->paused = pause;
	pthread_cond_broadcast(&c->done_cv);
	pthread_mutex_unlock(&c->lock);
	if (!pause && write(c->efd, &one, sizeof(one)) < 0) {
		/* cannot happen with an eventfd below its maximum */
	}
}
