// SPDX-License-Identifier: MIT
/* File helpers of the v1 and v2 cgroup backends; see cg_backend.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cg_backend.h"

int cg_fs_write(const char *mount, const char *rel, const char *file, const char *val)
{
	char path[PATH_MAX + 256];
	int fd, err = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", mount, rel, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

int cg_fs_read(const char *mount, const char *rel, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX + 256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", mount, rel, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

int cg_fs_mkdirs(const char *mount, const char *rel)
{
	char path[PATH_MAX + 256];
	size_t base;

	base = (size_t)snprintf(path, sizeof(path), "%s/", mount);
	for (size_t i = 0;; i++) {
		if (rel[i] == '/' || rel[i] == '\0') {
			path[base + i] = '\0';
			if (mkdir(path, 0755) && errno != EEXIST)
				return -errno;
			if (rel[i] == '\0')
				return 0;
		}
		path[base + i] = rel[i];
	}
}

int cg_fs_rmdir(const char *mount, const char *rel)
{
	char path[PATH_MAX + 256];

	if (!mount[0])
		return 0;
	snprintf(path, sizeof(path), "%s/%s", mount, rel);
	/* A task that just exited may still be leaving the group: retry a while. */
	for (int i = 0; rmdir(path); i++) {
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY || i == 100)
			return -errno;
		usleep(10000);
	}
	return 0;
}
