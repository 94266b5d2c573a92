/*
 * damon.h - DAMON, the kernel's data access monitor, as a reclaimer
 * beside kswapd (Documentation/admin-guide/mm/damon/usage.rst).
 *
 * A kdamond samples which memory is accessed and applies schemes to the
 * regions that match an access pattern. A "pageout" scheme over physical
 * memory (paddr) reclaims memory that stayed idle long enough, page cache
 * included, without any memory pressure: a cached file's pages leave
 * while it sits idle, and a run that expected them warm starts cold.
 * Hypervisors' guests run one to give memory back to the host (this
 * development VM does). --check-system reports what it finds.
 *
 * Read from <sysroot>/kernel/mm/damon/admin (the sysfs interface, 5.18+)
 * and the two modules' <sysroot>/module/damon_{reclaim,lru_sort}
 * parameters. Every count is what the files say; a file that cannot be
 * read leaves its field unset (the *_ok flags), never 0. A file that
 * answers EBUSY (another process holds DAMON's sysfs lock, as a write
 * to a state file does until its kdamond has handled it) is asked again
 * for up to 3 s over the probe.
 */
#ifndef FAULTLINE_DAMON_H
#define FAULTLINE_DAMON_H

#include <stdbool.h>
#include <stdint.h>

#define DAMON_MAX_KDAMONDS 4
#define DAMON_MAX_CONTEXTS 2
#define DAMON_MAX_SCHEMES 4

struct damon_scheme {
	char action[24];		/* pageout, cold, lru_deprio, stat, ... */
	uint64_t age_min;		/* aggregation intervals */
	uint64_t nr_accesses_max;	/* samples per aggregation interval */
	uint64_t quota_bytes, quota_ms, quota_reset_ms;	/* 0: no limit */
	bool stats_ok;
	uint64_t nr_applied, sz_applied;	/* regions, bytes so far */
};

struct damon_context {
	char operations[16];		/* paddr, vaddr, fvaddr */
	bool intervals_ok;
	uint64_t sample_us, aggr_us;
	unsigned nschemes;		/* the first DAMON_MAX_SCHEMES */
	struct damon_scheme s[DAMON_MAX_SCHEMES];
};

struct damon_kdamond {
	unsigned index;			/* kdamonds/<index> */
	bool state_ok;			/* its state file was read */
	bool on;			/* it said "on" */
	long pid;			/* -1 when off or unreadable */
	unsigned ncontexts;
	struct damon_context c[DAMON_MAX_CONTEXTS];
};

struct damon_info {
	bool sysfs;			/* the admin interface is there */
	bool stats_refreshed;		/* update_schemes_stats was written */
	unsigned nkdamonds;		/* the first DAMON_MAX_KDAMONDS */
	struct damon_kdamond k[DAMON_MAX_KDAMONDS];
	bool reclaim_module, lru_sort_module;	/* each one's "enabled" is Y */
};

/*
 * What <sysroot> says. With @refresh (root, the live /sys: a recorded
 * tree cannot be written) each running kdamond is first asked to
 * update its schemes' stats files, which otherwise hold whatever the
 * last such request left (zeros, if none). 0, -ENOENT when the kernel
 * has no DAMON sysfs interface and neither module is enabled, or
 * -EACCES when the interface is there but not readable (its files are
 * root's alone): then nothing is known of its kdamonds.
 */
int damon_probe(const char *sysroot, bool refresh, struct damon_info *d);

/* 1 when a running kdamond pages out physical memory, or the
 * damon_reclaim module is enabled: page cache can leave without
 * memory pressure. -1 when none does but a kdamond whose state could
 * not be read (busy past the probe's wait) has such a scheme; else 0. */
int damon_reclaims(const struct damon_info *d);

/* How long memory must stay idle before a running kdamond's paddr
 * pageout scheme takes it (its age, in seconds), the shortest of them;
 * NAN when none says (only the module reclaims, or no intervals). */
double damon_pageout_idle_s(const struct damon_info *d);

#endif
