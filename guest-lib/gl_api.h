/* SPDX-License-Identifier: MIT */
/* Private to guest-lib's interposers (gl_api.c, gl_api_wait.c). */
#ifndef TOCHAIN_GL_API_H
#define TOCHAIN_GL_API_H

#include <errno.h>

#include "gl_fd.h"
#include "gl_real.h"

/*
 * Is @fd one of ours?  Resolves libc's entry points first: another
 * library's constructor (libcap-ng's, in setpriv) may call read() before
 * ours has run, and the pass-through that follows needs them.
 */
#define OFFLOADED(fd) (gl_real_init(), gl_fd_sock(fd) != NULL)

/* A runtime result (value or -errno) as libc returns it. */
static inline long ret_errno(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

#endif
