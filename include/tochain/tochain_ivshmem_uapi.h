/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * tochain_ivshmem: user-space interface of the TOChain ivshmem driver.
 *
 * One character device per ivshmem PCI device (1af4:1110), named after
 * the TOChain region it carries: /dev/tochain/<name>, where <name> is
 * struct tcr_header.name of a region whose magic is TCR_MAGIC and whose
 * state is TCR_STATE_READY.  Until the header is valid the node is
 * /dev/tochain/ivshmem<N>; the driver re-reads the header once a second
 * (and on TOCHAIN_IVSHMEM_IOC_RESCAN) and renames the node when it
 * becomes valid.  Open files stay valid across a rename.
 *
 * mmap() maps BAR2, the shared memory, from offset 0 (page granular,
 * MAP_SHARED only).  If the device is removed (hot-unplug) every mapping
 * is torn down: later accesses raise SIGBUS and every ioctl fails with
 * ENODEV.
 *
 * Interrupts: each MSI-X vector of an ivshmem-doorbell device (or vector
 * 0 when it falls back to INTx) can be bound to an eventfd; an interrupt
 * on that vector adds 1 to the eventfd.
 */
#ifndef TOCHAIN_IVSHMEM_UAPI_H
#define TOCHAIN_IVSHMEM_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define TOCHAIN_IVSHMEM_NAME_MAX	32	/* TCR_NAME_MAX, including the NUL */
#define TOCHAIN_IVSHMEM_DIR		"/dev/tochain"

/* tochain_ivshmem_info.flags */
#define TOCHAIN_IVSHMEM_F_NAMED		(1u << 0)	/* name is the region's */
#define TOCHAIN_IVSHMEM_F_DOORBELL	(1u << 1)	/* has interrupts: doorbell works */
#define TOCHAIN_IVSHMEM_F_MSIX		(1u << 2)	/* vectors are MSI-X */
#define TOCHAIN_IVSHMEM_F_INTX		(1u << 3)	/* one INTx "vector" */

struct tochain_ivshmem_info {
	__u64 size;		/* bytes of BAR2, what mmap may cover */
	__s32 ivposition;	/* IVPosition: own peer id (0 on ivshmem-plain) */
	__u32 nvectors;		/* interrupt vectors (0 on ivshmem-plain) */
	__u32 flags;		/* TOCHAIN_IVSHMEM_F_* */
	__u32 index;		/* N of the fallback name ivshmem<N> */
	char name[TOCHAIN_IVSHMEM_NAME_MAX];	/* node name under /dev/tochain */
};

/* Bind (fd >= 0) or unbind (fd == -1) the eventfd of one vector. */
struct tochain_ivshmem_irqfd {
	__u32 vector;
	__s32 fd;
};

/* Ring a peer: write (peer << 16 | vector) to the Doorbell register. */
struct tochain_ivshmem_doorbell {
	__u16 peer;
	__u16 vector;
};

#define TOCHAIN_IVSHMEM_IOC_MAGIC	0xd7
/* Fill the info; errors: ENODEV after removal. */
#define TOCHAIN_IVSHMEM_IOC_INFO \
	_IOR(TOCHAIN_IVSHMEM_IOC_MAGIC, 0, struct tochain_ivshmem_info)
/* Errors: EINVAL bad vector, EBADF/EINVAL not an eventfd, ENODEV. */
#define TOCHAIN_IVSHMEM_IOC_SET_IRQFD \
	_IOW(TOCHAIN_IVSHMEM_IOC_MAGIC, 1, struct tochain_ivshmem_irqfd)
/* Errors: EOPNOTSUPP no interrupts (ivshmem-plain), ENODEV. */
#define TOCHAIN_IVSHMEM_IOC_DOORBELL \
	_IOW(TOCHAIN_IVSHMEM_IOC_MAGIC, 2, struct tochain_ivshmem_doorbell)
/*
 * Re-read the region header now; 0 when the device is named after a
 * valid header (renamed if it was not yet), EAGAIN while the header is
 * not valid, EEXIST when another device already uses the name, ENODEV.
 */
#define TOCHAIN_IVSHMEM_IOC_RESCAN	_IO(TOCHAIN_IVSHMEM_IOC_MAGIC, 3)

/*
 * A claimed slot of the VM link's claim table (struct tcr_link in
 * region_layout.h): the channel the host link attached to the TOE for
 * this process.  mode is TCR_LINK_DOORBELL only when the link relays
 * doorbells and this device has the slot's vector; otherwise
 * TCR_LINK_POLL (poll the rings every poll_us, bump the slot's kick
 * counter to wake the TOE).
 */
struct tochain_ivshmem_claim {
	__u32 slot;		/* index in struct tcr_link.slot */
	__u32 channel;		/* region channel */
	__u32 epoch;		/* its epoch */
	__u32 vector;		/* bind an eventfd to it; ring host_peer on it */
	__u32 host_peer;	/* the link's ivshmem peer id */
	__u32 mode;		/* enum tcr_link_mode */
	__u32 poll_us;		/* poll interval in poll mode */
	__u32 cookie;		/* claim number the driver wrote into the slot */
};

/*
 * Claim an offered slot for this open file.  The claim lasts until the
 * file is closed (its last reference: exit, crash, close), when the
 * driver marks the slot RELEASED and rings the host.  Errors: EBUSY this
 * file already holds a claim, ENOENT no link has published a table,
 * EAGAIN no slot is offered now, ENODEV.
 */
#define TOCHAIN_IVSHMEM_IOC_CLAIM \
	_IOR(TOCHAIN_IVSHMEM_IOC_MAGIC, 4, struct tochain_ivshmem_claim)
/* The claim this file holds; ENOENT if none, ENODEV. */
#define TOCHAIN_IVSHMEM_IOC_CLAIM_INFO \
	_IOR(TOCHAIN_IVSHMEM_IOC_MAGIC, 5, struct tochain_ivshmem_claim)

#endif /* TOCHAIN_IVSHMEM_UAPI_H */
