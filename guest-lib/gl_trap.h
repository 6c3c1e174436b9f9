/* SPDX-License-Identifier: MIT */
/*
 * The trap path (private to tochain-run): programs the preload library
 * cannot reach (statically linked, Go, raw syscall()) get their socket
 * system calls served by a supervisor process through seccomp user
 * notification.  guest-lib/README.md "The trap path" says why this and
 * not Syscall User Dispatch, and what the program sees.
 *
 *   program (filtered)                      supervisor (runtime preloaded)
 *   socket(AF_INET, ...) ── notification ─► socket() offloaded to the TOE,
 *                        ◄─ fd N: one end    a socketpair, fd N placed in the
 *                           of a socketpair  program (SECCOMP_IOCTL_NOTIF_ADDFD)
 *   bind/listen/accept/connect/get-/setsockopt/getsockname/getpeername/close
 *   on fds [base, base+count) ── notifications ─► served on the TOE socket
 *   read/write/send/recv/poll/epoll on N: the kernel's, on the socketpair;
 *   the supervisor relays its end to the TOE socket and back.
 */
#ifndef GL_TRAP_H
#define GL_TRAP_H

/* The fd numbers the supervisor hands out: [base, base + count). */
struct gl_trap_range {
	int base;
	int count;
};

/*
 * In the program-to-be, single-threaded, right before exec: install the
 * filter that turns the socket system calls named above into
 * notifications.  Returns the listener fd (close-on-exec) or -errno
 * (-EPERM without CAP_SYS_ADMIN: call prctl(PR_SET_NO_NEW_PRIVS) first).
 */
int gl_trap_filter_install(const struct gl_trap_range *r);

/*
 * The supervisor: serves the notifications of @listener until no
 * process uses the filter any more and the relayed streams are flushed.
 * @ready_fd (or -1) gets one byte once it serves, then is closed.
 * Runs with the runtime preloaded, so its own socket calls are
 * offloaded.  Returns an exit status.
 */
int gl_trap_serve(int listener, int ready_fd, const struct gl_trap_range *r);

/*
 * In tochain-run, before it execs the program: choose the range, start
 * the supervisor (@self --trap-serve ..., with @preload and @region in
 * its environment; detached, in a session of its own, so that it is
 * nobody's child and no terminal signal stops it before the program),
 * install the filter in this process and hand the listener over.
 * Returns 0 once the supervisor serves, or -errno with a message on
 * stderr.  The filter stays installed across the exec that follows.
 */
int gl_trap_launch(const char *self, const char *preload, const char *region);

/* tochain-run --trap-serve LISTENER READY BASE COUNT: the supervisor's main. */
int gl_trap_serve_main(int argc, char **argv);

#endif
