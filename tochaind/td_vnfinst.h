/* SPDX-License-Identifier: MIT */
/*
 * VNF instances of a VM's chains (td_vnfinst_*): what makes VNF X serve
 * VM V.  The TOE is told of X (vnf.add), an instance is started for it
 * (a tochain-vnf process, td_inst.h; or, for a VNF in a libvirt domain,
 * V's regions granted to that domain, td_grant.h) and attached
 * (vnf.attach with its pid, or the domain's QEMU's).  The instance is
 * recorded in the state (struct td_inst); a host instance is stopped,
 * a domain's grants taken back, when no chain of V uses X any more.
 *
 * Runs on the daemon's one thread (td_priv.h).
 */
#ifndef TOCHAIN_TD_VNFINST_H
#define TOCHAIN_TD_VNFINST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "td_state.h"

struct daemon;

/*
 * VNF @name of @st is needed by @vm's chains: make @vm's TOE have it
 * (@tvnfs: the TOE's vnf.ls), with a live instance attached; a live one
 * the TOE knows is kept.  Instance records are written to @st.  0, or
 * -errno with @err (what this call added to the TOE is taken back).
 */
int td_vnfinst_ensure(struct daemon *d, struct td_state *st, struct td_vm *vm, const char *name,
		      json_t *tvnfs, char *err, size_t errlen);

/* Stop the host instance @pid of @vnf for @vm (if it still is one). */
void td_vnfinst_stop(struct daemon *d, const struct td_vm *vm, const char *vnf, pid_t pid);

/* Is instance @in of @vm alive: its tochain-vnf, or its domain's QEMU? */
bool td_vnfinst_alive(const struct td_vm *vm, const struct td_inst *in);

/* VNF @vnf of @domain serves @vm no more (in @st): its grants go (R and
 * R.out stay while another VNF of @domain serves @vm). */
void td_vnfinst_take_grants(struct daemon *d, struct td_state *st, struct td_vm *vm,
			    const char *vnf, const char *domain);

/* No fw VNF serves @vm any more (in @st): take its nftables table away. */
void td_vnfinst_fw_drop(struct daemon *d, struct td_state *st, struct td_vm *vm);

/*
 * Host instance @in of @vm is dead: must its restart still wait (its
 * back-off, td_backoff.h)?  Notes the death and its last log line once.
 */
bool td_vnfinst_waits(struct daemon *d, const struct td_vm *vm, struct td_inst *in);

/* Add @in's restarts, last_error and next_retry_s (while down) to @o. */
void td_vnfinst_health_json(const struct td_inst *in, json_t *o);

/* SIGHUP the host instances of @vnf (d->st): they reload their rules copy. */
void td_vnfinst_reload_rules(struct daemon *d, const char *vnf);

/* The instance object of `vnf show` / `chain show`, grants asked live. */
json_t *td_vnfinst_json(struct daemon *d, const struct td_inst *in);

#endif
