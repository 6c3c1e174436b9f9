/* SPDX-License-Identifier: MIT */
/*
 * The trap path's stream relay (private to tochain-run): one thread
 * moves bytes between the supervisor's end of each socketpair and the
 * offloaded socket it stands for, both ways, with the runtime's poll.
 */
#ifndef GL_TRAP_RELAY_H
#define GL_TRAP_RELAY_H

/* Start the relay thread.  0 or -errno. */
int gl_trap_relay_init(void);

/*
 * Relay @off (an offloaded stream, non-blocking) and @a (our socketpair
 * end) until both directions reached EOF or one side failed; takes both
 * fds (the caller passes dups of what it keeps).  A write side that
 * reached EOF is shut down on the other side (FIN one way, EOF the
 * other); a failure shuts @a down both ways.  0 or -errno (fds closed).
 */
int gl_trap_relay_add(int off, int a);

/* Streams still relayed. */
int gl_trap_relay_count(void);

#endif
