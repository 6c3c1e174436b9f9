/* SPDX-License-Identifier: MIT */
/*
 * tochaind's state (td_state_*): the VMs it owns, the VNF definitions,
 * the chains with their SLAs, and the running VNF instances (one process
 * per (VNF, VM) pair whose chains use it).  Persisted as one JSON file written atomically (write
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

#include "td_backoff.h"
#include "td_guest.h"

#define TD_NAME_MAX 13		/* VM names: [a-z0-9-], 1..12 chars (interface names) */
#define TD_MAX_VMS 256
#define TD_DOMAIN_MAX 64	/* libvirt domain names: 1..63 of [A-Za-z0-9._+-] */
/*
 * 64 MiB: 7.6k slots of 8 KiB, so that each of the TOE's 16 channels
 * keeps its 1 MiB of grants (host-toe/toe/toe.h, TOE_GRANT_BYTES) within
 * half the pool; 16 MiB halved them to 256 KiB (docs/EVALUATION.md,
 * "A process's grants: a 64 KiB response in one burst").
 */
#define TD_REGION_SIZE_DEFAULT (64ull << 20)
#define TD_REGION_SIZE_MIN (1ull << 20)
#define TD_REGION_SIZE_MAX (4ull << 30)
/*
 * Bytes per region slot (td_vm.c, td_vm_sizes_from_json): a power of two
 * in [MIN, MAX].  Without --slot-size: DEFAULT when the region still holds
 * TD_SLOT_BUFS_MIN buffers of it, else the largest smaller one that does,
 * at least MIN_AUTO.  State files from before slot sizes: OLD.
 */
#define TD_SLOT_SIZE_MIN 1024u
#define TD_SLOT_SIZE_MAX 65536u
#define TD_SLOT_SIZE_DEFAULT 8192u
#define TD_SLOT_SIZE_MIN_AUTO 2048u
#define TD_SLOT_SIZE_OLD 2048u
#define TD_SLOT_BUFS_MIN 1024u

/* A slot size a VM may have: a power of two in [MIN, MAX]. */
static inline bool td_slot_size_valid(long long v)
{
	return v >= TD_SLOT_SIZE_MIN && v <= TD_SLOT_SIZE_MAX && !(v & (v - 1));
}

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
	uint32_t slot_size;	/* bytes per region slot: one descriptor's payload */
	char netns[64];		/* the TOE container's network namespace */
	char veth[16];		/* its port on the fabric bridge */
	char cgroup[128];	/* its cgroup, relative to the hierarchy root */
	char region[PATH_MAX];	/* backing file of the region */
	pid_t toe_pid;		/* 0 when not running */
	char domain[TD_DOMAIN_MAX];	/* its libvirt domain, or "" (td_libvirt.h) */
	enum td_wait { TD_WAIT_NONE, TD_WAIT_DOORBELL, TD_WAIT_POLL } wait;	/* domain: td_link.h */
	pid_t link_pid;		/* domain: its tochain-vmlink, 0 when not running */
	unsigned int guest_mode;	/* no domain: the region's mode for the guest's
					 * users, 0: the TOE's default (td_guest.h) */
	char guest_group[TD_GROUP_MAX];	/* no domain: their group, "" none */
};

/* VNF and chain names: 1..32 of [a-z0-9_-] (the TOE's names). */
#define TD_OBJ_NAME_MAX 33
#define TD_MAX_VNFS 64
#define TD_MAX_CHAINS 128
#define TD_MAX_INSTS 256
#define TD_MAX_HOPS 8		/* hops of a chain (the TOE's limit) */
#define TD_MAX_PER_HOP 8	/* VNFs of one hop */
#define TD_MAX_THREADS 16	/* service threads of a VNF (VNF_MAX_THREADS) */
#define TD_MAX_VNF_ARGS 8	/* extra tochain-vnf options (--arg) */
#define TD_VNF_ARG_MAX 128
#define TD_MAX_RATE 1000000000ull	/* packets/s, for SLAs and f */

enum td_kind { TD_KIND_FW, TD_KIND_IDS, TD_KIND_WAF, TD_KIND_NULL };
enum td_dir { TD_DIR_IN = 0, TD_DIR_OUT = 1 };	/* = the TOE's chain id */

/* A VNF definition: no process until a chain uses it. */
struct td_vnf {
	char name[TD_OBJ_NAME_MAX];
	enum td_kind kind;
	unsigned int threads;		/* 1..TD_MAX_THREADS */
	bool fail_open;			/* --on-failure open (default closed) */
	uint64_t rate;			/* f given with --rate, 0: none */
	uint64_t calibrated;		/* f measured by vnf calibrate, 0: not yet */
	char rules[PATH_MAX];		/* the user's rules file (absolute), "" none */
	char vars[PATH_MAX];		/* ids: the user's variables file (absolute), "" none */
	unsigned int nargs;
	char args[TD_MAX_VNF_ARGS][TD_VNF_ARG_MAX];	/* passed to tochain-vnf */
	/* libvirt domain whose guest runs this VNF (td_grant.h), "" : a host process */
	char domain[TD_DOMAIN_MAX];
};

/* A chain: one per (VM, direction). */
struct td_chain {
	char name[TD_OBJ_NAME_MAX];
	char vm[TD_NAME_MAX];
	enum td_dir dir;
	uint64_t sla;			/* packets/s, 0: none */
	unsigned int nhops;
	unsigned int hop_len[TD_MAX_HOPS];
	char hop[TD_MAX_HOPS][TD_MAX_PER_HOP][TD_OBJ_NAME_MAX];
};

/*
 * A running VNF process serving the chains of one VM.  For a VNF in a
 * libvirt domain (@domain set) @pid is that domain's QEMU process (what
 * the TOE watches) and the grants of td_grant.h were given to it.
 */
struct td_inst {
	char vnf[TD_OBJ_NAME_MAX];
	char vm[TD_NAME_MAX];
	pid_t pid;
	char domain[TD_DOMAIN_MAX];	/* "" : a host tochain-vnf process */
	/* the daemon's own, not saved: restarts of a dying host instance */
	struct td_backoff bo;
	char last_error[256];		/* last line of its log when last seen dead */
};

struct td_state {
	struct td_vm vms[TD_MAX_VMS];
	unsigned int nvms;
	struct td_vnf vnfs[TD_MAX_VNFS];
	unsigned int nvnfs;
	struct td_chain chains[TD_MAX_CHAINS];
	unsigned int nchains;
	struct td_inst insts[TD_MAX_INSTS];
	unsigned int ninsts;
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
struct td_vnf *td_state_find_vnf(struct td_state *st, const char *name);
struct td_chain *td_state_find_chain(struct td_state *st, const char *name);
/* The chain of (@vm, @dir), or NULL. */
struct td_chain *td_state_find_dir(struct td_state *st, const char *vm, enum td_dir dir);
struct td_inst *td_state_find_inst(struct td_state *st, const char *vnf, const char *vm);
/* Drop instance @i (order is not kept). */
void td_state_drop_inst(struct td_state *st, struct td_inst *i);
/* Does @c use the VNF @vnf? */
bool td_chain_uses(const struct td_chain *c, const char *vnf);
/* Does some chain of @vm use @vnf? */
bool td_state_vm_uses(const struct td_state *st, const char *vm, const char *vnf);
/* A chain of VM @vm, or NULL (vm del is refused while one exists). */
struct td_chain *td_state_vm_chain(struct td_state *st, const char *vm);
/* The VNF that runs in libvirt domain @domain, or NULL. */
struct td_vnf *td_state_domain_vnf(struct td_state *st, const char *domain);
/* f of @v: --rate when given, else the calibrated value, else 0. */
uint64_t td_vnf_f(const struct td_vnf *v);

/* Is @name a valid VNF or chain name?  On false, @why says why. */
bool td_objname_valid(const char *name, const char **why);

const char *td_kind_name(enum td_kind k);
/* "fw", "ids", "waf", "null" -> kind; -EINVAL otherwise. */
int td_kind_parse(const char *s);
const char *td_dir_name(enum td_dir d);

json_t *td_vm_json(const struct td_vm *vm);
json_t *td_vnf_json(const struct td_vnf *v);
json_t *td_chain_json(const struct td_chain *c);
/* Hops as the TOE wants them: [["a"],["b","c"]]. */
json_t *td_hops_json(const struct td_chain *c);

/*
 * A VNF or chain from JSON (a request's args, a topology entry or the
 * state file), every field validated; unknown keys are refused (a "line"
 * key is ignored: the topology's line numbers).  @stored also accepts the
 * fields only the daemon writes ("calibrated").  0, or -EINVAL with @err.
 * Rules paths must be absolute; whether they are readable is not checked.
 */
int td_vnf_from_json(json_t *o, bool stored, struct td_vnf *v, char *err, size_t errlen);
int td_chain_from_json(json_t *o, struct td_chain *c, char *err, size_t errlen);

/* Is an extra tochain-vnf option acceptable (--x or --x=y, not one the
 * daemon sets itself)?  On false, @why says why. */
bool td_vnf_arg_valid(const char *arg, const char **why);

/*
 * Cross-checks of a whole state: unique names, every chain's VM and hop
 * VNFs exist, no VNF twice in a chain, one chain per (VM, direction),
 * every instance names a known VNF and VM, no VNF runs in a VM's own
 * libvirt domain.  0, or -EINVAL with @err.
 */
int td_state_check(const struct td_state *st, char *err, size_t errlen);

/* Load @path into @st; a missing file is an empty state.  0 or -errno with @err. */
int td_state_load(const char *path, struct td_state *st, char *err, size_t errlen);

/* The same from @len bytes of text; @name is used in messages. */
int td_state_parse(const char *text, size_t len, const char *name, struct td_state *st,
		   char *err, size_t errlen);

/* Save atomically.  0 or -errno. */
int td_state_save(const char *path, const struct td_state *st);

#endif
