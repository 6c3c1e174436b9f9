/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): full capture of a TOE's TCP
 * traffic for forensics (toe_capall_*), `capture on CHAIN --all`.  A part
 * of the capture (toe_capture.h), which owns the configuration, the
 * writer thread and the counters' reporting.
 *
 * Design (the denial capture's, seed 004): the loop thread appends each
 * chunk (connection, direction, stream offset, TSC, bytes) to a batch
 * slot of TOE_CAPALL_SLOT_BYTES; a full slot goes on the BUSY ring and a
 * new one comes off FREE.  No free slot: the chunk is dropped and counted
 * (dropped chunks and bytes), the data path never waits.  The writer
 * turns chunks into pcap packets (toe_pcap.h; seq = the connection's ISN
 * + the chunk's offset in its direction, so a dropped chunk shows as a
 * gap, never as shifted bytes) in a page-aligned buffer, writes whole
 * pages with O_DIRECT into the current file, and starts a new file past
 * TOE_CAPALL_FILE_BYTES; the oldest files of the directory go past its
 * byte bound, as denial captures do.  A partly filled slot is read by the
 * writer too (an idle link still reaches the disk within ~100 ms): the
 * loop publishes how far the current slot is filled (store-release of
 * "fill", paired with the writer's load-acquire) and never rewrites
 * published bytes until the writer gave the slot back.
 *
 * THREADS.  _chunk: the loop thread (owns the per-connection state and
 * the current slot).  _drain: the writer thread.  _get: any.  _create /
 * _destroy: with the writer stopped.
 */
#ifndef TOCHAIN_TOE_CAPALL_H
#define TOCHAIN_TOE_CAPALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "toe_pcap.h"

#define TOE_CAPALL_SLOT_BYTES	(256u << 10)	/* chunks between loop and writer, per slot */
#define TOE_CAPALL_SLOTS	16
#define TOE_CAPALL_FILE_BYTES	(128u << 10)	/* a file fits one `capture get` reply */

struct toe_capall;

/* The socket's tuple as the link sees it; false: gone (the loop thread). */
typedef bool toe_capall_conn_fn(void *ctx, uint32_t sock_id, struct toe_pcap_conn *out);

/* @wake_fd: an eventfd the writer waits on (written when a slot is handed over).  NULL with errno. */
struct toe_capall *toe_capall_create(uint32_t max_socks, toe_capall_conn_fn *conn, void *ctx,
				     int wake_fd);
void toe_capall_destroy(struct toe_capall *a);

/* Loop thread: chunk @data/@len of TCP socket @sock_id in direction @dir (TOE_PCAP_*). */
void toe_capall_chunk(struct toe_capall *a, uint32_t sock_id, uint32_t dir, const uint8_t *data,
		      uint32_t len);

/*
 * Writer: turn the handed-over slots into packets of the current file
 * under @path (NULL: discarded), starting a new file where one is full.
 * @idle (nothing handed over for a while, capture off, stopping): also
 * the chunks published in the loop's current slot, and finish the
 * current file.  Returns the bytes of the files finished (the caller
 * bounds @path).
 */
uint64_t toe_capall_drain(struct toe_capall *a, const char *path, bool idle);

struct toe_capall_stats {
	uint64_t chunks, bytes;		/* taken into a slot */
	uint64_t dropped, dropped_bytes;	/* no free slot: the writer was behind */
	uint64_t files, errors, buffered;	/* files written; not written; without O_DIRECT */
};
void toe_capall_get(struct toe_capall *a, struct toe_capall_stats *st);

#endif /* TOCHAIN_TOE_CAPALL_H */
