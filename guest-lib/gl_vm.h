/* SPDX-License-Identifier: MIT */
/*
 * The runtime inside a real VM (gl_vm_*): the region is the guest
 * driver's /dev/tochain/NAME, and a channel is claimed through the
 * driver from the host link's claim table (struct tcr_link in
 * region_layout.h, host-toe/vmlink/ivs_link.h) instead of the TOE's UNIX socket.
 *
 * The claim file plays the part of the host's UNIX connection: opened
 * without close-on-exec (it survives exec until the new image has
 * adopted its sockets), dropped by a forked child, and its closing (exit,
 * crash) is how the host learns the process is gone.  It polls
 * readable only when the device went away.
 *
 * Wake-ups, doorbell mode: an eventfd bound to the slot's MSI-X vector
 * (the link rings it for the TOE), and the doorbell ioctl to the link on
 * the same vector.  Poll mode (ivshmem-plain, no interrupts): a periodic
 * timerfd of the link's poll_us stands in for the eventfd, and waking
 * the TOE bumps the slot's kick counter, which the link polls.  The timer
 * backs off while nothing arrives: after GL_VM_IDLE_TICKS empty ticks its
 * period doubles, up to GL_VM_POLL_IDLE_US; anything on RX/FREE at a tick,
 * or a wake-up we send the TOE, puts it back to the link's poll_us.  An
 * idle process then costs its VM little, at the price of up to
 * GL_VM_POLL_IDLE_US of latency for the first packet after a pause.
 */
#ifndef TOCHAIN_GL_VM_H
#define TOCHAIN_GL_VM_H

#include <stdbool.h>
#include <stdint.h>

struct gl_rt;

#define GL_VM_IDLE_TICKS	50
#define GL_VM_POLL_IDLE_US	50000	/* as the host link: idle wakes per 50 ms */

struct tcr_chan;

struct gl_vm_wake {
	int dev;		/* the claim file (gl_rt.conn), -1 on the host */
	bool doorbell;		/* doorbell mode, else poll mode */
	uint16_t peer, vector;	/* the link's peer id, the slot's vector */
	uint32_t slot, cookie;	/* our claim: its slot and the driver's claim number */
	uint32_t *kick;		/* the slot's kick counter (poll mode) */
	/* poll mode: the timer (gl_wake.efd_mine) and its back-off */
	int tfd;
	uint32_t base_us, cur_us, idle_ticks;
	const struct tcr_chan *ch;	/* whose RX/FREE show activity */
};

/* Is @path a character device (the guest driver's node)? */
bool gl_vm_is_dev(const char *path);

/*
 * Claim a channel for this process: open rt->path as rt->conn, take a
 * slot, set up rt->wake (its efd_mine and vm part).  0 with *channel and
 * *epoch, or -errno: -ENOBUFS no slot offered now, -ENETDOWN no link,
 * others from open/ioctl.  On error the caller's detach closes rt->conn.
 */
int gl_vm_claim(struct gl_rt *rt, uint32_t *channel, uint32_t *epoch);

/*
 * Is our claim gone from the link's table?  The link withdrew it (its
 * TOE died: it rings every vector then) or took the slot back (the TOE
 * dropped the channel), and then the channel is no longer ours, though
 * the TOE's next format has not yet made it stale.  Read from the claim
 * table, which only this VM's processes, their driver and the link write.
 */
bool gl_vm_claim_gone(const struct gl_rt *rt);

/* Wake the TOE through the link. */
void gl_vm_wake_host(struct gl_vm_wake *v);

/* Poll mode: the timer fired (its count was read); adapt its period. */
void gl_vm_poll_tick(struct gl_vm_wake *v);

/*
 * The channel of rt->r is lost (gl_revive.c): replace the device's
 * mapping by zero pages at the same address, so that late looks at the
 * old rings (sleepers, poll) read empty rings instead of raising SIGBUS
 * when the device was unplugged, and never touch the new TOE's channels.
 */
void gl_vm_forget_region(struct gl_rt *rt);

/* Is @fd, inherited across exec, a claim file of our region (an old channel)? */
bool gl_vm_is_old_conn(const struct gl_rt *rt, int fd);

#endif /* TOCHAIN_GL_VM_H */
