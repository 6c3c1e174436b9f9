/* SPDX-License-Identifier: MIT */
/*
 * tochaind (td_daemon_*): owns the host's VMs, VNFs and chains, serves
 * the control protocol (include/tochain/ctl_proto.h) on a UNIX socket,
 * persists its state, and watches the TOEs.  This is the daemon's loop;
 * the objects and their commands are in the other td_*.c (td_priv.h).
 *
 * Threading: one thread; requests are served one at a time.  Every
 * request is validated completely before anything changes, so a refused
 * request changes nothing; a request that fails half-way undoes itself.
 */
#ifndef TOCHAIN_TD_DAEMON_H
#define TOCHAIN_TD_DAEMON_H

#include "td_vm.h"

/* Parse the command line into @cfg; prints usage and returns 2 on error. */
int td_daemon_parse(int argc, char **argv, struct td_config *cfg, int *foreground);

/* Run until SIGTERM/SIGINT.  Returns the process exit status. */
int td_daemon_run(struct td_config *cfg, int foreground);

#endif
