/*
 * damon.c - DAMON's kdamonds and schemes, read from sysfs; see damon.h.
 */
#include "telemetry/damon.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/latclock.h"
#include "telemetry/procfs.h"

#define ADMIN "kernel/mm/damon/admin/kdamonds"

/*
 * A kdamond's state and pid files answer EBUSY while another process
 * holds DAMON's sysfs lock, and a write to a state file holds it until
 * the kdamond has handled the command: another faultline's (or damo's)
 * update_schemes_stats holds it for up to a sampling interval (measured
 * here: 500 ms, with sample_us 500000, every read of state and pid
 * refused meanwhile). A busy file is asked again every 5 ms until
 * DAMON_BUSY_WAIT_MS after the probe began; past that it is unread.
 */
#define DAMON_BUSY_WAIT_MS 3000

struct probe {
	const char *sysroot;
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC */
};

static bool wait_busy(const struct probe *p)
{
	struct timespec t = { 0, 5 * 1000 * 1000 };

	if (now_ns() >= p->deadline_ns)
		return false;
	nanosleep(&t, NULL);
	return true;
}

/* <sysroot>/<fmt...> as text, trailing blanks removed; 0 or -errno. */
static int vread_text(const struct probe *p, char *buf, size_t cap, const char *fmt, va_list ap)
{
	char rel[256];
	int n = vsnprintf(rel, sizeof(rel), fmt, ap), ret;

	if (n < 0 || (size_t)n >= sizeof(rel))
		return -ENAMETOOLONG;
	do
		ret = procfs_read_small(p->sysroot, rel, buf, cap);
	while (ret == -EBUSY && wait_busy(p));
	return ret;
}

static int read_text(const struct probe *p, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int read_text(const struct probe *p, char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vread_text(p, buf, cap, fmt, ap);
	va_end(ap);
	return ret;
}

/* An unsigned decimal file; 0 or -errno (-EBADMSG: not a number). */
static int read_u64(const struct probe *pr, uint64_t *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int read_u64(const struct probe *pr, uint64_t *v, const char *fmt, ...)
{
	char buf[32];
	const char *p = buf;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vread_text(pr, buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (ret)
		return ret;
	ret = procfs_scan_u64(&p, buf + strlen(buf), v);
	return ret ? ret : *p ? -EBADMSG : 0;
}

#define CTX ADMIN "/%u/contexts/%u"
#define SCHEME CTX "/schemes/%u"

static void read_scheme(const struct probe *p, unsigned k, unsigned c, unsigned i, struct damon_scheme *s)
{
	uint64_t v;

	if (read_text(p, s->action, sizeof(s->action), SCHEME "/action", k, c, i))
		snprintf(s->action, sizeof(s->action), "?");
	if (read_u64(p, &v, SCHEME "/access_pattern/age/min", k, c, i) == 0)
		s->age_min = v;
	if (read_u64(p, &v, SCHEME "/access_pattern/nr_accesses/max", k, c, i) == 0)
		s->nr_accesses_max = v;
	if (read_u64(p, &v, SCHEME "/quotas/bytes", k, c, i) == 0)
		s->quota_bytes = v;
	if (read_u64(p, &v, SCHEME "/quotas/ms", k, c, i) == 0)
		s->quota_ms = v;
	if (read_u64(p, &v, SCHEME "/quotas/reset_interval_ms", k, c, i) == 0)
		s->quota_reset_ms = v;
	s->stats_ok = read_u64(p, &s->nr_applied, SCHEME "/stats/nr_applied", k, c, i) == 0 &&
		      read_u64(p, &s->sz_applied, SCHEME "/stats/sz_applied", k, c, i) == 0;
}

static void read_context(const struct probe *p, unsigned k, unsigned c, struct damon_context *x)
{
	uint64_t n = 0;

	if (read_text(p, x->operations, sizeof(x->operations), CTX "/operations", k, c))
		snprintf(x->operations, sizeof(x->operations), "?");
	x->intervals_ok = read_u64(p, &x->sample_us, CTX "/monitoring_attrs/intervals/sample_us", k, c) == 0 &&
			  read_u64(p, &x->aggr_us, CTX "/monitoring_attrs/intervals/aggr_us", k, c) == 0;
	if (read_u64(p, &n, CTX "/schemes/nr_schemes", k, c))
		n = 0;
	x->nschemes = n < DAMON_MAX_SCHEMES ? (unsigned)n : DAMON_MAX_SCHEMES;
	for (unsigned i = 0; i < x->nschemes; i++)
		read_scheme(p, k, c, i, &x->s[i]);
}

/* The kdamond's stats files are snapshots it writes when asked. */
static bool refresh_stats(const struct probe *p, unsigned k)
{
	char path[512];
	static const char cmd[] = "update_schemes_stats";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/" ADMIN "/%u/state", p->sysroot, k);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	do
		n = write(fd, cmd, sizeof(cmd) - 1);
	while (n < 0 && errno == EBUSY && wait_busy(p));
	close(fd);
	return n == (ssize_t)(sizeof(cmd) - 1);
}

static bool module_on(const struct probe *p, const char *name)
{
	char buf[8];

	return read_text(p, buf, sizeof(buf), "module/%s/parameters/enabled", name) == 0 && buf[0] == 'Y';
}

int damon_probe(const char *sysroot, bool refresh, struct damon_info *d)
{
	struct probe pr = { sysroot, now_ns() + DAMON_BUSY_WAIT_MS * 1000000ull }, *p = &pr;
	uint64_t n;
	int ret;

	memset(d, 0, sizeof(*d));
	d->reclaim_module = module_on(p, "damon_reclaim");
	d->lru_sort_module = module_on(p, "damon_lru_sort");
	ret = read_u64(p, &n, ADMIN "/nr_kdamonds");
	if (ret == -EACCES || ret == -EPERM)
		return -EACCES;		/* the admin files are root's alone */
	if (ret)
		return d->reclaim_module || d->lru_sort_module ? 0 : -ENOENT;
	d->sysfs = true;
	d->nkdamonds = n < DAMON_MAX_KDAMONDS ? (unsigned)n : DAMON_MAX_KDAMONDS;
	for (unsigned k = 0; k < d->nkdamonds; k++) {
		struct damon_kdamond *kd = &d->k[k];
		char buf[32];

		kd->index = k;
		kd->pid = -1;
		kd->state_ok = read_text(p, buf, sizeof(buf), ADMIN "/%u/state", k) == 0;
		kd->on = kd->state_ok && !strcmp(buf, "on");
		if (read_text(p, buf, sizeof(buf), ADMIN "/%u/pid", k) == 0)
			kd->pid = strtol(buf, NULL, 10);
		if (kd->on && refresh && refresh_stats(p, k))
			d->stats_refreshed = true;
		if (read_u64(p, &n, ADMIN "/%u/contexts/nr_contexts", k))
			n = 0;
		kd->ncontexts = n < DAMON_MAX_CONTEXTS ? (unsigned)n : DAMON_MAX_CONTEXTS;
		for (unsigned c = 0; c < kd->ncontexts; c++)
			read_context(p, k, c, &kd->c[c]);
	}
	return 0;
}

/* A running kdamond's paddr scheme that pages out: the ones that
 * take page cache with no memory pressure. */
static bool pages_out(const struct damon_kdamond *kd, const struct damon_context *x, const struct damon_scheme *s)
{
	return kd->on && !strcmp(x->operations, "paddr") && !strcmp(s->action, "pageout");
}

double damon_pageout_idle_s(const struct damon_info *d)
{
	double best = NAN;

	for (unsigned k = 0; k < d->nkdamonds; k++)
		for (unsigned c = 0; c < d->k[k].ncontexts; c++) {
			const struct damon_context *x = &d->k[k].c[c];

			for (unsigned i = 0; x->intervals_ok && i < x->nschemes; i++) {
				double s = (double)x->s[i].age_min * (double)x->aggr_us / 1e6;

				if (pages_out(&d->k[k], x, &x->s[i]) && !(s >= best))
					best = s;
			}
		}
	return best;
}

int damon_reclaims(const struct damon_info *d)
{
	bool unknown = false;

	if (d->reclaim_module)
		return 1;
	for (unsigned k = 0; k < d->nkdamonds; k++) {
		const struct damon_kdamond *kd = &d->k[k];

		for (unsigned c = 0; c < kd->ncontexts; c++)
			for (unsigned i = 0; i < kd->c[c].nschemes; i++) {
				const struct damon_scheme *s = &kd->c[c].s[i];

				if (pages_out(kd, &kd->c[c], s))
					return 1;
				/* Would page out, were it on: its state is unread. */
				if (!kd->state_ok && !strcmp(kd->c[c].operations, "paddr") &&
				    !strcmp(s->action, "pageout"))
					unknown = true;
			}
	}
	return unknown ? -1 : 0;
}
