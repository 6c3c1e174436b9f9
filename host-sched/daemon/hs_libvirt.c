// SPDX-License-Identifier: MIT
/* tochain-sched's libvirt backend; see hs_libvirt.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "hs_libvirt.h"

#define HSL_DRY_DOMS	8

struct hsl_drydom {
	char name[64];
	int id;
	char *reply;
	bool used;
};

struct hsl {
	pthread_mutex_t lock;		/* guards conn */
	char uri[256];
	virConnectPtr conn;		/* NULL until first use or after it died */
	const struct cg_root *cg;
	/* dry-run */
	char *log;
	size_t log_size, log_len;
	bool down;
	struct hsl_drydom dry[HSL_DRY_DOMS];
};

/* libvirt prints every error on stderr by default; we report our own. */
static void quiet(void *opaque, virErrorPtr e)
{
	(void)opaque;
	(void)e;
}

struct hsl *hsl_create(const char *uri, char *log, size_t logsize, const struct cg_root *cgroot)
{
	struct hsl *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	if ((size_t)snprintf(l->uri, sizeof(l->uri), "%s", uri ? uri : HSL_DEFAULT_URI) >=
	    sizeof(l->uri)) {
		free(l);
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (log) {
		if (!logsize) {
			free(l);
			errno = EINVAL;
			return NULL;
		}
		l->log = log;
		l->log_size = logsize;
		log[0] = '\0';
	}
	l->cg = cgroot;
	pthread_mutex_init(&l->lock, NULL);
	virSetErrorFunc(NULL, quiet);
	return l;
}

void hsl_destroy(struct hsl *l)
{
	if (!l)
		return;
	if (l->conn)
		virConnectClose(l->conn);
	for (int i = 0; i < HSL_DRY_DOMS; i++)
		free(l->dry[i].reply);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

const char *hsl_uri(const struct hsl *l)
{
	return l->uri;
}

bool hsl_is_dryrun(const struct hsl *l)
{
	return l->log != NULL;
}

static void dry_log(struct hsl *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dry_log(struct hsl *l, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (l->log_len + 1 >= l->log_size)
		return;
	va_start(ap, fmt);
	w = vsnprintf(l->log + l->log_len, l->log_size - l->log_len, fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= l->log_size - l->log_len)
		l->log[l->log_len] = '\0';	/* full: drop the line */
	else
		l->log_len += (size_t)w;
}

static const char *lv_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

/* The open connection, reopened if it died; NULL with @err set. */
static virConnectPtr conn_get(struct hsl *l, char *err, size_t errlen)
{
	virConnectPtr c;

	pthread_mutex_lock(&l->lock);
	if (l->conn && virConnectIsAlive(l->conn) != 1) {
		virConnectClose(l->conn);
		l->conn = NULL;
	}
	if (!l->conn)
		l->conn = virConnectOpen(l->uri);
	c = l->conn;
	if (c)
		virConnectRef(c);	/* held by the caller: another thread may reopen */
	else
		snprintf(err, errlen, "libvirt at %s not reachable: %s", l->uri, lv_error());
	pthread_mutex_unlock(&l->lock);
	return c;
}

int hsl_connect(struct hsl *l, char *err, size_t errlen)
{
	virConnectPtr c;

	if (l->log) {
		if (l->down) {
			snprintf(err, errlen, "libvirt at %s not reachable (dry-run)", l->uri);
			return -ECONNREFUSED;
		}
		return 0;
	}
	c = conn_get(l, err, errlen);
	if (!c)
		return -ECONNREFUSED;
	virConnectClose(c);
	return 0;
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct hsl_vcpu *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

int hsl_parse_vcpus(const char *reply, struct hsl_vcpu *v, int max)
{
	json_t *root = json_loads(reply ? reply : "", 0, NULL), *ret, *e;
	size_t i;
	int n = 0;

	ret = json_object_get(root, "return");
	if (!json_is_array(ret) || json_array_size(ret) > (size_t)max) {
		n = -EBADMSG;
		goto out;
	}
	json_array_foreach(ret, i, e) {
		/* "props" holds a topology "thread-id" too: only the top level counts */
		json_t *idx = json_object_get(e, "cpu-index"), *tid = json_object_get(e, "thread-id");

		if (!json_is_integer(idx) || !json_is_integer(tid) ||
		    json_integer_value(idx) < 0 || json_integer_value(idx) >= INT_MAX ||
		    json_integer_value(tid) <= 0 || json_integer_value(tid) > INT32_MAX) {
			n = -EBADMSG;
			goto out;
		}
		v[n].index = (int)json_integer_value(idx);
		v[n].tid = (pid_t)json_integer_value(tid);
		for (int k = 0; k < n; k++)
			if (v[k].index == v[n].index) {
				n = -EBADMSG;
				goto out;
			}
		n++;
	}
	qsort(v, (size_t)n, sizeof(*v), cmp_vcpu);
out:
	json_decref(root);
	return n;
}

static struct hsl_drydom *dry_find(struct hsl *l, const char *name)
{
	for (int i = 0; i < HSL_DRY_DOMS; i++)
		if (l->dry[i].used && !strcmp(l->dry[i].name, name))
			return &l->dry[i];
	return NULL;
}

int hsl_dryrun_domain(struct hsl *l, const char *name, int id, const char *reply, bool gone)
{
	struct hsl_drydom *dd;

	if (!l->log || strlen(name) >= sizeof(dd->name))
		return -EINVAL;
	dd = dry_find(l, name);
	if (gone) {
		if (dd) {
			free(dd->reply);
			memset(dd, 0, sizeof(*dd));
		}
		return 0;
	}
	for (int i = 0; !dd && i < HSL_DRY_DOMS; i++)
		if (!l->dry[i].used)
			dd = &l->dry[i];
	if (!dd)
		return -ENOSPC;
	free(dd->reply);
	dd->reply = reply ? strdup(reply) : NULL;
	snprintf(dd->name, sizeof(dd->name), "%s", name);
	dd->id = id;
	dd->used = true;
	return 0;
}

void hsl_dryrun_down(struct hsl *l, bool down)
{
	l->down = down;
}

/* The domain, or NULL with -errno in *rc and @err set. */
static virDomainPtr dom_get(struct hsl *l, const char *name, int *rc, char *err, size_t errlen)
{
	virConnectPtr c = conn_get(l, err, errlen);
	virDomainPtr dom;

	if (!c) {
		*rc = -ECONNREFUSED;
		return NULL;
	}
	dom = virDomainLookupByName(c, name);
	if (!dom) {
		virErrorPtr e = virGetLastError();

		if (e && e->code == VIR_ERR_NO_DOMAIN) {
			snprintf(err, errlen, "no libvirt domain '%s'", name);
			*rc = -ENOENT;
		} else {
			snprintf(err, errlen, "libvirt domain '%s': %s", name, lv_error());
			*rc = -EIO;
		}
	}
	virConnectClose(c);	/* the domain holds its own reference */
	return dom;
}

int hsl_domain_id(struct hsl *l, const char *name)
{
	char err[256];
	virDomainPtr dom;
	unsigned int id;
	int rc;

	if (l->log) {
		struct hsl_drydom *dd = dry_find(l, name);

		if (l->down)
			return -ECONNREFUSED;
		if (!dd)
			return -ENOENT;
		return dd->id >= 0 ? dd->id : -ESRCH;
	}
	dom = dom_get(l, name, &rc, err, sizeof(err));
	if (!dom)
		return rc;
	id = virDomainGetID(dom);
	virDomainFree(dom);
	return id == (unsigned int)-1 || id > INT_MAX ? -ESRCH : (int)id;
}

int hsl_discover(struct hsl *l, const char *name, struct hsl_dom *s, char *err, size_t errlen)
{
	char *reply = NULL;
	virDomainPtr dom = NULL;
	int rc = 0, n, id;

	memset(s, 0, sizeof(*s));
	s->id = -1;
	if ((size_t)snprintf(s->name, sizeof(s->name), "%s", name) >= sizeof(s->name)) {
		snprintf(err, errlen, "domain name too long");
		return -EINVAL;
	}
	if (l->log) {
		struct hsl_drydom *dd = dry_find(l, name);

		dry_log(l, "query-cpus-fast %s\n", name);
		if (l->down) {
			snprintf(err, errlen, "libvirt at %s not reachable (dry-run)", l->uri);
			return -ECONNREFUSED;
		}
		if (!dd) {
			snprintf(err, errlen, "no libvirt domain '%s'", name);
			return -ENOENT;
		}
		if (dd->id < 0) {
			snprintf(err, errlen, "libvirt domain '%s' is not running", name);
			return -ESRCH;
		}
		id = dd->id;
		reply = dd->reply ? strdup(dd->reply) : NULL;
	} else {
		unsigned int uid;

		dom = dom_get(l, name, &rc, err, errlen);
		if (!dom)
			return rc;
		uid = virDomainGetID(dom);
		if (uid == (unsigned int)-1 || uid > INT_MAX) {
			snprintf(err, errlen, "libvirt domain '%s' is not running", name);
			rc = -ESRCH;
			goto out;
		}
		id = (int)uid;
		/* read-only QMP query; libvirt marks the domain tainted (custom-monitor) */
		if (virDomainQemuMonitorCommand(dom, "{\"execute\":\"query-cpus-fast\"}", &reply, 0)) {
			snprintf(err, errlen, "libvirt domain '%s': query-cpus-fast: %s", name,
				 lv_error());
			rc = virDomainIsActive(dom) == 0 ? -ESRCH : -EIO;
			goto out;
		}
	}
	n = hsl_parse_vcpus(reply, s->vcpu, HSL_MAX_VCPUS);
	if (n <= 0) {
		snprintf(err, errlen, "libvirt domain '%s': unexpected query-cpus-fast reply", name);
		rc = -EBADMSG;
		goto out;
	}
	s->nvcpu = (uint32_t)n;
	s->id = id;
out:
	free(reply);
	if (dom)
		virDomainFree(dom);
	return rc;
}

/* A CPU list into a libvirt cpumap of @maplen bytes; 0 or -EINVAL. */
static int cpumap_from_list(const char *list, unsigned char *map, int maplen)
{
	const char *p = list;

	memset(map, 0, (size_t)maplen);
	if (!*p)
		return -EINVAL;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p || a < 0 || a >= maplen * 8)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b >= maplen * 8)
				return -EINVAL;
			p = end;
		}
		for (long c = a; c <= b; c++)
			VIR_USE_CPU(map, c);
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return 0;
}

/* The cpu-controller group of thread @tid, from /proc/TID/cgroup, as a
 * path below the mount of @cg; 0 or -errno. */
static int vcpu_group_dir(const struct cg_root *cg, pid_t tid, char *out, size_t len)
{
	char path[64], line[1024];
	const char *mount = cg->kind == CG_V2 ? cg->v2 : cg->cpu;
	FILE *f;
	int rc = -ENOENT;

	if (cg->kind != CG_V1 && cg->kind != CG_V2)
		return -ENOTSUP;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		bool match = false;

		if (!c2)
			continue;
		*c2 = '\0';
		line[strcspn(line, "\n")] = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (cg->kind == CG_V2) {
			match = c1[1] == '\0' && !strncmp(line, "0", 1);
		} else {
			char *save = NULL;

			for (char *t = strtok_r(c1 + 1, ",", &save); t; t = strtok_r(NULL, ",", &save))
				if (!strcmp(t, "cpu"))
					match = true;
		}
		if (match) {
			rc = (size_t)snprintf(out, len, "%s%s", mount, c2 + 1) >= len ?
				-ENAMETOOLONG : 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* vCPU @i's own group gets @quota per @period (the part libvirt cannot say). */
static int write_vcpu_quota(struct hsl *l, const struct hsl_dom *s, uint32_t i, int64_t quota,
			    uint64_t period, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], val[64];
	int rc;

	if (l->log) {
		dry_log(l, "vcpu-cgroup %s vcpu=%d quota=%" PRId64 " period=%" PRIu64 "\n",
			s->name, s->vcpu[i].index, quota, period);
		return 0;
	}
	if (!l->cg) {
		snprintf(err, errlen, "domain '%s' vcpu %d: no cgroup hierarchy to write its quota",
			 s->name, s->vcpu[i].index);
		return -ENOTSUP;
	}
	rc = vcpu_group_dir(l->cg, s->vcpu[i].tid, dir, sizeof(dir));
	if (rc) {
		snprintf(err, errlen, "domain '%s' vcpu %d (thread %d): no cpu group: %s",
			 s->name, s->vcpu[i].index, (int)s->vcpu[i].tid, strerror(-rc));
		return rc;
	}
	if (l->cg->kind == CG_V2) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		if (quota < 0)
			snprintf(val, sizeof(val), "max %" PRIu64, period);
		else
			snprintf(val, sizeof(val), "%" PRId64 " %" PRIu64, quota, period);
	} else {
		/* the period is libvirt's vcpu_period, set just before */
		snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		snprintf(val, sizeof(val), "%" PRId64, quota < 0 ? (int64_t)-1 : quota);
	}
	rc = write_file(path, val);
	if (rc)
		snprintf(err, errlen, "domain '%s' vcpu %d: %s: %s", s->name, s->vcpu[i].index,
			 path, strerror(-rc));
	return rc;
}

static int set_sched(struct hsl *l, virDomainPtr dom, const char *name, uint64_t period,
		     int64_t quota, char *err, size_t errlen)
{
	virTypedParameterPtr par = NULL;
	int npar = 0, maxpar = 0, rc = 0;

	if (l->log) {
		dry_log(l, "schedinfo %s vcpu_period=%" PRIu64 " vcpu_quota=%" PRId64 "\n",
			name, period, quota);
		return 0;
	}
	if (virTypedParamsAddULLong(&par, &npar, &maxpar, VIR_DOMAIN_SCHEDULER_VCPU_PERIOD,
				    period) ||
	    virTypedParamsAddLLong(&par, &npar, &maxpar, VIR_DOMAIN_SCHEDULER_VCPU_QUOTA,
				   quota) ||
	    virDomainSetSchedulerParametersFlags(dom, par, npar, VIR_DOMAIN_AFFECT_LIVE)) {
		snprintf(err, errlen, "domain '%s': vcpu_period/vcpu_quota: %s", name, lv_error());
		rc = -EIO;
	}
	virTypedParamsFree(par, npar);
	return rc;
}

static int pin(struct hsl *l, virDomainPtr dom, const struct hsl_dom *s, uint32_t i,
	       const char *cpus, char *err, size_t errlen)
{
	unsigned char map[512];		/* 4096 CPUs */

	if (cpumap_from_list(cpus, map, (int)sizeof(map))) {
		snprintf(err, errlen, "bad cpu list '%s'", cpus);
		return -EINVAL;
	}
	if (l->log) {
		dry_log(l, "pin %s vcpu=%d cpus=%s\n", s->name, s->vcpu[i].index, cpus);
		return 0;
	}
	if (virDomainPinVcpuFlags(dom, (unsigned int)s->vcpu[i].index, map, (int)sizeof(map),
				  VIR_DOMAIN_AFFECT_LIVE)) {
		snprintf(err, errlen, "domain '%s' vcpu %d: pin to %s: %s", s->name,
			 s->vcpu[i].index, cpus, lv_error());
		return -EIO;
	}
	return 0;
}

int hsl_apply(struct hsl *l, struct hsl_dom *s, const char *const *cpus,
	      const int64_t *quota_us, uint64_t period_us, char *err, size_t errlen)
{
	virDomainPtr dom = NULL;
	int64_t q[HSL_MAX_VCPUS], top = 0;
	int rc = 0, r;
	bool need = false;

	if (!s->nvcpu)
		return 0;
	for (uint32_t i = 0; i < s->nvcpu; i++) {
		q[i] = quota_us[i] < 0 ? -1 : quota_us[i] < 1000 ? 1000 : quota_us[i];
		if (q[i] < 0 || (top >= 0 && q[i] > top))
			top = q[i] < 0 ? -1 : q[i];
		if (strcmp(s->pinned[i], cpus[i]) || !s->eff_known[i] || s->eff_quota[i] != q[i])
			need = true;
	}
	if (top != s->lv_quota || period_us != s->lv_period)
		need = true;
	if (!need)
		return 0;
	if (l->log) {
		if (l->down) {
			snprintf(err, errlen, "libvirt at %s not reachable (dry-run)", l->uri);
			return -ECONNREFUSED;
		}
		if (!dry_find(l, s->name)) {
			snprintf(err, errlen, "no libvirt domain '%s'", s->name);
			return -ENOENT;
		}
	} else {
		dom = dom_get(l, s->name, &rc, err, errlen);
		if (!dom)
			return rc;
	}
	for (uint32_t i = 0; i < s->nvcpu; i++) {
		if (!strcmp(s->pinned[i], cpus[i]))
			continue;
		/* the first error's reason is kept */
		r = pin(l, dom, s, i, cpus[i], rc ? NULL : err, rc ? 0 : errlen);
		if (!r)
			snprintf(s->pinned[i], sizeof(s->pinned[i]), "%s", cpus[i]);
		else if (!rc)
			rc = r;
	}
	if (top != s->lv_quota || period_us != s->lv_period) {
		r = set_sched(l, dom, s->name, period_us, top, rc ? NULL : err, rc ? 0 : errlen);
		if (!r) {
			s->lv_quota = top;
			s->lv_period = period_us;
			/* libvirt wrote every vcpuN group */
			for (uint32_t i = 0; i < s->nvcpu; i++) {
				s->eff_quota[i] = top;
				s->eff_known[i] = true;
			}
		} else if (!rc) {
			rc = r;
		}
	}
	for (uint32_t i = 0; i < s->nvcpu && s->lv_period; i++) {
		if (s->eff_known[i] && s->eff_quota[i] == q[i])
			continue;
		r = write_vcpu_quota(l, s, i, q[i], period_us, rc ? NULL : err, rc ? 0 : errlen);
		if (!r) {
			s->eff_quota[i] = q[i];
			s->eff_known[i] = true;
		} else if (!rc) {
			rc = r;
		}
	}
	if (dom)
		virDomainFree(dom);
	return rc;
}
