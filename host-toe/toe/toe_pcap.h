/* SPDX-License-Identifier: MIT */
/*
 * Private to host-toe/toe/ (not installed): pcap files of the TOE's
 * captures (toe_pcap_*), pure functions over caller buffers, no I/O.
 *
 * The TOE sees payload, not packets: a capture synthesises the frames a
 * sniffer on the VM's link would have seen, Ethernet + IPv4 or IPv6 +
 * TCP or UDP around each payload segment, with the connection's real
 * addresses and ports and TCP sequence numbers that follow the stream's
 * byte offsets (seq = isn + offset, ack = the peer's isn + what the peer
 * sent so far), checksums filled in, so that tcpdump and Wireshark decode
 * and reassemble the stream.  Files are "pcap with nanosecond
 * timestamps" (magic a1b23c4d), link type Ethernet.  MAC addresses are
 * fixed locally administered ones: 02:00:00:00:00:01 the peer, :02 the VM.
 */
#ifndef TOCHAIN_TOE_PCAP_H
#define TOCHAIN_TOE_PCAP_H

#include <stddef.h>
#include <stdint.h>

#define TOE_PCAP_FILE_HDR	24
#define TOE_PCAP_SNAPLEN	262144u
#define TOE_PCAP_MSS		1460u	/* payload bytes per synthesised segment at most */
/* record header + Ethernet + IPv6 + TCP: the most a packet adds to its payload */
#define TOE_PCAP_PKT_OVERHEAD	(16u + 14u + 40u + 20u)

/* One side of the connection as the VM's link sees it. */
struct toe_pcap_conn {
	uint8_t family;			/* AF_INET or AF_INET6 */
	uint8_t l4proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t vm_port, peer_port;	/* host byte order */
	uint8_t vm_addr[16], peer_addr[16];	/* IPv4 in the first 4 bytes */
};

#define TOE_PCAP_TO_VM		0	/* peer -> VM (the TOE's inbound) */
#define TOE_PCAP_FROM_VM	1	/* VM -> peer (outbound) */

/* The global header; writes TOE_PCAP_FILE_HDR bytes at @out. */
size_t toe_pcap_file_header(uint8_t *out);

struct toe_pcap_pkt {
	uint64_t unix_ns;		/* the record's timestamp */
	uint32_t dir;			/* TOE_PCAP_TO_VM / _FROM_VM */
	uint8_t tcp_flags;		/* TH_* (TCP only) */
	uint32_t seq, ack;		/* TCP only */
	const uint8_t *data;
	uint32_t len;			/* at most 65535 - headers */
};

/*
 * Bytes toe_pcap_packet() writes for a payload of @len on @c: record
 * header, frame and payload.
 */
size_t toe_pcap_packet_size(const struct toe_pcap_conn *c, uint32_t len);

/*
 * Append one packet record at @out (room: @room bytes).  Returns the
 * bytes written, or 0 when it does not fit or @c / @p are invalid
 * (family, protocol, a payload too long for one IP packet).
 */
size_t toe_pcap_packet(uint8_t *out, size_t room, const struct toe_pcap_conn *c,
		       const struct toe_pcap_pkt *p);

/* The Internet checksum of @len bytes continuing partial sum @sum. */
uint16_t toe_pcap_csum(uint32_t sum, const uint8_t *data, size_t len);

#endif /* TOCHAIN_TOE_PCAP_H */
