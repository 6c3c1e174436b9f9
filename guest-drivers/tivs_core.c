// SPDX-License-Identifier: GPL-2.0
/*
 * tochain_ivshmem: the device's reference count and the writes into the
 * VM link's claim table that both the file side and probe make (tivs.h
 * has the lifetime, claim and lock rules).
 */
#include "tivs.h"

DEFINE_IDA(tivs_ida);

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

void tivs_put(struct tivs_dev *tdev)
{
	kref_put(&tdev->ref, tivs_free);
}

struct tcr_link *tivs_link(struct tivs_dev *tdev)
{
	return &((struct tcr_header *)tdev->shm)->link;
}

/* Ring the link on @vector, if this device has interrupts.  map_lock held. */
void tivs_ring_host(struct tivs_dev *tdev, u32 peer, u32 vector)
{
	if (tdev->nvectors && peer <= 0xffff && vector <= 0xffff)
		writel((peer << 16) | vector, tdev->regs + TIVS_REG_DOORBELL);
}

/* Release slot @i if it still carries @cookie.  map_lock and claim_lock held. */
void tivs_release_slot(struct tivs_dev *tdev, u32 i, u32 cookie, bool check_cookie)
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

