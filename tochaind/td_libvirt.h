/* SPDX-License-Identifier: MIT */
/*
 * The libvirt backend of tochaind (td_libvirt_*): a VM registered with a
 * libvirt domain gets its region as an ivshmem-plain <shmem> device of
 * that domain, and its vCPU threads are found for the CPU scheduler.
 *
 * How the region reaches QEMU: libvirt 9.0's <shmem name='N'> always
 * means the file /dev/shm/N (a name may not hold '/'), opened by QEMU as
 * a memory-backend-file (share=on), and libvirt does not relabel it for
 * its unprivileged QEMU user.  So td_libvirt_attach hard-links the TOE's
 * region file as /dev/shm/tochain-<fabric>-<vm> (the region directory
 * must be on /dev/shm's filesystem, as the default /dev/shm/tochain is)
 * and gives the region file to the domain's DAC user (seclabel model
 * 'dac'; 0600, so only that QEMU and root can map it).  A hard link, not
 * a second file: the TOE re-formats its region in place (same inode), so
 * the guest and the TOE keep sharing it; QEMU never creates or truncates
 * an existing backing file.
 *
 * The device goes to the running domain (live) and, for a persistent
 * domain, to its configuration too, so that it is there after a restart.
 * Detaching a live ivshmem device asks the guest to release it (ACPI
 * eject): with stock QEMU the unplug completes only if the guest
 * cooperates (tochain_ivshmem.ko does); libvirt returns once the request
 * is sent.
 *
 * Threading: one connection, used from tochaind's single thread.  The
 * connection is opened on first use and reopened when it has died.
 */
#ifndef TOCHAIN_TD_LIBVIRT_H
#define TOCHAIN_TD_LIBVIRT_H

#include <stddef.h>
#include <sys/types.h>

#include "td_state.h"

#define TD_LIBVIRT_MAX_VCPUS 256

struct td_libvirt;

/* A handle on the libvirt at @uri (NULL: qemu:///system); connects lazily. */
struct td_libvirt *td_libvirt_create(const char *uri);
void td_libvirt_destroy(struct td_libvirt *lv);

/* Is @size usable as an ivshmem BAR (a power of two, whole MiB)? */
bool td_libvirt_size_valid(uint64_t size);

/* The <shmem> name of @vm's region: "tochain-<fabric>-<vm>" (bounded). */
void td_libvirt_shm_name(const char *fabric_ns, const char *vm, char *out, size_t len);

/* The <shmem> device XML for @shm_name of @size bytes. */
int td_libvirt_shmem_xml(const char *shm_name, uint64_t size, char *out, size_t len);

/*
 * The DAC owner libvirt runs @xml's QEMU as: from <seclabel model='dac'>
 * <label>+UID:+GID</label>.  0, or -ENOENT when the XML names none.
 */
int td_libvirt_dac_owner(const char *xml, uid_t *uid, gid_t *gid);

/* Thread ids from a query-cpus-fast reply; count, or -EBADMSG. */
int td_libvirt_parse_vcpus(const char *reply, pid_t *tids, int max);

/*
 * Attach @vm's region (vm->region, vm->region_size) to domain vm->domain
 * as /dev/shm/@shm_name.  0, or -errno with @err set; on failure nothing
 * is left behind (link removed, device not attached).
 */
int td_libvirt_attach(struct td_libvirt *lv, const struct td_vm *vm, const char *shm_name,
		      char *err, size_t errlen);

/*
 * Detach it again (live and config) and remove the /dev/shm link.  Best
 * effort and idempotent: a domain that is gone is not an error.  0, or
 * -errno with @err set when libvirt refused (the link is removed anyway).
 */
int td_libvirt_detach(struct td_libvirt *lv, const struct td_vm *vm, const char *shm_name,
		      char *err, size_t errlen);

/*
 * The vCPU thread ids (host TIDs) of the running domain @domain.  Count,
 * or -errno with @err set (-ESRCH when the domain is not running).
 */
int td_libvirt_vcpu_tids(struct td_libvirt *lv, const char *domain, pid_t *tids, int max,
			 char *err, size_t errlen);

#endif
