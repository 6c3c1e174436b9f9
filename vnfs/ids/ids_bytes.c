// SPDX-License-Identifier: MIT
/*
 * Evaluating isdataat, byte_test and byte_jump (Snort 2.9 semantics) on
 * one inspection buffer, at the cursor the preceding options left:
 *
 *   isdataat:N[,relative]   a byte exists at start + N (cursor + N): the
 *                           buffer so far holds more than that position
 *   byte_test:n,op,V,off    the n bytes at start + off (cursor + off),
 *                           read as a big/little-endian integer or as
 *                           ASCII digits (string, hex|dec|oct), masked
 *                           (bitmask), compared: read op V, where & and ^
 *                           are true when (read & V) / (read ^ V) is not 0
 *   urilen:[<|>]N, A<>B, A<=>B[,raw|norm]  the length of the URI buffer
 *                           (raw by default, as Snort 2.9): less, more,
 *                           equal, between (exclusive, inclusive)
 *   byte_extract:n,off,name reads the same way into a variable of the
 *                           rule (times multiplier, aligned to 2 or 4) and
 *                           moves the cursor past the bytes read; later
 *                           byte_test values and offsets, byte_jump and
 *                           isdataat offsets, content offset/depth/
 *                           distance/within may name it
 *   byte_jump:n,off         reads the same way, then moves the cursor to
 *                           just after the bytes read (or the buffer start:
 *                           from_beginning) + value * multiplier (rounded
 *                           up to 4: align) + post_offset; fails if that
 *                           lies outside the buffer
 *
 * What "the buffer so far" means for a stream: everything of the direction
 * up to the end of the current chunk (a byte that has not arrived is not
 * there).  A rule is checked when one of its contents or pcres fires, as
 * Snort checks a rule on the packet that holds its fast pattern.  Reads
 * never leave the bytes the view holds: a position that lies before the
 * kept window, or past the data, fails the option.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_int.h"

/* The value @b reads at @p (b->nbytes available); false if not a number. */
static bool read_value(const struct ids_bytes *b, const uint8_t *p,
		       uint64_t *out)
{
	uint64_t v = 0;

	if (!b->base) {
		for (unsigned i = 0; i < b->nbytes; i++)
			v = b->little ? v | (uint64_t)p[i] << (8 * i) :
				v << 8 | p[i];
	} else {
		char txt[16], *end;

		/* as Snort: strtoul on the n bytes (spaces, sign, 0x) */
		memcpy(txt, p, b->nbytes);
		txt[b->nbytes] = 0;
		v = strtoull(txt, &end, b->base);
		if (end == txt)
			return false;
	}
	if (b->bitmask) {
		v &= b->bitmask;
		v >>= __builtin_ctz(b->bitmask);
	}
	*out = v;
	return true;
}

static bool compare(const struct ids_bytes *b, uint64_t v)
{
	bool r;

	switch (b->cmp) {
	case IDS_BCMP_LT: r = v < b->value; break;
	case IDS_BCMP_GT: r = v > b->value; break;
	case IDS_BCMP_LE: r = v <= b->value; break;
	case IDS_BCMP_GE: r = v >= b->value; break;
	case IDS_BCMP_EQ: r = v == b->value; break;
	case IDS_BCMP_AND: r = (v & b->value) != 0; break;
	case IDS_BCMP_IN: r = v > b->value && v < b->value_hi; break;
	case IDS_BCMP_IN_INCL: r = v >= b->value && v <= b->value_hi; break;
	default: r = (v ^ b->value) != 0; break;
	}
	return r != b->not;
}

static int b64_val(uint8_t c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * base64_decode[:bytes N][,offset M][,relative]: from start + M (cursor +
 * M), N encoded bytes or to the end of the data; line breaks and spaces
 * are skipped (folded lines), the first other non-base64 byte or '=' ends
 * the encoded text.
 */
size_t ids_b64_decode(const struct ids_elem *el, const struct ids_view *v,
		      uint64_t cur, uint8_t *out)
{
	const struct ids_bytes *b = &el->b;
	uint64_t end = v->base + v->len;
	uint64_t pos = (el->relative ? cur : v->start) + (uint64_t)b->offset;
	uint64_t stop = b->value && pos + b->value < end ? pos + b->value : end;
	uint32_t acc = 0;
	size_t n = 0;
	int bits = 0;

	if (pos < v->base)
		return 0;
	for (; pos < stop && n < IDS_B64_MAX; pos++) {
		uint8_t c = v->data[pos - v->base];
		int x = b64_val(c);

		if (x < 0) {
			if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
				continue;
			break;
		}
		acc = acc << 6 | (uint32_t)x;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (uint8_t)(acc >> bits);
		}
	}
	return n;
}

bool ids_bytes_eval(const struct ids_elem *el, const struct ids_view *v,
		    uint64_t cur, uint64_t *next, uint64_t *vars)
{
	const struct ids_bytes *b = &el->b;
	int64_t end = (int64_t)(v->base + v->len);
	int64_t off = b->var_offset == IDS_NO_VAR ? b->offset :
		(int64_t)(vars[b->var_offset] & 0xffffffffu);
	int64_t pos = (int64_t)(el->relative ? cur : v->start) + off;
	int64_t np;
	uint64_t val;

	*next = cur;
	if (b->op == IDS_BOP_URILEN || b->op == IDS_BOP_DSIZE)
		return compare(b, v->base + v->len - v->start);
	if (b->op == IDS_BOP_ISDATAAT)
		return (pos >= (int64_t)v->start && pos < end) != el->negated;
	if (pos < (int64_t)v->base || pos + b->nbytes > end ||
	    !read_value(b, v->data + (pos - (int64_t)v->base), &val))
		return false;
	if (b->op == IDS_BOP_TEST) {
		struct ids_bytes t = *b;

		if (b->var_value != IDS_NO_VAR)
			t.value = vars[b->var_value];
		return compare(&t, val);
	}
	if (b->op == IDS_BOP_EXTRACT) {
		val = (val & 0xffffffffu) * b->multiplier;
		if (b->align_to && val % b->align_to)
			val += b->align_to - val % b->align_to;
		vars[b->var_out] = val;
		*next = (uint64_t)(pos + b->nbytes);
		return true;
	}
	/* byte_jump; values are at most 32 bits times a 16-bit multiplier */
	val = (val & 0xffffffffu) * b->multiplier;
	if (b->align && val % 4)
		val += 4 - val % 4;
	np = (b->from_beginning ? (int64_t)v->start : pos + b->nbytes) +
	     (int64_t)val + b->post_offset;
	if (np < (int64_t)v->start || np > end)
		return false;
	*next = (uint64_t)np;
	return true;
}
