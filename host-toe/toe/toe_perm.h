/* SPDX-License-Identifier: MIT */
/*
 * Who may use a stand-in VM's runtime (toe_perm_*): the modes and group of
 * the region file and of the attach socket "<region>.sock".
 *
 * Trust: every process of the guest that may open both files can attach a
 * channel.  The TOE still lets a channel act only on the sockets it holds
 * (its attach connection; ADOPT only for the named heir), whatever the
 * process's user; but the region's memory is one area for the whole
 * guest: a process that maps it can read and write the buffers of other
 * processes' channels.  Granting the files to more users therefore puts
 * those users in one trust domain for offloaded traffic, as the guest
 * kernel's device node does inside a VM (guest-drivers/README.md).
 */
#ifndef TOCHAIN_TOE_PERM_H
#define TOCHAIN_TOE_PERM_H

#include "toe.h"

/* Is @mode acceptable for --guest-mode (read/write bits only, owner rw)? */
bool toe_perm_mode_valid(unsigned mode);

/*
 * Give the region file p->region_path and the attach socket @sock_path
 * p->guest_mode and p->guest_gid (nothing when both are unset).
 * 0 or -errno.
 */
int toe_perm_apply(const struct toe_params *p, const char *sock_path);

#endif /* TOCHAIN_TOE_PERM_H */
