// SPDX-License-Identifier: MIT
/* The guest users' access to a stand-in VM's region (toe_perm.h). */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toe_perm.h"

bool toe_perm_mode_valid(unsigned mode)
{
	return !(mode & ~0666u) && (mode & 0600u) == 0600u;
}

static int apply_one(const char *path, unsigned mode, long gid)
{
	if (gid >= 0 && lchown(path, (uid_t)-1, (gid_t)gid))
		return -errno;
	/* chmod after chown: a chown may clear bits */
	if (mode && chmod(path, (mode_t)mode))
		return -errno;
	return 0;
}

int toe_perm_apply(const struct toe_params *p, const char *sock_path)
{
	int err;

	if (!p->guest_mode && p->guest_gid < 0)
		return 0;
	if (p->guest_mode && !toe_perm_mode_valid(p->guest_mode))
		return -EINVAL;
	err = apply_one(p->region_path, p->guest_mode, p->guest_gid);
	if (!err)
		err = apply_one(sock_path, p->guest_mode, p->guest_gid);
	return err;
}
