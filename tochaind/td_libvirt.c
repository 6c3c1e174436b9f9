// SPDX-License-Identifier: MIT
/* tochaind's libvirt backend; see td_libvirt.h. */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "td_libvirt.h"

#define SHM_DIR "/dev/shm"

struct td_libvirt {
	char *uri;		/* NULL: libvirt's default for root, qemu:///system */
	virConnectPtr conn;	/* NULL until first use or after it died */
};

/* libvirt prints every error on stderr by default; we report our own. */
static void quiet(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

struct td_libvirt *td_libvirt_create(const char *uri)
{
	struct td_libvirt *lv = calloc(1, sizeof(*lv));

	if (!lv)
		return NULL;
	if (uri && !(lv->uri = strdup(uri))) {
		free(lv);
		return NULL;
	}
	virSetErrorFunc(NULL, quiet);
	return lv;
}

void td_libvirt_destroy(struct td_libvirt *lv)
{
	if (!lv)
		return;
	if (lv->conn)
		virConnectClose(lv->conn);
	free(lv->uri);
	free(lv);
}

static const char *lv_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

static virConnectPtr lv_conn(struct td_libvirt *lv, char *err, size_t errlen)
{
	if (lv->conn && virConnectIsAlive(lv->conn) == 1)
		return lv->conn;
	if (lv->conn) {
		virConnectClose(lv->conn);
		lv->conn = NULL;
	}
	lv->conn = virConnectOpen(lv->uri ? lv->uri : "qemu:///system");
	if (!lv->conn)
		snprintf(err, errlen, "cannot connect to libvirt at %s: %s",
			 lv->uri ? lv->uri : "qemu:///system", lv_error());
	return lv->conn;
}

static virDomainPtr lv_domain(struct td_libvirt *lv, const char *name, char *err, size_t errlen)
{
	virConnectPtr c = lv_conn(lv, err, errlen);
	virDomainPtr dom;

	if (!c)
		return NULL;
	dom = virDomainLookupByName(c, name);
	if (!dom)
		snprintf(err, errlen, "libvirt domain '%s': %s", name, lv_error());
	return dom;
}

bool td_libvirt_size_valid(uint64_t size)
{
	return size >= (1ull << 20) && !(size & (size - 1));
}

void td_libvirt_shm_name(const char *fabric_ns, const char *vm, char *out, size_t len)
{
	snprintf(out, len, "tochain-%s-%s", fabric_ns, vm);
}

int td_libvirt_shmem_xml(const char *shm_name, uint64_t size, char *out, size_t len)
{
	int n;

	if (!td_libvirt_size_valid(size))
		return -EINVAL;
	n = snprintf(out, len,
		     "<shmem name='%s'><model type='ivshmem-plain'/>"
		     "<size unit='M'>%llu</size></shmem>",
		     shm_name, (unsigned long long)(size >> 20));
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* "+995" or "995" (libvirt writes "+N" for numeric ids) */
static int parse_id(const char *s, const char *end, unsigned long *out)
{
	char buf[16], *e;
	size_t n = (size_t)(end - s);

	if (*s == '+') {
		s++;
		n--;
	}
	if (n == 0 || n >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoul(buf, &e, 10);
	return *e || errno || *out > 0x7fffffff ? -EINVAL : 0;
}

int td_libvirt_dac_owner(const char *xml, uid_t *uid, gid_t *gid)
{
	const char *p = xml;

	/* the domain XML comes from libvirtd: a plain scan is enough here */
	while ((p = strstr(p, "<seclabel"))) {
		const char *tag_end = strchr(p, '>'), *close = strstr(p, "</seclabel>");
		const char *l, *colon, *le;
		unsigned long u, g;

		if (!tag_end)
			return -ENOENT;
		if (tag_end[-1] == '/' || !close || !memmem(p, (size_t)(tag_end - p), "model='dac'", 11)) {
			p = tag_end;
			continue;
		}
		l = strstr(tag_end, "<label>");
		if (!l || l > close)
			return -ENOENT;
		l += 7;
		le = strstr(l, "</label>");
		colon = memchr(l, ':', le ? (size_t)(le - l) : 0);
		if (!le || !colon || parse_id(l, colon, &u) || parse_id(colon + 1, le, &g))
			return -ENOENT;
		*uid = (uid_t)u;
		*gid = (gid_t)g;
		return 0;
	}
	return -ENOENT;
}

int td_libvirt_parse_vcpus(const char *reply, pid_t *tids, int max)
{
	json_t *root = json_loads(reply, 0, NULL), *ret, *cpu;
	size_t i;
	int n = 0;

	ret = json_object_get(root, "return");
	if (!json_is_array(ret)) {
		json_decref(root);
		return -EBADMSG;
	}
	json_array_foreach(ret, i, cpu) {
		json_t *t = json_object_get(cpu, "thread-id");

		if (!json_is_integer(t) || json_integer_value(t) <= 0 ||
		    json_integer_value(t) > 4194304 || n >= max) {
			json_decref(root);
			return -EBADMSG;
		}
		tids[n++] = (pid_t)json_integer_value(t);
	}
	json_decref(root);
	return n;
}

/* Which of live and config a device change should touch, or -1 on error. */
static int affect_flags(virDomainPtr dom)
{
	int active = virDomainIsActive(dom), persistent = virDomainIsPersistent(dom);
	int f = 0;

	if (active < 0 || persistent < 0)
		return -1;
	if (active)
		f |= VIR_DOMAIN_AFFECT_LIVE;
	if (persistent)
		f |= VIR_DOMAIN_AFFECT_CONFIG;
	return f;
}

/* The DAC owner of the domain's QEMU: the live label, else the configured one. */
static int domain_owner(virDomainPtr dom, uid_t *uid, gid_t *gid)
{
	char *xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_SECURE);
	int rc;

	if (!xml)
		return -EIO;
	rc = td_libvirt_dac_owner(xml, uid, gid);
	free(xml);
	return rc;
}

int td_libvirt_attach(struct td_libvirt *lv, const struct td_vm *vm, const char *shm_name,
		      char *err, size_t errlen)
{
	char link_path[PATH_MAX], xml[512];
	virDomainPtr dom;
	uid_t uid = 0;
	gid_t gid = 0;
	int flags, rc;

	rc = td_libvirt_shmem_xml(shm_name, vm->region_size, xml, sizeof(xml));
	if (rc) {
		snprintf(err, errlen, "region size %llu is not a power of two of at least 1M",
			 (unsigned long long)vm->region_size);
		return rc;
	}
	dom = lv_domain(lv, vm->domain, err, errlen);
	if (!dom)
		return -ENOENT;
	flags = affect_flags(dom);
	if (flags <= 0) {
		snprintf(err, errlen, "libvirt domain '%s': neither running nor defined: %s",
			 vm->domain, flags < 0 ? lv_error() : "transient and shut off");
		rc = -ESRCH;
		goto out_free;
	}
	snprintf(link_path, sizeof(link_path), "%s/%s", SHM_DIR, shm_name);
	unlink(link_path);	/* a stale link of an earlier run */
	if (link(vm->region, link_path)) {
		rc = -errno;
		snprintf(err, errlen, "cannot link %s as %s: %s%s", vm->region, link_path,
			 strerror(errno), errno == EXDEV ?
			 " (with --domain the region directory must be on /dev/shm)" : "");
		goto out_free;
	}
	/*
	 * Not running: the dynamic label is not assigned yet; libvirt's
	 * packaged default user then.  Root's QEMU (label +0:+0) needs none.
	 */
	if (domain_owner(dom, &uid, &gid)) {
		struct passwd *pw = getpwnam("libvirt-qemu");

		uid = pw ? pw->pw_uid : 0;
		gid = pw ? pw->pw_gid : 0;
	}
	if (chown(vm->region, uid, gid)) {
		rc = -errno;
		snprintf(err, errlen, "cannot give %s to uid %u: %s", vm->region,
			 (unsigned int)uid, strerror(errno));
		goto out_unlink;
	}
	if (virDomainAttachDeviceFlags(dom, xml, (unsigned int)flags)) {
		snprintf(err, errlen, "libvirt domain '%s': attaching the region: %s",
			 vm->domain, lv_error());
		rc = -EIO;
		goto out_unlink;
	}
	virDomainFree(dom);
	return 0;

out_unlink:
	unlink(link_path);
out_free:
	virDomainFree(dom);
	return rc;
}

int td_libvirt_detach(struct td_libvirt *lv, const struct td_vm *vm, const char *shm_name,
		      char *err, size_t errlen)
{
	char link_path[PATH_MAX], xml[512];
	virDomainPtr dom;
	int rc = 0, flags;

	snprintf(link_path, sizeof(link_path), "%s/%s", SHM_DIR, shm_name);
	if (td_libvirt_shmem_xml(shm_name, vm->region_size, xml, sizeof(xml)))
		goto out_unlink;
	dom = lv_domain(lv, vm->domain, err, errlen);
	if (!dom) {
		virErrorPtr e = virGetLastError();

		/* a domain that is gone holds no device */
		if (!e || e->code != VIR_ERR_NO_DOMAIN)
			rc = -EIO;
		goto out_unlink;
	}
	flags = affect_flags(dom);
	/* the live device may already be gone (guest unplug, restart): try each */
	if (flags > 0 && (flags & VIR_DOMAIN_AFFECT_LIVE) &&
	    virDomainDetachDeviceFlags(dom, xml, VIR_DOMAIN_AFFECT_LIVE)) {
		virErrorPtr e = virGetLastError();

		if (!e || e->code != VIR_ERR_DEVICE_MISSING) {
			snprintf(err, errlen, "libvirt domain '%s': detaching the region: %s",
				 vm->domain, lv_error());
			rc = -EIO;
		}
	}
	if (flags > 0 && (flags & VIR_DOMAIN_AFFECT_CONFIG) &&
	    virDomainDetachDeviceFlags(dom, xml, VIR_DOMAIN_AFFECT_CONFIG)) {
		virErrorPtr e = virGetLastError();

		if ((!e || e->code != VIR_ERR_DEVICE_MISSING) && !rc) {
			snprintf(err, errlen, "libvirt domain '%s': removing the region from "
				 "its configuration: %s", vm->domain, lv_error());
			rc = -EIO;
		}
	}
	virDomainFree(dom);
out_unlink:
	/* QEMU keeps its own mapping until the guest lets the device go */
	unlink(link_path);
	return rc;
}

int td_libvirt_vcpu_tids(struct td_libvirt *lv, const char *domain, pid_t *tids, int max,
			 char *err, size_t errlen)
{
	virDomainPtr dom = lv_domain(lv, domain, err, errlen);
	char *reply = NULL;
	int n;

	if (!dom)
		return -ENOENT;
	if (virDomainIsActive(dom) != 1) {
		snprintf(err, errlen, "libvirt domain '%s' is not running", domain);
		virDomainFree(dom);
		return -ESRCH;
	}
	/* read-only QMP query; libvirt marks the domain tainted (custom-monitor) */
	if (virDomainQemuMonitorCommand(dom, "{\"execute\":\"query-cpus-fast\"}", &reply, 0)) {
		snprintf(err, errlen, "libvirt domain '%s': query-cpus-fast: %s", domain,
			 lv_error());
		virDomainFree(dom);
		return -EIO;
	}
	n = td_libvirt_parse_vcpus(reply, tids, max);
	if (n < 0)
		snprintf(err, errlen, "libvirt domain '%s': unexpected query-cpus-fast reply",
			 domain);
	free(reply);
	virDomainFree(dom);
	return n;
}
