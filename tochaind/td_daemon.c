// SPDX-License-Identifier: MIT
/* tochaind's control loop and request handlers; see td_daemon.h. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "td_daemon.h"
#include "td_exec.h"
#include "td_libvirt.h"
#include "td_link.h"
#include "td_priv.h"
#include "tochain/util.h"

#define DEFAULT_REGION_SIZE TD_REGION_SIZE_DEFAULT
#define MIN_REGION_SIZE TD_REGION_SIZE_MIN
#define MAX_REGION_SIZE TD_REGION_SIZE_MAX


/* --libvirt-uri (td_libvirt.h); NULL: qemu:///system */
static const char *libvirt_uri;

/*
 * Doorbell VMs whose device must be plugged again (their link was
 * restarted: QEMU cannot reconnect to a new ivshmem server), by name, and
 * when to try next.  Not persisted: a restarted daemon finds the link
 * alive (nothing to do) or starts it and marks the VM again.
 */
static struct {
	char vm[TD_NAME_MAX];
	long long next_ms;
} replug[TD_MAX_VMS];

#define LINK_RETRY_MS 2000

void td_log(const char *fmt, ...)
{
	char ts[32];
	time_t now = time(NULL);
	va_list ap;

	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", gmtime(&now));
	fprintf(stderr, "%s tochaind: ", ts);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: tochaind [--foreground] [--state-dir DIR] [--socket PATH] "
		"[--fabric-ns NS] [--bridge BR] [--region-dir DIR] [--toe PATH]\n"
		"                [--vnf PATH] [--vmlink PATH] [--sched-socket PATH] [--libvirt-uri URI]\n");
}

int td_daemon_parse(int argc, char **argv, struct td_config *cfg, int *foreground)
{
	static const struct option lo[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "socket", required_argument, NULL, 'S' },
		{ "fabric-ns", required_argument, NULL, 'F' },
		{ "bridge", required_argument, NULL, 'b' },
		{ "region-dir", required_argument, NULL, 'r' },
		{ "toe", required_argument, NULL, 't' },
		{ "vnf", required_argument, NULL, 'V' },
		{ "vmlink", required_argument, NULL, 'K' },
		{ "sched-socket", required_argument, NULL, 'c' },
		{ "libvirt-uri", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char self[PATH_MAX];
	ssize_t n;
	int o;

	memset(cfg, 0, sizeof(*cfg));
	*foreground = 0;
	strcpy(cfg->state_dir, "/var/lib/tochain");
	strcpy(cfg->socket, CTL_DEFAULT_SOCKET);
	strcpy(cfg->fabric_ns, "tochain-fabric");
	strcpy(cfg->bridge, "tcbr0");
	strcpy(cfg->region_dir, "/dev/shm/tochain");
	strcpy(cfg->sched_socket, "/run/tochain/sched.sock");
	/* The TOE installed next to this program. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(cfg->toe_path, sizeof(cfg->toe_path), "%s/tochain-toe", dirname(self));
		snprintf(cfg->vnf_path, sizeof(cfg->vnf_path), "%.4000s/tochain-vnf", self);
		snprintf(cfg->fwapply_path, sizeof(cfg->fwapply_path), "%.4000s/tochain-fw-apply", self);
		snprintf(cfg->vmlink_path, sizeof(cfg->vmlink_path), "%.4000s/tochain-vmlink", self);
	}
	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		const char *why = NULL;
		size_t len = optarg ? strlen(optarg) : 0;

		switch (o) {
		case 'f': *foreground = 1; break;
		case 's':
			if (len == 0 || len >= sizeof(cfg->state_dir) - 64)
				why = "--state-dir: path empty or too long";
			else
				strcpy(cfg->state_dir, optarg);
			break;
		case 'S':
			if (len == 0 || len >= sizeof(cfg->socket))
				why = "--socket: path empty or too long";
			else
				strcpy(cfg->socket, optarg);
			break;
		case 'F':
			if (!len || len > 20 || strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789-") != len)
				why = "--fabric-ns: 1 to 20 characters of a-z, 0-9, '-'";
			else
				strcpy(cfg->fabric_ns, optarg);
			break;
		case 'b':
			if (!len || len > 15 || strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789-_") != len)
				why = "--bridge: 1 to 15 characters of a-z, 0-9, '-', '_'";
			else
				strcpy(cfg->bridge, optarg);
			break;
		case 'r':
			if (len == 0 || len >= sizeof(cfg->region_dir) - 64)
				why = "--region-dir: path empty or too long";
			else
				strcpy(cfg->region_dir, optarg);
			break;
		case 't':
			if (len == 0 || len >= sizeof(cfg->toe_path))
				why = "--toe: path empty or too long";
			else
				strcpy(cfg->toe_path, optarg);
			break;
		case 'V':
			if (len == 0 || len >= sizeof(cfg->vnf_path))
				why = "--vnf: path empty or too long";
			else
				strcpy(cfg->vnf_path, optarg);
			break;
		case 'K':
			if (len == 0 || len >= sizeof(cfg->vmlink_path))
				why = "--vmlink: path empty or too long";
			else
				strcpy(cfg->vmlink_path, optarg);
			break;
		case 'c':
			if (len == 0 || len >= sizeof(cfg->sched_socket))
				why = "--sched-socket: path empty or too long";
			else
				strcpy(cfg->sched_socket, optarg);
			break;
		case 'L':
			if (len == 0 || len >= 256)
				why = "--libvirt-uri: empty or too long";
			else
				libvirt_uri = optarg;
			break;
		case 'h': usage(); exit(0);
		default: usage(); return 2;
		}
		if (why) {
			fprintf(stderr, "tochaind: %s\n", why);
			return 2;
		}
	}
	if (optind != argc) {
		usage();
		return 2;
	}
	return 0;
}

/* A string argument, or NULL; @bad is set when present but not a string. */
const char *td_arg_str(json_t *args, const char *key, int *bad)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return NULL;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		*bad = 1;
		return NULL;
	}
	return json_string_value(v);
}

int td_save(struct daemon *d)
{
	int err = td_state_save(d->state_path, &d->st);

	if (err)
		td_log("cannot save state to %s: %s", d->state_path, strerror(-err));
	return err;
}

static json_t *vm_json_live(const struct td_vm *vm)
{
	json_t *o = td_vm_json(vm);

	json_object_set_new(o, "toe", json_string(td_vm_toe_alive(vm) ? "running" : "down"));
	if (vm->domain[0]) {
		char sock[PATH_MAX + 8];

		json_object_set_new(o, "link", json_string(td_link_alive(vm) ? "running" : "down"));
		td_link_socket(vm, sock, sizeof(sock));
		if (vm->wait == TD_WAIT_DOORBELL)
			json_object_set_new(o, "link_socket", json_string(sock));
	}
	return o;
}

/* --- libvirt domains (td_libvirt.h) --- */

static void vm_shm_name(struct daemon *d, const struct td_vm *vm, char *out, size_t len)
{
	td_libvirt_shm_name(d->cfg->fabric_ns, vm->name, out, len);
}

/* vm.show of a VM with a domain: its vCPU threads, asked live. */
static void vm_json_domain(struct daemon *d, const struct td_vm *vm, json_t *o)
{
	pid_t tids[TD_LIBVIRT_MAX_VCPUS];
	json_t *a = json_array();
	char err[512] = "";
	int n = -ENOTCONN;

	if (d->lv)
		n = td_libvirt_vcpu_tids(d->lv, vm->domain, tids, TD_LIBVIRT_MAX_VCPUS,
					 err, sizeof(err));
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(tids[i]));
	json_object_set_new(o, "vcpu_tids", a);
	if (n < 0)
		json_object_set_new(o, "domain_error", json_string(err[0] ? err : strerror(-n)));
	if (td_chains_sched_vm_note(d, vm->name))
		json_object_set_new(o, "sched", json_string(td_chains_sched_vm_note(d, vm->name)));
}

static void vm_detach_domain(struct daemon *d, const struct td_vm *vm)
{
	char shm[128], err[512] = "";

	if (!vm->domain[0] || !d->lv)
		return;
	vm_shm_name(d, vm, shm, sizeof(shm));
	if (td_libvirt_detach(d->lv, vm, shm, err, sizeof(err)))
		td_log("vm %s: %s", vm->name, err);
}

static void replug_mark(const struct td_vm *vm, bool on)
{
	int slot = -1;

	for (int i = 0; i < TD_MAX_VMS; i++) {
		if (!strcmp(replug[i].vm, vm->name)) {
			replug[i].vm[0] = '\0';
			slot = i;
		} else if (slot < 0 && !replug[i].vm[0]) {
			slot = i;
		}
	}
	if (on && slot >= 0) {
		strcpy(replug[slot].vm, vm->name);
		replug[slot].next_ms = 0;
	}
}

/*
 * Plug @vm's device again: a new link (doorbell mode: QEMU's connection
 * to the old server is gone for good) or a new region file.  The unplug
 * needs the guest (td_libvirt.h); an attach that libvirt refuses because
 * the old device is still there is retried every LINK_RETRY_MS.
 */
static void replug_tick(struct daemon *d)
{
	long long now = (long long)tu_now_ms();

	for (int i = 0; i < TD_MAX_VMS; i++) {
		struct td_vm *vm;
		char shm[128], err[512] = "";

		if (!replug[i].vm[0] || replug[i].next_ms > now)
			continue;
		vm = td_state_find_vm(&d->st, replug[i].vm);
		if (!vm || !vm->domain[0] || !d->lv) {
			replug[i].vm[0] = '\0';
			continue;
		}
		if (!td_link_alive(vm)) {
			replug[i].next_ms = now + LINK_RETRY_MS;
			continue;	/* the link first */
		}
		vm_shm_name(d, vm, shm, sizeof(shm));
		/* a device still plugged holds the old server: take it out */
		if (replug[i].next_ms == 0)
			vm_detach_domain(d, vm);
		if (td_libvirt_attach(d->lv, vm, shm, err, sizeof(err))) {
			td_log("vm %s: plugging the region again: %s (retrying)", vm->name, err);
			replug[i].next_ms = now + LINK_RETRY_MS;
			continue;
		}
		td_log("vm %s: region plugged again into domain %s", vm->name, vm->domain);
		replug[i].vm[0] = '\0';
	}
}

/*
 * A domain VM whose link is not running (it died, or the daemon finds it
 * gone): start it again; in doorbell mode the device then needs plugging
 * again.  Only while the TOE runs (the link needs it); retried every
 * LINK_RETRY_MS.
 */
static void link_repair(struct daemon *d, struct td_vm *vm, long long *next_ms)
{
	char err[512] = "";
	long long now = (long long)tu_now_ms();

	if (!vm->domain[0] || vm->wait == TD_WAIT_NONE || td_link_alive(vm) ||
	    !td_vm_toe_alive(vm) || *next_ms > now)
		return;
	td_log("vm %s: VM link %s, starting it", vm->name,
	       vm->link_pid ? "died" : "not running");
	td_link_stop(d->cfg, vm);	/* its socket and cgroup */
	if (td_link_start(d->cfg, vm, err, sizeof(err))) {
		td_log("vm %s: %s", vm->name, err);
		*next_ms = now + LINK_RETRY_MS;
		td_save(d);
		return;
	}
	*next_ms = 0;
	td_save(d);
	if (vm->wait == TD_WAIT_DOORBELL)
		replug_mark(vm, true);
}
/* --- end of libvirt domains --- */

static json_t *cmd_vm_add(struct daemon *d, json_t *args)
{
	const char *name, *ip, *domain, *wait, *why = NULL;
	struct td_vm vm;
	char err[512] = "";
	json_t *size;
	int bad = 0;

	name = td_arg_str(args, "name", &bad);
	ip = td_arg_str(args, "ip", &bad);
	if (bad || !name || !ip)
		return ctl_reply_fail("vm add: NAME and --ip ADDR/PREFIX are required");
	memset(&vm, 0, sizeof(vm));
	if (!td_name_valid(name, &why))
		return ctl_reply_fail("vm name '%s' %s", name, why);
	strcpy(vm.name, name);
	if (td_addr_parse(ip, &vm.ip, &why))
		return ctl_reply_fail("--ip '%s': %s", ip, why);
	size = json_object_get(args, "region_size");
	vm.region_size = DEFAULT_REGION_SIZE;
	if (size) {
		if (!json_is_integer(size) || json_integer_value(size) < (json_int_t)MIN_REGION_SIZE ||
		    json_integer_value(size) > (json_int_t)MAX_REGION_SIZE)
			return ctl_reply_fail("--region-size must be between 1M and 4G");
		vm.region_size = (uint64_t)json_integer_value(size);
	}
	if (td_state_find_vm(&d->st, name))
		return ctl_reply_fail("vm '%s' already exists", name);
	for (unsigned int i = 0; i < d->st.nvms; i++)
		if (d->st.vms[i].ip.family == vm.ip.family &&
		    !memcmp(d->st.vms[i].ip.addr, vm.ip.addr, 16))
			return ctl_reply_fail("--ip %s is already used by vm '%s'", vm.ip.text,
				    d->st.vms[i].name);
	if (d->st.nvms >= TD_MAX_VMS)
		return ctl_reply_fail("too many VMs (at most %d)", TD_MAX_VMS);
	/* libvirt: the region becomes a <shmem> device of this domain */
	domain = td_arg_str(args, "domain", &bad);
	if (bad || (domain && !td_domain_valid(domain, &why)))
		return ctl_reply_fail("--domain '%s' %s", domain ? domain : "", bad ? "is not a string" : why);
	if (domain) {
		if (!td_libvirt_size_valid(vm.region_size))
			return ctl_reply_fail("--domain: the region size must be a power of two, at least 1M");
		for (unsigned int i = 0; i < d->st.nvms; i++)
			if (!strcmp(d->st.vms[i].domain, domain))
				return ctl_reply_fail("--domain %s is already used by vm '%s'", domain,
					    d->st.vms[i].name);
		if (td_chains_domain_vnf(d, domain))
			return ctl_reply_fail("--domain %s runs vnf %s", domain,
					      td_chains_domain_vnf(d, domain)->name);
		strcpy(vm.domain, domain);
	}
	/* how the guest waits: the link's mode and the device's model */
	wait = td_arg_str(args, "wait", &bad);
	if (bad || (wait && (!domain || td_wait_parse(wait, &vm.wait))))
		return ctl_reply_fail("--wait %s", !domain ? "needs --domain" :
				      "must be doorbell or poll");
	if (domain && !wait)
		vm.wait = TD_WAIT_DOORBELL;
	if (domain && !d->lv && !(d->lv = td_libvirt_create(libvirt_uri)))
		return ctl_reply_fail("vm '%s': out of memory", name);
	if (td_vm_create(d->cfg, &vm, err, sizeof(err)))
		return ctl_reply_fail("vm '%s': %s", name, err);
	if (domain) {
		char shm[128];

		if (td_link_start(d->cfg, &vm, err, sizeof(err))) {
			td_link_stop(d->cfg, &vm);
			td_vm_destroy(d->cfg, &vm);
			return ctl_reply_fail("vm '%s': %s", name, err);
		}
		vm_shm_name(d, &vm, shm, sizeof(shm));
		if (td_libvirt_attach(d->lv, &vm, shm, err, sizeof(err))) {
			td_link_stop(d->cfg, &vm);
			td_vm_destroy(d->cfg, &vm);
			return ctl_reply_fail("vm '%s': %s", name, err);
		}
	}
	d->st.vms[d->st.nvms++] = vm;
	if (td_save(d)) {
		d->st.nvms--;
		vm_detach_domain(d, &vm);
		td_link_stop(d->cfg, &vm);
		td_vm_destroy(d->cfg, &vm);
		return ctl_reply_fail("vm '%s': cannot save the state", name);
	}
	td_log("vm %s added: %s in %s, TOE pid %d", vm.name, vm.ip.text, vm.netns, (int)vm.toe_pid);
	return ctl_reply_ok(vm_json_live(&vm));
}

static json_t *cmd_vm_del(struct daemon *d, json_t *args)
{
	int bad = 0;
	const char *name = td_arg_str(args, "name", &bad);
	struct td_vm *vm, gone;

	if (bad || !name)
		return ctl_reply_fail("vm del: NAME is required");
	vm = td_state_find_vm(&d->st, name);
	if (!vm)
		return ctl_reply_fail("no vm named '%s'", name);
	if (td_chains_of_vm(d, name))
		return ctl_reply_fail("vm %s has chain %s: delete its chains first", name,
				      td_chains_of_vm(d, name)->name);
	gone = *vm;
	*vm = d->st.vms[--d->st.nvms];
	if (td_save(d)) {
		d->st.vms[d->st.nvms++] = gone;
		return ctl_reply_fail("vm '%s': cannot save the state", name);
	}
	/* the device first (the guest lets it go), then its server */
	vm_detach_domain(d, &gone);
	replug_mark(&gone, false);
	if (gone.domain[0])
		td_link_stop(d->cfg, &gone);
	td_vm_destroy(d->cfg, &gone);
	td_log("vm %s deleted", name);
	return ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

static json_t *cmd_vm_show(struct daemon *d, json_t *args)
{
	int bad = 0;
	const char *name = td_arg_str(args, "name", &bad);
	struct td_vm *vm;
	json_t *o;

	if (bad || !name)
		return ctl_reply_fail("vm show: NAME is required");
	vm = td_state_find_vm(&d->st, name);
	if (!vm)
		return ctl_reply_fail("no vm named '%s'", name);
	o = vm_json_live(vm);
	if (vm->domain[0])
		vm_json_domain(d, vm, o);
	return ctl_reply_ok(o);
}

static json_t *cmd_vm_ls(struct daemon *d)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < d->st.nvms; i++)
		json_array_append_new(a, vm_json_live(&d->st.vms[i]));
	return ctl_reply_ok(json_pack("{s:o}", "vms", a));
}

/*
 * The CPU scheduler is its own daemon (host-sched/, tochain-sched); its
 * commands are passed to it as they are and its reply comes back as ours.
 */
static json_t *forward_sched(struct daemon *d, const char *cmd, json_t *args)
{
	const char *why = NULL;
	json_t *reply = ctl_call(d->cfg->sched_socket, cmd, json_deep_copy(args), &why);

	if (!reply)
		return ctl_reply_fail("the CPU scheduler (tochain-sched at %s) is not reachable: %s",
			    d->cfg->sched_socket, why);
	return reply;
}

static json_t *dispatch(struct daemon *d, json_t *req)
{
	json_t *v = json_object_get(req, "v"), *args = json_object_get(req, "args");
	const char *cmd;

	if (!json_is_integer(v) || json_integer_value(v) != CTL_VERSION)
		return ctl_reply_fail("unsupported protocol version (tochaind speaks version %d)", CTL_VERSION);
	if (!json_is_string(json_object_get(req, "cmd")))
		return ctl_reply_fail("request has no \"cmd\"");
	cmd = json_string_value(json_object_get(req, "cmd"));
	if (args && !json_is_object(args))
		return ctl_reply_fail("\"args\" must be an object");
	if (!args)
		args = json_object_get(req, "args");
	if (!strcmp(cmd, "version"))
		return ctl_reply_ok(json_pack("{s:i, s:s}", "protocol", CTL_VERSION, "daemon", "tochaind"));
	if (!strcmp(cmd, "vm.add"))
		return cmd_vm_add(d, args);
	if (!strcmp(cmd, "vm.del"))
		return cmd_vm_del(d, args);
	if (!strcmp(cmd, "vm.show"))
		return cmd_vm_show(d, args);
	if (!strcmp(cmd, "vm.ls"))
		return cmd_vm_ls(d);
	if (!strncmp(cmd, "sched.", 6) && strcmp(cmd, "sched.register"))
		return forward_sched(d, cmd, args);
	{
		json_t *r = td_chains_dispatch(d, cmd, args);

		if (r)
			return r;
	}
	return ctl_reply_fail("unknown command '%.64s'", cmd);
}

static void serve_one(struct daemon *d, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	const char *why = NULL;
	json_t *req, *reply;

	if (fd < 0)
		return;
	req = ctl_recv(fd, 5000, &why);
	reply = req ? dispatch(d, req) : ctl_reply_fail("bad request: %s", why);
	if (reply)
		ctl_send(fd, reply);
	json_decref(reply);
	json_decref(req);
	close(fd);
}

/* After a (re)start: every VM of the state gets its container and TOE back. */
static void reconcile(struct daemon *d)
{
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		struct td_vm *vm = &d->st.vms[i];
		char err[512];
		char nsp[128];

		if (td_vm_toe_alive(vm))
			continue;
		snprintf(nsp, sizeof(nsp), "/run/netns/%s", vm->netns);
		if (access(nsp, F_OK)) {
			struct td_vm fresh = *vm;

			td_log("vm %s: container missing, rebuilding it", vm->name);
			if (td_vm_create(d->cfg, &fresh, err, sizeof(err)) == 0) {
				*vm = fresh;
				/* a new region file: the link (below) and the device anew */
				if (vm->domain[0]) {
					td_link_stop(d->cfg, vm);
					replug_mark(vm, true);
				}
			} else {
				td_log("vm %s: %s", vm->name, err);
			}
		} else {
			td_log("vm %s: TOE not running, restarting it", vm->name);
			if (td_vm_start_toe(d->cfg, vm, err, sizeof(err)))
				td_log("vm %s: %s", vm->name, err);
		}
	}
	/* links that died with or without the daemon (the device then anew) */
	for (unsigned int i = 0; i < d->st.nvms; i++) {
		long long next = 0;

		link_repair(d, &d->st.vms[i], &next);
	}
	td_save(d);
	td_chains_reconcile(d);
}

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	mkdir(dirname(dir), 0755);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A stale socket from a dead daemon; a live one answers connect. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) || listen(fd, 64)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* mkdir -p with @mode for the last component. */
static int mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

static int run(struct daemon *d, struct td_config *cfg, int foreground)
{
	static long long link_retry[TD_MAX_VMS];	/* no link restart of VM i before */
	uint64_t now, last_tick;
	char err[512] = "";
	sigset_t mask;
	int lfd, sfd, rc;
	int ready[2] = { -1, -1 };

	d->cfg = cfg;
	if ((rc = mkdirs(cfg->state_dir, 0700)) || (rc = mkdirs(cfg->region_dir, 0700))) {
		fprintf(stderr, "tochaind: cannot create %s or %s: %s\n", cfg->state_dir,
			cfg->region_dir, strerror(-rc));
		return 1;
	}
	if (!foreground) {
		char logp[PATH_MAX + 16];
		pid_t pid;
		int logfd;
		char c;

		if (pipe2(ready, O_CLOEXEC))
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid > 0) {
			close(ready[1]);
			/* Exit once the child listens, with its status. */
			return read(ready[0], &c, 1) == 1 && c == 'R' ? 0 : 1;
		}
		close(ready[0]);
		setsid();
		snprintf(logp, sizeof(logp), "%s/tochaind.log", cfg->state_dir);
		logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (logfd >= 0) {
			dup2(logfd, 1);
			dup2(logfd, 2);
			close(logfd);
		}
		int nullfd = open("/dev/null", O_RDONLY);

		if (nullfd >= 0)
			dup2(nullfd, 0);
	}
	snprintf(d->state_path, sizeof(d->state_path), "%s/state.json", cfg->state_dir);
	cfg->have_cg = cg_detect(&cfg->cg, NULL) == 0;
	if (!cfg->have_cg)
		td_log("no cgroup hierarchy: TOEs run without a cgroup");
	if (td_state_load(d->state_path, &d->st, err, sizeof(err))) {
		td_log("refusing to start: %s", err);
		return 1;
	}
	/* libvirt is connected on first use: by a VM or VNF with a domain */
	d->lv = td_libvirt_create(libvirt_uri);
	if (td_fabric_ensure(cfg, err, sizeof(err))) {
		td_log("fabric namespace %s: %s", cfg->fabric_ns, err);
		return 1;
	}
	lfd = listen_on(cfg->socket);
	if (lfd < 0) {
		td_log("control socket %s: %s", cfg->socket, strerror(-lfd));
		return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	reconcile(d);
	td_log("serving %s (state %s, fabric %s/%s, %u VMs, %s)", cfg->socket, d->state_path,
	       cfg->fabric_ns, cfg->bridge, d->st.nvms, cfg->have_cg ? cg_kind_name(cfg->cg.kind) : "no cgroups");
	if (ready[1] >= 0) {
		if (write(ready[1], "R", 1) != 1)
			return 1;
		close(ready[1]);
	}
	last_tick = tu_now_ms();
	for (rc = -1; rc < 0;) {
		struct pollfd p[2] = { { .fd = lfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(p, 2, 500) < 0 && errno != EINTR)
			break;
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				rc = 0;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (p[0].revents & POLLIN)
			serve_one(d, lfd);
		/* A TOE that died is restarted (its region is reset). */
		for (unsigned int i = 0; i < d->st.nvms && rc < 0; i++) {
			struct td_vm *vm = &d->st.vms[i];

			if (vm->toe_pid && !td_vm_toe_alive(vm)) {
				td_log("vm %s: TOE (pid %d) died, restarting it", vm->name, (int)vm->toe_pid);
				if (td_vm_start_toe(cfg, vm, err, sizeof(err)))
					td_log("vm %s: %s", vm->name, err);
				td_save(d);
				if (td_vm_toe_alive(vm))
					td_chains_toe_restarted(d, vm);
			}
			/* its link follows a TOE restart by itself; a dead one is restarted */
			if (rc < 0)
				link_repair(d, vm, &link_retry[i]);
		}
		if (rc < 0)
			replug_tick(d);
		/* VNF instances that died are restarted, at most every 500 ms. */
		now = tu_now_ms();
		if (rc < 0 && now - last_tick >= 500) {
			last_tick = now;
			td_chains_tick(d);
		}
	}
	/* TOEs and VNF instances keep running: a restarted daemon finds them. */
	close(lfd);
	unlink(cfg->socket);
	td_libvirt_destroy(d->lv);
	td_log("exiting; %u TOEs left running", d->st.nvms);
	return 0;
}

int td_daemon_run(struct td_config *cfg, int foreground)
{
	/* the daemon object is large (the whole state): not on the stack */
	struct daemon *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return 1;
	rc = run(d, cfg, foreground);
	free(d);
	return rc;
}
