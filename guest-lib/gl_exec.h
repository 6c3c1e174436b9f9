/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: exec (gl_exec.c).
 */
#ifndef TOCHAIN_GL_EXEC_H
#define TOCHAIN_GL_EXEC_H

/*
 * In a new image (the constructor): adopt the sockets inherited across
 * exec and drop the old channel.  Takes mu itself.
 */
void gl_exec_adopt(void);

#endif /* TOCHAIN_GL_EXEC_H */
