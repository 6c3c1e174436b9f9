// SPDX-License-Identifier: MIT
/* Repair: restarts and dead processes; see td_repair.h. */
#include <string.h>

#include "td_converge.h"
#include "td_libvirt.h"
#include "td_priv.h"
#include "td_repair.h"
#include "td_toe.h"
#include "td_vnfinst.h"
#include "tochain/util.h"

#define REPAIR_BACKOFF_MS 2000
#define GUEST_CHECK_MS 2000

static bool vm_has_work(struct daemon *d, const char *vm)
{
	if (td_state_vm_chain(&d->st, vm))
		return true;
	for (unsigned int i = 0; i < d->st.ninsts; i++)
		if (!strcmp(d->st.insts[i].vm, vm))
			return true;
	return false;
}

static void repair(struct daemon *d, unsigned int i)
{
	struct td_vm *vm = &d->st.vms[i];
	char err[512];

	if (!vm_has_work(d, vm->name)) {
		td_toe_ready(vm);	/* no chains to wait for */
		return;
	}
	if (td_converge(d, &d->st, vm, NULL, err, sizeof(err))) {
		td_log("%s (retrying in %d ms)", err, REPAIR_BACKOFF_MS);
		d->retry_ms[i] = (long long)tu_now_ms() + REPAIR_BACKOFF_MS;
	}
	td_save(d);
}

void td_repair_reconcile(struct daemon *d)
{
	for (unsigned int i = 0; i < d->st.nvms; i++)
		repair(d, i);
}

void td_repair_toe_restarted(struct daemon *d, struct td_vm *vm)
{
	/* The old instances served regions the new TOE does not have. */
	for (unsigned int k = 0; k < d->st.ninsts; k++)
		if (!strcmp(d->st.insts[k].vm, vm->name) && !d->st.insts[k].domain[0])
			td_vnfinst_stop(d, vm, d->st.insts[k].vnf, d->st.insts[k].pid);
	repair(d, (unsigned int)(vm - d->st.vms));
}

/*
 * The VNFs of @vm that run in a libvirt domain whose QEMU lives but which
 * the TOE failed (no progress for 5 s: say the guest's agent was not up
 * yet when the grants came back after a domain restart, or its VNF hung)
 * are attached again: the TOE reopens their channels for the guest.  A
 * host instance is restarted when its process dies; the guest's VNF
 * process cannot be seen from here, the TOE's verdict stands for it.
 */
static void guest_check(struct daemon *d, struct td_vm *vm)
{
	json_t *ls = NULL;
	char err[512];

	for (unsigned int k = 0; k < d->st.ninsts; k++) {
		struct td_inst *in = &d->st.insts[k];
		json_t *e, *r;

		if (strcmp(in->vm, vm->name) || !in->domain[0] ||
		    !td_libvirt_qemu_alive(in->pid, in->domain))
			continue;
		if (!ls && !(ls = td_toe_call(vm, "vnf.ls", NULL, err, sizeof(err))))
			return;
		e = td_toe_find(json_object_get(ls, "vnfs"), "name", in->vnf);
		if (!e || !json_is_true(json_object_get(e, "failed")))
			continue;
		r = td_toe_call(vm, "vnf.attach", json_pack("{s:s, s:i}", "name", in->vnf, "pid",
							 (int)in->pid), err, sizeof(err));
		if (r)
			td_log("vm %s: vnf %s (libvirt domain %s) failed in the TOE: attached "
			       "again, its channels reopened for the guest", vm->name, in->vnf,
			       in->domain);
		else
			td_log("%s", err);
		json_decref(r);
	}
	json_decref(ls);
}

int td_repair_tick(struct daemon *d)
{
	long long now = (long long)tu_now_ms(), next = 500;

	for (unsigned int i = 0; i < d->st.nvms; i++) {
		struct td_vm *vm = &d->st.vms[i];
		bool dead = false;

		if (d->retry_ms[i] > now || !td_vm_toe_alive(vm))
			continue;
		for (unsigned int k = 0; k < d->st.ninsts && !dead; k++) {
			struct td_inst *in = &d->st.insts[k];

			if (strcmp(in->vm, vm->name))
				continue;
			if (td_vnfinst_alive(vm, in))
				continue;
			if (!in->domain[0] && td_vnfinst_waits(d, vm, in)) {
				if (in->bo.retry_ms - now < next)
					next = in->bo.retry_ms - now;
				continue;
			}
			dead = true;
			if (in->domain[0])
				td_log("vm %s: vnf %s: the QEMU of libvirt domain %s (pid %d) is gone: "
				       "grants and attach to be redone", vm->name, in->vnf, in->domain,
				       (int)in->pid);
		}
		if (dead || d->retry_ms[i]) {
			d->retry_ms[i] = 0;
			repair(d, i);
		} else if (now >= d->guest_retry_ms[i]) {
			d->guest_retry_ms[i] = now + GUEST_CHECK_MS;
			guest_check(d, vm);
		}
	}
	td_grant_reap(d->lv, &d->glog);	/* read-only grants' backends, td_grant.h */
	return next < 1 ? 1 : (int)next;
}
