/* SPDX-License-Identifier: MIT */
/*
 * hs_simcli — tochain-sim's command line: reads the scenario file, runs
 * every (mode, load) pair, prints.  Kept out of main.c so tests link it.
 */
#ifndef HS_SIMCLI_H
#define HS_SIMCLI_H

/* Exit status: 0 ok, 1 bad scenario / refused / I/O error, 2 bad usage. */
int hs_simcli_main(int argc, char **argv);

#endif
