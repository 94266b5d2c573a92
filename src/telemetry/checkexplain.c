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
