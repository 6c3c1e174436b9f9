// SPDX-License-Identifier: MIT
/* tochain-vnf: a VNF process (every kind); see vnfs/runtime/README.md. */
#include "vnf_cli.h"

int main(int argc, char **argv)
{
	return vnf_main(argc, argv);
}
