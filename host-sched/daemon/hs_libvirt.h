/* SPDX-License-Identifier: MIT */
/*
 * hs_libvirt — tochain-sched's libvirt backend (hsl_*): vCPUs of VMs that
 * run as libvirt domains are found and enforced through libvirt's API;
 * it composes with hs_enforce, which keeps the plain host threads (VNF
 * service threads, stand-in VMs) in its own cgroups.
 *
 * Discovery.  The vCPU threads of a running domain come from QEMU itself:
 * QMP query-cpus-fast through virDomainQemuMonitorCommand, which maps
 * each vCPU index (what libvirt's vCPU calls take) to its host thread id
 * in one reply, for KVM and TCG alike.  virDomainGetVcpus gives no thread
 * ids, and reading libvirt's vcpuN/tasks would tie us to its cgroup
 * layout (which differs between v1, v2, systemd and not).  The price: libvirt
 * marks the domain tainted ("custom-monitor"); the query only reads.
 * The domain's id (a new one at every start) tells the daemon when QEMU,
 * and so the threads, changed.
 *
 * Enforcement, per domain and period (hsl_apply), writing only what
 * changed since the last call:
 *   - each vCPU is pinned with virDomainPinVcpuFlags (AFFECT_LIVE) to the
 *     pCPU the plan gives it, or to the whole partition;
 *   - CPU limits: libvirt's vcpu_quota/vcpu_period scheduler parameters
 *     (virDomainSetSchedulerParametersFlags) hold ONE quota for all vCPUs
 *     of a domain.  We set vcpu_period = the period and vcpu_quota = the
 *     largest quota the plan gives any of the domain's vCPUs (-1 if any is
 *     uncapped), so `virsh schedinfo` shows the domain's ceiling; each
 *     vCPU whose planned quota is lower is then written directly into the
 *     per-vCPU group libvirt made for it (the cpu group /proc/TID/cgroup
 *     names: v1 cpu.cfs_quota_us, v2 cpu.max).  libvirt does not know
 *     about those writes: `virsh schedinfo` shows the ceiling, the
 *     vcpuN groups show the truth; a later vcpu_quota from anyone resets
 *     them, and we only write again when the plan changes.
 *
 * Dry-run (a log buffer given to hsl_create): nothing is contacted; every
 * call that would be made is appended to the log as one line,
 *   query-cpus-fast DOM
 *   pin DOM vcpu=N cpus=LIST
 *   schedinfo DOM vcpu_period=P vcpu_quota=Q
 *   vcpu-cgroup DOM vcpu=N quota=Q period=P
 * and the domains a test declares with hsl_dryrun_domain() answer the
 * queries (hsl_dryrun_down() plays a libvirtd that is not there).
 *
 * Errors: libvirt's own printing is silenced; each call returns -errno
 * with a reason in the caller's buffer: -ECONNREFUSED (libvirtd not
 * reachable), -ENOENT (no such domain), -ESRCH (defined, not running),
 * -EIO (libvirt refused), -EBADMSG (unexpected QMP reply).  A dead
 * connection is reopened at the next call.
 *
 * Threading: an hsl may be used from several threads (the control thread
 * discovers, the scheduler thread enforces); its connection is guarded
 * by an internal mutex, libvirt's calls are thread-safe.  An hsl_dom is
 * used by one thread at a time (the daemon's lock).  Calls are
 * synchronous: a libvirtd that hangs delays the caller.
 */
#ifndef HS_LIBVIRT_H
#define HS_LIBVIRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tochain/cg.h"

#define HSL_MAX_VCPUS	64
#define HSL_DEFAULT_URI	"qemu:///system"

struct hsl;

/* One vCPU of a domain: libvirt/QEMU vCPU index and its host thread. */
struct hsl_vcpu {
	int index;
	pid_t tid;
};

/* What the daemon keeps per registered domain (its last writes). */
struct hsl_dom {
	char name[64];
	int id;				/* libvirt id when discovered, -1 none */
	uint32_t nvcpu;
	struct hsl_vcpu vcpu[HSL_MAX_VCPUS];	/* by index, ascending */
	char pinned[HSL_MAX_VCPUS][32];	/* last pin written, "" none */
	int64_t eff_quota[HSL_MAX_VCPUS];	/* what its vcpuN group holds, as far as we know */
	bool eff_known[HSL_MAX_VCPUS];
	int64_t lv_quota;		/* last vcpu_quota set */
	uint64_t lv_period;		/* with this vcpu_period (0: none set) */
};

/*
 * A handle on libvirt at @uri (NULL: qemu:///system); connects lazily.
 * @log/@logsize non-NULL: dry-run, calls are logged there.  @cgroot: the
 * cgroup hierarchies, for the per-vCPU quota writes (NULL: those are
 * refused with -ENOTSUP unless dry-run).  NULL with errno on failure.
 */
struct hsl *hsl_create(const char *uri, char *log, size_t logsize, const struct cg_root *cgroot);
void hsl_destroy(struct hsl *l);

const char *hsl_uri(const struct hsl *l);
bool hsl_is_dryrun(const struct hsl *l);

/* Is libvirtd reachable?  0, or -ECONNREFUSED with @err set. */
int hsl_connect(struct hsl *l, char *err, size_t errlen);

/*
 * The vCPUs of a query-cpus-fast reply ({"return": [{"cpu-index",
 * "thread-id"}...]}), sorted by index.  Count (0..@max), -EBADMSG for
 * anything else (missing or non-integer fields, duplicate index,
 * non-positive thread id, more than @max vCPUs).
 */
int hsl_parse_vcpus(const char *reply, struct hsl_vcpu *v, int max);

/*
 * The running domain @name's id and vCPU threads into @s (name, id,
 * nvcpu, vcpu; the rest reset: nothing written yet).  0 or -errno with
 * @err set (see above).
 */
int hsl_discover(struct hsl *l, const char *name, struct hsl_dom *s, char *err, size_t errlen);

/* The domain's id if it runs (>= 0), -ESRCH if defined but not running,
 * -ENOENT if gone, -ECONNREFUSED/-EIO if libvirt cannot say. */
int hsl_domain_id(struct hsl *l, const char *name);

/*
 * Applies one period's plan to the domain: vCPU i of @s (by position in
 * s->vcpu) is pinned to @cpus[i] (a CPU list, "3" or "0-1") and capped
 * at @quota_us[i] per @period_us (< 0: uncapped; 1..999 is raised to the
 * kernel's minimum of 1000).  Writes only what differs from the last
 * successful call.  0, or the first error (-errno, @err set); the other
 * writes are still tried.
 */
int hsl_apply(struct hsl *l, struct hsl_dom *s, const char *const *cpus,
	      const int64_t *quota_us, uint64_t period_us, char *err, size_t errlen);

/*
 * Dry-run only: declares domain @name with libvirt id @id (-1: defined,
 * not running) answering query-cpus-fast with @reply; @reply NULL and
 * @id -1 with @gone: the domain no longer exists.  0, -ENOSPC, -EINVAL.
 */
int hsl_dryrun_domain(struct hsl *l, const char *name, int id, const char *reply, bool gone);
/* Dry-run only: libvirtd unreachable (true) or back (false). */
void hsl_dryrun_down(struct hsl *l, bool down);

#endif
