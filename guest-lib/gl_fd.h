/* SPDX-License-Identifier: MIT */
/*
 * Private header of the guest runtime: the fd table (gl_fd.c), which maps
 * an fd to the socket object it names, and the placeholder fds of
 * offloaded sockets.  Its threading rules are at the top of gl_fd.c.
 */
#ifndef TOCHAIN_GL_FD_H
#define TOCHAIN_GL_FD_H

#include <stdbool.h>
#include <stdint.h>

#include <tochain/srpc.h>

struct gl_sock;

/* Socket of fd @fd, or NULL (no lock needed). */
struct gl_sock *gl_fd_sock(int fd);
/* Set/clear the table entry (mu held). */
void gl_fd_set(int fd, struct gl_sock *s);
/* fds at or above this are never offloaded. */
int gl_fd_max(void);
/* Allocate the table once (mu held): 0 or -ENOMEM. */
int gl_fd_table_init(void);
/*
 * A new fd naming @s (a placeholder memfd holding @s's secret, sealed),
 * taking a reference: the fd or -errno (mu held).
 */
int gl_fd_new(struct gl_sock *s, bool cloexec);
/* A new random secret for a socket about to be made (srpc.h): false without one. */
bool gl_fd_secret_new(uint8_t secret[SRPC_SECRET_LEN]);
/* The secret placeholder @fd holds: false if it holds none. */
bool gl_fd_secret_read(int fd, uint8_t secret[SRPC_SECRET_LEN]);

#endif /* TOCHAIN_GL_FD_H */
