// SPDX-License-Identifier: MIT
/*
 * The seccomp filter of the trap path (gl_trap.h): socket(AF_INET or
 * AF_INET6) and the socket calls whose first argument is an fd of the
 * supervisor's range become user notifications; everything else runs
 * as it would.  The range is the only thing that tells a placeholder
 * from the program's own fds, so the data calls (read, write, send,
 * recv, poll, epoll) never trap: they work on the socketpair end.
 *
 * Other architectures' calling conventions (x32, i386 via int 0x80)
 * are not trapped: a program using them gets a kernel socket, which in
 * a stand-in VM's loopback-only namespace fails as before.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gl_trap.h"

#if !defined(__x86_64__)
#error "the trap path's filter is written for x86_64"
#endif

/* The fd calls that trap; the data calls deliberately do not (above). */
static const unsigned int fd_calls[] = {
	__NR_bind, __NR_listen, __NR_accept, __NR_accept4, __NR_connect,
	__NR_getsockname, __NR_getpeername, __NR_getsockopt, __NR_setsockopt,
	__NR_close,
};

#define NFD (sizeof(fd_calls) / sizeof(fd_calls[0]))
#define ARG0_LO offsetof(struct seccomp_data, args[0])	/* little endian */

int gl_trap_filter_install(const struct gl_trap_range *r)
{
	/*
	 * Layout (k = index):
	 *  0 ld arch; 1 jeq x86_64 ? 3 : ALLOW; 2 (unused: ret ALLOW)
	 *  3 ld nr; 4 jeq socket ? 5 : 8
	 *  5 ld arg0; 6 jeq AF_INET ? NOTIFY : 7; 7 jeq AF_INET6 ? NOTIFY : ALLOW
	 *  8.. jeq fd_calls[i] ? FD : next; then ret ALLOW
	 *  FD: ld arg0; jge base ? next : ALLOW; jge base+count ? ALLOW : NOTIFY
	 *  NOTIFY: ret USER_NOTIF; ALLOW: ret ALLOW
	 */
	struct sock_filter f[8 + NFD + 1 + 3 + 2];
	unsigned int k = 0, fdblk = 8 + NFD + 1, notify = fdblk + 3, allow = notify + 1;
	struct sock_fprog prog;
	long fd;

#define AT(to) ((to) - k - 1)	/* a jump offset from instruction k */
	f[k] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, arch)); k++;
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0); k++;
	f[k] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); k++;
	f[k] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, nr)); k++;
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, AT(8)); k++;
	f[k] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO); k++;
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, AT(notify), 0); k++;
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, AT(notify),
					    AT(allow)); k++;
	for (unsigned int i = 0; i < NFD; i++, k++)
		f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fd_calls[i],
						    AT(fdblk), 0);
	f[k] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); k++;
	f[k] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO); k++;
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (unsigned int)r->base,
					    0, AT(allow)); k++;
	f[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
					    (unsigned int)(r->base + r->count), AT(allow),
					    AT(notify)); k++;
	f[k] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF); k++;
	f[k] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); k++;
#undef AT
	_Static_assert(sizeof(f) / sizeof(f[0]) == 8 + NFD + 1 + 3 + 2, "filter layout");

	prog.len = (unsigned short)k;
	prog.filter = f;
	fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : (int)fd;
}
