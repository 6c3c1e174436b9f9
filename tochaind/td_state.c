// SPDX-License-Identifier: MIT
/* tochaind's persistent state; see td_state.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "td_state.h"

#define STATE_VERSION 1

bool td_name_valid(const char *name, const char **why)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n >= TD_NAME_MAX) {
		*why = "must be 1 to 12 characters";
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
			*why = "may hold only a-z, 0-9 and '-'";
			return false;
		}
	}
	if (name[0] == '-') {
		*why = "must not start with '-'";
		return false;
	}
	return true;
}

bool td_domain_valid(const char *name, const char **why)
{
	size_t n = name ? strlen(name) : 0;

	/* stricter than libvirt: the name goes into XML and messages unquoted */
	if (n == 0 || n >= TD_DOMAIN_MAX) {
		*why = "must be 1 to 63 characters";
		return false;
	}
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") != n) {
		*why = "may hold only A-Z, a-z, 0-9 and '.', '_', '+', '-'";
		return false;
	}
	if (name[0] == '-' || name[0] == '.') {
		*why = "must not start with '-' or '.'";
		return false;
	}
	return true;
}

int td_addr_parse(const char *s, struct td_addr *a, const char **why)
{
	char buf[64], *slash, *end;
	unsigned long prefix;

	memset(a, 0, sizeof(*a));
	if (!s || strlen(s) >= sizeof(buf)) {
		*why = "expected ADDR/PREFIX";
		return -EINVAL;
	}
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash || !slash[1]) {
		*why = "expected ADDR/PREFIX";
		return -EINVAL;
	}
	*slash = '\0';
	errno = 0;
	prefix = strtoul(slash + 1, &end, 10);
	if (*end || errno || slash[1] == '+' || slash[1] == '-') {
		*why = "prefix is not a number";
		return -EINVAL;
	}
	if (inet_pton(AF_INET, buf, a->addr) == 1) {
		a->family = AF_INET;
		if (prefix < 1 || prefix > 32) {
			*why = "IPv4 prefix must be 1..32";
			return -EINVAL;
		}
	} else if (inet_pton(AF_INET6, buf, a->addr) == 1) {
		a->family = AF_INET6;
		if (prefix < 1 || prefix > 128) {
			*why = "IPv6 prefix must be 1..128";
			return -EINVAL;
		}
	} else {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	a->prefix = (unsigned int)prefix;
	inet_ntop(a->family, a->addr, buf, sizeof(buf));
	snprintf(a->text, sizeof(a->text), "%s/%u", buf, a->prefix);
	return 0;
}

int td_size_parse(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		switch (*end) {
		case 'K': case 'k': mul = 1ull << 10; break;
		case 'M': case 'm': mul = 1ull << 20; break;
		case 'G': case 'g': mul = 1ull << 30; break;
		default: return -EINVAL;
		}
		if (end[1] && !(end[1] == 'i' && end[2] == 'B' && !end[3]) &&
		    !((end[1] == 'B' || end[1] == 'b') && !end[2]))
			return -EINVAL;
	}
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

struct td_vm *td_state_find_vm(struct td_state *st, const char *name)
{
	for (unsigned int i = 0; i < st->nvms; i++)
		if (!strcmp(st->vms[i].name, name))
			return &st->vms[i];
	return NULL;
}

json_t *td_vm_json(const struct td_vm *vm)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:i}",
			      "name", vm->name, "ip", vm->ip.text, "netns", vm->netns,
			      "veth", vm->veth, "cgroup", vm->cgroup, "region", vm->region,
			      "region_size", (json_int_t)vm->region_size,
			      "toe_pid", (int)vm->toe_pid);

	/* only VMs that have a libvirt domain carry the field */
	if (o && vm->domain[0])
		json_object_set_new(o, "domain", json_string(vm->domain));
	return o;
}

static int copy_str(json_t *o, const char *key, char *dst, size_t size, bool required)
{
	json_t *v = json_object_get(o, key);
	const char *s;

	if (!v) {
		dst[0] = '\0';
		return required ? -EINVAL : 0;
	}
	if (!json_is_string(v))
		return -EINVAL;
	s = json_string_value(v);
	if (strlen(s) >= size || strlen(s) != json_string_length(v))
		return -EINVAL;
	strcpy(dst, s);
	return 0;
}

static int vm_from_json(json_t *o, struct td_vm *vm, const char **why)
{
	char ip[64];
	json_t *v;

	memset(vm, 0, sizeof(*vm));
	if (!json_is_object(o)) {
		*why = "a VM entry is not an object";
		return -EINVAL;
	}
	if (copy_str(o, "name", vm->name, sizeof(vm->name), true) ||
	    !td_name_valid(vm->name, why)) {
		*why = "a VM has an invalid name";
		return -EINVAL;
	}
	if (copy_str(o, "ip", ip, sizeof(ip), true) || td_addr_parse(ip, &vm->ip, why) ||
	    copy_str(o, "netns", vm->netns, sizeof(vm->netns), true) ||
	    copy_str(o, "veth", vm->veth, sizeof(vm->veth), true) ||
	    copy_str(o, "cgroup", vm->cgroup, sizeof(vm->cgroup), true) ||
	    copy_str(o, "region", vm->region, sizeof(vm->region), true)) {
		*why = "a VM entry has a missing or invalid field";
		return -EINVAL;
	}
	v = json_object_get(o, "region_size");
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		*why = "a VM entry has an invalid region_size";
		return -EINVAL;
	}
	vm->region_size = (uint64_t)json_integer_value(v);
	v = json_object_get(o, "toe_pid");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
		  json_integer_value(v) > 4194304)) {
		*why = "a VM entry has an invalid toe_pid";
		return -EINVAL;
	}
	vm->toe_pid = v ? (pid_t)json_integer_value(v) : 0;
	if (copy_str(o, "domain", vm->domain, sizeof(vm->domain), false) ||
	    (json_object_get(o, "domain") && !td_domain_valid(vm->domain, why))) {
		*why = "a VM entry has an invalid domain";
		return -EINVAL;
	}
	return 0;
}

static int from_json(json_t *root, const char *name, struct td_state *st, char *err,
		     size_t errlen)
{
	const char *why = NULL;
	json_t *vms, *v;
	size_t i;

	v = json_object_get(root, "version");
	if (!json_is_object(root) || !json_is_integer(v) || json_integer_value(v) != STATE_VERSION) {
		snprintf(err, errlen, "%s: unknown state version", name);
		return -EBADMSG;
	}
	vms = json_object_get(root, "vms");
	if (!json_is_array(vms) || json_array_size(vms) > TD_MAX_VMS) {
		snprintf(err, errlen, "%s: \"vms\" is not a list of at most %d", name, TD_MAX_VMS);
		return -EBADMSG;
	}
	json_array_foreach(vms, i, v) {
		struct td_vm *vm = &st->vms[st->nvms];

		why = NULL;
		if (vm_from_json(v, vm, &why) || td_state_find_vm(st, vm->name)) {
			snprintf(err, errlen, "%s: VM %zu: %s", name, i, why ? why : "duplicate name");
			memset(st, 0, sizeof(*st));
			return -EBADMSG;
		}
		st->nvms++;
	}
	return 0;
}

int td_state_parse(const char *text, size_t len, const char *name, struct td_state *st,
		   char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(st, 0, sizeof(*st));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, errlen, "%s:%d: %s", name, jerr.line, jerr.text);
		return -EBADMSG;
	}
	rc = from_json(root, name, st, err, errlen);
	json_decref(root);
	return rc;
}

int td_state_load(const char *path, struct td_state *st, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(st, 0, sizeof(*st));
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (access(path, F_OK) && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s:%d: %s", path, jerr.line, jerr.text);
		return -EBADMSG;
	}
	rc = from_json(root, path, st, err, errlen);
	json_decref(root);
	return rc;
}

int td_state_save(const char *path, const struct td_state *st)
{
	char tmp[PATH_MAX + 16], dir[PATH_MAX];
	json_t *root, *vms = json_array();
	int fd, err = 0;
	char *text;
	size_t len;

	for (unsigned int i = 0; i < st->nvms; i++)
		json_array_append_new(vms, td_vm_json(&st->vms[i]));
	root = json_pack("{s:i, s:o}", "version", STATE_VERSION, "vms", vms);
	text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
	json_decref(root);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		free(text);
		return -errno;
	}
	if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd))
		err = -errno ? -errno : -EIO;
	free(text);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	/* Make the rename itself durable. */
	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}
