/* SPDX-License-Identifier: MIT */
/*
 * Read-only grants (td_libvirt_grant_ro_*): a VM's region given to a VNF
 * domain so that the guest can read it and nothing else.  A VNF inspects
 * payload (the VM's region R, the TOE's private outbound copy R.out) but
 * must never change it: a guest that could write R.out would change what
 * the TOE sends after its VNFs approved it, and one that could write R
 * would reach into the VM's rings (DESIGN.md section 3).  Writes are
 * stopped by QEMU, below the guest, whatever the guest's kernel does:
 *
 *   object-add memory-backend-file id=tochain-grant-NAME
 *              mem-path=/dev/shm/tochain-grant-NAME size=N share=on readonly=on
 *   device_add ivshmem-plain id=ua-tochain-grant-NAME memdev=tochain-grant-NAME
 *              bus=pci.0 addr=SLOT
 *
 * QEMU opens the file O_RDONLY and maps it PROT_READ; its memory region
 * is read-only (a ROM in QEMU's terms): under TCG the guest's stores to
 * the BAR are discarded (test 714), under KVM the memory slot is
 * KVM_MEM_READONLY and a store exits to QEMU, which drops it (by
 * construction: guests here run under TCG only).  The guest reads all it
 * wants, its writes change nothing, and nothing faults.  This is QEMU 7.2
 * as Debian ships it (and the patched build of qemu-patches/, whose
 * revocation works the same on such a device).
 *
 * libvirt 9.0's <shmem> has no read-only mode, so these devices are
 * plugged through QMP (virDomainQemuMonitorCommand, as the revocation is)
 * and libvirt does not know them: they are not in the domain's XML and
 * never in its configuration (a grant is live only anyway).  The grant
 * name, alias and /dev/shm link are those of td_libvirt.h, so
 * td_libvirt_revoke, _regrant, _grant_revoked and _ungrant work on both
 * kinds.  So that libvirt's own hot-plugs, which take the lowest free PCI
 * slot it knows of, do not collide with them, a read-only grant takes
 * the highest free slot of bus pci.0 (a "pc" machine; libvirt's default
 * for x86).  A domain whose machine has no hot-pluggable pci.0 (q35) is
 * refused with QEMU's reason.
 *
 * Threading: tochaind's one thread, as td_libvirt.h.
 */
#ifndef TOCHAIN_TD_LIBVIRT_RO_H
#define TOCHAIN_TD_LIBVIRT_RO_H

#include <stddef.h>
#include <stdint.h>

#include "td_libvirt.h"

#define TD_LIBVIRT_RO_BUS "pci.0"
#define TD_LIBVIRT_RO_UNPLUG_MS 1000	/* td_libvirt_ungrant waits this long for the eject */

/* The QMP object-add of grant @name's read-only backend (@size bytes).
 * 0, -EINVAL (bad name or size), -ENAMETOOLONG. */
int td_libvirt_ro_backend_qmp(const char *name, uint64_t size, char *out, size_t len);

/* The QMP device_add of grant @name in slot @slot (1..31) of pci.0.
 * 0, -EINVAL, -ENAMETOOLONG. */
int td_libvirt_ro_device_qmp(const char *name, unsigned int slot, char *out, size_t len);

/*
 * From a query-pci reply: the highest slot (31 down to 1) of bus 0 that
 * holds no device.  The slot, -ENOSPC when none is free, -EBADMSG for a
 * reply that is not a query-pci answer (or has no bus 0).
 */
int td_libvirt_ro_free_slot(const char *reply);

/*
 * Give region file @region (@size bytes, a power of two of at least 1M,
 * on /dev/shm's filesystem) to running domain @domain as read-only grant
 * @name.  File ownership as td_libvirt_grant.  -EEXIST if the domain has
 * a device of that alias already; on failure nothing is left behind but
 * the chown.  0, or -errno with @err set.
 */
int td_libvirt_grant_ro(struct td_libvirt *lv, const char *domain, const char *name,
			const char *region, uint64_t size, char *err, size_t errlen);

/*
 * Is grant @name of @domain read-only (1: its memory backend has
 * readonly=on) or writable (0: e.g. a libvirt <shmem>)?  -ENODEV: no
 * such device; other -errno with @err set.
 */
int td_libvirt_grant_is_ro(struct td_libvirt *lv, const char *domain, const char *name,
			   char *err, size_t errlen);

/*
 * Free the memory backend read-only grant @name of @domain left behind
 * when it was taken before the guest ejected its device.  0 nothing left
 * (freed, or none, or the domain is not running: its QEMU took it
 * along), 1 not yet (the device is still plugged, or the backend still
 * in use), -errno with @err set.
 */
int td_libvirt_grant_ro_reap(struct td_libvirt *lv, const char *domain, const char *name,
			     char *err, size_t errlen);

#endif
