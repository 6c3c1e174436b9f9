// SPDX-License-Identifier: MIT
/* Grants of VMs' regions to VNF domains; see td_grant.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "td_grant.h"
#include "td_inst.h"
#include "td_libvirt_ro.h"
#include "td_priv.h"
#include "tochain/util.h"

#define SHM_DIR "/dev/shm"
#define HASH_KEEP 29	/* characters of the name kept before the hash */

static bool grant_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

int td_grant_name(const char *fabric, const char *vm, const char *tag, enum td_grant_kind kind,
		  char *out, size_t len)
{
	char full[256];
	size_t n, i;
	bool plain = true;
	int w;

	if (!fabric || !vm || !tag || !fabric[0] || !vm[0] || !tag[0] || !out ||
	    len < TD_GRANT_NAME_SIZE ||
	    (kind != TD_GRANT_DATA && kind != TD_GRANT_OUT && kind != TD_GRANT_VNF))
		return -EINVAL;
	w = snprintf(full, sizeof(full), "%s-%s-%s-%c", fabric, vm, tag, (char)kind);
	if (w < 0 || (size_t)w >= sizeof(full))
		return -EINVAL;
	n = (size_t)w;
	for (i = 0; i < n; i++)
		if (!grant_char(full[i]) || (full[i] >= 'A' && full[i] <= 'Z'))
			plain = false;
	if (plain && n <= TD_LIBVIRT_GRANT_MAX) {
		memcpy(out, full, n + 1);
		return 0;
	}
	/* "<29 chars>-X<16 HEX>-k" = 29 + 2 + 16 + 2 = 49 > 48: keep 28 */
	for (i = 0; i < HASH_KEEP - 1 && i < n; i++)
		out[i] = grant_char(full[i]) && !(full[i] >= 'A' && full[i] <= 'Z') ? full[i] : '_';
	snprintf(out + i, len - i, "-X%016llX-%c", (unsigned long long)tu_fnv1a64(full, n), (char)kind);
	return 0;
}

bool td_grant_readonly(enum td_grant_kind kind)
{
	return kind != TD_GRANT_VNF;
}

uint64_t td_grant_pow2(uint64_t size)
{
	uint64_t p = TD_GRANT_MIN_SIZE;

	while (p < size) {
		if (p > UINT64_MAX / 2)
			return 0;
		p <<= 1;
	}
	return p;
}

int td_grant_grow(const char *path, uint64_t *size, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	uint64_t want;
	int rc = 0;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "region %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		snprintf(err, errlen, "region %s: not a regular file", path);
		goto out;
	}
	want = td_grant_pow2((uint64_t)st.st_size);
	if (!want || want > TD_REGION_SIZE_MAX) {
		rc = -EFBIG;
		snprintf(err, errlen, "region %s: %lld bytes, too large to grant", path,
			 (long long)st.st_size);
		goto out;
	}
	/* sparse growth: pages past the header's size are never touched */
	if ((uint64_t)st.st_size < want && ftruncate(fd, (off_t)want)) {
		rc = -errno;
		snprintf(err, errlen, "region %s: growing it to %llu bytes: %s", path,
			 (unsigned long long)want, strerror(errno));
		goto out;
	}
	*size = want;
out:
	close(fd);
	return rc;
}

int td_grant_check_shm(const char *dir, const char *shm, char *err, size_t errlen)
{
	struct stat a, b;

	if (stat(dir, &a)) {
		int rc = -errno;

		snprintf(err, errlen, "region directory %s: %s", dir, strerror(errno));
		return rc;
	}
	if (stat(shm, &b)) {
		int rc = -errno;

		snprintf(err, errlen, "%s: %s", shm, strerror(errno));
		return rc;
	}
	if (a.st_dev != b.st_dev) {
		snprintf(err, errlen, "the region directory %s is not on %s's filesystem: a VNF in "
			 "a libvirt domain needs its regions there (tochaind --region-dir)", dir, shm);
		return -EXDEV;
	}
	return 0;
}

int td_grant_set(const struct td_config *cfg, const struct td_vm *vm, const char *vnf,
		 const char *domain, struct td_grant out[3])
{
	int n = 0;

	memset(out, 0, 3 * sizeof(*out));
	out[n].kind = TD_GRANT_DATA;
	snprintf(out[n].path, sizeof(out[n].path), "%s", vm->region);
	if (td_grant_name(cfg->fabric_ns, vm->name, domain, TD_GRANT_DATA, out[n].name,
			  sizeof(out[n].name)))
		return -EINVAL;
	n++;
	out[n].kind = TD_GRANT_OUT;
	snprintf(out[n].path, sizeof(out[n].path), "%s.out", vm->region);
	if (!access(out[n].path, F_OK)) {
		if (td_grant_name(cfg->fabric_ns, vm->name, domain, TD_GRANT_OUT, out[n].name,
				  sizeof(out[n].name)))
			return -EINVAL;
		n++;
	}
	out[n].kind = TD_GRANT_VNF;
	td_inst_region(vm, vnf, out[n].path, sizeof(out[n].path));
	if (td_grant_name(cfg->fabric_ns, vm->name, vnf, TD_GRANT_VNF, out[n].name,
			  sizeof(out[n].name)))
		return -EINVAL;
	return n + 1;
}

/* Is /dev/shm's link of grant @name the file @path (same inode)? */
static bool link_is(const char *name, const char *path)
{
	char link_path[PATH_MAX];
	struct stat a, b;

	snprintf(link_path, sizeof(link_path), SHM_DIR "/" TD_LIBVIRT_GRANT_SHM_PREFIX "%s", name);
	return !stat(link_path, &a) && !stat(path, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * Is a plugged grant @g of @domain in the mode its kind wants: d and o
 * read-only, v writable (the VNF writes its verdicts and rings there)?
 */
static bool mode_is(struct td_libvirt *lv, const char *domain, const struct td_grant *g)
{
	char why[300];
	int ro = td_libvirt_grant_is_ro(lv, domain, g->name, why, sizeof(why));

	return td_grant_readonly(g->kind) ? ro == 1 : ro == 0;
}

/* Make grant @g of @domain current; *@made: it was plugged by this call. */
static int give_one(struct td_libvirt *lv, const char *domain, const struct td_grant *g,
		    bool *made, char *err, size_t errlen)
{
	uint64_t size;
	int st, rc;

	*made = false;
	rc = td_grant_grow(g->path, &size, err, errlen);
	if (rc)
		return rc;
	st = td_libvirt_grant_revoked(lv, domain, g->name, err, errlen);
	if (st == 0 || st == 1 || st == -ENOTSUP) {
		/*
		 * plugged: on the right file and in the right mode it stays,
		 * else it is replaced (a writable d or o of an older tochaind)
		 */
		if (link_is(g->name, g->path) && mode_is(lv, domain, g))
			return st == 1 ? td_libvirt_regrant(lv, domain, g->name, err, errlen) : 0;
		rc = td_libvirt_ungrant(lv, domain, g->name, err, errlen);
		if (rc == TD_LIBVIRT_UNGRANT_PENDING) {
			char why[400];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "grant %s of libvirt domain '%s' maps an older file "
				 "and is still plugged (%s): try again once the guest let it go",
				 g->name, domain, why);
			return -EBUSY;
		}
		if (rc)
			return rc;
	} else if (st != -ENODEV) {
		return st;
	}
	if (td_grant_readonly(g->kind))
		rc = td_libvirt_grant_ro(lv, domain, g->name, g->path, size, err, errlen);
	else
		rc = td_libvirt_grant(lv, domain, g->name, g->path, size, err, errlen);
	*made = rc == 0;
	return rc;
}

int td_grant_give(struct td_libvirt *lv, const struct td_config *cfg, const struct td_vm *vm,
		  const char *vnf, const char *domain, char *err, size_t errlen)
{
	struct td_grant g[3];
	bool made[3] = { false, false, false };
	int n = td_grant_set(cfg, vm, vnf, domain, g), rc = 0, i;

	if (n < 0) {
		snprintf(err, errlen, "vm %s, vnf %s: no valid grant names", vm->name, vnf);
		return n;
	}
	if (!lv) {
		snprintf(err, errlen, "no libvirt connection");
		return -ENOTCONN;
	}
	rc = td_grant_check_shm(cfg->region_dir, SHM_DIR, err, errlen);
	for (i = 0; !rc && i < n; i++)
		rc = give_one(lv, domain, &g[i], &made[i], err, errlen);
	if (!rc)
		return 0;
	/* nothing half-done: what this call plugged goes again */
	while (i-- > 0) {
		char ignore[256];

		if (made[i])
			td_libvirt_ungrant(lv, domain, g[i].name, ignore, sizeof(ignore));
	}
	return rc;
}

static void note(struct td_grant_log *log, const struct td_vm *vm, const char *vnf,
		 const char *domain, const char *grant, int rc, const char *text)
{
	struct td_grant_note *n;

	if (!log)
		return;
	n = &log->n[log->next++ % TD_GRANT_NOTES];
	memset(n, 0, sizeof(*n));
	snprintf(n->vnf, sizeof(n->vnf), "%s", vnf);
	snprintf(n->vm, sizeof(n->vm), "%s", vm->name);
	snprintf(n->domain, sizeof(n->domain), "%s", domain);
	snprintf(n->grant, sizeof(n->grant), "%s", grant);
	n->when = time(NULL);
	n->rc = rc;
	snprintf(n->text, sizeof(n->text), "%.690s", text);
}

/* Remember read-only grant @grant of @domain for td_grant_reap. */
static void reap_later(struct td_grant_log *log, const char *domain, const char *grant)
{
	unsigned int i, free_slot = TD_GRANT_NOTES;

	if (!log)
		return;
	for (i = 0; i < TD_GRANT_NOTES; i++) {
		if (!log->reap[i].grant[0]) {
			if (free_slot == TD_GRANT_NOTES)
				free_slot = i;
		} else if (!strcmp(log->reap[i].grant, grant) &&
			   !strcmp(log->reap[i].domain, domain)) {
			return;
		}
	}
	if (free_slot == TD_GRANT_NOTES)
		free_slot = log->next % TD_GRANT_NOTES;	/* full: best effort */
	snprintf(log->reap[free_slot].domain, sizeof(log->reap[free_slot].domain), "%s", domain);
	snprintf(log->reap[free_slot].grant, sizeof(log->reap[free_slot].grant), "%s", grant);
}

void td_grant_reap(struct td_libvirt *lv, struct td_grant_log *log)
{
	if (!lv || !log)
		return;
	for (unsigned int i = 0; i < TD_GRANT_NOTES; i++) {
		char why[300];

		if (!log->reap[i].grant[0])
			continue;
		/* linked again: granted anew, its give frees what is left */
		snprintf(why, sizeof(why), SHM_DIR "/" TD_LIBVIRT_GRANT_SHM_PREFIX "%s",
			 log->reap[i].grant);
		if (!access(why, F_OK) || td_libvirt_grant_ro_reap(lv, log->reap[i].domain, log->reap[i].grant, why,
					     sizeof(why)) != 1)
			log->reap[i].grant[0] = '\0';
	}
}

int td_grant_take(struct td_libvirt *lv, const struct td_config *cfg, const struct td_vm *vm,
		  const char *vnf, const char *domain, bool keep_data, struct td_grant_log *log,
		  char *err, size_t errlen)
{
	struct td_grant g[3];
	int n = td_grant_set(cfg, vm, vnf, domain, g), res = 0;
	char text[700];

	if (n < 0) {
		snprintf(err, errlen, "vm %s, vnf %s: no valid grant names", vm->name, vnf);
		return n;
	}
	/* R.out may be gone already (a TOE restart): its grant may not */
	if (n == 2) {
		g[2] = g[1];
		g[1].kind = TD_GRANT_OUT;
		snprintf(g[1].path, sizeof(g[1].path), "%s.out", vm->region);
		td_grant_name(cfg->fabric_ns, vm->name, domain, TD_GRANT_OUT, g[1].name,
			      sizeof(g[1].name));
		n = 3;
	}
	if (!lv) {
		snprintf(err, errlen, "no libvirt connection");
		return -ENOTCONN;
	}
	for (int i = n; i-- > 0;) {
		char why[400] = "";
		int rc;

		if (keep_data && g[i].kind != TD_GRANT_VNF)
			continue;
		/* a grant the domain does not hold is no news (shared d and o) */
		if (td_libvirt_grant_revoked(lv, domain, g[i].name, why, sizeof(why)) == -ENODEV)
			continue;
		why[0] = '\0';
		rc = td_libvirt_ungrant(lv, domain, g[i].name, why, sizeof(why));
		if (rc == 0)
			snprintf(text, sizeof(text), "vm %s: vnf %s: grant %s taken from libvirt domain "
				 "'%s': the guest has no access any more", vm->name, vnf, g[i].name,
				 domain);
		else if (rc == TD_LIBVIRT_UNGRANT_PENDING)
			snprintf(text, sizeof(text), "vm %s: vnf %s: grant %s of libvirt domain '%s': "
				 "REVOKE PENDING, this QEMU cannot revoke: the guest keeps access to "
				 "%s until it ejects the device (%s)", vm->name, vnf, g[i].name,
				 domain, g[i].path, why);
		else
			snprintf(text, sizeof(text), "vm %s: vnf %s: grant %s of libvirt domain '%s': "
				 "%s", vm->name, vnf, g[i].name, domain, why);
		td_log("%s", text);
		note(log, vm, vnf, domain, g[i].name, rc, text);
		if (td_grant_readonly(g[i].kind))
			reap_later(log, domain, g[i].name);
		if (rc < 0 && res >= 0) {
			snprintf(err, errlen, "%s", text);
			res = rc;
		} else if (rc == TD_LIBVIRT_UNGRANT_PENDING && res == 0) {
			snprintf(err, errlen, "%s", text);
			res = rc;
		}
	}
	return res;
}

void td_grant_state(struct td_libvirt *lv, const char *domain, const char *name, char *out,
		    size_t len)
{
	char err[300] = "";
	int st = lv ? td_libvirt_grant_revoked(lv, domain, name, err, sizeof(err)) : -ENOTCONN;

	if (st == 0)
		snprintf(out, len, "granted");
	else if (st == 1)
		snprintf(out, len, "revoked");
	else if (st == -ENOTSUP)
		snprintf(out, len, "granted (this QEMU cannot revoke it)");
	else if (st == -ENODEV)
		snprintf(out, len, "absent");
	else
		snprintf(out, len, "unknown: %s", err[0] ? err : strerror(-st));
}
