// SPDX-License-Identifier: MIT
/*
 * The conformance program (tests/conformance/conform.c): what its files
 * share.  conform.c has the helpers, the guest driver, the peer and main;
 * conform_stream.c the TCP stream checks (connect, data, bulk, close,
 * sendfile); conform_sockets.c the listener, epoll, exec, UDP, signal and
 * close_range checks; conform_errors.c bad pointers, lengths, options and
 * the MSG_* flags.  Every check prints one line (CHECK, SHOW).
 */
#ifndef CONFORM_H
#define CONFORM_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <linux/close_range.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern struct in_addr peer_ip;
extern int failures;

void line(const char *name, long r, int err);

#define CHECK(name, expr) do { errno = 0; long r_ = (long)(expr); line(name, r_, errno); } while (0)
#define SHOW(name, val) do { printf("%-34s %s\n", name, (val)); fflush(stdout); } while (0)

struct sockaddr_in peer(int port);
int connect_to(int port);
/* Wait until @fd has @events (bounded); the revents seen. */
short wait_ev(int fd, short events, int ms);
const char *bits(short r);

/* conform_stream.c */
void t_basic(void);
void t_connect(void);
void t_data(void);
void t_bulk(void);
void t_peer_close(void);
void t_sendfile(void);

/* conform_sockets.c */
/* Ask the peer to connect to our @port and do a ping/pong; the control fd. */
int ctrl_connect_back(int port);
void t_listen(void);
void t_epoll(void);
int exec_child(int fd);
void t_exec(void);
void t_passthrough(void);
void t_udp(void);
void t_signals(void);
void t_close_many(void);

/* conform_errors.c */
void t_errors(void);

#endif
