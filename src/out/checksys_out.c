/*
 * checksys_out.c - `faultline --check-system`'s report, as text or JSON,
 * from the findings telemetry/checksys.c gathers (checksys_build): the
 * text is printed from the same object the JSON is, so the two cannot
 * disagree.
 */
#include "out/checksys_out.h"

#include <string.h>

#include "telemetry/checksys.h"
#include "telemetry/perfev.h"

static int key_counter(const char *key)
{
	for (int c = 0; c < PERFEV_NR; c++)
		if (!strcmp(perfev_key(c), key))
			return c;
	return PERFEV_NR;
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

/* The explaining sources' lines: pressure, residency, uncached, DAMON,
 * the target's residency. */
static void explain_text(FILE *f, json_t *r)
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

static void text_src(FILE *f, const char *label, json_t *o, const char *detail)
{
	json_t *why = json_object_get(o, "why");

	if (json_is_true(json_object_get(o, "readable")) || json_is_true(json_object_get(o, "can_create_child")))
		fprintf(f, "  %-22s yes%s%s\n", label, detail ? "  " : "", detail ? detail : "");
	else
		fprintf(f, "  %-22s NO: %s\n", label, json_is_string(why) ? json_string_value(why) : "unreadable");
}

static void text_dev(FILE *f, json_t *d, int depth)
{
	json_t *md = json_object_get(d, "md"), *m = json_object_get(d, "members"), *b;
	size_t i;
	json_t *v;

	fprintf(f, "%*s%s (%s", 4 + depth * 2, "", json_string_value(json_object_get(d, "name")),
		json_string_value(json_object_get(d, "kind")));
	if (json_is_string(json_object_get(d, "model")))
		fprintf(f, ", model %s", json_string_value(json_object_get(d, "model")));
	if (json_is_string(json_object_get(d, "scheduler")))
		fprintf(f, ", scheduler %s", json_string_value(json_object_get(d, "scheduler")));
	if (json_is_boolean(json_object_get(d, "rotational")))
		fprintf(f, ", %s", json_is_true(json_object_get(d, "rotational")) ? "rotational" : "non-rotational");
	fprintf(f, ", stat %s)\n", json_string_value(json_object_get(d, "stat")));
	if (md)
		fprintf(f, "%*smd %s, chunk %lld bytes, %lld raid disks, state %s\n", 6 + depth * 2, "",
			json_string_value(json_object_get(md, "level")),
			json_integer_value(json_object_get(md, "chunk_bytes")),
			json_integer_value(json_object_get(md, "raid_disks")),
			json_string_value(json_object_get(md, "array_state")));
	b = json_object_get(d, "backing");
	if (json_object_get(d, "backing_file"))
		fprintf(f, "%*sbacking file %s\n", 6 + depth * 2, "",
			json_string_value(json_object_get(d, "backing_file")));
	if (b && json_is_object(b))
		text_dev(f, b, depth + 1);
	json_array_foreach(m, i, v)
		text_dev(f, v, depth + 1);
}

static void text_report(FILE *f, json_t *r)
{
	json_t *o, *a, *v, *h = json_object_get(r, "host");
	char detail[512];
	size_t i;

	fprintf(f, "faultline --check-system: kernel %s %s, %lld CPUs%s\n",
		json_string_value(json_object_get(h, "kernel")), json_string_value(json_object_get(h, "machine")),
		json_integer_value(json_object_get(h, "cpus")),
		json_is_true(json_object_get(h, "root")) ? ", running as root" : ", not root");
	fprintf(f, "telemetry sources (%s, %s):\n", json_string_value(json_object_get(h, "proc_root")),
		json_string_value(json_object_get(h, "sys_root")));

	o = json_object_get(r, "tlb_shootdowns");
	snprintf(detail, sizeof(detail), "%lld shootdowns so far, summed over %lld CPUs",
		 json_integer_value(json_object_get(o, "total")), json_integer_value(json_object_get(o, "cpus")));
	text_src(f, "TLB shootdowns", o, detail);

	o = json_object_get(r, "kswapd");
	a = json_object_get(o, "threads");
	snprintf(detail, sizeof(detail), "%zu thread(s)", json_array_size(a));
	text_src(f, "kswapd CPU time", o, detail);
	json_array_foreach(a, i, v)
		fprintf(f, "    %s (pid %lld): %.2f CPU seconds\n", json_string_value(json_object_get(v, "name")),
			json_integer_value(json_object_get(v, "pid")), json_real_value(json_object_get(v, "cpu_s")));

	o = json_object_get(r, "vmstat");
	text_src(f, "reclaim (vmstat)", o, NULL);
	if (json_is_object(json_object_get(o, "counters"))) {
		const char *k;

		json_object_foreach(json_object_get(o, "counters"), k, v) {
			if (json_is_integer(v))
				fprintf(f, "    %-24s %lld\n", k, json_integer_value(v));
			else
				fprintf(f, "    %-24s absent on this kernel\n", k);
		}
	}
	o = json_object_get(r, "meminfo");
	if (json_is_integer(json_object_get(o, "Cached")))
		snprintf(detail, sizeof(detail), "Cached %lld MiB, Dirty %lld MiB",
			 json_integer_value(json_object_get(o, "Cached")) >> 20,
			 json_integer_value(json_object_get(o, "Dirty")) >> 20);
	else
		detail[0] = '\0';
	text_src(f, "page cache (meminfo)", o, detail);
	text_src(f, "CPU times (stat)", json_object_get(r, "cpu_times"), NULL);
	text_src(f, "per-thread faults", json_object_get(r, "thread_faults"), NULL);
	o = json_object_get(r, "delay_accounting");
	snprintf(detail, sizeof(detail), "%s", json_string_value(json_object_get(o, "why")));
	if (json_is_true(json_object_get(o, "readable")) &&
	    !strcmp(json_string_value(json_object_get(o, "state")), "off"))
		snprintf(detail, sizeof(detail), "off now; --delayacct turns it on for a run (root)");
	text_src(f, "delay accounting", o, detail);

	o = json_object_get(r, "job_events");
	if (o) {
		json_t *par = json_object_get(o, "perf_event_paranoid");

		if (json_is_integer(par))
			snprintf(detail, sizeof(detail), "%lld", json_integer_value(par));
		else
			snprintf(detail, sizeof(detail), "unreadable");
		fprintf(f, "per-job kernel counters (perf_event_open; perf_event_paranoid %s; tracefs %s at %s%s):\n",
			detail, json_string_value(json_object_get(o, "tracefs")),
			json_string_value(json_object_get(o, "tracefs_path")),
			json_is_true(json_object_get(o, "tried")) ? "" : "; a recorded tree, not tried");
		json_array_foreach(json_object_get(o, "sources"), i, v) {
			char label[160];
			size_t n = 0, k;
			json_t *c, *note = json_object_get(v, "note");

			json_t *how = json_object_get(v, "how");

			json_array_foreach(json_object_get(v, "counters"), k, c)
				n += (size_t)snprintf(label + n, sizeof(label) - n, "%s%s", k ? ", " : "",
						      perfev_label(key_counter(json_string_value(c))));
			fprintf(f, "  %s (%s): ", label, json_string_value(json_object_get(v, "source")));
			if (json_is_true(json_object_get(v, "available")))
				fprintf(f, "yes%s%s%s%s\n", json_is_string(note) ? "; " : "",
					json_is_string(note) ? json_string_value(note) : "",
					json_is_string(how) ? "; " : "", json_is_string(how) ? json_string_value(how) : "");
			else
				fprintf(f, "NO: %s\n", json_string_value(json_object_get(v, "why")));
		}
	}

	o = json_object_get(r, "memory_cgroup");
	if (json_is_integer(json_object_get(o, "version")))
		snprintf(detail, sizeof(detail), "cgroup v%lld, own group %s",
			 json_integer_value(json_object_get(o, "version")),
			 json_string_value(json_object_get(o, "own")));
	else
		detail[0] = '\0';
	fprintf(f, "features:\n");
	text_src(f, "mem_limit (cgroup)", o, detail);
	o = json_object_get(r, "features");
	fprintf(f, "  %-22s %s\n", "io_uring", json_is_true(json_object_get(o, "io_uring")) ? "yes" : "NO");
	fprintf(f, "  %-22s %s\n", "drop_caches",
		json_is_true(json_object_get(o, "drop_caches")) ? "yes" : "NO: /proc/sys/vm/drop_caches is not writable (needs root)");
	fprintf(f, "  %-22s %s (%lld node(s))\n", "NUMA (libnuma)",
		json_is_true(json_object_get(o, "numa")) ? "yes" : "no", json_integer_value(json_object_get(o, "numa_nodes")));
	explain_text(f, r);

	o = json_object_get(r, "target");
	if (o) {
		fprintf(f, "target %s:\n", json_string_value(json_object_get(o, "path")));
		if (json_is_object(json_object_get(o, "device")))
			text_dev(f, json_object_get(o, "device"), 0);
		else
			fprintf(f, "    no block device: %s\n", json_string_value(json_object_get(o, "why")));
	}
}

int checksys_out(FILE *f, const char *target, bool json, struct err *e)
{
	json_t *r = checksys_build(target, e);

	if (!r)
		return -e->code;
	if (json) {
		json_dumpf(r, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', f);
	} else {
		text_report(f, r);
	}
	json_decref(r);
	return 0;
}
