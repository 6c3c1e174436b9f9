/* SPDX-License-Identifier: MIT */
/* Running helper programs (td_exec_*): argv only, never a shell. */
#ifndef TOCHAIN_TD_EXEC_H
#define TOCHAIN_TD_EXEC_H

#include <stddef.h>

/*
 * Run argv[0] (searched in PATH) with @argv, wait at most @timeout_ms.
 * Its stderr (first line) goes to @err when non-zero exit.
 * Returns 0 on exit status 0, -1 otherwise.
 */
int td_run(char *const argv[], int timeout_ms, char *err, size_t errlen);

/* Printf-style convenience: td_runf(err, errlen, "ip", "-n", ns, ..., NULL). */
int td_runv(char *err, size_t errlen, const char *arg0, ...);

#endif
