// SPDX-License-Identifier: MIT
/* The capture commands; see td_capture.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tochain/ctl_b64.h"
#include "tochain/ctl_proto.h"
#include "tochain/util.h"
#include "td_capture.h"
#include "td_chain.h"
#include "td_priv.h"
#include "td_toe.h"

static void chain_dir(const struct daemon *d, const struct td_chain *c, char *out, size_t size)
{
	snprintf(out, size, "%s/captures/%s/%s", d->cfg->state_dir, c->vm, c->name);
}

#define CONF_NAME	".capture.json"	/* capture on: its settings (td_capture.h) */

/*
 * capture.set to @vm's TOE for direction @dir: on into @path with
 * @kib/@max/@all (NULL: defaults), or off.
 */
static json_t *toe_set(const struct td_vm *vm, const char *dir, bool on, const char *path,
		       json_t *kib, json_t *max, json_t *all, char *err, size_t errlen)
{
	json_t *targs = json_pack("{s:s,s:b}", "dir", dir, "on", on);

	if (on) {
		json_object_set_new(targs, "path", json_string(path));
		if (all)
			json_object_set(targs, "all", all);
		if (kib)
			json_object_set(targs, "kib", kib);
		if (max)
			json_object_set(targs, "max_bytes", max);
	}
	return td_toe_call(vm, "capture.set", targs, err, errlen);	/* takes targs */
}

/* mkdir -p of STATE_DIR/captures/VM/CHAIN (STATE_DIR exists). */
static int make_dir(const struct daemon *d, const struct td_chain *c)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/captures", d->cfg->state_dir);
	if (mkdir(p, 0700) && errno != EEXIST)
		return -errno;
	snprintf(p, sizeof(p), "%s/captures/%s", d->cfg->state_dir, c->vm);
	if (mkdir(p, 0700) && errno != EEXIST)
		return -errno;
	chain_dir(d, c, p, sizeof(p));
	if (mkdir(p, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

json_t *td_capture_cmd_set(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *on = json_object_get(args, "on"), *kib = json_object_get(args, "kib"),
	       *max = json_object_get(args, "max_bytes"), *all = json_object_get(args, "all"), *res;
	struct td_chain *c = td_chain_need(d, args, &fail);
	struct td_vm *vm;
	char dir[PATH_MAX], conf[PATH_MAX + 32], err[512];
	int rc;

	if (!c)
		return fail;
	if (!json_is_boolean(on))
		return ctl_reply_fail("capture: \"on\" must be true or false");
	if (kib && !json_is_integer(kib))
		return ctl_reply_fail("capture: \"kib\" must be an integer");
	if (max && !json_is_integer(max))
		return ctl_reply_fail("capture: \"max_bytes\" must be an integer");
	if (all && !json_is_boolean(all))
		return ctl_reply_fail("capture: \"all\" must be true or false");
	vm = td_state_find_vm(&d->st, c->vm);
	if (!vm)
		return ctl_reply_fail("chain %s: no vm %s", c->name, c->vm);
	chain_dir(d, c, dir, sizeof(dir));
	if (json_is_true(on) && (rc = make_dir(d, c)))
		return ctl_reply_fail("capture: cannot create %s: %s", dir, strerror(-rc));
	/* the TOE validates kib and max_bytes: its refusal names them */
	res = toe_set(vm, c->dir == TD_DIR_IN ? "in" : "out", json_is_true(on), dir, kib, max, all,
		      err, sizeof(err));
	if (!res)
		return ctl_reply_fail("%s", err);
	json_decref(res);
	snprintf(conf, sizeof(conf), "%s/%s", dir, CONF_NAME);
	if (json_is_true(on)) {
		json_t *o = json_object();

		if (kib)
			json_object_set(o, "kib", kib);
		if (max)
			json_object_set(o, "max_bytes", max);
		if (all)
			json_object_set(o, "all", all);
		if (json_dump_file(o, conf, JSON_COMPACT))
			td_log("capture: cannot write %s: capture will be off after a TOE restart", conf);
		json_decref(o);
	} else {
		unlink(conf);
	}
	td_log("capture %s%s on chain %s (%s)", json_is_true(on) ? "on" : "off",
	       json_is_true(on) && json_is_true(all) ? " (all traffic)" : "", c->name, dir);
	return ctl_reply_ok(json_pack("{s:s,s:s,s:O,s:s}", "name", c->name, "vm", c->vm, "on", on,
				      "path", dir));
}

/* The newest TD_CAP_LIST_MAX pcaps of @dir with their sidecars; @more gets how many were left out. */
static json_t *list_files(const char *dir, json_int_t *more)
{
	json_t *files = json_array();
	DIR *dd = opendir(dir);
	char **names;
	size_t n;

	*more = 0;
	if (!dd)
		return files;
	n = tu_dir_names(dirfd(dd), ".pcap", &names);
	for (size_t pos = 0; pos < n; pos++) {
		const char *nm = names[n - 1 - pos];	/* newest first */
		char side[NAME_MAX + 1];
		struct stat st;
		json_t *f, *meta;
		int fd;

		if (pos >= TD_CAP_LIST_MAX) {
			(*more)++;
			continue;
		}
		if (fstatat(dirfd(dd), nm, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		f = json_pack("{s:s,s:I}", "file", nm, "size", (json_int_t)st.st_size);
		snprintf(side, sizeof(side), "%.*s.json", (int)strlen(nm) - 5, nm);
		fd = openat(dirfd(dd), side, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		meta = fd >= 0 ? json_loadfd(fd, 0, NULL) : NULL;
		if (fd >= 0)
			close(fd);
		if (json_is_object(meta))
			json_object_update_missing(f, meta);
		json_decref(meta);
		json_array_append_new(files, f);
	}
	tu_dir_names_free(names, n);
	closedir(dd);
	return files;
}

static json_t *chain_captures(struct daemon *d, const struct td_chain *c)
{
	struct td_vm *vm = td_state_find_vm(&d->st, c->vm);
	char dir[PATH_MAX], err[512];
	json_t *o, *show = NULL, *cs;
	json_int_t more;
	const char *dn = c->dir == TD_DIR_IN ? "in" : "out";

	chain_dir(d, c, dir, sizeof(dir));
	o = json_pack("{s:s,s:s,s:s,s:s}", "name", c->name, "vm", c->vm, "dir", dn, "path", dir);
	if (vm)
		show = td_toe_call(vm, "capture.show", NULL, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "no vm %s", c->vm);
	cs = show ? json_object_get(json_object_get(show, "dirs"), dn) : NULL;
	if (json_is_object(cs)) {
		/* on only when the TOE writes into this chain's directory */
		json_object_set_new(o, "on", json_boolean(json_is_true(json_object_get(cs, "on")) &&
							  json_is_string(json_object_get(cs, "path")) &&
							  !strcmp(json_string_value(json_object_get(cs, "path")), dir)));
		json_object_set(o, "kib", json_object_get(cs, "kib"));
		json_object_set(o, "max_bytes", json_object_get(cs, "max_bytes"));
		json_object_set_new(o, "all", json_boolean(json_is_true(json_object_get(o, "on")) &&
							   json_is_true(json_object_get(cs, "all"))));
		json_object_set_new(o, "toe", json_pack("{s:O,s:O*,s:O,s:O,s:O,s:O,s:O,s:O*}",
			"records", json_object_get(show, "records"), "alerts", json_object_get(show, "alerts"), "written", json_object_get(show, "written"),
			"dropped", json_object_get(show, "dropped"), "nohist", json_object_get(show, "nohist"),
			"errors", json_object_get(show, "errors"), "removed", json_object_get(show, "removed"),
			"all", json_object_get(show, "all")));
	} else {
		json_object_set_new(o, "on", json_false());
		json_object_set_new(o, "all", json_false());
		json_object_set_new(o, "toe_error", json_string(show ? "no capture state" : err));
	}
	json_decref(show);
	json_object_set_new(o, "files", list_files(dir, &more));
	json_object_set_new(o, "more", json_integer(more));
	return o;
}

json_t *td_capture_cmd_ls(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *a;

	if (json_object_get(args, "name")) {
		struct td_chain *c = td_chain_need(d, args, &fail);

		return c ? ctl_reply_ok(json_pack("{s:[o]}", "chains", chain_captures(d, c))) : fail;
	}
	a = json_array();
	for (unsigned int i = 0; i < d->st.nchains; i++)
		json_array_append_new(a, chain_captures(d, &d->st.chains[i]));
	return ctl_reply_ok(json_pack("{s:o}", "chains", a));
}

/* A name the TOE writes: [A-Za-z0-9._-], no leading '.', ending .pcap or .json. */
static bool file_name_ok(const char *f)
{
	size_t l = strlen(f);

	if (l < 6 || l > 200 || f[0] == '.' || f[strspn(f, "abcdefghijklmnopqrstuvwxyz"
						"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")])
		return false;
	return !strcmp(f + l - 5, ".pcap") || !strcmp(f + l - 5, ".json");
}

json_t *td_capture_cmd_get(struct daemon *d, json_t *args)
{
	json_t *fail = NULL, *r;
	struct td_chain *c = td_chain_need(d, args, &fail);
	int bad = 0, fd;
	const char *file = td_arg_str(args, "file", &bad);
	char path[PATH_MAX + 256], dir[PATH_MAX], *b64;
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (!c)
		return fail;
	if (bad || !file || !file_name_ok(file))
		return ctl_reply_fail("capture get: \"file\" must be a capture file name as capture ls lists it");
	chain_dir(d, c, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ctl_reply_fail("capture get: chain %s has no file %s", c->name, file);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > TD_CAP_FETCH_MAX) {
		close(fd);
		return ctl_reply_fail("capture get: %s is not a regular file of at most %d bytes (read %s)",
				      file, TD_CAP_FETCH_MAX, path);
	}
	buf = malloc((size_t)st.st_size + 1);
	b64 = malloc(ctl_b64_encoded_len((size_t)st.st_size) + 1);
	while (buf && b64 && got < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (!buf || !b64 || got != (size_t)st.st_size) {
		free(buf);
		free(b64);
		return ctl_reply_fail("capture get: cannot read %s", path);
	}
	ctl_b64_encode(buf, got, b64);
	r = ctl_reply_ok(json_pack("{s:s,s:s,s:I,s:s}", "name", c->name, "file", file,
				   "size", (json_int_t)got, "data", b64));
	free(buf);
	free(b64);
	return r;
}

void td_capture_restore(struct daemon *d, const struct td_vm *vm, const struct td_chain *ch)
{
	char dir[PATH_MAX], conf[PATH_MAX + 32], err[512];
	json_t *o, *res;

	chain_dir(d, ch, dir, sizeof(dir));
	snprintf(conf, sizeof(conf), "%s/%s", dir, CONF_NAME);
	o = json_load_file(conf, 0, NULL);
	if (!o)
		return;		/* capture is off for this chain */
	res = toe_set(vm, ch->dir == TD_DIR_IN ? "in" : "out", true, dir,
		      json_object_get(o, "kib"), json_object_get(o, "max_bytes"), json_object_get(o, "all"),
		      err, sizeof(err));
	if (res)
		td_log("vm %s: capture on chain %s on again", vm->name, ch->name);
	else
		td_log("vm %s: capture on chain %s not restored: %s", vm->name, ch->name, err);
	json_decref(res);
	json_decref(o);
}

void td_capture_forget(struct daemon *d, const struct td_vm *vm, const char *dir,
		       const char *chain)
{
	char conf[PATH_MAX + 64], err[512];
	json_t *res = toe_set(vm, dir, false, NULL, NULL, NULL, NULL, err, sizeof(err));
	const char *why;

	if (!res)
		td_log("vm %s: capture of %s not turned off: %s", vm->name, dir, err);
	json_decref(res);
	if (chain && td_objname_valid(chain, &why)) {	/* the TOE's word: no path tricks */
		snprintf(conf, sizeof(conf), "%s/captures/%s/%s/%s", d->cfg->state_dir, vm->name, chain,
			 CONF_NAME);
		unlink(conf);
	}
}
