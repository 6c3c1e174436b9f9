// SPDX-License-Identifier: GPL-2.0
/*
 * tochain_ivshmem: a device's name and its node /dev/tochain/<name>: the
 * name copied out of the region header, the misc device registered under
 * it, and the rescan that moves the node when the header changes (at
 * probe, from a delayed work while unnamed, and on IOC_RESCAN).  The
 * node's file operations come from tdev->fops, set by probe, so that this
 * file does not depend on tivs_file.c (tivs.h has the lock rules).
 */
#include "tivs.h"

/* Registered devices, so that two never claim one name; nests in reg_lock. */
static DEFINE_MUTEX(tivs_names_lock);
static LIST_HEAD(tivs_names);

/*
 * The nodes' mode.  Every user of the guest may use the runtime by
 * default, as every user may open a kernel socket; the region is then one
 * trust domain for all of them (README.md "Device nodes").  0600 or 0660
 * (with a udev GROUP=) restricts it.
 */
static ushort node_mode = 0666;
module_param(node_mode, ushort, 0444);
MODULE_PARM_DESC(node_mode, "mode of /dev/tochain/* (default 0666; rw bits only)");

/*
 * Copy the region name out of BAR2 if the header is valid: magic,
 * version and state READY (loaded with acquire, pairing with the host's
 * store-release of state), and a name of [a-z0-9_.-], NUL-terminated,
 * that is a usable path component.
 */
bool tivs_read_name(struct tivs_dev *tdev, char *name)
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


/*
 * Register the misc device under @name; caller holds reg_lock.  -EEXIST
 * if another of our devices has the name (checked here rather than left
 * to sysfs, which would complain with a stack dump).
 */
int tivs_misc_register(struct tivs_dev *tdev, const char *name)
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
	tdev->misc.mode = node_mode & 0666;
	tdev->misc.fops = tdev->fops;
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

void tivs_misc_deregister(struct tivs_dev *tdev)
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
int tivs_rescan(struct tivs_dev *tdev)
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

void tivs_rescan_work(struct work_struct *work)
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
