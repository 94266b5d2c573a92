/*
 * test_optval.c - numbers in option values, as fio reads them: units,
 * fio's arithmetic and keywords, the errors, and the way back to text.
 * Option names and places in messages are options.c's (test_jobfile.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "job/optval.h"

#define MIB (1024ull * 1024)

/* The value of @s, which must parse. */
static uint64_t val(const char *s, enum optval_mode mode)
{
	struct optval v;
	char why[256] = "";

	if (optval_parse(s, mode, false, &v, why, sizeof(why)))
		fail_msg("'%s' did not parse: %s", s, why);
	return v.v;
}

/* The reason @s is refused, which must contain @needle. */
static void refused(const char *s, enum optval_mode mode, const char *needle)
{
	struct optval v;
	char why[256] = "";

	assert_int_equal(optval_parse(s, mode, false, &v, why, sizeof(why)), -EINVAL);
	if (!strstr(why, needle))
		fail_msg("'%s': expected \"%s\" in \"%s\"", s, needle, why);
}

static void test_size_units_are_powers_of_1024(void **state)
{
	(void)state;
	assert_int_equal(val("4096", OPTVAL_SIZE), 4096);
	assert_int_equal(val("4k", OPTVAL_SIZE), 4096);
	assert_int_equal(val("4KB", OPTVAL_SIZE), 4096);
	assert_int_equal(val("1.5k", OPTVAL_SIZE), 1536);
	assert_int_equal(val("2g", OPTVAL_SIZE), 2ull << 30);
	assert_int_equal(val("0x10", OPTVAL_SIZE), 16);
}

/* fio's kb_base=1024 reads KiB as 1000, and the caller is told. */
static void test_kib_is_1000_and_flagged(void **state)
{
	struct optval v;
	char why[64];

	(void)state;
	assert_int_equal(optval_parse("4KiB", OPTVAL_SIZE, false, &v, why, sizeof(why)), 0);
	assert_int_equal(v.v, 4000);
	assert_true(v.si);
	assert_int_equal(optval_parse("4k", OPTVAL_SIZE, false, &v, why, sizeof(why)), 0);
	assert_false(v.si);
}

static void test_percent_only_when_allowed(void **state)
{
	struct optval v;
	char why[128];

	(void)state;
	assert_int_equal(optval_parse("50%", OPTVAL_SIZE, true, &v, why, sizeof(why)), 0);
	assert_true(v.pct);
	assert_int_equal(v.v, 50);
	refused("50%", OPTVAL_SIZE, "unknown unit '%'");
}

static void test_time_bare_number_is_seconds(void **state)
{
	(void)state;
	assert_int_equal(val("10", OPTVAL_TIME), 10000000000ull);
	assert_int_equal(val("500ms", OPTVAL_TIME), 500000000ull);
	assert_int_equal(val("1m", OPTVAL_TIME), 60000000000ull);
	assert_int_equal(val("250us", OPTVAL_TIME), 250000ull);
}

/* A unit binds looser than * and tighter than +, as fio's grammar. */
static void test_arithmetic_precedence(void **state)
{
	(void)state;
	assert_int_equal(val("(16*1024*1024)", OPTVAL_SIZE), 16 * MIB);
	assert_int_equal(val("(2*4k)", OPTVAL_SIZE), 8192);
	assert_int_equal(val("(1+2k)", OPTVAL_SIZE), 2049);
	assert_int_equal(val("(2^3^2)", OPTVAL_SIZE), 512);
	assert_int_equal(val("(-2^2)", OPTVAL_SIZE), 4);
	assert_int_equal(val("(7/2)", OPTVAL_SIZE), 3);
}

/* In a time expression with a unit, a bare number is microseconds. */
static void test_time_expression_units(void **state)
{
	(void)state;
	assert_int_equal(val("(10)", OPTVAL_TIME), 10000000000ull);
	assert_int_equal(val("(1s+1)", OPTVAL_TIME), 1000001000ull);
}

static void test_keywords(void **state)
{
	uint64_t mb = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / MIB;

	(void)state;
	assert_int_equal(val("$pagesize", OPTVAL_SIZE), (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(val("($ncpus*2)", OPTVAL_SIZE),
			 2 * (uint64_t)sysconf(_SC_NPROCESSORS_ONLN));
	/* $mb_memory without a unit counts MiB (SPEC 2: an eighth of memory) */
	assert_int_equal(val("$mb_memory/8", OPTVAL_SIZE), mb / 8 * MIB);
	/* fio replaces the keyword as text: "$mb_memoryk" is "<N>k" */
	assert_int_equal(val("$mb_memoryk", OPTVAL_SIZE), mb * 1024);
}

static void test_plain_errors(void **state)
{
	(void)state;
	refused("1x", OPTVAL_SIZE, "unknown unit 'x'");
	refused("abc", OPTVAL_SIZE, "expected a number");
	refused("0.1k", OPTVAL_SIZE, "not a whole number of bytes");
	refused("1m+1", OPTVAL_SIZE, "arithmetic needs parentheses");
	refused("99999999999999999999", OPTVAL_SIZE, "too large");
}

static void test_expression_errors(void **state)
{
	(void)state;
	refused("(1/0)", OPTVAL_SIZE, "bad expression: division by zero");
	refused("(1-2)", OPTVAL_SIZE, "bad expression: the result -1 is negative");
	refused("((1)", OPTVAL_SIZE, "bad expression: missing ')'");
	refused("(1))", OPTVAL_SIZE, "bad expression: unbalanced ')'");
	refused("$nosuch", OPTVAL_SIZE, "bad expression: unknown keyword '$nosuch'");
	refused("(9223372036854775807*2)", OPTVAL_SIZE, "bad expression: result too large");
}

/* Hostile nesting is refused, not followed down the stack. */
static void test_nesting_bounded(void **state)
{
	char s[256];

	(void)state;
	memset(s, '(', 100);
	strcpy(s + 100, "1");
	memset(s + 101, ')', 100);
	s[201] = '\0';
	refused(s, OPTVAL_SIZE, "nested too deeply");
}

static void test_format_size(void **state)
{
	char buf[32];

	(void)state;
	optval_fmt_size(buf, sizeof(buf), 4096);
	assert_string_equal(buf, "4k");
	optval_fmt_size(buf, sizeof(buf), 1ull << 30);
	assert_string_equal(buf, "1g");
	optval_fmt_size(buf, sizeof(buf), 1000);
	assert_string_equal(buf, "1000");
	optval_fmt_size(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0");
}

static void test_format_time(void **state)
{
	char buf[32];

	(void)state;
	optval_fmt_time(buf, sizeof(buf), 10000000000ull);
	assert_string_equal(buf, "10s");
	optval_fmt_time(buf, sizeof(buf), 500000000ull);
	assert_string_equal(buf, "500ms");
	optval_fmt_time(buf, sizeof(buf), 250000);
	assert_string_equal(buf, "250us");
	optval_fmt_time(buf, sizeof(buf), 0);
	assert_string_equal(buf, "0");
}

/* What is printed reads back as the same number. */
static void test_format_parses_back(void **state)
{
	static const uint64_t sizes[] = { 1, 512, 4096, 1536, 3ull << 40, 5ull << 50 };
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		optval_fmt_size(buf, sizeof(buf), sizes[i]);
		assert_int_equal(val(buf, OPTVAL_SIZE), sizes[i]);
	}
	optval_fmt_time(buf, sizeof(buf), 250000);
	assert_int_equal(val(buf, OPTVAL_TIME), 250000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_units_are_powers_of_1024),
		cmocka_unit_test(test_kib_is_1000_and_flagged),
		cmocka_unit_test(test_percent_only_when_allowed),
		cmocka_unit_test(test_time_bare_number_is_seconds),
		cmocka_unit_test(test_arithmetic_precedence),
		cmocka_unit_test(test_time_expression_units),
		cmocka_unit_test(test_keywords),
		cmocka_unit_test(test_plain_errors),
		cmocka_unit_test(test_expression_errors),
		cmocka_unit_test(test_nesting_bounded),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_format_time),
		cmocka_unit_test(test_format_parses_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
