/* SPDX-License-Identifier: MIT */
/*
 * fw_nft_priv.h - PRIVATE to vnfs/fw and its tests.
 */
#ifndef TOCHAIN_FW_NFT_PRIV_H
#define TOCHAIN_FW_NFT_PRIV_H

/*
 * Test seam: when set, the nftables helper child calls it first, before
 * entering the namespace.  Tests use it to make the helper exit or crash
 * the way libnftables can, and check that the caller survives.  NULL in
 * production; set it only while no fw_nft_* call is running.
 */
extern void (*fw_nft_child_hook)(void);

#endif /* TOCHAIN_FW_NFT_PRIV_H */
