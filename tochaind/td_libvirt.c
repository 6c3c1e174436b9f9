// SPDX-License-Identifier: MIT
/* tochaind's libvirt backend; see td_libvirt.h. */
#include <errno.h>
#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "td_libvirt.h"
#include "td_libvirt_priv.h"
#include "td_link.h"

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

const char *td_lv_error(void)
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
			 lv->uri ? lv->uri : "qemu:///system", td_lv_error());
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
		snprintf(err, errlen, "libvirt domain '%s': %s", name, td_lv_error());
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

int td_libvirt_shmem_doorbell_xml(const char *shm_name, const char *socket, unsigned int vectors,
				  char *out, size_t len)
{
	int n;

	if (!socket || socket[0] != '/' || strpbrk(socket, "'\"<>&") || !vectors || vectors > 64)
		return -EINVAL;
	n = snprintf(out, len,
		     "<shmem name='%s'><model type='ivshmem-doorbell'/><server path='%s'/>"
		     "<msi vectors='%u' ioeventfd='on'/></shmem>", shm_name, socket, vectors);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* @vm's <shmem> device: plain, or doorbell with its link as the server. */
static int vm_shmem_xml(const struct td_vm *vm, const char *shm_name, char *out, size_t len)
{
	char sock[PATH_MAX + 8];

	if (vm->wait != TD_WAIT_DOORBELL)
		return td_libvirt_shmem_xml(shm_name, vm->region_size, out, len);
	if (!td_libvirt_size_valid(vm->region_size))
		return -EINVAL;
	td_link_socket(vm, sock, sizeof(sock));
	return td_libvirt_shmem_doorbell_xml(shm_name, sock, TD_LINK_SLOTS, out, len);
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
	char link_path[PATH_MAX], xml[PATH_MAX + 512], sock[PATH_MAX + 8];
	virDomainPtr dom;
	uid_t uid = 0;
	gid_t gid = 0;
	int flags, rc;

	rc = vm_shmem_xml(vm, shm_name, xml, sizeof(xml));
	if (rc) {
		snprintf(err, errlen, "region size %llu is not a power of two of at least 1M, "
			 "or the region path %s has a character XML needs escaped",
			 (unsigned long long)vm->region_size, vm->region);
		return rc;
	}
	dom = lv_domain(lv, vm->domain, err, errlen);
	if (!dom)
		return -ENOENT;
	flags = affect_flags(dom);
	if (flags <= 0) {
		snprintf(err, errlen, "libvirt domain '%s': neither running nor defined: %s",
			 vm->domain, flags < 0 ? td_lv_error() : "transient and shut off");
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
	/* doorbell: QEMU connects to the link's socket as that user too */
	td_link_socket(vm, sock, sizeof(sock));
	if (vm->wait == TD_WAIT_DOORBELL && (chown(sock, uid, gid) || chmod(sock, 0600))) {
		rc = -errno;
		snprintf(err, errlen, "cannot give %s to uid %u: %s", sock, (unsigned int)uid,
			 strerror(errno));
		goto out_unlink;
	}
	if (virDomainAttachDeviceFlags(dom, xml, (unsigned int)flags)) {
		snprintf(err, errlen, "libvirt domain '%s': attaching the region: %s",
			 vm->domain, td_lv_error());
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
	char link_path[PATH_MAX], xml[PATH_MAX + 512];
	virDomainPtr dom;
	int rc = 0, flags;

	snprintf(link_path, sizeof(link_path), "%s/%s", SHM_DIR, shm_name);
	if (vm_shmem_xml(vm, shm_name, xml, sizeof(xml)))
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
				 vm->domain, td_lv_error());
			rc = -EIO;
		}
	}
	if (flags > 0 && (flags & VIR_DOMAIN_AFFECT_CONFIG) &&
	    virDomainDetachDeviceFlags(dom, xml, VIR_DOMAIN_AFFECT_CONFIG)) {
		virErrorPtr e = virGetLastError();

		if ((!e || e->code != VIR_ERR_DEVICE_MISSING) && !rc) {
			snprintf(err, errlen, "libvirt domain '%s': removing the region from "
				 "its configuration: %s", vm->domain, td_lv_error());
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
			 td_lv_error());
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

int td_libvirt_qemu_pid(struct td_libvirt *lv, const char *domain, pid_t *pid, char *err,
			size_t errlen)
{
	pid_t tids[TD_LIBVIRT_MAX_VCPUS];
	char path[64], line[128];
	long tgid = 0;
	FILE *f;
	int n = td_libvirt_vcpu_tids(lv, domain, tids, TD_LIBVIRT_MAX_VCPUS, err, errlen);

	if (n < 0)
		return n;
	if (n == 0) {
		snprintf(err, errlen, "libvirt domain '%s': QEMU lists no vCPU thread", domain);
		return -EIO;
	}
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tids[0]);
	f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "libvirt domain '%s': vCPU thread %d: %s", domain,
			 (int)tids[0], strerror(errno));
		return -ESRCH;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	if (tgid <= 0 || !td_libvirt_qemu_alive((pid_t)tgid, domain)) {
		snprintf(err, errlen, "libvirt domain '%s': cannot find its QEMU process", domain);
		return -ESRCH;
	}
	*pid = (pid_t)tgid;
	return 0;
}

bool td_libvirt_qemu_alive(pid_t pid, const char *domain)
{
	char path[64], cmd[16384], want[TD_DOMAIN_MAX + 16];
	size_t wl;
	ssize_t n;
	FILE *f;

	if (pid <= 0 || !domain || !domain[0])
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = (ssize_t)fread(cmd, 1, sizeof(cmd) - 1, f);
	fclose(f);
	if (n <= 0)	/* a zombie has no command line */
		return false;
	cmd[n] = '\0';
	/* libvirt: "-name" "guest=DOMAIN,debug-threads=on" (or "guest=DOMAIN") */
	wl = (size_t)snprintf(want, sizeof(want), "guest=%s", domain);
	for (ssize_t i = 0; i + (ssize_t)wl <= n; i++)
		if ((i == 0 || cmd[i - 1] == '\0') && !memcmp(cmd + i, want, wl) &&
		    (cmd[i + wl] == ',' || cmd[i + wl] == '\0'))
			return true;
	return false;
}

/* ---- grants ---------------------------------------------------------- */

#define PERIPHERAL "/machine/peripheral/"

bool td_libvirt_grant_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	for (n = 0; name[n]; n++) {
		char c = name[n];

		if (n >= TD_LIBVIRT_GRANT_MAX)
			return false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return n > 0;
}

/* snprintf into @out; -ENAMETOOLONG when it does not fit */
__attribute__((format(printf, 3, 4)))
static int fmt(char *out, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(out, len, f, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int td_libvirt_grant_alias(const char *name, char *out, size_t len)
{
	if (!td_libvirt_grant_name_valid(name))
		return -EINVAL;
	return fmt(out, len, TD_LIBVIRT_GRANT_ALIAS_PREFIX "%s", name);
}

int td_libvirt_grant_xml(const char *name, uint64_t size, char *out, size_t len)
{
	if (!td_libvirt_grant_name_valid(name) || !td_libvirt_size_valid(size))
		return -EINVAL;
	return fmt(out, len,
		   "<shmem name='" TD_LIBVIRT_GRANT_SHM_PREFIX "%s'><model type='ivshmem-plain'/>"
		   "<size unit='M'>%llu</size><alias name='" TD_LIBVIRT_GRANT_ALIAS_PREFIX
		   "%s'/></shmem>", name, (unsigned long long)(size >> 20), name);
}

/* The name is checked: nothing in it needs JSON escaping. */
int td_libvirt_revoke_qmp(const char *name, bool revoked, char *out, size_t len)
{
	if (!td_libvirt_grant_name_valid(name))
		return -EINVAL;
	return fmt(out, len,
		   "{\"execute\":\"qom-set\",\"arguments\":{\"path\":\"" PERIPHERAL
		   TD_LIBVIRT_GRANT_ALIAS_PREFIX "%s\",\"property\":\"revoked\",\"value\":%s}}",
		   name, revoked ? "true" : "false");
}

int td_libvirt_revoked_query_qmp(const char *name, char *out, size_t len)
{
	if (!td_libvirt_grant_name_valid(name))
		return -EINVAL;
	return fmt(out, len,
		   "{\"execute\":\"qom-get\",\"arguments\":{\"path\":\"" PERIPHERAL
		   TD_LIBVIRT_GRANT_ALIAS_PREFIX "%s\",\"property\":\"revoked\"}}", name);
}

/*
 * The "return" member of QMP @reply in *@ret (owned by *@root, which the
 * caller frees in every case), or the error mapped as
 * td_libvirt_parse_qmp_reply documents.  QEMU without the series says
 * "Property 'ivshmem-plain.revoked' not found" (object_property_find_err).
 */
static int qmp_result(const char *reply, json_t **root, json_t **ret, char *err, size_t errlen)
{
	json_t *e;
	const char *cls, *desc;
	size_t dl;

	*root = reply ? json_loads(reply, 0, NULL) : NULL;
	*ret = NULL;
	if (!json_is_object(*root))
		return -EBADMSG;
	*ret = json_object_get(*root, "return");
	if (*ret)
		return 0;
	e = json_object_get(*root, "error");
	cls = json_string_value(json_object_get(e, "class"));
	desc = json_string_value(json_object_get(e, "desc"));
	if (!cls || !desc)
		return -EBADMSG;
	snprintf(err, errlen, "QEMU: %s", desc);
	if (!strcmp(cls, "DeviceNotFound"))
		return -ENODEV;
	dl = strlen(desc);
	if (!strncmp(desc, "Property '", 10) && dl > 19 &&
	    !strcmp(desc + dl - 19, ".revoked' not found"))
		return -ENOTSUP;
	return -EIO;
}

int td_libvirt_parse_qmp_reply(const char *reply, char *err, size_t errlen)
{
	json_t *root, *ret;
	int rc = qmp_result(reply, &root, &ret, err, errlen);

	json_decref(root);
	return rc;
}

int td_libvirt_parse_revoked(const char *reply, char *err, size_t errlen)
{
	json_t *root, *ret;
	int rc = qmp_result(reply, &root, &ret, err, errlen);

	if (!rc)
		rc = json_is_boolean(ret) ? json_is_true(ret) : -EBADMSG;
	json_decref(root);
	return rc;
}

int td_libvirt_parse_revoke_support(const char *reply)
{
	json_t *root, *ret, *p;
	char err[8];
	size_t i;
	int rc = qmp_result(reply, &root, &ret, err, sizeof(err));

	if (rc == -ENODEV)
		rc = -ENOTSUP;		/* QEMU has no ivshmem-plain */
	else if (!rc && !json_is_array(ret))
		rc = -EBADMSG;
	if (rc)
		goto out;
	json_array_foreach(ret, i, p) {
		const char *n = json_string_value(json_object_get(p, "name"));

		if (!n) {
			rc = -EBADMSG;
			goto out;
		}
		if (!strcmp(n, "revoked"))
			rc = 1;
	}
out:
	json_decref(root);
	return rc;
}

/* @domain, which must be running: the handle, or NULL with *@rc set. */
virDomainPtr td_lv_running(struct td_libvirt *lv, const char *domain, int *rc,
			       char *err, size_t errlen)
{
	virDomainPtr dom = lv_domain(lv, domain, err, errlen);

	if (!dom) {
		*rc = -ENOENT;
		return NULL;
	}
	if (virDomainIsActive(dom) != 1) {
		snprintf(err, errlen, "libvirt domain '%s' is not running", domain);
		virDomainFree(dom);
		*rc = -ESRCH;
		return NULL;
	}
	return dom;
}

/* Run QMP @cmd in @dom's QEMU: 0 with *@reply (free it), or -EIO. */
int td_lv_qmp(virDomainPtr dom, const char *domain, const char *cmd, char **reply,
		  char *err, size_t errlen)
{
	*reply = NULL;
	if (virDomainQemuMonitorCommand(dom, cmd, reply, 0)) {
		snprintf(err, errlen, "libvirt domain '%s': QMP: %s", domain, td_lv_error());
		return -EIO;
	}
	return 0;
}

int td_libvirt_revoke_supported(struct td_libvirt *lv, const char *domain, char *err,
				size_t errlen)
{
	virDomainPtr dom;
	char *reply;
	int rc;

	dom = td_lv_running(lv, domain, &rc, err, errlen);
	if (!dom)
		return rc;
	rc = td_lv_qmp(dom, domain, "{\"execute\":\"device-list-properties\","
		    "\"arguments\":{\"typename\":\"ivshmem-plain\"}}", &reply, err, errlen);
	if (!rc) {
		rc = td_libvirt_parse_revoke_support(reply);
		if (rc == -ENOTSUP)
			rc = 0;
		else if (rc < 0)
			snprintf(err, errlen, "libvirt domain '%s': unexpected "
				 "device-list-properties reply", domain);
	}
	free(reply);
	virDomainFree(dom);
	return rc;
}

/* Set (or, @query, read) grant @name's "revoked" in running @dom. */
int td_lv_grant_qmp(virDomainPtr dom, const char *domain, const char *name, bool query,
		     bool revoked, char *err, size_t errlen)
{
	char cmd[320], *reply;
	int rc;

	if (query)
		rc = td_libvirt_revoked_query_qmp(name, cmd, sizeof(cmd));
	else
		rc = td_libvirt_revoke_qmp(name, revoked, cmd, sizeof(cmd));
	if (rc) {
		snprintf(err, errlen, "bad grant name '%s'", name);
		return -EINVAL;
	}
	rc = td_lv_qmp(dom, domain, cmd, &reply, err, errlen);
	if (rc)
		return rc;
	rc = query ? td_libvirt_parse_revoked(reply, err, errlen) :
		     td_libvirt_parse_qmp_reply(reply, err, errlen);
	free(reply);
	if (rc == -ENOTSUP)
		snprintf(err, errlen, "the QEMU of libvirt domain '%s' cannot revoke (its "
			 "ivshmem has no 'revoked' property: not a qemu-patches/ build)", domain);
	else if (rc == -ENODEV)
		snprintf(err, errlen, "libvirt domain '%s' has no grant '%s'", domain, name);
	else if (rc == -EBADMSG)
		snprintf(err, errlen, "libvirt domain '%s': unexpected QMP reply", domain);
	return rc;
}

virDomainPtr td_lv_grant_domain(struct td_libvirt *lv, const char *domain, const char *name,
				int *rc, char *err, size_t errlen)
{
	if (!td_libvirt_grant_name_valid(name)) {
		snprintf(err, errlen, "bad grant name '%s'", name ? name : "");
		*rc = -EINVAL;
		return NULL;
	}
	return td_lv_running(lv, domain, rc, err, errlen);
}

int td_lv_bad_grant(const char *name, uint64_t size, char *err, size_t errlen)
{
	snprintf(err, errlen, "bad grant name '%s' or size %llu (a power of two of at least 1M)",
		 name ? name : "", (unsigned long long)size);
	return -EINVAL;
}

static int grant_call(struct td_libvirt *lv, const char *domain, const char *name, bool query,
		      bool revoked, char *err, size_t errlen)
{
	virDomainPtr dom;
	int rc;

	dom = td_lv_grant_domain(lv, domain, name, &rc, err, errlen);
	if (!dom)
		return rc;
	rc = td_lv_grant_qmp(dom, domain, name, query, revoked, err, errlen);
	virDomainFree(dom);
	return rc;
}

int td_libvirt_revoke(struct td_libvirt *lv, const char *domain, const char *name,
		      char *err, size_t errlen)
{
	return grant_call(lv, domain, name, false, true, err, errlen);
}

int td_libvirt_regrant(struct td_libvirt *lv, const char *domain, const char *name,
		       char *err, size_t errlen)
{
	return grant_call(lv, domain, name, false, false, err, errlen);
}

int td_libvirt_grant_revoked(struct td_libvirt *lv, const char *domain, const char *name,
			     char *err, size_t errlen)
{
	return grant_call(lv, domain, name, true, false, err, errlen);
}

/* Does @dom's live XML hold a device with alias @alias? 1, 0, or -EIO. */
int td_lv_has_alias(virDomainPtr dom, const char *alias, uid_t *uid, gid_t *gid)
{
	char *xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_SECURE), tag[128];
	int found;

	if (!xml)
		return -EIO;
	snprintf(tag, sizeof(tag), "<alias name='%s'/>", alias);
	found = strstr(xml, tag) != NULL;
	if (uid && td_libvirt_dac_owner(xml, uid, gid)) {
		struct passwd *pw = getpwnam("libvirt-qemu");

		*uid = pw ? pw->pw_uid : 0;
		*gid = pw ? pw->pw_gid : 0;
	}
	free(xml);
	return found;
}

int td_lv_link_grant(virDomainPtr dom, const char *domain, const char *name,
		     const char *region, char *link_path, size_t link_len, char *err,
		     size_t errlen)
{
	char alias[96];
	struct stat st;
	uid_t uid = 0;
	gid_t gid = 0;
	int rc;

	if (td_libvirt_grant_alias(name, alias, sizeof(alias))) {
		snprintf(err, errlen, "bad grant name '%s'", name ? name : "");
		return -EINVAL;
	}
	rc = td_lv_has_alias(dom, alias, &uid, &gid);
	if (rc < 0) {
		snprintf(err, errlen, "libvirt domain '%s': %s", domain, td_lv_error());
		return -EIO;
	}
	if (stat(region, &st)) {
		rc = -errno;
		snprintf(err, errlen, "region %s: %s", region, strerror(errno));
		return rc;
	}
	if (uid != 0 && st.st_uid != uid) {
		if (st.st_uid != 0) {
			snprintf(err, errlen, "region %s belongs to uid %u, libvirt domain '%s' "
				 "runs as uid %u", region, (unsigned int)st.st_uid, domain,
				 (unsigned int)uid);
			return -EACCES;
		}
		if (chown(region, uid, gid)) {
			rc = -errno;
			snprintf(err, errlen, "cannot give %s to uid %u: %s", region,
				 (unsigned int)uid, strerror(errno));
			return rc;
		}
	}
	snprintf(link_path, link_len, "%s/" TD_LIBVIRT_GRANT_SHM_PREFIX "%s", SHM_DIR, name);
	unlink(link_path);	/* a stale link of an earlier run */
	if (link(region, link_path)) {
		rc = -errno;
		snprintf(err, errlen, "cannot link %s as %s: %s%s", region, link_path,
			 strerror(errno), errno == EXDEV ? " (the region must be on /dev/shm)" : "");
		return rc;
	}
	return 0;
}

int td_libvirt_grant(struct td_libvirt *lv, const char *domain, const char *name,
		     const char *region, uint64_t size, char *err, size_t errlen)
{
	char xml[512], alias[96], link_path[PATH_MAX];
	virDomainPtr dom;
	int rc;

	if (td_libvirt_grant_xml(name, size, xml, sizeof(xml)) ||
	    td_libvirt_grant_alias(name, alias, sizeof(alias)))
		return td_lv_bad_grant(name, size, err, errlen);
	dom = td_lv_running(lv, domain, &rc, err, errlen);
	if (!dom)
		return rc;
	rc = td_lv_has_alias(dom, alias, NULL, NULL);
	if (rc) {
		if (rc > 0)
			snprintf(err, errlen, "libvirt domain '%s' already has grant '%s'",
				 domain, name);
		else
			snprintf(err, errlen, "libvirt domain '%s': %s", domain, td_lv_error());
		rc = rc > 0 ? -EEXIST : -EIO;
		goto out_free;
	}
	rc = td_lv_link_grant(dom, domain, name, region, link_path, sizeof(link_path), err, errlen);
	if (rc)
		goto out_free;
	if (virDomainAttachDeviceFlags(dom, xml, VIR_DOMAIN_AFFECT_LIVE)) {
		snprintf(err, errlen, "libvirt domain '%s': attaching grant '%s': %s", domain,
			 name, td_lv_error());
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

int td_libvirt_ungrant(struct td_libvirt *lv, const char *domain, const char *name,
		       char *err, size_t errlen)
{
	char alias[96], link_path[PATH_MAX], rerr[256] = "";
	virDomainPtr dom;
	int rc = 0, rrc, lvdev, prc = 0;

	if (td_libvirt_grant_alias(name, alias, sizeof(alias))) {
		snprintf(err, errlen, "bad grant name '%s'", name ? name : "");
		return -EINVAL;
	}
	snprintf(link_path, sizeof(link_path), "%s/" TD_LIBVIRT_GRANT_SHM_PREFIX "%s", SHM_DIR,
		 name);
	dom = lv_domain(lv, domain, err, errlen);
	if (!dom) {
		virErrorPtr e = virGetLastError();

		/* a domain that is gone holds no device */
		if (!e || e->code != VIR_ERR_NO_DOMAIN)
			rc = -EIO;
		goto out_unlink;
	}
	/* grants are live only: a stopped domain holds none */
	if (virDomainIsActive(dom) != 1)
		goto out_free;
	/* first revoke, so the guest loses access whatever it does with the unplug */
	rrc = td_lv_grant_qmp(dom, domain, name, false, true, rerr, sizeof(rerr));
	if (rrc == -ENODEV) {
		/* QEMU has no such device (left, or never there); a read-only
		 * grant's memory backend may outlive it: drop that too */
		td_lv_ro_reap(dom, domain, name);
		goto out_free;
	}
	lvdev = td_lv_has_alias(dom, alias, NULL, NULL);
	if (lvdev == 0) {
		/* not libvirt's: a read-only grant, plugged through QMP */
		prc = td_lv_ro_unplug(dom, domain, name, err, errlen);
		if (prc < 0)
			rc = prc;
	} else if (virDomainDetachDeviceAlias(dom, alias, VIR_DOMAIN_AFFECT_LIVE)) {
		snprintf(err, errlen, "libvirt domain '%s': unplugging grant '%s': %s",
			 domain, name, td_lv_error());
		/* libvirt 9.0 calls an unknown alias an internal error: look again */
		if (td_lv_has_alias(dom, alias, NULL, NULL) != 0)
			rc = -EIO;
	}
	if (rrc == -ENOTSUP && !rc) {
		/* stock QEMU: access ends only when the guest ejects the device */
		if (lvdev == 0 ? prc > 0 : td_lv_has_alias(dom, alias, NULL, NULL) != 0) {
			snprintf(err, errlen, "%s; the unplug of grant '%s' waits for the guest",
				 rerr, name);
			rc = TD_LIBVIRT_UNGRANT_PENDING;
		}
	} else if (rrc < 0 && rrc != -ENOTSUP && !rc) {
		snprintf(err, errlen, "%s", rerr);
		rc = rrc;
	}
out_free:
	virDomainFree(dom);
out_unlink:
	/* QEMU keeps its own mapping until the device is gone */
	unlink(link_path);
	return rc;
}
