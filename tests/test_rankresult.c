/*
 * test_rankresult.c - what rank 0 makes of the ranks' results:
 * the aggregate's percentiles are those of one histogram fed every
 * rank's samples (not an average of the ranks' percentiles), histograms
 * survive packing for the trip to rank 0, counts add up, an error is
 * named by its rank and host, a lost rank is named and nothing made up
 * for it; and the CSV's all row, column by name.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/histogram.h"
#include "mpi/rankresult.h"
#include "mpi/rankrows.h"

#define NR 3

static uint64_t xs = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

/* A latency in ns: a log-uniform spread over [lo, lo * 2^spread). */
static uint64_t lat(uint64_t lo, unsigned spread)
{
	double f = (double)(rnd() % 1000000) / 1e6;

	return (uint64_t)((double)lo * pow(2.0, f * spread));
}

/* The histogram as it reaches rank 0: packed, sent, unpacked. */
static void through_the_wire(struct hist *out, const struct hist *in)
{
	size_t n = hist_pack(in, NULL);
	unsigned char *buf = malloc(n);

	assert_non_null(buf);
	assert_int_equal(hist_pack(in, buf), n);
	assert_int_equal(hist_unpack(out, buf, n), n);
	free(buf);
}

static void test_merged_percentiles(void **state)
{
	static struct job_result rank[NR], sent[NR], agg;
	static struct hist all;
	const struct job_result *in[NR];
	const char *hosts[NR] = { "a", "b", "b" };
	const int ranks[NR] = { 0, 1, 2 };
	/* Three ranks that differ a lot: a fast one, a slow one, one with a
	 * long tail, and unequal sample counts. */
	const uint64_t lo[NR] = { 2000, 90000, 5000 };
	const unsigned spread[NR] = { 2, 1, 12 };
	const unsigned count[NR] = { 200000, 30000, 70000 };
	const double pct[] = { 1, 10, 50, 90, 99, 99.9, 99.99, 100 };
	double avg99 = 0;

	(void)state;
	hist_init(&all);
	for (int r = 0; r < NR; r++) {
		hist_init(&rank[r].lat);
		rank[r].lat_ok = true;
		for (unsigned i = 0; i < count[r]; i++) {
			uint64_t v = lat(lo[r], spread[r]);

			hist_add(&rank[r].lat, v);
			hist_add(&all, v);
		}
		sent[r] = rank[r];
		through_the_wire(&sent[r].lat, &rank[r].lat);
		in[r] = &sent[r];
		avg99 += (double)hist_percentile(&rank[r].lat, 99) / NR;
	}
	rankresult_merge_job(&agg, NULL, in, ranks, hosts, NR);
	assert_true(agg.lat_ok);
	assert_int_equal(agg.lat.n, all.n);
	assert_int_equal(agg.lat.sum, all.sum);
	assert_int_equal(agg.lat.min, all.min);
	assert_int_equal(agg.lat.max, all.max);
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
		assert_int_equal(hist_percentile(&agg.lat, pct[i]), hist_percentile(&all, pct[i]));
	assert_true(hist_mean(&agg.lat) == hist_mean(&all));
	/* What averaging the ranks' percentiles would have said instead is
	 * far off here: the merge is doing real work. */
	assert_true(fabs(avg99 - (double)hist_percentile(&all, 99)) > 0.1 * (double)hist_percentile(&all, 99));
}

static void test_pack_rejects_damage(void **state)
{
	static struct hist h, out;
	unsigned char *buf;
	size_t n;

	(void)state;
	hist_init(&h);
	for (int i = 0; i < 1000; i++)
		hist_add(&h, 100 + (uint64_t)i * 37);
	n = hist_pack(&h, NULL);
	buf = malloc(n);
	assert_non_null(buf);
	hist_pack(&h, buf);
	assert_int_equal(hist_unpack(&out, buf, n - 1), 0);	/* cut short */
	assert_int_equal(hist_unpack(&out, buf, 7), 0);
	assert_int_equal(hist_unpack(&out, buf, n), n);
	assert_memory_equal(out.count, h.count, sizeof(h.count));
	/* An empty histogram is 40 bytes, not 37 KiB. */
	hist_init(&h);
	assert_int_equal(hist_pack(&h, NULL), 5 * sizeof(uint64_t));
	free(buf);
}

static void test_merge_counts_and_error(void **state)
{
	static struct job_result r[NR], agg;
	static struct write_result w[NR], aw;
	const struct job_result *in[NR] = { &r[0], &r[1], &r[2] };
	const char *hosts[NR] = { "n1", "n2", "n3" };
	const int ranks[NR] = { 4, 5, 6 };

	(void)state;
	for (int i = 0; i < NR; i++) {
		hist_init(&r[i].lat);
		hist_init(&w[i].lat);
		hist_init(&w[i].sync_lat);
		r[i].lat_ok = r[i].faults_ok = true;
		r[i].nthreads = 2;
		r[i].rops = 1000u * (unsigned)(i + 1);
		r[i].rbytes = r[i].rops * 4096;
		r[i].runtime_ns = 5000000000ull + (uint64_t)i * 1000;
		r[i].majflt = 1;
		r[i].w = &w[i];
		w[i].ops = 10;
		w[i].syncs = 1;
	}
	hist_add(&r[0].lat, 5000);
	hist_add(&r[2].lat, 7000);
	/* rank 5 saw nothing: results carry an empty histogram's min as 0,
	 * which must not become the aggregate's minimum */
	r[1].lat.min = 0;
	r[1].error = EIO;
	snprintf(r[1].errmsg, sizeof(r[1].errmsg), "/data/f: offset 4096: read: Input/output error");
	rankresult_merge_job(&agg, &aw, in, ranks, hosts, NR);
	assert_int_equal(agg.nthreads, 6);
	assert_int_equal(agg.rops, 6000);
	assert_int_equal(agg.rbytes, 6000 * 4096);
	assert_int_equal(agg.runtime_ns, 5000000000ull + 2000);
	assert_int_equal(agg.majflt, 3);
	assert_int_equal(agg.lat.n, 2);
	assert_int_equal(agg.lat.min, 5000);
	assert_int_equal(agg.lat.max, 7000);
	assert_int_equal(agg.error, EIO);
	assert_string_equal(agg.errmsg, "rank 5 (n2): /data/f: offset 4096: read: Input/output error");
	assert_ptr_equal(agg.w, &aw);
	assert_int_equal(aw.ops, 30);
	assert_int_equal(aw.syncs, 3);
	/* one rank's faults unreadable: the sum would be wrong */
	r[2].faults_ok = false;
	rankresult_merge_job(&agg, NULL, in, ranks, hosts, NR);
	assert_false(agg.faults_ok);
	assert_null(agg.w);
}

/* A rank rank 0 stopped hearing from: named in the JSON (ranks[].lost,
 * lost_ranks[]) and in the summary, with nothing made up for it. */
static void test_lost_rank_named(void **state)
{
	char *hosts[NR] = { "n1", "n2", "n3" }, *normal[NR] = { "rank 0's summary\n", "rank 1's summary\n", NULL };
	json_t *docs[NR] = { NULL, NULL, NULL }, *root, *fl, *lost, *ranks;
	bool gone[NR] = { false, false, true };
	struct rank_outputs o = { .nranks = NR, .hosts = hosts, .lost = gone, .normal = normal, .json = docs };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	root = rankout_json(&o);
	assert_non_null(root);
	fl = json_object_get(root, "faultline");
	lost = json_object_get(fl, "lost_ranks");
	ranks = json_object_get(fl, "ranks");
	assert_int_equal(json_array_size(lost), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(lost, 0), "rank")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(lost, 0), "host")), "n3");
	assert_int_equal(json_array_size(ranks), NR);
	for (int r = 0; r < NR; r++)
		assert_int_equal(json_is_true(json_object_get(json_array_get(ranks, r), "lost")), r == 2);
	json_decref(root);
	gone[2] = false;
	root = rankout_json(&o);
	assert_int_equal(json_array_size(json_object_get(json_object_get(root, "faultline"), "lost_ranks")), 0);
	json_decref(root);
	gone[2] = true;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	rankout_report(f, &o);
	fclose(f);
	assert_non_null(strstr(text, "==== rank 2 of 3, on n3 ====\n(lost: "));
	assert_non_null(strstr(text, "rank 1's summary"));
	assert_non_null(strstr(text, "==== all 3 ranks but the 1 lost: "));
	free(text);
}

/* The exchanges' notes reach stderr through out/rankout.c in the words
 * users and tests/e2e/mpi-hosts.sh look for: a lost rank named with its
 * host, a CSV failure with its file and reason. */
static void test_notes(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	rankout_note(f, &(struct rank_note){ .kind = RANK_NOTE_LOST, .rank = 2, .host = "n3",
					     .what = "gathering sizes", .secs = 30 });
	rankout_note(f, &(struct rank_note){ .kind = RANK_NOTE_CSV_FAILED, .path = "x.csv",
					     .err = ENOSPC });
	/* no exchange made: nothing to say */
	rankout_note(f, &(struct rank_note){ .kind = RANK_NOTE_STATS,
					     .stats = &(struct rank_stats){ .nranks = 2 } });
	fclose(f);
	assert_string_equal(text, "faultline: rank 2 (n3) lost: no answer within 30 s while gathering "
			    "sizes; the run ends with what the other ranks have\n"
			    "faultline: warning: writing the CSV x.csv failed: No space left on device; "
			    "it ends at the last whole row\n");
	free(text);
}

/* The cell of column @name in @line under @header. */
static void cell(const char *header, const char *line, const char *name, char *out, size_t cap)
{
	unsigned col = 0;
	const char *h = header, *p = line;
	size_t n = strlen(name);

	while (!(strncmp(h, name, n) == 0 && (h[n] == ',' || !h[n]))) {
		h = strchr(h, ',');
		assert_non_null(h);
		h++;
		col++;
	}
	while (col--) {
		p = strchr(p, ',');
		assert_non_null(p);
		p++;
	}
	snprintf(out, cap, "%.*s", (int)strcspn(p, ","), p);
}

static void test_all_row_by_name(void **state)
{
	/* Columns out of the sampler's order, and columns other branches
	 * may add: the all row must follow names, never positions. Ranks'
	 * own percentile cells are ignored (1 here): the all row's come
	 * from the merged interval histogram. */
	const char *header = "rw,job,t_s,iops,threads,tlb_shootdowns_per_s,lat_p99_us,lat_max_us,"
			     "page_cache_mib,cgroup_mib,pool_hit_pct,job_tlb_ipi_per_s,psi_some_avg10,"
			     "target_read_mib_s,mystery,cpu_user_pct,dt_s,w_lat_p99_us,lat_p999_us,"
			     "job_x_p50_us";
	const char *rows[NR] = {
		"randread,r,1.002,100.5,1,10.0,50.00,90.00,700.0,10.0,90.0,5.0,1.50,3.000,x,20.0,1.000,,1,1",
		"randread,r,1.003,200.25,2,12.0,70.00,95.50,710.0,,80.0,7.0,2.50,4.000,y,30.0,1.001,,1,1",
		"randread,r,1.001,300.0,1,12.0,60.00,80.00,710.0,30.0,85.0,9.0,2.50,4.000,z,25.5,0.999,,1,1",
	};
	static struct hist rd;
	const struct hist *lat[RANKROWS_NLAT] = { &rd, NULL, NULL };
	char p99[32], p999[32];
	const char *hosts[NR] = { "h1", "h2", "h2" };
	const struct {
		const char *name, *want;
	} want[] = {
		{ "rw", "randread" },		{ "job", "r" },
		{ "t_s", "1.003" },		{ "dt_s", "1.001" },
		{ "iops", "600.75" },		{ "threads", "4" },
		/* host-wide rate: once per host (h1 10 + h2 12) */
		{ "tlb_shootdowns_per_s", "22.0" },
		{ "lat_max_us", "95.50" },
		{ "page_cache_mib", "710.0" },
		/* a per-job sum with one rank's cell unread: empty, not 40 */
		{ "cgroup_mib", "" },
		{ "pool_hit_pct", "" },		{ "job_tlb_ipi_per_s", "21.0" },
		{ "psi_some_avg10", "2.50" },	{ "target_read_mib_s", "7.000" },
		{ "mystery", "" },		{ "cpu_user_pct", "30.0" },
		/* percentiles: of the merged interval histogram, or empty */
		{ "lat_p99_us", p99 },		{ "lat_p999_us", p999 },
		{ "w_lat_p99_us", "" },		{ "job_x_p50_us", "" },
	};
	char out[1024], got[64];
	int n;

	(void)state;
	hist_init(&rd);
	for (uint64_t v = 1000; v <= 2000000; v += 997)
		hist_add(&rd, v);
	snprintf(p99, sizeof(p99), "%.*f", HIST_US_DECIMALS, (double)hist_percentile(&rd, 99) / 1e3);
	snprintf(p999, sizeof(p999), "%.*f", HIST_US_DECIMALS, (double)hist_percentile(&rd, 99.9) / 1e3);
	assert_string_not_equal(p99, p999);
	n = rankrows_merge(header, NR, rows, hosts, lat, out, sizeof(out));
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(out));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		cell(header, out, want[i].name, got, sizeof(got));
		if (strcmp(got, want[i].want))
			fail_msg("column %s: '%s', wanted '%s' (row: %s)", want[i].name, got, want[i].want, out);
	}
	assert_int_equal(rankrows_merge(header, NR, rows, hosts, lat, out, 10), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merged_percentiles),
		cmocka_unit_test(test_pack_rejects_damage),
		cmocka_unit_test(test_merge_counts_and_error),
		cmocka_unit_test(test_all_row_by_name),
		cmocka_unit_test(test_lost_rank_named),
		cmocka_unit_test(test_notes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
