/* SPDX-License-Identifier: MIT */
/*
 * VNFs in a libvirt domain (td_grant_*): `vnf add NAME --domain DOM`
 * runs VNF NAME's instances inside guest DOM (its `tochain-vnf --guest`
 * agent, vnfs/runtime/README.md) instead of as host processes.  For each VM whose
 * chains use it, tochaind gives DOM the regions that VNF needs as grants
 * (td_libvirt.h: hot-plugged ivshmem-plain devices that the patched QEMU
 * can revoke), and takes them away when no chain of that VM uses it.
 *
 * The grants of (VM, VNF X in domain D), in the order they are given:
 *   d  the VM's region R                 "<fabric>-<vm>-<D>-d"
 *   o  R.out, when the TOE has one       "<fabric>-<vm>-<D>-o"
 *   v  the VNF's region R.vnf-X          "<fabric>-<vm>-<X>-v"
 * d and o are read-only (td_libvirt_ro.h: QEMU drops the guest's writes):
 * a VNF reads the payload it inspects and cannot change it, neither what
 * the VM receives (R) nor what the TOE sends after the VNFs approved it
 * (R.out), nor the VM's rings.  v is writable: the VNF's own rings,
 * verdicts and counters, which only the packet scheduler and this VNF
 * map (include/tochain/vnf_proto.h).  A d or o found plugged writable (an
 * older tochaind's) is replaced by a read-only one.
 * d and o are per (VM, domain), not per VNF: inside the guest the driver
 * names a device after its region header, and two devices of one name
 * are refused, so two VNFs of one domain serving one VM share them; they
 * go with the last such VNF.  A name that would be longer than
 * TD_LIBVIRT_GRANT_MAX or hold a character a grant name may not (a
 * domain's '.' or '+') is "<first 29 characters, invalid ones as '_'>-X
 * <64-bit FNV-1a of the whole name, 16 upper-case hex digits>-<k>": the
 * upper case never appears in a name that is not hashed (fabric, VM and
 * VNF names are lower case), so hashing cannot make two names equal but
 * by a 64-bit hash collision.
 *
 * Each granted file is first grown (ftruncate, sparse) to a power of two
 * of at least 1 MiB: a PCI BAR's size.  The region library accepts a file
 * longer than its header says.  The region directory must be on
 * /dev/shm's filesystem (the grant is a hard link there).
 *
 * Taking a grant back is td_libvirt_ungrant: revoked at once with the
 * patched QEMU, then unplugged.  With a QEMU that cannot revoke (stock
 * Debian) the guest keeps access until it ejects the device; each take
 * is logged and kept (the last TD_GRANT_NOTES) for `vnf show`, saying
 * which of the two happened.
 *
 * Everything runs on tochaind's one thread.
 */
#ifndef TOCHAIN_TD_GRANT_H
#define TOCHAIN_TD_GRANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "td_libvirt.h"
#include "td_state.h"
#include "td_vm.h"

#define TD_GRANT_NAME_SIZE (TD_LIBVIRT_GRANT_MAX + 1)
#define TD_GRANT_NOTES 32
#define TD_GRANT_MIN_SIZE (1ull << 20)

enum td_grant_kind { TD_GRANT_DATA = 'd', TD_GRANT_OUT = 'o', TD_GRANT_VNF = 'v' };

/*
 * Grant name "<fabric>-<vm>-<tag>-<kind>", hashed as above when needed.
 * 0, or -EINVAL (empty part, bad kind, @len < TD_GRANT_NAME_SIZE).
 */
int td_grant_name(const char *fabric, const char *vm, const char *tag, enum td_grant_kind kind,
		  char *out, size_t len);

/* Is a grant of @kind read-only for the guest (d, o) or writable (v)? */
bool td_grant_readonly(enum td_grant_kind kind);

/* The next power of two >= max(@size, 1 MiB); 0 if there is none in 64 bits. */
uint64_t td_grant_pow2(uint64_t size);

/*
 * Grow file @path to td_grant_pow2 of its size (never shrinks).  0 with
 * *@size the size now, or -errno with @err set.
 */
int td_grant_grow(const char *path, uint64_t *size, char *err, size_t errlen);

/* Is directory @dir on the filesystem of @shm (/dev/shm)?  0, or -EXDEV /
 * -errno with @err set. */
int td_grant_check_shm(const char *dir, const char *shm, char *err, size_t errlen);

/* One grant of (VM, VNF): its name and the file it gives. */
struct td_grant {
	enum td_grant_kind kind;
	char name[TD_GRANT_NAME_SIZE];
	char path[PATH_MAX + 64];
};

/*
 * The grants of @vnf (in @domain) for @vm, in giving order; R.out only
 * when the file exists.  Count (2 or 3), or -EINVAL.
 */
int td_grant_set(const struct td_config *cfg, const struct td_vm *vm, const char *vnf,
		 const char *domain, struct td_grant out[3]);

/*
 * Give @vm's grants of @vnf to running domain @domain: each file grown,
 * d and o read-only, v writable, each grant made unless the domain holds it already on the same file
 * (revoked: granted again; on another file, a region the TOE made anew:
 * replaced).  Idempotent.  0, or -errno with @err set; on failure the
 * grants this call made are taken back.
 */
int td_grant_give(struct td_libvirt *lv, const struct td_config *cfg, const struct td_vm *vm,
		  const char *vnf, const char *domain, char *err, size_t errlen);

/* What a take did, for `vnf show`. */
struct td_grant_note {
	char vnf[TD_OBJ_NAME_MAX];	/* "" : slot unused */
	char vm[TD_NAME_MAX];
	char domain[TD_DOMAIN_MAX];
	char grant[TD_GRANT_NAME_SIZE];
	time_t when;
	int rc;				/* td_libvirt_ungrant's */
	char text[700];
};

struct td_grant_log {
	struct td_grant_note n[TD_GRANT_NOTES];
	unsigned int next;
	/*
	 * Read-only grants taken whose memory backend may outlive the take
	 * (td_libvirt_ro.h: it goes only after the guest ejected the
	 * device): td_grant_reap frees them.  grant "" : slot unused.
	 */
	struct {
		char domain[TD_DOMAIN_MAX];
		char grant[TD_GRANT_NAME_SIZE];
	} reap[TD_GRANT_NOTES];
};

/*
 * Take @vm's grants of @vnf back from @domain (v first; d and o too
 * unless @keep_data: another VNF of that domain still serves @vm).  Best
 * effort: every grant is tried.  Each outcome is logged and noted in @log
 * (may be NULL).  0 when the guest lost access to all of them now,
 * TD_LIBVIRT_UNGRANT_PENDING when some wait for the guest, or the first
 * -errno (@err set).
 */
int td_grant_take(struct td_libvirt *lv, const struct td_config *cfg, const struct td_vm *vm,
		  const char *vnf, const char *domain, bool keep_data, struct td_grant_log *log,
		  char *err, size_t errlen);

/*
 * Free the memory backends of read-only grants taken earlier whose
 * device the guest has let go of since (td_libvirt_grant_ro_reap); keep
 * those still plugged for a later call.  Best effort: an error drops the
 * entry (what is left goes at the next grant of that name, or with the
 * domain's QEMU).  From tochaind's repair tick.
 */
void td_grant_reap(struct td_libvirt *lv, struct td_grant_log *log);

/* Live state of grant @name in @domain, for show: "granted", "revoked",
 * "granted (this QEMU cannot revoke it)", "absent" or the error. */
void td_grant_state(struct td_libvirt *lv, const char *domain, const char *name, char *out,
		    size_t len);

#endif
