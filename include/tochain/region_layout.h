/* SPDX-License-Identifier: MIT */
/*
 * TOChain shared-memory region layout, version 1.
 *
 * This header is the one description of a region: the memory one VM and
 * its TOE (and, read-only, the VNFs of its chains) share.  It compiles in
 * user space and in the guest kernel module, so it holds only fixed-size
 * types, offsets and indices, never pointers.
 *
 * Who writes what is marked on every field:
 *   (h)  the host: the TOE or the daemon that formatted the region
 *   (g)  the guest: the runtime inside the VM (or the stand-in process)
 *   (P)  whoever produces into that ring, (C) whoever consumes from it
 *   (v)  a VNF service thread
 * The guest is untrusted: everything it can write (which is everything in
 * a region it maps) is read by the host once, into private memory, and
 * validated there before use.  Geometry fields are written by the host at
 * format time; the host never re-reads them after formatting, it keeps
 * its own copy (see region.h).
 *
 * Layout (every part starts on a 64-byte boundary, the whole region is a
 * multiple of 4096 bytes):
 *
 *   0              struct tcr_header
 *   off_channels   nchannels x channel:  struct tcr_channel, then
 *                  TCR_CH_NRINGS rings, each struct tcr_ring_ctl
 *                  followed by ring_size __u32 entries
 *   off_descs      struct tcr_desc[nbufs]
 *   off_chains     struct tcr_chain_counters[nchains]
 *   off_slots      nbufs payload slots of slot_size bytes (page aligned)
 *   off_end        end of the used part (<= region_size)
 */
#ifndef TOCHAIN_REGION_LAYOUT_H
#define TOCHAIN_REGION_LAYOUT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/build_bug.h>
#define TCR_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#include <linux/types.h>
#include <stddef.h>
#define TCR_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define TCR_MAGIC		0x314e474552484354ULL	/* "TCHREGN1" */
#define TCR_LAYOUT_VERSION	1
#define TCR_CACHELINE		64
#define TCR_PAGE		4096
#define TCR_NAME_MAX		32	/* including the NUL */

/* Limits the host enforces when it formats or validates a region. */
#define TCR_MAX_BUFS		(1u << 22)
#define TCR_MIN_SLOT		64
#define TCR_MAX_SLOT		(1u << 20)
#define TCR_MAX_CHANNELS	64
#define TCR_MIN_RING		2
#define TCR_MAX_RING		(1u << 22)
#define TCR_MAX_CHAINS		64

enum tcr_state {
	TCR_STATE_FORMATTING	= 0,	/* host is (re)writing the region */
	TCR_STATE_READY		= 1,	/* usable */
	TCR_STATE_DEAD		= 2,	/* host gave up on it: detach */
};

enum tcr_region_kind {
	TCR_KIND_GUEST		= 1,	/* shared with a VM (ivshmem) */
	TCR_KIND_HOST		= 2,	/* host-only: chain queues, counters */
};

/*
 * The VM link (host-toe/vmlink/ivs_link.h, guest-drivers/README.md): a host
 * process that attaches channels to the TOE on behalf of the processes
 * inside a real VM, which cannot reach the TOE's UNIX socket, and relays
 * the doorbells.  It offers each channel in a slot of this table; a
 * guest process claims a slot through the guest driver (ioctl CLAIM),
 * and the driver releases it when that process's claim file is closed
 * (exit or crash).  Everything the guest writes here is untrusted: the
 * link keeps its own copy of what it offered and only ever reads a
 * slot's state (is it RELEASED?), its kick counter and the claimer's peer
 * id, each once and checked.
 */
#define TCR_LINK_BYTES		1024
#define TCR_LINK_SLOTS		30
#define TCR_LINK_MAGIC		0x4b4e494cu	/* "LINK" */

enum tcr_link_mode {
	TCR_LINK_POLL		= 1,	/* ivshmem-plain: no interrupts, both sides poll */
	TCR_LINK_DOORBELL	= 2,	/* ivshmem-doorbell: MSI-X vector = slot's vector */
};

enum tcr_link_state {
	TCR_LINK_FREE		= 0,	/* nothing offered */
	TCR_LINK_OFFERED	= 1,	/* (h) channel/epoch/vector valid, claimable */
	TCR_LINK_CLAIMED	= 2,	/* (g) a guest process holds it */
	TCR_LINK_RELEASED	= 3,	/* (g) its process closed its claim: recycle */
};

struct tcr_link_slot {
	__u32 state;		/* enum tcr_link_state; (h) FREE/OFFERED, (g) CLAIMED/RELEASED */
	__u32 channel;		/* (h) region channel the link attached */
	__u32 epoch;		/* (h) its epoch */
	__u32 vector;		/* (h) MSI-X vector of this slot, both directions */
	__u32 guest_peer;	/* (g) IVPosition of the claiming guest */
	__u32 pid;		/* (g) informational */
	__u32 kick;		/* (g) bumped by the guest to wake the TOE (poll mode) */
	__u32 cookie;		/* (g) the driver's claim number */
};

struct tcr_link {
	__u32 magic;		/* (h) TCR_LINK_MAGIC, store-release, last */
	__u32 nslots;		/* (h) slots in use, <= TCR_LINK_SLOTS */
	__u32 mode;		/* (h) enum tcr_link_mode */
	__u32 host_peer;	/* (h) ivshmem peer id of the link (doorbell mode) */
	__u32 poll_us;		/* (h) poll interval the guest should use (poll mode) */
	__u32 link_pid;		/* (h) informational */
	__u32 seq;		/* (h) bumped each time the link (re)publishes */
	__u8 pad[TCR_CACHELINE - 28];
	struct tcr_link_slot slot[TCR_LINK_SLOTS];
};

/* Region header: the first 4096 bytes. */
struct tcr_header {
	__u64 magic;		/* (h) TCR_MAGIC, stored last when formatting */
	__u32 version;		/* (h) TCR_LAYOUT_VERSION */
	__u32 header_size;	/* (h) sizeof(struct tcr_header) */
	__u64 region_size;	/* (h) bytes mapped, multiple of TCR_PAGE */
	__u64 generation;	/* (h) changes each time the host resets it */
	__u32 state;		/* (h) enum tcr_state, store-release */
	__u32 kind;		/* (h) enum tcr_region_kind */
	char name[TCR_NAME_MAX];	/* (h) [a-z0-9_.-]+, NUL-terminated */

	/* Geometry (h), written once before magic. */
	__u32 nbufs;		/* descriptors, one payload slot each */
	__u32 slot_size;	/* bytes per slot, multiple of 64 */
	__u32 nchannels;	/* guest attachment channels */
	__u32 ring_size;	/* entries per ring, power of two >= nbufs */
	__u32 nchains;		/* chain counter blocks */
	__u32 channel_size;	/* bytes per channel (header + rings) */
	__u32 ring_bytes;	/* bytes per ring (control + entries) */
	__u32 reserved0;
	__u64 off_channels;
	__u64 off_descs;
	__u64 off_chains;
	__u64 off_slots;
	__u64 off_end;

	/* TSC calibration of the host (h): ns = (tsc * tsc_mult) >> tsc_shift */
	__u64 tsc_hz;
	__u32 tsc_mult;
	__u32 tsc_shift;

	__u8 reserved[TCR_PAGE - 160 - TCR_LINK_BYTES];

	/*
	 * The VM link's claim table (struct tcr_link, above), the last
	 * TCR_LINK_BYTES of the header page: written by tochain-vmlink (h)
	 * and the guest's tochain_ivshmem driver and runtime (g); zero (no
	 * link) in a freshly created region.  host-toe/vmlink/README.md.
	 */
	struct tcr_link link;
};

/*
 * A ring of descriptor indices.  Producer and consumer state live on
 * separate cache lines; entries follow the control block.  Indices run
 * freely over 2^32 and are masked on access; the host-side handle keeps
 * its own copy of size and mask (never the ones in shared memory).
 */
struct tcr_ring_ctl {
	/* producer line */
	__u32 prod_head;	/* (P) reserved up to here (multi-producer) */
	__u32 prod_tail;	/* (P) published up to here, store-release */
	__u32 prod_wait;	/* (P) producer sleeps until space: wake it */
	__u32 prod_seq;		/* (C) bumped when space was made, futex word */
	__u8 pad0[TCR_CACHELINE - 16];
	/* consumer line */
	__u32 cons_head;	/* (C) claimed up to here (multi-consumer) */
	__u32 cons_tail;	/* (C) released up to here, store-release */
	__u32 cons_wait;	/* (C) consumer sleeps until data: wake it */
	__u32 cons_seq;		/* (P) bumped when data was published, futex word */
	__u8 pad1[TCR_CACHELINE - 16];
	/* __u32 entries[ring_size] follow */
};

/* The rings of one channel (one guest attachment: a process or a VM). */
enum tcr_channel_ring {
	TCR_CH_FREE	= 0,	/* h->g: empty buffers granted to the guest */
	TCR_CH_TX	= 1,	/* g->h: buffers the guest filled (outbound) */
	TCR_CH_RX	= 2,	/* h->g: buffers the host filled (inbound) */
	TCR_CH_DONE	= 3,	/* g->h: buffers the guest is done with */
	TCR_CH_NRINGS	= 4,
};

enum tcr_channel_state {
	TCR_CH_UNUSED	= 0,
	TCR_CH_OPEN	= 1,	/* (h) host accepts traffic on it */
	TCR_CH_CLOSED	= 2,	/* (h) host reclaimed it; guest must reattach */
};

struct tcr_channel {
	__u32 state;		/* (h) enum tcr_channel_state */
	__u32 epoch;		/* (h) bumped at each reset of this channel */
	__u32 owner_pid;	/* (g) informational only, never trusted */
	__u32 bell;		/* (g) eventfd the guest side rings when a ring's
				 * consumer waits with TCR_WAKE_BELL, as its fd + 1 in
				 * the process that serves the channel (0: none); a
				 * hint, taken only through a pidfd the host opened
				 * for the pid it knows (never owner_pid); cleared
				 * by the host when it (re)opens the channel */
	__u8 pad[TCR_CACHELINE - 16];
	/* TCR_CH_NRINGS rings of ring_bytes each follow */
};

enum tcr_op {
	TCR_OP_NONE	= 0,
	TCR_OP_DATA	= 1,	/* stream payload */
	TCR_OP_CTRL	= 2,	/* control message, payload is the message */
};

#define TCR_FLOW_NONE	0xffffffffu

/* Parsed L3/L4 fields and chain state (h) of a buffer. */
struct tcr_desc {
	__u64 conn_id;		/* connection id assigned by the TOE */
	__u64 seq;		/* stream offset of the first payload byte */
	__u64 tsc;		/* TSC when the payload arrived */
	__u32 slot;		/* payload slot: equals the descriptor index */
	__u32 off;		/* payload offset inside the slot */
	__u32 len;		/* payload bytes; off + len <= slot_size */
	__u16 op;		/* enum tcr_op */
	__u16 flags;
	__u8 family;		/* 4 or 6 */
	__u8 l4proto;		/* IPPROTO_TCP, IPPROTO_UDP */
	__u8 tcp_flags;		/* TH_* of the segment that completed it */
	__u8 hop;		/* chain hop the buffer is at */
	__u16 sport;		/* host byte order */
	__u16 dport;
	__u8 saddr[16];		/* IPv4 in the first 4 bytes */
	__u8 daddr[16];
	__u32 flow;		/* flow table entry, TCR_FLOW_NONE if none */
	__u32 chain;		/* chain id */
	__u32 allow_mask;	/* VNFs of the current hop that allowed */
	__u32 deny_vnf;		/* VNF index + 1 that denied, 0 if none */
	__u32 deny_rule;	/* rule id behind the deny */
	__u32 arg;		/* op-specific */
	__u64 aux;		/* op-specific */
	__u8 pad[16];
};

#define TCR_EARLY_INPUT_EMPTY	0x1u	/* (a): input queue empty */
#define TCR_EARLY_OUTPUT_FULL	0x2u	/* (b): output queue >= E_i */
#define TCR_TAKEN_WINDOW	8	/* periods of receiver history kept */

/*
 * Per-chain counters for the CPU scheduler (design section 2).  Cumulative
 * counters only grow (readers take differences between periods); queue
 * lengths are snapshots.
 */
struct tcr_chain_counters {
	/* packet scheduler line (h) */
	__u64 arrivals;		/* packets that entered the input queue */
	__u64 finished;		/* packets that left the chain (done or denied) */
	__u64 denied;		/* of which denied */
	__u64 taken;		/* packets the receiver took from the output queue */
	__u64 out_head_tsc;	/* arrival TSC of the output queue's head, 0 if empty */
	__u32 in_qlen;		/* input queue length */
	__u32 out_qlen;		/* output queue length */
	__u32 sla_pps;		/* configured throughput T_i */
	__u32 chain_id;
	__u8 pad0[TCR_CACHELINE - 56];
	/* period line (h): what the scheduler snapshot at period boundaries */
	__u64 period;		/* number of the last closed period */
	__u32 taken_hist[TCR_TAKEN_WINDOW];	/* per period, newest at period % W */
	__u8 pad1[TCR_CACHELINE - 8 - 4 * TCR_TAKEN_WINDOW];
	/* service thread line (v) */
	__u32 early_end;	/* TCR_EARLY_* raised by a service thread */
	__u32 early_seq;	/* bumped with each raise, futex word */
	__u8 pad2[TCR_CACHELINE - 8];
};

TCR_STATIC_ASSERT(sizeof(struct tcr_header) == TCR_PAGE, "header is one page");
TCR_STATIC_ASSERT(offsetof(struct tcr_header, name) == 40, "name offset is ABI");
TCR_STATIC_ASSERT(offsetof(struct tcr_header, tsc_shift) + 4 == 160, "header fields");
TCR_STATIC_ASSERT(sizeof(struct tcr_link) == TCR_LINK_BYTES, "link table");
TCR_STATIC_ASSERT(offsetof(struct tcr_header, link) == TCR_PAGE - TCR_LINK_BYTES,
		  "link table ends the header page");
TCR_STATIC_ASSERT(sizeof(struct tcr_ring_ctl) == 2 * TCR_CACHELINE, "ring control");
TCR_STATIC_ASSERT(offsetof(struct tcr_ring_ctl, cons_head) == TCR_CACHELINE,
		  "consumer state on its own cache line");
TCR_STATIC_ASSERT(sizeof(struct tcr_channel) == TCR_CACHELINE, "channel header");
TCR_STATIC_ASSERT(sizeof(struct tcr_desc) == 2 * TCR_CACHELINE, "descriptor");
TCR_STATIC_ASSERT(sizeof(struct tcr_chain_counters) == 3 * TCR_CACHELINE,
		  "chain counters");
TCR_STATIC_ASSERT(offsetof(struct tcr_chain_counters, early_end) ==
		  2 * TCR_CACHELINE, "service-thread line");

#endif /* TOCHAIN_REGION_LAYOUT_H */
