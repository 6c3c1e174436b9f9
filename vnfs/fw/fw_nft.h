/* SPDX-License-Identifier: MIT */
/*
 * fw_nft.h - the nftables half of the firewall: a compiled ruleset (fw_rules.h)
 * rendered as nftables text and applied through libnftables inside a network
 * namespace (a VM's TOE container).
 *
 * The ruleset lives in its own table, "table inet tochain_fw", with chains
 * "input" and "output" (filter hooks, priority filter); nothing else in the
 * namespace is touched.  Apply and remove are each one nftables transaction:
 * the kernel sees the old table or the new one, never a mix, and a refused
 * transaction leaves the old one in place.
 *
 * Namespaces: @netns is NULL for the caller's own network namespace, a path
 * when it contains '/' (e.g. /proc/PID/ns/net), else a name under /run/netns
 * (as `ip netns add NAME` creates).  The caller's own namespace is never
 * changed.  Needs CAP_SYS_ADMIN (setns) and CAP_NET_ADMIN (nftables).
 *
 * Isolation: libnftables runs in a short-lived child process (fork), which
 * enters the namespace and reports back over a pipe.  libnftables exit()s
 * or abort()s on some failures (netlink socket, memory); that ends the
 * child only, and the call returns -EIO.  Costs a fork per call: these are
 * control-plane operations.  Callable from any thread, concurrently.
 *
 * Errors: 0 or -errno.  -EINVAL bad namespace name, or not a network
 * namespace; -ENOENT namespace not found (fw_nft_list: or no table there);
 * -EPERM/-EACCES not privileged; -EIO nftables refused the transaction
 * (diag holds its first line) or its helper died; -ENOMEM out of memory;
 * -EFBIG listing over 64 MiB.  libnftables reports errors as
 * text only: -ENOENT/-EPERM/-ENOMEM from nftables come from that text.
 */
#ifndef TOCHAIN_FW_NFT_H
#define TOCHAIN_FW_NFT_H

#include <stdbool.h>

#include "fw_rules.h"

#define FW_NFT_TABLE	"tochain_fw"	/* table inet FW_NFT_TABLE */

/*
 * The nftables transaction that replaces table inet tochain_fw by @rs:
 * "add table; delete table; table { chains and rules }".  Malloc'd, free()
 * it; NULL with errno ENOMEM.
 */
char *fw_nft_render(const struct fw_ruleset *rs);

/* Replaces the table in @netns by @rs, atomically. */
int fw_nft_apply(const char *netns, const struct fw_ruleset *rs, struct fw_diag *diag);

/* Removes the table from @netns, atomically; absent already is fine. */
int fw_nft_remove(const char *netns, struct fw_diag *diag);

/* Dry run of fw_nft_apply() in the caller's namespace: would nftables
 * accept it?  Changes nothing. */
int fw_nft_check(const struct fw_ruleset *rs, struct fw_diag *diag);

/* The table as nftables lists it (malloc'd into *@out); -ENOENT when the
 * table does not exist in @netns. */
int fw_nft_list(const char *netns, char **out, struct fw_diag *diag);

/* Runs the nftables commands @text in @netns (lower level of the above).
 * @out, if not NULL, receives nftables' malloc'd output. */
int fw_nft_run(const char *netns, const char *text, bool dry_run, char **out,
	       struct fw_diag *diag);

#endif /* TOCHAIN_FW_NFT_H */
