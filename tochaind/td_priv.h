/* SPDX-License-Identifier: MIT */
/*
 * Private to tochaind: the daemon object shared by td_daemon.c (control
 * loop, VMs) and td_chains.c (VNFs, chains, stats, apply).  Everything
 * runs on the daemon's one thread.
 */
#ifndef TOCHAIN_TD_PRIV_H
#define TOCHAIN_TD_PRIV_H

#include <jansson.h>

#include "td_grant.h"
#include "td_state.h"
#include "td_vm.h"

struct td_libvirt;

struct daemon {
	struct td_config *cfg;
	struct td_state st;
	char state_path[PATH_MAX + 16];
	struct td_libvirt *lv;	/* libvirt backend: VMs with a domain */
	long long retry_ms[TD_MAX_VMS];	/* no liveness repair of VM i before */
	struct td_schedreg {		/* a chain's registration with tochain-sched */
		char chain[TD_OBJ_NAME_MAX];	/* "" : slot free */
		bool done;		/* registered (or refused: see note) */
		pid_t pids[TD_MAX_HOPS * TD_MAX_PER_HOP];	/* instances registered */
		char note[200];
	} sched[TD_MAX_CHAINS];
	struct td_schedvm {		/* a domain VM's vCPUs with tochain-sched */
		char vm[TD_OBJ_NAME_MAX];	/* "" : slot free */
		bool done;		/* registered (or refused: see note) */
		char note[200];
	} schedvm[TD_MAX_VMS];
	struct td_grant_log glog;	/* grants taken from VNF domains (td_grant.h) */
	long long guest_retry_ms[TD_MAX_VMS];	/* no check of VM i's in-guest VNFs before */
};

void td_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int td_save(struct daemon *d);
/* A string argument, or NULL; @bad is set when present but not a string. */
const char *td_arg_str(json_t *args, const char *key, int *bad);

/* vnf.*, chain.*, stats, apply: the reply, or NULL for another command. */
json_t *td_chains_dispatch(struct daemon *d, const char *cmd, json_t *args);

/* After a (re)start: bring every TOE's VNFs and chains back to the state. */
void td_chains_reconcile(struct daemon *d);

/* Every ~500 ms: restart dead VNF instances, repair TOEs that lost chains. */
void td_chains_tick(struct daemon *d);

/* A VM's TOE was restarted: its chains and VNFs are gone; redo them. */
void td_chains_toe_restarted(struct daemon *d, struct td_vm *vm);

/* What tochain-sched knows of VM @vm's vCPUs (a domain VM), or NULL. */
const char *td_chains_sched_vm_note(struct daemon *d, const char *vm);

/* The VNF running in libvirt domain @domain, or NULL (vm add refuses it). */
const struct td_vnf *td_chains_domain_vnf(struct daemon *d, const char *domain);

/* The chain using VM @vm, or NULL (vm del refuses while one does). */
const struct td_chain *td_chains_of_vm(struct daemon *d, const char *vm);

#endif
