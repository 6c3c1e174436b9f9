// SPDX-License-Identifier: MIT
/* VM plumbing; see td_vm.h. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tochain/region.h>

#include "td_exec.h"
#include "td_link.h"
#include "td_vm.h"
#include "tochain/util.h"

#define TOE_SLOT_SIZE 2048
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
	return 0;
}

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
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
 * The most buffers whose region (the TOE's geometry: slots, descriptors,
 * TD_TOE_CHANNELS channels with their rings) fits in @size bytes, at
 * least 64.  It must fit: a libvirt VM's ivshmem-plain BAR is @size
 * bytes, and a region larger than its BAR is of no use to the guest.
 */
static uint32_t toe_nbufs(uint64_t size)
{
	struct tcr_params p = { .name = "x", .kind = TCR_KIND_GUEST, .slot_size = TOE_SLOT_SIZE,
				.nchannels = TD_TOE_CHANNELS };
	struct tcr_geometry g;
	uint32_t lo = 64, hi = 1u << 20;

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

int td_vm_start_toe(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen)
{
	char nsp[128], logp[PATH_MAX + 32], nbufs[32], slot[32], chans[16], c;
	uint64_t n = toe_nbufs(vm->region_size);
	int ready[2], nsfd;
	struct pollfd p;
	pid_t pid;

	snprintf(nbufs, sizeof(nbufs), "%llu", (unsigned long long)n);
	snprintf(slot, sizeof(slot), "%d", TOE_SLOT_SIZE);
	/* room for a libvirt VM's link (td_link.h): the TOE's default, said here */
	snprintf(chans, sizeof(chans), "%d", TD_TOE_CHANNELS);
	snprintf(nsp, sizeof(nsp), "/run/netns/%s", vm->netns);
	snprintf(logp, sizeof(logp), "%s/toe-%s.log", cfg->state_dir, vm->name);
	if (access(cfg->toe_path, X_OK)) {
		snprintf(err, errlen, "cannot run the TOE %s: %s", cfg->toe_path, strerror(errno));
		return -ENOENT;
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
		execl(cfg->toe_path, "tochain-toe", "--region", vm->region, "--name", vm->name,
		      "--nbufs", nbufs, "--slot-size", slot, "--channels", chans, "--ready-fd", "3",
		      (char *)NULL);
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
