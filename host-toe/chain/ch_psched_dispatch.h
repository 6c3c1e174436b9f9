/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/chain/ (not installed): the packet scheduler's
 * dispatch side (ch_psched_dispatch.c): VNF channels and grants, admission
 * of descriptors from a chain's input queue, and their dispatch hop by hop.
 * Scheduler thread only (ch_psched_int.h).
 */
#ifndef TOCHAIN_CH_PSCHED_DISPATCH_H
#define TOCHAIN_CH_PSCHED_DISPATCH_H

#include <stdint.h>

#include "ch_psched_int.h"

/* Wake the service threads of @vn that got work this round and sleep. */
void ch_psched_dispatch_kick(struct vnf *vn);

/* Send control message @op (grant, revoke) for data region @region on every channel of @vn. */
void ch_psched_dispatch_ctrl_all(struct ch_psched *s, struct vnf *vn, uint32_t op,
				 uint32_t region);

/* A retired table: revoke the grants it took (after its last descriptor). */
void ch_psched_dispatch_revoke(struct ch_psched *s, struct ch_table *tb);

/* Dispatch what is pending of flight @id's hop; stall what cannot go yet. */
void ch_psched_dispatch_flight(struct ch_psched *s, uint32_t id);

/* Move flight @id on after an event: next hop, completion. */
void ch_psched_dispatch_advance(struct ch_psched *s, uint32_t id);

/* Take new descriptors of @chain, as many as its output queue can take; returns how many. */
unsigned int ch_psched_dispatch_admit(struct ch_psched *s, uint32_t chain);

#endif /* TOCHAIN_CH_PSCHED_DISPATCH_H */
