/*
 * test_suggest.c - "did you mean": the nearest name within a typo, a
 * swapped pair counted as one slip, never the name itself. The option
 * table's own suggestions are test_options.c's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "job/suggest.h"

/* The suggestion for @name among the NULL-terminated @names, or NULL. */
static const char *nearest(const char *name, const char *const *names)
{
	static char buf[SUGGEST_LEN_MAX + 1];
	struct suggest s;

	suggest_init(&s, name);
	for (int i = 0; names[i]; i++)
		suggest_offer(&s, names[i], strlen(names[i]));
	return suggest_result(&s, buf, sizeof(buf));
}

static const char *const names[] = { "iodepth", "numjobs", "bs", "runtime", NULL };

static void test_swapped_pair_is_one_slip(void **state)
{
	(void)state;
	assert_string_equal(nearest("iodpeth", names), "iodepth");
}

static void test_missing_letter(void **state)
{
	(void)state;
	assert_string_equal(nearest("numjob", names), "numjobs");
}

/* Short names tolerate one slip, not two. */
static void test_short_name_one_slip(void **state)
{
	(void)state;
	assert_string_equal(nearest("bz", names), "bs");
	assert_null(nearest("xz", names));
}

static void test_nothing_near(void **state)
{
	(void)state;
	assert_null(nearest("xyzzy", names));
}

/* A name that is there is no typo. */
static void test_exact_name_not_suggested(void **state)
{
	(void)state;
	assert_null(nearest("runtime", names));
}

/* A candidate may be a piece of a longer string ("a,b" alias lists). */
static void test_offer_takes_a_length(void **state)
{
	static const char list[] = "readwrite,blocksize";
	char buf[SUGGEST_LEN_MAX + 1];
	struct suggest s;

	(void)state;
	suggest_init(&s, "blocksise");
	suggest_offer(&s, list, 9);
	suggest_offer(&s, list + 10, 9);
	assert_string_equal(suggest_result(&s, buf, sizeof(buf)), "blocksize");
}

/* Of equally near names, the first offered wins. */
static void test_first_of_equals_kept(void **state)
{
	static const char *const two[] = { "rate", "rata", NULL };

	(void)state;
	assert_string_equal(nearest("ratx", two), "rate");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swapped_pair_is_one_slip),
		cmocka_unit_test(test_missing_letter),
		cmocka_unit_test(test_short_name_one_slip),
		cmocka_unit_test(test_nothing_near),
		cmocka_unit_test(test_exact_name_not_suggested),
		cmocka_unit_test(test_offer_takes_a_length),
		cmocka_unit_test(test_first_of_equals_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
