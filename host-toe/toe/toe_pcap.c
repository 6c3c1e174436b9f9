// SPDX-License-Identifier: MIT
/*
 * pcap records of synthesised frames; see toe_pcap.h.  Everything is
 * written byte by byte in network order, so the output does not depend on
 * the host's endianness or on struct layouts.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "toe_pcap.h"

#define ETH_HDR		14
#define IP4_HDR		20
#define IP6_HDR		40
#define TCP_HDR		20
#define UDP_HDR		8

static uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* pcap's own header and record header fields are in the writer's order (the magic tells). */
static uint8_t *put32h(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

size_t toe_pcap_file_header(uint8_t *out)
{
	uint8_t *p = out;
	uint16_t major = 2, minor = 4;

	p = put32h(p, 0xa1b23c4du);	/* nanosecond timestamps */
	memcpy(p, &major, 2);
	memcpy(p + 2, &minor, 2);
	p += 4;
	p = put32h(p, 0);		/* thiszone */
	p = put32h(p, 0);		/* sigfigs */
	p = put32h(p, TOE_PCAP_SNAPLEN);
	p = put32h(p, 1);		/* LINKTYPE_ETHERNET */
	return (size_t)(p - out);
}

uint16_t toe_pcap_csum(uint32_t sum, const uint8_t *data, size_t len)
{
	uint64_t s = sum;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)data[i] << 8 | data[i + 1];
	if (len & 1)
		s += (uint32_t)data[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Partial (not folded, not inverted) sum of @len bytes, @len even. */
static uint32_t sum_even(const uint8_t *data, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)data[i] << 8 | data[i + 1];
	return s;
}

static size_t l3_len(const struct toe_pcap_conn *c)
{
	return c->family == AF_INET6 ? IP6_HDR : IP4_HDR;
}

static size_t l4_len(const struct toe_pcap_conn *c)
{
	return c->l4proto == IPPROTO_UDP ? UDP_HDR : TCP_HDR;
}

static int conn_valid(const struct toe_pcap_conn *c)
{
	return (c->family == AF_INET || c->family == AF_INET6) &&
	       (c->l4proto == IPPROTO_TCP || c->l4proto == IPPROTO_UDP);
}

size_t toe_pcap_packet_size(const struct toe_pcap_conn *c, uint32_t len)
{
	return 16 + ETH_HDR + l3_len(c) + l4_len(c) + len;
}

size_t toe_pcap_packet(uint8_t *out, size_t room, const struct toe_pcap_conn *c,
		       const struct toe_pcap_pkt *p)
{
	static const uint8_t mac_peer[6] = { 2, 0, 0, 0, 0, 1 }, mac_vm[6] = { 2, 0, 0, 0, 0, 2 };
	size_t l3, l4, frame, total;
	const uint8_t *src, *dst;
	uint16_t sport, dport;
	uint8_t *o = out, *ip, *th;
	uint32_t ps;

	if (!conn_valid(c) || (p->dir != TOE_PCAP_TO_VM && p->dir != TOE_PCAP_FROM_VM))
		return 0;
	l3 = l3_len(c);
	l4 = l4_len(c);
	if ((size_t)p->len + l4 + (c->family == AF_INET ? l3 : 0) > 65535)
		return 0;
	frame = ETH_HDR + l3 + l4 + p->len;
	total = 16 + frame;
	if (total > room)
		return 0;
	if (p->dir == TOE_PCAP_TO_VM) {
		src = c->peer_addr, dst = c->vm_addr;
		sport = c->peer_port, dport = c->vm_port;
	} else {
		src = c->vm_addr, dst = c->peer_addr;
		sport = c->vm_port, dport = c->peer_port;
	}

	/* record header: seconds, nanoseconds, captured and original length */
	o = put32h(o, (uint32_t)(p->unix_ns / 1000000000ull));
	o = put32h(o, (uint32_t)(p->unix_ns % 1000000000ull));
	o = put32h(o, (uint32_t)frame);
	o = put32h(o, (uint32_t)frame);

	memcpy(o, p->dir == TOE_PCAP_TO_VM ? mac_vm : mac_peer, 6);
	memcpy(o + 6, p->dir == TOE_PCAP_TO_VM ? mac_peer : mac_vm, 6);
	o = put16(o + 12, c->family == AF_INET6 ? 0x86dd : 0x0800);

	ip = o;
	if (c->family == AF_INET) {
		o[0] = 0x45;
		o[1] = 0;
		put16(o + 2, (uint16_t)(l3 + l4 + p->len));
		put16(o + 4, 0);		/* id */
		put16(o + 6, 0x4000);		/* DF */
		o[8] = 64;
		o[9] = c->l4proto;
		put16(o + 10, 0);
		memcpy(o + 12, src, 4);
		memcpy(o + 16, dst, 4);
		put16(o + 10, toe_pcap_csum(0, o, IP4_HDR));
		/* pseudo header: addresses, protocol, L4 length */
		ps = sum_even(o + 12, 8) + c->l4proto + (uint32_t)(l4 + p->len);
	} else {
		put32(o, 0x60000000u);
		put16(o + 4, (uint16_t)(l4 + p->len));
		o[6] = c->l4proto;
		o[7] = 64;
		memcpy(o + 8, src, 16);
		memcpy(o + 24, dst, 16);
		ps = sum_even(o + 8, 32) + c->l4proto + (uint32_t)(l4 + p->len);
	}
	o = ip + l3;

	th = o;
	put16(o, sport);
	put16(o + 2, dport);
	if (c->l4proto == IPPROTO_TCP) {
		put32(o + 4, p->seq);
		put32(o + 8, p->ack);
		o[12] = (TCP_HDR / 4) << 4;
		o[13] = p->tcp_flags;
		put16(o + 14, 65535);		/* window */
		put16(o + 16, 0);
		put16(o + 18, 0);
	} else {
		put16(o + 4, (uint16_t)(UDP_HDR + p->len));
		put16(o + 6, 0);
	}
	if (p->len)
		memcpy(th + l4, p->data, p->len);
	/* the checksum over pseudo header, L4 header and payload */
	{
		uint32_t s = ps + sum_even(th, l4);
		uint16_t ck;

		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		ck = toe_pcap_csum(s, th + l4, p->len);
		if (c->l4proto == IPPROTO_UDP && ck == 0)
			ck = 0xffff;
		put16(th + (c->l4proto == IPPROTO_TCP ? 16 : 6), ck);
	}
	return total;
}
