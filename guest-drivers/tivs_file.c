// SPDX-License-Identifier: GPL-2.0
/*
 * tochain_ivshmem: the character device /dev/tochain/<name>: claims,
 * mmap of BAR2, the ioctls, poll, and what the last close releases
 * (tivs.h has the lifetime, hot-unplug, claim and lock rules).
 */
#include "tivs.h"

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

const struct file_operations tivs_fops = {
	.owner = THIS_MODULE,
	.open = tivs_open,
	.release = tivs_release,
	.poll = tivs_poll,
	.mmap = tivs_mmap,
	.unlocked_ioctl = tivs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};
