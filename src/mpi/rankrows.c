/*
 * rankrows.c - the merged CSV of an MPI launch; see rankrows.h.
 *
 * How a column of the all row is made, by its name (rates
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
 *   merged    latency percentiles (lat_p50_us, w_lat_p99_us,
 *             flush_lat_p99_us, ...): of the ranks' interval histograms
 *             merged, which each rank sends with its row; a percentile of
 *             the merged interval is not a function of the ranks'
 *             percentiles
 *   empty     per-job ratios (job_*_pct, pool_*_pct, time_*_pct), and any name none
 *             of these rules knows: nothing made up
 *
 * A rank's rows travel as records: the line's length and bytes, a mask
 * of the histograms that follow, and each histogram packed sparse
 * (hist_pack).
 */
#include "mpi/rankrows.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/latclock.h"
#include "mpi/ranks.h"

enum rule { R_EMPTY, R_FIRST, R_PCT, R_MAX, R_SUM, R_HOSTSUM };

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
	{ "lat_from", R_FIRST },
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

/* Any percentile-like name: lat_p50_us, w_lat_p99_us, job_x_p999_us ... */
static bool is_percentile(const char *s, size_t n)
{
	if (!ends(s, n, "_us"))
		return false;
	for (size_t i = 0; i + 2 < n; i++)
		if ((i == 0 || s[i - 1] == '_') && s[i] == 'p' && s[i + 1] >= '0' && s[i + 1] <= '9')
			return true;
	return false;
}

/* The sampler's own percentile columns: "lat_pNN_us" after "" (reads),
 * "w_" (writes) or "flush_" (flushes); NN is 50, 99, 999 (99.9) ... Sets
 * @kind (RANKROWS_LAT_*) and @pct. */
static bool sampler_percentile(const char *s, size_t n, unsigned *kind, double *pct)
{
	static const char *const pre[RANKROWS_NLAT] = { "lat_p", "w_lat_p", "flush_lat_p" };

	for (unsigned k = 0; k < RANKROWS_NLAT; k++) {
		size_t pl = strlen(pre[k]), d;
		double v = 0;

		if (!starts(s, n, pre[k]) || !ends(s, n, "_us"))
			continue;
		d = n - pl - 3;
		if (d < 2)
			return false;
		for (size_t i = 0; i < d; i++) {
			char c = s[pl + i];

			if (c < '0' || c > '9')
				return false;
			/* 50 -> 50, 999 -> 99.9, 9999 -> 99.99 */
			v += (c - '0') * pow(10.0, 1.0 - (double)i);
		}
		*kind = k;
		*pct = v;
		return true;
	}
	return false;
}

static enum rule rule_of(const char *s, size_t n)
{
	bool per_job = starts(s, n, "job_") || starts(s, n, "pool_") || starts(s, n, "time_");
	bool host_wide = starts(s, n, "psi_") || starts(s, n, "target_") || starts(s, n, "dev_");
	bool rate = ends(s, n, "_per_s") || ends(s, n, "_iops") || ends(s, n, "_mib_s");

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].name) == n && !memcmp(known[i].name, s, n))
			return known[i].rule;
	if (is_percentile(s, n))
		return R_PCT;
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
		   const struct hist *const *lat, char *out, size_t cap)
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
		if (rule == R_FIRST) {
			w = snprintf(out + len, cap - len, "%.*s", (int)first.n, first.p);
		} else if (rule == R_PCT) {
			unsigned kind;
			double pct;

			w = 0;
			if (lat && sampler_percentile(h, hn, &kind, &pct) && lat[kind] && lat[kind]->n)
				w = snprintf(out + len, cap - len, "%.*f", HIST_US_DECIMALS,
					     (double)hist_percentile(lat[kind], pct) / 1e3);
		}
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

static void write_row(struct rankrows *rr, const char *line, size_t len);

int rankrows_init(struct rankrows *rr, const char *csv_path, const char *header, int *stop,
		  struct err *e)
{
	memset(rr, 0, sizeof(*rr));
	rr->root = ranks_rank() == 0;
	rr->nranks = ranks_size();
	rr->header = header;
	rr->stop = stop;
	if (rr->root && csv_path) {
		int ret = csvout_open(&rr->csv, csv_path, e);

		if (ret)
			return ret;
		rr->have_csv = true;
	}
	return 0;
}

/* Rank 0 out of memory after the ranks agreed to run: the others would
 * wait for it in vain, so the launch ends. */
static void oom_abort(void)
{
	ranks_note(&(struct rank_note){ .kind = RANK_NOTE_ROWS_OOM });
	ranks_abort(1);
}

int rankrows_start(struct rankrows *rr, struct err *e)
{
	const char *me = ranks_host();
	size_t lens[rr->nranks > 0 ? rr->nranks : 1];
	char *all = NULL;
	int ret;

	/* Every rank's host name, once, for the host column. */
	ret = ranks_gather(me, strlen(me), &all, lens, e);
	if (ret)
		return ret;
	if (rr->root) {
		size_t off = 0;

		rr->hosts = calloc((size_t)rr->nranks, sizeof(char *));
		rr->acc = calloc(RANKROWS_NLAT + 1, sizeof(*rr->acc));
		if (!rr->hosts || !rr->acc)
			oom_abort();
		for (int r = 0; r < rr->nranks; r++) {
			rr->hosts[r] = strndup(all + off, lens[r]);
			off += lens[r];
			if (!rr->hosts[r])
				oom_abort();
		}
	}
	free(all);
	if (rr->have_csv) {
		char line[8192];
		int n = snprintf(line, sizeof(line), "%s,host,rank", rr->header);

		/* Anything stdio holds for stdout goes first (--csv=-). */
		fflush(stdout);
		write_row(rr, line, (size_t)n);
	}
	return 0;
}

static bool rows_reserve(struct rankrows *rr, size_t more)
{
	if (rr->len + more > rr->cap) {
		size_t cap = (rr->len + more) * 2;
		char *g = realloc(rr->buf, cap);

		if (!g)
			return false;
		rr->buf = g;
		rr->cap = cap;
	}
	return true;
}

void rankrows_add(void *arg, const char *line, size_t len, const struct hist *const lat[RANKROWS_NLAT])
{
	struct rankrows *rr = arg;
	uint64_t head[2] = { len, 0 };
	size_t need = sizeof(head) + len;

	for (unsigned k = 0; k < RANKROWS_NLAT; k++)
		if (lat && lat[k]) {
			head[1] |= 1u << k;
			need += hist_pack(lat[k], NULL);
		}
	if (!rows_reserve(rr, need)) {
		rr->dropped = true;
		return;
	}
	memcpy(rr->buf + rr->len, head, sizeof(head));
	memcpy(rr->buf + rr->len + sizeof(head), line, len);
	rr->len += sizeof(head) + len;
	for (unsigned k = 0; k < RANKROWS_NLAT; k++)
		if (head[1] & (1u << k))
			rr->len += hist_pack(lat[k], rr->buf + rr->len);
}

static void write_row(struct rankrows *rr, const char *line, size_t len)
{
	int ret;

	if (!rr->have_csv)
		return;
	ret = csvout_row(&rr->csv, line, len);
	if (ret == -EPIPE) {
		ranks_note(&(struct rank_note){ .kind = RANK_NOTE_CSV_PIPE });
		__atomic_store_n(rr->stop, 1, __ATOMIC_RELAXED);
	} else if (ret) {
		ranks_note(&(struct rank_note){ .kind = RANK_NOTE_CSV_FAILED, .path = rr->csv.path,
						.err = -ret });
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

/* One row record as it reached rank 0. */
struct rec {
	char *line;			/* NUL-terminated copy */
	const char *host;
	int rank;
	uint64_t mask;			/* which histograms follow */
	const char *lat[RANKROWS_NLAT];	/* each packed, in the gathered buffer */
	size_t lat_len[RANKROWS_NLAT];
	bool done;
};

/* The records of @len bytes at @p from rank @r, appended to @recs. */
static int parse_records(struct rankrows *rr, const char *p, size_t len, int r, struct rec **recs,
			 unsigned *n, unsigned *cap)
{
	while (len) {
		uint64_t head[2];
		struct rec *x;

		if (len < sizeof(head))
			return -EPROTO;
		memcpy(head, p, sizeof(head));
		p += sizeof(head);
		len -= sizeof(head);
		if (head[0] > len)
			return -EPROTO;
		if (*n == *cap) {
			unsigned c = *cap ? *cap * 2 : 64;
			struct rec *g = realloc(*recs, c * sizeof(**recs));

			if (!g)
				return -ENOMEM;
			*recs = g;
			*cap = c;
		}
		x = &(*recs)[(*n)++];
		memset(x, 0, sizeof(*x));
		x->line = strndup(p, head[0]);
		if (!x->line)
			return -ENOMEM;
		x->host = rr->hosts[r];
		x->rank = r;
		x->mask = head[1];
		p += head[0];
		len -= head[0];
		for (unsigned k = 0; k < RANKROWS_NLAT; k++) {
			size_t used;

			if (!(x->mask & (1u << k)))
				continue;
			used = hist_unpack(&rr->acc[RANKROWS_NLAT], p, len);
			if (!used)
				return -EPROTO;
			x->lat[k] = p;
			x->lat_len[k] = used;
			p += used;
			len -= used;
		}
	}
	return 0;
}

/* The all row of the records of @recs[i]'s job not yet merged. */
static void write_all_row(struct rankrows *rr, struct rec *recs, unsigned n, unsigned i, int jc)
{
	const char *rows[n], *hosts[n];
	const struct hist *lat[RANKROWS_NLAT];
	bool have[RANKROWS_NLAT];
	char line[8192];
	unsigned g = 0;
	int len;

	for (unsigned k = 0; k < RANKROWS_NLAT; k++) {
		hist_init(&rr->acc[k]);
		have[k] = true;
	}
	for (unsigned j = i; j < n; j++) {
		if (recs[j].done || !same_cell(recs[i].line, recs[j].line, (unsigned)jc))
			continue;
		recs[j].done = true;
		rows[g] = recs[j].line;
		hosts[g++] = recs[j].host;
		for (unsigned k = 0; k < RANKROWS_NLAT; k++) {
			struct hist *tmp = &rr->acc[RANKROWS_NLAT];

			if (!recs[j].lat[k]) {
				have[k] = false;
				continue;
			}
			hist_unpack(tmp, recs[j].lat[k], recs[j].lat_len[k]);
			if (tmp->n)
				hist_merge(&rr->acc[k], tmp);
		}
	}
	for (unsigned k = 0; k < RANKROWS_NLAT; k++)
		lat[k] = have[k] ? &rr->acc[k] : NULL;
	len = rankrows_merge(rr->header, g, rows, hosts, lat, line, sizeof(line) - 8);
	if (len > 0) {
		memcpy(line + len, ",,all", 5);
		write_row(rr, line, (size_t)len + 5);
	}
}

/* Rank 0: every rank's rows as they came, then one all row per job. */
static void write_exchange(struct rankrows *rr, char *all, const size_t *lens)
{
	struct rec *recs = NULL;
	unsigned n = 0, cap = 0;
	int jc = job_column(rr->header), ret = 0;
	size_t off = 0;
	char line[8192];

	for (int r = 0; r < rr->nranks && !ret; r++) {
		ret = parse_records(rr, all + off, lens[r], r, &recs, &n, &cap);
		off += lens[r];
		if (ret == -EPROTO) {
			ranks_note(&(struct rank_note){ .kind = RANK_NOTE_ROWS_DAMAGED, .rank = r });
			ret = 0;
		}
	}
	if (ret)
		oom_abort();
	rr->rows += n;
	for (unsigned i = 0; i < n; i++) {
		int len = snprintf(line, sizeof(line), "%s,%s,%d", recs[i].line, recs[i].host, recs[i].rank);

		if (len > 0 && (size_t)len < sizeof(line))
			write_row(rr, line, (size_t)len);
	}
	/* One all row per job, in the order the jobs first appear. */
	for (unsigned i = 0; i < n && jc >= 0; i++)
		if (!recs[i].done)
			write_all_row(rr, recs, n, i, jc);
	for (unsigned i = 0; i < n; i++)
		free(recs[i].line);
	free(recs);
}

int rankrows_exchange(struct rankrows *rr, int *flags, unsigned nflags, struct err *e)
{
	uint64_t t = now_ns();
	size_t lens[rr->nranks > 0 ? rr->nranks : 1];
	char *all = NULL;
	int ret;

	if (rr->dropped) {
		ranks_note(&(struct rank_note){ .kind = RANK_NOTE_ROWS_DROPPED, .rank = ranks_rank() });
		rr->dropped = false;
	}
	ret = ranks_gather(rr->buf, rr->len, &all, lens, e);
	rr->len = 0;
	if (ret)
		return ret;
	if (rr->root) {
		uint64_t w = now_ns();

		for (int r = 0; r < rr->nranks; r++)
			rr->bytes += lens[r];
		write_exchange(rr, all, lens);
		rr->ns_work += now_ns() - w;
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

	if (rr->root && st && !strcmp(st, "1") && rr->nexch) {
		const struct rank_stats stats = {
			.nranks = rr->nranks, .nexch = rr->nexch, .rows = rr->rows, .bytes = rr->bytes,
			.ns_sum = rr->ns_sum, .ns_max = rr->ns_max, .ns_work = rr->ns_work,
		};

		ranks_note(&(struct rank_note){ .kind = RANK_NOTE_STATS, .stats = &stats });
	}
	if (rr->have_csv)
		csvout_close(&rr->csv);
	for (int r = 0; rr->hosts && r < rr->nranks; r++)
		free(rr->hosts[r]);
	free(rr->hosts);
	free(rr->acc);
	free(rr->buf);
	memset(rr, 0, sizeof(*rr));
}
