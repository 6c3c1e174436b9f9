// SPDX-License-Identifier: MIT
/* tochaind: see td_daemon.h. */
#include "td_daemon.h"

int main(int argc, char **argv)
{
	struct td_config cfg;
	int foreground, rc;

	rc = td_daemon_parse(argc, argv, &cfg, &foreground);
	if (rc)
		return rc;
	return td_daemon_run(&cfg, foreground);
}
