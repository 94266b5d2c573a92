/*
 * checkexplain.c - --check-system's pressure, residency and uncached
 * findings; see checkexplain.h.
 */
#include "telemetry/checkexplain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "telemetry/damon.h"
#include "telemetry/devinfo.h"
#include "lib/err.h"
#include "telemetry/procfs.h"
#include "telemetry/psi.h"
#include "telemetry/residency.h"
#include "engines/uncached.h"

static json_t *psi_json(const char *root, const char *rel)
{
	struct procfs_src src;
	struct psi_totals t;
	json_t *o = json_object();
	int ret = psi_open(&src, root, rel);

	if (ret == 0) {
		ret = psi_read(&src, &t);
		procfs_src_close(&src);
	}
	json_object_set_new(o, "readable", json_boolean(ret == 0));
	json_object_set_new(o, "some_total_us", ret == 0 ? json_integer((json_int_t)t.some_us) : json_null());
	json_object_set_new(o, "full_total_us",
			    ret == 0 && t.full_ok ? json_integer((json_int_t)t.full_us) : json_null());
	return o;
}

static json_t *pressure_json(const struct cgroup_info *ci)
{
	json_t *o = json_object(), *cg = json_object();
	char why[PROCFS_WHY_MAX + 64];
	const char *root = procfs_root();

	psi_why_absent(root, why, sizeof(why));
	json_object_set_new(o, "readable", json_boolean(!why[0]));
	json_object_set_new(o, "why", why[0] ? json_string(why) : json_null());
	json_object_set_new(o, "memory", psi_json(root, "pressure/memory"));
	json_object_set_new(o, "io", psi_json(root, "pressure/io"));
	/* A mem_limit job's cgroup is a child of faultline's own: its
	 * pressure file exists when the parent's does (cgroup v2). */
	if (ci->version == 2) {
		json_t *p = psi_json(ci->self, "memory.pressure");

		json_object_set_new(cg, "readable", json_incref(json_object_get(p, "readable")));
		json_object_set_new(cg, "why", json_is_true(json_object_get(p, "readable")) ? json_null()
				    : json_string("memory.pressure of faultline's cgroup cannot be read"));
		json_decref(p);
	} else {
		json_object_set_new(cg, "readable", json_false());
		json_object_set_new(cg, "why", json_string(ci->version == 1
				    ? "the memory controller is on cgroup v1, which has no memory.pressure "
				      "(cgroup v2 only): cg_mem_*_pct stay empty"
				    : "no memory cgroup controller"));
	}
	json_object_set_new(o, "cgroup", cg);
	return o;
}

/* A file to probe the kernel with when no --target file is given: the
 * running binary, on a real filesystem. */
static int probe_fd(const char *target, char *used, size_t cap)
{
	struct stat st;
	int fd = -1;

	if (target && stat(target, &st) == 0 && S_ISREG(st.st_mode)) {
		fd = open(target, O_RDONLY | O_CLOEXEC);
		snprintf(used, cap, "%s", target);
	}
	if (fd < 0) {
		fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		snprintf(used, cap, "the faultline binary's filesystem");
	}
	return fd;
}

static json_t *target_residency(int fd, const char *path)
{
	struct stat st;
	struct residency a, b;
	unsigned char *vec;
	json_t *o = json_object();
	int ca, cb;
	uint64_t len;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		json_decref(o);
		return NULL;
	}
	len = (uint64_t)st.st_size;
	vec = malloc(RESIDENCY_VEC_MAX);
	ca = residency_cachestat(fd, 0, len, &a);
	cb = vec ? residency_mincore(fd, 0, len, vec, RESIDENCY_VEC_MAX, &b) : -ENOMEM;
	free(vec);
	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(o, "pages", json_integer((json_int_t)residency_pages(0, len)));
	json_object_set_new(o, "cachestat_cached", ca == 0 ? json_integer((json_int_t)a.cached) : json_null());
	json_object_set_new(o, "cachestat_evicted", ca == 0 ? json_integer((json_int_t)a.evicted) : json_null());
	json_object_set_new(o, "cachestat_recently_evicted",
			    ca == 0 ? json_integer((json_int_t)a.recently_evicted) : json_null());
	json_object_set_new(o, "mincore_cached", cb == 0 ? json_integer((json_int_t)b.cached) : json_null());
	return o;
}

/* A kdamond's CPU seconds so far, from <proc>/PID/stat; null if unread. */
static json_t *kthread_cpu_s(long pid)
{
	char rel[64], buf[1024];
	struct procfs_task t;

	if (pid <= 0)
		return json_null();
	snprintf(rel, sizeof(rel), "%ld/stat", pid);
	if (procfs_read_small(procfs_root(), rel, buf, sizeof(buf)) ||
	    procfs_parse_task_stat(buf, strlen(buf), &t))
		return json_null();
	return json_real((double)(t.utime + t.stime) / (double)procfs_clk_tck());
}

static json_t *scheme_json(const struct damon_context *x, const struct damon_scheme *sc)
{
	json_t *o = json_object();

	json_object_set_new(o, "action", json_string(sc->action));
	json_object_set_new(o, "min_age_aggregations", json_integer((json_int_t)sc->age_min));
	json_object_set_new(o, "max_accesses", json_integer((json_int_t)sc->nr_accesses_max));
	/* The pattern in seconds and samples, as a reader needs it. */
	json_object_set_new(o, "idle_s", x->intervals_ok ? json_real((double)(sc->age_min * x->aggr_us) / 1e6)
							 : json_null());
	json_object_set_new(o, "samples_per_aggregation", x->intervals_ok && x->sample_us
				    ? json_integer((json_int_t)(x->aggr_us / x->sample_us)) : json_null());
	json_object_set_new(o, "quota_bytes", json_integer((json_int_t)sc->quota_bytes));
	json_object_set_new(o, "quota_ms", json_integer((json_int_t)sc->quota_ms));
	json_object_set_new(o, "quota_reset_ms", json_integer((json_int_t)sc->quota_reset_ms));
	json_object_set_new(o, "applied_regions", sc->stats_ok ? json_integer((json_int_t)sc->nr_applied) : json_null());
	json_object_set_new(o, "applied_bytes", sc->stats_ok ? json_integer((json_int_t)sc->sz_applied) : json_null());
	return o;
}

/* DAMON as a reclaimer beside kswapd (damon.h). */
static json_t *damon_json(void)
{
	const char *sys = devinfo_sysroot();
	struct damon_info *d = calloc(1, sizeof(*d));
	json_t *o = json_object(), *ks;
	int ret, reclaims;

	if (!d) {
		json_object_set_new(o, "why", json_string("out of memory"));
		return o;
	}
	/* Only the live /sys can be asked, and only by root. */
	ret = damon_probe(sys, geteuid() == 0 && !strcmp(sys, "/sys"), d);
	if (ret == -EACCES) {
		/* There, but unknown: neither yes nor no. */
		json_object_set_new(o, "present", json_true());
		json_object_set_new(o, "reclaims", json_null());
		json_object_set_new(o, "why", json_string("kernel/mm/damon/admin is readable by root only: run "
							  "--check-system as root to see whether a kdamond reclaims"));
		free(d);
		return o;
	}
	if (ret < 0) {
		json_object_set_new(o, "present", json_false());
		json_object_set_new(o, "reclaims", json_false());
		json_object_set_new(o, "why", json_string("no DAMON: no kernel/mm/damon/admin (a kernel before 5.18, "
							  "or without CONFIG_DAMON_SYSFS), and neither damon_reclaim "
							  "nor damon_lru_sort is enabled"));
		free(d);
		return o;
	}
	json_object_set_new(o, "present", json_true());
	reclaims = damon_reclaims(d);
	json_object_set_new(o, "reclaims", reclaims < 0 ? json_null() : json_boolean(reclaims));
	if (reclaims < 0)
		json_object_set_new(o, "why", json_string("a kdamond with a pageout scheme did not say whether it "
							  "runs: its state file stayed busy for 3 s (another process "
							  "held DAMON's sysfs lock)"));
	json_object_set_new(o, "sysfs", json_boolean(d->sysfs));
	json_object_set_new(o, "stats_refreshed", json_boolean(d->stats_refreshed));
	json_object_set_new(o, "reclaim_module", json_boolean(d->reclaim_module));
	json_object_set_new(o, "lru_sort_module", json_boolean(d->lru_sort_module));
	ks = json_array();
	for (unsigned k = 0; k < d->nkdamonds; k++) {
		const struct damon_kdamond *kd = &d->k[k];
		json_t *t = json_object(), *cs = json_array();

		json_object_set_new(t, "index", json_integer(kd->index));
		json_object_set_new(t, "on", kd->state_ok ? json_boolean(kd->on) : json_null());
		json_object_set_new(t, "pid", kd->pid > 0 ? json_integer(kd->pid) : json_null());
		json_object_set_new(t, "cpu_s", kd->on ? kthread_cpu_s(kd->pid) : json_null());
		for (unsigned c = 0; c < kd->ncontexts; c++) {
			const struct damon_context *x = &kd->c[c];
			json_t *cx = json_object(), *ss = json_array();

			json_object_set_new(cx, "operations", json_string(x->operations));
			json_object_set_new(cx, "sample_us", x->intervals_ok ? json_integer((json_int_t)x->sample_us)
									   : json_null());
			json_object_set_new(cx, "aggr_us", x->intervals_ok ? json_integer((json_int_t)x->aggr_us)
									 : json_null());
			for (unsigned i = 0; i < x->nschemes; i++)
				json_array_append_new(ss, scheme_json(x, &x->s[i]));
			json_object_set_new(cx, "schemes", ss);
			json_array_append_new(cs, cx);
		}
		json_object_set_new(t, "contexts", cs);
		json_array_append_new(ks, t);
	}
	json_object_set_new(o, "kdamonds", ks);
	free(d);
	return o;
}

void checkexplain_json(json_t *root, const struct cgroup_info *ci, const char *target)
{
	char used[4096], why[256];
	json_t *o;
	struct err e = { 0 };
	int fd;

	json_object_set_new(root, "pressure", pressure_json(ci));
	json_object_set_new(root, "damon", damon_json());
	fd = probe_fd(target, used, sizeof(used));
	o = json_object();
	if (fd < 0) {
		json_object_set_new(o, "method", json_null());
		json_object_set_new(o, "why", json_string(strerror(errno)));
		json_object_set_new(root, "residency", o);
		return;
	}
	{
		enum residency_method m = residency_probe(fd, why, sizeof(why));

		json_object_set_new(o, "method", m ? json_string(residency_method_name(m)) : json_null());
		json_object_set_new(o, "why", why[0] ? json_string(why) : json_null());
		json_object_set_new(root, "residency", o);
	}
	o = json_object();
	json_object_set_new(o, "available", json_boolean(uncached_probe(fd, 0, used, &e) == 0));
	json_object_set_new(o, "probed_on", json_string(used));
	json_object_set_new(o, "why", e.msg[0] ? json_string(e.msg) : json_null());
	json_object_set_new(root, "uncached", o);
	if (target && strcmp(used, target) == 0) {
		json_t *t = target_residency(fd, target);

		if (t)
			json_object_set_new(root, "target_residency", t);
	}
	close(fd);
}

static const char *why_of(json_t *o)
{
	json_t *w = json_object_get(o, "why");

	return json_is_string(w) ? json_string_value(w) : "unreadable";
}

static double secs(json_t *o, const char *k)
{
	return (double)json_integer_value(json_object_get(o, k)) / 1e6;
}

static const char *human_bytes(char *buf, size_t cap, double b)
{
	static const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned u = 0;

	while (b >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		b /= 1024;
		u++;
	}
	snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
	return buf;
}

static void damon_text(FILE *f, json_t *o)
{
	json_t *k, *c, *sc;
	size_t i, j, l;
	char b1[32];

	if (!o)
		return;
	if (!json_is_true(json_object_get(o, "present"))) {
		fprintf(f, "  %-22s none: %s\n", "DAMON reclaim", why_of(o));
		return;
	}
	if (json_is_null(json_object_get(o, "reclaims"))) {
		fprintf(f, "  %-22s unknown: %s\n", "DAMON reclaim", why_of(o));
		return;
	}
	fprintf(f, "  %-22s %s\n", "DAMON reclaim",
		json_is_true(json_object_get(o, "reclaims"))
			? "YES: page cache is paged out without memory pressure (below)"
			: "no running scheme pages out physical memory");
	if (json_is_true(json_object_get(o, "reclaim_module")))
		fprintf(f, "    damon_reclaim module: enabled (pages out memory idle for its min_age)\n");
	if (json_is_true(json_object_get(o, "lru_sort_module")))
		fprintf(f, "    damon_lru_sort module: enabled (reorders the LRU lists by access)\n");
	json_array_foreach(json_object_get(o, "kdamonds"), i, k) {
		json_t *pid = json_object_get(k, "pid"), *cpu = json_object_get(k, "cpu_s");

		fprintf(f, "    kdamond %lld: %s", json_integer_value(json_object_get(k, "index")),
			json_is_null(json_object_get(k, "on")) ? "state unknown (busy)"
			: json_is_true(json_object_get(k, "on")) ? "on" : "off");
		if (json_is_integer(pid))
			fprintf(f, ", pid %lld", json_integer_value(pid));
		if (json_is_real(cpu))
			fprintf(f, ", %.1f CPU s so far", json_real_value(cpu));
		fprintf(f, "\n");
		json_array_foreach(json_object_get(k, "contexts"), j, c) {
			fprintf(f, "      %s", json_string_value(json_object_get(c, "operations")));
			if (json_is_integer(json_object_get(c, "sample_us")))
				fprintf(f, ", a sample every %.2f s, aggregated every %.1f s",
					secs(c, "sample_us"), secs(c, "aggr_us"));
			fprintf(f, "\n");
			json_array_foreach(json_object_get(c, "schemes"), l, sc) {
				json_t *idle = json_object_get(sc, "idle_s"), *spa = json_object_get(sc, "samples_per_aggregation");
				json_t *ab = json_object_get(sc, "applied_bytes");

				fprintf(f, "        %s: regions accessed in at most %lld", json_string_value(json_object_get(sc, "action")),
					json_integer_value(json_object_get(sc, "max_accesses")));
				if (json_is_integer(spa))
					fprintf(f, " of %lld samples", json_integer_value(spa));
				fprintf(f, " per aggregation, for %lld aggregations",
					json_integer_value(json_object_get(sc, "min_age_aggregations")));
				if (json_is_real(idle))
					fprintf(f, " (%.0f s)", json_real_value(idle));
				if (json_integer_value(json_object_get(sc, "quota_bytes")))
					fprintf(f, "; at most %s per %lld ms",
						human_bytes(b1, sizeof(b1), (double)json_integer_value(json_object_get(sc, "quota_bytes"))),
						json_integer_value(json_object_get(sc, "quota_reset_ms")));
				if (json_is_integer(ab))
					fprintf(f, "; applied to %s so far%s", human_bytes(b1, sizeof(b1), (double)json_integer_value(ab)),
						json_is_true(json_object_get(o, "stats_refreshed")) ? "" : " (as last refreshed)");
				fprintf(f, "\n");
			}
		}
	}
}

void checkexplain_text(FILE *f, json_t *r)
{
	json_t *p = json_object_get(r, "pressure"), *o;

	if (json_is_true(json_object_get(p, "readable"))) {
		json_t *m = json_object_get(p, "memory"), *io = json_object_get(p, "io");

		fprintf(f, "  %-22s yes  memory some %.1f s, full %.1f s; io some %.1f s, full %.1f s "
			"stalled since boot\n", "pressure (PSI)", secs(m, "some_total_us"),
			secs(m, "full_total_us"), secs(io, "some_total_us"), secs(io, "full_total_us"));
	} else {
		fprintf(f, "  %-22s NO: %s\n", "pressure (PSI)", why_of(p));
	}
	o = json_object_get(p, "cgroup");
	if (json_is_true(json_object_get(o, "readable")))
		fprintf(f, "  %-22s yes\n", "cgroup memory.pressure");
	else
		fprintf(f, "  %-22s NO: %s\n", "cgroup memory.pressure", why_of(o));
	o = json_object_get(r, "residency");
	if (json_is_string(json_object_get(o, "method")) &&
	    !strcmp(json_string_value(json_object_get(o, "method")), "cachestat"))
		fprintf(f, "  %-22s yes  cachestat(2): cached, dirty, writeback, evicted, recently evicted\n",
			"page-cache residency");
	else if (json_is_string(json_object_get(o, "method")))
		fprintf(f, "  %-22s mincore(2) only (cached pages; no evicted counts): %s\n",
			"page-cache residency", why_of(o));
	else
		fprintf(f, "  %-22s NO: %s\n", "page-cache residency", why_of(o));
	o = json_object_get(r, "uncached");
	if (o && json_is_true(json_object_get(o, "available")))
		fprintf(f, "  %-22s yes  RWF_DONTCACHE reads work on %s\n", "uncached=1",
			json_string_value(json_object_get(o, "probed_on")));
	else if (o)
		fprintf(f, "  %-22s NO: %s\n", "uncached=1", why_of(o));
	damon_text(f, json_object_get(r, "damon"));
	o = json_object_get(r, "target_residency");
	if (o) {
		json_t *c = json_object_get(o, "cachestat_cached"), *m = json_object_get(o, "mincore_cached");

		fprintf(f, "  %-22s %lld pages: cachestat ", "target residency",
			json_integer_value(json_object_get(o, "pages")));
		if (json_is_integer(c))
			fprintf(f, "%lld cached, %lld evicted (%lld recently)", json_integer_value(c),
				json_integer_value(json_object_get(o, "cachestat_evicted")),
				json_integer_value(json_object_get(o, "cachestat_recently_evicted")));
		else
			fprintf(f, "n/a");
		fprintf(f, "; mincore ");
		if (json_is_integer(m))
			fprintf(f, "%lld cached\n", json_integer_value(m));
		else
			fprintf(f, "n/a\n");
	}
}
