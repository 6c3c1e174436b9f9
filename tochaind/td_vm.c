// SPDX-License-Identifier: MIT
/* VMs: their containers, their commands, their repair; see td_vm.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include <tochain/region.h>

#include "tochain/ctl_proto.h"
#include "td_cpusched.h"
#include "td_exec.h"
#include "td_libvirt.h"
#include "td_link.h"
#include "td_priv.h"
#include "td_toe.h"
#include "td_vm.h"
#include "tochain/util.h"

#define TOE_READY_MS 15000

static int ns_exists(const char *ns)
{
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	return access(path, F_OK) == 0;
}

int td_fabric_ensure(const struct td_config *cfg, char *err, size_t errlen)
{
	if (!ns_exists(cfg->fabric_ns) &&
	    td_runv(err, errlen, "ip", "netns", "add", cfg->fabric_ns, NULL))
		return -EIO;
	td_runv(NULL, 0, "ip", "-n", cfg->fabric_ns, "link", "set", "lo", "up", NULL);
	/* The bridge lives in the fabric namespace: ask ip there. */
	if (td_runv(NULL, 0, "ip", "-n", cfg->fabric_ns, "link", "show", cfg->bridge, NULL) &&
	    td_runv(err, errlen, "ip", "-n", cfg->fabric_ns, "link", "add", cfg->bridge,
		    "type", "bridge", NULL))
		return -EIO;
	if (td_runv(err, errlen, "ip", "-n", cfg->fabric_ns, "link", "set", cfg->bridge, "up",
		    NULL))
		return -EIO;
	/*
	 * With br_netfilter loaded (Docker and others load it), every frame
	 * the bridge forwards also walks the IP, IPv6 and ARP hooks of the
	 * namespace.  Nothing filters in the fabric namespace: a firewall's
	 * nftables half lives in the VM's TOE namespace.  The switches are
	 * per namespace; without the module there is nothing to turn off.
	 */
	td_runv(NULL, 0, "ip", "netns", "exec", cfg->fabric_ns, "sysctl", "-q", "-w",
		"net.bridge.bridge-nf-call-iptables=0", "net.bridge.bridge-nf-call-ip6tables=0",
		"net.bridge.bridge-nf-call-arptables=0", NULL);
	return 0;
}

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

bool td_region_fs_ok(unsigned long f_type)
{
	return f_type == TMPFS_MAGIC || f_type == HUGETLBFS_MAGIC || f_type == RAMFS_MAGIC;
}

int td_region_dir_check(const char *dir, char *err, size_t errlen)
{
	struct statfs sfs;

	if (statfs(dir, &sfs)) {
		int rc = -errno;

		snprintf(err, errlen, "region directory %s: %s", dir, strerror(errno));
		return rc;
	}
	if (!td_region_fs_ok((unsigned long)sfs.f_type)) {
		snprintf(err, errlen, "the region directory %s is not on tmpfs or hugetlbfs "
			 "(filesystem type 0x%lx): the regions hold the VMs' traffic, which "
			 "must not be written to a disk (--region-dir, default /dev/shm/tochain)",
			 dir, (unsigned long)sfs.f_type);
		return -EXDEV;
	}
	return 0;
}

void td_vm_names(const struct td_config *cfg, struct td_vm *vm)
{
	snprintf(vm->netns, sizeof(vm->netns), "%s-%s", cfg->fabric_ns, vm->name);
	snprintf(vm->veth, sizeof(vm->veth), "tv%08x", fnv(vm->netns));
	snprintf(vm->cgroup, sizeof(vm->cgroup), "tochain/%s/toe-%s", cfg->fabric_ns, vm->name);
	snprintf(vm->region, sizeof(vm->region), "%s/%s-%s.region", cfg->region_dir,
		 cfg->fabric_ns, vm->name);
}

bool td_vm_toe_alive(const struct td_vm *vm)
{
	/* A reused pid would not carry our region path. */
	return tu_proc_runs(vm->toe_pid, "tochain-toe", vm->region);
}

/* SIGTERM, SIGKILL after 1 s; only a pid that is still this VM's TOE. */
static void stop_toe(struct td_vm *vm)
{
	tu_proc_stop(vm->toe_pid, "tochain-toe", vm->region, 1000);
	vm->toe_pid = 0;
}

/*
 * The most buffers of @slot bytes whose region (the TOE's geometry:
 * slots, descriptors, TD_TOE_CHANNELS channels with their rings) fits in
 * @size bytes, 0 when not even one does.  It must fit: a libvirt VM's
 * ivshmem-plain BAR is @size bytes, and a region larger than its BAR is
 * of no use to the guest.
 */
static uint32_t region_nbufs(uint64_t size, uint32_t slot)
{
	struct tcr_params p = { .name = "x", .kind = TCR_KIND_GUEST, .slot_size = slot,
				.nchannels = TD_TOE_CHANNELS };
	struct tcr_geometry g;
	uint32_t lo = 0, hi = 1u << 20;

	/* the largest n with region_size(n) <= size; region_size grows with n */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		p.nbufs = mid;
		if (tcr_geometry_compute(&p, &g) == 0 && g.region_size <= size)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

#define TOE_NBUFS_MIN 64	/* the fewest buffers a VM's TOE runs with */

int td_vm_sizes_from_json(json_t *o, struct td_vm *vm, char *err, size_t errlen)
{
	json_t *size = json_object_get(o, "region_size"), *slot = json_object_get(o, "slot_size");
	json_int_t v;
	uint32_t n;

	vm->region_size = TD_REGION_SIZE_DEFAULT;
	if (size) {
		v = json_is_integer(size) ? json_integer_value(size) : 0;
		if (v < (json_int_t)TD_REGION_SIZE_MIN || v > (json_int_t)TD_REGION_SIZE_MAX) {
			snprintf(err, errlen, "region-size must be between 1M and 4G");
			return -EINVAL;
		}
		vm->region_size = (uint64_t)v;
	}
	if (slot) {
		v = json_is_integer(slot) ? json_integer_value(slot) : 0;
		if (!td_slot_size_valid(v)) {
			snprintf(err, errlen, "slot-size must be a power of two between 1K and 64K");
			return -EINVAL;
		}
		vm->slot_size = (uint32_t)v;
		n = region_nbufs(vm->region_size, vm->slot_size);
		if (n < TOE_NBUFS_MIN) {
			snprintf(err, errlen, "a region of %llu bytes holds %u buffers of slot-size %u, "
				 "at least %d are needed", (unsigned long long)vm->region_size, n,
				 vm->slot_size, TOE_NBUFS_MIN);
			return -EINVAL;
		}
		return 0;
	}
	/* the default: large slots while the region keeps enough buffers (td_state.h) */
	vm->slot_size = TD_SLOT_SIZE_DEFAULT;
	while (vm->slot_size > TD_SLOT_SIZE_MIN_AUTO &&
	       region_nbufs(vm->region_size, vm->slot_size) < TD_SLOT_BUFS_MIN)
		vm->slot_size /= 2;
	return 0;
}

int td_vm_start_toe(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen)
{
	char nsp[128], logp[PATH_MAX + 32], nbufs[32], slot[32], chans[16], c;
	uint32_t n = region_nbufs(vm->region_size, vm->slot_size);
	int ready[2], nsfd;
	struct pollfd p;
	pid_t pid;

	if (n < TOE_NBUFS_MIN) {
		snprintf(err, errlen, "a region of %llu bytes holds %u buffers of %u bytes",
			 (unsigned long long)vm->region_size, n, vm->slot_size);
		return -EINVAL;
	}
	snprintf(nbufs, sizeof(nbufs), "%u", n);
	snprintf(slot, sizeof(slot), "%u", vm->slot_size);
	/* room for a libvirt VM's link (td_link.h): the TOE's default, said here */
	snprintf(chans, sizeof(chans), "%d", TD_TOE_CHANNELS);
	snprintf(nsp, sizeof(nsp), "/run/netns/%s", vm->netns);
	snprintf(logp, sizeof(logp), "%s/toe-%s.log", cfg->state_dir, vm->name);
	if (access(cfg->toe_path, X_OK)) {
		snprintf(err, errlen, "cannot run the TOE %s: %s", cfg->toe_path, strerror(errno));
		return -ENOENT;
	}
	if (vm->guest_mode || vm->guest_group[0]) {
		int rc = td_guest_dir_grant(cfg->region_dir);

		if (rc) {
			snprintf(err, errlen, "region directory %s: %s", cfg->region_dir, strerror(-rc));
			return rc;
		}
	}
	nsfd = open(nsp, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		snprintf(err, errlen, "namespace %s: %s", vm->netns, strerror(errno));
		return -errno;
	}
	if (pipe2(ready, O_CLOEXEC)) {
		close(nsfd);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		struct cg_group g;
		int logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		setsid();
		if (setns(nsfd, CLONE_NEWNET)) {
			dprintf(ready[1], "setns");
			_exit(126);
		}
		if (cfg->have_cg && cg_create(&cfg->cg, vm->cgroup, &g) == 0)
			cg_attach_pid(&g, getpid());
		if (logfd >= 0) {
			dup2(logfd, 1);
			dup2(logfd, 2);
		}
		/* fd 3 in the TOE is the ready pipe. */
		dup2(ready[1], 3);
		/* When ready[1] already was fd 3, dup2 kept its close-on-exec. */
		fcntl(3, F_SETFD, 0);
		{
			const char *argv[24] = { "tochain-toe", "--region", vm->region, "--name",
						 vm->name, "--nbufs", nbufs, "--slot-size", slot,
						 "--channels", chans, "--ready-fd", "3",
						 "--hold" };
			char mode[12];
			size_t argc = 14;

			/* "--hold": nothing inbound is served until the chains are set
			 * (td_toe_ready): after a restart, before td_repair.c set them */

			/* who in the guest may use it (td_guest.h) */
			td_guest_toe_args(vm->guest_mode, vm->guest_group, mode, argv, &argc);
			argv[argc] = NULL;
			execv(cfg->toe_path, (char *const *)argv);
		}
		_exit(127);
	}
	close(nsfd);
	close(ready[1]);
	if (pid < 0) {
		close(ready[0]);
		return -errno;
	}
	p.fd = ready[0];
	p.events = POLLIN;
	if (poll(&p, 1, TOE_READY_MS) != 1 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "the TOE of %s did not start (see %s)", vm->name, logp);
		return -EIO;
	}
	close(ready[0]);
	vm->toe_pid = pid;
	return 0;
}

int td_vm_create(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen)
{
	char cidr[80];
	int rc;

	td_vm_names(cfg, vm);
	if (ns_exists(vm->netns)) {
		snprintf(err, errlen, "namespace %s already exists", vm->netns);
		return -EEXIST;
	}
	if (mkdir(cfg->region_dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "region directory %s: %s", cfg->region_dir, strerror(errno));
		return -errno;
	}
	if (td_runv(err, errlen, "ip", "netns", "add", vm->netns, NULL))
		return -EIO;
	snprintf(cidr, sizeof(cidr), "%s", vm->ip.text);
	if (td_runv(err, errlen, "ip", "-n", vm->netns, "link", "set", "lo", "up", NULL) ||
	    td_runv(err, errlen, "ip", "link", "add", vm->veth, "netns", cfg->fabric_ns, "type",
		    "veth", "peer", "name", "eth0", "netns", vm->netns, NULL) ||
	    td_runv(err, errlen, "ip", "-n", cfg->fabric_ns, "link", "set", vm->veth, "master",
		    cfg->bridge, "up", NULL) ||
	    td_runv(err, errlen, "ip", "-n", vm->netns, "addr", "add", cidr, "dev", "eth0",
		    vm->ip.family == AF_INET6 ? "nodad" : NULL, NULL) ||
	    td_runv(err, errlen, "ip", "-n", vm->netns, "link", "set", "eth0", "up", NULL)) {
		rc = -EIO;
		goto out_destroy;
	}
	rc = td_vm_start_toe(cfg, vm, err, errlen);
	if (rc)
		goto out_destroy;
	return 0;

out_destroy:
	td_vm_destroy(cfg, vm);
	return rc;
}

void td_vm_destroy(const struct td_config *cfg, struct td_vm *vm)
{
	stop_toe(vm);
	if (cfg->have_cg) {
		struct cg_group g = { .root = &cfg->cg };

		snprintf(g.rel, sizeof(g.rel), "%s", vm->cgroup);
		/* the TOE just got SIGKILL: its group empties when it is gone */
		for (int i = 0; i < 100 && cg_destroy(&g) == -EBUSY; i++)
			usleep(10000);
		/* The fabric's parent group goes with its last VM. */
		snprintf(g.rel, sizeof(g.rel), "tochain/%s", cfg->fabric_ns);
		if (cg_destroy(&g) == 0) {
			snprintf(g.rel, sizeof(g.rel), "tochain");
			cg_destroy(&g);
		}
	}
	/* Deleting the namespace deletes eth0, and with it its veth peer. */
	if (ns_exists(vm->netns))
		td_runv(NULL, 0, "ip", "netns", "del", vm->netns, NULL);
	td_runv(NULL, 0, "ip", "-n", cfg->fabric_ns, "link", "del", vm->veth, NULL);
	unlink(vm->region);
	{
		char sock[PATH_MAX + 8];

		snprintf(sock, sizeof(sock), "%s.sock", vm->region);
		unlink(sock);
	}
}

/* --- the VM commands, and the repair of VMs run by libvirt (td_priv.h) --- */

#define LINK_RETRY_MS 2000

static json_t *vm_json_live(const struct td_vm *vm)
{
	json_t *o = td_vm_json(vm);

	json_object_set_new(o, "toe", json_string(td_vm_toe_alive(vm) ? "running" : "down"));
	if (vm->domain[0]) {
		char sock[PATH_MAX + 8];

		json_object_set_new(o, "link", json_string(td_link_alive(vm) ? "running" : "down"));
		td_link_socket(vm, sock, sizeof(sock));
		if (vm->wait == TD_WAIT_DOORBELL)
			json_object_set_new(o, "link_socket", json_string(sock));
	}
	return o;
}

static void vm_shm_name(struct daemon *d, const struct td_vm *vm, char *out, size_t len)
{
	td_libvirt_shm_name(d->cfg->fabric_ns, vm->name, out, len);
}

/* vm.show of a VM with a domain: its vCPU threads, asked live. */
static void vm_json_domain(struct daemon *d, const struct td_vm *vm, json_t *o)
{
	pid_t tids[TD_LIBVIRT_MAX_VCPUS];
	json_t *a = json_array();
	char err[512] = "";
	int n = -ENOTCONN;

	if (d->lv)
		n = td_libvirt_vcpu_tids(d->lv, vm->domain, tids, TD_LIBVIRT_MAX_VCPUS,
					 err, sizeof(err));
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(tids[i]));
	json_object_set_new(o, "vcpu_tids", a);
	if (n < 0)
		json_object_set_new(o, "domain_error", json_string(err[0] ? err : strerror(-n)));
	if (td_cpusched_vm_note(d, vm->name))
		json_object_set_new(o, "sched", json_string(td_cpusched_vm_note(d, vm->name)));
}

static void vm_detach_domain(struct daemon *d, const struct td_vm *vm)
{
	char shm[128], err[512] = "";

	if (!vm->domain[0] || !d->lv)
		return;
	vm_shm_name(d, vm, shm, sizeof(shm));
	if (td_libvirt_detach(d->lv, vm, shm, err, sizeof(err)))
		td_log("vm %s: %s", vm->name, err);
}

static void replug_mark(struct daemon *d, const struct td_vm *vm, bool on)
{
	int slot = -1;

	for (int i = 0; i < TD_MAX_VMS; i++) {
		if (!strcmp(d->replug[i].vm, vm->name)) {
			d->replug[i].vm[0] = '\0';
			slot = i;
		} else if (slot < 0 && !d->replug[i].vm[0]) {
			slot = i;
		}
	}
	if (on && slot >= 0) {
		strcpy(d->replug[slot].vm, vm->name);
		d->replug[slot].next_ms = 0;
	}
}

/*
 * Plug @vm's device again: a new link (doorbell mode: QEMU's connection
 * to the old server is gone for good) or a new region file.  The unplug
 * needs the guest (td_libvirt.h); an attach that libvirt refuses because
 * the old device is still there is retried every LINK_RETRY_MS.
 */
void td_vm_replug_tick(struct daemon *d)
{
	long long now = (long long)tu_now_ms();

	for (int i = 0; i < TD_MAX_VMS; i++) {
		struct td_vm *vm;
		char shm[128], err[512] = "";

		if (!d->replug[i].vm[0] || d->replug[i].next_ms > now)
			continue;
		vm = td_state_find_vm(&d->st, d->replug[i].vm);
		if (!vm || !vm->domain[0] || !d->lv) {
			d->replug[i].vm[0] = '\0';
			continue;
		}
		if (!td_link_alive(vm)) {
			d->replug[i].next_ms = now + LINK_RETRY_MS;
			continue;	/* the link first */
		}
		vm_shm_name(d, vm, shm, sizeof(shm));
		/* a device still plugged holds the old server: take it out */
		if (d->replug[i].next_ms == 0)
			vm_detach_domain(d, vm);
		if (td_libvirt_attach(d->lv, vm, shm, err, sizeof(err))) {
			td_log("vm %s: plugging the region again: %s (retrying)", vm->name, err);
			d->replug[i].next_ms = now + LINK_RETRY_MS;
			continue;
		}
		td_log("vm %s: region plugged again into domain %s", vm->name, vm->domain);
		d->replug[i].vm[0] = '\0';
	}
}

/*
 * A domain VM whose link is not running (it died, or the daemon finds it
 * gone): start it again; in doorbell mode the device then needs plugging
 * again.  Only while the TOE runs (the link needs it); retried every
 * LINK_RETRY_MS.
 */
void td_vm_link_repair(struct daemon *d, struct td_vm *vm, long long *next_ms)
{
	char err[512] = "";
	long long now = (long long)tu_now_ms();

	if (!vm->domain[0] || vm->wait == TD_WAIT_NONE || td_link_alive(vm) ||
	    !td_vm_toe_alive(vm) || *next_ms > now)
		return;
	td_log("vm %s: VM link %s, starting it", vm->name,
	       vm->link_pid ? "died" : "not running");
	td_link_stop(d->cfg, vm);	/* its socket and cgroup */
	if (td_link_start(d->cfg, vm, err, sizeof(err))) {
		td_log("vm %s: %s", vm->name, err);
		*next_ms = now + LINK_RETRY_MS;
		td_save(d);
		return;
	}
	*next_ms = 0;
	td_save(d);
	if (vm->wait == TD_WAIT_DOORBELL)
		replug_mark(d, vm, true);
}

json_t *td_vm_cmd_add(struct daemon *d, json_t *args)
{
	const char *name, *ip, *domain, *wait, *why = NULL;
	struct td_vm vm;
	char err[512] = "";
	int bad = 0;

	name = td_arg_str(args, "name", &bad);
	ip = td_arg_str(args, "ip", &bad);
	if (bad || !name || !ip)
		return ctl_reply_fail("vm add: NAME and --ip ADDR/PREFIX are required");
	memset(&vm, 0, sizeof(vm));
	if (!td_name_valid(name, &why))
		return ctl_reply_fail("vm name '%s' %s", name, why);
	strcpy(vm.name, name);
	if (td_addr_parse(ip, &vm.ip, &why))
		return ctl_reply_fail("--ip '%s': %s", ip, why);
	if (td_vm_sizes_from_json(args, &vm, err, sizeof(err)))
		return ctl_reply_fail("vm '%s': %s", name, err);
	if (td_state_find_vm(&d->st, name))
		return ctl_reply_fail("vm '%s' already exists", name);
	for (unsigned int i = 0; i < d->st.nvms; i++)
		if (d->st.vms[i].ip.family == vm.ip.family &&
		    !memcmp(d->st.vms[i].ip.addr, vm.ip.addr, 16))
			return ctl_reply_fail("--ip %s is already used by vm '%s'", vm.ip.text,
				    d->st.vms[i].name);
	if (d->st.nvms >= TD_MAX_VMS)
		return ctl_reply_fail("too many VMs (at most %d)", TD_MAX_VMS);
	/* libvirt: the region becomes a <shmem> device of this domain */
	domain = td_arg_str(args, "domain", &bad);
	if (bad || (domain && !td_domain_valid(domain, &why)))
		return ctl_reply_fail("--domain '%s' %s", domain ? domain : "", bad ? "is not a string" : why);
	if (domain) {
		if (!td_libvirt_size_valid(vm.region_size))
			return ctl_reply_fail("--domain: the region size must be a power of two, at least 1M");
		for (unsigned int i = 0; i < d->st.nvms; i++)
			if (!strcmp(d->st.vms[i].domain, domain))
				return ctl_reply_fail("--domain %s is already used by vm '%s'", domain,
					    d->st.vms[i].name);
		if (td_state_domain_vnf(&d->st, domain))
			return ctl_reply_fail("--domain %s runs vnf %s", domain,
					      td_state_domain_vnf(&d->st, domain)->name);
		strcpy(vm.domain, domain);
	}
	/* how the guest waits: the link's mode and the device's model */
	wait = td_arg_str(args, "wait", &bad);
	if (bad || (wait && (!domain || td_wait_parse(wait, &vm.wait))))
		return ctl_reply_fail("--wait %s", !domain ? "needs --domain" :
				      "must be doorbell or poll");
	if (domain && !wait)
		vm.wait = TD_WAIT_DOORBELL;
	/* who in a stand-in VM may use the runtime (td_guest.h) */
	if (td_guest_from_json(args, true, &vm.guest_mode, vm.guest_group, err, sizeof(err)))
		return ctl_reply_fail("vm '%s': --%s", name, err);
	if (domain && (vm.guest_mode || vm.guest_group[0]))
		return ctl_reply_fail("vm '%s': --guest-mode/--guest-group are for a stand-in VM; "
				      "a libvirt guest's users are set by its driver's node_mode",
				      name);
	if (domain && !d->lv && !(d->lv = td_libvirt_create(d->libvirt_uri)))
		return ctl_reply_fail("vm '%s': out of memory", name);
	if (td_vm_create(d->cfg, &vm, err, sizeof(err)))
		return ctl_reply_fail("vm '%s': %s", name, err);
	td_toe_ready(&vm);	/* a new VM has no chains yet */
	if (domain) {
		char shm[128];

		if (td_link_start(d->cfg, &vm, err, sizeof(err))) {
			td_link_stop(d->cfg, &vm);
			td_vm_destroy(d->cfg, &vm);
			return ctl_reply_fail("vm '%s': %s", name, err);
		}
		vm_shm_name(d, &vm, shm, sizeof(shm));
		if (td_libvirt_attach(d->lv, &vm, shm, err, sizeof(err))) {
			td_link_stop(d->cfg, &vm);
			td_vm_destroy(d->cfg, &vm);
			return ctl_reply_fail("vm '%s': %s", name, err);
		}
	}
	d->st.vms[d->st.nvms++] = vm;
	if (td_save(d)) {
		d->st.nvms--;
		vm_detach_domain(d, &vm);
		td_link_stop(d->cfg, &vm);
		td_vm_destroy(d->cfg, &vm);
		return ctl_reply_fail("vm '%s': cannot save the state", name);
	}
	td_log("vm %s added: %s in %s, TOE pid %d", vm.name, vm.ip.text, vm.netns, (int)vm.toe_pid);
	return ctl_reply_ok(vm_json_live(&vm));
}

json_t *td_vm_cmd_del(struct daemon *d, json_t *args)
{
	int bad = 0;
	const char *name = td_arg_str(args, "name", &bad);
	struct td_vm *vm, gone;

	if (bad || !name)
		return ctl_reply_fail("vm del: NAME is required");
	vm = td_state_find_vm(&d->st, name);
	if (!vm)
		return ctl_reply_fail("no vm named '%s'", name);
	if (td_state_vm_chain(&d->st, name))
		return ctl_reply_fail("vm %s has chain %s: delete its chains first", name,
				      td_state_vm_chain(&d->st, name)->name);
	gone = *vm;
	*vm = d->st.vms[--d->st.nvms];
	if (td_save(d)) {
		d->st.vms[d->st.nvms++] = gone;
		return ctl_reply_fail("vm '%s': cannot save the state", name);
	}
	/* the device first (the guest lets it go), then its server */
	vm_detach_domain(d, &gone);
	replug_mark(d, &gone, false);
	if (gone.domain[0])
		td_link_stop(d->cfg, &gone);
	td_vm_destroy(d->cfg, &gone);
	td_log("vm %s deleted", name);
	return ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

json_t *td_vm_cmd_show(struct daemon *d, json_t *args)
{
	int bad = 0;
	const char *name = td_arg_str(args, "name", &bad);
	struct td_vm *vm;
	json_t *o;

	if (bad || !name)
		return ctl_reply_fail("vm show: NAME is required");
	vm = td_state_find_vm(&d->st, name);
	if (!vm)
		return ctl_reply_fail("no vm named '%s'", name);
	o = vm_json_live(vm);
	if (vm->domain[0])
		vm_json_domain(d, vm, o);
	return ctl_reply_ok(o);
}

json_t *td_vm_cmd_ls(struct daemon *d, json_t *args)
{
	json_t *a = json_array();

	(void)args;
	for (unsigned int i = 0; i < d->st.nvms; i++)
		json_array_append_new(a, vm_json_live(&d->st.vms[i]));
	return ctl_reply_ok(json_pack("{s:o}", "vms", a));
}

/* After a (re)start: every VM of the state gets its container and TOE back. */
void td_vm_reconcile(struct daemon *d)
{
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		struct td_vm *vm = &d->st.vms[i];
		char err[512];
		char nsp[128];

		if (td_vm_toe_alive(vm))
			continue;
		snprintf(nsp, sizeof(nsp), "/run/netns/%s", vm->netns);
		if (access(nsp, F_OK)) {
			struct td_vm fresh = *vm;

			td_log("vm %s: container missing, rebuilding it", vm->name);
			if (td_vm_create(d->cfg, &fresh, err, sizeof(err)) == 0) {
				*vm = fresh;
				/* a new region file: the link (below) and the device anew */
				if (vm->domain[0]) {
					td_link_stop(d->cfg, vm);
					replug_mark(d, vm, true);
				}
			} else {
				td_log("vm %s: %s", vm->name, err);
			}
		} else {
			td_log("vm %s: TOE not running, restarting it", vm->name);
			if (td_vm_start_toe(d->cfg, vm, err, sizeof(err)))
				td_log("vm %s: %s", vm->name, err);
		}
	}
	/* links that died with or without the daemon (the device then anew) */
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		long long next = 0;

		td_vm_link_repair(d, &d->st.vms[i], &next);
	}
	td_save(d);
}

bool td_vm_toe_repair(struct daemon *d, struct td_vm *vm)
{
	char err[512] = "";

	if (!vm->toe_pid || td_vm_toe_alive(vm))
		return false;
	td_log("vm %s: TOE (pid %d) died, restarting it", vm->name, (int)vm->toe_pid);
	if (td_vm_start_toe(d->cfg, vm, err, sizeof(err)))
		td_log("vm %s: %s", vm->name, err);
	td_save(d);
	return td_vm_toe_alive(vm);
}
