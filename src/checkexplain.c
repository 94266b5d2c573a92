/*
 * checkexplain.c - --check-system's pressure, residency and uncached
 * findings; see checkexplain.h.
 */
#include "checkexplain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "procfs.h"
#include "psi.h"
#include "residency.h"
#include "uncached.h"

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

void checkexplain_json(json_t *root, const struct cgroup_info *ci, const char *target)
{
	char used[4096], why[256];
	json_t *o;
	struct err e = { 0 };
	int fd;

	json_object_set_new(root, "pressure", pressure_json(ci));
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
