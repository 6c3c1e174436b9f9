// SPDX-License-Identifier: MIT
/* VNF processes and rules files; see td_inst.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "td_inst.h"
#include "tochain/util.h"

#define CALIBRATE_MS 60000
#define MAX_FILE (16u << 20)

void td_inst_region(const struct td_vm *vm, const char *vnf, char *out, size_t len)
{
	snprintf(out, len, "%s.vnf-%s", vm->region, vnf);
}

void td_rules_copy_path(const struct td_config *cfg, const char *vnf, char *out, size_t len)
{
	snprintf(out, len, "%s/rules/%s.rules", cfg->state_dir, vnf);
}

void td_vars_copy_path(const struct td_config *cfg, const char *vnf, char *out, size_t len)
{
	snprintf(out, len, "%s/rules/%s.vars", cfg->state_dir, vnf);
}

static void cgroup_name(const struct td_config *cfg, const char *vnf, const char *vm, char *out,
			size_t len)
{
	snprintf(out, len, "tochain/%s/vnf-%s-%s", cfg->fabric_ns, vnf, vm);
}

/* argv of tochain-vnf for @v; the strings live in @buf (three of them). */
static int build_argv(const struct td_config *cfg, const struct td_vnf *v, const char *region,
		      bool calibrate, char **argv, char (*buf)[PATH_MAX])
{
	int n = 0;

	argv[n++] = (char *)cfg->vnf_path;
	argv[n++] = "--kind";
	argv[n++] = (char *)td_kind_name(v->kind);
	if (calibrate) {
		argv[n++] = "--calibrate";
		argv[n++] = "--json";
	} else {
		argv[n++] = "--region";
		argv[n++] = (char *)region;
		snprintf(buf[0], PATH_MAX, "%u", v->threads);
		argv[n++] = "--threads";
		argv[n++] = buf[0];
	}
	if (v->rules[0]) {
		td_rules_copy_path(cfg, v->name, buf[1], PATH_MAX);
		argv[n++] = "--rules";
		argv[n++] = buf[1];
	}
	if (v->vars[0]) {
		td_vars_copy_path(cfg, v->name, buf[2], PATH_MAX);
		argv[n++] = "--vars";
		argv[n++] = buf[2];
	}
	for (unsigned int i = 0; i < v->nargs; i++)
		argv[n++] = (char *)v->args[i];
	argv[n] = NULL;
	return n;
}

int td_inst_spawn(const struct td_config *cfg, const struct td_vnf *v, const struct td_vm *vm,
		  const char *region, pid_t *pid, char *err, size_t errlen)
{
	char *argv[16 + TD_MAX_VNF_ARGS], buf[3][PATH_MAX], logp[PATH_MAX + 64], cg[256];
	int ex[2], child_errno = 0;
	pid_t p;

	if (access(cfg->vnf_path, X_OK)) {
		snprintf(err, errlen, "cannot run %s: %s", cfg->vnf_path, strerror(errno));
		return -ENOENT;
	}
	build_argv(cfg, v, region, false, argv, buf);
	snprintf(logp, sizeof(logp), "%s/vnf-%s-%s.log", cfg->state_dir, v->name, vm->name);
	cgroup_name(cfg, v->name, vm->name, cg, sizeof(cg));
	/* closed by a successful exec: until then the pid is not tochain-vnf yet */
	if (pipe2(ex, O_CLOEXEC))
		return -errno;
	p = fork();
	if (p < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(ex[0]);
		close(ex[1]);
		return -EAGAIN;
	}
	if (p == 0) {
		struct cg_group g;
		int logfd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		int nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigset_t none;

		/* Not a child that dies with the daemon: own session, default signals. */
		setsid();
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (cfg->have_cg && cg_create(&cfg->cg, cg, &g) == 0)
			cg_attach_pid(&g, getpid());
		if (nullfd >= 0)
			dup2(nullfd, 0);
		if (logfd >= 0) {
			dup2(logfd, 1);
			dup2(logfd, 2);
		}
		execv(cfg->vnf_path, argv);
		child_errno = errno;
		if (write(ex[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	close(ex[1]);
	while (read(ex[0], &child_errno, sizeof(child_errno)) < 0 && errno == EINTR)
		;
	close(ex[0]);
	if (child_errno) {
		waitpid(p, NULL, 0);
		snprintf(err, errlen, "cannot run %.200s: %s", cfg->vnf_path, strerror(child_errno));
		return -child_errno;
	}
	*pid = p;
	return 0;
}

void td_inst_last_error(const struct td_config *cfg, const char *vnf, const char *vm, char *out,
			size_t len)
{
	char logp[PATH_MAX + 64], buf[4096];
	ssize_t n = 0;
	int fd;

	out[0] = '\0';
	snprintf(logp, sizeof(logp), "%s/vnf-%s-%s.log", cfg->state_dir, vnf, vm);
	fd = open(logp, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (lseek(fd, 0, SEEK_END) > (off_t)sizeof(buf) - 1)
		lseek(fd, -(off_t)(sizeof(buf) - 1), SEEK_END);
	else
		lseek(fd, 0, SEEK_SET);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* the last line with something on it */
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	while (n > 0 && buf[n - 1] != '\n')
		n--;
	snprintf(out, len, "%s", buf + n);
	/* printable only: it goes into JSON and onto terminals */
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < ' ' || (unsigned char)*p == 127)
			*p = '?';
}

bool td_inst_alive(pid_t pid, const char *region)
{
	return tu_proc_runs(pid, "tochain-vnf", region);
}

void td_inst_stop(const struct td_config *cfg, pid_t pid, const char *region, const char *vnf,
		  const char *vm)
{
	tu_proc_stop(pid, "tochain-vnf", region, 1000);
	if (cfg->have_cg) {
		struct cg_group g = { .root = &cfg->cg };

		cgroup_name(cfg, vnf, vm, g.rel, sizeof(g.rel));
		for (int i = 0; i < 20 && cg_destroy(&g) == -EBUSY; i++)
			usleep(10000);
	}
}

/* Run @argv, collect its stdout (and the first stderr line on failure). */
static int run_capture(char *const argv[], int timeout_ms, char *out, size_t outlen, char *err,
		       size_t errlen)
{
	int po[2], pe[2], st = 0, fds[2];
	size_t len[2] = { 0, 0 }, cap[2];
	char ebuf[512], *buf[2];
	uint64_t t0;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC))
		return -errno;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		int nullfd = open("/dev/null", O_RDONLY);

		dup2(nullfd, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], argv);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -EAGAIN;
	}
	fds[0] = po[0];
	fds[1] = pe[0];
	buf[0] = out;
	buf[1] = ebuf;
	cap[0] = outlen - 1;
	cap[1] = sizeof(ebuf) - 1;
	t0 = tu_now_ms();
	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN },
				       { .fd = fds[1], .events = POLLIN } };
		long el;

		el = (long)(tu_now_ms() - t0);
		if (el >= timeout_ms || poll(p, 2, (int)(timeout_ms - el)) <= 0) {
			kill(pid, SIGKILL);
			len[1] = (size_t)snprintf(ebuf, sizeof(ebuf), "timed out");
			break;
		}
		for (int i = 0; i < 2; i++) {
			char sink[512];
			ssize_t n;

			if (fds[i] < 0 || !p[i].revents)
				continue;
			if (len[i] < cap[i])
				n = read(fds[i], buf[i] + len[i], cap[i] - len[i]);
			else
				n = read(fds[i], sink, sizeof(sink));
			if (n <= 0) {
				close(fds[i]);
				fds[i] = -1;
			} else if (len[i] < cap[i]) {
				len[i] += (size_t)n;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	out[len[0]] = '\0';
	ebuf[len[1]] = '\0';
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	ebuf[strcspn(ebuf, "\n")] = '\0';
	snprintf(err, errlen, "%.200s", ebuf[0] ? ebuf : "failed");
	return -EIO;
}

int td_fw_nft(const struct td_config *cfg, const struct td_vnf *v, const struct td_vm *vm,
	      char *err, size_t errlen)
{
	char rules[PATH_MAX], out[4096], why[400] = "";
	char *argv[] = { (char *)cfg->fwapply_path, "--netns", (char *)vm->netns,
			 v ? "apply" : "remove", rules, NULL };
	int rc;

	if (!v)
		argv[4] = NULL;
	else
		td_rules_copy_path(cfg, v->name, rules, sizeof(rules));
	if (access(cfg->fwapply_path, X_OK)) {
		snprintf(err, errlen, "cannot run %s: %s", cfg->fwapply_path, strerror(errno));
		return -ENOENT;
	}
	rc = run_capture(argv, CALIBRATE_MS, out, sizeof(out), why, sizeof(why));
	if (rc)
		snprintf(err, errlen, "tochain-fw-apply %s in %s: %s", v ? "apply" : "remove",
			 vm->netns, why);
	return rc;
}

int td_vnf_calibrate(const struct td_config *cfg, const struct td_vnf *v, uint64_t *pps,
		     char *err, size_t errlen)
{
	char *argv[16 + TD_MAX_VNF_ARGS], buf[3][PATH_MAX], out[4096], why[400] = "";
	json_t *j, *p;
	int rc;

	if (access(cfg->vnf_path, X_OK)) {
		snprintf(err, errlen, "cannot run %s: %s", cfg->vnf_path, strerror(errno));
		return -ENOENT;
	}
	build_argv(cfg, v, NULL, true, argv, buf);
	rc = run_capture(argv, CALIBRATE_MS, out, sizeof(out), why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "tochain-vnf --calibrate: %s", why);
		return rc;
	}
	j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
	p = json_object_get(j, "pps");
	if (!json_is_number(p) || json_number_value(p) < 1 ||
	    json_number_value(p) > (double)TD_MAX_RATE) {
		json_decref(j);
		snprintf(err, errlen, "tochain-vnf --calibrate gave no usable \"pps\"");
		return -EBADMSG;
	}
	*pps = (uint64_t)json_number_value(p);
	json_decref(j);
	return 0;
}

/* Copy @from into @dir/@name; the copy's path in @out.  0 or -errno. */
static int stage(const char *from, const char *dir, const char *name, char *out, size_t outlen)
{
	size_t len = 0;
	char *text = td_read_file(from, &len);
	int rc;

	if (!text)
		return -errno;
	snprintf(out, outlen, "%s/%s", dir, name);
	rc = td_write_file(out, text, len);
	free(text);
	return rc;
}

/* @s with every @from replaced by @to, into @out. */
static void replace_all(const char *s, const char *from, const char *to, char *out, size_t len)
{
	size_t fl = strlen(from), o = 0;

	while (*s && o + 1 < len) {
		if (fl && !strncmp(s, from, fl)) {
			o += (size_t)snprintf(out + o, len - o, "%s", to);
			if (o >= len)
				o = len - 1;
			s += fl;
		} else {
			out[o++] = *s++;
		}
	}
	out[o] = '\0';
}

int td_rules_check(const struct td_config *cfg, const struct td_vnf *v, json_t **problems,
		   char *err, size_t errlen)
{
	char dir[PATH_MAX], rules[PATH_MAX + 64], vars[PATH_MAX + 64] = "", out[65536];
	char why[400] = "";
	char *argv[16] = { (char *)cfg->vnf_path, "--kind", (char *)td_kind_name(v->kind),
			   "--check", "--json", "--rules", rules };
	json_t *j, *a, *e;
	int n = 7, rc;
	size_t i;

	*problems = NULL;
	if (!v->rules[0])
		return 0;
	if (access(cfg->vnf_path, X_OK)) {
		snprintf(err, errlen, "cannot run %s: %s", cfg->vnf_path, strerror(errno));
		return -ENOENT;
	}
	/* The files as the instance will see them: copies alone in a directory. */
	snprintf(dir, sizeof(dir), "%s/check.XXXXXX", cfg->state_dir);
	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "cannot check the rules: %s: %s", dir, strerror(errno));
		return -errno;
	}
	rc = stage(v->rules, dir, "rules", rules, sizeof(rules));
	if (rc) {
		snprintf(err, errlen, "vnf %s: --rules %.200s: %s", v->name, v->rules, strerror(-rc));
		goto out;
	}
	if (v->vars[0]) {
		rc = stage(v->vars, dir, "vars", vars, sizeof(vars));
		if (rc) {
			snprintf(err, errlen, "vnf %s: --vars %.200s: %s", v->name, v->vars,
				 strerror(-rc));
			goto out;
		}
		argv[n++] = "--vars";
		argv[n++] = vars;
	}
	/* of the extra options, those the engine's load reads */
	for (unsigned int k = 0; k < v->nargs && n < 14; k++)
		if (!strncmp(v->args[k], "--paranoia=", 11))
			argv[n++] = (char *)v->args[k];
	argv[n] = NULL;
	rc = run_capture(argv, CALIBRATE_MS, out, sizeof(out), why, sizeof(why));
	j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
	if (!json_is_boolean(json_object_get(j, "usable"))) {
		json_decref(j);
		snprintf(err, errlen, "vnf %s: tochain-vnf --check: %s", v->name,
			 rc ? why : "no usable answer");
		rc = -EIO;
		goto out;
	}
	/* the copies' names back to the user's files */
	a = json_array();
	json_array_foreach(json_object_get(j, "problems"), i, e) {
		char m1[1024], m2[1024];

		if (!json_is_string(e))
			continue;
		replace_all(json_string_value(e), rules, v->rules, m1, sizeof(m1));
		replace_all(m1, vars, v->vars, m2, sizeof(m2));
		json_array_append_new(a, json_string(m2));
	}
	if (json_is_true(json_object_get(j, "usable"))) {
		json_decref(a);
		rc = 0;
	} else {
		char m[1024];

		e = json_array_get(a, 0);
		replace_all(json_string_value(json_object_get(j, "error")) ?: "not usable", rules,
			    v->rules, m, sizeof(m));
		snprintf(err, errlen, "vnf %s: rules refused by the %s engine: %.300s%s", v->name,
			 td_kind_name(v->kind), e ? json_string_value(e) : m,
			 json_array_size(a) > 1 ? " (and more: --json lists them)" : "");
		*problems = a;
		rc = -EINVAL;
	}
	json_decref(j);
out:
	unlink(rules);
	if (v->vars[0])
		unlink(vars);
	rmdir(dir);
	return rc;
}

char *td_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	char *buf;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > MAX_FILE) {
		int e = fstat(fd, &sb) ? errno : !S_ISREG(sb.st_mode) ? EINVAL : EFBIG;

		close(fd);
		errno = e;
		return NULL;
	}
	buf = malloc((size_t)sb.st_size + 1);
	while (buf && got < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)sb.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[got] = '\0';
	*len = got;
	return buf;
}

int td_write_file(const char *path, const char *data, size_t len)
{
	char tmp[PATH_MAX + 16], dir[PATH_MAX];
	int fd, err = 0;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdir(dir, 0700);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if ((len && write(fd, data, len) != (ssize_t)len) || fsync(fd))
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}
