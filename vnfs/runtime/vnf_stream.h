/* SPDX-License-Identifier: MIT */
/*
 * Per-connection stream state of a service thread (vnf_stream_*), for the
 * kinds that inspect byte streams (ids, waf).  Private to vnfs/.
 *
 * KEY.  A connection is the descriptor's conn_id together with its flow
 * table entry's generation (vnf_flow(); a new generation is a new
 * connection in a reused entry).  Without a flow table the conn id alone;
 * a descriptor whose entry could not be read (NULL flow) belongs to the
 * stream its conn id has.
 *
 * DIRECTION.  The descriptor's 5-tuple is the sender -> receiver of its
 * bytes.  The connection's server is fixed at its first descriptor: the
 * endpoint with the lower port (services listen on low ports, clients use
 * ephemeral ones); on equal ports the VM's side, i.e. the receiver on the
 * in chain (chain 0: inbound bytes are client -> server for a server in
 * the VM) and the sender on the out chain.
 *
 * STREAM OFFSETS.  The descriptor's seq is the stream offset of its first
 * byte.  Per direction the table keeps the next offset it expects: bytes
 * already inspected (a retransmission, an overlap) are skipped, never
 * inspected twice; a descriptor that starts past it is a gap (bytes the
 * engine never saw: the caller fails closed).
 *
 * BOUNDS.  At most max streams per thread; creating one more evicts the
 * least recently used (one log line, rate-limited).  A stream is freed
 * when a descriptor finds its flow CLOSED or its flow entry's generation
 * changed, when a periodic sweep (vnf_streams_sweep, every second from the
 * service loop) finds the same in the flow table, or on eviction.  Threads: one table per service thread, no locking; with
 * several threads the VNF needs "dispatch":"flow" (a connection always on
 * the same thread), or a thread sees gaps.
 */
#ifndef TOCHAIN_VNF_STREAM_H
#define TOCHAIN_VNF_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "vnf.h"

#define VNF_STREAMS_DEFAULT	2048

enum vnf_sdir { VNF_TO_SERVER = 0, VNF_TO_CLIENT = 1 };

struct vnf_stream {
	uint64_t conn_id;
	uint32_t gen;
	bool has_flow;
	uint32_t region, fidx;		/* its flow table entry (has_flow) */
	uint8_t family;
	uint16_t server_port, client_port;
	uint8_t server_addr[16], client_addr[16];
	uint64_t next[2];		/* next stream offset expected, per enum vnf_sdir */
	bool seen[2];			/* a descriptor of that direction came */
	void *priv;			/* the kind's state (ids/waf flow) */
	/* table links */
	struct vnf_stream *hnext, *lprev, *lnext;
};

struct vnf_streams;

/* @free_priv releases a stream's priv (may be NULL).  NULL + errno. */
struct vnf_streams *vnf_streams_create(uint32_t max, const char *kind,
				       void (*free_priv)(void *priv));
void vnf_streams_destroy(struct vnf_streams *t);

/*
 * The stream of @pk (flow entry @f or NULL), created if new (*created
 * true, priv NULL).  A stream of the same conn id with another
 * generation is freed first; one without flow information adopts @f's.
 * NULL + errno (ENOMEM).
 */
struct vnf_stream *vnf_stream_get(struct vnf_streams *t, const struct vnf_pkt *pk,
				  const struct vnf_flow *f, bool *created);
/* Direction of @pk's bytes in @s. */
enum vnf_sdir vnf_stream_dir(const struct vnf_stream *s, const struct vnf_pkt *pk);

/*
 * Account @pk (direction @dir) in @s: *skip = leading bytes already seen.
 * 0 (inspect pk->len - *skip bytes from pk->data + *skip, possibly 0),
 * -EPIPE: a gap before it.
 */
int vnf_stream_span(struct vnf_stream *s, enum vnf_sdir dir, const struct vnf_pkt *pk,
		    uint32_t *skip);

/* Free @s now. */
void vnf_stream_drop(struct vnf_streams *t, struct vnf_stream *s);
/* Free the stream of @conn_id if any. */
void vnf_stream_forget(struct vnf_streams *t, uint64_t conn_id);
/*
 * Free, without a log line, every stream for which @gone(@ctx, s) is true
 * (its flow entry closed, freed or reused: the connection ended without a
 * descriptor telling it).  Returns how many.
 */
unsigned int vnf_streams_sweep(struct vnf_streams *t,
			       bool (*gone)(void *ctx, const struct vnf_stream *s), void *ctx);
uint32_t vnf_streams_count(const struct vnf_streams *t);
uint64_t vnf_streams_evicted(const struct vnf_streams *t);

/* Textual address of @addr (family 4/6) into @buf (INET6_ADDRSTRLEN). */
void vnf_addr_str(uint8_t family, const uint8_t *addr, char *buf, size_t size);

#endif /* TOCHAIN_VNF_STREAM_H */
