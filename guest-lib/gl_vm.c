// SPDX-License-Identifier: MIT
/*
 * The runtime's VM backend (gl_vm.h): channels claimed through the guest
 * driver, doorbells through its ioctls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <tochain/barrier.h>

#include "gl_real.h"
#include "gl_rt.h"
#include "gl_vm.h"
#include "tochain/tochain_ivshmem_uapi.h"

#define GL_VM_POLL_MIN_US	20
#define GL_VM_POLL_MAX_US	100000

bool gl_vm_is_dev(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

static int set_period(int fd, uint32_t us)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = its.it_interval.tv_sec = us / 1000000;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)(us % 1000000) * 1000;
	return timerfd_settime(fd, 0, &its, NULL) ? -errno : 0;
}

/* Poll mode: a periodic timer stands in for the doorbell eventfd. */
static int poll_timer(struct gl_vm_wake *v, uint32_t poll_us)
{
	int fd, err;

	if (poll_us < GL_VM_POLL_MIN_US)
		poll_us = GL_VM_POLL_MIN_US;
	if (poll_us > GL_VM_POLL_MAX_US)
		poll_us = GL_VM_POLL_MAX_US;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = set_period(fd, poll_us);
	if (err) {
		gl_real.close(fd);
		return err;
	}
	v->tfd = fd;
	v->base_us = v->cur_us = poll_us;
	v->idle_ticks = 0;
	return fd;
}

static void poll_rate(struct gl_vm_wake *v, uint32_t us)
{
	v->idle_ticks = 0;
	if (us == v->cur_us)
		return;
	if (set_period(v->tfd, us) == 0)
		v->cur_us = us;
}

void gl_vm_poll_tick(struct gl_vm_wake *v)
{
	if (v->doorbell || v->tfd < 0 || !v->ch)
		return;
	if (tcr_ring_count(&v->ch->ring[TCR_CH_RX]) ||
	    tcr_ring_count(&v->ch->ring[TCR_CH_FREE])) {
		poll_rate(v, v->base_us);
		return;
	}
	if (++v->idle_ticks >= GL_VM_IDLE_TICKS && v->cur_us < GL_VM_POLL_IDLE_US)
		poll_rate(v, v->cur_us * 2 > GL_VM_POLL_IDLE_US ? GL_VM_POLL_IDLE_US
								: v->cur_us * 2);
}

int gl_vm_claim(struct gl_rt *rt, uint32_t *channel, uint32_t *epoch)
{
	struct tochain_ivshmem_claim c;
	struct gl_vm_wake *v = &rt->wake.vm;
	struct tcr_header *h;
	int fd;

	/*
	 * Not close-on-exec: as the host's UNIX connection, the claim must
	 * outlive exec until the new image has adopted the sockets.
	 */
	rt->conn = open(rt->path, O_RDWR);
	if (rt->conn < 0)
		return -errno;
	if (gl_real.ioctl(rt->conn, TOCHAIN_IVSHMEM_IOC_CLAIM, &c)) {
		switch (errno) {
		case EAGAIN:
			return -ENOBUFS;
		case ENOENT:
		case ENODEV:
			return -ENETDOWN;
		default:
			return -errno;
		}
	}
	if (c.slot >= TCR_LINK_SLOTS)
		return -EPROTO;
	h = tcr_region_header(rt->r);
	v->dev = rt->conn;
	v->doorbell = c.mode == TCR_LINK_DOORBELL;
	v->peer = (uint16_t)c.host_peer;
	v->vector = (uint16_t)c.vector;
	v->kick = &h->link.slot[c.slot].kick;
	v->slot = c.slot;
	v->cookie = c.cookie;
	v->tfd = -1;
	v->ch = &rt->ch;
	if (v->doorbell) {
		struct tochain_ivshmem_irqfd b;

		fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fd < 0)
			return -errno;
		b.vector = c.vector;
		b.fd = fd;
		if (gl_real.ioctl(rt->conn, TOCHAIN_IVSHMEM_IOC_SET_IRQFD, &b)) {
			int err = -errno;

			gl_real.close(fd);
			return err;
		}
	} else {
		fd = poll_timer(v, c.poll_us);
		if (fd < 0)
			return fd;
	}
	rt->wake.efd_mine = fd;
	rt->wake.efd_host = -1;
	*channel = c.channel;
	*epoch = c.epoch;
	return 0;
}

bool gl_vm_claim_gone(const struct gl_rt *rt)
{
	const struct gl_vm_wake *v = &rt->wake.vm;
	const struct tcr_link *l = &tcr_region_header(rt->r)->link;

	if (v->dev < 0 || v->slot >= TCR_LINK_SLOTS)
		return false;	/* no claim of ours (a forked child's is in rt->kid) */
	/* acquire: pairs with the link's store-release of magic and of a slot's state */
	return tc_load_acquire(&l->magic) != TCR_LINK_MAGIC ||
	       tc_load_acquire(&l->slot[v->slot].state) != TCR_LINK_CLAIMED ||
	       tc_load_relaxed(&l->slot[v->slot].cookie) != v->cookie;
}

void gl_vm_wake_host(struct gl_vm_wake *v)
{
	if (v->doorbell) {
		struct tochain_ivshmem_doorbell b = { v->peer, v->vector };

		if (gl_real.ioctl(v->dev, TOCHAIN_IVSHMEM_IOC_DOORBELL, &b)) {
			/* ENODEV: the device went; the claim file polls so */
		}
		return;
	}
	/*
	 * The link reads it on its next scan and then wakes the TOE, which
	 * reads the ring we published before (its own acquire pairs with
	 * our store-release of the ring's tail).
	 */
	tc_fetch_add_release(v->kick, 1u);
	/* an answer is likely soon: poll at full rate again */
	if (v->cur_us != v->base_us)
		poll_rate(v, v->base_us);
}

bool gl_vm_is_old_conn(const struct gl_rt *rt, int fd)
{
	struct tochain_ivshmem_claim c;
	struct stat a, b;

	if (fstat(fd, &a) || !S_ISCHR(a.st_mode) || stat(rt->path, &b) ||
	    a.st_rdev != b.st_rdev)
		return false;
	return gl_real.ioctl(fd, TOCHAIN_IVSHMEM_IOC_CLAIM_INFO, &c) == 0;
}

void gl_vm_forget_region(struct gl_rt *rt)
{
	struct tcr_region *r = rt->r;

	if (!r || !r->base)
		return;
	/*
	 * Same address, same length: rt->ch and the region's handle stay
	 * valid, its rings read empty, and tcr_region_destroy unmaps it as
	 * it would the device's.  On failure the device's pages stay (they
	 * still work unless the device went).
	 */
	if (mmap(r->base, r->map_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		/* ENOMEM: nothing better to do */
	}
}
