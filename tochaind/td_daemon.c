// SPDX-License-Identifier: MIT
/*
 * tochaind's control socket, its dispatch table and its main loop; see
 * td_daemon.h.  The commands live with their objects (td_vm, td_vnf,
 * td_chain, td_stats, td_change, td_cpusched); this file only calls them,
 * and the metrics endpoint's (td_metrics).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "tochain/util.h"
#include "td_capture.h"
#include "td_chain.h"
#include "td_change.h"
#include "td_cpusched.h"
#include "td_daemon.h"
#include "td_libvirt.h"
#include "td_metrics.h"
#include "td_priv.h"
#include "td_repair.h"
#include "td_stats.h"
#include "td_vnf.h"

/* --libvirt-uri (td_libvirt.h); NULL: qemu:///system */
static const char *libvirt_uri;
/* --metrics ADDR:PORT (td_metrics.h); NULL: no metrics endpoint */
static const char *metrics_addr;

/* The commands of the control protocol (docs/CONTROL-PROTOCOL.md) but
 * version and the CPU scheduler's, which are passed on (td_cpusched.h). */
static const struct {
	const char *cmd;
	td_cmd_fn *fn;
} commands[] = {
	{ "vm.add", td_vm_cmd_add },
	{ "vm.del", td_vm_cmd_del },
	{ "vm.show", td_vm_cmd_show },
	{ "vm.ls", td_vm_cmd_ls },
	{ "vnf.add", td_vnf_cmd_add },
	{ "vnf.del", td_vnf_cmd_del },
	{ "vnf.ls", td_vnf_cmd_ls },
	{ "vnf.show", td_vnf_cmd_show },
	{ "vnf.calibrate", td_vnf_cmd_calibrate },
	{ "chain.add", td_chain_cmd_add },
	{ "chain.del", td_chain_cmd_del },
	{ "chain.ls", td_chain_cmd_ls },
	{ "chain.show", td_chain_cmd_show },
	{ "chain.set-sla", td_chain_cmd_set_sla },
	{ "stats", td_stats_cmd },
	{ "capture.set", td_capture_cmd_set },
	{ "capture.ls", td_capture_cmd_ls },
	{ "capture.get", td_capture_cmd_get },
	{ "apply", td_change_cmd_apply },
};

static void usage(void)
{
	fprintf(stderr,
		"usage: tochaind [--foreground] [--state-dir DIR] [--socket PATH] "
		"[--fabric-ns NS] [--bridge BR] [--region-dir DIR] [--toe PATH]\n"
		"                [--vnf PATH] [--vmlink PATH] [--sched-socket PATH] [--libvirt-uri URI]\n"
		"                [--metrics ADDR:PORT]\n");
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
		{ "metrics", required_argument, NULL, 'M' },
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
		case 'M': {
			struct sockaddr_storage ss;
			socklen_t sslen;

			if (td_metrics_parse_addr(optarg, &ss, &sslen))
				why = "--metrics: ADDR:PORT or [ADDR6]:PORT, numeric, port 1-65535";
			else
				metrics_addr = optarg;
			break;
		}
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
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].cmd))
			return commands[i].fn(d, args);
	if (!strncmp(cmd, "sched.", 6) && strcmp(cmd, "sched.register"))
		return td_cpusched_cmd_forward(d, cmd, args);
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
	uint64_t now, last_tick, last_repair;
	int repair_every = 500;		/* ms; sooner while a restart waits (td_repair_tick) */
	char err[512] = "";
	sigset_t mask;
	int lfd, sfd, rc;
	int ready[2] = { -1, -1 };

	d->cfg = cfg;
	d->libvirt_uri = libvirt_uri;
	if ((rc = mkdirs(cfg->state_dir, 0700)) || (rc = mkdirs(cfg->region_dir, 0700))) {
		fprintf(stderr, "tochaind: cannot create %s or %s: %s\n", cfg->state_dir,
			cfg->region_dir, strerror(-rc));
		return 1;
	}
	if (td_region_dir_check(cfg->region_dir, err, sizeof(err))) {
		fprintf(stderr, "tochaind: %s\n", err);
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
	d->lv = td_libvirt_create(d->libvirt_uri);
	if (td_fabric_ensure(cfg, err, sizeof(err))) {
		td_log("fabric namespace %s: %s", cfg->fabric_ns, err);
		return 1;
	}
	lfd = listen_on(cfg->socket);
	if (lfd < 0) {
		td_log("control socket %s: %s", cfg->socket, strerror(-lfd));
		return 1;
	}
	if (metrics_addr && !(d->metrics = td_metrics_create(metrics_addr, err, sizeof(err)))) {
		td_log("%s", err);
		close(lfd);
		unlink(cfg->socket);
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
	td_vm_reconcile(d);
	td_repair_reconcile(d);
	td_log("serving %s (state %s, fabric %s/%s, %u VMs, %s)%s%s", cfg->socket, d->state_path,
	       cfg->fabric_ns, cfg->bridge, d->st.nvms, cfg->have_cg ? cg_kind_name(cfg->cg.kind) : "no cgroups",
	       metrics_addr ? "; metrics on http://" : "", metrics_addr ? metrics_addr : "");
	if (ready[1] >= 0) {
		if (write(ready[1], "R", 1) != 1)
			return 1;
		close(ready[1]);
	}
	last_tick = last_repair = tu_now_ms();
	for (rc = -1; rc < 0;) {
		struct pollfd p[2 + TD_METRICS_NFDS] = { { .fd = lfd, .events = POLLIN },
							 { .fd = sfd, .events = POLLIN } };
		unsigned int np = 2 + (d->metrics ? td_metrics_pollfds(d->metrics, p + 2) : 0);
		struct signalfd_siginfo si;
		bool child = false;

		if (poll(p, np, repair_every) < 0 && errno != EINTR)
			break;
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				rc = 0;
			child |= si.ssi_signo == SIGCHLD;
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (p[0].revents & POLLIN)
			serve_one(d, lfd);
		if (d->metrics)
			td_metrics_serve(d->metrics, d, p + 2, np - 2);
		/* A TOE that died is restarted (its region is reset). */
		for (unsigned int i = 0; i < d->st.nvms && rc < 0; i++) {
			struct td_vm *vm = &d->st.vms[i];

			if (td_vm_toe_repair(d, vm))
				td_repair_toe_restarted(d, vm);
			/* its link follows a TOE restart by itself; a dead one is restarted */
			if (rc < 0)
				td_vm_link_repair(d, vm, &d->link_retry_ms[i]);
		}
		if (rc < 0)
			td_vm_replug_tick(d);
		/*
		 * VNF instances that died are restarted: seen at once when they
		 * were our children (SIGCHLD), else within 500 ms; restarted when
		 * their back-off is over (bench/54_ids_restart.sh).
		 */
		now = tu_now_ms();
		if (rc < 0 && now - last_tick >= 500) {
			last_tick = now;
			td_cpusched_tick(d);
		}
		if (rc < 0 && (child || now - last_repair >= (uint64_t)repair_every)) {
			last_repair = now;
			repair_every = td_repair_tick(d);
		}
	}
	/* TOEs and VNF instances keep running: a restarted daemon finds them. */
	close(lfd);
	unlink(cfg->socket);
	td_metrics_destroy(d->metrics);
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
