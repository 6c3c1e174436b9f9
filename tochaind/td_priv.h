/* SPDX-License-Identifier: MIT */
/*
 * Private to tochaind: the daemon object every part of the folder works
 * on, its log, saving its state, and what a command handler looks like.
 *
 * Threading: everything runs on the daemon's one thread (td_daemon.h):
 * requests are served one at a time, between the ticks of the repair.
 * Nothing here locks.
 *
 * Who calls whom (each line's callees never call back up; all of them
 * use td_priv.c's log and save, and td_state):
 *   td_daemon    socket, dispatch table, main loop: the handlers and
 *                ticks of td_vm, td_vnf, td_chain, td_stats, td_change
 *                (apply), td_cpusched, td_repair; td_metrics' endpoint
 *   td_metrics   the metrics endpoint: td_stats, td_cpusched, td_vm,
 *                td_link, td_vnfinst
 *   td_vnf       VNF commands: td_change, td_vnfinst, td_inst, td_grant
 *   td_chain     chain commands: td_change, td_vnfinst, td_toe, td_cpusched
 *   td_change    a state change planned (td_apply) and realized:
 *                td_converge, td_vnfinst, td_vm, td_inst, td_grant, td_libvirt
 *   td_repair    the repair tick: td_converge, td_vnfinst, td_toe, td_vm
 *   td_converge  a TOE made to run a state: td_vnfinst, td_toe, td_apply
 *   td_vnfinst   VNF instances: td_toe, td_inst, td_grant, td_libvirt
 *   td_vm        VMs and their commands: td_cpusched, td_link, td_libvirt
 *   td_stats     td_toe, td_apply
 *   td_cpusched  the CPU scheduler's registry: tochain-sched only
 */
#ifndef TOCHAIN_TD_PRIV_H
#define TOCHAIN_TD_PRIV_H

#include <jansson.h>

#include "td_cpusched.h"
#include "td_grant.h"
#include "td_state.h"
#include "td_vm.h"

struct td_libvirt;
struct td_metrics;

struct daemon {
	struct td_config *cfg;
	struct td_state st;
	char state_path[PATH_MAX + 16];
	struct td_libvirt *lv;	/* libvirt backend: VMs with a domain */
	const char *libvirt_uri;	/* --libvirt-uri (td_libvirt.h); NULL: qemu:///system */
	long long retry_ms[TD_MAX_VMS];	/* no liveness repair of VM i before */
	long long link_retry_ms[TD_MAX_VMS];	/* no link restart of VM i before */
	/*
	 * Doorbell VMs whose device must be plugged again (their link was
	 * restarted: QEMU cannot reconnect to a new ivshmem server), by name,
	 * and when to try next.  Not persisted: a restarted daemon finds the
	 * link alive (nothing to do) or starts it and marks the VM again.
	 */
	struct {
		char vm[TD_NAME_MAX];
		long long next_ms;
	} replug[TD_MAX_VMS];
	struct td_cpusched cpusched;	/* registrations with tochain-sched */
	struct td_grant_log glog;	/* grants taken from VNF domains (td_grant.h) */
	long long guest_retry_ms[TD_MAX_VMS];	/* no check of VM i's in-guest VNFs before */
	struct td_metrics *metrics;	/* --metrics endpoint (td_metrics.h), or NULL */
};

/* A command of the control protocol: its reply (ctl_reply_ok/fail). */
typedef json_t *td_cmd_fn(struct daemon *d, json_t *args);

void td_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write d->st to d->state_path (logged on failure).  0 or -errno. */
int td_save(struct daemon *d);

/* A string argument, or NULL; @bad is set when present but not a string. */
const char *td_arg_str(json_t *args, const char *key, int *bad);

/* The host's online CPUs (at least 1), for SLA admission. */
unsigned int td_ncpus(void);

#endif
