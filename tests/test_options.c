/*
 * test_options.c - the option table itself: complete against SPEC 2,
 * self-consistent (defaults parse, values print back as they parse),
 * --cmdhelp shows every option, fio's names are known.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/engine.h"
#include "job/options.h"
#include "out/jobtext.h"

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in output", needle);
}

static char *help_to_string(const char *name, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*ret = jobtext_cmdhelp(f, name);
	fclose(f);
	return buf;
}

/* SPEC 2's table, less the later work (loop, offload, prefetch,
 * offload_permits). */
static void test_spec_options_present(void **state)
{
	static const char *const spec[] = {
		"filename", "directory", "nrfiles", "filesize", "file_service_type", "size",
		"offset", "io_size", "runtime", "time_based", "ramp_time", "startdelay", "rw",
		"bs", "ioengine", "iodepth", "direct", "numjobs", "madvise", "fadvise", "touch",
		"scan", "scan_chunk", "randseed", "random_distribution", "latency",
		"cpus_allowed", "numa_cpu_nodes", "numa_mem_policy", "mem_limit",
		"reserve_mem", "invalidate", "drop_caches", "prewarm", "cpu_probe",
		"stonewall", NULL,
	};

	(void)state;
	for (int i = 0; spec[i]; i++) {
		const struct option_def *o = option_find(spec[i]);

		if (!o || strcmp(o->name, spec[i]))
			fail_msg("option %s missing from option_table", spec[i]);
	}
}

static void test_table_consistent(void **state)
{
	(void)state;
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		assert_non_null(o->help);
		assert_true(strlen(o->help) > 5);
		assert_ptr_equal(option_find(o->name), o);
		if (o->type == OPT_ENUM)
			assert_non_null(o->values);
		if (o->type == OPT_CUSTOM)
			assert_non_null(o->parse);
		for (size_t k = 0; k < i; k++) {
			assert_string_not_equal(o->name, option_table[k].name);
			/* two owned strings at one offset would be freed twice */
			if (o->type == OPT_STR && option_table[k].type == OPT_STR)
				assert_true(o->off != option_table[k].off);
		}
	}
}

/* Our aliases are fio's, so fio's list must know them. */
static void test_aliases_are_fio_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < option_count; i++) {
		const char *a = option_table[i].aliases;

		while (a && *a) {
			char name[64];
			size_t len = strcspn(a, ",");

			snprintf(name, sizeof(name), "%.*s", (int)len, a);
			assert_ptr_equal(option_find(name), &option_table[i]);
			if (!fio_option_known(name))
				fail_msg("alias %s is not an fio option", name);
			a += len + (a[len] == ',');
		}
	}
	assert_string_equal(option_find("readwrite")->name, "rw");
	assert_string_equal(option_find("blocksize")->name, "bs");
	assert_string_equal(option_find("timeout")->name, "runtime");
	assert_string_equal(option_find("nr_files")->name, "nrfiles");
	assert_string_equal(option_find("io_limit")->name, "io_size");
	assert_true(option_find("buffered")->inverse);
	assert_null(option_find("iodpeth"));
}

static void test_fio_names(void **state)
{
	static const char *const known[] = {
		"allow_file_create", "zoneskip", "verify", "hugepage-size", "ba", "include",
		"iodepth_batch_submit", "userspace_reap", "sqthread_poll", "flow_watermark",
		"proto", "kb_base", "loops", "gtod_reduce", "thread", NULL,
	};

	(void)state;
	for (int i = 0; known[i]; i++)
		if (!fio_option_known(known[i]))
			fail_msg("%s should be a known fio option", known[i]);
	assert_false(fio_option_known("iodpeth"));
	assert_false(fio_option_known("madvise"));
	assert_false(fio_option_known(""));
	assert_false(fio_option_known("zzzz"));
}

static void test_defaults_match_table(void **state)
{
	struct job j, k;
	struct err e;
	char a[256], b[256];

	(void)state;
	option_defaults(&j);
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		if (!o->def)
			continue;
		memset(&k, 0, sizeof(k));
		assert_int_equal(option_set(&k, o->name, o->def, &e), 0);
		assert_int_equal(option_format(&j, o, a, sizeof(a)), 1);
		assert_int_equal(option_format(&k, o, b, sizeof(b)), 1);
		assert_string_equal(a, b);
		option_release(&k);
	}
	option_release(&j);
}

/* What jobtext_job shows must parse back to the same value. */
static void test_format_round_trip(void **state)
{
	static const char *const set[][2] = {
		{ "bs", "192k" }, { "size", "37%" }, { "runtime", "1500ms" },
		{ "ramp_time", "250us" }, { "touch", "stride:64" },
		{ "random_distribution", "zipf:0.8" }, { "ioengine", "sync" },
		{ "randseed", "12345" }, { "offset", "4097" }, { "buffered", "0" },
		{ "cpus_allowed", "1,3-4" }, { "scan_chunk", "3g" }, { "madvise", "willneed" },
		{ "iodepth_batch", "8" },
		{ NULL, NULL },
	};
	struct job j, k;
	struct err e;
	char a[256], b[256];

	(void)state;
	option_defaults(&j);
	for (int i = 0; set[i][0]; i++)
		if (option_set(&j, set[i][0], set[i][1], &e))
			fail_msg("%s=%s: %s", set[i][0], set[i][1], e.msg);
	option_defaults(&k);
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		if (!option_format(&j, o, a, sizeof(a)))
			continue;
		if (option_set(&k, o->name, a, &e))
			fail_msg("%s=%s does not parse back: %s", o->name, a, e.msg);
		assert_int_equal(option_format(&k, o, b, sizeof(b)), 1);
		assert_string_equal(a, b);
	}
	assert_true(k.direct);
	assert_string_equal(k.ioengine, "psync");
	option_release(&j);
	option_release(&k);
}

static void test_copy_and_release(void **state)
{
	struct job j, k;
	struct err e;

	(void)state;
	option_defaults(&j);
	assert_int_equal(option_set(&j, "filename", "/a:/b", &e), 0);
	assert_int_equal(option_set(&j, "numa_mem_policy", "local", &e), 0);
	assert_int_equal(option_copy(&k, &j), 0);
	assert_ptr_not_equal(k.filename, j.filename);
	assert_string_equal(k.filename, "/a:/b");
	assert_int_equal(option_set(&j, "filename", "/c", &e), 0);
	assert_string_equal(k.filename, "/a:/b");
	option_release(&j);
	assert_null(j.filename);
	assert_null(j.numa_mem_policy);
	assert_string_equal(k.numa_mem_policy, "local");
	option_release(&k);
}

static void test_set_messages(void **state)
{
	struct option_ctx c = { .where = "x.fio:4" };
	struct job j;
	struct err e;

	(void)state;
	option_defaults(&j);
	assert_int_equal(option_set(&j, "bs", "0", &e), -EINVAL);
	assert_string_equal(e.msg, "bs=0: must be at least 1");
	assert_int_equal(option_set_ctx(&j, "blocksize", "1x", &c, &e), -EINVAL);
	assert_has(e.msg, "blocksize=1x at x.fio:4");
	assert_int_equal(option_set(&j, "nosuch", "1", &e), -EINVAL);
	assert_has(e.msg, "nosuch");
	assert_int_equal(option_set(&j, "bs", NULL, &e), -EINVAL);
	assert_has(e.msg, "needs a value");
	assert_int_equal(option_set_ctx(&j, "iodepth_batch_submit", "5000", &c, &e), -EINVAL);
	assert_has(e.msg, "iodepth_batch_submit=5000 at x.fio:4");
	assert_has(e.msg, "auto or 0 to 4096");
	assert_int_equal(option_set(&j, "iodepth_batch", "many", &e), -EINVAL);
	assert_int_equal(option_set(&j, "iodepth_batch", "auto", &e), 0);
	assert_int_equal(j.iodepth_batch, IODEPTH_BATCH_AUTO);
	assert_int_equal(option_set(&j, "iodepth_batch_submit", "0", &e), 0);
	assert_int_equal(j.iodepth_batch, 0);
	option_release(&j);
}

static void test_suggest(void **state)
{
	(void)state;
	assert_string_equal(option_suggest("iodpeth"), "iodepth");
	assert_string_equal(option_suggest("numjob"), "numjobs");
	assert_string_equal(option_suggest("randomdistribution"), "random_distribution");
	assert_string_equal(option_suggest("bz"), "bs");
	assert_null(option_suggest("xyzzy"));
	assert_null(option_suggest("verify"));
}

static void test_cmdhelp_all(void **state)
{
	char *out;
	int ret;

	(void)state;
	out = help_to_string(NULL, &ret);
	assert_int_equal(ret, 0);
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];
		char line[128];

		snprintf(line, sizeof(line), "\n%s", o->name);
		/* one line each, starting with the name (the first line has
		 * no newline before it) */
		if (i)
			assert_has(out, line);
		else
			assert_int_equal(strncmp(out, o->name, strlen(o->name)), 0);
		assert_has(out, o->help);
		if (o->aliases)
			assert_has(out, o->aliases);
	}
	free(out);
}

static void test_cmdhelp_one(void **state)
{
	const struct engine_ops *const *l = engine_list();
	char *out;
	int ret;

	(void)state;
	out = help_to_string("blocksize", &ret);
	assert_int_equal(ret, 0);
	assert_has(out, "bs: ");
	assert_has(out, "aliases: blocksize");
	assert_has(out, "default: 4k");
	free(out);

	out = help_to_string("madvise", &ret);
	assert_has(out, "hugepage");
	free(out);

	out = help_to_string("ioengine", &ret);
	assert_int_equal(ret, 0);
	for (int i = 0; l[i]; i++) {
		assert_has(out, l[i]->name);
		if (l[i]->help)
			assert_has(out, l[i]->help);
	}
	free(out);

	out = help_to_string("nosuch", &ret);
	assert_int_equal(ret, -ENOENT);
	free(out);
}

/* ignore_error: fio's per-kind lists, symbols or numbers. */
static void test_ignore_error(void **state)
{
	struct job j;
	struct err e = { 0 };

	(void)state;
	option_defaults(&j);
	assert_int_equal(option_set(&j, "ignore_error", "EAGAIN,ENOSPC:122", &e), 0);
	assert_int_equal(j.ignore_nr[0], 1);
	assert_int_equal(j.ignore_err[0][0], EAGAIN);
	assert_int_equal(j.ignore_nr[1], 2);
	assert_int_equal(j.ignore_err[1][0], ENOSPC);
	assert_int_equal(j.ignore_err[1][1], 122);
	assert_int_equal(j.ignore_nr[2], 0);
	assert_int_equal(option_set(&j, "ignore_error", ",,EILSEQ", &e), 0);
	assert_int_equal(j.ignore_nr[0], 0);
	assert_int_equal(j.ignore_err[2][0], EILSEQ);
	assert_int_equal(option_set(&j, "ignore_error", "ENOTANERRNO", &e), -EINVAL);
	assert_int_equal(option_set(&j, "ignore_error", "EIO,EIO,EIO,EIO", &e), -EINVAL);
	option_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_options_present),
		cmocka_unit_test(test_table_consistent),
		cmocka_unit_test(test_aliases_are_fio_names),
		cmocka_unit_test(test_fio_names),
		cmocka_unit_test(test_defaults_match_table),
		cmocka_unit_test(test_format_round_trip),
		cmocka_unit_test(test_copy_and_release),
		cmocka_unit_test(test_set_messages),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_cmdhelp_all),
		cmocka_unit_test(test_cmdhelp_one),
		cmocka_unit_test(test_ignore_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
