// SPDX-License-Identifier: MIT
/* The VM link of a libvirt VM; see td_link.h. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "td_link.h"
#include "tochain/util.h"

#define LINK_READY_MS 15000

const char *td_wait_name(enum td_wait w)
{
	switch (w) {
	case TD_WAIT_DOORBELL: return "doorbell";
	case TD_WAIT_POLL: return "poll";
	default: return "none";
	}
}

int td_wait_parse(const char *s, enum td_wait *w)
{
	if (!strcmp(s, "doorbell"))
		*w = TD_WAIT_DOORBELL;
	else if (!strcmp(s, "poll"))
		*w = TD_WAIT_POLL;
	else
		return -EINVAL;
	return 0;
}

static void link_cgroup(const struct td_config *cfg, const struct td_vm *vm, char *out,
			size_t len)
{
	snprintf(out, len, "tochain/%s/link-%s", cfg->fabric_ns, vm->name);
}

bool td_link_alive(const struct td_vm *vm)
{
	/* A reused pid would not carry our region path. */
	return tu_proc_runs(vm->link_pid, "tochain-vmlink", vm->region);
}

/* QEMU runs as libvirt's user: it must be able to reach REGION.ivs. */
static int dir_searchable(const struct td_vm *vm, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", vm->region);
	if (stat(dirname(dir), &st) || ((st.st_mode & 0011) != 0011 &&
					 chmod(dir, (st.st_mode & 07777) | 0011))) {
		snprintf(err, errlen, "region directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int td_link_start(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen)
{
	char logp[PATH_MAX + 32], sock[PATH_MAX + 8], cgrel[160], slots[16], c;
	bool doorbell = vm->wait == TD_WAIT_DOORBELL;
	int ready[2], rc;
	struct pollfd p;
	pid_t pid;

	if (vm->wait == TD_WAIT_NONE) {
		snprintf(err, errlen, "vm %s has no wait mode", vm->name);
		return -EINVAL;
	}
	if (access(cfg->vmlink_path, X_OK)) {
		snprintf(err, errlen, "cannot run the VM link %s: %s", cfg->vmlink_path,
			 strerror(errno));
		return -ENOENT;
	}
	if (doorbell && (rc = dir_searchable(vm, err, errlen)))
		return rc;
	snprintf(logp, sizeof(logp), "%s/link-%s.log", cfg->state_dir, vm->name);
	td_link_socket(vm, sock, sizeof(sock));
	link_cgroup(cfg, vm, cgrel, sizeof(cgrel));
	snprintf(slots, sizeof(slots), "%d", TD_LINK_SLOTS);
	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0) {
		int logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		struct cg_group g;

		setsid();
		if (cfg->have_cg && cg_create(&cfg->cg, cgrel, &g) == 0)
			cg_attach_pid(&g, getpid());
		if (logfd >= 0) {
			dup2(logfd, 1);
			dup2(logfd, 2);
		}
		/* fd 3 in the link is the ready pipe (cleared close-on-exec) */
		dup2(ready[1], 3);
		fcntl(3, F_SETFD, 0);
		if (doorbell)
			execl(cfg->vmlink_path, "tochain-vmlink", "--region", vm->region,
			      "--doorbell", sock, "--slots", slots, "--follow", "--verbose",
			      "--ready-fd", "3", (char *)NULL);
		else
			execl(cfg->vmlink_path, "tochain-vmlink", "--region", vm->region,
			      "--slots", slots, "--follow", "--verbose", "--ready-fd", "3",
			      (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	if (pid < 0) {
		rc = -errno;
		close(ready[0]);
		return rc;
	}
	p.fd = ready[0];
	p.events = POLLIN;
	if (poll(&p, 1, LINK_READY_MS) != 1 || read(ready[0], &c, 1) != 1) {
		close(ready[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "the VM link of %s did not start (see %s)", vm->name, logp);
		return -EIO;
	}
	close(ready[0]);
	vm->link_pid = pid;
	return 0;
}

void td_link_stop(const struct td_config *cfg, struct td_vm *vm)
{
	char sock[PATH_MAX + 8];

	/* reaped when it is our child (not after a tochaind restart) */
	tu_proc_stop(vm->link_pid, "tochain-vmlink", vm->region, 1000);
	vm->link_pid = 0;
	td_link_socket(vm, sock, sizeof(sock));
	unlink(sock);
	if (cfg->have_cg) {
		struct cg_group g = { .root = &cfg->cg };

		link_cgroup(cfg, vm, g.rel, sizeof(g.rel));
		for (int i = 0; i < 100 && cg_destroy(&g) == -EBUSY; i++)
			usleep(10000);
	}
}
