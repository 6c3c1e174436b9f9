/* SPDX-License-Identifier: MIT */
/*
 * tochain-vnf's agent mode (`--guest` without `--region`): inside a VNF
 * domain, serve every VNF region the host grants as a device of
 * tochain_ivshmem.ko, one child process per device.  See vnfs/runtime/README.md.
 */
#ifndef TOCHAIN_VNF_AGENT_H
#define TOCHAIN_VNF_AGENT_H

#include <stdbool.h>

#include <tochain/region_layout.h>

#include "vnf_serve.h"

#define VNF_AGENT_SCAN_MS	200	/* the device directory is read this often */
#define VNF_AGENT_RESTART_MS	1000	/* a device's child is restarted at most this often, */
#define VNF_AGENT_BACKOFF_MS	60000	/* doubling up to this while children fail quickly */
#define VNF_AGENT_STABLE_MS	5000	/* a child that lived this long resets the back-off */
#define VNF_AGENT_MAX		64	/* devices served at once */
#define VNF_AGENT_STOP_MS	5000	/* children get this long after SIGTERM, then SIGKILL */

/*
 * Is @path a device the agent serves: its node name @name matches
 * "*.vnf-*", its header validates (tcr_region_attach, TCR_ATTACH_HOST),
 * the region is TCR_KIND_HOST and its header name is @name?
 */
bool vnf_agent_servable(const char *path, const char *name);

/*
 * Run the agent over o->dev_dir with engines @es until SIGTERM/SIGINT
 * (call with SIGHUP, SIGTERM, SIGINT and SIGCHLD blocked, before any
 * thread exists: children are forked).  Each child runs vnf_serve() on
 * its device with the options @o (region replaced; a stats file gets the
 * suffix ".NAME").  SIGHUP reloads the agent's engines (for children to
 * come) and is passed on to every child.  Logs one stderr line per child
 * started and per child reaped.  A directory that is missing or
 * unreadable (the driver not loaded yet) is read again at the next scan.
 * Returns 0 after SIGTERM/SIGINT, children stopped and reaped.
 */
int vnf_agent(struct vnf_engines *es, const struct vnf_serve_opts *o);

#endif /* TOCHAIN_VNF_AGENT_H */
