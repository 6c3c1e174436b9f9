// SPDX-License-Identifier: MIT
/*
 * The TOE control socket; see toe_ctl.h.  THREADING: everything here runs
 * on the control thread, except toe_ctl_start/_stop (the TOE's thread).
 * Shared state lives in toe_chain.c behind its lock.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tochain/ctl_proto.h"
#include "toe_ctl.h"
#include "tochain/vnf_proto.h"

#define CTL_READ_MS	2000	/* a client has this long to send its request */
#define SAMPLE_MS	250	/* pps samples */

struct toe_ctl {
	char *path;
	char name[64];
	struct toe_chain *tc;
	struct toe_capture *cap;
	struct toe_hold *hold;
	int lfd, stop_fd;
	pthread_t thread;
};

/* A string argument: NULL if absent (*@bad untouched) or not a clean string (*@bad set). */
static const char *arg_str(json_t *args, const char *key, bool *bad)
{
	json_t *v = json_object_get(args, key);

	if (!v)
		return NULL;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v)) {
		*bad = true;
		return NULL;
	}
	return json_string_value(v);
}

static json_t *need_name(json_t *args, const char **name)
{
	bool bad = false;

	*name = arg_str(args, "name", &bad);
	if (!*name || bad || !toe_chain_name_valid(*name))
		return ctl_reply_fail("\"name\" must be 1-32 characters of a-z 0-9 _ -");
	return NULL;
}

static int parse_dir(json_t *args, uint32_t *dir)
{
	bool bad = false;
	const char *d = arg_str(args, "dir", &bad);

	if (!d || bad)
		return -1;
	if (strcmp(d, "in") == 0)
		*dir = TOE_DIR_IN;
	else if (strcmp(d, "out") == 0)
		*dir = TOE_DIR_OUT;
	else
		return -1;
	return 0;
}

static const char *dir_name(uint32_t dir)
{
	return dir == TOE_DIR_IN ? "in" : "out";
}

static json_t *cmd_vnf_add(struct toe_ctl *c, json_t *args)
{
	struct toe_vnf_args a = { .threads = 1, .policy = CH_FAIL_CLOSED,
				  .dispatch = CH_DISPATCH_RR };
	const char *name, *s;
	char region[256];
	json_t *v, *fail;
	bool created, bad = false;
	uint32_t id;
	int err;

	if ((fail = need_name(args, &name)))
		return fail;
	snprintf(a.name, sizeof(a.name), "%s", name);
	v = json_object_get(args, "threads");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > VNF_MAX_THREADS)
			return ctl_reply_fail("\"threads\" must be an integer 1..%d", VNF_MAX_THREADS);
		a.threads = (uint32_t)json_integer_value(v);
	}
	s = arg_str(args, "policy", &bad);
	if (bad || (s && strcmp(s, "closed") && strcmp(s, "open")))
		return ctl_reply_fail("\"policy\" must be \"closed\" or \"open\"");
	if (s && !strcmp(s, "open"))
		a.policy = CH_FAIL_OPEN;
	s = arg_str(args, "dispatch", &bad);
	if (bad || (s && strcmp(s, "rr") && strcmp(s, "flow")))
		return ctl_reply_fail("\"dispatch\" must be \"rr\" or \"flow\"");
	if (s && !strcmp(s, "flow"))
		a.dispatch = CH_DISPATCH_FLOW;
	err = toe_chain_vnf_add(c->tc, &a, &created, &id, region, sizeof(region));
	if (err == -EEXIST)
		return ctl_reply_fail("vnf %s exists with other threads/policy/dispatch", name);
	if (err == -ENOSPC)
		return ctl_reply_fail("no room for another vnf (at most %d over the TOE's life)",
				      CH_MAX_VNFS);
	if (err)
		return ctl_reply_fail("vnf %s: %s", name, strerror(-err));
	return ctl_reply_ok(json_pack("{s:s,s:i,s:s,s:b}", "name", name, "id", (int)id,
				      "region", region, "created", created));
}

static json_t *cmd_vnf_attach(struct toe_ctl *c, json_t *args)
{
	const char *name;
	json_t *v, *fail;
	uint32_t epoch;
	int err;

	if ((fail = need_name(args, &name)))
		return fail;
	v = json_object_get(args, "pid");
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 0x3fffffff)
		return ctl_reply_fail("\"pid\" must be a process id");
	err = toe_chain_vnf_attach(c->tc, name, (pid_t)json_integer_value(v), &epoch);
	if (err == -ENOENT)
		return ctl_reply_fail("no vnf %s", name);
	if (err)
		return ctl_reply_fail("vnf %s: %s", name, strerror(-err));
	return ctl_reply_ok(json_pack("{s:s,s:I,s:i}", "name", name,
				      "pid", (json_int_t)json_integer_value(v), "epoch", (int)epoch));
}

static json_t *cmd_vnf_run(struct toe_ctl *c, json_t *args)
{
	const char *name;
	json_t *v, *fail;
	int err;

	if ((fail = need_name(args, &name)))
		return fail;
	v = json_object_get(args, "threads");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > VNF_MAX_THREADS)
		return ctl_reply_fail("\"threads\" must be an integer 1..%d", VNF_MAX_THREADS);
	err = toe_chain_vnf_run(c->tc, name, (uint32_t)json_integer_value(v));
	if (err == -ENOENT)
		return ctl_reply_fail("no vnf %s", name);
	if (err == -EINVAL)
		return ctl_reply_fail("vnf %s: \"threads\" %d is more than it has", name,
				      (int)json_integer_value(v));
	if (err)
		return ctl_reply_fail("vnf %s: %s", name, strerror(-err));
	return ctl_reply_ok(json_pack("{s:s,s:i}", "name", name, "running",
				      (int)json_integer_value(v)));
}

static json_t *cmd_vnf_del(struct toe_ctl *c, json_t *args)
{
	const char *name;
	json_t *fail;
	int err;

	if ((fail = need_name(args, &name)))
		return fail;
	err = toe_chain_vnf_del(c->tc, name);
	if (err == -ENOENT)
		return ctl_reply_fail("no vnf %s", name);
	if (err == -EBUSY)
		return ctl_reply_fail("vnf %s is used by a chain", name);
	if (err)
		return ctl_reply_fail("vnf %s: %s", name, strerror(-err));
	return ctl_reply_ok(json_pack("{s:s}", "deleted", name));
}

static json_t *cmd_vnf_ls(struct toe_ctl *c)
{
	struct toe_vnf_view *v = calloc(CH_MAX_VNFS, sizeof(*v));
	json_t *a = json_array();
	unsigned int n;

	if (!v || !a) {
		free(v);
		json_decref(a);
		return ctl_reply_fail("out of memory");
	}
	n = toe_chain_vnf_list(c->tc, v, CH_MAX_VNFS);
	for (unsigned int i = 0; i < n; i++)
		json_array_append_new(a, json_pack(
			"{s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:b,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:i}",
			"name", v[i].a.name, "id", (int)v[i].id, "pid", (int)v[i].pid,
			"threads", (int)v[i].a.threads, "running", (int)v[i].running,
			"policy", v[i].a.policy == CH_FAIL_OPEN ? "open" : "closed",
			"dispatch", v[i].a.dispatch == CH_DISPATCH_FLOW ? "flow" : "rr",
			"failed", v[i].info.failed, "epoch", (int)v[i].info.epoch,
			"dispatched", (json_int_t)v[i].info.dispatched,
			"verdicts", (json_int_t)v[i].info.verdicts,
			"bad_verdicts", (json_int_t)v[i].info.bad_verdicts,
			"bypassed", (json_int_t)v[i].info.bypassed,
			"failures", (json_int_t)v[i].info.failures,
			"alerts", (json_int_t)v[i].info.alerts,
			"outstanding", (int)v[i].info.outstanding,
			"bells", (int)v[i].info.bells));
	free(v);
	return ctl_reply_ok(json_pack("{s:o}", "vnfs", a));
}

static json_t *cmd_chain_set(struct toe_ctl *c, json_t *args)
{
	struct toe_chain_spec *sp;
	const char *name, *bad = NULL;
	json_t *hops, *fail, *reply;
	uint64_t version;
	uint32_t dir;
	size_t h, i;
	int err;

	if (parse_dir(args, &dir))
		return ctl_reply_fail("\"dir\" must be \"in\" or \"out\"");
	if ((fail = need_name(args, &name)))
		return fail;
	hops = json_object_get(args, "hops");
	if (!json_is_array(hops) || json_array_size(hops) > CH_MAX_HOPS)
		return ctl_reply_fail("\"hops\" must be an array of at most %d hops", CH_MAX_HOPS);
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return ctl_reply_fail("out of memory");
	snprintf(sp->name, sizeof(sp->name), "%s", name);
	sp->nhops = (uint32_t)json_array_size(hops);
	for (h = 0; h < sp->nhops; h++) {
		json_t *hop = json_array_get(hops, h);

		if (!json_is_array(hop) || json_array_size(hop) == 0 ||
		    json_array_size(hop) > CH_MAX_PAR) {
			reply = ctl_reply_fail("hop %zu must be an array of 1-%d vnf names", h + 1,
					       CH_MAX_PAR);
			goto out;
		}
		sp->nvnfs[h] = (uint32_t)json_array_size(hop);
		for (i = 0; i < sp->nvnfs[h]; i++) {
			json_t *v = json_array_get(hop, i);

			if (!json_is_string(v) || !toe_chain_name_valid(json_string_value(v)) ||
			    strlen(json_string_value(v)) != json_string_length(v)) {
				reply = ctl_reply_fail("hop %zu: bad vnf name", h + 1);
				goto out;
			}
			snprintf(sp->vnf[h][i], sizeof(sp->vnf[h][i]), "%s", json_string_value(v));
		}
	}
	err = toe_chain_set(c->tc, dir, sp, &version, &bad);
	if (err == -ENOENT)
		reply = ctl_reply_fail("no vnf %s", bad ? bad : "?");
	else if (err == -EINVAL && bad)
		reply = ctl_reply_fail("vnf %s appears twice in the chain", bad);
	else if (err)
		reply = ctl_reply_fail("chain %s: %s", name, strerror(-err));
	else
		reply = ctl_reply_ok(json_pack("{s:s,s:s,s:I}", "dir", dir_name(dir), "name", name,
					       "version", (json_int_t)version));
out:
	free(sp);
	return reply;
}

static json_t *cmd_chain_del(struct toe_ctl *c, json_t *args)
{
	uint32_t dir;
	int err;

	if (parse_dir(args, &dir))
		return ctl_reply_fail("\"dir\" must be \"in\" or \"out\"");
	err = toe_chain_del(c->tc, dir);
	if (err == -ENOENT)
		return ctl_reply_fail("no chain set in direction %s", dir_name(dir));
	if (err)
		return ctl_reply_fail("chain %s: %s", dir_name(dir), strerror(-err));
	return ctl_reply_ok(json_pack("{s:s}", "deleted", dir_name(dir)));
}

static json_t *cmd_stats(struct toe_ctl *c)
{
	struct toe_denial *den = calloc(TOE_DENIALS, sizeof(*den));
	struct toe_chain_stat st[2];
	json_t *chains = json_array(), *dens = json_array();
	unsigned int n;

	if (!den || !chains || !dens) {
		free(den);
		json_decref(chains);
		json_decref(dens);
		return ctl_reply_fail("out of memory");
	}
	n = toe_chain_stats(c->tc, st, den, TOE_DENIALS);
	for (uint32_t d = 0; d < 2; d++) {
		if (!st[d].set)
			continue;
		json_array_append_new(chains, json_pack(
			"{s:s,s:s,s:I,s:i,s:I,s:I,s:I,s:I,s:I,s:i,s:i,s:f}",
			"dir", dir_name(d), "name", st[d].name, "version", (json_int_t)st[d].version,
			"hops", (int)st[d].nhops, "arrivals", (json_int_t)st[d].arrivals,
			"taken", (json_int_t)st[d].taken, "finished", (json_int_t)st[d].finished,
			"denied", (json_int_t)st[d].denied, "alerted", (json_int_t)st[d].alerted,
			"in_qlen", (int)st[d].in_qlen,
			"out_qlen", (int)st[d].out_qlen, "pps", st[d].pps));
	}
	for (unsigned int i = 0; i < n; i++) {
		json_t *o = json_pack(
			"{s:f,s:s,s:s,s:s,s:i,s:s,s:s}", "time", den[i].time,
			"dir", dir_name(den[i].dir), "chain", den[i].chain, "vnf", den[i].vnf,
			"rule", (int)den[i].rule, "reason", toe_chain_reason_name(den[i].reason),
			"conn", den[i].conn);
		char inc[16];

		if (o && den[i].incident) {
			snprintf(inc, sizeof(inc), "%08x", den[i].incident);
			json_object_set_new(o, "incident", json_string(inc));
		}
		json_array_append_new(dens, o);
	}
	free(den);
	return ctl_reply_ok(json_pack("{s:o,s:o}", "chains", chains, "denials", dens));
}

/* capture.set: dir, on, and when on: path, kib, max_bytes (toe_capture.h). */
static json_t *cmd_capture_set(struct toe_ctl *c, json_t *args)
{
	struct toe_capture_cfg cfg = { .kib = TOE_CAP_KIB_DEFAULT,
				       .max_bytes = TOE_CAP_BYTES_DEFAULT };
	json_t *v = json_object_get(args, "on");
	const char *path;
	bool bad = false;
	uint32_t dir;
	int err;

	if (!c->cap)
		return ctl_reply_fail("capture is not available in this TOE");
	if (parse_dir(args, &dir))
		return ctl_reply_fail("\"dir\" must be \"in\" or \"out\"");
	if (!json_is_boolean(v))
		return ctl_reply_fail("\"on\" must be true or false");
	cfg.on = json_is_true(v);
	if (cfg.on) {
		path = arg_str(args, "path", &bad);
		if (!path || bad || path[0] != '/' || strlen(path) >= sizeof(cfg.path))
			return ctl_reply_fail("\"path\" must be an absolute directory path of at most %d characters",
					      TOE_CAP_PATH_MAX - 1);
		strcpy(cfg.path, path);
		v = json_object_get(args, "kib");
		if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
			  json_integer_value(v) > TOE_CAP_KIB_MAX))
			return ctl_reply_fail("\"kib\" must be an integer 1..%d", TOE_CAP_KIB_MAX);
		if (v)
			cfg.kib = (uint32_t)json_integer_value(v);
		v = json_object_get(args, "max_bytes");
		if (v && (!json_is_integer(v) ||
			  json_integer_value(v) < (json_int_t)TOE_CAP_BYTES_MIN))
			return ctl_reply_fail("\"max_bytes\" must be an integer >= %llu",
					      (unsigned long long)TOE_CAP_BYTES_MIN);
		if (v)
			cfg.max_bytes = (uint64_t)json_integer_value(v);
		v = json_object_get(args, "all");
		if (v && !json_is_boolean(v))
			return ctl_reply_fail("\"all\" must be true or false");
		cfg.all = json_is_true(v);
	}
	err = toe_capture_set(c->cap, dir, &cfg);
	if (err == -EBUSY)
		return ctl_reply_fail("\"kib\" must be the other direction's (one history size per TOE)");
	if (err == -EEXIST)
		return ctl_reply_fail("\"all\": full capture is on for the other direction (one at a time per TOE)");
	if (err)
		return ctl_reply_fail("\"path\" %s: %s", cfg.path, strerror(-err));
	return ctl_reply_ok(json_pack("{s:s,s:b}", "dir", dir_name(dir), "on", cfg.on));
}

static json_t *cmd_capture_show(struct toe_ctl *c)
{
	struct toe_capture_stats st;
	json_t *dirs;

	if (!c->cap)
		return ctl_reply_fail("capture is not available in this TOE");
	toe_capture_get(c->cap, &st);
	dirs = json_object();
	for (uint32_t d = 0; d < 2; d++)
		json_object_set_new(dirs, dir_name(d), json_pack(
			"{s:b,s:b,s:s,s:i,s:I}", "on", st.cfg[d].on, "all", st.cfg[d].all,
			"path", st.cfg[d].path, "kib", (int)st.cfg[d].kib,
			"max_bytes", (json_int_t)st.cfg[d].max_bytes));
	return ctl_reply_ok(json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I,s:I,s:I}}",
				      "dirs", dirs,
				      "records", (json_int_t)st.records,
				      "alerts", (json_int_t)st.alerts,
				      "written", (json_int_t)st.written,
				      "dropped", (json_int_t)st.dropped,
				      "nohist", (json_int_t)st.nohist,
				      "errors", (json_int_t)st.errors,
				      "removed", (json_int_t)st.removed,
				      "buffered", (json_int_t)st.buffered,
				      "all", "chunks", (json_int_t)st.all.chunks,
				      "bytes", (json_int_t)st.all.bytes,
				      "dropped", (json_int_t)st.all.dropped,
				      "dropped_bytes", (json_int_t)st.all.dropped_bytes,
				      "files", (json_int_t)st.all.files,
				      "errors", (json_int_t)st.all.errors,
				      "buffered", (json_int_t)st.all.buffered));
}

static json_t *dispatch(struct toe_ctl *c, json_t *req)
{
	json_t *v = json_object_get(req, "v");
	json_t *args = json_object_get(req, "args");
	const char *cmd = json_string_value(json_object_get(req, "cmd"));

	if (!json_is_integer(v) || json_integer_value(v) != CTL_VERSION)
		return ctl_reply_fail("protocol version %d only", CTL_VERSION);
	if (!cmd)
		return ctl_reply_fail("\"cmd\" missing");
	if (args && !json_is_object(args))
		return ctl_reply_fail("\"args\" must be an object");
	if (!args)
		args = json_object();
	else
		json_incref(args);
	if (!strcmp(cmd, "version"))
		v = ctl_reply_ok(json_pack("{s:i,s:s,s:s}", "protocol", CTL_VERSION,
					   "daemon", "tochain-toe", "name", c->name));
	else if (!strcmp(cmd, "vnf.add"))
		v = cmd_vnf_add(c, args);
	else if (!strcmp(cmd, "vnf.attach"))
		v = cmd_vnf_attach(c, args);
	else if (!strcmp(cmd, "vnf.run"))
		v = cmd_vnf_run(c, args);
	else if (!strcmp(cmd, "vnf.del"))
		v = cmd_vnf_del(c, args);
	else if (!strcmp(cmd, "vnf.ls"))
		v = cmd_vnf_ls(c);
	else if (!strcmp(cmd, "chain.set"))
		v = cmd_chain_set(c, args);
	else if (!strcmp(cmd, "chain.del"))
		v = cmd_chain_del(c, args);
	else if (!strcmp(cmd, "stats"))
		v = cmd_stats(c);
	else if (!strcmp(cmd, "capture.set"))
		v = cmd_capture_set(c, args);
	else if (!strcmp(cmd, "capture.show"))
		v = cmd_capture_show(c);
	else if (!strcmp(cmd, "chains.ready"))	/* the chains are set: serve (toe_hold.h) */
		v = ctl_reply_ok(json_pack("{s:b}", "was_held",
					   c->hold && toe_hold_release(c->hold)));
	else
		v = ctl_reply_fail("unknown command %.64s", cmd);
	json_decref(args);
	return v;
}

static void serve_one(struct toe_ctl *c, int fd)
{
	const char *err = NULL;
	json_t *req = ctl_recv(fd, CTL_READ_MS, &err);
	json_t *reply;

	reply = req ? dispatch(c, req) : ctl_reply_fail("%s", err ? err : "bad request");
	if (reply)
		ctl_send(fd, reply);
	json_decref(reply);
	json_decref(req);
}

static void *ctl_main(void *arg)
{
	struct toe_ctl *c = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = c->lfd, .events = POLLIN },
				       { .fd = c->stop_fd, .events = POLLIN } };
		int n = poll(p, 2, SAMPLE_MS), fd;

		toe_chain_sample(c->tc);
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (p[1].revents)
			break;
		fd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve_one(c, fd);
		close(fd);
	}
	return NULL;
}

struct toe_ctl *toe_ctl_start(const char *path, const char *name, struct toe_chain *tc,
			      struct toe_capture *cap, struct toe_hold *hold)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct toe_ctl *c;
	int err = ENAMETOOLONG;

	if (strlen(path) >= sizeof(sun.sun_path))
		goto out_errno;
	err = ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out_errno;
	c->path = strdup(path);
	if (!c->path)
		goto out_free;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->tc = tc;
	c->cap = cap;
	c->hold = hold;
	strcpy(sun.sun_path, path);
	c->stop_fd = eventfd(0, EFD_CLOEXEC);
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->stop_fd < 0 || c->lfd < 0) {
		err = errno;
		goto out_fds;
	}
	unlink(path);
	/* 0600 from the start: no window where others could connect */
	{
		mode_t old = umask(0177);
		int r = bind(c->lfd, (struct sockaddr *)&sun, sizeof(sun));

		umask(old);
		if (r || listen(c->lfd, 16)) {
			err = errno;
			goto out_unlink;
		}
	}
	err = pthread_create(&c->thread, NULL, ctl_main, c);
	if (err)
		goto out_unlink;
	return c;

out_unlink:
	unlink(path);
out_fds:
	if (c->lfd >= 0)
		close(c->lfd);
	if (c->stop_fd >= 0)
		close(c->stop_fd);
	free(c->path);
out_free:
	free(c);
out_errno:
	errno = err;
	return NULL;
}

void toe_ctl_stop(struct toe_ctl *c)
{
	uint64_t one = 1;

	if (!c)
		return;
	if (write(c->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot fail on a fresh eventfd */
	}
	pthread_join(c->thread, NULL);
	close(c->lfd);
	close(c->stop_fd);
	unlink(c->path);
	free(c->path);
	free(c);
}
