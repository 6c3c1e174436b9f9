// SPDX-License-Identifier: MIT
/* Full capture of the TOE's TCP traffic; see toe_capall.h for the design and the threads. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tochain/barrier.h>
#include <tochain/ring.h>
#include <tochain/tsc.h>
#include <tochain/util.h>

#include "toe_capall.h"
#include "toe_capture.h"

#define PAGE		4096u
#define NONE		0xffffffffu
#define TH_PSH		0x08
#define TH_ACK		0x10

/* One chunk in a slot, followed by its bytes (padded to 8). */
struct chunk {
	uint32_t len, dir;
	uint64_t off, ack, tsc;		/* off: in @dir's stream; ack: the other direction's next */
	struct toe_pcap_conn conn;
};
#define CHUNK_HDR	((uint32_t)((sizeof(struct chunk) + 7) & ~7ul))
#define CHUNK_MAX	(TOE_CAPALL_SLOT_BYTES / 4)	/* longer chunks go in pieces */

/* Per socket slot (the loop thread's). */
struct conn_state {
	uint32_t sock_id;		/* 0: none */
	uint64_t off[2];
	struct toe_pcap_conn conn;
};

struct toe_capall {
	/* the loop thread */
	uint32_t max_socks, cur, cur_fill;
	struct conn_state *conns;
	toe_capall_conn_fn *conn_fn;
	void *ctx;
	/* shared: slot fills and the current slot (see the header) */
	uint8_t *slots;
	uint32_t *fill;			/* (l) store-release per chunk; writer load-acquire */
	uint32_t pub_cur;		/* (l) store-release after fill[cur] = 0; writer load-acquire */
	void *busy_mem, *free_mem;
	struct tcr_ring busy_prod, busy_cons, free_prod, free_cons;
	int wake_fd;
	/* the writer */
	uint32_t peek_idx, peek_done;
	uint8_t *wbuf;			/* the current file, page-aligned */
	size_t wlen, wroom;
	uint64_t first_unix_ns, fileno;
	/* counters: relaxed atomics */
	uint64_t chunks, bytes, dropped, dropped_bytes, files, errors, buffered;
};

struct toe_capall *toe_capall_create(uint32_t max_socks, toe_capall_conn_fn *conn, void *ctx,
				     int wake_fd)
{
	struct toe_capall *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->max_socks = max_socks;
	a->conn_fn = conn;
	a->ctx = ctx;
	a->wake_fd = wake_fd;
	a->cur = a->pub_cur = a->peek_idx = NONE;
	a->wroom = TOE_CAPALL_FILE_BYTES + 2 * PAGE;
	a->conns = calloc((size_t)max_socks + 1, sizeof(*a->conns));
	a->fill = calloc(TOE_CAPALL_SLOTS, sizeof(*a->fill));
	a->slots = aligned_alloc(PAGE, (size_t)TOE_CAPALL_SLOT_BYTES * TOE_CAPALL_SLOTS);
	a->wbuf = aligned_alloc(PAGE, a->wroom);
	if (!a->conns || !a->fill || !a->slots || !a->wbuf ||
	    toe_capture_ring_pair(&a->busy_mem, &a->busy_prod, &a->busy_cons, TOE_CAPALL_SLOTS) ||
	    toe_capture_ring_pair(&a->free_mem, &a->free_prod, &a->free_cons, TOE_CAPALL_SLOTS)) {
		toe_capall_destroy(a);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < TOE_CAPALL_SLOTS; i++)
		tcr_ring_enqueue_burst(&a->free_prod, &i, 1);
	return a;
}

void toe_capall_destroy(struct toe_capall *a)
{
	if (!a)
		return;
	free(a->busy_mem);
	free(a->free_mem);
	free(a->wbuf);
	free(a->slots);
	free(a->fill);
	free(a->conns);
	free(a);
}

/* ---- the loop thread ---- */

/* The current slot is full (or there is none): hand it over, take a free one.  false: none free. */
static bool next_slot(struct toe_capall *a)
{
	uint32_t idx;

	if (a->cur != NONE) {
		uint64_t one = 1;
		ssize_t w;

		tc_store_release(&a->pub_cur, NONE);
		/* cannot be full: as many entries as slots */
		tcr_ring_enqueue_burst(&a->busy_prod, &a->cur, 1);
		a->cur = NONE;
		w = write(a->wake_fd, &one, sizeof(one));	/* eventfd: never blocks */
		(void)w;
	}
	if (tcr_ring_dequeue_burst(&a->free_cons, &idx, 1) != 1)
		return false;
	a->fill[idx] = 0;
	a->cur = idx;
	a->cur_fill = 0;
	/* release: pairs with the writer's acquire in peek(); it sees fill[idx] == 0 */
	tc_store_release(&a->pub_cur, idx);
	return true;
}

static void put_chunk(struct toe_capall *a, struct conn_state *cs, uint32_t dir,
		      const uint8_t *data, uint32_t len)
{
	uint32_t need = CHUNK_HDR + ((len + 7) & ~7u);
	struct chunk *ch;

	if ((a->cur == NONE || a->cur_fill + need > TOE_CAPALL_SLOT_BYTES) && !next_slot(a)) {
		tc_fetch_add_relaxed(&a->dropped, 1);	/* the writer is behind: never wait */
		tc_fetch_add_relaxed(&a->dropped_bytes, len);
		cs->off[dir] += len;	/* a gap in the stream, not shifted bytes */
		return;
	}
	ch = (struct chunk *)(a->slots + (size_t)a->cur * TOE_CAPALL_SLOT_BYTES + a->cur_fill);
	*ch = (struct chunk){ .len = len, .dir = dir, .off = cs->off[dir], .ack = cs->off[!dir],
			      .tsc = tcr_tsc_now(), .conn = cs->conn };
	memcpy((uint8_t *)ch + CHUNK_HDR, data, len);
	cs->off[dir] += len;
	a->cur_fill += need;
	/* release: the chunk's bytes before the fill that covers them (writer: acquire) */
	tc_store_release(&a->fill[a->cur], a->cur_fill);
	tc_fetch_add_relaxed(&a->chunks, 1);
	tc_fetch_add_relaxed(&a->bytes, len);
}

void toe_capall_chunk(struct toe_capall *a, uint32_t sock_id, uint32_t dir, const uint8_t *data,
		      uint32_t len)
{
	uint32_t slot = sock_id & 0xffffu;
	struct conn_state *cs;

	if (dir > 1 || slot == 0 || slot > a->max_socks)
		return;
	cs = &a->conns[slot];
	if (cs->sock_id != sock_id) {
		if (!a->conn_fn(a->ctx, sock_id, &cs->conn)) {
			cs->sock_id = 0;
			return;
		}
		cs->sock_id = sock_id;
		cs->off[0] = cs->off[1] = 0;
	}
	while (len) {
		uint32_t k = len > CHUNK_MAX ? CHUNK_MAX : len;

		put_chunk(a, cs, dir, data, k);
		data += k;
		len -= k;
	}
}

/* ---- the writer ---- */

/* Write the current file (whole pages, O_DIRECT) under @path and start a new one; its bytes. */
static uint64_t file_finish(struct toe_capall *a, const char *path)
{
	char day[32], stem[96], tmp[TOE_CAP_PATH_MAX + 128], fin[TOE_CAP_PATH_MAX + 128];
	time_t secs = (time_t)(a->first_unix_ns / 1000000000ull);
	size_t len = a->wlen;
	struct tm tm;
	int err;

	a->wlen = 0;
	if (len <= TOE_PCAP_FILE_HDR || !path)
		return 0;
	gmtime_r(&secs, &tm);
	strftime(day, sizeof(day), "%Y%m%dT%H%M%S", &tm);
	/* names sort by time with the denial captures': the bound removes the oldest first */
	snprintf(stem, sizeof(stem), "%s.%09uZ-%06llu-all", day,
		 (unsigned int)(a->first_unix_ns % 1000000000ull),
		 (unsigned long long)++a->fileno);
	snprintf(tmp, sizeof(tmp), "%s/.%s.pcap.tmp", path, stem);
	snprintf(fin, sizeof(fin), "%s/%s.pcap", path, stem);
	err = toe_capture_write_file(tmp, a->wbuf, len, &a->buffered);
	if (!err && rename(tmp, fin)) {
		err = -errno;
		unlink(tmp);
	}
	if (err) {
		tc_fetch_add_relaxed(&a->errors, 1);
		return 0;
	}
	tc_fetch_add_relaxed(&a->files, 1);
	return len;
}

static uint64_t unix_of(uint64_t tsc, uint64_t now_tsc, uint64_t now_ns)
{
	uint64_t back = tsc < now_tsc ? tcr_tsc_to_ns(tcr_tsc_calibration(), now_tsc - tsc) : 0;

	return back < now_ns ? now_ns - back : 0;
}

/* One chunk's packets (MSS segments) into the current file; @files: files finished. */
static void emit(struct toe_capall *a, const struct chunk *ch, const char *path, uint64_t now_tsc,
		 uint64_t now_ns, uint64_t *files)
{
	const uint8_t *p = (const uint8_t *)ch + CHUNK_HDR;
	uint64_t isn = tu_fnv1a64(&ch->conn, sizeof(ch->conn)), off = ch->off;
	uint32_t isnd[2] = { (uint32_t)isn, (uint32_t)(isn >> 32) }, left = ch->len;
	uint64_t ns = unix_of(ch->tsc, now_tsc, now_ns);

	while (left) {
		uint32_t k = left > TOE_PCAP_MSS ? TOE_PCAP_MSS : left;
		struct toe_pcap_pkt pk = {
			.unix_ns = ns, .dir = ch->dir, .tcp_flags = TH_ACK | TH_PSH,
			.seq = isnd[ch->dir] + (uint32_t)off, .ack = isnd[!ch->dir] + (uint32_t)ch->ack,
			.data = p, .len = k,
		};
		size_t n;

		if (a->wlen + toe_pcap_packet_size(&ch->conn, k) > TOE_CAPALL_FILE_BYTES)
			*files += file_finish(a, path);
		if (!a->wlen) {
			a->wlen = toe_pcap_file_header(a->wbuf);
			a->first_unix_ns = ns;
		}
		n = toe_pcap_packet(a->wbuf + a->wlen, a->wroom - a->wlen, &ch->conn, &pk);
		if (!n) {
			tc_fetch_add_relaxed(&a->errors, 1);	/* a tuple toe_pcap refuses */
			return;
		}
		a->wlen += n;
		p += k, off += k, left -= k;
	}
}

/* Chunks of slot @idx between byte @from and @to. */
static void emit_range(struct toe_capall *a, uint32_t idx, uint32_t from, uint32_t to,
		       const char *path, uint64_t now_tsc, uint64_t now_ns, uint64_t *files)
{
	const uint8_t *s = a->slots + (size_t)idx * TOE_CAPALL_SLOT_BYTES;

	while (from + CHUNK_HDR <= to) {
		const struct chunk *ch = (const struct chunk *)(s + from);

		emit(a, ch, path, now_tsc, now_ns, files);
		from += CHUNK_HDR + ((ch->len + 7) & ~7u);
	}
}

uint64_t toe_capall_drain(struct toe_capall *a, const char *path, bool idle)
{
	struct timespec ts;
	uint64_t now_tsc, now_ns, files = 0;
	uint32_t idx, cur;

	clock_gettime(CLOCK_REALTIME, &ts);
	now_tsc = tcr_tsc_now();
	now_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	while (tcr_ring_dequeue_burst(&a->busy_cons, &idx, 1) == 1) {
		uint32_t from = idx == a->peek_idx ? a->peek_done : 0;

		if (idx == a->peek_idx)
			a->peek_idx = NONE;
		emit_range(a, idx, from, tc_load_acquire(&a->fill[idx]), path, now_tsc, now_ns,
			   &files);
		tcr_ring_enqueue_burst(&a->free_prod, &idx, 1);
	}
	if (idle) {
		/* acquire: pairs with next_slot's release; then fill's with put_chunk's */
		cur = tc_load_acquire(&a->pub_cur);
		if (cur != NONE) {
			uint32_t to = tc_load_acquire(&a->fill[cur]);

			if (cur != a->peek_idx) {
				a->peek_idx = cur;
				a->peek_done = 0;
			}
			emit_range(a, cur, a->peek_done, to, path, now_tsc, now_ns, &files);
			a->peek_done = to;
		}
		files += file_finish(a, path);
	}
	return files;
}

void toe_capall_get(struct toe_capall *a, struct toe_capall_stats *st)
{
	st->chunks = tc_load_relaxed(&a->chunks);
	st->bytes = tc_load_relaxed(&a->bytes);
	st->dropped = tc_load_relaxed(&a->dropped);
	st->dropped_bytes = tc_load_relaxed(&a->dropped_bytes);
	st->files = tc_load_relaxed(&a->files);
	st->errors = tc_load_relaxed(&a->errors);
	st->buffered = tc_load_relaxed(&a->buffered);
}
