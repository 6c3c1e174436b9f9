/* SPDX-License-Identifier: MIT */
/*
 * Test and benchmark harness for the chain scheduler (chh_*): a synthetic
 * data region standing in for a VM's region, payload patterns, VNF
 * processes (tochain-vnf) and their statistics.  Not part of the library.
 */
#ifndef TOCHAIN_CH_HARNESS_H
#define TOCHAIN_CH_HARNESS_H

#include <stdint.h>
#include <sys/types.h>

#include <tochain/region.h>

#include "ch_psched.h"
#include "vnf_null.h"

/* A host-kind stand-in for a guest data region with @nbufs buffers. */
struct tcr_region *chh_data_region(const char *path, uint32_t nbufs, uint32_t slot_size);

/* Write payload @seqno into buffer @buf (length varies with seqno); returns len. */
uint32_t chh_fill(struct tcr_region *r, uint32_t buf, uint64_t seqno, const char *marker);

/* A descriptor for buffer @buf of data region @region. */
void chh_pkt(struct ch_pkt *p, uint32_t region, uint32_t buf, uint32_t len, uint64_t cookie);

/* Start tochain-vnf (@bin) for VNF region @region; extra args NULL-terminated. */
pid_t chh_spawn_vnf(const char *bin, const char *region, const char *stats, ...);

/* SIGTERM, wait up to @ms, then SIGKILL; returns the wait status or -1. */
int chh_stop(pid_t pid, int ms);

/* Parse a stats file of the null VNF; per-thread counts into @thr (may be NULL). */
int chh_read_stats(const char *path, struct vnf_null_stats *st, uint64_t *thr, uint32_t nthr);

/* Wait (up to @ms) until a file exists / the scheduler has nothing in flight. */
int chh_wait_file(const char *path, int ms);

uint64_t chh_now_ns(void);
void chh_sleep_us(unsigned int us);

#endif /* TOCHAIN_CH_HARNESS_H */
