// SPDX-License-Identifier: MIT
/* The guest users' access to a stand-in VM's region (td_guest.h). */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "td_guest.h"

int td_guest_mode_parse(const char *s, unsigned int *mode, const char **why)
{
	unsigned long m = 0;
	size_t i;

	/* octal digits only: strtoul would take "+660", " 660" or "0x1b0" */
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '7' || i >= 4) {
			*why = "is not an octal mode such as 0660";
			return -EINVAL;
		}
		m = m * 8 + (unsigned long)(s[i] - '0');
	}
	if (!i) {
		*why = "is not an octal mode such as 0660";
		return -EINVAL;
	}
	if ((m & ~0666ul) || (m & 0600ul) != 0600ul) {
		*why = "must have read/write bits only and owner rw (e.g. 0660, 0666)";
		return -EINVAL;
	}
	*mode = (unsigned int)m;
	return 0;
}

bool td_guest_group_valid(const char *name, const char **why)
{
	size_t n = strlen(name);

	if (!n || n >= TD_GROUP_MAX) {
		*why = "must be 1 to 32 characters";
		return false;
	}
	/* the portable user/group name set; no leading '-' (an option) */
	if (name[0] == '-' || strspn(name, "abcdefghijklmnopqrstuvwxyz"
				     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n) {
		*why = "must be of [A-Za-z0-9._-], not starting with '-'";
		return false;
	}
	return true;
}

int td_guest_from_json(json_t *o, bool exists, unsigned int *mode, char *group, char *err,
		       size_t errlen)
{
	json_t *m = json_object_get(o, "guest_mode"), *g = json_object_get(o, "guest_group");
	const char *why = "is not a string";

	*mode = 0;
	group[0] = '\0';
	if (m && (!json_is_string(m) || td_guest_mode_parse(json_string_value(m), mode, &why))) {
		snprintf(err, errlen, "guest-mode '%.16s' %s",
			 json_is_string(m) ? json_string_value(m) : "", why);
		return -EINVAL;
	}
	why = "is not a string";
	if (g && (!json_is_string(g) || !td_guest_group_valid(json_string_value(g), &why))) {
		snprintf(err, errlen, "guest-group '%.40s' %s",
			 json_is_string(g) ? json_string_value(g) : "", why);
		return -EINVAL;
	}
	if (g && exists && !getgrnam(json_string_value(g))) {
		snprintf(err, errlen, "guest-group '%s': no such group on this host",
			 json_string_value(g));
		return -EINVAL;
	}
	if (g)
		strcpy(group, json_string_value(g));
	return 0;
}

void td_guest_to_json(unsigned int mode, const char *group, json_t *o)
{
	char buf[12];

	if (mode) {
		snprintf(buf, sizeof(buf), "%04o", mode);
		json_object_set_new(o, "guest_mode", json_string(buf));
	}
	if (group[0])
		json_object_set_new(o, "guest_group", json_string(group));
}

void td_guest_toe_args(unsigned int mode, const char *group, char *buf, const char **argv,
		       size_t *n)
{
	if (mode) {
		snprintf(buf, 12, "%04o", mode);
		argv[(*n)++] = "--guest-mode";
		argv[(*n)++] = buf;
	}
	if (group[0]) {
		argv[(*n)++] = "--guest-group";
		argv[(*n)++] = group;
	}
}

int td_guest_dir_grant(const char *dir)
{
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if ((st.st_mode & 0011) != 0011 && chmod(dir, (st.st_mode & 07777) | 0011))
		return -errno;
	return 0;
}
