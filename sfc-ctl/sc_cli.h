/* SPDX-License-Identifier: MIT */
/*
 * sfc-ctl (sc_*): the operator's CLI.  Turns the command line of
 * ../shared/INTERFACE.md into one control-protocol request to tochaind
 * and prints the reply, as text or (--json) as the reply's JSON result.
 * Exit status: 0 done, 1 refused (one line on stderr names the problem),
 * 2 bad usage.
 */
#ifndef TOCHAIN_SC_CLI_H
#define TOCHAIN_SC_CLI_H

int sc_cli_main(int argc, char **argv);

#endif
