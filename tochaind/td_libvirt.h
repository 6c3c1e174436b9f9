/* SPDX-License-Identifier: MIT */
/*
 * The libvirt backend of tochaind (td_libvirt_*): a VM registered with a
 * libvirt domain gets its region as a <shmem> device of that domain
 * (ivshmem-doorbell with its VM link as server, or ivshmem-plain:
 * td_link.h), and its vCPU threads are found for the CPU scheduler.
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
 * The ivshmem-doorbell <shmem> device XML for @shm_name: <server
 * path=@socket/> (the VM link, td_link.h) and <msi vectors=@vectors
 * ioeventfd='on'/>.  -EINVAL for a socket path that is not absolute or
 * holds a character XML would need escaped, -ENAMETOOLONG.
 */
int td_libvirt_shmem_doorbell_xml(const char *shm_name, const char *socket, unsigned int vectors,
				  char *out, size_t len);

/*
 * The DAC owner libvirt runs @xml's QEMU as: from <seclabel model='dac'>
 * <label>+UID:+GID</label>.  0, or -ENOENT when the XML names none.
 */
int td_libvirt_dac_owner(const char *xml, uid_t *uid, gid_t *gid);

/* Thread ids from a query-cpus-fast reply; count, or -EBADMSG. */
int td_libvirt_parse_vcpus(const char *reply, pid_t *tids, int max);

/*
 * Attach @vm's region (vm->region, vm->region_size) to domain vm->domain
 * as /dev/shm/@shm_name: ivshmem-plain, or with vm->wait doorbell
 * ivshmem-doorbell with the VM link's socket as its server (the link
 * must run; its socket is given to the domain's DAC user, 0600).  0, or
 * -errno with @err set; on failure nothing is left behind (link removed,
 * device not attached).
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

/*
 * The pid of running domain @domain's QEMU process: the thread group of
 * its vCPU threads (as td_libvirt_vcpu_tids finds them).  0 with *@pid,
 * or -errno with @err set (-ENOENT no such domain, -ESRCH not running).
 */
int td_libvirt_qemu_pid(struct td_libvirt *lv, const char *domain, pid_t *pid, char *err,
			size_t errlen);

/* Is @pid the QEMU process libvirt runs for @domain ("-name guest=DOMAIN,"
 * on its command line)?  Checked in /proc alone, without libvirt. */
bool td_libvirt_qemu_alive(pid_t pid, const char *domain);

/*
 * Grants: another VM's region given to a running (VNF) domain, which the
 * host can take away at once and give back without the guest's help.
 *
 * A grant NAME ([A-Za-z0-9_-], at most TD_LIBVIRT_GRANT_MAX chars, unique
 * on the host; e.g. "<fabric>-<vnf>-<vm>") is the hot-plugged device
 *   <shmem name='tochain-grant-NAME'><model type='ivshmem-plain'/>
 *     <size unit='M'>N</size><alias name='ua-tochain-grant-NAME'/></shmem>
 * of the running domain only (live, never its configuration: a grant does
 * not outlive the domain's QEMU).  That device is writable by the guest;
 * td_libvirt_ro.h plugs read-only grants of the same names, which the
 * calls below (revoke, regrant, grant_revoked, ungrant) handle too.  The region file is hard-linked as
 * /dev/shm/tochain-grant-NAME, as for td_libvirt_attach.
 *
 * Revoking and re-granting set the device's "revoked" property (QMP
 * qom-set on /machine/peripheral/ua-tochain-grant-NAME through
 * virDomainQemuMonitorCommand, which marks the domain "tainted:
 * custom-monitor").  The property exists only in a QEMU carrying
 * qemu-patches/ (the domain's <emulator> must be that build; see
 * qemu-patches/README.md); with any other QEMU these calls return
 * -ENOTSUP and the guest keeps its access until it lets the device go.
 * Revoked, the guest's BAR reads all ones and its writes are dropped; the
 * region itself, the host and the other guests are untouched.
 *
 * Errors common to the calls below: -EINVAL bad name or size, -ENOENT no
 * such domain (or libvirt unreachable), -ESRCH the domain is not running,
 * -ENODEV no such grant in the domain, -ENOTSUP the domain's QEMU cannot
 * revoke, -EIO libvirt or QEMU refused (with @err set to why).
 */
#define TD_LIBVIRT_GRANT_MAX 48
#define TD_LIBVIRT_GRANT_SHM_PREFIX "tochain-grant-"
#define TD_LIBVIRT_GRANT_ALIAS_PREFIX "ua-tochain-grant-"

/* Is @name usable as a grant name? */
bool td_libvirt_grant_name_valid(const char *name);

/* The device alias ("ua-tochain-grant-NAME"); 0, -EINVAL or -ENAMETOOLONG. */
int td_libvirt_grant_alias(const char *name, char *out, size_t len);

/* The <shmem> device XML of grant @name of @size bytes; 0, -EINVAL, -ENAMETOOLONG. */
int td_libvirt_grant_xml(const char *name, uint64_t size, char *out, size_t len);

/* The QMP command setting grant @name's "revoked" to @revoked. */
int td_libvirt_revoke_qmp(const char *name, bool revoked, char *out, size_t len);

/* The QMP command reading it back (qom-get). */
int td_libvirt_revoked_query_qmp(const char *name, char *out, size_t len);

/*
 * A QMP reply to one of the commands above: 0 for success ({"return":
 * ...}), -ENOTSUP when the device has no "revoked" property, -ENODEV when
 * QEMU has no such device, -EIO another error (@err: QEMU's words),
 * -EBADMSG not a QMP reply.
 */
int td_libvirt_parse_qmp_reply(const char *reply, char *err, size_t errlen);

/* A qom-get reply of "revoked": 1 revoked, 0 granted, else as above. */
int td_libvirt_parse_revoked(const char *reply, char *err, size_t errlen);

/*
 * A device-list-properties reply for ivshmem-plain: 1 if it lists
 * "revoked", 0 if not, -ENOTSUP if QEMU has no ivshmem-plain at all,
 * -EBADMSG not a reply.
 */
int td_libvirt_parse_revoke_support(const char *reply);

/* Can running domain @domain's QEMU revoke (1) or not (0)?  Or -errno. */
int td_libvirt_revoke_supported(struct td_libvirt *lv, const char *domain, char *err,
				size_t errlen);

/*
 * Give region file @region (@size bytes, a power of two of at least 1M;
 * on /dev/shm's filesystem) to running domain @domain as grant @name.
 * The file is chowned to the domain's DAC user if root owns it; one owned
 * by another user than the domain's is refused (-EACCES): domains sharing
 * regions must run as the same user (libvirt's default, libvirt-qemu).
 * -EEXIST if the domain already has that grant (ungrant it first).  On
 * failure nothing is left behind but the chown.  Does not say whether
 * the grant can be revoked: ask td_libvirt_revoke_supported.
 */
int td_libvirt_grant(struct td_libvirt *lv, const char *domain, const char *name,
		     const char *region, uint64_t size, char *err, size_t errlen);

/* Take grant @name away from the guest now (idempotent); 0 or -errno. */
int td_libvirt_revoke(struct td_libvirt *lv, const char *domain, const char *name,
		      char *err, size_t errlen);

/* Give it back (idempotent); 0 or -errno. */
int td_libvirt_regrant(struct td_libvirt *lv, const char *domain, const char *name,
		       char *err, size_t errlen);

/* Is grant @name revoked (1) or not (0)?  Or -errno (-ENODEV: not plugged). */
int td_libvirt_grant_revoked(struct td_libvirt *lv, const char *domain, const char *name,
			     char *err, size_t errlen);

/*
 * Remove grant @name: revoke it (so that the removal does not depend on
 * the guest), ask libvirt to unplug the device (device_del; it is gone
 * once the guest ejects it) and remove the /dev/shm link.  Best effort
 * and idempotent: a domain, or a device, that is gone is not an error.
 *   0                         the guest has no access any more (revoked,
 *                             or no device, or domain gone/stopped)
 *   TD_LIBVIRT_UNGRANT_PENDING  the unplug was asked but this QEMU cannot
 *                             revoke: the guest keeps access until it
 *                             ejects the device (@err says so)
 *   -errno                    libvirt refused (link removed anyway)
 */
#define TD_LIBVIRT_UNGRANT_PENDING 1
int td_libvirt_ungrant(struct td_libvirt *lv, const char *domain, const char *name,
		       char *err, size_t errlen);

#endif
