/*
 * test_pattern.c - fio's buffer pattern syntax (workload/pattern.c): the
 * examples fio's lib/pattern.c documents and its regression jobs use,
 * what is refused, and blocks filled and checked with %o.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "workload/pattern.h"

static void expect_bytes(const char *text, const uint8_t *want, unsigned n)
{
	struct pattern p;
	char why[256];

	if (pattern_parse(text, &p, why, sizeof(why)))
		fail_msg("%s: refused: %s", text, why);
	if (p.len != n || memcmp(p.bytes, want, n)) {
		char got[3 * 64 + 1] = "";

		for (unsigned i = 0; i < p.len && i < 64; i++)
			sprintf(got + 3 * i, "%02x ", p.bytes[i]);
		fail_msg("%s: %u bytes: %s", text, p.len, got);
	}
	pattern_free(&p);
}

static void test_fio_examples(void **state)
{
	(void)state;
	expect_bytes("\"abcd\"", (const uint8_t[]){ 0x61, 0x62, 0x63, 0x64 }, 4);
	expect_bytes("-1024", (const uint8_t[]){ 0x00, 0xfc, 0xff, 0xff }, 4);
	expect_bytes("66", (const uint8_t[]){ 0x42 }, 1);
	expect_bytes("0", (const uint8_t[]){ 0x00 }, 1);
	expect_bytes("0xFF0X1", (const uint8_t[]){ 0xff, 0x01 }, 2);
	expect_bytes("%o", (const uint8_t[8]){ 0 }, 8);
	expect_bytes("\"123\"0xFFeeCC", (const uint8_t[]){ 0x31, 0x32, 0x33, 0xff, 0xee, 0xcc }, 6);
	expect_bytes("-100xab\"1\"%o\"2\"",
		     (const uint8_t[]){ 0xf6, 0xff, 0xff, 0xff, 0xab, 0x31, 0, 0, 0, 0, 0, 0, 0, 0,
					0x32 }, 15);
	expect_bytes("0xff0x14", (const uint8_t[]){ 0xff, 0x14 }, 2);
	/* fio's t0006 and t0028 */
	expect_bytes("0xaaa", (const uint8_t[]){ 0x0a, 0xaa }, 2);
	expect_bytes("\"abcd\"-120xdeadface",
		     (const uint8_t[]){ 0x61, 0x62, 0x63, 0x64, 0xf4, 0xff, 0xff, 0xff, 0xde, 0xad,
					0xfa, 0xce }, 12);
	expect_bytes("0xaa555aa5", (const uint8_t[]){ 0xaa, 0x55, 0x5a, 0xa5 }, 4);
}

static void test_file(void **state)
{
	char path[] = "/tmp/test_pattern.XXXXXX", text[64];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "xyz", 3), 3);
	close(fd);
	snprintf(text, sizeof(text), "0x01'%s'%%o", path);
	expect_bytes(text, (const uint8_t[]){ 0x01, 'x', 'y', 'z', 0, 0, 0, 0, 0, 0, 0, 0 }, 12);
	/* fio's t0027: a 16 KiB file is a 16 KiB pattern, a block whole */
	{
		uint8_t big[16384], blk[16384];
		struct pattern p;
		char why[128];

		for (unsigned i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i * 7 + i / 251);
		fd = open(path, O_WRONLY | O_TRUNC);
		assert_int_equal(write(fd, big, sizeof(big)), (int)sizeof(big));
		close(fd);
		snprintf(text, sizeof(text), "'%s'", path);
		assert_int_equal(pattern_parse(text, &p, why, sizeof(why)), 0);
		assert_int_equal(p.len, sizeof(big));
		pattern_fill(&p, blk, sizeof(blk), 0);
		assert_memory_equal(blk, big, sizeof(big));
		pattern_free(&p);
	}
	unlink(path);
}

static void expect_refused(const char *text, const char *needle)
{
	struct pattern p;
	char why[256];

	if (!pattern_parse(text, &p, why, sizeof(why)))
		fail_msg("%s: accepted", text);
	if (!strstr(why, needle))
		fail_msg("%s: \"%s\" lacks \"%s\"", text, why, needle);
}

static void test_refused(void **state)
{
	(void)state;
	expect_refused("", "empty");
	expect_refused("abcd", "expected 0xHEX");
	expect_refused("\"abcd", "not closed");
	expect_refused("'/nonexistent/pattern'", "No such file");
	expect_refused("2147483648", "decimal outside");
}

static void test_fill_check(void **state)
{
	struct pattern p;
	uint8_t buf[4096];
	char why[128];

	(void)state;
	assert_int_equal(pattern_parse("0xaa%o", &p, why, sizeof(why)), 0);
	pattern_fill(&p, buf, sizeof(buf), 0x1000);
	/* 9-byte repeats: aa, then the offset little-endian */
	assert_int_equal(buf[0], 0xaa);
	assert_int_equal(buf[2], 0x10);
	assert_int_equal(buf[9], 0xaa);
	assert_int_equal(buf[11], 0x10);
	assert_int_equal(buf[4095], buf[4095 % 9]);
	assert_true(pattern_check(&p, buf, sizeof(buf), 0x1000));
	assert_false(pattern_check(&p, buf, sizeof(buf), 0x2000));
	buf[3000] ^= 1;
	assert_false(pattern_check(&p, buf, sizeof(buf), 0x1000));
	pattern_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fio_examples),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_fill_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
