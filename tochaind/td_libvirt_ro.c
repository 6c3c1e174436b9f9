// SPDX-License-Identifier: MIT
/* Read-only grants to VNF domains; see td_libvirt_ro.h. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "td_libvirt_priv.h"
#include "td_libvirt_ro.h"

#define SHM_DIR "/dev/shm"
#define BACKEND_PREFIX TD_LIBVIRT_GRANT_SHM_PREFIX	/* backend id = link name */
#define PCI_SLOTS 32

static int fmt_ok(int n, size_t len)
{
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Names are checked (td_libvirt_grant_name_valid): nothing in them needs
 * JSON escaping. */
int td_libvirt_ro_backend_qmp(const char *name, uint64_t size, char *out, size_t len)
{
	if (!td_libvirt_grant_name_valid(name) || !td_libvirt_size_valid(size))
		return -EINVAL;
	return fmt_ok(snprintf(out, len,
			       "{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":"
			       "\"memory-backend-file\",\"id\":\"" BACKEND_PREFIX "%s\","
			       "\"mem-path\":\"" SHM_DIR "/" TD_LIBVIRT_GRANT_SHM_PREFIX "%s\","
			       "\"size\":%llu,\"share\":true,\"readonly\":true}}",
			       name, name, (unsigned long long)size), len);
}

int td_libvirt_ro_device_qmp(const char *name, unsigned int slot, char *out, size_t len)
{
	if (!td_libvirt_grant_name_valid(name) || slot == 0 || slot >= PCI_SLOTS)
		return -EINVAL;
	return fmt_ok(snprintf(out, len,
			       "{\"execute\":\"device_add\",\"arguments\":{\"driver\":"
			       "\"ivshmem-plain\",\"id\":\"" TD_LIBVIRT_GRANT_ALIAS_PREFIX "%s\","
			       "\"memdev\":\"" BACKEND_PREFIX "%s\",\"bus\":\"" TD_LIBVIRT_RO_BUS
			       "\",\"addr\":\"0x%x\"}}", name, name, slot), len);
}

int td_libvirt_ro_free_slot(const char *reply)
{
	json_t *root = reply ? json_loads(reply, 0, NULL) : NULL, *ret, *bus, *dev;
	bool used[PCI_SLOTS] = { false };
	bool found = false;
	size_t i, j;
	int rc = -EBADMSG;

	ret = json_object_get(root, "return");
	if (!json_is_array(ret))
		goto out;
	json_array_foreach(ret, i, bus) {
		json_t *devs = json_object_get(bus, "devices");

		if (!json_is_integer(json_object_get(bus, "bus")) || !json_is_array(devs))
			goto out;
		if (json_integer_value(json_object_get(bus, "bus")) != 0)
			continue;
		found = true;
		json_array_foreach(devs, j, dev) {
			json_t *s = json_object_get(dev, "slot");

			if (!json_is_integer(s) || json_integer_value(s) < 0 ||
			    json_integer_value(s) >= PCI_SLOTS)
				goto out;
			used[json_integer_value(s)] = true;
		}
	}
	if (!found)
		goto out;
	rc = -ENOSPC;
	for (int s = PCI_SLOTS - 1; s > 0; s--)
		if (!used[s]) {
			rc = s;
			break;
		}
out:
	json_decref(root);
	return rc;
}

/*
 * Run QMP @cmd; 0 with its "return" value in *@ret (owned by *@root,
 * which the caller frees), -ENODEV for QEMU's DeviceNotFound, -EIO for
 * another error (@err: QEMU's words), -EBADMSG.
 */
static int qmp_call(virDomainPtr dom, const char *domain, const char *cmd, json_t **root,
		    json_t **ret, char *err, size_t errlen)
{
	char *reply = NULL;
	const char *cls, *desc;
	json_t *e;
	int rc;

	*root = NULL;
	*ret = NULL;
	rc = td_lv_qmp(dom, domain, cmd, &reply, err, errlen);
	if (rc)
		return rc;
	*root = json_loads(reply, 0, NULL);
	free(reply);
	*ret = json_object_get(*root, "return");
	if (*ret)
		return 0;
	e = json_object_get(*root, "error");
	cls = json_string_value(json_object_get(e, "class"));
	desc = json_string_value(json_object_get(e, "desc"));
	if (!cls || !desc) {
		snprintf(err, errlen, "libvirt domain '%s': unexpected QMP reply", domain);
		return -EBADMSG;
	}
	snprintf(err, errlen, "libvirt domain '%s': QEMU: %s", domain, desc);
	return strcmp(cls, "DeviceNotFound") ? -EIO : -ENODEV;
}

/* qmp_call for a command whose answer does not matter. */
static int qmp_do(virDomainPtr dom, const char *domain, const char *cmd, char *err,
		  size_t errlen)
{
	json_t *root, *ret;
	int rc = qmp_call(dom, domain, cmd, &root, &ret, err, errlen);

	json_decref(root);
	return rc;
}

static int backend_del(virDomainPtr dom, const char *domain, const char *name, char *err,
		       size_t errlen)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "{\"execute\":\"object-del\",\"arguments\":{\"id\":\""
		 BACKEND_PREFIX "%s\"}}", name);
	return qmp_do(dom, domain, cmd, err, errlen);
}

/* 1 read-only, 0 writable, -ENODEV no such device, -errno. */
static int is_ro(virDomainPtr dom, const char *domain, const char *name, char *err,
		 size_t errlen)
{
	char cmd[320], mem[200];
	json_t *root, *ret;
	int rc;

	snprintf(cmd, sizeof(cmd), "{\"execute\":\"qom-get\",\"arguments\":{\"path\":"
		 "\"/machine/peripheral/" TD_LIBVIRT_GRANT_ALIAS_PREFIX "%s\","
		 "\"property\":\"memdev\"}}", name);
	rc = qmp_call(dom, domain, cmd, &root, &ret, err, errlen);
	if (!rc && (!json_is_string(ret) || json_string_length(ret) == 0 ||
		    json_string_length(ret) >= sizeof(mem) || strchr(json_string_value(ret), '"') ||
		    strchr(json_string_value(ret), '\\'))) {
		snprintf(err, errlen, "libvirt domain '%s': grant '%s' has no memory backend",
			 domain, name);
		rc = -EBADMSG;
	}
	if (rc) {
		json_decref(root);
		return rc;
	}
	snprintf(mem, sizeof(mem), "%s", json_string_value(ret));
	json_decref(root);
	/* libvirt's <shmem> backends are memory-backend-file too: ask */
	snprintf(cmd, sizeof(cmd), "{\"execute\":\"qom-get\",\"arguments\":{\"path\":\"%s\","
		 "\"property\":\"readonly\"}}", mem);
	rc = qmp_call(dom, domain, cmd, &root, &ret, err, errlen);
	if (!rc)
		rc = json_is_boolean(ret) ? json_is_true(ret) : -EBADMSG;
	else if (rc == -EIO)
		rc = 0;	/* a backend without the property (not a file): writable */
	json_decref(root);
	return rc;
}

int td_libvirt_grant_is_ro(struct td_libvirt *lv, const char *domain, const char *name,
			   char *err, size_t errlen)
{
	virDomainPtr dom;
	int rc;

	dom = td_lv_grant_domain(lv, domain, name, &rc, err, errlen);
	if (!dom)
		return rc;
	rc = is_ro(dom, domain, name, err, errlen);
	virDomainFree(dom);
	return rc;
}

int td_libvirt_grant_ro(struct td_libvirt *lv, const char *domain, const char *name,
			const char *region, uint64_t size, char *err, size_t errlen)
{
	char obj[512], dev[320], link_path[PATH_MAX], why[300] = "";
	json_t *root, *ret;
	virDomainPtr dom;
	int rc, slot = 0;

	if (td_libvirt_ro_backend_qmp(name, size, obj, sizeof(obj)))
		return td_lv_bad_grant(name, size, err, errlen);
	dom = td_lv_running(lv, domain, &rc, err, errlen);
	if (!dom)
		return rc;
	rc = td_lv_grant_qmp(dom, domain, name, true, false, why, sizeof(why));
	if (rc != -ENODEV) {
		if (rc == 0 || rc == 1 || rc == -ENOTSUP) {
			snprintf(err, errlen, "libvirt domain '%s' already has grant '%s'",
				 domain, name);
			rc = -EEXIST;
		} else {
			snprintf(err, errlen, "%s", why);
		}
		goto out_free;
	}
	/* the backend of an earlier grant whose device the guest ejected late */
	backend_del(dom, domain, name, why, sizeof(why));
	rc = td_lv_link_grant(dom, domain, name, region, link_path, sizeof(link_path), err, errlen);
	if (rc)
		goto out_free;
	rc = qmp_do(dom, domain, obj, err, errlen);
	if (rc) {
		rc = rc == -ENODEV ? -EIO : rc;
		goto out_unlink;
	}
	rc = qmp_call(dom, domain, "{\"execute\":\"query-pci\"}", &root, &ret, err, errlen);
	if (!rc) {
		char *s = json_dumps(root, JSON_COMPACT);

		slot = td_libvirt_ro_free_slot(s);
		free(s);
		if (slot == -ENOSPC)
			snprintf(err, errlen, "libvirt domain '%s': no free slot on PCI bus 0 for "
				 "read-only grant '%s'", domain, name);
		else if (slot < 0)
			snprintf(err, errlen, "libvirt domain '%s': unexpected query-pci reply",
				 domain);
		rc = slot < 0 ? slot : 0;
	}
	json_decref(root);
	if (rc)
		goto out_backend;
	td_libvirt_ro_device_qmp(name, (unsigned int)slot, dev, sizeof(dev));
	rc = qmp_do(dom, domain, dev, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "%s (plugging read-only grant '%s' into slot %d of "
			 TD_LIBVIRT_RO_BUS ": read-only grants need a 'pc' machine)", why, name,
			 slot);
		rc = -EIO;
		goto out_backend;
	}
	/* what the guest gets must be what this file promises: check it */
	rc = is_ro(dom, domain, name, why, sizeof(why));
	if (rc != 1) {
		snprintf(err, errlen, "libvirt domain '%s': grant '%s' is not read-only after "
			 "plugging (%s)", domain, name, rc < 0 ? why : "readonly is false");
		td_lv_ro_unplug(dom, domain, name, why, sizeof(why));
		rc = -EIO;
		goto out_unlink;
	}
	virDomainFree(dom);
	return 0;

out_backend:
	backend_del(dom, domain, name, why, sizeof(why));
out_unlink:
	unlink(link_path);
out_free:
	virDomainFree(dom);
	return rc;
}

static void nap_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int td_lv_ro_unplug(virDomainPtr dom, const char *domain, const char *name, char *err,
		    size_t errlen)
{
	char cmd[200], why[300];
	int rc;

	snprintf(cmd, sizeof(cmd), "{\"execute\":\"device_del\",\"arguments\":{\"id\":\""
		 TD_LIBVIRT_GRANT_ALIAS_PREFIX "%s\"}}", name);
	rc = qmp_do(dom, domain, cmd, why, sizeof(why));
	if (rc && rc != -ENODEV) {
		/* QEMU says an unplug is already pending: that is fine */
		if (!strstr(why, "process of unplug")) {
			snprintf(err, errlen, "unplugging read-only grant '%s': %s", name, why);
			return rc;
		}
	}
	/* the backend goes once the guest ejected the device (it is in use until then) */
	for (int waited = 0;; waited += 100) {
		if (!backend_del(dom, domain, name, why, sizeof(why)))
			return 0;
		if (td_lv_grant_qmp(dom, domain, name, true, false, why, sizeof(why)) == -ENODEV) {
			/* device gone, backend not found: nothing left */
			if (backend_del(dom, domain, name, why, sizeof(why)) == -EIO &&
			    !strstr(why, "in use"))
				return 0;
		}
		if (waited >= TD_LIBVIRT_RO_UNPLUG_MS)
			break;
		nap_ms(100);
	}
	snprintf(err, errlen, "read-only grant '%s' of libvirt domain '%s' is still plugged "
		 "(the guest has not ejected it)", name, domain);
	return 1;
}

void td_lv_ro_reap(virDomainPtr dom, const char *domain, const char *name)
{
	char why[300];

	backend_del(dom, domain, name, why, sizeof(why));
}

int td_libvirt_grant_ro_reap(struct td_libvirt *lv, const char *domain, const char *name,
			     char *err, size_t errlen)
{
	virDomainPtr dom;
	int rc;

	dom = td_lv_grant_domain(lv, domain, name, &rc, err, errlen);
	if (!dom)
		return rc == -ENOENT || rc == -ESRCH ? 0 : rc;
	rc = td_lv_grant_qmp(dom, domain, name, true, false, err, errlen);
	if (rc == -ENODEV) {
		rc = backend_del(dom, domain, name, err, errlen);
		/* gone already ("not found"), or freed now; "in use": later */
		rc = rc && strstr(err, "in use") ? 1 : 0;
	} else {
		rc = rc == -EIO ? -EIO : 1;	/* still plugged */
	}
	virDomainFree(dom);
	return rc;
}
