/*
 * test_judge.c - the verdict's reasoning (judge.c) on recorded results:
 * the JSON documents of real runs in tests/fixtures/verdict/ (see its
 * README). Expected values are computed from the documents themselves,
 * never written down: a win, a loss, a tie within noise (the same two
 * recorded runs used crosswise in two rounds), a source unavailable (a
 * null in the document gives no sentence, never a zero), a job's own
 * counters preferred to the system-wide ones when present, a job
 * error reported as such; and a replayed trace judged by the time to
 * replay all of it (untimed) or at its own pace (timed), its depth cell
 * beside the answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "verdict/judge.h"
#include "verdict/judge_host.h"

static json_t *load(const char *name)
{
	char path[512];
	json_error_t je;
	json_t *d;

	snprintf(path, sizeof(path), "%s/verdict/%s.json", FIXTURES, name);
	d = json_load_file(path, 0, &je);
	if (!d)
		fail_msg("%s: %s", path, je.text);
	return d;
}

static double num(json_t *d, const char *a, const char *b)
{
	return json_number_value(json_object_get(json_object_get(json_array_get(json_object_get(d, "jobs"), 0), a), b));
}

static const struct judge_host host = {
	.ncpus = 2, .read_ahead_kb = 8192, .dev = "vda", .rotational = 1, .virt = "none",
	.mem_budget = 32u << 20, .file_size = 128u << 20, .cgroup = true,
};

/* The fixed matrix's workload @w. */
static const struct judge_wl *WL(enum judge_workload w)
{
	static struct judge_wl wl[JW_NR];

	judge_wl_fixed(w, &wl[w]);
	return &wl[w];
}

static const struct judge_sentence *find(const struct judge_result *r, const char *key, const char *in)
{
	for (unsigned i = 0; i < r->nsent; i++)
		if (!strcmp(r->sent[i].key, key) && (!in || strstr(r->sent[i].text, in)))
			return &r->sent[i];
	return NULL;
}

static void put_time(json_t *d, double blkio, double thrash, double reclaim)
{
	json_t *t = json_object();

	json_object_set_new(t, "blkio_pct", json_real(blkio));
	json_object_set_new(t, "thrash_pct", json_real(thrash));
	json_object_set_new(t, "reclaim_pct", json_real(reclaim));
	json_object_set_new(json_object_get(json_array_get(json_object_get(d, "jobs"), 0), "faultline"), "time", t);
}

/* Where the time went (delayacct=1), one sentence over the engines that
 * have it; nothing said when none has. */
static void test_time_evidence(void **state)
{
	json_t *m = load("uniform-mmap-random"), *b = load("uniform-bufpool");
	struct judge_cell c[] = { { JW_UNIFORM, JE_MMAP_RANDOM, 0, m }, { JW_UNIFORM, JE_BUFPOOL, 0, b } };
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	assert_null(find(&r, "time_waiting_pct", NULL));
	put_time(m, 72.0, 6.0, 6.0);
	put_time(b, 52.0, 0.0, 0.0);
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	s = find(&r, "time_waiting_pct", NULL);
	assert_non_null(s);
	if (!s)
		return;
	assert_non_null(strstr(s->text, "mmap (madvise=random): its threads spent 78 % of their time waiting "
				       "for the device inside page faults and 6 % reclaiming; "));
	assert_non_null(strstr(s->text, "'s 52 % waiting for the device and 0 % reclaiming"));
	assert_true(fabs(s->value - 78.0) < 1e-9);
	json_decref(m);
	json_decref(b);
}

/* Every engine of the matrix with its shares: the sentence keeps those
 * that fit, mmap's first, and is still said (it was dropped whole). */
static void test_time_evidence_many_engines(void **state)
{
	static const char *const names[] = { "uniform-mmap-normal", "uniform-mmap-random", "uniform-bufpool",
					     "uniform-io_uring-direct", "uniform-mmap-normal", "uniform-bufpool" };
	static const enum judge_engine es[] = { JE_MMAP_NORMAL, JE_MMAP_RANDOM, JE_BUFPOOL, JE_URING_DIRECT,
						JE_URING_DEPTH, JE_VMCACHE };
	struct judge_cell c[6];
	json_t *d[6];
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	for (unsigned i = 0; i < 6; i++) {
		d[i] = load(names[i]);
		put_time(d[i], 40.0 + i, 1.0, 2.0);
		c[i] = (struct judge_cell){ JW_UNIFORM, es[i], 0, d[i] };
	}
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 6, &host, &r);
	s = find(&r, "time_waiting_pct", NULL);
	assert_non_null(s);
	if (!s)
		return;
	assert_non_null(strstr(s->text, "mmap (madvise=normal): its threads spent 41 % of their time"));
	assert_non_null(strstr(s->text, "(the kernel's delay accounting)."));
	assert_true(strlen(s->text) < JUDGE_SENT_LEN - 1);
	for (unsigned i = 0; i < 6; i++)
		json_decref(d[i]);
}

/* A win: the loop over io_uring against the loop over mmap. */
static void test_win(void **state)
{
	json_t *m = load("hazard-mmap-loop"), *u = load("hazard-io_uring-loop");
	struct judge_cell c[] = { { JW_HAZARD, JE_MMAP_LOOP, 0, m }, { JW_HAZARD, JE_URING_LOOP, 0, u } };
	double bm = num(m, "read", "bw_bytes"), bu = num(u, "read", "bw_bytes");
	struct judge_result r;

	(void)state;
	assert_true(bu > bm * (1 + JUDGE_TIE_SINGLE));	/* what was recorded */
	judge_workload(WL(JW_HAZARD), JW_HAZARD, c, 2, &host, &r);
	assert_int_equal(r.winner, JE_URING_LOOP);
	assert_int_equal(r.runner_up, JE_MMAP_LOOP);
	assert_false(r.tie);
	assert_true(fabs(r.ratio - bu / bm) < 1e-9 * r.ratio);
	assert_non_null(strstr(r.headline, "wins"));
	assert_non_null(strstr(r.headline, "one round"));
	json_decref(m);
	json_decref(u);
}

/* A loss: the buffer pool's write mix against mmap+msync; the "mmap or
 * a pool" sentence says which way and by how much. */
static void test_loss(void **state)
{
	json_t *b = load("write-bufpool"), *m = load("write-mmap-msync"), *p = load("write-pwrite-fdatasync");
	struct judge_cell c[] = { { JW_WRITE, JE_BUFPOOL, 0, b }, { JW_WRITE, JE_MMAP_MSYNC, 0, m },
				  { JW_WRITE, JE_PWRITE, 0, p } };
	double vb = num(b, "read", "iops") + num(b, "write", "iops");
	double vm = num(m, "read", "iops") + num(m, "write", "iops");
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	judge_workload(WL(JW_WRITE), JW_WRITE, c, 3, &host, &r);
	assert_int_not_equal(r.winner, JE_BUFPOOL);
	assert_true(r.e[JE_BUFPOOL].ok);
	s = find(&r, "mmap_vs_pool", NULL);
	assert_non_null(s);
	assert_true(fabs(s->value - vm / vb) < 1e-9 * s->value);
	assert_non_null(strstr(s->text, vm > vb ? "faster" : "slower"));
	/* Every engine flushed: one flush sentence each, from sync.lat_ns. */
	assert_non_null(find(&r, "flush_p99_ms", "mmap + msync"));
	assert_non_null(find(&r, "flush_p99_ms", "pwrite"));
	json_decref(b);
	json_decref(m);
	json_decref(p);
}

/* The pool's sentence names the file its run read: the targets in its
 * JSON (a job file's own files, a replayed trace's), else the plan's. */
static void test_pool_file_size(void **state)
{
	json_t *b = load("write-bufpool"), *m = load("write-mmap-msync");
	json_t *t = json_array_get(json_object_get(json_object_get(json_array_get(json_object_get(b, "jobs"), 0),
								   "faultline"), "targets"), 0);
	struct judge_cell c[] = { { JW_WRITE, JE_BUFPOOL, 0, b }, { JW_WRITE, JE_MMAP_MSYNC, 0, m } };
	struct judge_result r;

	(void)state;
	json_object_set_new(t, "len", json_integer(6u << 20));
	judge_workload(WL(JW_WRITE), JW_WRITE, c, 2, &host, &r);
	assert_non_null(find(&r, "pool_hit_ratio", "over 6 MiB of file"));
	json_object_del(json_object_get(json_array_get(json_object_get(b, "jobs"), 0), "faultline"), "targets");
	judge_workload(WL(JW_WRITE), JW_WRITE, c, 2, &host, &r);
	assert_non_null(find(&r, "pool_hit_ratio", "over 128 MiB of file"));
	json_decref(b);
	json_decref(m);
}

/* The kernel's share of what reached the device (issue 28): a sentence
 * for mmap at or above the threshold, with the reasons, none below it
 * or where the source was not read. The figures are the mmap-cgroup job
 * of jobs/writeback.job on the development VM. */
static void set_writeback(json_t *doc, double share, json_t *own)
{
	json_t *fl = json_object_get(json_array_get(json_object_get(doc, "jobs"), 0), "faultline");
	json_t *wb = json_object(), *by = json_object();

	json_object_set_new(by, "vmscan", json_integer(22528000));
	json_object_set_new(by, "periodic", json_integer(0));
	json_object_set_new(wb, "kernel_share", share < 0 ? json_null() : json_real(share));
	json_object_set_new(wb, "kernel_bytes", json_integer(22528000));
	json_object_set_new(wb, "own_bytes", own);
	json_object_set_new(wb, "kernel_by_reason", by);
	json_object_set_new(fl, "writeback", wb);
}

static void test_kernel_write_share(void **state)
{
	json_t *b = load("write-bufpool"), *m = load("write-mmap-msync"), *p = load("write-pwrite-fdatasync");
	struct judge_cell c[] = { { JW_WRITE, JE_BUFPOOL, 0, b }, { JW_WRITE, JE_MMAP_MSYNC, 0, m },
				  { JW_WRITE, JE_PWRITE, 0, p } };
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	/* Recorded before the figure existed: no sentence. */
	judge_workload(WL(JW_WRITE), JW_WRITE, c, 3, &host, &r);
	assert_null(find(&r, "kernel_write_share", NULL));
	set_writeback(m, 0.465, json_integer(25899827));
	set_writeback(p, JUDGE_KERNEL_WRITE_SHARE - 0.01, json_integer(90000000));
	judge_workload(WL(JW_WRITE), JW_WRITE, c, 3, &host, &r);
	s = find(&r, "kernel_write_share", "mmap");
	assert_non_null(s);
	assert_true(fabs(s->value - 0.465) < 1e-9);
	assert_non_null(strstr(s->text, "46%"));
	assert_non_null(strstr(s->text, "reclaim 21 MiB"));
	assert_null(strstr(s->text, "dirty_expire"));
	assert_null(find(&r, "kernel_write_share", "pwrite"));
	/* Not read: null, and nothing said. */
	set_writeback(m, -1, json_null());
	judge_workload(WL(JW_WRITE), JW_WRITE, c, 3, &host, &r);
	assert_null(find(&r, "kernel_write_share", NULL));
	json_decref(b);
	json_decref(m);
	json_decref(p);
}

/* A tie within noise: two rounds, the recorded runs swapped between the
 * engines, so one round says a, the other b. */
static void test_tie(void **state)
{
	json_t *x = load("uniform-bufpool"), *y = load("uniform-io_uring-direct");
	struct judge_cell c[] = { { JW_UNIFORM, JE_BUFPOOL, 0, x }, { JW_UNIFORM, JE_URING_DIRECT, 0, y },
				  { JW_UNIFORM, JE_BUFPOOL, 1, y }, { JW_UNIFORM, JE_URING_DIRECT, 1, x } };
	struct judge_result r;

	(void)state;
	assert_true(num(x, "read", "iops") != num(y, "read", "iops"));
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 4, &host, &r);
	assert_int_equal(r.rounds, 2);
	assert_int_equal(r.ratio_n, 2);
	assert_true(r.tie);
	assert_true(r.ratio_lo < 1);
	assert_non_null(strstr(r.headline, "tie"));
	/* Crosswise rounds: ratios r and 1/r, whose middle is exactly 1. */
	assert_true(fabs(r.ratio - 1) < 1e-9);
	/* Two engines of the matrix were not given: said, not made up. */
	assert_non_null(find(&r, "no_result", "mmap (madvise=normal)"));
	assert_false(r.e[JE_MMAP_NORMAL].ok);
	json_decref(x);
	json_decref(y);
}

/* The comparison sentence agrees with the table (issue 30): crosswise
 * rounds of mmap and the pool are a tie, said as one, not "slower". */
static void test_compare_tie(void **state)
{
	json_t *m = load("uniform-mmap-random"), *b = load("uniform-bufpool");
	struct judge_cell c[] = { { JW_UNIFORM, JE_MMAP_RANDOM, 0, m }, { JW_UNIFORM, JE_BUFPOOL, 0, b },
				  { JW_UNIFORM, JE_MMAP_RANDOM, 1, b }, { JW_UNIFORM, JE_BUFPOOL, 1, m } };
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 4, &host, &r);
	s = find(&r, "mmap_vs_pool", NULL);
	assert_non_null(s);
	assert_non_null(strstr(s->text, "a tie within noise"));
	assert_null(strstr(s->text, "slower"));
	assert_null(strstr(s->text, "faster"));
	json_decref(m);
	json_decref(b);
}

/* Not a tie, over rounds: the range follows the ratio's direction, so
 * "1.3x slower" is followed by a range around 1.3, never its inverse. */
static void test_compare_range_direction(void **state)
{
	json_t *m = load("uniform-mmap-random"), *b = load("uniform-bufpool");
	struct judge_cell c[] = { { JW_UNIFORM, JE_MMAP_RANDOM, 0, m }, { JW_UNIFORM, JE_BUFPOOL, 0, b },
				  { JW_UNIFORM, JE_MMAP_RANDOM, 1, m }, { JW_UNIFORM, JE_BUFPOOL, 1, b } };
	double vm = num(m, "read", "iops"), vb = num(b, "read", "iops"), said, lo, hi;
	const struct judge_sentence *s;
	struct judge_result r;
	const char *p;

	(void)state;
	assert_true(fmax(vm, vb) / fmin(vm, vb) > 1 + JUDGE_TIE_ROUNDS);	/* what was recorded */
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 4, &host, &r);
	s = find(&r, "mmap_vs_pool", NULL);
	assert_non_null(s);
	p = strstr(s->text, " is ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, " is %lfx", &said), 1);
	assert_non_null(strstr(s->text, vm > vb ? "faster" : "slower"));
	p = strstr(s->text, "x over 2 rounds)");
	assert_non_null(p);
	while (p > s->text && *p != '(')
		p--;
	assert_int_equal(sscanf(p, "(%lf-%lfx over 2 rounds)", &lo, &hi), 2);
	assert_true(said >= 1 && lo >= 1 && hi >= 1);
	assert_true(lo <= said + 0.005 && said <= hi + 0.005);
	json_decref(m);
	json_decref(b);
}

/* The same documents in one round are no tie (the ratio is past 10 %),
 * unless they are within it. */
static void test_single_round_threshold(void **state)
{
	json_t *x = load("uniform-bufpool"), *y = load("uniform-io_uring-direct");
	struct judge_cell c[] = { { JW_UNIFORM, JE_BUFPOOL, 0, x }, { JW_UNIFORM, JE_URING_DIRECT, 0, y } };
	double a = num(x, "read", "iops"), b = num(y, "read", "iops");
	struct judge_result r;

	(void)state;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	assert_int_equal(r.tie, fmax(a, b) / fmin(a, b) < 1 + JUDGE_TIE_SINGLE);
	json_decref(x);
	json_decref(y);
}

/* Sources: the recorded mmap run has system-wide TLB shootdowns; with
 * them nulled no TLB sentence appears (and no sentence holds a 0 from a
 * null); with the job's own counter added, that one is used. */
static void test_source_unavailable(void **state)
{
	json_t *m = load("uniform-mmap-random"), *sys, *job0, *ev;
	struct judge_cell c[] = { { JW_UNIFORM, JE_MMAP_RANDOM, 0, m } };
	double secs, tlb;
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	sys = json_object_get(json_object_get(m, "faultline"), "system");
	tlb = json_number_value(json_object_get(sys, "tlb_shootdowns"));
	secs = json_number_value(json_object_get(json_object_get(m, "faultline"), "duration_ms")) / 1000;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 1, &host, &r);
	s = find(&r, "tlb_per_s", NULL);
	if (tlb / secs >= JUDGE_TLB_PER_S) {
		assert_non_null(s);
		assert_string_equal(s->source, "system");
		assert_true(fabs(s->value - tlb / secs) < 1e-6 * s->value);
	} else {
		assert_null(s);
	}

	json_object_set_new(sys, "tlb_shootdowns", json_null());
	json_object_set_new(sys, "kswapd_cpu_s", json_null());
	json_object_set_new(sys, "pgscan_all", json_null());
	json_object_set_new(sys, "pgscan_direct", json_null());
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 1, &host, &r);
	assert_null(find(&r, "tlb_per_s", NULL));
	assert_null(find(&r, "kswapd_cpu_pct", NULL));
	assert_null(find(&r, "direct_reclaim_per_s", NULL));
	for (unsigned i = 0; i < r.nsent; i++)
		assert_false(r.sent[i].value == 0 && strcmp(r.sent[i].key, "no_result"));

	/* Per-job counters (SPEC 15), when present, win over the system's. */
	job0 = json_object_get(json_array_get(json_object_get(m, "jobs"), 0), "faultline");
	ev = json_pack("{s:I, s:I, s:I}", "tlb_ipi", (json_int_t)(JUDGE_TLB_PER_S * 1000),
		       "direct_reclaim", (json_int_t)5000, "memcg_reclaim", (json_int_t)5000);
	json_object_set_new(job0, "events", ev);
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 1, &host, &r);
	s = find(&r, "tlb_per_s", NULL);
	assert_non_null(s);
	assert_string_equal(s->source, "job");
	assert_true(fabs(s->value - JUDGE_TLB_PER_S * 1000 /
			 (json_number_value(json_object_get(job0, "runtime_ns")) / 1e9)) < 1e-6 * s->value);
	s = find(&r, "direct_reclaim_per_s", NULL);
	assert_non_null(s);
	assert_string_equal(s->source, "job");
	json_decref(m);
}

/* A system-wide TLB figure is set beside the one of the run that maps
 * nothing (io_uring O_DIRECT) in the same workload. */
static void test_background(void **state)
{
	json_t *m = load("uniform-mmap-random"), *u = load("uniform-io_uring-direct");
	struct judge_cell c[] = { { JW_UNIFORM, JE_MMAP_RANDOM, 0, m }, { JW_UNIFORM, JE_URING_DIRECT, 0, u } };
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	s = find(&r, "tlb_per_s", NULL);
	assert_non_null(s);	/* the recorded run: 473 shootdowns in 2.0 s */
	assert_string_equal(s->source, "system");
	assert_non_null(strstr(s->text, "io_uring O_DIRECT (no cache), which maps nothing, saw"));
	/* Without the baseline's figure, no comparison is made up. */
	json_object_set_new(json_object_get(json_object_get(u, "faultline"), "system"), "tlb_shootdowns",
			    json_null());
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	s = find(&r, "tlb_per_s", NULL);
	assert_non_null(s);
	assert_null(strstr(s->text, "maps nothing"));
	json_decref(m);
	json_decref(u);
}

/* A job that failed gives no number and says why. */
static void test_job_error(void **state)
{
	json_t *u = load("uniform-bufpool"), *bad = json_pack("{s:[{s:i, s:{s:s}}]}", "jobs", "error", 5,
							      "faultline", "errmsg", "target /x offset 4096: EIO");
	struct judge_cell c[] = { { JW_UNIFORM, JE_BUFPOOL, 0, u }, { JW_UNIFORM, JE_MMAP_NORMAL, 0, bad } };
	struct judge_result r;

	(void)state;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	assert_false(r.e[JE_MMAP_NORMAL].ok);
	assert_non_null(find(&r, "no_result", "EIO"));
	assert_int_equal(r.winner, JE_BUFPOOL);
	assert_int_equal(r.runner_up, -1);
	assert_non_null(strstr(r.headline, "no verdict"));
	assert_false(judge_unanswered(&r));
	/* Every run failed: no answer, which the verdict's exit status says. */
	c[0] = c[1];
	c[0].e = JE_BUFPOOL;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	assert_true(r.ran);
	assert_true(judge_unanswered(&r));
	assert_non_null(strstr(r.headline, "no engine gave a result"));
	/* Nothing ran: not a missing answer either. */
	judge_workload(WL(JW_SCAN), JW_SCAN, c, 2, &host, &r);
	assert_false(r.ran);
	assert_false(judge_unanswered(&r));
	json_decref(u);
	json_decref(bad);
}

/* mmap normal's read amplification names the device's read_ahead_kb. */
static void test_read_ahead(void **state)
{
	json_t *n = load("uniform-mmap-normal");
	struct judge_cell c[] = { { JW_UNIFORM, JE_MMAP_NORMAL, 0, n } };
	double amp = num(n, "faultline", "read_amplification");
	const struct judge_sentence *s;
	struct judge_result r;
	struct judge_host h = host;

	(void)state;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 1, &h, &r);
	s = find(&r, "read_amp", NULL);
	if (amp >= JUDGE_READ_AMP) {
		assert_non_null(s);
		assert_non_null(strstr(s->text, "read_ahead_kb is 8192"));
	} else {
		assert_null(s);
	}
	h.read_ahead_kb = -1;
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 1, &h, &r);
	s = find(&r, "read_amp", NULL);
	if (s)
		assert_null(strstr(s->text, "read_ahead_kb"));
	json_decref(n);
}

/* DAMON's pageout is a host fact: said with how long idle memory lasts,
 * and what it means for the buffer pool with and without swap; not
 * said when DAMON does not page out or that is unknown. */
static void test_damon_fact(void **state)
{
	struct judge_result r[JW_NR];
	struct judge_sentence out[8];
	struct judge_host h = host;
	const struct judge_sentence *s = NULL;
	unsigned n;

	(void)state;
	memset(r, 0, sizeof(r));
	h.damon_pageout = 1;
	h.damon_idle_s = 30;
	h.swap = 0;
	n = judge_host_facts(&h, r, JW_NR, out, 8);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(out[i].key, "damon_pageout"))
			s = &out[i];
	assert_non_null(s);
	assert_true(s->value == 30);
	assert_non_null(strstr(s->text, "memory left idle for 30 s"));
	assert_non_null(strstr(s->text, "cannot page out without swap (none here)"));
	h.swap = 1;
	h.damon_idle_s = NAN;
	n = judge_host_facts(&h, r, JW_NR, out, 8);
	s = NULL;
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(out[i].key, "damon_pageout"))
			s = &out[i];
	assert_non_null(s);
	assert_non_null(strstr(s->text, "memory left idle, with no memory pressure"));
	assert_non_null(strstr(s->text, "pages out too, to swap"));
	/* Swap unknown: neither claim. */
	h.swap = -1;
	n = judge_host_facts(&h, r, JW_NR, out, 8);
	s = NULL;
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(out[i].key, "damon_pageout"))
			s = &out[i];
	assert_non_null(s);
	assert_non_null(strstr(s->text, "could not be read"));
	assert_null(strstr(s->text, "none here"));
	for (int v = -1; v <= 0; v++) {
		h.damon_pageout = v;
		n = judge_host_facts(&h, r, JW_NR, out, 8);
		for (unsigned i = 0; i < n; i++)
			assert_string_not_equal(out[i].key, "damon_pageout");
	}
}

/* A workload with a rate (rate_iops): the engines that held it are
 * ranked by p99, lower first; one that delivered less falls behind, by
 * how much, and cannot win; when none held it, delivered IOPS rank. */
static void test_rate_p99(void **state)
{
	json_t *x = load("uniform-bufpool"), *y = load("uniform-io_uring-direct");
	struct judge_cell c[] = { { 0, JE_BUFPOOL, 0, x }, { 0, JE_URING_DIRECT, 0, y } };
	double ix = num(x, "read", "iops"), iy = num(y, "read", "iops");
	double px = json_number_value(json_object_get(json_object_get(json_object_get(json_object_get(
			json_array_get(json_object_get(x, "jobs"), 0), "read"), "lat_ns"), "percentile"), "99.000000")) / 1000;
	double py = json_number_value(json_object_get(json_object_get(json_object_get(json_object_get(
			json_array_get(json_object_get(y, "jobs"), 0), "read"), "lat_ns"), "percentile"), "99.000000")) / 1000;
	int fast = iy > ix ? JE_URING_DIRECT : JE_BUFPOOL, slow = fast == JE_BUFPOOL ? JE_URING_DIRECT : JE_BUFPOOL;
	double lo = fmin(ix, iy), hi = fmax(ix, iy);
	struct judge_wl wl = { .kind = JW_JOB, .key = "mine", .name = "job 'mine'", .by = JB_P99,
			       .engines = 1u << JE_BUFPOOL | 1u << JE_URING_DIRECT };
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	assert_true(hi > lo * 1.2 && px > 0 && py > 0);	/* what was recorded */
	/* A rate both held: the lower p99 wins, said as p99 at that rate. */
	wl.rate_iops = lo * 0.9;
	judge_workload(&wl, 0, c, 2, &host, &r);
	assert_false(r.none_held);
	assert_int_equal(r.winner, px < py ? JE_BUFPOOL : JE_URING_DIRECT);
	assert_true(fabs(r.ratio - fmax(px, py) / fmin(px, py)) < 1e-9 * r.ratio);
	assert_non_null(strstr(r.headline, "lower p99"));
	assert_non_null(strstr(r.headline, "IOPS"));
	assert_null(find(&r, "rate_short_pct", NULL));
	assert_string_equal(judge_unit(&wl), "us p99");
	/* A rate only the faster held: the slower falls behind, by how much. */
	wl.rate_iops = hi * 0.99;
	judge_workload(&wl, 0, c, 2, &host, &r);
	assert_true(r.e[slow].behind);
	assert_false(r.e[fast].behind);
	assert_int_equal(r.winner, fast);
	s = find(&r, "rate_short_pct", NULL);
	assert_non_null(s);
	assert_true(fabs(s->value - 100 * (1 - lo / wl.rate_iops)) < 1e-6);
	assert_non_null(strstr(s->text, "falls behind"));
	assert_non_null(strstr(r.headline, "only "));
	assert_non_null(strstr(r.headline, "keeps up"));
	assert_null(strstr(r.headline, "no verdict"));
	/* A rate nobody held: delivered IOPS decide, and the headline says so. */
	wl.rate_iops = hi * 2;
	judge_workload(&wl, 0, c, 2, &host, &r);
	assert_true(r.none_held);
	assert_int_equal(r.winner, fast);
	assert_non_null(strstr(r.headline, "no engine held"));
	/* A trace at its own pace (no rate given): the fastest engine's. */
	wl.rate_iops = 0;
	judge_workload(&wl, 0, c, 2, &host, &r);
	assert_true(fabs(r.rate - hi) < 1e-9 * hi);
	assert_true(r.e[slow].behind == (lo < hi * (1 - JUDGE_RATE_SHORT)));
	json_decref(x);
	json_decref(y);
}

/* Each engine's concurrency comes from its run's options, and the depth
 * cell is set against depth 1 (the fair fight). */
static void test_concurrency_and_depth(void **state)
{
	json_t *y = load("uniform-io_uring-direct"), *d = load("uniform-io_uring-direct");
	/* The depth run's resolved options in faultline's own list, which
	 * wins over the recorded "job options" (what a job file set). */
	json_t *opts = json_deep_copy(json_object_get(json_array_get(json_object_get(d, "jobs"), 0),
						      "job options"));
	struct judge_cell c[] = { { JW_UNIFORM, JE_URING_DIRECT, 0, y }, { JW_UNIFORM, JE_URING_DEPTH, 0, d } };
	const struct judge_sentence *s;
	struct judge_result r;
	char want[64];

	(void)state;
	json_object_set_new(opts, "numjobs", json_string("1"));
	json_object_set_new(opts, "iodepth", json_string("64"));
	json_object_set_new(json_object_get(json_array_get(json_object_get(d, "jobs"), 0), "faultline"),
			    "options", opts);
	json_object_set_new(json_object_get(json_array_get(json_object_get(d, "jobs"), 0), "read"), "iops",
			    json_real(3 * num(y, "read", "iops")));
	judge_workload(WL(JW_UNIFORM), JW_UNIFORM, c, 2, &host, &r);
	snprintf(want, sizeof(want), "%s threads x depth %s", json_string_value(json_object_get(
		 json_object_get(json_array_get(json_object_get(y, "jobs"), 0), "job options"), "numjobs")),
		 json_string_value(json_object_get(json_object_get(json_array_get(json_object_get(y, "jobs"), 0),
							"job options"), "iodepth")));
	assert_string_equal(r.e[JE_URING_DIRECT].conc, want);
	assert_string_equal(r.e[JE_URING_DEPTH].conc, "1 thread x depth 64");
	assert_int_equal(r.winner, JE_URING_DEPTH);
	assert_non_null(strstr(r.headline, "[1 thread x depth 64]"));
	s = find(&r, "depth_vs_depth1", NULL);
	assert_non_null(s);
	assert_true(fabs(s->value - 3) < 1e-9);
	json_decref(y);
	json_decref(d);
}

static double fl(json_t *d, const char *k)
{
	return json_number_value(json_object_get(json_object_get(json_array_get(json_object_get(d, "jobs"), 0),
								 "faultline"), k));
}

/* The time a recorded run would take to replay a trace of @n requests:
 * its own time when it issued them all, else its rate over all of them. */
static double replay_s(json_t *d, double n)
{
	double done = num(d, "read", "total_ios"), s = fl(d, "runtime_ns") / 1e9;

	return done >= n ? s : s * n / done;
}

/* An untimed trace (fio iolog v2) is judged by the time to replay all of
 * it: the engine that takes less wins, by the ratio of the times, said as
 * "replays your trace N.NNx faster"; a run the plan's bound cut short is
 * charged its own rate over the whole trace, and said to be estimated;
 * the depth cell, however fast, is beside the answer, not in it. */
static void test_replay_untimed_winner(void **state)
{
	json_t *b = load("uniform-bufpool"), *m = load("uniform-io_uring-direct"), *d = load("uniform-io_uring-direct");
	json_t *opts = json_object_get(json_array_get(json_object_get(d, "jobs"), 0), "job options");
	struct judge_cell c[] = { { 0, JE_BUFPOOL, 0, b }, { 0, JE_URING_DIRECT, 0, m },
				  { 0, JE_URING_DEPTH, 0, d } };
	double n = fmax(num(b, "read", "total_ios"), num(m, "read", "total_ios"));
	double tb = replay_s(b, n), tm = replay_s(m, n);
	int win = tb < tm ? JE_BUFPOOL : JE_URING_DIRECT, lose = win == JE_BUFPOOL ? JE_URING_DIRECT : JE_BUFPOOL;
	struct judge_wl wl = { .kind = JW_JOB, .key = "sq", .name = "job 'sq'", .by = JB_TIME,
			       .replay = true, .trace_ios = n,
			       .engines = 1u << JE_BUFPOOL | 1u << JE_URING_DIRECT | 1u << JE_URING_DEPTH };
	struct judge_result r;
	char want[96];
	double v;

	(void)state;
	assert_true(fmax(tb, tm) / fmin(tb, tm) > 1 + JUDGE_TIE_SINGLE);	/* what was recorded */
	/* The depth cell: 64 in flight, and done in a tenth of the time. */
	json_object_set_new(opts, "numjobs", json_string("1"));
	json_object_set_new(opts, "iodepth", json_string("64"));
	json_object_set_new(json_object_get(json_array_get(json_object_get(d, "jobs"), 0), "read"), "total_ios",
			    json_real(n));
	json_object_set_new(json_object_get(json_array_get(json_object_get(d, "jobs"), 0), "faultline"),
			    "runtime_ns", json_real(fmin(tb, tm) * 1e8));
	judge_workload(&wl, 0, c, 3, &host, &r);
	assert_string_equal(judge_unit(&wl), "s");
	assert_true(judge_lower_better(&r));
	assert_int_equal(r.winner, win);
	assert_int_equal(r.runner_up, lose);
	assert_false(r.tie);
	assert_true(fabs(r.ratio - fmax(tb, tm) / fmin(tb, tm)) < 1e-9 * r.ratio);
	assert_true(fabs(r.e[win].median - fmin(tb, tm)) < 1e-9);
	snprintf(want, sizeof(want), "replays your trace %.2fx faster than", r.ratio);
	assert_non_null(strstr(r.headline, want));
	assert_null(strstr(r.headline, "no verdict"));
	/* The engine that issued fewer of the trace's requests was cut short. */
	assert_int_equal(r.e[num(b, "read", "total_ios") < n ? JE_BUFPOOL : JE_URING_DIRECT].ncut, 1);
	assert_non_null(strstr(r.headline, "estimated"));
	assert_non_null(find(&r, "replay_elapsed_s", "the time it is judged by"));
	/* The depth cell: ranked out, marked as a what-if. */
	assert_true(r.e[JE_URING_DEPTH].ok);
	assert_false(judge_ranked(&r, JE_URING_DEPTH));
	assert_string_equal(r.e[JE_URING_DEPTH].mark, "if the program could have had 64 reads in flight");
	assert_non_null(find(&r, "depth_vs_depth1", "if the program could have had 64 reads in flight"));
	assert_non_null(find(&r, "depth_vs_depth1", "not in the answer"));
	/* A run without its time has no number. */
	json_object_del(json_object_get(json_array_get(json_object_get(b, "jobs"), 0), "faultline"), "runtime_ns");
	assert_false(judge_metric(&wl, b, &v, want, sizeof(want)));
	json_decref(b);
	json_decref(m);
	json_decref(d);
}

/* A tie of an untimed trace: crosswise rounds, said as a tie with the
 * range over rounds that makes it one. */
static void test_replay_untimed_tie(void **state)
{
	json_t *b = load("uniform-bufpool"), *m = load("uniform-mmap-random");
	struct judge_cell c[] = { { 0, JE_BUFPOOL, 0, b }, { 0, JE_MMAP_RANDOM, 0, m },
				  { 0, JE_BUFPOOL, 1, m }, { 0, JE_MMAP_RANDOM, 1, b } };
	double n = fmax(num(b, "read", "total_ios"), num(m, "read", "total_ios"));
	double q = fmax(replay_s(b, n), replay_s(m, n)) / fmin(replay_s(b, n), replay_s(m, n));
	struct judge_wl wl = { .kind = JW_JOB, .key = "sq", .name = "job 'sq'", .by = JB_TIME,
			       .replay = true, .trace_ios = n,
			       .engines = 1u << JE_BUFPOOL | 1u << JE_MMAP_RANDOM };
	struct judge_result r;
	char want[64];

	(void)state;
	judge_workload(&wl, 0, c, 4, &host, &r);
	assert_true(r.tie);
	assert_true(fabs(r.ratio - 1) < 1e-9);
	assert_non_null(strstr(r.headline, "a tie within noise"));
	snprintf(want, sizeof(want), "%.2f-%.2fx across 2 rounds", 1 / q, q);
	assert_non_null(strstr(r.headline, want));
	assert_null(strstr(r.headline, "no verdict"));
	json_decref(b);
	json_decref(m);
}

/* A timed trace at its own pace: the rate is the trace's, never the
 * fastest engine's; an engine short of it does not keep up, and the
 * lower p99 among those that do wins. */
static void test_replay_paced(void **state)
{
	json_t *x = load("uniform-bufpool"), *y = load("uniform-io_uring-direct");
	struct judge_cell c[] = { { 0, JE_BUFPOOL, 0, x }, { 0, JE_URING_DIRECT, 0, y } };
	double ix = num(x, "read", "iops"), iy = num(y, "read", "iops");
	int fast = iy > ix ? JE_URING_DIRECT : JE_BUFPOOL, slow = fast == JE_BUFPOOL ? JE_URING_DIRECT : JE_BUFPOOL;
	struct judge_wl wl = { .kind = JW_JOB, .key = "pg", .name = "the 2 streams of capture.job", .by = JB_P99,
			       .replay = true, .paced = true, .rate_iops = fmax(ix, iy) * 0.99,
			       .engines = 1u << JE_BUFPOOL | 1u << JE_URING_DIRECT };
	struct judge_result r;

	(void)state;
	judge_workload(&wl, 0, c, 2, &host, &r);
	assert_true(fabs(r.rate - wl.rate_iops) < 1e-9);
	assert_true(r.e[slow].behind);
	assert_int_equal(r.winner, fast);
	assert_non_null(strstr(r.headline, "(the trace's own pace)"));
	assert_non_null(find(&r, "rate_short_pct", "does not keep up with the trace"));
	/* The other engine ran and fell short: that is the answer (only the
	 * faster keeps up, the other short by so much), not "no verdict". */
	assert_null(strstr(r.headline, "no verdict"));
	assert_non_null(strstr(r.headline, "keeps up"));
	assert_non_null(strstr(r.headline, "% short"));
	assert_false(judge_unanswered(&r));
	json_decref(x);
	json_decref(y);
}

/* vmcache's p99 well above bufpool's: one sentence says why, from
 * vmcache's own counters (its batches, its faults per miss); none when
 * its p99 is within JUDGE_POOL_TAIL of bufpool's. */
static double pool_num(json_t *d, const char *k)
{
	return json_number_value(json_object_get(json_object_get(json_object_get(
		json_array_get(json_object_get(d, "jobs"), 0), "faultline"), "pool"), k));
}

static double p99_us(json_t *d)
{
	return json_number_value(json_object_get(json_object_get(json_object_get(json_object_get(
		json_array_get(json_object_get(d, "jobs"), 0), "read"), "lat_ns"), "percentile"),
		"99.000000")) / 1000;
}

static void test_pool_tail(void **state)
{
	json_t *b = load("pool-bufpool"), *v = load("pool-vmcache");
	struct judge_cell c[] = { { 0, JE_BUFPOOL, 0, b }, { 0, JE_VMCACHE, 0, v } };
	struct judge_wl wl = { .kind = JW_JOB, .key = "mine", .name = "job 'mine'", .by = JB_IOPS,
			       .engines = 1u << JE_BUFPOOL | 1u << JE_VMCACHE };
	double pb = p99_us(b), pv = p99_us(v), batches = pool_num(v, "evict_batches");
	char want[64];
	const struct judge_sentence *s;
	struct judge_result r;

	(void)state;
	assert_true(pv > pb * JUDGE_POOL_TAIL && batches > 0);	/* what was recorded */
	judge_workload(&wl, 0, c, 2, &host, &r);
	s = find(&r, "pool_tail_ratio", NULL);
	assert_non_null(s);
	assert_true(fabs(s->value - pv / pb) < 1e-9 * s->value);
	snprintf(want, sizeof(want), "one miss in %.0f", pool_num(v, "misses") / batches);
	assert_non_null(strstr(s->text, want));
	snprintf(want, sizeof(want), "a batch of %.1f pages", pool_num(v, "evictions") / batches);
	assert_non_null(strstr(s->text, want));
	/* vmcache's evictions are madvise calls, and say so. */
	s = find(&r, "pool_hit_ratio", "vmcache");
	assert_non_null(s);
	assert_null(strstr(s->text, "none of them a TLB shootdown"));
	assert_non_null(strstr(s->text, "madvise"));
	assert_non_null(find(&r, "pool_hit_ratio", "none of them a TLB shootdown"));	/* bufpool's */
	/* The same run on both sides: no gap, nothing to explain. */
	c[1].doc = b;
	c[1].e = JE_VMCACHE;
	judge_workload(&wl, 0, c, 2, &host, &r);
	assert_null(find(&r, "pool_tail_ratio", NULL));
	json_decref(b);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_win),
		cmocka_unit_test(test_time_evidence),
		cmocka_unit_test(test_time_evidence_many_engines),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_kernel_write_share),
		cmocka_unit_test(test_pool_file_size),
		cmocka_unit_test(test_tie),
		cmocka_unit_test(test_compare_tie),
		cmocka_unit_test(test_compare_range_direction),
		cmocka_unit_test(test_single_round_threshold),
		cmocka_unit_test(test_source_unavailable),
		cmocka_unit_test(test_background),
		cmocka_unit_test(test_job_error),
		cmocka_unit_test(test_read_ahead),
		cmocka_unit_test(test_damon_fact),
		cmocka_unit_test(test_rate_p99),
		cmocka_unit_test(test_concurrency_and_depth),
		cmocka_unit_test(test_replay_untimed_winner),
		cmocka_unit_test(test_replay_untimed_tie),
		cmocka_unit_test(test_replay_paced),
		cmocka_unit_test(test_pool_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
