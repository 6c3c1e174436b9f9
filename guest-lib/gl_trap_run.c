// SPDX-License-Identifier: MIT
/*
 * Starting the trap path (gl_trap.h): tochain-run's side before it execs
 * the program, and the supervisor's entry point.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gl_trap.h"

/*
 * The numbers the supervisor hands out: the top 256 below the smaller of
 * RLIMIT_NOFILE and 1024 (select()'s FD_SETSIZE), where a program's own
 * lowest-first fds rarely reach; ADDFD can place an fd only below the
 * program's limit.
 */
static struct gl_trap_range trap_range(void)
{
	struct rlimit rl;
	long top = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	if (top >= 512)
		return (struct gl_trap_range){ .base = (int)top - 256, .count = 256 };
	return (struct gl_trap_range){ .base = (int)top / 2, .count = (int)(top - top / 2) };
}

static int send_fd(int sock, int fd)
{
	char c = 'l', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The grandchild: become the supervisor (never returns). */
static void supervisor_exec(int sock, const char *self, const char *preload, const char *region,
			    const struct gl_trap_range *r)
{
	char lfd[16], rfd[16], base[16], count[16];
	int l = recv_fd(sock), null;

	if (l < 0)
		_exit(1);
	setsid();
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 2)
			close(null);
	}
	/* Both survive the exec; the supervisor closes them. */
	if (fcntl(l, F_SETFD, 0) || fcntl(sock, F_SETFD, 0))
		_exit(1);
	snprintf(lfd, sizeof(lfd), "%d", l);
	snprintf(rfd, sizeof(rfd), "%d", sock);
	snprintf(base, sizeof(base), "%d", r->base);
	snprintf(count, sizeof(count), "%d", r->count);
	if (setenv("LD_PRELOAD", preload, 1) || setenv("TOCHAIN_REGION", region, 1))
		_exit(1);
	execl(self, "tochain-run", "--trap-serve", lfd, rfd, base, count, (char *)NULL);
	fprintf(stderr, "tochain-run: %s: %s\n", self, strerror(errno));
	_exit(1);
}

int gl_trap_launch(const char *self, const char *preload, const char *region)
{
	struct gl_trap_range r = trap_range();
	int sv[2], l, st, err;
	pid_t p;
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	p = fork();
	if (p < 0) {
		err = -errno;
		goto out_close;
	}
	if (p == 0) {
		close(sv[0]);
		if (fork() == 0)
			supervisor_exec(sv[1], self, preload, region, &r);
		_exit(0);
	}
	close(sv[1]);
	sv[1] = -1;
	waitpid(p, &st, 0);
	l = gl_trap_filter_install(&r);
	if (l == -EACCES || l == -EPERM) {
		/* Without CAP_SYS_ADMIN a filter needs no_new_privs (setuid programs then run unprivileged). */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
			l = gl_trap_filter_install(&r);
	}
	if (l < 0) {
		err = l;
		fprintf(stderr, "tochain-run: seccomp user notification: %s\n", strerror(-l));
		goto out_close;
	}
	err = send_fd(sv[0], l);
	close(l);
	if (!err && read(sv[0], &c, 1) != 1)
		err = -ECHILD;
	if (err)
		fprintf(stderr, "tochain-run: the trap path's supervisor did not start\n");
out_close:
	close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	return err;
}

int gl_trap_serve_main(int argc, char **argv)
{
	struct gl_trap_range r;
	int l, ready;

	if (argc != 6)
		return 2;
	l = atoi(argv[2]);
	ready = atoi(argv[3]);
	r.base = atoi(argv[4]);
	r.count = atoi(argv[5]);
	if (l < 0 || r.base <= 2 || r.count <= 0 || r.count > 4096)
		return 2;
	fcntl(l, F_SETFD, FD_CLOEXEC);
	fcntl(ready, F_SETFD, FD_CLOEXEC);
	return gl_trap_serve(l, ready, &r);
}
