// SPDX-License-Identifier: MIT
/* tochain-vnf: a VNF process (kind null); see vnf/README.md. */
#include "vnf_null.h"

int main(int argc, char **argv)
{
	return vnf_main(argc, argv);
}
