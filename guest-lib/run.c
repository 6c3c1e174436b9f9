// SPDX-License-Identifier: MIT
/*
 * tochain-run [--region PATH] -- CMD [ARGS]: run an unmodified program
 * with the guest runtime preloaded.  The runtime is
 * <dir of tochain-run>/../lib/libtochain-preload.so (TOCHAIN_PRELOAD
 * overrides); the region is --region or TOCHAIN_REGION.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: tochain-run [--region PATH] -- CMD [ARGS]\n");
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX], lib[PATH_MAX + 64], *pre;
	const char *region = getenv("TOCHAIN_REGION"), *old, *libp;
	ssize_t n;
	int i = 1;

	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "--region") && i + 1 < argc) {
			region = argv[++i];
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
		fprintf(stderr, "tochain-run: no region: give --region PATH or set TOCHAIN_REGION\n");
		return 2;
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
		return 1;
	}
	execvp(argv[i], argv + i);
	fprintf(stderr, "tochain-run: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
