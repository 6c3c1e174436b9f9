/* SPDX-License-Identifier: MIT */
/*
 * VNF processes (td_inst_*) and rules files (td_rules_*).
 *
 * An instance is one tochain-vnf process serving the chains of one VM
 * (spec: one process per (VNF, VM) pair).  It is started detached from
 * tochaind (own session, not a child that dies with the daemon) in the
 * cgroup tochain/FABRIC/vnf-NAME-VM, with its output in
 * STATE_DIR/vnf-NAME-VM.log.  A pid is trusted to be the instance only
 * while its command line is tochain-vnf's with the instance's region
 * path (a reused pid would not carry it).  A VNF that runs in a
 * libvirt domain (td_grant.h) has no process here.
 *
 * The rules a VNF runs with are tochaind's own copy,
 * STATE_DIR/rules/NAME.rules, replaced atomically when the user's file
 * is applied again; a later edit of the user's file changes nothing
 * until then.
 */
#ifndef TOCHAIN_TD_INST_H
#define TOCHAIN_TD_INST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "td_vm.h"

/* The region file of VNF @vnf in @vm's TOE: "R.vnf-NAME". */
void td_inst_region(const struct td_vm *vm, const char *vnf, char *out, size_t len);

/* STATE_DIR/rules/NAME.rules */
void td_rules_copy_path(const struct td_config *cfg, const char *vnf, char *out, size_t len);

/* STATE_DIR/rules/NAME.vars: the copy of an ids VNF's variables file */
void td_vars_copy_path(const struct td_config *cfg, const char *vnf, char *out, size_t len);

/*
 * Is @v's rules file (with its variables file) one its instances can run?
 * Copies of both, alone in a directory of the state dir as the instances'
 * copies are, go through `tochain-vnf --check`: the engine's own load.
 * 0: usable (or no rules).  -EINVAL: refused, @err names the first
 * problem's file:line in the user's file and *@problems (new reference)
 * lists all.  Other -errno: the check could not run (@err says why).
 */
int td_rules_check(const struct td_config *cfg, const struct td_vnf *v, json_t **problems,
		   char *err, size_t errlen);

/* Start tochain-vnf for @v on @region.  0 with *@pid, or -errno with @err. */
int td_inst_spawn(const struct td_config *cfg, const struct td_vnf *v, const struct td_vm *vm,
		  const char *region, pid_t *pid, char *err, size_t errlen);

/* The last non-empty line of the log of instance (@vnf, @vm), "" if none. */
void td_inst_last_error(const struct td_config *cfg, const char *vnf, const char *vm, char *out,
			size_t len);

/* Is @pid a live tochain-vnf serving @region? */
bool td_inst_alive(pid_t pid, const char *region);

/* SIGTERM (SIGKILL after 1 s) @pid if it is the instance of @region, and
 * remove its cgroup.  Idempotent. */
void td_inst_stop(const struct td_config *cfg, pid_t pid, const char *region, const char *vnf,
		  const char *vm);

/*
 * The nftables half of a fw VNF (vnfs/fw/README.md): put the rules copy of
 * @v into @vm's TOE namespace as table inet tochain_fw (@v NULL: remove
 * that table; idempotent).  One table per namespace: the last fw VNF
 * applied to a VM wins.  0 or -errno with @err.
 */
int td_fw_nft(const struct td_config *cfg, const struct td_vnf *v, const struct td_vm *vm,
	      char *err, size_t errlen);

/* Run tochain-vnf --calibrate --json for @v; *@pps = the measured f. */
int td_vnf_calibrate(const struct td_config *cfg, const struct td_vnf *v, uint64_t *pps,
		     char *err, size_t errlen);

/* Read a whole file of at most 16 MiB.  Returns a malloc'd buffer (NUL
 * terminated, *@len bytes) or NULL with errno set. */
char *td_read_file(const char *path, size_t *len);

/* Write @len bytes to @path atomically (temporary file, rename). */
int td_write_file(const char *path, const char *data, size_t len);

#endif
