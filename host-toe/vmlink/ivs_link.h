/* SPDX-License-Identifier: MIT */
/*
 * ivs_link: the host side of a real VM's TOChain region (tochain-vmlink).
 *
 * Processes inside a VM cannot reach the TOE's attach socket
 * (<region>.sock).  The link attaches channels to the TOE on their
 * behalf, with the same hello/welcome handshake a host process uses (one
 * UNIX connection and one pair of eventfds per channel), offers them in
 * the region's claim table (struct tcr_link at the end of the header,
 * region_layout.h), and relays wake-ups between the TOE's eventfds and
 * the guest:
 *
 *   doorbell mode (ivshmem-doorbell): the link embeds the ivshmem server
 *   (ivs_server.h) and is its host peer.  Slot i uses MSI-X vector i both
 *   ways: the guest rings the link on vector i (the link writes the
 *   TOE's eventfd of that channel); the TOE writes the link's eventfd of
 *   that channel (the link rings vector i of the claiming guest, whose
 *   driver turns it into the process's eventfd).  Idle, nobody runs.
 *
 *   poll mode (ivshmem-plain, no interrupts): every poll_us the link
 *   looks at each claimed slot's kick counter, which the guest bumps
 *   instead of ringing, and writes the TOE's eventfd when it moved; the
 *   guest polls its rings on a timer of the same period.  Both back off
 *   while idle (the link after 50 scans without a kick or a wake-up from
 *   the TOE, doubling its period up to 10 ms; the guest likewise).
 *
 * A guest process claims a slot through its driver (IOC_CLAIM); the
 * driver marks it RELEASED when the process's claim file closes (exit or
 * crash) and rings the link, which closes that channel's connection (the
 * TOE reclaims the channel and the sockets only it held) and offers a
 * fresh channel in the slot.  When a guest leaves the ivshmem server
 * (QEMU exited or was reset) its slots are recycled the same way.
 *
 * When the TOE hangs up one channel (it drops a guest process that broke
 * the protocol) the link offers a new channel in that slot; it stops only
 * when the TOE is gone (no one listens on the attach socket, the region is
 * no longer READY, or another TOE process answers).
 *
 * Following (cfg.follow): when the TOE is gone the link does not stop.
 * It withdraws the claim table, rings every vector of every guest (their
 * processes find their claims withdrawn: guest-lib/gl_vm.c) and closes
 * its channels, keeps the
 * ivshmem server and QEMU's peers (doorbell mode: QEMU cannot connect to
 * a new server), and waits for a new TOE on the same region file: the
 * region READY again (read with pread, never through the mapping, since
 * the new TOE truncates the file before it formats it) and the attach
 * socket answering.  Then it grows the file back to its BAR size, rings
 * every slot's vector of every guest (the processes that held claims
 * wake and find their channel stale: the new TOE formatted the region),
 * and a little later attaches fresh channels and republishes the table
 * (seq + 1).  A region file replaced by another (a new inode at the
 * path) stops the link (-ESTALE): whoever rebuilt it restarts the link.
 *
 * Trust: the guest writes the claim table.  The link keeps its own copy
 * of what it offered (connection, eventfds, channel, epoch, vector) and
 * reads only a slot's state, its kick counter and the claimer's peer id,
 * once each, checked (an unknown peer is not rung, a state out of range
 * is ignored).  Recycling is bounded per slot (at most one re-attach per
 * RECYCLE_MIN_MS), so a guest flipping states cannot make the link hammer
 * the TOE.  Nothing the guest does makes a call fail or the process exit.
 *
 * Threading: single-threaded; every call on one link from one thread.
 */
#ifndef TOCHAIN_IVS_LINK_H
#define TOCHAIN_IVS_LINK_H

#include <stdbool.h>
#include <stdint.h>

#define IVS_LINK_DEFAULT_SLOTS		4
#define IVS_LINK_DEFAULT_POLL_US	200

struct ivs_link_config {
	const char *region_path;	/* the TOE's region; its .sock is the attach socket */
	const char *doorbell_socket;	/* ivshmem server socket; NULL: poll mode */
	unsigned int nslots;		/* channels offered (1..TCR_LINK_SLOTS); 0: default */
	unsigned int poll_us;		/* poll mode scan period; 0: default */
	unsigned int max_peers;		/* doorbell: QEMU peers accepted; 0: 4 */
	bool verbose;			/* a line on stderr per claim/release */
	bool follow;			/* outlive the TOE: wait for the next one */
};

struct ivs_link_stats {
	uint64_t offers;	/* channels attached and offered */
	uint64_t recycles;	/* released slots taken back */
	uint64_t to_toe;	/* guest wake-ups passed to the TOE */
	uint64_t to_guest;	/* TOE wake-ups passed to the guest */
	uint64_t peer_joins, peer_leaves;
	uint64_t toe_losses;	/* following: TOEs seen going away */
	uint64_t toe_follows;	/* following: new TOEs taken up (table republished) */
};

struct ivs_link;

/*
 * Map the region's header (the TOE must have formatted it: state READY),
 * grow the region file to a power of two if it is not one (a PCI BAR
 * must be; the TOE's mapping is unaffected), start the ivshmem server in
 * doorbell mode, attach nslots channels and publish the claim table.
 * NULL with errno: EINVAL (bad config, region not READY), ENOENT,
 * ECONNREFUSED (no TOE), EBUSY (the TOE has no free channel), or what
 * the system calls said.
 */
struct ivs_link *ivs_link_create(const struct ivs_link_config *cfg);

/*
 * Relay until ivs_link_stop(), SIGTERM/SIGINT (blocked by create, taken
 * through a signalfd) or the TOE going away (a channel hung up and no new
 * one can be attached; not when following).  0 on a stop or signal,
 * -EPIPE when the TOE went away, -ESTALE when following and the region
 * file was replaced, -errno on a fatal error of the link.
 */
int ivs_link_run(struct ivs_link *l);

void ivs_link_stop(struct ivs_link *l);

/* Withdraw the table, wake claimed guests, close every channel, free. */
void ivs_link_destroy(struct ivs_link *l);

void ivs_link_get_stats(const struct ivs_link *l, struct ivs_link_stats *st);

#endif /* TOCHAIN_IVS_LINK_H */
