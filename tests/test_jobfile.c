/*
 * test_jobfile.c - job files and command-line jobs -> struct job.
 *
 * Every bad input must fail with -EINVAL and a message that names the
 * file, the line, the option and the value; every fio form faultline
 * accepts (aliases, suffixes, keywords, arithmetic, ${VAR}, bare
 * booleans, [global] inheritance) must resolve to the same numbers fio
 * would use.
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
#include <unistd.h>

#include "engines/engine.h"
#include "job/jobfile.h"
#include "job/options.h"
#include "out/jobtext.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif
#define JOBFILES FIXTURES "/../jobfiles"

#define MIB (1024ull * 1024)

static char warnings[8192];

static void collect_warn(const char *msg)
{
	size_t n = strlen(warnings);

	snprintf(warnings + n, sizeof(warnings) - n, "%s\n", msg);
}

static int setup(void **state)
{
	(void)state;
	warnings[0] = '\0';
	jobfile_set_warn(collect_warn);
	return 0;
}

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in \"%s\"", needle, hay);
}

/* Parse @text as "job.fio": -EINVAL, nothing added, and every
 * NULL-terminated needle in the message. */
static void expect_bad(const char *text, ...)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };
	const char *needle;
	va_list ap;
	int ret;

	ret = jobfile_parse_text(&jl, "job.fio", text, &e);
	if (ret != -EINVAL)
		fail_msg("expected -EINVAL, got %d (%s) for:\n%s", ret, e.msg, text);
	assert_int_equal(jl.n, 0);
	va_start(ap, text);
	while ((needle = va_arg(ap, const char *)))
		assert_has(e.msg, needle);
	va_end(ap);
	joblist_free(&jl);
}

static void parse_ok(struct joblist *jl, const char *text)
{
	struct err e = { 0 };
	int ret = jobfile_parse_text(jl, "job.fio", text, &e);

	if (ret)
		fail_msg("parse failed (%d): %s\n%s", ret, e.msg, text);
}

/* One job from "[j]\n" + @body; the caller frees @jl. */
static const struct job *one_job(struct joblist *jl, const char *body)
{
	char text[2048];

	snprintf(text, sizeof(text), "[j]\nfilename=/dev/null\n%s", body);
	parse_ok(jl, text);
	assert_int_equal(jl->n, 1);
	return jl->jobs[0];
}

/* ------------------------------------------------------------------ */
/* bad input */

static void test_unknown_option_suggests(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\niodpeth=4\n", "unknown option 'iodpeth'", "job.fio:3",
		   "did you mean 'iodepth'?", NULL);
	expect_bad("[j]\nsize=1m\nblocksize_typo_xyz=4\n", "unknown option 'blocksize_typo_xyz'",
		   "job.fio:3", NULL);
}

static void test_unknown_option_from_file(void **state)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	assert_int_equal(jobfile_parse_file(&jl, JOBFILES "/bad-typo.fio", &e), -EINVAL);
	assert_has(e.msg, "bad-typo.fio:5");
	assert_has(e.msg, "did you mean 'iodepth'?");
	assert_int_equal(jl.n, 0);
}

static void test_missing_file(void **state)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	assert_int_equal(jobfile_parse_file(&jl, "/nonexistent/x.fio", &e), -ENOENT);
	assert_has(e.msg, "/nonexistent/x.fio");
}

static void test_fio_only_option(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\nbs=4k\n\n\n\nverify_interval=64\n",
		   "'verify_interval' at job.fio:7 is an fio option faultline does not support", NULL);
	/* aliases and engine options fio knows count too */
	expect_bad("[j]\nsize=1m\nhipri=1\n", "'hipri'", "job.fio:3", "fio option", NULL);
	expect_bad("[j]\nsize=1m\ninclude other.fio\n", "'include'", "job.fio:3",
		   "fio option", NULL);
}

static void test_wrong_type(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\niodepth=abc\n", "iodepth=abc", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\ndirect=maybe\n", "direct=maybe", "job.fio:3", "0 or 1", NULL);
	expect_bad("[j]\nsize=1m\nmadvise=dontneed\n", "madvise=dontneed", "job.fio:3",
		   "normal, random, sequential, willneed, hugepage", NULL);
	expect_bad("[j]\nsize=1m\nscan=striped\n", "scan=striped", "job.fio:3",
		   "shared, partitioned", NULL);
	expect_bad("[j]\nsize=1m\nfile_service_type=random:4\n", "file_service_type=random:4",
		   "job.fio:3", "roundrobin", NULL);
	expect_bad("[j]\nsize=1m\nfadvise=willneed\n", "fadvise=willneed", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\ntouch=some\n", "touch=some", "job.fio:3",
		   "copy, page, stride:N, all", NULL);
	expect_bad("[j]\nsize=1m\niodepth=1.5\n", "iodepth=1.5", "job.fio:3", "whole", NULL);
}

static void test_bad_size_suffix(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\nbs=4q\n", "bs=4q", "job.fio:3", "unknown unit 'q'", NULL);
	expect_bad("[j]\nsize=10 gigs\n", "size=10 gigs", "job.fio:2", NULL);
	expect_bad("[j]\nsize=-1m\n", "size=-1m", "job.fio:2", NULL);
	expect_bad("[j]\nsize=1m\noffset=20%\n", "offset=20%", "job.fio:3", NULL);
	expect_bad("[j]\nsize=0%\nfilename=/dev/null\n", "size=0%", "job.fio:2", "1% to 100%",
		   NULL);
	expect_bad("[j]\nsize=99999999999999999999\n", "size=99999999999999999999",
		   "job.fio:2", "too large", NULL);
}

static void test_bad_time_suffix(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\nruntime=10x\n", "runtime=10x", "job.fio:3", "unknown unit 'x'",
		   NULL);
	expect_bad("[j]\nsize=1m\nramp_time=5k\n", "ramp_time=5k", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\nstartdelay=1-10\n", "startdelay=1-10", "job.fio:3", NULL);
}

static void test_zero_bounds(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\nbs=0\n", "bs=0", "job.fio:3", "at least 1", NULL);
	expect_bad("[j]\nsize=1m\niodepth=0\n", "iodepth=0", "job.fio:3", "at least 1", NULL);
	expect_bad("[j]\nsize=1m\niodepth=4097\n", "iodepth=4097", "job.fio:3", "at most 4096",
		   NULL);
	expect_bad("[j]\nsize=1m\nnumjobs=0\n", "numjobs=0", "job.fio:3", "at least 1", NULL);
	expect_bad("[j]\nsize=1m\nnrfiles=0\n", "nrfiles=0", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\nscan_chunk=0\n", "scan_chunk=0", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\nbs=2g\n", "bs=2g", "job.fio:3", "at most", NULL);
}

static void test_direct_with_mmap(void **state)
{
	(void)state;
	/* Order does not matter: the contradiction is found when the job
	 * is complete, and both lines are named. */
	expect_bad("[j]\nsize=1m\nioengine=mmap\ndirect=1\n", "direct=1 at job.fio:4",
		   "ioengine=mmap at job.fio:3", NULL);
	expect_bad("[global]\ndirect=1\n[j]\nsize=1m\nioengine=mmap\n", "direct=1 at job.fio:2",
		   "ioengine=mmap at job.fio:5", NULL);
	expect_bad("[j]\nsize=1m\nbuffered=0\nioengine=mmap\n", "job.fio:3", "mmap", NULL);
}

static void test_empty_job_section(void **state)
{
	(void)state;
	expect_bad("[first]\n[second]\nsize=1m\n", "job 'first' at job.fio:1 has no options",
		   NULL);
	expect_bad("; nothing\n\n[lonely]\n", "job 'lonely' at job.fio:3", NULL);
}

static void test_empty_file(void **state)
{
	(void)state;
	expect_bad("", "job.fio", "no jobs", NULL);
	expect_bad("; only comments\n# here\n", "job.fio", "no jobs", NULL);
	expect_bad("[global]\nbs=4k\n", "job.fio", "no jobs", NULL);
}

static void test_line_without_equals(void **state)
{
	(void)state;
	/* a known non-boolean */
	expect_bad("[j]\nsize=1m\nbs\n", "'bs' at job.fio:3", "needs a value", NULL);
	/* not an option at all */
	expect_bad("[j]\nsize=1m\nsomething odd here\n", "job.fio:3", "something", NULL);
	expect_bad("[j]\nsize=1m\n=4k\n", "job.fio:3", "=4k", NULL);
}

static void test_unterminated_header(void **state)
{
	(void)state;
	expect_bad("[global]\nbs=4k\n[foo\nsize=1m\n", "'[foo'", "job.fio:3", "']'", NULL);
	expect_bad("[a] trailing\nsize=1m\n", "job.fio:1", "trailing", NULL);
	expect_bad("[]\nsize=1m\n", "job.fio:1", "empty job name", NULL);
	expect_bad("[a/b]\nsize=1m\n", "job.fio:1", "'a/b'", NULL);
}

static void test_undefined_env(void **state)
{
	(void)state;
	unsetenv("FAULTLINE_TEST_UNSET");
	expect_bad("[j]\nfilename=/dev/null\nsize=${FAULTLINE_TEST_UNSET}\n",
		   "FAULTLINE_TEST_UNSET", "job.fio:3", "not set", NULL);
	expect_bad("[j]\nsize=${OOPS\n", "job.fio:2", "${", NULL);
	expect_bad("[j]\nsize=${FAULTLINE_TEST_UNSET:2m}\n", "job.fio:2", ":-DEFAULT", NULL);
}

static void test_scratch_needs_size(void **state)
{
	(void)state;
	expect_bad("[j]\nbs=4k\n", "job 'j' at job.fio:1", "no filename and no size", NULL);
	expect_bad("[j]\nsize=50%\n", "size=50% at job.fio:2", "filename", NULL);
	expect_bad("[j]\nsize=3\nnrfiles=4\n", "size=3", "job.fio:2", "nrfiles=4", NULL);
}

static void test_null_engine_needs_no_target(void **state)
{
	struct joblist jl = { 0 };

	(void)state;
	parse_ok(&jl, "[j]\nioengine=null\n");
	assert_string_equal(jl.jobs[0]->ioengine, "null");
	joblist_free(&jl);
}

static void test_unknown_engine(void **state)
{
	const struct engine_ops *const *l = engine_list();
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	expect_bad("[j]\nsize=1m\nioengine=windowsaio\n", "ioengine=windowsaio", "job.fio:3", NULL);
	assert_int_equal(jobfile_parse_text(&jl, "job.fio", "[j]\nsize=1m\nioengine=x\n", &e),
			 -EINVAL);
	for (int i = 0; l[i]; i++)
		assert_has(e.msg, l[i]->name);
}

static void test_bad_zipf(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\nrandom_distribution=zipf:0\n", "random_distribution=zipf:0",
		   "job.fio:3", "> 0", NULL);
	expect_bad("[j]\nsize=1m\nrandom_distribution=zipf:-1.2\n", "zipf:-1.2", "job.fio:3",
		   NULL);
	expect_bad("[j]\nsize=1m\nrandom_distribution=zipf:abc\n", "zipf:abc", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\nrandom_distribution=zipf:1.2:0.5\n", "zipf:1.2:0.5",
		   "job.fio:3", NULL);
	/* fio's other distributions are taken (test_genshape.c); out of
	 * range they are refused as fio refuses them. */
	expect_bad("[j]\nsize=1m\nrandom_distribution=pareto:1.2\n", "pareto", "job.fio:3", NULL);
}

/* rw= takes fio's writes and mixes (SPEC 10); trims stay refused. */
static void test_rw_values(void **state)
{
	static const struct {
		const char *v;
		enum rw_mode want;
	} cases[] = {
		{ "read", RW_READ }, { "randread", RW_RANDREAD }, { "write", RW_WRITE },
		{ "randwrite", RW_RANDWRITE }, { "rw", RW_RW }, { "readwrite", RW_RW },
		{ "randrw", RW_RANDRW },
	};
	struct joblist jl = { 0 };
	char body[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct job *j;

		snprintf(body, sizeof(body), "rw=%s\n", cases[i].v);
		j = one_job(&jl, body);
		assert_int_equal(j->rw, cases[i].want);
		joblist_free(&jl);
	}
	/* readwrite= is also fio's name for the option itself */
	assert_int_equal(one_job(&jl, "readwrite=randrw\n")->rw, RW_RANDRW);
	joblist_free(&jl);
	/* fio's trims; a trim job's trims take bs's third size */
	assert_int_equal(one_job(&jl, "rw=randtrimwrite\nbs=4k,4k,8k\n")->rw, RW_RANDTRIMWRITE);
	assert_int_equal(job_bs_min(jl.jobs[0], JOB_DIR_WRITE), 8192);
	assert_int_equal(jl.jobs[0]->bs, 4096);
	joblist_free(&jl);
	assert_int_equal(one_job(&jl, "rw=write\nbs=4k,16k\n")->rw, RW_WRITE);
	assert_int_equal(job_bs_min(jl.jobs[0], JOB_DIR_WRITE), 16384);
	joblist_free(&jl);
	expect_bad("[j]\nsize=1m\nrw=trim\nioengine=vmcache\npool_size=1m\n", "rw=trim at job.fio:3",
		   "does not trim", NULL);
	expect_bad("[j]\nsize=1m\nrw=sideways\n", "rw=sideways", "randwrite", "randrw", NULL);
	/* fio's offset modifier: bytes skipped after each sequential
	 * request, or a new random offset every N random ones. */
	assert_int_equal(one_job(&jl, "rw=write:4k\n")->seq_add, 4096);
	joblist_free(&jl);
	assert_int_equal(one_job(&jl, "rw=randread:8\n")->seq_nr, 8);
	joblist_free(&jl);
	expect_bad("[j]\nsize=1m\nrw=randread:x\n", "rw=randread:x", "N >= 1", NULL);
}

static void test_write_options(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "rw=randwrite\n");
	assert_int_equal(j->rwmixread, 50);
	assert_int_equal(j->fsync_every, 0);
	assert_int_equal(j->sync, SYNC_NONE);
	assert_int_equal(j->verify, VERIFY_NONE);
	assert_false(j->end_fsync);
	assert_false(j->allow_destructive);
	joblist_free(&jl);

	j = one_job(&jl, "rw=randrw\nrwmixread=70\nfsync=32\nsync_interval=250ms\nend_fsync\n"
		    "verify=crc32c\nallow_destructive=1\nsync=1\n");
	assert_int_equal(j->rwmixread, 70);
	assert_int_equal(j->fsync_every, 32);
	assert_int_equal(j->sync_interval_ns, 250000000ull);
	assert_true(j->end_fsync);
	assert_int_equal(j->verify, VERIFY_CRC32C);
	assert_true(j->allow_destructive);
	assert_int_equal(j->sync, SYNC_DSYNC);
	joblist_free(&jl);

	/* fio's other forms: rwmixwrite, sync's words, crc32c-intel */
	j = one_job(&jl, "rw=rw\nrwmixwrite=30\nsync=sync\nverify=crc32c-intel\nfdatasync=4\n");
	assert_int_equal(j->rwmixread, 70);
	assert_int_equal(j->sync, SYNC_SYNC);
	assert_int_equal(j->verify, VERIFY_CRC32C);
	assert_int_equal(j->fdatasync_every, 4);
	joblist_free(&jl);
	j = one_job(&jl, "rw=write\nsync=dsync\n");
	assert_int_equal(j->sync, SYNC_DSYNC);
	joblist_free(&jl);
	j = one_job(&jl, "rw=write\nsync=none\nverify=0\n");
	assert_int_equal(j->sync, SYNC_NONE);
	assert_int_equal(j->verify, VERIFY_NONE);
	joblist_free(&jl);

	expect_bad("[j]\nsize=1m\nrw=write\nverify=pattern\n", "verify=pattern at job.fio:4",
		   "needs verify_pattern", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nverify=null\n", "verify=null at job.fio:4",
		   "null is an fio option value faultline does not support", NULL);
	/* verify_pattern alone is verify=pattern, as in fio; a later verify= wins */
	j = one_job(&jl, "rw=write\nverify_pattern=0xaa\n");
	assert_int_equal(j->verify, VERIFY_PATTERN);
	joblist_free(&jl);
	j = one_job(&jl, "rw=write\nverify_pattern=%o\nverify=md5\n");
	assert_int_equal(j->verify, VERIFY_MD5);
	joblist_free(&jl);
	expect_bad("[j]\nsize=1m\nrw=write\n\nverify_pattern=0xzz\n", "verify_pattern=0xzz at job.fio:5",
		   "expected 0xHEX", NULL);
	j = one_job(&jl, "rw=write\nverify=md5\n");
	assert_int_equal(j->verify, VERIFY_MD5);
	joblist_free(&jl);
	j = one_job(&jl, "rw=write\nverify=meta\n");
	assert_int_equal(j->verify, VERIFY_CRC32C);
	joblist_free(&jl);
	expect_bad("[j]\nsize=1m\nrw=write\nsync=maybe\n", "sync=maybe", "dsync", NULL);
	expect_bad("[j]\nsize=1m\nrwmixread=101\n", "rwmixread=101", NULL);
	expect_bad("[j]\nsize=1m\nrwmixwrite=101\n", "rwmixwrite=101", NULL);
}

/* What each write option needs of the others, named with both lines. */
static void test_write_contradictions(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\nioengine=mmap\nrw=randwrite\nsync=1\n",
		   "sync at job.fio:5 contradicts ioengine=mmap at job.fio:3", "no O_DSYNC", NULL);
	/* A read job checks what it reads (fio's read verify), and the
	 * verify phases' options say where they cannot apply. */
	expect_bad("[j]\nsize=1m\nrw=randread\nverify=crc32c\nloop=2\nnrfiles=2\n",
		   "verify at job.fio:4 with loop at job.fio:5", NULL);
	expect_bad("[j]\nsize=1m\nrw=randread\nverify=md5\nverify_backlog=4\n",
		   "verify_backlog=4 at job.fio:5", "rw=randread at job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nverify=md5\nverify_backlog_batch=4\n",
		   "verify_backlog_batch=4 at job.fio:5 without verify_backlog", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nverify=md5\ndo_verify=0\nverify_backlog=4\n",
		   "verify_backlog=4 at job.fio:6 needs verify= with do_verify=1", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nverify=md5\nverify_state_load=1\n",
		   "verify_state_load=1 at job.fio:5 with rw=write at job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\nrw=read\nverify_state_load=1\n",
		   "verify_state_load=1 at job.fio:4 needs verify=", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nfsync=1\nfdatasync=1\n", "fsync=1 at job.fio:4",
		   "fdatasync=1 at job.fio:5", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nbs=1000\n", "bs=1000 at job.fio:4", "multiple of 512",
		   NULL);
	expect_bad("[j]\nioengine=null\nrw=write\nverify=crc32c\n", "verify=crc32c at job.fio:4",
		   "ioengine=null", NULL);
	expect_bad("[j]\nsize=1m\nrw=write\nloop=2\nnrfiles=2\n", "loop=2 at job.fio:4",
		   "reads only", NULL);
	expect_bad("[j]\nsize=1m\nioengine=mmap\nrw=write\nprefetch=willneed:1m\n",
		   "prefetch", "rw=read", NULL);
}

/* Write options on a read job do nothing: said, not refused. */
static void test_write_options_on_read_job_warn(void **state)
{
	struct joblist jl = { 0 };

	(void)state;
	warnings[0] = '\0';
	one_job(&jl, "rw=randread\nfsync=8\n");
	assert_has(warnings, "reads only");
	assert_has(warnings, "no effect");
	joblist_free(&jl);
	warnings[0] = '\0';
	one_job(&jl, "rw=randwrite\nfsync=8\n");
	assert_string_equal(warnings, "");
	joblist_free(&jl);
}

static void test_placement_syntax(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=1m\ncpus_allowed=0-3,x\n", "cpus_allowed=0-3,x", "job.fio:3", NULL);
	expect_bad("[j]\nsize=1m\ncpus_allowed=3-1\n", "cpus_allowed=3-1", NULL);
	expect_bad("[j]\nsize=1m\nnuma_mem_policy=bind\n", "numa_mem_policy=bind", "job.fio:3",
		   "bind:NODES", NULL);
	expect_bad("[j]\nsize=1m\nnuma_mem_policy=prefer:0-1\n", "prefer:0-1", NULL);
	expect_bad("[j]\nsize=1m\nnuma_cpu_nodes=a\n", "numa_cpu_nodes=a", NULL);
}

static void test_bad_arithmetic(void **state)
{
	(void)state;
	expect_bad("[j]\nsize=16*1024\n", "size=16*1024", "job.fio:2", "parentheses", NULL);
	expect_bad("[j]\nsize=(1/0)\n", "size=(1/0)", "division by zero", NULL);
	expect_bad("[j]\nsize=(2*(3)\n", "size=(2*(3)", "')'", NULL);
	expect_bad("[j]\nsize=(4)+1)\n", "size=(4)+1)", NULL);
	expect_bad("[j]\nsize=$memory/8\n", "size=$memory/8", "unknown keyword", NULL);
	expect_bad("[j]\nsize=(1-2)\n", "size=(1-2)", "negative", NULL);
	expect_bad("[j]\nsize=(4x)\n", "size=(4x)", "unit", NULL);
	expect_bad("[j]\nsize=(5.5%2)\n", "size=(5.5%2)", NULL);
	expect_bad("[j]\nsize=(2^64)\n", "size=(2^64)", "too large", NULL);
	expect_bad("[j]\nsize=((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
		   "(1)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))\n",
		   "job.fio:2", "nested too deeply", NULL);
}

static void test_option_outside_section(void **state)
{
	(void)state;
	expect_bad("bs=4k\n[j]\nsize=1m\n", "'bs' at job.fio:1", "outside", NULL);
}

static void test_error_leaves_list_alone(void **state)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	parse_ok(&jl, "[a]\nsize=1m\n");
	assert_int_equal(jobfile_parse_text(&jl, "two.fio", "[b]\nsize=1m\n[c]\nbs=0\n", &e),
			 -EINVAL);
	assert_int_equal(jl.n, 1);
	assert_string_equal(jl.jobs[0]->name, "a");
	joblist_free(&jl);
	assert_int_equal(jl.n, 0);
	assert_null(jl.jobs);
}

/* ------------------------------------------------------------------ */
/* good input */

static void test_defaults(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j = one_job(&jl, "");

	(void)state;
	assert_int_equal(j->rw, RW_READ);
	assert_int_equal(j->bs, 4096);
	assert_string_equal(j->ioengine, "psync");
	assert_int_equal(j->iodepth, 1);
	assert_int_equal(j->numjobs, 1);
	assert_int_equal(j->nrfiles, 1);
	assert_false(j->direct);
	assert_int_equal(j->madvise, ADV_NORMAL);
	assert_int_equal(j->fadvise, FADV_M_NORMAL);
	assert_int_equal(j->touch, TOUCH_COPY);
	assert_int_equal(j->scan, SCAN_SHARED);
	assert_int_equal(j->scan_chunk, 128 * MIB);
	assert_int_equal(j->random_distribution, DIST_RANDOM);
	assert_true(j->latency);
	assert_true(j->invalidate);
	assert_int_equal(j->file_service_type, FST_ROUNDROBIN);
	assert_false(j->randseed_set);
	assert_false(j->stonewall);
	assert_false(j->time_based);
	assert_int_equal(j->src.fio_noops, 0);
	assert_string_equal(j->name, "j");
	assert_string_equal(j->src.file, "job.fio");
	assert_int_equal(j->src.line, 1);
	joblist_free(&jl);
}

static void test_global_inheritance(void **state)
{
	struct joblist jl = { 0 };

	(void)state;
	parse_ok(&jl,
		 "[global]\n"
		 "bs=8k\n"
		 "size=1m\n"
		 "[a]\n"
		 "bs=16k\n"
		 "[b]\n"
		 "[global]\n"		/* changes only jobs after it */
		 "iodepth=8\n"
		 "ioengine=io_uring\n"
		 "[c]\n");
	assert_int_equal(jl.n, 3);
	assert_string_equal(jl.jobs[0]->name, "a");
	assert_int_equal(jl.jobs[0]->bs, 16384);
	assert_int_equal(jl.jobs[0]->size, MIB);
	assert_int_equal(jl.jobs[1]->bs, 8192);
	assert_int_equal(jl.jobs[1]->iodepth, 1);
	assert_string_equal(jl.jobs[1]->ioengine, "psync");
	assert_int_equal(jl.jobs[2]->bs, 8192);
	assert_int_equal(jl.jobs[2]->iodepth, 8);
	assert_int_equal(jl.jobs[2]->src.line, 10);
	joblist_free(&jl);
}

/* fio's "global options": every [global] option as fio lists it (the
 * option's own name, the text after keywords, no bare key), in order,
 * over every file and the command line; a failed parse adds none. */
static void test_global_options_as_written(void **state)
{
	char *argv[] = { "--direct=1", "--name=x", "--size=1m" };
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	parse_ok(&jl,
		 "[global]\n"
		 "blocksize=8k\n"
		 "time_based\n"
		 "write_bw_log\n"
		 "filename=/dev/null\n"
		 "[a]\n"
		 "bs=16k\n"		/* a job's own: not global */
		 "[global]\n"
		 "iodepth=(2*$ncpus)\n"
		 "[b]\n");
	assert_int_equal(jl.nglobals, 3);
	assert_string_equal(jl.globals[0].key, "bs");
	assert_string_equal(jl.globals[0].val, "8k");
	assert_string_equal(jl.globals[1].key, "filename");
	assert_string_equal(jl.globals[2].key, "iodepth");
	{
		char want[64];

		snprintf(want, sizeof(want), "(2*%ld)", sysconf(_SC_NPROCESSORS_ONLN));
		assert_string_equal(jl.globals[2].val, want);
	}
	assert_int_equal(jobfile_parse_args(&jl, 3, argv, &e), 0);
	assert_int_equal(jl.nglobals, 4);
	assert_string_equal(jl.globals[3].key, "direct");
	assert_string_equal(jl.globals[3].val, "1");
	assert_int_equal(jobfile_parse_text(&jl, "bad.fio", "[global]\nbs=1k\n[c]\nnope=1\n", &e),
			 -EINVAL);
	assert_int_equal(jl.nglobals, 4);
	joblist_free(&jl);
	assert_int_equal(jl.nglobals, 0);
	assert_null(jl.globals);
}

/* The value a job's "job options" list has for @key; "-" when absent,
 * "(bare)" for a key without text. */
static const char *opt_of(const struct job *j, const char *key)
{
	for (unsigned i = 0; i < j->src.nopts; i++)
		if (!strcmp(j->src.opts[i].key, key))
			return j->src.opts[i].val ? j->src.opts[i].val : "(bare)";
	return "-";
}

/* fio's "job options": what the job's own section set, not [global]'s;
 * aliases under the option's name; a later setting replaces an earlier
 * one; a command-line job lists its name, as fio's. */
static void test_job_options_as_set(void **state)
{
	char *argv[] = { "--bs=8k", "--name=cli", "--readwrite=randread", "--iodepth=$ncpus",
			 "--filename=/dev/null" };
	struct joblist jl = { 0 };
	struct err e = { 0 };
	char ncpus[16];

	(void)state;
	snprintf(ncpus, sizeof(ncpus), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
	parse_ok(&jl, "[global]\nfilename=/dev/null\nbs=16k\n[a]\nblocksize=4k\nrw=read\n"
		      "rw=randread\ndirect\n[b]\n");
	assert_int_equal(jl.jobs[0]->src.nopts, 3);
	assert_string_equal(opt_of(jl.jobs[0], "bs"), "4k");
	assert_string_equal(opt_of(jl.jobs[0], "rw"), "randread");
	assert_string_equal(opt_of(jl.jobs[0], "direct"), "(bare)");
	assert_string_equal(opt_of(jl.jobs[0], "filename"), "-");
	assert_int_equal(jl.jobs[1]->src.nopts, 0);
	assert_int_equal(jl.jobs[1]->bs, 16384);
	assert_int_equal(jobfile_parse_args(&jl, 5, argv, &e), 0);
	assert_string_equal(opt_of(jl.jobs[2], "name"), "cli");
	assert_string_equal(opt_of(jl.jobs[2], "rw"), "randread");
	assert_string_equal(opt_of(jl.jobs[2], "iodepth"), ncpus);
	assert_string_equal(opt_of(jl.jobs[2], "bs"), "-");
	joblist_free(&jl);
}

/* Parses @text as the job file "f.fio" beneath the command line @argv. */
static int cmdline(struct joblist *jl, int argc, char **argv, const char *text,
		   unsigned nsec, const char *const *sec, struct err *e)
{
	bool found[4] = { false };
	struct jobfile_src src = { "f.fio", text };
	struct jobfile_select sel = { nsec, sec, found };

	return jobfile_parse_cmdline(jl, argc, argv, text ? 1 : 0, &src, &sel, e);
}

/* fio's order of precedence, as fio 3.33 applies it: a job's own option
 * over its file's [global] over the command line's globals over the
 * default; the command line's jobs first. */
static void test_cmdline_beside_file(void **state)
{
	char *argv[] = { "--bs=64k", "--size=2m", "--runtime=1", "--time_based" };
	char *withjob[] = { "--bs=64k", "--name=z", "--filename=/dev/null", "--iodepth=2" };
	const char *file = "[global]\nfilename=/dev/null\nbs=8k\n[a]\nrw=read\n"
			   "[b]\nbs=16k\n[global]\nbs=32k\nsize=1m\n[c]\n";
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	assert_int_equal(cmdline(&jl, 4, argv, file, 0, NULL, &e), 0);
	assert_int_equal(jl.n, 3);
	assert_int_equal(jl.jobs[0]->bs, 8192);		/* the file's [global] */
	assert_int_equal(jl.jobs[1]->bs, 16384);	/* the job's own */
	assert_int_equal(jl.jobs[2]->bs, 32768);	/* the second [global] */
	assert_int_equal(jl.jobs[0]->size, 2 << 20);	/* the command line's */
	assert_int_equal(jl.jobs[2]->size, 1 << 20);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(jl.jobs[i]->runtime_ns, 1000000000ull);
		assert_true(jl.jobs[i]->time_based);
	}
	/* "global options": the command line's, then the file's */
	assert_string_equal(jl.globals[0].key, "bs");
	assert_string_equal(jl.globals[0].val, "64k");
	joblist_free(&jl);

	assert_int_equal(cmdline(&jl, 4, withjob, "[d]\nfilename=/dev/null\n", 0, NULL, &e), 0);
	assert_int_equal(jl.n, 2);
	assert_string_equal(jl.jobs[0]->name, "z");
	assert_string_equal(jl.jobs[1]->name, "d");
	assert_int_equal(jl.jobs[1]->bs, 65536);
	assert_int_equal(jl.jobs[1]->iodepth, 1);	/* z's own, not d's */
	joblist_free(&jl);
}

/* fio separates job files by a stonewall; the command line's globals
 * reach every file here (fio 3.33: the first only). */
static void test_cmdline_two_files(void **state)
{
	char *argv[] = { "--bs=64k", "--name=z", "--filename=/dev/null" };
	struct jobfile_src src[] = {
		{ "a.fio", "[global]\nfilename=/dev/null\n[a1]\n[a2]\n" },
		{ "b.fio", "[b1]\nfilename=/dev/null\n[b2]\nfilename=/dev/null\n" },
	};
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	assert_int_equal(jobfile_parse_cmdline(&jl, 3, argv, 2, src, NULL, &e), 0);
	assert_int_equal(jl.n, 5);
	assert_string_equal(jl.jobs[0]->name, "z");
	assert_false(jl.jobs[1]->stonewall);	/* a1: the first file's */
	assert_false(jl.jobs[2]->stonewall);
	assert_true(jl.jobs[3]->stonewall);	/* b1: the second file starts */
	assert_false(jl.jobs[4]->stonewall);
	assert_int_equal(jl.jobs[3]->bs, 65536);
	joblist_free(&jl);
}

/* A command-line global a file's job inherited is named where it was
 * given; --section keeps the named jobs only and refuses a name no job
 * has. */
static void test_cmdline_where_and_section(void **state)
{
	char *argv[] = { "--numjobs=0" };
	char *none[] = { "--size=1m" };
	static const char *const bc[] = { "b", "c" }, *const nope[] = { "nope" };
	const char *file = "[global]\nfilename=/dev/null\n[a]\nnot_an_option=1\n[b]\nbs=16k\n"
			   "[c]\n[global]\nbs=32k\n[d]\n";
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	assert_int_equal(cmdline(&jl, 1, argv, "[a]\nfilename=/dev/null\n", 0, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "numjobs=0 at command line:1"));
	assert_int_equal(cmdline(&jl, 1, none, file, 2, bc, &e), 0);
	assert_int_equal(jl.n, 2);
	assert_string_equal(jl.jobs[0]->name, "b");
	assert_string_equal(jl.jobs[1]->name, "c");
	joblist_free(&jl);
	assert_int_equal(cmdline(&jl, 1, none, file, 1, nope, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--section=nope"));
	assert_int_equal(jl.n, 0);
	/* options alone, with no file and no --name, are still refused */
	assert_int_equal(cmdline(&jl, 1, none, NULL, 0, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "no --name"));
}

/* fio's log options: a bare key is the job's name (kept as ""), a
 * value a prefix; log_avg_msec, per_job_logs and log_offset as fio's. */
static void test_log_options(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "write_bw_log\nwrite_lat_log=/tmp/p\nlog_avg_msec=500\nper_job_logs=0\n"
			 "log_offset=1\n");
	assert_string_equal(j->bw_log, "");
	assert_null(j->iops_log);
	assert_string_equal(j->lat_log, "/tmp/p");
	assert_int_equal(j->log_avg_msec, 500);
	assert_false(j->per_job_logs);
	assert_true(j->log_offset);
	joblist_free(&jl);
	j = one_job(&jl, "");
	assert_null(j->bw_log);
	assert_int_equal(j->log_avg_msec, 0);
	assert_true(j->per_job_logs);
	assert_false(j->log_offset);
	joblist_free(&jl);
}

static void test_files_start_fresh(void **state)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	parse_ok(&jl, "[global]\nbs=64k\nfilename=/dev/null\n[a]\n");
	assert_int_equal(jobfile_parse_text(&jl, "second.fio", "[b]\nsize=1m\n", &e), 0);
	assert_int_equal(jl.n, 2);
	assert_int_equal(jl.jobs[0]->bs, 65536);
	assert_string_equal(jl.jobs[0]->filename, "/dev/null");
	assert_int_equal(jl.jobs[1]->bs, 4096);
	assert_null(jl.jobs[1]->filename);
	assert_string_equal(jl.jobs[1]->src.file, "second.fio");
	joblist_free(&jl);
}

static void test_plain_fio_file(void **state)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	if (jobfile_parse_file(&jl, JOBFILES "/basic.fio", &e))
		fail_msg("%s", e.msg);
	assert_int_equal(jl.n, 2);
	assert_string_equal(jl.jobs[0]->name, "warm");
	assert_int_equal(jl.jobs[0]->rw, RW_RANDREAD);
	assert_string_equal(jl.jobs[0]->ioengine, "psync");
	assert_int_equal(jl.jobs[0]->runtime_ns, 10000000000ull);
	assert_true(jl.jobs[0]->time_based);
	assert_int_equal(jl.jobs[1]->nrfiles, 2);
	assert_true(jl.jobs[1]->stonewall);
	assert_false(jl.jobs[1]->time_based);
	assert_int_equal(jl.jobs[1]->src.fio_noops, FIO_NOOP_GROUP_REPORTING);
	assert_true(jl.jobs[1]->thread);
	joblist_free(&jl);
}

static void test_aliases(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "readwrite=randread\nblocksize=64k\ntimeout=30\nnr_files=3\n"
		    "io_limit=1g\nfileoffset=4k\nwait_for_previous\nioengine=pread\n");
	assert_int_equal(j->rw, RW_RANDREAD);
	assert_int_equal(j->bs, 65536);
	assert_int_equal(j->runtime_ns, 30000000000ull);
	assert_int_equal(j->nrfiles, 3);
	assert_int_equal(j->io_size, 1024 * MIB);
	assert_int_equal(j->offset, 4096);
	assert_true(j->stonewall);
	assert_string_equal(j->ioengine, "psync");
	joblist_free(&jl);

	j = one_job(&jl, "ioengine=sync\nbuffered=0\n");
	assert_string_equal(j->ioengine, "psync");
	assert_true(j->direct);
	joblist_free(&jl);

	j = one_job(&jl, "direct=1\nbuffered=1\n");
	assert_false(j->direct);
	joblist_free(&jl);
}

struct size_case {
	const char *v;
	uint64_t want;
};

/* size=V in a one-job file gives exactly want bytes, for every case. */
static void check_sizes(const struct size_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct joblist jl = { 0 };
		char body[64];
		const struct job *j;

		snprintf(body, sizeof(body), "size=%s\n", cases[i].v);
		j = one_job(&jl, body);
		if (j->size != cases[i].want)
			fail_msg("size=%s: %llu, want %llu", cases[i].v,
				 (unsigned long long)j->size, (unsigned long long)cases[i].want);
		joblist_free(&jl);
	}
}

static void test_size_suffixes(void **state)
{
	static const struct size_case cases[] = {
		{ "4096", 4096 }, { "4k", 4096 }, { "4K", 4096 }, { "4kb", 4096 },
		{ "4KB", 4096 }, { "1m", MIB }, { "1M", MIB }, { "1g", 1024 * MIB },
		{ "2t", 2ull << 40 }, { "4096b", 4096 }, { "0x1000", 4096 },
		{ "1.5k", 1536 }, { "4KiB", 4000 }, { "1mib", 1000000 },
	};

	(void)state;
	check_sizes(cases, sizeof(cases) / sizeof(cases[0]));
	/* fio's KiB-means-1000 surprise is kept, and said */
	assert_has(warnings, "4KiB");
}

static void test_size_percent(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j = one_job(&jl, "size=50%\n");

	(void)state;
	assert_int_equal(j->size_pct, 50);
	assert_int_equal(j->size, 0);
	joblist_free(&jl);
}

static void test_time_suffixes(void **state)
{
	static const struct {
		const char *v;
		uint64_t want_ns;
	} cases[] = {
		{ "30", 30000000000ull }, { "10s", 10000000000ull }, { "500ms", 500000000ull },
		{ "500msec", 500000000ull }, { "100us", 100000ull }, { "2m", 120000000000ull },
		{ "1h", 3600000000000ull }, { "1d", 86400000000000ull }, { "1.5s", 1500000000ull },
		{ "10S", 10000000000ull }, { "(1+2)", 3000000000ull },
		{ "(1m+30s)", 90000000000ull },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct joblist jl = { 0 };
		char body[64];
		const struct job *j;

		snprintf(body, sizeof(body), "runtime=%s\nramp_time=%s\nstartdelay=%s\n",
			 cases[i].v, cases[i].v, cases[i].v);
		j = one_job(&jl, body);
		if (j->runtime_ns != cases[i].want_ns || j->ramp_ns != cases[i].want_ns ||
		    j->startdelay_ns != cases[i].want_ns)
			fail_msg("runtime=%s: %llu ns, want %llu", cases[i].v,
				 (unsigned long long)j->runtime_ns,
				 (unsigned long long)cases[i].want_ns);
		joblist_free(&jl);
	}
}

static void test_arithmetic(void **state)
{
	static const struct size_case cases[] = {
		{ "(16*1024*1024)", 16777216 }, { "( 16 * 1024 * 1024 )", 16777216 },
		{ "(2*4k)", 8192 },		/* (2*4)k */
		{ "(1+2k)", 2049 },		/* 1+(2k) */
		{ "(4k*2)", 8192 }, { "(2^10)", 1024 }, { "(10%3)", 1 },
		{ "(3/2*2)", 2 },		/* integer division, as fio */
		{ "(1.5*2)", 3 }, { "((1+1)*(2+2))", 8 }, { "(1g/4)", 256 * MIB },
		{ "(-2^2)", 4 },		/* fio's unary minus binds tightest */
		{ "(2^3^2)", 512 },		/* ^ is right-associative */
		{ "(0x10*2)", 32 }, { "(1^99999999999)", 1 }, { "(3^4)", 81 },
	};

	(void)state;
	check_sizes(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_keywords(void **state)
{
	uint64_t mb = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE) / MIB;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	unsigned ncpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "size=$mb_memory/8\n");
	assert_int_equal(j->size, mb / 8 * MIB);
	joblist_free(&jl);

	j = one_job(&jl, "size=$mb_memory\nbs=$pagesize\nnumjobs=$ncpus\niodepth=($ncpus*2)\n");
	assert_int_equal(j->size, mb * MIB);
	assert_int_equal(j->bs, page);
	assert_int_equal(j->numjobs, ncpus);
	assert_int_equal(j->iodepth, ncpus * 2 > 4096 ? 4096 : ncpus * 2);
	joblist_free(&jl);

	/* with a unit the number is taken as written, as fio's text
	 * substitution does */
	j = one_job(&jl, "size=$mb_memoryk\nbs=($pagesize*2)\n");
	assert_int_equal(j->size, mb * 1024);
	assert_int_equal(j->bs, page * 2);
	joblist_free(&jl);
}

static void test_env_vars(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	setenv("FAULTLINE_TEST_SIZE", "64m", 1);
	setenv("FAULTLINE_TEST_JOBS", "4", 1);
	setenv("FAULTLINE_TEST_DIR", "/tmp/fl", 1);
	j = one_job(&jl, "size=${FAULTLINE_TEST_SIZE}\nnumjobs=${FAULTLINE_TEST_JOBS}\n"
		    "directory=${FAULTLINE_TEST_DIR}/scratch\n");
	assert_int_equal(j->size, 64 * MIB);
	assert_int_equal(j->numjobs, 4);
	assert_string_equal(j->directory, "/tmp/fl/scratch");
	joblist_free(&jl);

	/* ${VAR:-default}: SPEC 11's jobs take defaults this way */
	unsetenv("FAULTLINE_TEST_UNSET");
	setenv("FAULTLINE_TEST_EMPTY", "", 1);
	j = one_job(&jl, "size=${FAULTLINE_TEST_UNSET:-2m}\nbs=${FAULTLINE_TEST_EMPTY:-8k}\n"
		    "numjobs=${FAULTLINE_TEST_JOBS:-9}\n");
	assert_int_equal(j->size, 2 * MIB);
	assert_int_equal(j->bs, 8192);
	assert_int_equal(j->numjobs, 4);
	joblist_free(&jl);
}

static void test_bare_booleans(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "time_based\nruntime=1\nstonewall\ndirect\nlatency=0\nprewarm=true\n");
	assert_true(j->time_based);
	assert_true(j->stonewall);
	assert_true(j->direct);
	assert_false(j->latency);
	assert_true(j->prewarm);
	joblist_free(&jl);
}

static void test_gtod_reduce(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "gtod_reduce=1\n");
	assert_false(j->latency);
	assert_int_equal(j->src.fio_noops, 0);	/* it has an effect */
	joblist_free(&jl);
	j = one_job(&jl, "gtod_reduce=0\n");
	assert_true(j->latency);
	joblist_free(&jl);
}

static void test_fio_noops(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	parse_ok(&jl, "[global]\nname=ignored\nfilename=/dev/null\n[real]\nthread\n"
		 "group_reporting=1\nnorandommap\nrandrepeat=0\nnew_group\n"
		 "description=a test\nname=renamed\n");
	j = jl.jobs[0];
	assert_string_equal(j->name, "renamed");
	assert_int_equal(j->src.fio_noops, FIO_NOOP_NAME |
			 FIO_NOOP_GROUP_REPORTING | FIO_NOOP_NORANDOMMAP |
			 FIO_NOOP_RANDREPEAT | FIO_NOOP_NEW_GROUP | FIO_NOOP_DESCRIPTION);
	assert_false(j->randseed_set);
	/* thread has an effect now: workers as processes. */
	assert_true(j->thread);
	joblist_free(&jl);
	j = one_job(&jl, "thread=0\n");
	assert_false(j->thread);
	assert_int_equal(j->src.fio_noops, 0);
	joblist_free(&jl);
	j = one_job(&jl, "bs=4k\n");
	assert_true(j->thread);		/* faultline's default, not fio's */
	joblist_free(&jl);
}

static void test_values(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	j = one_job(&jl, "touch=stride:512\nmadvise=hugepage\nfadvise=random\nscan=partitioned\n"
		    "scan_chunk=1m\nrandom_distribution=zipf:1.2\nfile_service_type=sequential\n"
		    "randseed=42\ncpus_allowed=0-3,5\nnuma_cpu_nodes=0\n"
		    "numa_mem_policy=interleave:0-1\nmem_limit=256m\nreserve_mem=1g\n"
		    "invalidate=0\ndrop_caches=1\ncpu_probe=1\nrw=randread\n");
	assert_int_equal(j->touch, TOUCH_STRIDE);
	assert_int_equal(j->touch_stride, 512);
	assert_int_equal(j->madvise, ADV_HUGEPAGE);
	assert_int_equal(j->fadvise, FADV_M_RANDOM);
	assert_int_equal(j->scan, SCAN_PARTITIONED);
	assert_int_equal(j->scan_chunk, MIB);
	assert_int_equal(j->random_distribution, DIST_ZIPF);
	assert_true(j->zipf_theta > 1.19 && j->zipf_theta < 1.21);
	assert_int_equal(j->file_service_type, FST_SEQUENTIAL);
	assert_true(j->randseed_set);
	assert_int_equal(j->randseed, 42);
	assert_string_equal(j->cpus_allowed, "0-3,5");
	assert_string_equal(j->numa_cpu_nodes, "0");
	assert_string_equal(j->numa_mem_policy, "interleave:0-1");
	assert_int_equal(j->mem_limit, 256 * MIB);
	assert_int_equal(j->reserve_mem, 1024 * MIB);
	assert_false(j->invalidate);
	assert_true(j->drop_caches);
	assert_true(j->cpu_probe);
	joblist_free(&jl);

	/* fio's default theta when none is given */
	j = one_job(&jl, "rw=randread\nrandom_distribution=zipf\ntouch=page\n");
	assert_true(j->zipf_theta > 1.09 && j->zipf_theta < 1.11);
	assert_int_equal(j->touch, TOUCH_PAGE);
	joblist_free(&jl);

	j = one_job(&jl, "numa_mem_policy=prefer:1\n");
	assert_string_equal(j->numa_mem_policy, "prefer:1");
	joblist_free(&jl);
}

static void test_comments(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;

	(void)state;
	parse_ok(&jl, "# header comment\n; another\n[j] ; why\n  bs = 8k ; trailing\n"
		 "filename=/data/run#3\t# a '#' inside a word stays\nsize=1m\t;x\n\r\n");
	j = jl.jobs[0];
	assert_int_equal(j->bs, 8192);
	assert_string_equal(j->filename, "/data/run#3");
	assert_int_equal(j->size, MIB);
	joblist_free(&jl);
}

static void test_sync_iodepth_warns(void **state)
{
	struct joblist jl = { 0 };

	(void)state;
	one_job(&jl, "iodepth=16\n");
	assert_has(warnings, "iodepth=16 at job.fio:3");
	assert_has(warnings, "psync");
	joblist_free(&jl);

	warnings[0] = '\0';
	one_job(&jl, "iodepth=16\nioengine=io_uring\n");
	assert_string_equal(warnings, "");
	joblist_free(&jl);

	/* So does an explicit iodepth_batch_submit; auto says nothing. */
	warnings[0] = '\0';
	one_job(&jl, "iodepth_batch=4\n");
	assert_has(warnings, "iodepth_batch_submit=4 at job.fio:3");
	joblist_free(&jl);
	warnings[0] = '\0';
	one_job(&jl, "iodepth_batch_submit=auto\n");
	assert_string_equal(warnings, "");
	joblist_free(&jl);
	one_job(&jl, "iodepth_batch=4\nioengine=libaio\n");
	assert_string_equal(warnings, "");
	joblist_free(&jl);
}

/* ------------------------------------------------------------------ */
/* command line */

static void test_cmdline_jobs(void **state)
{
	char *argv[] = { "--bs=8k", "--size=1m", "--name=x", "--rw=randread",
			 "--filename=/tmp/f", "--name=y", "--direct", "--ioengine=libaio",
			 "--iodepth=4" };
	struct joblist jl = { 0 };
	struct err e = { 0 };

	(void)state;
	if (jobfile_parse_args(&jl, 9, argv, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(jl.n, 2);
	assert_string_equal(jl.jobs[0]->name, "x");
	assert_int_equal(jl.jobs[0]->bs, 8192);
	assert_int_equal(jl.jobs[0]->rw, RW_RANDREAD);
	assert_string_equal(jl.jobs[0]->filename, "/tmp/f");
	assert_string_equal(jl.jobs[1]->name, "y");
	assert_int_equal(jl.jobs[1]->bs, 8192);
	assert_int_equal(jl.jobs[1]->rw, RW_READ);
	assert_null(jl.jobs[1]->filename);
	assert_true(jl.jobs[1]->direct);
	assert_string_equal(jl.jobs[1]->src.file, "command line");
	assert_int_equal(jl.jobs[1]->src.line, 6);
	joblist_free(&jl);
}

static void cmdline_bad(int argc, char **argv, const char *a, const char *b)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };

	assert_int_equal(jobfile_parse_args(&jl, argc, argv, &e), -EINVAL);
	assert_int_equal(jl.n, 0);
	assert_has(e.msg, "command line");
	assert_has(e.msg, a);
	if (b)
		assert_has(e.msg, b);
}

static void test_cmdline_errors(void **state)
{
	char *sep[] = { "--name=x", "--size=1m", "--bs", "4k" };
	char *bad[] = { "--name=x", "--size=1m", "--iodepht=2" };
	char *zero[] = { "--name=x", "--size=1m", "--bs=0" };
	char *noname[] = { "--size=1m" };
	char *nodash[] = { "--name=x", "size=1m" };
	char *fio[] = { "--name=x", "--size=1m", "--verify_interval=8" };

	(void)state;
	/* fio-style values are one argument: --bs=4k */
	cmdline_bad(4, sep, "command line:3", "--bs=VALUE");
	cmdline_bad(3, bad, "command line:3", "did you mean 'iodepth'?");
	cmdline_bad(3, zero, "bs=0 at command line:3", NULL);
	cmdline_bad(1, noname, "--name", NULL);
	cmdline_bad(2, nodash, "command line:2", "size=1m");
	cmdline_bad(3, fio, "'verify_interval' at command line:3", "fio option");
}

/* ------------------------------------------------------------------ */
/* output */

static char *print_to_string(const struct job *j)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	jobtext_job(f, j);
	fclose(f);
	return buf;
}

static void test_job_print(void **state)
{
	struct joblist jl = { 0 };
	const struct job *j;
	char *out;

	(void)state;
	j = one_job(&jl, "bs=64k\nthread\ngroup_reporting\nruntime=1500ms\nsize=(3*1024)\n");
	out = print_to_string(j);
	assert_has(out, "[j]\n");
	assert_has(out, "\nbs=64k\n");
	assert_has(out, "\nsize=3k\n");
	assert_has(out, "\nruntime=1500ms\n");
	assert_has(out, "\nioengine=psync\n");
	assert_has(out, "\nfilename=/dev/null\n");
	assert_has(out, "; accepted, no effect here: group_reporting\n");
	assert_has(out, "\nthread=1\n");
	/* every option shows, defaults included */
	for (size_t i = 0; i < option_count; i++) {
		const struct option_def *o = &option_table[i];

		if (o->noop || o->inverse || o->type == OPT_CUSTOM)
			continue;
		assert_has(out, o->name);
	}
	free(out);
	joblist_free(&jl);
}

static void test_job_validate(void **state)
{
	struct job j;
	struct err e = { 0 };

	(void)state;
	option_defaults(&j);
	snprintf(j.name, sizeof(j.name), "hand");
	snprintf(j.src.file, sizeof(j.src.file), "made.fio");
	j.src.line = 9;
	j.size = MIB;
	assert_int_equal(job_validate(&j, NULL, &e), 0);
	snprintf(j.ioengine, sizeof(j.ioengine), "mmap");
	j.direct = true;
	assert_int_equal(job_validate(&j, NULL, &e), -EINVAL);
	assert_has(e.msg, "made.fio:9");
	assert_has(e.msg, "mmap");
	j.direct = false;
	j.bs = 0;
	assert_int_equal(job_validate(&j, NULL, &e), -EINVAL);
	assert_has(e.msg, "bs=0");
	option_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_unknown_option_suggests, setup),
		cmocka_unit_test_setup(test_unknown_option_from_file, setup),
		cmocka_unit_test_setup(test_missing_file, setup),
		cmocka_unit_test_setup(test_fio_only_option, setup),
		cmocka_unit_test_setup(test_wrong_type, setup),
		cmocka_unit_test_setup(test_bad_size_suffix, setup),
		cmocka_unit_test_setup(test_bad_time_suffix, setup),
		cmocka_unit_test_setup(test_zero_bounds, setup),
		cmocka_unit_test_setup(test_direct_with_mmap, setup),
		cmocka_unit_test_setup(test_empty_job_section, setup),
		cmocka_unit_test_setup(test_empty_file, setup),
		cmocka_unit_test_setup(test_line_without_equals, setup),
		cmocka_unit_test_setup(test_unterminated_header, setup),
		cmocka_unit_test_setup(test_undefined_env, setup),
		cmocka_unit_test_setup(test_scratch_needs_size, setup),
		cmocka_unit_test_setup(test_null_engine_needs_no_target, setup),
		cmocka_unit_test_setup(test_unknown_engine, setup),
		cmocka_unit_test_setup(test_bad_zipf, setup),
		cmocka_unit_test_setup(test_rw_values, setup),
		cmocka_unit_test_setup(test_write_options, setup),
		cmocka_unit_test_setup(test_write_contradictions, setup),
		cmocka_unit_test_setup(test_write_options_on_read_job_warn, setup),
		cmocka_unit_test_setup(test_placement_syntax, setup),
		cmocka_unit_test_setup(test_bad_arithmetic, setup),
		cmocka_unit_test_setup(test_option_outside_section, setup),
		cmocka_unit_test_setup(test_error_leaves_list_alone, setup),
		cmocka_unit_test_setup(test_defaults, setup),
		cmocka_unit_test_setup(test_global_inheritance, setup),
		cmocka_unit_test_setup(test_global_options_as_written, setup),
		cmocka_unit_test_setup(test_job_options_as_set, setup),
		cmocka_unit_test_setup(test_cmdline_beside_file, setup),
		cmocka_unit_test_setup(test_cmdline_two_files, setup),
		cmocka_unit_test_setup(test_cmdline_where_and_section, setup),
		cmocka_unit_test_setup(test_log_options, setup),
		cmocka_unit_test_setup(test_files_start_fresh, setup),
		cmocka_unit_test_setup(test_plain_fio_file, setup),
		cmocka_unit_test_setup(test_aliases, setup),
		cmocka_unit_test_setup(test_size_suffixes, setup),
		cmocka_unit_test_setup(test_size_percent, setup),
		cmocka_unit_test_setup(test_time_suffixes, setup),
		cmocka_unit_test_setup(test_arithmetic, setup),
		cmocka_unit_test_setup(test_keywords, setup),
		cmocka_unit_test_setup(test_env_vars, setup),
		cmocka_unit_test_setup(test_bare_booleans, setup),
		cmocka_unit_test_setup(test_gtod_reduce, setup),
		cmocka_unit_test_setup(test_fio_noops, setup),
		cmocka_unit_test_setup(test_values, setup),
		cmocka_unit_test_setup(test_comments, setup),
		cmocka_unit_test_setup(test_sync_iodepth_warns, setup),
		cmocka_unit_test_setup(test_cmdline_jobs, setup),
		cmocka_unit_test_setup(test_cmdline_errors, setup),
		cmocka_unit_test_setup(test_job_print, setup),
		cmocka_unit_test_setup(test_job_validate, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
