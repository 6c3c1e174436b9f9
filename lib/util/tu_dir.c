// SPDX-License-Identifier: MIT
/* Sorted directory listings; see include/tochain/util.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tochain/util.h"

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tu_dir_names(int dirfd, const char *suffix, char ***names)
{
	size_t n = 0, cap = 0, sl = strlen(suffix);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	*names = NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.' || l <= sl || strcmp(de->d_name + l - sl, suffix))
			continue;
		if (n == cap) {
			char **nn = realloc(*names, (cap = cap ? 2 * cap : 64) * sizeof(**names));

			if (!nn)
				break;
			*names = nn;
		}
		if (!((*names)[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(*names, n, sizeof(**names), name_cmp);
	return n;
}

void tu_dir_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
