/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to guest-drivers/: the device and file state of
 * tochain_ivshmem.ko, shared by its three files:
 *   tivs_core.c  the device's reference count and the claim table's
 *                low-level writes (used by both others)
 *   tivs_name.c  the device's name and node, and the rescan that renames it
 *   tivs_file.c  the character device: open, mmap, ioctl, poll, release
 *   tivs_pci.c   the PCI driver: probe, remove, IRQs, stale claims
 * One way: tivs_pci.c calls the three others, tivs_file.c calls
 * tivs_name.c (IOC_RESCAN) and tivs_core.c, tivs_name.c calls
 * tivs_core.c; the node's file operations reach tivs_name.c through
 * tdev->fops, which probe sets.
 *
 * tochain_ivshmem: TOChain's guest driver for the QEMU ivshmem PCI device
 * (1af4:1110), both ivshmem-plain (shared memory in BAR2 only) and
 * ivshmem-doorbell (BAR0 registers, MSI-X vectors in BAR1 or INTx).
 *
 * Each device gets a misc character device /dev/tochain/<name>, <name>
 * being the name in the TOChain region header at the start of BAR2
 * (include/tochain/region_layout.h), or /dev/tochain/ivshmem<N>
 * while that header is not valid; the user-space ABI is in
 * tochain_ivshmem_uapi.h.
 *
 * What we trust: nothing in BAR2.  The host (or another guest) may write
 * anything there at any time; the header is copied out, checked (magic,
 * version, state, name characters) and only the copy is used.
 *
 * LIFETIME
 * struct tivs_dev is reference counted.  The PCI binding holds one
 * reference, dropped by a devres action registered first in probe, so it
 * runs last, after the devres-managed IRQs, MSI-X vectors, mappings and
 * regions are gone.  Every open file holds one more, so a file (and any
 * mapping, which holds its file) outlives the PCI device.
 *
 * HOT-UNPLUG
 * remove() sets ->gone under the write side of ->map_lock.  mmap, the
 * fault handler, every ioctl and the rescan work check ->gone under the
 * read side, so once remove() has set it nobody touches BAR0 or BAR2
 * again.  remove() then zaps every user mapping (unmap_mapping_range on
 * the address_space of each open file); the fault handler never maps
 * anything again, so later accesses get SIGBUS, and ioctls get ENODEV.
 * Bound eventfds are signalled once so that sleepers wake up and notice.
 * poll() on an open file reports EPOLLHUP | EPOLLERR from then on (and
 * nothing before), so a process can wait for the device to go.
 *
 * CLAIMS (the VM link's claim table, struct tcr_link at the end of the
 * region header)
 * IOC_CLAIM turns an OFFERED slot into CLAIMED for the calling file and
 * stamps it with a claim number (cookie); releasing the file (its last
 * reference: close, exit, crash) turns it into RELEASED, if the slot
 * still carries our cookie, and rings the host on the slot's vector so
 * that the link recycles the channel at once (in poll mode the link
 * finds it on its next scan).  Claims are serialised by ->claim_lock, so
 * two processes never take one slot; the host never writes a CLAIMED
 * slot.  At probe, slots left CLAIMED by an earlier boot of the guest
 * are released the same way.  Values read from the table are copied
 * once and bounds-checked; a bad table makes CLAIM fail, nothing else.
 *
 * LOCKS, in the order they nest:
 *   mmap_lock    (held around ->mmap and ->fault)
 *   ->map_lock   rwsem: ->gone, BAR0/BAR2 access, taken by ioctl, mmap,
 *                fault, rescan work; never held across user copies
 *   ->reg_lock   mutex: misc (re)registration and the name
 *   tivs_names_lock  mutex: the list of registered devices and their names
 *   misc_mtx     (misc core: held around ->open and by (de)registration)
 *   ->files_lock mutex: ->files, the list of open files
 *   ->claim_lock mutex: claim table writes (taken under map_lock, read)
 *   ->irq_lock   spinlock (irq-safe): eventfd bindings, read by handlers
 * ->open runs under misc_mtx and so takes only ->files_lock.
 */
#ifndef TOCHAIN_TIVS_H
#define TOCHAIN_TIVS_H

#include <linux/module.h>
#include <linux/pci.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/io.h>
#include <linux/eventfd.h>
#include <linux/interrupt.h>
#include <linux/kref.h>
#include <linux/idr.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <linux/rwsem.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/version.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched.h>

#include <tochain/region_layout.h>
#include "tochain/tochain_ivshmem_uapi.h"

#define TIVS_DRV_NAME		"tochain_ivshmem"

/* BAR0 registers (QEMU docs/specs/ivshmem-spec.rst) */
#define TIVS_REG_INTR_MASK	0x00
#define TIVS_REG_INTR_STATUS	0x04
#define TIVS_REG_IVPOSITION	0x08
#define TIVS_REG_DOORBELL	0x0c

#define TIVS_BAR_REGS		0
#define TIVS_BAR_SHM		2
#define TIVS_MAX_VECTORS	64
#define TIVS_RESCAN_DELAY	HZ
#define TIVS_NODE_MAX		(sizeof("tochain/") + TCR_NAME_MAX)

static_assert(TOCHAIN_IVSHMEM_NAME_MAX == TCR_NAME_MAX);

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define tivs_eventfd_signal(ctx)	eventfd_signal(ctx)
#else
#define tivs_eventfd_signal(ctx)	eventfd_signal(ctx, 1)
#endif

struct tivs_dev;

struct tivs_vector {
	struct tivs_dev *tdev;
	unsigned int index;
	struct eventfd_ctx *trigger;	/* under irq_lock */
	struct tivs_file *owner;	/* file that bound it, under irq_lock */
};

struct tivs_file {
	struct tivs_dev *tdev;
	struct address_space *mapping;	/* of the inode it was opened on */
	struct list_head node;		/* in tdev->files */
	bool claimed;			/* under tdev->claim_lock */
	struct tochain_ivshmem_claim claim;
};

struct tivs_dev {
	struct kref ref;
	struct pci_dev *pdev;
	int index;			/* N of ivshmem<N> */

	struct rw_semaphore map_lock;
	bool gone;			/* removed: under map_lock */

	void __iomem *regs;		/* BAR0 */
	void *shm;			/* BAR2, memremap'ed write-back */
	phys_addr_t shm_start;
	resource_size_t shm_len;

	struct mutex reg_lock;
	const struct file_operations *fops;	/* of the node: tivs_fops */
	struct miscdevice misc;
	bool registered;		/* also under tivs_names_lock */
	struct list_head names_node;	/* in tivs_names while registered */
	bool named;			/* name comes from a valid header */
	bool warned_dup;		/* said that the name is taken */
	char name[TCR_NAME_MAX];
	char misc_name[TIVS_NODE_MAX];
	char node_name[TIVS_NODE_MAX];
	struct delayed_work rescan_work;

	struct mutex files_lock;
	struct list_head files;

	struct mutex claim_lock;
	u32 claim_seq;			/* cookies, under claim_lock */
	wait_queue_head_t gone_wq;	/* poll(): woken by remove() */

	spinlock_t irq_lock;
	unsigned int nvectors;
	bool msix;
	bool intx;
	struct tivs_vector *vectors;
};

/* tivs_core.c */
extern struct ida tivs_ida;
void tivs_put(struct tivs_dev *tdev);
struct tcr_link *tivs_link(struct tivs_dev *tdev);
void tivs_ring_host(struct tivs_dev *tdev, u32 peer, u32 vector);
void tivs_release_slot(struct tivs_dev *tdev, u32 i, u32 cookie, bool check_cookie);

/* tivs_name.c */
bool tivs_read_name(struct tivs_dev *tdev, char *name);
int tivs_misc_register(struct tivs_dev *tdev, const char *name);
void tivs_misc_deregister(struct tivs_dev *tdev);
int tivs_rescan(struct tivs_dev *tdev);
void tivs_rescan_work(struct work_struct *work);

/* tivs_file.c */
extern const struct file_operations tivs_fops;

#endif
