// SPDX-License-Identifier: MIT
/*
 * tochain-run [--region PATH] [--trap] -- CMD [ARGS]: run an unmodified
 * program with the guest runtime preloaded.  The runtime is
 * <dir of tochain-run>/../lib/libtochain-preload.so (TOCHAIN_PRELOAD
 * overrides); the region is --region or TOCHAIN_REGION, and inside a VM
 * without either the one region the guest driver named
 * (/dev/tochain/NAME).  Statically linked programs, Go programs and
 * --trap take the trap path instead (gl_trap.h): a supervisor running
 * the runtime serves their socket system calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gl_trap.h"

/* @cmd as execvp would find it, opened read-only; -1 if not found. */
static int open_cmd(const char *cmd)
{
	char path[PATH_MAX];
	const char *p = NULL;

	if (strchr(cmd, '/')) {
		p = cmd;
	} else {
		const char *env = getenv("PATH");
		char *dirs = strdup(env ? env : "/usr/bin:/bin"), *save = NULL;

		for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d;
		     d = strtok_r(NULL, ":", &save)) {
			snprintf(path, sizeof(path), "%s/%s", d, cmd);
			if (access(path, X_OK) == 0) {
				p = path;
				break;
			}
		}
		free(dirs);
	}
	return p ? open(p, O_RDONLY | O_CLOEXEC) : -1;
}

/*
 * A statically linked program cannot have the runtime preloaded: it
 * takes the trap path.  Looks for PT_INTERP in the ELF program headers;
 * anything unreadable or not ELF (a script) is left alone.
 */
static bool is_static_elf(int fd)
{
	unsigned char eh[64];
	bool is64, found_interp = false;
	uint64_t phoff;
	uint16_t phentsize, phnum;

	if (pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh, "\177ELF", 4) ||
	    (eh[4] != 1 && eh[4] != 2) || eh[5] != 1 /* little endian only */)
		return false;
	is64 = eh[4] == 2;
	if (is64) {
		memcpy(&phoff, eh + 32, 8);
		memcpy(&phentsize, eh + 54, 2);
		memcpy(&phnum, eh + 56, 2);
	} else {
		uint32_t off32;

		memcpy(&off32, eh + 28, 4);
		phoff = off32;
		memcpy(&phentsize, eh + 42, 2);
		memcpy(&phnum, eh + 44, 2);
	}
	for (uint16_t i = 0; i < phnum && i < 256; i++) {
		uint32_t type;

		if (pread(fd, &type, 4, (off_t)(phoff + (uint64_t)i * phentsize)) != 4)
			break;
		if (type == 3 /* PT_INTERP */) {
			found_interp = true;
			break;
		}
	}
	return !found_interp;
}

/*
 * A Go program makes its own system calls, linked statically or not:
 * its build information starts with this magic (the .go.buildinfo
 * section; Go's debug/buildinfo looks for the same).
 */
static bool is_go_elf(int fd)
{
	static const char magic[] = "\xff Go buildinf:";
	struct stat st;
	bool found;
	void *m;

	if (fstat(fd, &st) || st.st_size < 64 || !S_ISREG(st.st_mode))
		return false;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return false;
	found = memmem(m, (size_t)st.st_size, magic, sizeof(magic) - 1) != NULL;
	munmap(m, (size_t)st.st_size);
	return found;
}

/*
 * Inside a VM: the region device of the guest driver, if there is
 * exactly one named after its region (nodes still called ivshmem<N> carry
 * no valid region yet).  0, -ENOENT none, -EEXIST several.
 */
static int find_vm_region(char *out, size_t len)
{
	struct dirent *e;
	int found = 0;
	DIR *d;

	d = opendir("/dev/tochain");
	if (!d)
		return -ENOENT;
	while ((e = readdir(d)) != NULL) {
		const char *n = e->d_name;

		if (n[0] == '.' || (!strncmp(n, "ivshmem", 7) && n[7] &&
				    strspn(n + 7, "0123456789") == strlen(n + 7)))
			continue;
		if (found++ == 0)
			snprintf(out, len, "/dev/tochain/%s", n);
	}
	closedir(d);
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-run [--region PATH] [--trap] -- CMD [ARGS]\n");
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], lib[PATH_MAX + 64], dev[PATH_MAX], *pre;
	const char *region = getenv("TOCHAIN_REGION"), *old, *libp;
	bool trap = false;
	ssize_t n;
	int i = 1, fd;

	if (argc > 1 && !strcmp(argv[1], "--trap-serve"))
		return gl_trap_serve_main(argc, argv);
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--region") && i + 1 < argc) {
			region = argv[++i];
		} else if (!strcmp(argv[i], "--trap")) {
			trap = true;
		} else if (!strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!region || !*region) {
		int err = find_vm_region(dev, sizeof(dev));

		if (err) {
			fprintf(stderr, "tochain-run: no region: give --region PATH or set "
				"TOCHAIN_REGION%s\n", err == -EEXIST ?
				" (several under /dev/tochain)" : "");
			return 2;
		}
		region = dev;
	}
	if (access(region, R_OK | W_OK)) {
		fprintf(stderr, "tochain-run: --region %s: %s\n", region, strerror(errno));
		return 1;
	}
	libp = getenv("TOCHAIN_PRELOAD");
	if (!libp) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0) {
			perror("tochain-run: /proc/self/exe");
			return 1;
		}
		exe[n] = 0;
		snprintf(lib, sizeof(lib), "%s/../lib/libtochain-preload.so", dirname(exe));
		libp = lib;
	}
	if (access(libp, R_OK)) {
		fprintf(stderr, "tochain-run: %s: %s\n", libp, strerror(errno));
		return 1;
	}
	fd = open_cmd(argv[i]);
	if (fd >= 0) {
		trap = trap || is_static_elf(fd) || is_go_elf(fd);
		close(fd);
	}
	if (trap) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0) {
			perror("tochain-run: /proc/self/exe");
			return 1;
		}
		exe[n] = 0;
		if (gl_trap_launch(exe, libp, region))
			return 1;
		if (setenv("TOCHAIN_REGION", region, 1)) {
			perror("tochain-run");
			return 1;
		}
		goto run;
	}
	old = getenv("LD_PRELOAD");
	if (old && *old) {
		pre = malloc(strlen(libp) + strlen(old) + 2);
		if (!pre)
			return 1;
		sprintf(pre, "%s:%s", libp, old);
	} else {
		pre = strdup(libp);
	}
	if (!pre || setenv("LD_PRELOAD", pre, 1) || setenv("TOCHAIN_REGION", region, 1)) {
		perror("tochain-run");
		free(pre);
		return 1;
	}
	free(pre);	/* setenv copied it */
run:
	execvp(argv[i], argv + i);
	fprintf(stderr, "tochain-run: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
