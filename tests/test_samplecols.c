/*
 * test_samplecols.c - the CSV's column table (sample/samplecols.c): the
 * header is the table's names in order, each name says its unit, each
 * is in the man page's CSV COLUMNS section, a row has a cell per column
 * and no more, and the host cells kept for a sample's later rows are
 * those a row would make afresh, and made afresh when the host readings
 * differ.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sample/samplecols.h"

static void test_header_is_the_table(void **state)
{
	const char *h = samplecols_header();
	size_t off = 0;

	(void)state;
	assert_true(samplecols_n > 60);
	for (size_t i = 0; i < samplecols_n; i++) {
		size_t n = strlen(samplecols[i].name);

		assert_memory_equal(h + off, samplecols[i].name, n);
		off += n;
		assert_int_equal(h[off], i + 1 < samplecols_n ? ',' : '\0');
		off++;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(samplecols[k].name, samplecols[i].name))
				fail_msg("column %s twice", samplecols[i].name);
	}
	assert_string_equal(samplecols[0].name, "t_s");
}

static bool ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A name's suffix is its unit's: the CSV's readers go by the name. */
static void test_units_match_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < samplecols_n; i++) {
		const struct sample_col *c = &samplecols[i];
		const char *want = ends(c->name, "_per_s") || ends(c->name, "iops") ? "/s"
				 : ends(c->name, "mib_s") ? "MiB/s"
				 : ends(c->name, "_mib") ? "MiB"
				 : ends(c->name, "_pct") ? "%"
				 : ends(c->name, "_us") || ends(c->name, "_per_4k") ? "us"
				 : ends(c->name, "_ms") ? "ms"
				 : ends(c->name, "_s") ? "s" : "";

		if (strcmp(c->unit, want))
			fail_msg("%s: unit \"%s\", its name says \"%s\"", c->name, c->unit, want);
		assert_non_null(c->fill);
		assert_true(c->src < SRC_NR);
	}
}

static void test_man_page_lists_every_column(void **state)
{
	FILE *f = fopen(FIXTURES "/../../man/faultline.1", "r");
	char line[4096], *sec = NULL;
	size_t len = 0;
	bool in = false;

	(void)state;
	if (!f)
		fail_msg("%s: cannot open", FIXTURES "/../../man/faultline.1");
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, ".SH ", 4))
			in = !strncmp(line, ".SH CSV COLUMNS", 15);
		else if (in) {
			sec = realloc(sec, len + strlen(line) + 1);
			assert_non_null(sec);
			strcpy(sec + len, line);
			len += strlen(line);
		}
	}
	fclose(f);
	assert_non_null(sec);
	for (size_t i = 0; i < samplecols_n; i++)
		if (!strstr(sec, samplecols[i].name))
			fail_msg("%s is not in the man page's CSV COLUMNS", samplecols[i].name);
	free(sec);
}

/* A row of a read job at one moment, against a sampler made by hand. */
struct fixture {
	struct hist lat[3];
	struct job job;
	struct sampler_job sj;
	struct sys_snap sys, ps;
	struct sample_row r;
};

static void fixture(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned k = 0; k < 3; k++)
		hist_init(&f->lat[k]);
	snprintf(f->job.name, sizeof(f->job.name), "j");
	snprintf(f->job.ioengine, sizeof(f->job.ioengine), "psync");
	f->sj.job = &f->job;
	f->sj.nworkers = 1;
	f->sys.seq = 2;
	f->ps.seq = 1;
	f->sys.mem_ok = f->ps.mem_ok = true;
	f->sys.mem.bytes[PROCFS_MEM_CACHED] = 512ull << 20;
	f->sys.mem.present = 1u << PROCFS_MEM_CACHED;
	f->r = (struct sample_row){ .sj = &f->sj, .t0 = 1000000000ull, .hz = 100,
				    .rlat = &f->lat[0], .wlat = &f->lat[1], .slat = &f->lat[2],
				    .sys = &f->sys, .ps = &f->ps,
				    .now = 2000000000ull, .dt = 1.0, .rops = 100, .rbytes = 409600 };
}

static size_t commas(const char *p, const char *end)
{
	size_t n = 0;

	for (; p < end; p++)
		n += *p == ',';
	return n;
}

static void test_row_has_a_cell_per_column(void **state)
{
	struct fixture *f = malloc(sizeof(*f));
	char line[2048], *end;

	(void)state;
	fixture(f);
	end = samplecols_write(&f->r, NULL, line, line + sizeof(line));
	assert_int_equal(commas(line, end), samplecols_n - 1);
	*end = '\0';
	/* t_s, epoch_ms, dt_s, job, engine, rw, threads, ramp, iops, mib_s */
	assert_memory_equal(line, "1.000,1000,1.000,j,psync,read,1,0,100.0,0.391,", 46);
	free(f);
}

static void test_host_cells_kept_only_for_their_readings(void **state)
{
	struct fixture *f = malloc(sizeof(*f));
	struct samplecols_cache *hc = samplecols_cache_new();
	char a[2048], b[2048], c[2048], *ea, *eb, *ec;

	(void)state;
	fixture(f);
	ea = samplecols_write(&f->r, NULL, a, a + sizeof(a));
	eb = samplecols_write(&f->r, hc, b, b + sizeof(b));
	assert_int_equal(ea - a, eb - b);
	assert_memory_equal(a, b, (size_t)(ea - a));
	/* Another host reading under the same seq would be a bug the
	 * cache hides: a new reading has a new seq, and is formatted anew. */
	f->sys.mem.bytes[PROCFS_MEM_CACHED] = 1024ull << 20;
	f->sys.seq = 3;
	ec = samplecols_write(&f->r, hc, c, c + sizeof(c));
	*ec = '\0';
	assert_non_null(strstr(c, ",1024.0,"));
	*eb = '\0';
	assert_non_null(strstr(b, ",512.0,"));
	samplecols_cache_free(hc);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_is_the_table),
		cmocka_unit_test(test_units_match_names),
		cmocka_unit_test(test_man_page_lists_every_column),
		cmocka_unit_test(test_row_has_a_cell_per_column),
		cmocka_unit_test(test_host_cells_kept_only_for_their_readings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
