// SPDX-License-Identifier: MIT
/* tochain-sim SCENARIO [--json] [--plan]: runs a scenario through the scheduler
 * library in sync and/or cfs mode at every load level and reports. */
#include "hs_simcli.h"

int main(int argc, char **argv)
{
	return hs_simcli_main(argc, argv);
}
