// SPDX-License-Identifier: MIT
/* Running helper programs; see td_exec.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "td_exec.h"
#include "tochain/util.h"

int td_run(char *const argv[], int timeout_ms, char *err, size_t errlen)
{
	int pipefd[2], st = 0;
	char buf[512];
	size_t len = 0;
	pid_t pid;
	uint64_t t0;

	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(pipefd[1], 2);
		execvp(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	t0 = tu_now_ms();
	for (;;) {
		struct pollfd p = { .fd = pipefd[0], .events = POLLIN };
		long elapsed;
		ssize_t n;

		elapsed = (long)(tu_now_ms() - t0);
		if (elapsed >= timeout_ms) {
			kill(pid, SIGKILL);
			snprintf(buf, sizeof(buf), "%s timed out", argv[0]);
			len = strlen(buf);
			break;
		}
		if (poll(&p, 1, (int)(timeout_ms - elapsed)) <= 0)
			continue;
		n = read(pipefd[0], buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len >= sizeof(buf) - 1) {
			/* Keep draining so the child never blocks on a full pipe. */
			char sink[512];

			while (read(pipefd[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	close(pipefd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	buf[len] = '\0';
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (err && errlen) {
		char *nl = strchr(buf, '\n');

		if (nl)
			*nl = '\0';
		snprintf(err, errlen, "%s: %s", argv[0], buf[0] ? buf : "failed");
	}
	return -1;
}

int td_runv(char *err, size_t errlen, const char *arg0, ...)
{
	char *argv[32];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)arg0;
	va_start(ap, arg0);
	while (n < 31 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	return td_run(argv, 10000, err, errlen);
}
