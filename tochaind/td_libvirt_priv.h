/* SPDX-License-Identifier: MIT */
/*
 * Private to td_libvirt.c and td_libvirt_ro.c: the helpers both use on a
 * libvirt domain handle.  Same thread rule as td_libvirt.h (tochaind's
 * one thread).
 */
#ifndef TOCHAIN_TD_LIBVIRT_PRIV_H
#define TOCHAIN_TD_LIBVIRT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libvirt/libvirt.h>

#include "td_libvirt.h"

/* libvirt's last error message (never NULL). */
const char *td_lv_error(void);

/* Running domain @domain: the handle (virDomainFree it), or NULL with
 * *@rc -ENOENT / -ESRCH and @err set. */
virDomainPtr td_lv_running(struct td_libvirt *lv, const char *domain, int *rc, char *err,
			   size_t errlen);

/* td_lv_running after checking grant name @name (-EINVAL, @err set). */
virDomainPtr td_lv_grant_domain(struct td_libvirt *lv, const char *domain, const char *name,
				int *rc, char *err, size_t errlen);

/* -EINVAL, with @err saying that grant @name or its @size is bad. */
int td_lv_bad_grant(const char *name, uint64_t size, char *err, size_t errlen);

/* QMP @cmd in @dom's QEMU: 0 with *@reply (free it), or -EIO with @err set. */
int td_lv_qmp(virDomainPtr dom, const char *domain, const char *cmd, char **reply, char *err,
	      size_t errlen);

/* Does @dom's live XML hold a device with alias @alias (libvirt's own
 * devices only)?  1, 0, or -EIO; with @uid, the domain's DAC owner too. */
int td_lv_has_alias(virDomainPtr dom, const char *alias, uid_t *uid, gid_t *gid);

/* Set (or, @query, read) grant @name's "revoked"; as td_libvirt_revoke /
 * td_libvirt_grant_revoked (-ENODEV: QEMU has no such device). */
int td_lv_grant_qmp(virDomainPtr dom, const char *domain, const char *name, bool query,
		    bool revoked, char *err, size_t errlen);

/*
 * Give @region to the domain's DAC user (chown if root owns it, -EACCES
 * if another user does) and link it as /dev/shm/tochain-grant-@name
 * (written to @link_path).  0, or -errno with @err set.
 */
int td_lv_link_grant(virDomainPtr dom, const char *domain, const char *name,
		     const char *region, char *link_path, size_t link_len, char *err,
		     size_t errlen);

/*
 * A read-only grant (td_libvirt_ro.h) is a device libvirt does not know:
 * td_libvirt_ungrant hands it here.  Unplug it (device_del; the guest
 * ejects it) and free its memory backend once it is gone, waiting at
 * most TD_LIBVIRT_RO_UNPLUG_MS.  0 gone, 1 still plugged (the guest has
 * not let it go yet; its backend is freed by a later reap), -errno.
 */
int td_lv_ro_unplug(virDomainPtr dom, const char *domain, const char *name, char *err,
		    size_t errlen);

/* Free grant @name's read-only memory backend if its device is gone.
 * Best effort. */
void td_lv_ro_reap(virDomainPtr dom, const char *domain, const char *name);

#endif
