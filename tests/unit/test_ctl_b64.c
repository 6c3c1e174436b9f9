// SPDX-License-Identifier: MIT
/* Unit tests for base64 in control replies (lib/ctl/ctl_b64.c): RFC 4648 vectors, refusals. */
#include <string.h>

#include "tc_check.h"
#include "tochain/ctl_b64.h"

static const char *vec[][2] = {
	{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
};

START_TEST(rfc4648_vectors)
{
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		char enc[16];
		uint8_t dec[16];
		size_t l = strlen(vec[i][0]);

		ck_assert_uint_eq(ctl_b64_encoded_len(l), strlen(vec[i][1]));
		ctl_b64_encode((const uint8_t *)vec[i][0], l, enc);
		ck_assert_str_eq(enc, vec[i][1]);
		ck_assert_int_eq(ctl_b64_decode(enc, strlen(enc), dec), (long)l);
		ck_assert_mem_eq(dec, vec[i][0], l);
	}
}
END_TEST

START_TEST(binary_round_trip)
{
	uint8_t in[256], out[256];
	char enc[400];

	for (int i = 0; i < 256; i++)
		in[i] = (uint8_t)(255 - i);
	ctl_b64_encode(in, sizeof(in), enc);
	ck_assert_int_eq(ctl_b64_decode(enc, strlen(enc), out), 256);
	ck_assert_mem_eq(in, out, sizeof(in));
}
END_TEST

START_TEST(bad_input_is_refused)
{
	uint8_t out[16];

	ck_assert_int_eq(ctl_b64_decode("Zm9", 3, out), -1);		/* not a multiple of 4 */
	ck_assert_int_eq(ctl_b64_decode("Zm9v\n", 5, out), -1);
	ck_assert_int_eq(ctl_b64_decode("Zm=v", 4, out), -1);		/* padding inside */
	ck_assert_int_eq(ctl_b64_decode("Zg==Zm9v", 8, out), -1);	/* padding before the end */
	ck_assert_int_eq(ctl_b64_decode("Z!9v", 4, out), -1);
	ck_assert_int_eq(ctl_b64_decode("Zm\0v", 4, out), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ctl_b64");
	TCase *t = tcase_create("b64");

	tcase_add_test(t, rfc4648_vectors);
	tcase_add_test(t, binary_round_trip);
	tcase_add_test(t, bad_input_is_refused);
	suite_add_tcase(s, t);
	return tc_run_suite(s);
}
