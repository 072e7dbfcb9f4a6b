// SPDX-License-Identifier: MIT
/*
 * unit-md2: libcuda-shim/md2.c against RFC 1319's test suite (Appendix
 * A.5), fed whole and in awkward pieces, plus the HMAC construction the
 * cudart integrity check uses: its first block (key ^ 0x36) must leave the
 * state and checksum that ZLUDA captured from NVIDIA's driver
 * (vosen/ZLUDA dark_api/src/lib.rs, test integrity_check_pass2), and
 * HMAC-MD2 must equal MD2((K ^ opad) || MD2((K ^ ipad) || m)) computed by
 * hand.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "md2.h"

static void hex(const uint8_t *d, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* RFC 1319, A.5 */
static const struct {
	const char *msg, *digest;
} rfc[] = {
	{ "", "8350e5a3e24c153df2275c9f80692773" },
	{ "a", "32ec01ec4a6dac72c0ab96fb34c0b5d1" },
	{ "abc", "da853b0d3f88d99b30283a69e6ded6bb" },
	{ "message digest", "ab4f496bfb2a530b219ff33031fe06b0" },
	{ "abcdefghijklmnopqrstuvwxyz", "4e8ddff3650292ab5a4108c3aa47940b" },
	{ "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	  "da33def2a42df13975352846c30338cd" },
	{ "1234567890123456789012345678901234567890123456789012345678901234567890"
	  "1234567890", "d5976f79d83d3a0dc9806c3c66f3efd8" },
};

START_TEST(rfc1319_suite)
{
	uint8_t d[16];
	char h[33];

	md2(rfc[_i].msg, strlen(rfc[_i].msg), d);
	hex(d, h);
	ck_assert_msg(!strcmp(h, rfc[_i].digest), "MD2(\"%s\") = %s, want %s",
		      rfc[_i].msg, h, rfc[_i].digest);
}
END_TEST

/* The same digests when the message arrives in pieces of every size. */
START_TEST(rfc1319_incremental)
{
	const char *m = rfc[6].msg;
	size_t len = strlen(m);

	for (size_t step = 1; step <= 33; step++) {
		struct md2_ctx c;
		uint8_t d[16];
		char h[33];

		md2_init(&c);
		for (size_t off = 0; off < len; off += step)
			md2_update(&c, m + off, off + step > len ? len - off : step);
		md2_final(&c, d);
		hex(d, h);
		ck_assert_msg(!strcmp(h, rfc[6].digest), "step %zu: %s", step, h);
	}
}
END_TEST

static const uint8_t key[16] = {
	0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
	0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
};

/* ZLUDA's integrity_check_pass2 expectation: 48 bytes of state, then the
 * 16-byte checksum, after the block key ^ 0x36. */
START_TEST(hmac_first_block)
{
	static const uint8_t want[64] = {
		0x8b, 0x21, 0x9a, 0x49, 0xe8, 0x6d, 0x1a, 0xee, 0xf2, 0x37, 0xf9, 0xb5,
		0x4a, 0x8c, 0x3c, 0x75, 0xc7, 0x1e, 0xee, 0x21, 0xcf, 0x29, 0x8a, 0xe5,
		0x13, 0x83, 0xf4, 0xec, 0x33, 0x04, 0xe2, 0xfd, 0xb0, 0x2f, 0x09, 0x01,
		0x4f, 0xf7, 0x68, 0x6d, 0x69, 0x46, 0x43, 0x7e, 0xb6, 0x2b, 0x21, 0xed,
		0x57, 0xa1, 0x10, 0x86, 0x0e, 0x60, 0x44, 0x1e, 0x70, 0x5f, 0x67, 0xd1,
		0xeb, 0x67, 0xa1, 0x3d,
	};
	struct hmac_md2_ctx h;

	hmac_md2_init(&h, key, sizeof(key));
	ck_assert_uint_eq(h.inner.n, 0);
	ck_assert_msg(!memcmp(h.inner.x, want, 48), "state after key ^ ipad");
	ck_assert_msg(!memcmp(h.inner.c, want + 48, 16), "checksum after key ^ ipad");
}
END_TEST

START_TEST(hmac_by_hand)
{
	const char *msg = "the integrity record and the devices";
	uint8_t a[16], b[16], inner[16], pad[16 + 64];
	struct hmac_md2_ctx h;
	size_t n = strlen(msg);

	for (int i = 0; i < 16; i++)
		pad[i] = key[i] ^ 0x36;
	memcpy(pad + 16, msg, n);
	md2(pad, 16 + n, inner);
	for (int i = 0; i < 16; i++)
		pad[i] = key[i] ^ 0x5c;
	memcpy(pad + 16, inner, 16);
	md2(pad, 32, a);

	hmac_md2_init(&h, key, sizeof(key));
	hmac_md2_update(&h, msg, 5);
	hmac_md2_update(&h, msg + 5, n - 5);
	hmac_md2_final(&h, b);
	ck_assert_msg(!memcmp(a, b, 16), "HMAC-MD2 differs from its definition");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("md2");
	TCase *tc = tcase_create("md2");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, rfc1319_suite, 0, sizeof(rfc) / sizeof(rfc[0]));
	tcase_add_test(tc, rfc1319_incremental);
	tcase_add_test(tc, hmac_first_block);
	tcase_add_test(tc, hmac_by_hand);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
