/* SPDX-License-Identifier: MIT */
/*
 * The VM link of a VM run by libvirt (td_link_*): tochaind runs one
 * tochain-vmlink (host-toe/vmlink/README.md) per VM added with --domain, so that
 * processes in the guest can claim TOE channels.
 *
 * The link runs --follow: it outlives a TOE restart (tochaind's repair of
 * a dead TOE starts a new one on the same region file) and serves the new
 * TOE without the device being plugged again.  Like the TOE it is a
 * session leader of its own (setsid), in its own cgroup
 * (tochain/FABRIC/link-NAME) when tochaind has cgroups, logs to
 * STATE_DIR/link-NAME.log, signals readiness on a pipe, and outlives
 * tochaind (a restarted daemon finds it by its pid, checked against
 * /proc/PID/cmdline).
 *
 * Wait modes (vm->wait):
 *   TD_WAIT_DOORBELL  the link is the domain's ivshmem server, at
 *                     REGION.ivs (td_link_socket); the domain gets an
 *                     ivshmem-doorbell <shmem> with <server path> and
 *                     TD_LINK_SLOTS MSI-X vectors.  QEMU cannot connect to
 *                     a second server: a link that died and was restarted
 *                     means plugging the device again.
 *   TD_WAIT_POLL      ivshmem-plain, the link and the guest poll.
 *
 * The TOE's channels (tochain-toe's default, 16) leave room for the
 * link's TD_LINK_SLOTS: a recycled slot's new channel is attached before
 * the TOE has reclaimed the old one, so up to 2 * TD_LINK_SLOTS are in
 * use for a moment.
 */
#ifndef TOCHAIN_TD_LINK_H
#define TOCHAIN_TD_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "td_state.h"
#include "td_vm.h"

#define TD_LINK_SLOTS 4		/* guest processes using the network at once */
#define TD_TOE_CHANNELS 16	/* tochain-toe's default --channels */

_Static_assert(2 * TD_LINK_SLOTS <= TD_TOE_CHANNELS, "the TOE must have room for the link");

/* "doorbell", "poll" (or "none"). */
const char *td_wait_name(enum td_wait w);

/* Parse a wait mode; 0, or -EINVAL. */
int td_wait_parse(const char *s, enum td_wait *w);

/* The doorbell socket of @vm: "REGION.ivs" (inline: td_libvirt.o stands alone). */
static inline void td_link_socket(const struct td_vm *vm, char *out, size_t len)
{
	snprintf(out, len, "%s.ivs", vm->region);
}

/*
 * Start @vm's link (its TOE must serve the region) and wait until it has
 * published its claim table; sets vm->link_pid.  In doorbell mode the
 * region directory is made searchable by others (0711: QEMU runs as
 * libvirt's user and must reach the socket; the files there stay 0600
 * and the sockets are not writable by others).  0, or -errno with @err.
 */
int td_link_start(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen);

/* Stop it (SIGTERM, then SIGKILL after 1 s), remove its socket and cgroup. */
void td_link_stop(const struct td_config *cfg, struct td_vm *vm);

/* Is the recorded link process alive (and really @vm's tochain-vmlink)? */
bool td_link_alive(const struct td_vm *vm);

#endif
