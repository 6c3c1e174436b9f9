/* SPDX-License-Identifier: MIT */
/*
 * VMs (td_vm_*, td_fabric_*): the TOE container of a VM is a
 * network namespace holding the VM's address on a veth whose peer is a
 * port of the fabric bridge, a cgroup, the region file, and the
 * tochain-toe process running inside the namespace and the cgroup.
 * Creation undoes what it did when a step fails; destruction is best
 * effort and idempotent.
 */
#ifndef TOCHAIN_TD_VM_H
#define TOCHAIN_TD_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "tochain/cg.h"
#include "td_state.h"

struct td_config {
	char state_dir[PATH_MAX - 128];
	char socket[108];
	char fabric_ns[32];
	char bridge[16];
	char region_dir[PATH_MAX - 128];
	char toe_path[PATH_MAX];
	char vnf_path[PATH_MAX];	/* tochain-vnf */
	char vmlink_path[PATH_MAX];	/* tochain-vmlink: a libvirt VM's link (td_link.h) */
	char fwapply_path[PATH_MAX];	/* tochain-fw-apply: a fw VNF's nftables half */
	char sched_socket[108];		/* tochain-sched's control socket */
	struct cg_root cg;
	bool have_cg;
};

/* Make sure the fabric namespace and its bridge exist. */
int td_fabric_ensure(const struct td_config *cfg, char *err, size_t errlen);

/*
 * Is a filesystem of statfs type @f_type fit for regions?  They hold the
 * VMs' traffic, so only memory: tmpfs, hugetlbfs, ramfs.  On a disk the
 * kernel would write every payload out (and read it back after a
 * restart); QEMU's <shmem> and memory-backend-file want them in memory
 * too.
 */
bool td_region_fs_ok(unsigned long f_type);

/* --region-dir @dir (which exists) on such a filesystem?  0, or -EXDEV with @err said. */
int td_region_dir_check(const char *dir, char *err, size_t errlen);

/* Fill the derived names (netns, veth, cgroup, region) of @vm. */
void td_vm_names(const struct td_config *cfg, struct td_vm *vm);

/*
 * @o's "region_size" and "slot_size" (bytes; absent: the defaults of
 * td_state.h) into @vm, or -EINVAL and why in @err: out of range, or a
 * region that holds too few buffers of the slot size.
 */
int td_vm_sizes_from_json(json_t *o, struct td_vm *vm, char *err, size_t errlen);

/* Build the container and start its TOE. */
int td_vm_create(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen);

/* (Re)start the TOE of an existing container. */
int td_vm_start_toe(const struct td_config *cfg, struct td_vm *vm, char *err, size_t errlen);

/* Stop the TOE, remove the namespace, veth, cgroup and region file. */
void td_vm_destroy(const struct td_config *cfg, struct td_vm *vm);

/* Is the recorded TOE process alive (and really a tochain-toe)? */
bool td_vm_toe_alive(const struct td_vm *vm);

/*
 * The VM commands and the VMs' repair, on the daemon object (td_priv.h).
 * vm.add with a domain also starts the VM link (td_link.h) and plugs the
 * region into the domain (td_libvirt.h); vm.del undoes it all.
 */
struct daemon;

json_t *td_vm_cmd_add(struct daemon *d, json_t *args);
json_t *td_vm_cmd_del(struct daemon *d, json_t *args);
json_t *td_vm_cmd_ls(struct daemon *d, json_t *args);
json_t *td_vm_cmd_show(struct daemon *d, json_t *args);

/* After a (re)start: every VM of the state gets its container, TOE and
 * link back (a rebuilt container's region is plugged again). */
void td_vm_reconcile(struct daemon *d);

/* A TOE that died is restarted (on a reset region).  True when it was
 * and now runs: its chains and VNFs must be redone (td_repair.h). */
bool td_vm_toe_repair(struct daemon *d, struct td_vm *vm);

/*
 * A domain VM whose link is not running: start it again (the device is
 * then plugged again in doorbell mode).  Only while the TOE runs; not
 * before *@next_ms, set to retry in 2 s when it fails.
 */
void td_vm_link_repair(struct daemon *d, struct td_vm *vm, long long *next_ms);

/* Plug the regions of the VMs marked by a link restart again (retried). */
void td_vm_replug_tick(struct daemon *d);

#endif
