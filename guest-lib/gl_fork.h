/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: fork (gl_fork.c), the
 * pthread_atfork handlers.  They take and release mu themselves.
 */
#ifndef TOCHAIN_GL_FORK_H
#define TOCHAIN_GL_FORK_H

/*
 * The parent attaches the child's channel and has the TOE give it every
 * socket (FORK) before fork(); the child uses it.  prepare returns with
 * mu held, parent and child release it.
 */
void gl_fork_prepare(void);
void gl_fork_parent(void);
void gl_fork_child(void);

#endif /* TOCHAIN_GL_FORK_H */
