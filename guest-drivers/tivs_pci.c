// SPDX-License-Identifier: GPL-2.0
/*
 * tochain_ivshmem: TOChain's guest driver for the QEMU ivshmem PCI device
 * (1af4:1110): probe and remove, the device's name from the region
 * header and its misc device, interrupts, and the rescan that renames a
 * device when its header changes (tivs.h has the rules).
 */
#include "tivs.h"

static void tivs_put_action(void *data)
{
	tivs_put(data);
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
	tdev->fops = &tivs_fops;
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


