/*
 * rankrows.c - the merged CSV of an MPI launch; see rankrows.h.
 *
 * How a column of the all row is made, by its name (SPEC 14: rates
 * summed, host-wide gauges their maximum; documented in faultline(1),
 * "Many hosts"):
 *   first     job, engine, rw: the first rank's value
 *   max       t_s, epoch_ms, dt_s, ramp, lat_max_us and every *_max_us,
 *             host-wide gauges (*_pct, *_mib, psi_*): the highest rank
 *   sum       threads and per-job rates (iops, mib_s, faults, writes,
 *             flushes, the CPU probe; any other *_per_s, *_iops,
 *             *_mib_s), per-job sizes (cgroup_mib, job_*_mib,
 *             pool_*_mib): empty if any rank's cell is empty, as a sum
 *             without it would be wrong
 *   hostsum   host-wide rates (TLB shootdowns, reclaim, device traffic,
 *             dev_*, target_*, psi_* rates): summed over hosts, one rank
 *             per host, since ranks on one host see the same counters
 *   empty     latency percentiles (a percentile of the merged interval is
 *             not a function of the ranks' percentiles) and per-job
 *             ratios (job_*_pct, pool_*_pct), and any name none of these
 *             rules knows: nothing made up
 */
#include "rankrows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latclock.h"
#include "ranks.h"

enum rule { R_EMPTY, R_FIRST, R_MAX, R_SUM, R_HOSTSUM };

static const struct {
	const char *name;
	enum rule rule;
} known[] = {
	{ "t_s", R_MAX },		{ "epoch_ms", R_MAX },		{ "dt_s", R_MAX },
	{ "job", R_FIRST },		{ "engine", R_FIRST },		{ "rw", R_FIRST },
	{ "threads", R_SUM },		{ "ramp", R_MAX },		{ "iops", R_SUM },
	{ "mib_s", R_SUM },		{ "lat_max_us", R_MAX },	{ "majflt_per_s", R_SUM },
	{ "minflt_per_s", R_SUM },	{ "tlb_shootdowns_per_s", R_HOSTSUM },
	{ "kswapd_cpu_pct", R_MAX },	{ "pgscan_per_s", R_HOSTSUM },	{ "pgsteal_per_s", R_HOSTSUM },
	{ "page_cache_mib", R_MAX },	{ "dirty_mib", R_MAX },		{ "cgroup_mib", R_SUM },
	{ "dev_read_mib_s", R_HOSTSUM }, { "dev_read_iops", R_HOSTSUM },
	{ "cpu_user_pct", R_MAX },	{ "cpu_sys_pct", R_MAX },	{ "cpu_iowait_pct", R_MAX },
	{ "cpu_probe_per_s", R_SUM },	{ "w_iops", R_SUM },		{ "w_mib_s", R_SUM },
	{ "flush_per_s", R_SUM },	{ "writeback_mib", R_MAX },
	{ "dev_write_mib_s", R_HOSTSUM }, { "dev_write_iops", R_HOSTSUM },
};

static bool starts(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(s, p, k);
}

static bool ends(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(s + n - k, p, k);
}

/* lat_p50_us, w_lat_p99_us, flush_lat_p99_us, job_x_p999_us ... */
static bool is_percentile(const char *s, size_t n)
{
	if (!ends(s, n, "_us"))
		return false;
	for (size_t i = 0; i + 2 < n; i++)
		if ((i == 0 || s[i - 1] == '_') && s[i] == 'p' && s[i + 1] >= '0' && s[i + 1] <= '9')
			return true;
	return false;
}

static enum rule rule_of(const char *s, size_t n)
{
	bool per_job = starts(s, n, "job_") || starts(s, n, "pool_");
	bool host_wide = starts(s, n, "psi_") || starts(s, n, "target_") || starts(s, n, "dev_");
	bool rate = ends(s, n, "_per_s") || ends(s, n, "_iops") || ends(s, n, "_mib_s");

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].name) == n && !memcmp(known[i].name, s, n))
			return known[i].rule;
	if (is_percentile(s, n))
		return R_EMPTY;
	if (ends(s, n, "_max_us"))
		return R_MAX;
	if (rate)
		return host_wide ? R_HOSTSUM : R_SUM;
	if (ends(s, n, "_pct"))
		return per_job ? R_EMPTY : R_MAX;
	if (ends(s, n, "_mib"))
		return per_job ? R_SUM : R_MAX;
	if (starts(s, n, "psi_"))
		return R_MAX;
	return R_EMPTY;
}

struct cell {
	const char *p;
	size_t n;
};

/* The @i-th comma-separated cell of @line (one line, no newline). */
static struct cell cell_at(const char *line, unsigned i)
{
	const char *p = line;
	struct cell c;

	while (i--) {
		p = strchr(p, ',');
		if (!p)
			return (struct cell){ "", 0 };
		p++;
	}
	c.p = p;
	c.n = strcspn(p, ",\n");
	return c;
}

/* Digits after the point, so the all row keeps the ranks' precision. */
static int decimals(struct cell c)
{
	const char *dot = memchr(c.p, '.', c.n);

	return dot ? (int)(c.p + c.n - dot - 1) : 0;
}

static double num(struct cell c)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.*s", (int)(c.n < sizeof(buf) - 1 ? c.n : sizeof(buf) - 1), c.p);
	return strtod(buf, NULL);
}

int rankrows_merge(const char *header, unsigned n, const char *const *rows, const char *const *hosts,
		   char *out, size_t cap)
{
	size_t len = 0;
	unsigned col = 0;

	for (const char *h = header; ; col++) {
		size_t hn = strcspn(h, ",");
		enum rule rule = rule_of(h, hn);
		bool ok = n > 0, any = false;
		double v = 0;
		int prec = 0, w;
		struct cell first = cell_at(rows[0], col);

		for (unsigned i = 0; i < n && rule >= R_MAX; i++) {
			struct cell c = cell_at(rows[i], col);
			bool seen_host = false;

			if (rule == R_HOSTSUM)
				for (unsigned k = 0; k < i && !seen_host; k++)
					seen_host = !strcmp(hosts[k], hosts[i]);
			if (seen_host)
				continue;
			if (!c.n) {
				if (rule != R_MAX)
					ok = false;
				continue;
			}
			if (decimals(c) > prec)
				prec = decimals(c);
			if (rule == R_MAX)
				v = any && v > num(c) ? v : num(c);
			else
				v += num(c);
			any = true;
		}
		if (col)
			w = snprintf(out + len, cap - len, ",");
		else
			w = 0;
		if (w < 0 || (size_t)w >= cap - len)
			return -ENOSPC;
		len += (size_t)w;
		if (rule == R_FIRST)
			w = snprintf(out + len, cap - len, "%.*s", (int)first.n, first.p);
		else if (rule != R_EMPTY && ok && any)
			w = snprintf(out + len, cap - len, "%.*f", prec, v);
		else
			w = 0;
		if (w < 0 || (size_t)w >= cap - len)
			return -ENOSPC;
		len += (size_t)w;
		h += hn;
		if (!*h)
			break;
		h++;
	}
	return (int)len;
}

static void put_host(struct rankrows *rr, int r, const char *h, size_t n)
{
	rr->hosts[r] = strndup(h, n);
}

int rankrows_open(struct rankrows *rr, const char *csv_path, const char *header, int *stop,
		  struct err *e)
{
	const char *me = ranks_host();
	size_t lens[ranks_size()];
	char *all = NULL;
	int ret;

	memset(rr, 0, sizeof(*rr));
	rr->root = ranks_rank() == 0;
	rr->nranks = ranks_size();
	rr->header = header;
	rr->stop = stop;
	/* Every rank's host name, once, for the host column. */
	ret = ranks_gather(me, strlen(me), &all, lens, e);
	if (ret)
		return ret;
	if (rr->root) {
		size_t off = 0;

		rr->hosts = calloc((size_t)rr->nranks, sizeof(char *));
		if (!rr->hosts) {
			free(all);
			return err_set(e, ENOMEM, "out of memory");
		}
		for (int r = 0; r < rr->nranks; r++) {
			put_host(rr, r, all + off, lens[r]);
			off += lens[r];
			if (!rr->hosts[r]) {
				free(all);
				return err_set(e, ENOMEM, "out of memory");
			}
		}
	}
	free(all);
	if (rr->root && csv_path) {
		char line[8192];
		int n = snprintf(line, sizeof(line), "%s,host,rank", header);

		ret = csvout_open(&rr->csv, csv_path, e);
		if (ret)
			return ret;
		rr->have_csv = true;
		/* Anything stdio holds for stdout goes first (--csv=-). */
		fflush(stdout);
		ret = csvout_row(&rr->csv, line, (size_t)n);
		if (ret)
			return err_set(e, -ret, "--csv=%s: %s", csv_path, strerror(-ret));
	}
	return 0;
}

void rankrows_add(void *arg, const char *line, size_t len)
{
	struct rankrows *rr = arg;

	if (rr->len + len + 1 > rr->cap) {
		size_t cap = (rr->len + len + 1) * 2;
		char *g = realloc(rr->buf, cap);

		if (!g) {
			rr->dropped = true;
			return;
		}
		rr->buf = g;
		rr->cap = cap;
	}
	memcpy(rr->buf + rr->len, line, len);
	rr->len += len;
	rr->buf[rr->len++] = '\n';
}

static void write_row(struct rankrows *rr, const char *line, size_t len)
{
	int ret;

	if (!rr->have_csv)
		return;
	ret = csvout_row(&rr->csv, line, len);
	if (ret == -EPIPE) {
		fprintf(stderr, "faultline: the CSV reader closed the pipe; stopping the run\n");
		__atomic_store_n(rr->stop, 1, __ATOMIC_RELAXED);
	} else if (ret) {
		fprintf(stderr, "faultline: warning: writing the CSV %s failed: %s; it ends at the last whole row\n",
			rr->csv.path, strerror(-ret));
	}
}

/* Column @col of @line as a string key (the job name). */
static bool same_cell(const char *a, const char *b, unsigned col)
{
	struct cell x = cell_at(a, col), y = cell_at(b, col);

	return x.n == y.n && !memcmp(x.p, y.p, x.n);
}

static int job_column(const char *header)
{
	unsigned col = 0;

	for (const char *h = header; *h; col++) {
		size_t n = strcspn(h, ",");

		if (n == 3 && !memcmp(h, "job", 3))
			return (int)col;
		h += n + (h[n] == ',');
	}
	return -1;
}

/* Rank 0: every rank's rows as they came, then one all row per job. */
static int write_exchange(struct rankrows *rr, char *all, const size_t *lens, struct err *e)
{
	unsigned nrows = 0, k = 0;
	const char **rows, **hosts;
	bool *done;
	char line[8192];
	int jc = job_column(rr->header);
	size_t off = 0;

	for (int r = 0; r < rr->nranks; r++) {
		for (size_t i = 0; i < lens[r]; i++)
			if (all[off + i] == '\n')
				nrows++;
		off += lens[r];
	}
	rr->rows += nrows;
	if (!nrows)
		return 0;
	rows = calloc(nrows, sizeof(*rows));
	hosts = calloc(nrows, sizeof(*hosts));
	done = calloc(nrows, sizeof(*done));
	if (!rows || !hosts || !done) {
		free(rows);
		free(hosts);
		free(done);
		return err_set(e, ENOMEM, "out of memory");
	}
	off = 0;
	for (int r = 0; r < rr->nranks; r++) {
		char *p = all + off, *end = all + off + lens[r];

		while (p < end) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			int n;

			*nl = '\0';
			rows[k] = p;
			hosts[k] = rr->hosts[r];
			k++;
			n = snprintf(line, sizeof(line), "%s,%s,%d", p, rr->hosts[r], r);
			if (n > 0 && (size_t)n < sizeof(line))
				write_row(rr, line, (size_t)n);
			p = nl + 1;
		}
		off += lens[r];
	}
	/* One all row per job, in the order the jobs first appear. */
	for (unsigned i = 0; i < nrows && jc >= 0; i++) {
		const char *grp[nrows], *gh[nrows];
		unsigned g = 0;
		int n;

		if (done[i])
			continue;
		for (unsigned j = i; j < nrows; j++) {
			if (done[j] || !same_cell(rows[i], rows[j], (unsigned)jc))
				continue;
			done[j] = true;
			grp[g] = rows[j];
			gh[g++] = hosts[j];
		}
		n = rankrows_merge(rr->header, g, grp, gh, line, sizeof(line) - 16);
		if (n > 0) {
			memcpy(line + n, ",,all", 5);
			write_row(rr, line, (size_t)n + 5);
		}
	}
	free(rows);
	free(hosts);
	free(done);
	return 0;
}

int rankrows_exchange(struct rankrows *rr, int *flags, unsigned nflags, struct err *e)
{
	uint64_t t = now_ns();
	size_t lens[rr->nranks > 0 ? rr->nranks : 1];
	char *all = NULL;
	int ret;

	if (rr->dropped) {
		fprintf(stderr, "faultline: rank %d: out of memory holding CSV rows; some are missing\n",
			ranks_rank());
		rr->dropped = false;
	}
	ret = ranks_gather(rr->buf, rr->len, &all, lens, e);
	rr->len = 0;
	if (ret)
		return ret;
	if (rr->root) {
		for (int r = 0; r < rr->nranks; r++)
			rr->bytes += lens[r];
		ret = write_exchange(rr, all, lens, e);
	}
	free(all);
	if (!ret)
		ret = ranks_max(flags, nflags, e);
	if (!ret && rr->root) {
		uint64_t d = now_ns() - t;

		rr->nexch++;
		rr->ns_sum += d;
		if (d > rr->ns_max)
			rr->ns_max = d;
	}
	return ret;
}

int rankrows_csv_error(const struct rankrows *rr)
{
	return rr->have_csv && rr->csv.broken ? rr->csv.error : 0;
}

void rankrows_close(struct rankrows *rr)
{
	const char *st = getenv("FAULTLINE_MPI_STATS");

	if (rr->root && st && !strcmp(st, "1") && rr->nexch)
		fprintf(stderr, "faultline: mpi: %d ranks, %llu exchanges: %.1f rows and %.0f bytes each, "
			"%.3f ms mean, %.3f ms max at rank 0\n", rr->nranks,
			(unsigned long long)rr->nexch, (double)rr->rows / (double)rr->nexch,
			(double)rr->bytes / (double)rr->nexch,
			(double)rr->ns_sum / (double)rr->nexch / 1e6, (double)rr->ns_max / 1e6);
	if (rr->have_csv)
		csvout_close(&rr->csv);
	for (int r = 0; rr->hosts && r < rr->nranks; r++)
		free(rr->hosts[r]);
	free(rr->hosts);
	free(rr->buf);
	memset(rr, 0, sizeof(*rr));
}
