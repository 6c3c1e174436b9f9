// SPDX-License-Identifier: MIT
/*
 * The fd table: fd -> socket object, and the placeholder fds that stand
 * for offloaded sockets (memfds named tochain-sock-<id>, so that fd
 * numbers, dup, close-on-exec, fork and exec are the kernel's).  A
 * placeholder holds its socket's secret (include/tochain/srpc.h), sealed
 * against writes: whoever the program hands the fd to, across fork and
 * exec, can prove to the TOE that it was given the socket (gl_exec.c).
 *
 * THREADS.  Every interposed call looks its fd up here, most of them for
 * ordinary fds, so lookups take no lock: the table is allocated once
 * (published with a store-release that pairs with the load-acquire in
 * gl_fd_sock) and never freed or moved, and each entry is written with a
 * store-release under mu and read with a load-acquire anywhere.  A
 * lookup without mu is only a hint (the fd may be closed meanwhile):
 * callers that act on the socket look it up again under mu (gl_api.c,
 * lock_sock).  Entries change only under mu.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gl_fd.h"
#include "gl_real.h"
#include "gl_sock.h"

static struct gl_sock **fds;
static int nfds_max;

struct gl_sock *gl_fd_sock(int fd)
{
	struct gl_sock **t = __atomic_load_n(&fds, __ATOMIC_ACQUIRE);

	if (!t || fd < 0 || fd >= nfds_max)
		return NULL;
	return __atomic_load_n(&t[fd], __ATOMIC_ACQUIRE);
}

int gl_fd_max(void)
{
	return nfds_max;
}

int gl_fd_table_init(void)
{
	struct rlimit rl;
	int n = 65536;
	struct gl_sock **t;

	if (fds)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    rl.rlim_max > (rlim_t)n)
		n = rl.rlim_max > (1u << 20) ? (1 << 20) : (int)rl.rlim_max;
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return -ENOMEM;
	nfds_max = n;
	__atomic_store_n(&fds, t, __ATOMIC_RELEASE);
	return 0;
}

void gl_fd_set(int fd, struct gl_sock *s)
{
	if (fds && fd >= 0 && fd < nfds_max)
		__atomic_store_n(&fds[fd], s, __ATOMIC_RELEASE);
}

int gl_fd_new(struct gl_sock *s, bool cloexec)
{
	char name[40];
	int fd;

	snprintf(name, sizeof(name), "tochain-sock-%u", s->id);
	fd = memfd_create(name, MFD_ALLOW_SEALING | (cloexec ? MFD_CLOEXEC : 0));
	if (fd < 0)
		return -errno;
	if (fd >= nfds_max) {
		gl_real.close(fd);
		return -EMFILE;
	}
	if (s->has_secret &&
	    (pwrite(fd, s->secret, SRPC_SECRET_LEN, 0) != SRPC_SECRET_LEN ||
	     gl_real.fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
			   F_SEAL_SEAL) != 0)) {
		gl_real.close(fd);
		return -ENOMEM;
	}
	if (s->nonblock)
		gl_real.fcntl(fd, F_SETFL, O_NONBLOCK);	/* F_GETFL shows it */
	s->refs++;
	gl_fd_set(fd, s);
	return fd;
}

bool gl_fd_secret_new(uint8_t secret[SRPC_SECRET_LEN])
{
	return getrandom(secret, SRPC_SECRET_LEN, GRND_NONBLOCK) == SRPC_SECRET_LEN;
}

bool gl_fd_secret_read(int fd, uint8_t secret[SRPC_SECRET_LEN])
{
	return pread(fd, secret, SRPC_SECRET_LEN, 0) == SRPC_SECRET_LEN;
}
