/* SPDX-License-Identifier: MIT */
/*
 * tochaind's state (td_state_*): the VMs it owns, and (later) VNFs,
 * chains and SLAs.  Persisted as one JSON file written atomically (write
 * to a temporary file, fsync, rename, fsync the directory) so that a
 * crash at any point leaves either the old or the new state; reloaded at
 * start with every field validated as if it came from outside.
 */
#ifndef TOCHAIN_TD_STATE_H
#define TOCHAIN_TD_STATE_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define TD_NAME_MAX 13		/* VM names: [a-z0-9-], 1..12 chars (interface names) */
#define TD_MAX_VMS 256
#define TD_DOMAIN_MAX 64	/* libvirt domain names: 1..63 of [A-Za-z0-9._+-] */

struct td_addr {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned int prefix;
	char text[64];		/* canonical "ADDR/PREFIX" */
};

struct td_vm {
	char name[TD_NAME_MAX];
	struct td_addr ip;
	uint64_t region_size;	/* bytes */
	char netns[64];		/* the TOE container's network namespace */
	char veth[16];		/* its port on the fabric bridge */
	char cgroup[128];	/* its cgroup, relative to the hierarchy root */
	char region[PATH_MAX];	/* backing file of the region */
	pid_t toe_pid;		/* 0 when not running */
	char domain[TD_DOMAIN_MAX];	/* its libvirt domain, or "" (td_libvirt.h) */
};

struct td_state {
	struct td_vm vms[TD_MAX_VMS];
	unsigned int nvms;
};

/* Is @name a valid VM name?  On false, @why says why. */
bool td_name_valid(const char *name, const char **why);

/* Is @name an acceptable libvirt domain name?  On false, @why says why. */
bool td_domain_valid(const char *name, const char **why);

/* Parse "ADDR/PREFIX" (IPv4 or IPv6).  0, or -EINVAL with @why set. */
int td_addr_parse(const char *s, struct td_addr *a, const char **why);

/* Parse a size with optional K/M/G suffix (powers of 1024). */
int td_size_parse(const char *s, uint64_t *out);

struct td_vm *td_state_find_vm(struct td_state *st, const char *name);

json_t *td_vm_json(const struct td_vm *vm);

/* Load @path into @st; a missing file is an empty state.  0 or -errno with @err. */
int td_state_load(const char *path, struct td_state *st, char *err, size_t errlen);

/* The same from @len bytes of text; @name is used in messages. */
int td_state_parse(const char *text, size_t len, const char *name, struct td_state *st,
		   char *err, size_t errlen);

/* Save atomically.  0 or -errno. */
int td_state_save(const char *path, const struct td_state *st);

#endif
