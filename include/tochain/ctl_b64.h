/* SPDX-License-Identifier: MIT */
/*
 * Base64 (RFC 4648, with padding) for binary payloads inside control
 * protocol replies (ctl_b64_*), e.g. a capture file fetched through
 * tochaind.  No line breaks, no whitespace accepted.
 */
#ifndef TOCHAIN_CTL_B64_H
#define TOCHAIN_CTL_B64_H

#include <stddef.h>
#include <stdint.h>

/* Characters ctl_b64_encode writes for @len bytes (without the NUL). */
size_t ctl_b64_encoded_len(size_t len);

/* Encode @len bytes of @in into @out (ctl_b64_encoded_len(len) + 1 bytes, NUL-terminated). */
void ctl_b64_encode(const uint8_t *in, size_t len, char *out);

/*
 * Decode @in (@len characters) into @out (at least len / 4 * 3 bytes).
 * Returns the bytes decoded, or -1 when @in is not canonical base64.
 */
long ctl_b64_decode(const char *in, size_t len, uint8_t *out);

#endif
