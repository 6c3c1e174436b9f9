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
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <tochain/barrier.h>

#include "gl.h"
#include "tochain_ivshmem_uapi.h"

#define GL_VM_POLL_MIN_US	20
#define GL_VM_POLL_MAX_US	100000

bool gl_vm_is_dev(const char *path)
{
	struct stat st;

	return path && stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* Poll mode: a periodic timer stands in for the doorbell eventfd. */
static int poll_timer(uint32_t poll_us)
{
	struct itimerspec its = { 0 };
	int fd;

	if (poll_us < GL_VM_POLL_MIN_US)
		poll_us = GL_VM_POLL_MIN_US;
	if (poll_us > GL_VM_POLL_MAX_US)
		poll_us = GL_VM_POLL_MAX_US;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = (long)poll_us * 1000;
	if (timerfd_settime(fd, 0, &its, NULL)) {
		int err = -errno;

		gl_real.close(fd);
		return err;
	}
	return fd;
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
		fd = poll_timer(c.poll_us);
		if (fd < 0)
			return fd;
	}
	rt->wake.efd_mine = fd;
	rt->wake.efd_host = -1;
	*channel = c.channel;
	*epoch = c.epoch;
	return 0;
}

void gl_vm_wake_host(const struct gl_vm_wake *v)
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
