/* SPDX-License-Identifier: MIT */
/*
 * The VNF region protocol, version 1: how the packet scheduler and a VNF
 * use a host-kind region (region_layout.h) made for that one VNF.
 *
 * The scheduler creates the region (tcr_region_create, TCR_KIND_HOST) with
 * one channel per service thread and VNF_REGION_CHAINS counter blocks; the
 * VNF process maps it read-write (it must write verdicts and its rings)
 * and maps the data regions it is granted read-only.  Only the scheduler
 * and that VNF map it: no other VNF can write its verdicts.
 *
 * Per channel (= service thread):
 *   RX  scheduler -> VNF: index of a work descriptor the scheduler filled
 *   TX  VNF -> scheduler: the same index, verdict written
 *   FREE, DONE: unused
 *
 * Work descriptor (struct tcr_desc of the VNF region), who writes what:
 *   (h) = scheduler, (v) = VNF.  The scheduler keeps a private copy of
 *   every (h) field and reads back only the (v) fields, once, validated.
 *
 *   op          (h) TCR_OP_DATA: inspect a payload; TCR_OP_CTRL: control
 *   slot        (h) the descriptor's own index (region convention)
 *   conn_id, seq, tsc, family, l4proto, tcp_flags, sport, dport,
 *   saddr, daddr, flow, chain, hop          (h) as in region_layout.h
 *   aux         (h) DATA: VNF_AUX(data region id, buffer index)
 *                   CTRL: data region id
 *   off, len    (h) DATA: payload inside the data buffer
 *                   CTRL: the path of the data region, in this
 *                   descriptor's own slot, off 0, len bytes; for a
 *                   GRANT then, if the scheduler knows it, a NUL, the
 *                   region's header name (tcr_name_valid) and a NUL,
 *                   all within the slot: a VNF inside a guest maps the
 *                   device of that name (vnf_attach_guest), a VNF on
 *                   the host ignores it
 *   flags       (h) CTRL: enum vnf_ctrl_op (GRANT_FLOWS: the flow table
 *                   file of data region aux, include/tochain/ch_flow.h, read-only)
 *   arg         (v) DATA: enum vnf_verdict; the scheduler zeroes it first
 *   deny_rule   (v) DATA: rule id behind a Deny (or an Answer, or an Alert)
 *   allow_mask  (v) DATA, VNF_VERDICT_ANSWER: bytes of the answer, which the
 *                   VNF wrote at offset 0 of this descriptor's own slot
 *                   (1..VNF_ANSWER_MAX);
 *                   VNF_VERDICT_ALERT: bytes of the alerting rule's message
 *                   at offset 0 of the slot (0..VNF_ALERT_MSG_MAX, no NUL);
 *                   otherwise unused (0)
 *   deny_vnf    (v) DATA, VNF_VERDICT_ANSWER: the incident id the answer
 *                   carries (nonzero), for the TOE's log and stats;
 *                   otherwise unused (0)
 *
 * An Answer is a Deny whose connection the VNF asks to end with a message
 * to the client (an HTTP 403/400 page) instead of a reset.  The scheduler
 * copies the answer once, bounded by VNF_ANSWER_MAX, and treats the
 * verdict as a Deny in every other way; the TOE alone decides whether the
 * answer may be written (inbound chain, nothing of the guest's own
 * response on its way) and falls back to a reset otherwise.  A VNF cannot
 * make the TOE write more than VNF_ANSWER_MAX bytes, nor anything on a
 * connection it did not deny.
 *
 * An Alert is an Allow that asks for evidence: the data goes on, and the
 * TOE records it as it records a denial (capture, stats) under rule
 * deny_rule with the message the VNF gave.  The scheduler copies the
 * message once, bounded by VNF_ALERT_MSG_MAX (a longer one is cut); the
 * first Alert of a descriptor is the one recorded, and a Deny of the same
 * descriptor wins over it.  A VNF cannot make the TOE write anything but
 * that bounded text into its log and capture sidecars.
 *
 * Per-chain counter blocks of the VNF region: the VNF raises early-end
 * flags (tcr_counters_raise_early) on block `chain`; the scheduler moves
 * them to the chain's own counters.
 */
#ifndef TOCHAIN_VNF_PROTO_H
#define TOCHAIN_VNF_PROTO_H

#include <tochain/region_layout.h>

#define VNF_PROTO_VERSION	1
#define VNF_REGION_SLOT		1024	/* bytes per slot: a CTRL path, an answer */
#define VNF_REGION_CHAINS	64	/* counter blocks: one per chain id */
#define VNF_MAX_THREADS		16	/* channels of a VNF region */

#define VNF_AUX(region, buf)	(((__u64)(region) << 32) | (__u32)(buf))
#define VNF_AUX_REGION(aux)	((__u32)((aux) >> 32))
#define VNF_AUX_BUF(aux)	((__u32)(aux))

enum vnf_verdict {
	VNF_VERDICT_NONE	= 0,	/* not written: invalid */
	VNF_VERDICT_ALLOW	= 1,
	VNF_VERDICT_DENY	= 2,
	VNF_VERDICT_ANSWER	= 3,	/* Deny, answer in the slot (above) */
	VNF_VERDICT_ALERT	= 4,	/* Allow + evidence, message in the slot (above) */
};

#define VNF_ANSWER_MAX		VNF_REGION_SLOT	/* bytes of an answer, headers included */
#define VNF_ALERT_MSG_MAX	255		/* bytes of an alert's message */

enum vnf_ctrl_op {
	VNF_CTRL_GRANT		= 1,	/* map data region aux (path in slot) */
	VNF_CTRL_REVOKE		= 2,	/* unmap data region aux (and its flows) */
	VNF_CTRL_GRANT_FLOWS	= 3,	/* map the flow table of region aux (path in slot) */
};

/* Rule ids the runtime itself uses on a Deny it posts. */
#define VNF_RULE_UNMAPPED	0xfffffff0u	/* payload of a region not granted */

#endif /* TOCHAIN_VNF_PROTO_H */
