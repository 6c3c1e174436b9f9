/* SPDX-License-Identifier: MIT */
/*
 * Who in a stand-in VM may use its runtime (td_guest_*): the mode and
 * group the VM's TOE gives its region file and attach socket
 * (tochain-toe --guest-mode/--guest-group, host-toe/toe/toe_perm.h).
 * Unset (mode 0, group ""), both stay the TOE user's (root's) only.
 *
 * Trust: granting the files to users puts them in one trust domain for the
 * VM's offloaded traffic: whoever maps the region can read and write the
 * in-flight payload of every channel (DESIGN.md section 3, toe_perm.h).
 * A libvirt VM has no such files in the guest (QEMU maps the region); its
 * users are set by the guest driver's node_mode (guest-drivers/README.md),
 * so the fields are refused with a domain.
 */
#ifndef TOCHAIN_TD_GUEST_H
#define TOCHAIN_TD_GUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define TD_GROUP_MAX 33		/* a group name: 1..32 characters */

/*
 * Parse a mode as an operator writes it: octal ("0660", "660"), read and
 * write bits only, owner rw (what tochain-toe accepts).  0, or -EINVAL
 * with @why set.
 */
int td_guest_mode_parse(const char *s, unsigned int *mode, const char **why);

/* Is @name a well-formed group name (not whether it exists)? */
bool td_guest_group_valid(const char *name, const char **why);

/*
 * The "guest_mode" and "guest_group" members of @o (both optional, strings)
 * into @mode and @group (TD_GROUP_MAX bytes).  With @exists, the group must
 * also exist on this host (an operator's request; a saved state only
 * checks the form: the TOE refuses a group deleted since).  0 or -EINVAL
 * with @err naming the field.
 */
int td_guest_from_json(json_t *o, bool exists, unsigned int *mode, char *group, char *err,
		       size_t errlen);

/* Add "guest_mode" ("0660") and "guest_group" to @o, each when set. */
void td_guest_to_json(unsigned int mode, const char *group, json_t *o);

/*
 * Let the guest's users reach files in the region directory @dir: add the
 * search bits for group and others (0011; not read: names are not listed).
 * Each region file's own mode still decides who opens it.  0 or -errno.
 */
int td_guest_dir_grant(const char *dir);

/*
 * Append the tochain-toe options for @mode and @group to @argv at *@n
 * (at most 4 entries; @buf, 12 bytes, holds the mode's text and must
 * outlive @argv).
 */
void td_guest_toe_args(unsigned int mode, const char *group, char *buf, const char **argv,
		       size_t *n);

#endif
