// SPDX-License-Identifier: GPL-2.0
/*
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

static DEFINE_IDA(tivs_ida);

/* Registered devices, so that two never claim one name; nests in reg_lock. */
static DEFINE_MUTEX(tivs_names_lock);
static LIST_HEAD(tivs_names);

static void tivs_free(struct kref *ref)
{
	struct tivs_dev *tdev = container_of(ref, struct tivs_dev, ref);
	unsigned int i;

	for (i = 0; i < tdev->nvectors; i++)
		if (tdev->vectors[i].trigger)
			eventfd_ctx_put(tdev->vectors[i].trigger);
	kfree(tdev->vectors);
	ida_free(&tivs_ida, tdev->index);
	kfree(tdev);
}

static void tivs_put(struct tivs_dev *tdev)
{
	kref_put(&tdev->ref, tivs_free);
}

static void tivs_put_action(void *data)
{
	tivs_put(data);
}

/*
 * Copy the region name out of BAR2 if the header is valid: magic,
 * version and state READY (loaded with acquire, pairing with the host's
 * store-release of state), and a name of [a-z0-9_.-], NUL-terminated,
 * that is a usable path component.
 */
static bool tivs_read_name(struct tivs_dev *tdev, char *name)
{
	struct tcr_header *h = tdev->shm;
	size_t len, i;

	if (smp_load_acquire(&h->state) != TCR_STATE_READY)
		return false;
	if (READ_ONCE(h->magic) != TCR_MAGIC ||
	    READ_ONCE(h->version) != TCR_LAYOUT_VERSION)
		return false;
	memcpy(name, h->name, TCR_NAME_MAX);
	len = strnlen(name, TCR_NAME_MAX);
	if (len == 0 || len == TCR_NAME_MAX)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return true;
}

static const struct file_operations tivs_fops;

/*
 * Register the misc device under @name; caller holds reg_lock.  -EEXIST
 * if another of our devices has the name (checked here rather than left
 * to sysfs, which would complain with a stack dump).
 */
static int tivs_misc_register(struct tivs_dev *tdev, const char *name)
{
	struct tivs_dev *other;
	int ret;

	lockdep_assert_held(&tdev->reg_lock);
	mutex_lock(&tivs_names_lock);
	list_for_each_entry(other, &tivs_names, names_node) {
		if (!strcmp(other->name, name)) {
			ret = -EEXIST;
			goto out;
		}
	}
	memset(&tdev->misc, 0, sizeof(tdev->misc));
	snprintf(tdev->misc_name, sizeof(tdev->misc_name), "tochain-%s", name);
	snprintf(tdev->node_name, sizeof(tdev->node_name), "tochain/%s", name);
	tdev->misc.minor = MISC_DYNAMIC_MINOR;
	tdev->misc.name = tdev->misc_name;
	tdev->misc.nodename = tdev->node_name;
	tdev->misc.mode = 0600;
	tdev->misc.fops = &tivs_fops;
	tdev->misc.parent = &tdev->pdev->dev;
	ret = misc_register(&tdev->misc);
	if (ret)
		goto out;
	tdev->registered = true;
	strscpy(tdev->name, name, sizeof(tdev->name));
	list_add(&tdev->names_node, &tivs_names);
out:
	mutex_unlock(&tivs_names_lock);
	return ret;
}

static bool tivs_name_taken(const char *name)
{
	struct tivs_dev *other;
	bool taken = false;

	mutex_lock(&tivs_names_lock);
	list_for_each_entry(other, &tivs_names, names_node)
		taken |= !strcmp(other->name, name);
	mutex_unlock(&tivs_names_lock);
	return taken;
}

static void tivs_misc_deregister(struct tivs_dev *tdev)
{
	lockdep_assert_held(&tdev->reg_lock);
	mutex_lock(&tivs_names_lock);
	if (tdev->registered) {
		list_del(&tdev->names_node);
		misc_deregister(&tdev->misc);
		tdev->registered = false;
	}
	mutex_unlock(&tivs_names_lock);
}

/*
 * Re-read the header and move the device node to the region's name if
 * it has become valid.  Caller holds map_lock (read) and has checked
 * that the device is not gone.  Returns 0 when named, -EAGAIN while the
 * header is not valid, -EEXIST when another device holds the name.
 */
static int tivs_rescan(struct tivs_dev *tdev)
{
	char name[TCR_NAME_MAX];
	char fallback[TCR_NAME_MAX];
	int ret;

	lockdep_assert_held(&tdev->map_lock);
	mutex_lock(&tdev->reg_lock);
	if (tdev->named) {
		ret = 0;
		goto out;
	}
	if (!tivs_read_name(tdev, name)) {
		ret = -EAGAIN;
		goto out;
	}
	if (tivs_name_taken(name)) {
		/* keep the fallback; the other device may go away */
		if (!tdev->warned_dup)
			dev_warn(&tdev->pdev->dev,
				 "region name \"%s\" is taken by another device\n",
				 name);
		tdev->warned_dup = true;
		ret = -EEXIST;
		goto out;
	}
	tivs_misc_deregister(tdev);
	ret = tivs_misc_register(tdev, name);
	if (!ret) {
		tdev->named = true;
		dev_info(&tdev->pdev->dev, "region \"%s\": /dev/%s\n",
			 name, tdev->node_name);
		goto out;
	}
	dev_warn(&tdev->pdev->dev, "cannot use region name \"%s\": %d\n",
		 name, ret);
	snprintf(fallback, sizeof(fallback), "ivshmem%d", tdev->index);
	if (tivs_misc_register(tdev, fallback))
		dev_err(&tdev->pdev->dev, "lost the device node\n");
	if (ret == -EBUSY)
		ret = -EEXIST;
out:
	mutex_unlock(&tdev->reg_lock);
	return ret;
}

static void tivs_rescan_work(struct work_struct *work)
{
	struct tivs_dev *tdev = container_of(to_delayed_work(work),
					     struct tivs_dev, rescan_work);
	int ret;

	down_read(&tdev->map_lock);
	if (!tdev->gone) {
		ret = tivs_rescan(tdev);
		if (ret == -EAGAIN || ret == -EEXIST)
			schedule_delayed_work(&tdev->rescan_work,
					      TIVS_RESCAN_DELAY);
	}
	up_read(&tdev->map_lock);
}

static irqreturn_t tivs_vector_irq(int irq, void *data)
{
	struct tivs_vector *v = data;

	spin_lock(&v->tdev->irq_lock);
	if (v->trigger)
		tivs_eventfd_signal(v->trigger);
	spin_unlock(&v->tdev->irq_lock);
	return IRQ_HANDLED;
}

/* INTx: shared line, Interrupt Status says whether it was us (read clears). */
static irqreturn_t tivs_intx_irq(int irq, void *data)
{
	struct tivs_vector *v = data;

	if (!readl(v->tdev->regs + TIVS_REG_INTR_STATUS))
		return IRQ_NONE;
	return tivs_vector_irq(irq, data);
}

static int tivs_setup_irqs(struct tivs_dev *tdev)
{
	struct pci_dev *pdev = tdev->pdev;
	unsigned int i;
	int n, ret;

	if (pdev->msix_cap) {
		n = pci_msix_vec_count(pdev);
		if (n <= 0)
			return 0;
		n = pci_alloc_irq_vectors(pdev, 1, min(n, TIVS_MAX_VECTORS),
					  PCI_IRQ_MSIX);
		if (n < 0) {
			/* the memory is still of use without interrupts */
			dev_warn(&pdev->dev, "no MSI-X (%d): no interrupts\n", n);
			return 0;
		}
		tdev->msix = true;
	} else if (pdev->irq) {
		n = 1;
		tdev->intx = true;
	} else {
		return 0;
	}

	tdev->vectors = kcalloc(n, sizeof(*tdev->vectors), GFP_KERNEL);
	if (!tdev->vectors)
		return -ENOMEM;
	tdev->nvectors = n;
	for (i = 0; i < tdev->nvectors; i++) {
		struct tivs_vector *v = &tdev->vectors[i];

		v->tdev = tdev;
		v->index = i;
		if (tdev->msix)
			ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, i),
					       tivs_vector_irq, 0, TIVS_DRV_NAME, v);
		else
			ret = devm_request_irq(&pdev->dev, pdev->irq,
					       tivs_intx_irq, IRQF_SHARED,
					       TIVS_DRV_NAME, v);
		if (ret)
			return ret;
	}
	if (tdev->intx)
		writel(1, tdev->regs + TIVS_REG_INTR_MASK);
	return 0;
}

static struct tcr_link *tivs_link(struct tivs_dev *tdev)
{
	return &((struct tcr_header *)tdev->shm)->link;
}

/* Ring the link on @vector, if this device has interrupts.  map_lock held. */
static void tivs_ring_host(struct tivs_dev *tdev, u32 peer, u32 vector)
{
	if (tdev->nvectors && peer <= 0xffff && vector <= 0xffff)
		writel((peer << 16) | vector, tdev->regs + TIVS_REG_DOORBELL);
}

/* Release slot @i if it still carries @cookie.  map_lock and claim_lock held. */
static void tivs_release_slot(struct tivs_dev *tdev, u32 i, u32 cookie, bool check_cookie)
{
	struct tcr_link *l = tivs_link(tdev);
	struct tcr_link_slot *sl;

	lockdep_assert_held(&tdev->claim_lock);
	if (i >= TCR_LINK_SLOTS)
		return;
	sl = &l->slot[i];
	if (READ_ONCE(sl->state) != TCR_LINK_CLAIMED ||
	    (check_cookie && READ_ONCE(sl->cookie) != cookie))
		return;
	smp_store_release(&sl->state, TCR_LINK_RELEASED);
	if (smp_load_acquire(&l->magic) == TCR_LINK_MAGIC &&
	    READ_ONCE(l->mode) == TCR_LINK_DOORBELL)
		tivs_ring_host(tdev, READ_ONCE(l->host_peer), READ_ONCE(sl->vector));
}

/* Called under map_lock (read), device present. */
static int tivs_claim(struct tivs_file *tf, struct tochain_ivshmem_claim *out)
{
	struct tivs_dev *tdev = tf->tdev;
	struct tcr_link *l = tivs_link(tdev);
	u32 n, i, mode, poll_us, host_peer;
	int ret = -EAGAIN;

	mutex_lock(&tdev->claim_lock);
	if (tf->claimed) {
		ret = -EBUSY;
		goto out;
	}
	if (smp_load_acquire(&l->magic) != TCR_LINK_MAGIC) {
		ret = -ENOENT;
		goto out;
	}
	n = min_t(u32, READ_ONCE(l->nslots), TCR_LINK_SLOTS);
	mode = READ_ONCE(l->mode);
	poll_us = READ_ONCE(l->poll_us);
	host_peer = READ_ONCE(l->host_peer);
	for (i = 0; i < n; i++) {
		struct tcr_link_slot *sl = &l->slot[i];
		struct tochain_ivshmem_claim c = { .slot = i };

		if (smp_load_acquire(&sl->state) != TCR_LINK_OFFERED)
			continue;
		c.channel = READ_ONCE(sl->channel);
		c.epoch = READ_ONCE(sl->epoch);
		c.vector = READ_ONCE(sl->vector);
		c.host_peer = host_peer;
		c.poll_us = poll_us;
		c.mode = mode == TCR_LINK_DOORBELL && c.vector < tdev->nvectors &&
			host_peer <= 0xffff ? TCR_LINK_DOORBELL : TCR_LINK_POLL;
		c.cookie = ++tdev->claim_seq;
		WRITE_ONCE(sl->cookie, c.cookie);
		WRITE_ONCE(sl->guest_peer, readl(tdev->regs + TIVS_REG_IVPOSITION));
		WRITE_ONCE(sl->pid, (u32)task_tgid_nr(current));
		smp_store_release(&sl->state, TCR_LINK_CLAIMED);
		tf->claim = c;
		tf->claimed = true;
		*out = c;
		ret = 0;
		break;
	}
out:
	mutex_unlock(&tdev->claim_lock);
	return ret;
}

/*
 * Runs under misc_mtx, so it must not take map_lock (rescan holds
 * map_lock and waits for misc_mtx).  Reading ->gone without the lock is
 * enough: a file opened while remove() runs can still not map anything,
 * since mmap checks ->gone under map_lock.
 */
static int tivs_open(struct inode *inode, struct file *file)
{
	struct miscdevice *misc = file->private_data;
	struct tivs_dev *tdev = container_of(misc, struct tivs_dev, misc);
	struct tivs_file *tf;

	if (READ_ONCE(tdev->gone))
		return -ENODEV;
	tf = kzalloc(sizeof(*tf), GFP_KERNEL);
	if (!tf)
		return -ENOMEM;
	kref_get(&tdev->ref);
	tf->tdev = tdev;
	tf->mapping = file->f_mapping;
	mutex_lock(&tdev->files_lock);
	list_add(&tf->node, &tdev->files);
	mutex_unlock(&tdev->files_lock);
	file->private_data = tf;
	return 0;
}

static int tivs_release(struct inode *inode, struct file *file)
{
	struct tivs_file *tf = file->private_data;
	struct tivs_dev *tdev = tf->tdev;
	struct eventfd_ctx *put[TIVS_MAX_VECTORS];
	unsigned int i, nput = 0;

	spin_lock_irq(&tdev->irq_lock);
	for (i = 0; i < tdev->nvectors; i++) {
		struct tivs_vector *v = &tdev->vectors[i];

		if (v->owner == tf && v->trigger) {
			put[nput++] = v->trigger;
			v->trigger = NULL;
			v->owner = NULL;
		}
	}
	spin_unlock_irq(&tdev->irq_lock);
	for (i = 0; i < nput; i++)
		eventfd_ctx_put(put[i]);

	if (tf->claimed) {
		down_read(&tdev->map_lock);
		mutex_lock(&tdev->claim_lock);
		if (!tdev->gone)
			tivs_release_slot(tdev, tf->claim.slot, tf->claim.cookie, true);
		tf->claimed = false;
		mutex_unlock(&tdev->claim_lock);
		up_read(&tdev->map_lock);
	}

	mutex_lock(&tdev->files_lock);
	list_del(&tf->node);
	mutex_unlock(&tdev->files_lock);
	kfree(tf);
	tivs_put(tdev);
	return 0;
}

/*
 * Pages are inserted one fault at a time, so that after remove() has
 * zapped the mappings nothing can bring them back: faults then SIGBUS.
 * The protection stays the vma's default (cacheable): BAR2 is ordinary
 * RAM on the host side, which is what QEMU's ivshmem docs recommend.
 */
static vm_fault_t tivs_vm_fault(struct vm_fault *vmf)
{
	struct tivs_file *tf = vmf->vma->vm_private_data;
	struct tivs_dev *tdev = tf->tdev;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&tdev->map_lock);
	if (!tdev->gone && vmf->pgoff < (tdev->shm_len >> PAGE_SHIFT))
		ret = vmf_insert_pfn(vmf->vma, vmf->address,
				     (tdev->shm_start >> PAGE_SHIFT) + vmf->pgoff);
	up_read(&tdev->map_lock);
	return ret;
}

static const struct vm_operations_struct tivs_vm_ops = {
	.fault = tivs_vm_fault,
};

static int tivs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct tivs_file *tf = file->private_data;
	struct tivs_dev *tdev = tf->tdev;
	unsigned long npages = tdev->shm_len >> PAGE_SHIFT;
	unsigned long len = vma_pages(vma);
	int ret = 0;

	/*
	 * MAP_SHARED only (a private copy-on-write view of device memory
	 * makes no sense); VM_MAYSHARE, since a read-only MAP_SHARED of an
	 * O_RDONLY file has no VM_SHARED.
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	down_read(&tdev->map_lock);
	if (tdev->gone) {
		ret = -ENODEV;
		goto out;
	}
	if (vma->vm_pgoff >= npages || len > npages - vma->vm_pgoff) {
		ret = -EINVAL;
		goto out;
	}
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
#endif
	vma->vm_ops = &tivs_vm_ops;
	vma->vm_private_data = tf;
out:
	up_read(&tdev->map_lock);
	return ret;
}

/* Called under map_lock (read), device present. */
static void tivs_get_info(struct tivs_dev *tdev, struct tochain_ivshmem_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = tdev->shm_len;
	info->ivposition = (s32)readl(tdev->regs + TIVS_REG_IVPOSITION);
	info->nvectors = tdev->nvectors;
	info->index = tdev->index;
	if (tdev->nvectors)
		info->flags |= TOCHAIN_IVSHMEM_F_DOORBELL;
	if (tdev->msix)
		info->flags |= TOCHAIN_IVSHMEM_F_MSIX;
	if (tdev->intx)
		info->flags |= TOCHAIN_IVSHMEM_F_INTX;
	mutex_lock(&tdev->reg_lock);
	if (tdev->named)
		info->flags |= TOCHAIN_IVSHMEM_F_NAMED;
	strscpy(info->name, tdev->name, sizeof(info->name));
	mutex_unlock(&tdev->reg_lock);
}

/* Called under map_lock (read), device present; @req copied in already. */
static int tivs_set_irqfd(struct tivs_file *tf,
			  const struct tochain_ivshmem_irqfd *req)
{
	struct tivs_dev *tdev = tf->tdev;
	struct eventfd_ctx *ctx = NULL, *old;
	struct tivs_vector *v;

	if (req->vector >= tdev->nvectors)
		return -EINVAL;
	if (req->fd >= 0) {
		ctx = eventfd_ctx_fdget(req->fd);
		if (IS_ERR(ctx))
			return PTR_ERR(ctx);
	} else if (req->fd != -1) {
		return -EINVAL;
	}
	v = &tdev->vectors[req->vector];
	spin_lock_irq(&tdev->irq_lock);
	old = v->trigger;
	v->trigger = ctx;
	v->owner = ctx ? tf : NULL;
	spin_unlock_irq(&tdev->irq_lock);
	if (old)
		eventfd_ctx_put(old);
	return 0;
}

/*
 * User memory is copied before map_lock is taken and after it is
 * dropped: a page fault under map_lock would take mmap_lock, the reverse
 * of the fault path's order.
 */
static long tivs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct tivs_file *tf = file->private_data;
	struct tivs_dev *tdev = tf->tdev;
	void __user *uarg = (void __user *)arg;
	union {
		struct tochain_ivshmem_info info;
		struct tochain_ivshmem_irqfd irqfd;
		struct tochain_ivshmem_doorbell bell;
		struct tochain_ivshmem_claim claim;
	} u;
	long ret;

	switch (cmd) {
	case TOCHAIN_IVSHMEM_IOC_SET_IRQFD:
		if (copy_from_user(&u.irqfd, uarg, sizeof(u.irqfd)))
			return -EFAULT;
		break;
	case TOCHAIN_IVSHMEM_IOC_DOORBELL:
		if (copy_from_user(&u.bell, uarg, sizeof(u.bell)))
			return -EFAULT;
		break;
	case TOCHAIN_IVSHMEM_IOC_INFO:
	case TOCHAIN_IVSHMEM_IOC_RESCAN:
	case TOCHAIN_IVSHMEM_IOC_CLAIM:
	case TOCHAIN_IVSHMEM_IOC_CLAIM_INFO:
		break;
	default:
		return -ENOTTY;
	}

	down_read(&tdev->map_lock);
	if (tdev->gone) {
		up_read(&tdev->map_lock);
		return -ENODEV;
	}
	switch (cmd) {
	case TOCHAIN_IVSHMEM_IOC_INFO:
		tivs_get_info(tdev, &u.info);
		ret = 0;
		break;
	case TOCHAIN_IVSHMEM_IOC_SET_IRQFD:
		ret = tivs_set_irqfd(tf, &u.irqfd);
		break;
	case TOCHAIN_IVSHMEM_IOC_DOORBELL:
		/* without interrupts (ivshmem-plain) QEMU ignores the write */
		if (!tdev->nvectors) {
			ret = -EOPNOTSUPP;
			break;
		}
		writel(((u32)u.bell.peer << 16) | u.bell.vector,
		       tdev->regs + TIVS_REG_DOORBELL);
		ret = 0;
		break;
	case TOCHAIN_IVSHMEM_IOC_CLAIM:
		ret = tivs_claim(tf, &u.claim);
		break;
	case TOCHAIN_IVSHMEM_IOC_CLAIM_INFO:
		mutex_lock(&tdev->claim_lock);
		ret = tf->claimed ? 0 : -ENOENT;
		u.claim = tf->claim;
		mutex_unlock(&tdev->claim_lock);
		break;
	default:	/* TOCHAIN_IVSHMEM_IOC_RESCAN */
		ret = tivs_rescan(tdev);
		break;
	}
	up_read(&tdev->map_lock);

	if (!ret && cmd == TOCHAIN_IVSHMEM_IOC_INFO &&
	    copy_to_user(uarg, &u.info, sizeof(u.info)))
		ret = -EFAULT;
	if (!ret && (cmd == TOCHAIN_IVSHMEM_IOC_CLAIM || cmd == TOCHAIN_IVSHMEM_IOC_CLAIM_INFO) &&
	    copy_to_user(uarg, &u.claim, sizeof(u.claim)))
		ret = -EFAULT;	/* a CLAIM stays held by the file: CLAIM_INFO finds it */
	return ret;
}

/* Nothing to read; EPOLLHUP | EPOLLERR once the device is gone. */
static __poll_t tivs_poll(struct file *file, poll_table *wait)
{
	struct tivs_file *tf = file->private_data;
	struct tivs_dev *tdev = tf->tdev;

	poll_wait(file, &tdev->gone_wq, wait);
	return READ_ONCE(tdev->gone) ? EPOLLIN | EPOLLHUP | EPOLLERR : 0;
}

static const struct file_operations tivs_fops = {
	.owner = THIS_MODULE,
	.open = tivs_open,
	.release = tivs_release,
	.poll = tivs_poll,
	.mmap = tivs_mmap,
	.unlocked_ioctl = tivs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/*
 * A slot CLAIMED when the device is probed, by our own peer id (our
 * IVPosition, which the claim wrote), belongs to no open file: it is
 * left from an earlier boot of this guest (or an earlier binding).
 * Release it.  A slot another peer claimed is not ours: the region may
 * be the VM's own region granted to a VNF guest (tochaind/td_grant.h),
 * whose probe must leave the VM's claims alone.  ivshmem-plain devices
 * all read IVPosition -1, so a VNF guest granted the region of a VM in
 * poll mode cannot tell the VM's claims from its own: that case still
 * releases them (tochaind grants regions of doorbell VMs safely).
 * No file exists yet, so map_lock is not needed.
 */
static void tivs_release_stale(struct tivs_dev *tdev)
{
	u32 i, self = readl(tdev->regs + TIVS_REG_IVPOSITION);
	struct tcr_link *l = tivs_link(tdev);

	if (smp_load_acquire(&l->magic) != TCR_LINK_MAGIC)
		return;
	mutex_lock(&tdev->claim_lock);
	for (i = 0; i < TCR_LINK_SLOTS; i++)
		if (READ_ONCE(l->slot[i].guest_peer) == self)
			tivs_release_slot(tdev, i, 0, false);
	mutex_unlock(&tdev->claim_lock);
}

static int tivs_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct tivs_dev *tdev;
	char name[TCR_NAME_MAX];
	int ret;

	tdev = kzalloc(sizeof(*tdev), GFP_KERNEL);
	if (!tdev)
		return -ENOMEM;
	kref_init(&tdev->ref);
	tdev->pdev = pdev;
	init_rwsem(&tdev->map_lock);
	mutex_init(&tdev->reg_lock);
	mutex_init(&tdev->files_lock);
	INIT_LIST_HEAD(&tdev->files);
	mutex_init(&tdev->claim_lock);
	init_waitqueue_head(&tdev->gone_wq);
	tdev->claim_seq = get_random_u32();
	spin_lock_init(&tdev->irq_lock);
	INIT_DELAYED_WORK(&tdev->rescan_work, tivs_rescan_work);
	tdev->index = ida_alloc(&tivs_ida, GFP_KERNEL);
	if (tdev->index < 0) {
		ret = tdev->index;
		kfree(tdev);
		return ret;
	}
	/* First devres action, so it runs last: the binding's reference. */
	ret = devm_add_action_or_reset(&pdev->dev, tivs_put_action, tdev);
	if (ret)
		return ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(TIVS_BAR_REGS), TIVS_DRV_NAME);
	if (ret)
		return ret;
	tdev->regs = pcim_iomap_table(pdev)[TIVS_BAR_REGS];
	/* managed: pcim_enable_device() makes requested regions devres */
	ret = pci_request_region(pdev, TIVS_BAR_SHM, TIVS_DRV_NAME);
	if (ret)
		return ret;
	tdev->shm_start = pci_resource_start(pdev, TIVS_BAR_SHM);
	tdev->shm_len = pci_resource_len(pdev, TIVS_BAR_SHM);
	if (tdev->shm_len < sizeof(struct tcr_header) ||
	    !PAGE_ALIGNED(tdev->shm_start) || !PAGE_ALIGNED(tdev->shm_len)) {
		dev_err(&pdev->dev, "BAR2 unusable (%pa, %pa bytes)\n",
			&tdev->shm_start, &tdev->shm_len);
		return -ENODEV;
	}
	/*
	 * All of BAR2, write-back, although the driver itself reads only the
	 * header: on x86 this reserves the range's memory type, which is
	 * what vmf_insert_pfn() then gives the user mappings (an untracked
	 * range would come out uncached).  x86 grants WB only where the
	 * MTRRs say WB: a BAR in the 32-bit PCI hole (SeaBIOS makes that
	 * UC) ends up UC-; see README.md.
	 */
	tdev->shm = devm_memremap(&pdev->dev, tdev->shm_start, tdev->shm_len,
				  MEMREMAP_WB);
	if (IS_ERR(tdev->shm))
		return PTR_ERR(tdev->shm);

	pci_set_master(pdev);
	ret = tivs_setup_irqs(tdev);
	if (ret)
		return ret;
	pci_set_drvdata(pdev, tdev);
	tivs_release_stale(tdev);

	mutex_lock(&tdev->reg_lock);
	if (tivs_read_name(tdev, name)) {
		ret = tivs_misc_register(tdev, name);
		tdev->named = !ret;
	}
	if (!tdev->named) {
		snprintf(name, sizeof(name), "ivshmem%d", tdev->index);
		ret = tivs_misc_register(tdev, name);
	}
	mutex_unlock(&tdev->reg_lock);
	if (ret)
		return ret;
	if (!tdev->named)
		schedule_delayed_work(&tdev->rescan_work, TIVS_RESCAN_DELAY);

	dev_info(&pdev->dev, "/dev/%s: %pa bytes, %u vector(s) (%s), IVPosition %d\n",
		 tdev->node_name, &tdev->shm_len, tdev->nvectors,
		 tdev->msix ? "MSI-X" : tdev->intx ? "INTx" : "none",
		 (s32)readl(tdev->regs + TIVS_REG_IVPOSITION));
	return 0;
}

static void tivs_remove(struct pci_dev *pdev)
{
	struct tivs_dev *tdev = pci_get_drvdata(pdev);
	struct tivs_file *tf;
	unsigned int i;

	down_write(&tdev->map_lock);
	tdev->gone = true;
	up_write(&tdev->map_lock);

	cancel_delayed_work_sync(&tdev->rescan_work);

	mutex_lock(&tdev->files_lock);
	list_for_each_entry(tf, &tdev->files, node)
		unmap_mapping_range(tf->mapping, 0, 0, 1);
	mutex_unlock(&tdev->files_lock);

	mutex_lock(&tdev->reg_lock);
	tivs_misc_deregister(tdev);
	mutex_unlock(&tdev->reg_lock);

	/* Wake whoever sleeps on a bound eventfd: its next ioctl says ENODEV. */
	spin_lock_irq(&tdev->irq_lock);
	for (i = 0; i < tdev->nvectors; i++)
		if (tdev->vectors[i].trigger)
			tivs_eventfd_signal(tdev->vectors[i].trigger);
	spin_unlock_irq(&tdev->irq_lock);
	wake_up_all(&tdev->gone_wq);

	if (tdev->intx)
		writel(0, tdev->regs + TIVS_REG_INTR_MASK);
	dev_info(&pdev->dev, "removed\n");
	/* IRQs, vectors, mappings and regions go with devres, then our ref. */
}

static const struct pci_device_id tivs_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },
	{ }
};
MODULE_DEVICE_TABLE(pci, tivs_ids);

static struct pci_driver tivs_driver = {
	.name = TIVS_DRV_NAME,
	.id_table = tivs_ids,
	.probe = tivs_probe,
	.remove = tivs_remove,
};
module_pci_driver(tivs_driver);

MODULE_DESCRIPTION("TOChain ivshmem region driver");
MODULE_AUTHOR("TOChain");
MODULE_LICENSE("GPL");
