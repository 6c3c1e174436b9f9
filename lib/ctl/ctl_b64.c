// SPDX-License-Identifier: MIT
/* Base64 for control replies; see include/tochain/ctl_b64.h. */
#include <stdbool.h>
#include <string.h>

#include "tochain/ctl_b64.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t ctl_b64_encoded_len(size_t len)
{
	return (len + 2) / 3 * 4;
}

void ctl_b64_encode(const uint8_t *in, size_t len, char *out)
{
	size_t i = 0;

	for (; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = alphabet[(v >> 6) & 63];
		*out++ = alphabet[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);

		*out++ = alphabet[v >> 18];
		*out++ = alphabet[(v >> 12) & 63];
		*out++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		*out++ = '=';
	}
	*out = 0;
}

static int val(char c)
{
	const char *p = c ? strchr(alphabet, c) : NULL;

	return p ? (int)(p - alphabet) : -1;
}

long ctl_b64_decode(const char *in, size_t len, uint8_t *out)
{
	long n = 0;

	if (len % 4)
		return -1;
	for (size_t i = 0; i < len; i += 4) {
		int a = val(in[i]), b = val(in[i + 1]), c, d;
		bool last = i + 4 == len;
		uint32_t v;

		c = last && in[i + 2] == '=' && in[i + 3] == '=' ? 0 : val(in[i + 2]);
		d = last && in[i + 3] == '=' ? 0 : val(in[i + 3]);
		if (a < 0 || b < 0 || c < 0 || d < 0)
			return -1;
		v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
		out[n++] = (uint8_t)(v >> 16);
		if (last && in[i + 2] == '=')
			break;
		out[n++] = (uint8_t)(v >> 8);
		if (last && in[i + 3] == '=')
			break;
		out[n++] = (uint8_t)v;
	}
	return n;
}
