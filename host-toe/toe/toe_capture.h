/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): evidence of denials and
 * alerts (toe_capture_*).  For every connection a chain denies, and every
 * chunk a VNF passes with an Alert (vnf_proto.h), while capture is on for
 * that chain's direction, one pcap file (toe_pcap.h) with the last KiB of
 * each direction of the connection and the triggering chunk, and a JSON
 * sidecar (verdict, chain, VNF, rule, an alert's message, reason,
 * connection, trigger offset).
 *
 * Design (seed 004, zero-copy traffic measurement):
 *  - the data path never waits: while capture is on, the loop thread
 *    copies each chunk of a TCP connection into that connection's history
 *    (a byte ring of KiB per direction, with the TSC and stream offset of
 *    the last CAP_MARKS chunks); at a denial it copies the histories and
 *    the trigger into a fixed-size record slot taken from the FREE ring
 *    and puts the slot's index on the BUSY ring.  No free slot: the
 *    denial is counted in "dropped" and the data path goes on;
 *  - a writer thread of its own takes records off BUSY, assembles the
 *    pcap in a page-aligned buffer, writes it with O_DIRECT (whole pages,
 *    then ftruncate to the real length; plain writes where the file
 *    system refuses O_DIRECT, counted in "buffered"), renames it into
 *    place, removes the oldest files of that directory past its byte
 *    bound, and gives the slot back on FREE;
 *  - timestamps are TSC ticks (tcr_tsc_now), converted to wall-clock
 *    time against one clock_gettime taken at the denial.
 * A guest therefore bounds neither memory (histories: a fixed number of
 * entries of fixed size, allocated once; a connection arriving when all
 * are in use by live connections has none, counted in "nohist") nor disk
 * (per-directory bound) nor the data path's time (drop on full).
 *
 * THREADS.  The loop thread: toe_capture_on, _data, _deny (it owns the
 * histories).  The control thread: _set, _get.  The writer thread: its
 * own.  Shared: the configuration (under cap->lock; the loop reads a
 * generation with load-acquire that pairs with the store-release in
 * _set), the rings (tcr_ring, single producer / single consumer each:
 * loop -> writer on BUSY, writer -> loop on FREE) and the counters
 * (relaxed atomics).  Off, the data path pays one relaxed load.
 *
 * Full capture (cfg.all, one direction at a time) is toe_capall.h: its
 * slots and rings are its own, its files are written by this writer,
 * which also wakes every 200 ms to put a quiet link's bytes on disk.
 */
#ifndef TOCHAIN_TOE_CAPTURE_H
#define TOCHAIN_TOE_CAPTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tochain/barrier.h>

#include "ch_psched.h"
#include "toe_capall.h"
#include "toe_chain.h"
#include "toe_pcap.h"

#define TOE_CAP_KIB_MAX		32	/* per direction; a fetched pcap fits one control reply */
#define TOE_CAP_KIB_DEFAULT	16
#define TOE_CAP_BYTES_MIN	(1ull << 20)
#define TOE_CAP_BYTES_DEFAULT	(64ull << 20)
#define TOE_CAP_HISTS		256	/* connections with a history at once */
#define TOE_CAP_SLOTS		8	/* records between the data path and the writer */
#define TOE_CAP_MARKS		64	/* chunk marks kept per direction */
#define TOE_CAP_PATH_MAX	256

/* Only the first member is for the inline check; the rest is private. */
struct toe_capture_head {
	uint32_t active;	/* (c) bit per direction on: store-release in _set; loop reads relaxed */
};

struct toe_capture;

/*
 * @max_socks: the TOE's socket table (socket ids' low 16 bits are slot
 * + 1); @trigger_max: the largest chunk (a slot).  @alive tells whether
 * a socket id is still open (the loop thread; reclaims histories of
 * closed connections); when it is and @pkt is not NULL, it fills @pkt's
 * tuple as the connection's inbound data travels (full capture).  Starts
 * the writer.  NULL with errno.
 */
struct toe_capture *toe_capture_create(uint32_t max_socks, uint32_t trigger_max,
				       bool (*alive)(void *ctx, uint32_t sock_id, struct ch_pkt *pkt),
				       void *ctx);
/* Stop the writer after it wrote what is queued; free everything. */
void toe_capture_destroy(struct toe_capture *c);

struct toe_capture_cfg {
	bool on;
	bool all;			/* also every connection's bytes (toe_capall.h) */
	char path[TOE_CAP_PATH_MAX];	/* an existing directory, absolute */
	uint32_t kib;			/* 1..TOE_CAP_KIB_MAX */
	uint64_t max_bytes;		/* >= TOE_CAP_BYTES_MIN */
};

/*
 * Turn capture of direction @dir on (or off: only @on is read).  The
 * history size is one for the TOE: -EBUSY when the other direction is on
 * with another @kib; full capture (@all) is for one direction at a time:
 * -EEXIST when the other direction has it.  -EINVAL (bad field),
 * -ENOTDIR / -errno (path).
 */
int toe_capture_set(struct toe_capture *c, uint32_t dir, const struct toe_capture_cfg *cfg);

struct toe_capture_stats {
	struct toe_capture_cfg cfg[2];
	uint64_t records;	/* denials and alerts taken into a slot */
	uint64_t alerts;	/* of which alerts */
	uint64_t written;	/* pcap files written */
	uint64_t dropped;	/* denials with no free slot (the writer was behind) */
	uint64_t nohist;	/* connections that got no history (all in use) */
	uint64_t errors;	/* records the writer could not write */
	uint64_t removed;	/* files removed to stay within max_bytes */
	uint64_t buffered;	/* files written without O_DIRECT (the fs refused it) */
	struct toe_capall_stats all;	/* full capture */
};
void toe_capture_get(struct toe_capture *c, struct toe_capture_stats *st);
/* Wait until the writer has handled every record taken so far (tests). */
void toe_capture_flush(struct toe_capture *c);

/* ---- the loop thread ---- */

static inline bool toe_capture_on(const struct toe_capture *c)
{
	return tc_unlikely(tc_load_relaxed(&((const struct toe_capture_head *)c)->active) != 0);
}

/*
 * Chunk @data/@len of TCP socket @sock_id in direction @dir, on its way
 * into the chain stage; @cookie is the item the chain result will carry.
 */
void toe_capture_data(struct toe_capture *c, uint32_t sock_id, uint32_t dir, uint64_t cookie,
		      const uint8_t *data, uint32_t len);

/*
 * Result @r denied socket @sock_id (@dgram: UDP); @data: the denied
 * chunk (r->pkt.len bytes); names as logged.  Queues a record when
 * capture is on for r->chain's direction.
 */
void toe_capture_deny(struct toe_capture *c, uint32_t sock_id, bool dgram,
		      const struct ch_result *r, const uint8_t *data, const char *chain,
		      const char *vnf);

/*
 * Result @r passed socket @sock_id's chunk @data with an Alert
 * (r->alert_vnf): a record as for a denial, of rule r->alert_rule with
 * its message, whose pcap ends without the reset (the data went on).
 */
void toe_capture_alert(struct toe_capture *c, uint32_t sock_id, bool dgram,
		       const struct ch_result *r, const uint8_t *data, const char *chain,
		       const char *vnf);

/* ---- exposed for tests ---- */

/* Bytes of a record slot, and of a pcap built from one, for histories of @kib. */
size_t toe_capture_slot_bytes(uint32_t trigger_max);
size_t toe_capture_pcap_max(uint32_t trigger_max);
/* Hold the writer (records queue up, then drop) or let it go on. */
void toe_capture_pause(struct toe_capture *c, bool pause);
/*
 * Write @len bytes of page-aligned @buf (room for whole pages) to a new
 * file @tmp with O_DIRECT, in whole pages, then cut it to @len; plain
 * writes where the file system refuses O_DIRECT (*@buffered counts them,
 * relaxed).  0 or -errno (nothing left behind).  The writer thread.
 */
int toe_capture_write_file(const char *tmp, uint8_t *buf, size_t len, uint64_t *buffered);
struct tcr_ring;
/* A single-producer / single-consumer ring of @n entries in *@mem (freed by the caller). */
int toe_capture_ring_pair(void **mem, struct tcr_ring *prod, struct tcr_ring *cons, uint32_t n);
/* @out: the tuple of @p's connection as travelling in direction @dir. */
void toe_capture_conn_of(struct toe_pcap_conn *out, const struct ch_pkt *p, uint32_t dir);
/* Build the pcap of the record in @slot into @out; bytes, or 0 (too small / bad record). */
size_t toe_capture_build_pcap(const void *slot, uint8_t *out, size_t room);

#endif /* TOCHAIN_TOE_CAPTURE_H */
