/* SPDX-License-Identifier: MIT */
/* The tochain-vnf command line (vnf_main).  See vnfs/runtime/README.md. */
#ifndef TOCHAIN_VNF_CLI_H
#define TOCHAIN_VNF_CLI_H

/* The tochain-vnf command line (main.c calls only this). */
int vnf_main(int argc, char **argv);

#endif /* TOCHAIN_VNF_CLI_H */
