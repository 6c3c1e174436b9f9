/* SPDX-License-Identifier: MIT */
/*
 * The stats command (td_stats_cmd): each chain's counters from its TOE
 * (each VM's TOE asked once), the CPU quota admission reserves for it,
 * and the TOEs' last denials.  A td_cmd_fn (td_priv.h).  The metrics
 * endpoint (td_metrics.h) serves the same gathering.
 */
#ifndef TOCHAIN_TD_STATS_H
#define TOCHAIN_TD_STATS_H

#include <jansson.h>

struct daemon;

json_t *td_stats_cmd(struct daemon *d, json_t *args);

/*
 * What `stats` returns, {"chains": [...], "denials": [...]}
 * (docs/CONTROL-PROTOCOL.md), of every chain or of chain @only (NULL: all;
 * the caller checked it exists).  A chain whose TOE cannot be asked has
 * "error".  The caller's reference.
 */
json_t *td_stats_gather(struct daemon *d, const char *only);

#endif
