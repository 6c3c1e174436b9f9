// SPDX-License-Identifier: MIT
/*
 * Recognising and stopping the programs tochaind starts (TOE, VM link, VNF
 * instances) by pid and command line.  A pid alone is not enough: after a
 * daemon restart it comes from the state file, and the kernel may have
 * given it to another process since.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tochain/util.h"

bool tu_proc_runs(pid_t pid, const char *prog, const char *arg)
{
	char path[64], cmd[8192];
	bool has_prog = false, has_arg = !arg;
	ssize_t n;
	int fd;

	if (pid <= 0 || kill(pid, 0))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)	/* a zombie has no command line */
		return false;
	cmd[n] = '\0';
	/* arguments are NUL-separated; the last one may lack its NUL */
	for (char *a = cmd; a < cmd + n; a += strlen(a) + 1) {
		if (strstr(a, prog))
			has_prog = true;
		if (arg && !strcmp(a, arg))
			has_arg = true;
	}
	return has_prog && has_arg;
}

/*
 * Reap @pid if it is our child: it stopped matching because it is exiting
 * (its command line is gone before it is a zombie), so this is brief.
 */
static void reap(pid_t pid)
{
	for (int i = 0; i < 200; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return;
		usleep(1000);
	}
}

bool tu_proc_stop(pid_t pid, const char *prog, const char *arg, int grace_ms)
{
	if (!tu_proc_runs(pid, prog, arg))
		return true;
	kill(pid, SIGTERM);
	for (int waited = 0; waited < grace_ms; waited += 10) {
		waitpid(pid, NULL, WNOHANG);
		if (!tu_proc_runs(pid, prog, arg)) {
			reap(pid);
			return true;
		}
		usleep(10000);
	}
	if (tu_proc_runs(pid, prog, arg))
		kill(pid, SIGKILL);
	for (int i = 0; i < 100; i++) {
		waitpid(pid, NULL, WNOHANG);
		if (!tu_proc_runs(pid, prog, arg)) {
			reap(pid);
			return true;
		}
		usleep(10000);
	}
	return false;
}
