// SPDX-License-Identifier: MIT
/* sfc-ctl: see sc_cli.h. */
#include "sc_cli.h"

int main(int argc, char **argv)
{
	return sc_cli_main(argc, argv);
}
