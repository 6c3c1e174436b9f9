// SPDX-License-Identifier: MIT
/*
 * lv_grant: tochaind's grant calls (td_libvirt_grant & co.) from the
 * command line, for tests/integration/801_libvirt_revoke.sh.
 *
 *   lv_grant URI supported DOMAIN
 *   lv_grant URI grant DOMAIN NAME REGION SIZE_MIB
 *   lv_grant URI revoke|regrant|state|ungrant DOMAIN NAME
 *
 * Prints one line "rc N ms T" (N the call's return value, T how long it
 * took), then libvirt's or QEMU's reason when N < 0 or N is a pending
 * ungrant.  Exits 0 when N >= 0, 1 when N < 0, 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "td_libvirt.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int usage(void)
{
	fprintf(stderr, "usage: lv_grant URI supported DOMAIN\n"
		"       lv_grant URI grant DOMAIN NAME REGION SIZE_MIB\n"
		"       lv_grant URI revoke|regrant|state|ungrant DOMAIN NAME\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct td_libvirt *lv;
	const char *cmd, *dom, *name;
	char err[512] = "";
	double t0;
	int rc;

	if (argc < 4)
		return usage();
	cmd = argv[2];
	dom = argv[3];
	name = argc > 4 ? argv[4] : NULL;
	if ((!strcmp(cmd, "supported") && argc != 4) || (!strcmp(cmd, "grant") && argc != 7) ||
	    (strcmp(cmd, "supported") && strcmp(cmd, "grant") && argc != 5))
		return usage();
	lv = td_libvirt_create(argv[1]);
	if (!lv) {
		perror("lv_grant");
		return 1;
	}
	t0 = now_ms();
	if (!strcmp(cmd, "supported"))
		rc = td_libvirt_revoke_supported(lv, dom, err, sizeof(err));
	else if (!strcmp(cmd, "grant"))
		rc = td_libvirt_grant(lv, dom, name, argv[5], strtoull(argv[6], NULL, 10) << 20,
				      err, sizeof(err));
	else if (!strcmp(cmd, "revoke"))
		rc = td_libvirt_revoke(lv, dom, name, err, sizeof(err));
	else if (!strcmp(cmd, "regrant"))
		rc = td_libvirt_regrant(lv, dom, name, err, sizeof(err));
	else if (!strcmp(cmd, "state"))
		rc = td_libvirt_grant_revoked(lv, dom, name, err, sizeof(err));
	else if (!strcmp(cmd, "ungrant"))
		rc = td_libvirt_ungrant(lv, dom, name, err, sizeof(err));
	else {
		td_libvirt_destroy(lv);
		return usage();
	}
	printf("rc %d ms %.1f\n", rc, now_ms() - t0);
	if (rc < 0 || (!strcmp(cmd, "ungrant") && rc == TD_LIBVIRT_UNGRANT_PENDING))
		printf("%s (%s)\n", err, rc < 0 ? strerror(-rc) : "pending");
	td_libvirt_destroy(lv);
	return rc < 0;
}
