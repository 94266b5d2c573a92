/*
 * gen.c - the offset generator; semantics in gen.h.
 *
 * gen_next is on every engine's hot path: no locks, no allocation, no
 * syscalls, no division per request. Divisions happen at init and once
 * per scan piece (a shared-cursor fetch-add), never per request.
 *
 * Random numbers: xoroshiro128+ seeded through splitmix64 from the job
 * seed and the worker index, so a seed, a worker index and a config give
 * the same sequence on every run. A block index in [0, n) is Lemire's
 * multiply-shift of a 64-bit draw: no modulo, bias below n / 2^64.
 *
 * Zipf: rejection-inversion (W. Hörmann, G. Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * ACM TOMACS 1996), as in Apache Commons RNG's
 * RejectionInversionZipfSampler. Chosen over Gray et al.'s method
 * (fio's, "Quickly generating billion-record synthetic databases")
 * because that one needs zeta(n, theta), a sum over all n ranks (seconds
 * for 2^30 blocks, or an approximation that skews the head), and is only
 * defined for theta != 1; rejection-inversion is exact, needs O(1) setup
 * and memory for any n up to 2^53, takes any theta > 0 including 1, and
 * costs a log and an exp per draw (about 1.1 draws per sample).
 * Ranks are then scattered over the region by a keyed bijection
 * (gen_perm) so the hot blocks are spread out, as fio hashes its ranks;
 * the key comes from the job seed alone, so every worker of a job has the
 * same hot blocks.
 */
#include "workload/gen.h"
#include "workload/zipf.h"
#include "lib/rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gen_target {
	uint64_t base, len;
	uint64_t nblocks;	/* ceil(len / bs) */
	uint32_t last_len;	/* length of block nblocks-1: bs, or the short tail */

	/* Sequential: the piece (shared) or slice (partitioned) being read,
	 * relative to base: next offset and end. */
	uint64_t pos, end;
	uint64_t slice_start;	/* partitioned: this worker's slice */
	uint64_t npieces;	/* shared: pieces per pass, ceil(len / chunk) */
	struct gen_cursor *cursor;
	bool pass_end;		/* the current piece/slice ends a pass */
	unsigned passes;	/* partitioned: passes over the slice done (loops) */
	bool exhausted;		/* one pass: nothing left here for this worker */

	uint64_t visit;		/* randread, fst=sequential: requests this visit */
};

/* ---- setup ----------------------------------------------------------- */

static int shape_init(struct gen *g, const struct gen_config *c, struct err *e);
static void shape_free(struct gen *g);

/* Partitioned: this worker's slice, both ends rounded down to bs, so the
 * slices of all workers tile the region. */
static void slice_of(const struct gen_config *c, uint64_t len, uint64_t *start, uint64_t *end)
{
	uint64_t s = (uint64_t)((unsigned __int128)len * c->worker / c->nworkers);
	uint64_t en = (uint64_t)((unsigned __int128)len * (c->worker + 1) / c->nworkers);

	s -= s % c->bs;
	if (c->worker + 1 == c->nworkers)
		en = len;
	else
		en -= en % c->bs;
	*start = s;
	*end = en;
}

int gen_init(struct gen *g, const struct gen_config *c, unsigned ntargets,
	     const struct gen_region *regions, struct gen_cursor *cursors,
	     struct err *e)
{
	bool shared = c->rw == RW_READ && c->scan == SCAN_SHARED;
	uint64_t total = 0, x;

	memset(g, 0, sizeof(*g));
	if (ntargets == 0 || ntargets > 65536)
		return err_set(e, EINVAL, "gen: %u targets (1 to 65536 allowed)", ntargets);
	if (c->bs == 0 || c->bs > UINT32_MAX)
		return err_set(e, EINVAL, "gen: bs=%llu (1 to 4g-1 allowed)",
			       (unsigned long long)c->bs);
	if (c->nworkers == 0 || c->worker >= c->nworkers)
		return err_set(e, EINVAL, "gen: worker %u of %u", c->worker, c->nworkers);
	if (shared && (!cursors || c->scan_chunk == 0))
		return err_set(e, EINVAL, "gen: scan=shared needs cursors and scan_chunk > 0");
	if (c->rw == RW_RANDREAD && c->dist == DIST_ZIPF &&
	    !(c->zipf_theta > 0 && isfinite(c->zipf_theta)))
		return err_set(e, EINVAL, "gen: zipf theta %g (must be > 0)", c->zipf_theta);
	for (unsigned i = 0; i < ntargets; i++) {
		if (regions[i].len == 0 || regions[i].base + regions[i].len < regions[i].base)
			return err_set(e, EINVAL, "gen: target %u: region of %llu bytes at %llu",
				       i, (unsigned long long)regions[i].len,
				       (unsigned long long)regions[i].base);
		total += regions[i].len;
	}

	g->c = *c;
	if (g->c.passes < 1)
		g->c.passes = 1;
	if (shared)	/* pieces start on request boundaries */
		g->c.scan_chunk = (c->scan_chunk + c->bs - 1) / c->bs * c->bs;
	g->ntargets = ntargets;
	g->endless = c->wrap || c->io_limit;
	g->limit = c->wrap ? 0 : c->io_limit;
	g->pass_reqs = (total / c->bs + (total % c->bs != 0)) * (c->passes > 1 ? c->passes : 1);
	g->live = ntargets;

	x = c->seed + (uint64_t)c->worker * 0xd1342543de82ef95ull;
	g->rng[0] = splitmix64(&x);
	g->rng[1] = splitmix64(&x);
	if (!g->rng[0] && !g->rng[1])	/* the one state xoroshiro cannot leave */
		g->rng[1] = 1;

	g->t = calloc(ntargets, sizeof(*g->t));
	if (!g->t)
		return err_set(e, ENOMEM, "gen: out of memory");
	for (unsigned i = 0; i < ntargets; i++) {
		struct gen_target *t = &g->t[i];
		uint64_t tail;

		t->base = regions[i].base;
		t->len = regions[i].len;
		t->nblocks = t->len / c->bs;
		tail = t->len - t->nblocks * c->bs;
		if (tail)
			t->nblocks++;
		t->last_len = tail ? (uint32_t)tail : (uint32_t)c->bs;
		if (shared) {
			t->cursor = &cursors[i];
			t->npieces = t->len / g->c.scan_chunk + (t->len % g->c.scan_chunk != 0);
		} else {
			slice_of(c, t->len, &t->slice_start, &t->end);
			t->pos = t->slice_start;
			t->pass_end = true;
		}
	}

	if (c->rw == RW_RANDREAD && c->dist == DIST_ZIPF) {
		struct zipf *z = calloc(ntargets, sizeof(*z));

		if (!z) {
			gen_free(g);
			return err_set(e, ENOMEM, "gen: out of memory");
		}
		/* Keyed by the job seed only: one hot set per job. */
		for (unsigned i = 0; i < ntargets; i++)
			zipf_init(&z[i], g->t[i].nblocks, c->zipf_theta,
				  c->seed ^ 0x5a1f5eedull ^ ((uint64_t)i << 32));
		g->zipf = z;
	}
	if (gen_config_shaped(c)) {
		int ret = shape_init(g, &g->c, e);

		if (ret) {
			gen_free(g);
			return ret;
		}
	}
	return 0;
}

void gen_free(struct gen *g)
{
	shape_free(g);
	free(g->zipf);
	free(g->t);
	g->zipf = NULL;
	g->t = NULL;
	g->done = true;
}

/* next_index is the hot path's; the shapes use it too. */
static inline unsigned next_index(const struct gen *g, unsigned i);
static inline unsigned fst_next(struct gen *g);

/* ---- fio's shapes ------------------------------------------------------ */

/* fio's random numbers for sizes and zones are 32-bit (tausworthe);
 * its thresholds are written against that range, and so are these. */
#define FRAND32_MAX 0xffffffffull
/* fio's normal: the mean of this many uniform draws (lib/gauss.c). */
#define GAUSS_ITERS 12

/* One direction's sizes and zones, resolved. */
struct gen_sdir {
	uint64_t min_bs, max_bs, ba;
	unsigned nsplit;
	uint64_t split_bs[JOB_BSSPLIT_MAX];
	unsigned split_perc[JOB_BSSPLIT_MAX];	/* sorted by share, as fio */
	unsigned perc_random;
	/* zoned: for a draw v of 1..100, zone [zlo, zhi) of v - 1, in
	 * percent of the region (zoned) or bytes (zoned_abs). */
	bool zoned;
	uint64_t zlo[100], zhi[100];
};

/* Per target, per direction. */
struct gen_starget {
	uint64_t lo, len;		/* the walk's slice, relative to base */
	uint64_t lastb[2];		/* random: blocks of ba whose smallest request fits */
	uint64_t last_pos[2];		/* sequential: where the next one starts (fio's last_pos) */
	uint64_t last_start[2];		/* rw_sequencer=identical: where the last one began */
	bool started[2];
	uint64_t visit;			/* file_service_type=sequential: bytes this visit */
	uint64_t rot;			/* pareto, normal: the scatter's rotation */
	uint64_t nranges;		/* pareto, normal, zipf: ranks */
	uint64_t zone_off;		/* zonemode=strided: the zone's start in the slice */
};

struct gen_shape {
	struct gen_sdir d[2];
	struct gen_starget *t;
	double pareto_pow;		/* log(h) / log(1 - h) */
	uint64_t pass_bytes;		/* one pass's bytes: the slices' lengths */
	uint64_t stop_bytes;		/* one pass's bytes times passes; 0 = endless */
	unsigned seq_left;		/* requests to the next random one (rw=randread:N) */
	uint64_t dir_reqs[2];		/* sequence: requests per direction (fio's io_issues) */
	uint64_t zone_bytes;		/* zonemode=strided: bytes issued in this zone */
};

void gen_config_shape(struct gen_config *c, const struct workload_job *wj)
{
	c->dirs = wj->dirs;
	c->dir = wj->writes && !wj->mixed ? JOB_DIR_WRITE : JOB_DIR_READ;
	c->bs_unaligned = wj->bs_unaligned;
	c->pareto_h = wj->pareto_h;
	c->gauss_dev = wj->gauss_dev;
	c->seq_nr = wj->seq_nr;
	c->seq_add = wj->seq_add;
	c->rw_seq = wj->rw_seq;
	c->number_ios = wj->number_ios;
	c->seq = wj->seq;
	c->nseq = wj->nseq;
	c->seq_stride = wj->seq_stride;
	c->zone_size = wj->zone_size;
	c->zone_range = wj->zone_range;
	c->zone_skip = wj->zone_skip;
}

bool gen_config_shaped(const struct gen_config *c)
{
	if (c->seq_nr > 1 || c->seq_add || c->number_ios || c->zone_size ||
	    (c->dist != DIST_RANDOM && c->dist != DIST_ZIPF))
		return true;
	for (unsigned d = 0; c->dirs && d < 2; d++) {
		const struct job_dir *dd = &c->dirs[d];

		if ((dd->bs_min && dd->bs_min != c->bs) || (dd->bs_max && dd->bs_max != c->bs) ||
		    (dd->ba && dd->ba != (dd->bs_min ? dd->bs_min : c->bs)) ||
		    dd->perc_random < 100)
			return true;
	}
	return false;
}

bool gen_job_shaped(const struct workload_job *wj)
{
	struct gen_config c = {
		.rw = job_rw_random(wj->rw) ? RW_RANDREAD : RW_READ,
		.dist = wj->dist,
		.bs = wj->bs,
	};

	gen_config_shape(&c, wj);
	return gen_config_shaped(&c) || wj->loops > 1;
}

static void sdir_init(struct gen_sdir *sd, const struct gen_config *c, const struct job_dir *dd)
{
	sd->min_bs = dd && dd->bs_min ? dd->bs_min : c->bs;
	sd->max_bs = dd && dd->bs_max ? dd->bs_max : c->bs;
	/* fio: blockalign applies to random offsets; unset, the smallest size. */
	sd->ba = dd && dd->ba && job_rw_random(c->rw) ? dd->ba : sd->min_bs;
	sd->perc_random = dd ? dd->perc_random : 100;
	sd->nsplit = dd ? dd->nsplit : 0;
	for (unsigned i = 0; i < sd->nsplit; i++) {
		sd->split_bs[i] = dd->split[i].bs;
		sd->split_perc[i] = dd->split[i].perc;
	}
	sd->zoned = dd && dd->nzones && (c->dist == DIST_ZONED || c->dist == DIST_ZONED_ABS);
	if (sd->zoned) {
		/* fio's zone-dist.c: the v-th percent of accesses goes to the
		 * zone whose access shares, summed in order, first pass v. */
		uint64_t at = 0;
		unsigned v = 0;

		for (unsigned i = 0; i < dd->nzones; i++) {
			const struct job_zone *z = &dd->zones[i];
			uint64_t sz = c->dist == DIST_ZONED ? z->size_pct : z->size;

			for (unsigned k = 0; k < z->access && v < 100; k++, v++) {
				sd->zlo[v] = at;
				sd->zhi[v] = at + sz;
			}
			at += sz;
		}
		for (; v < 100; v++) {	/* shares of 100 always; kept safe */
			sd->zlo[v] = 0;
			sd->zhi[v] = c->dist == DIST_ZONED ? 100 : 0;
		}
	}
}

static int shape_init(struct gen *g, const struct gen_config *c, struct err *e)
{
	struct gen_shape *s = calloc(1, sizeof(*s));
	uint64_t pass = 0, x;

	if (!s)
		return err_set(e, ENOMEM, "gen: out of memory");
	g->shape = s;
	s->t = calloc(g->ntargets, sizeof(*s->t));
	if (!s->t)
		return err_set(e, ENOMEM, "gen: out of memory");
	for (unsigned d = 0; d < 2; d++)
		sdir_init(&s->d[d], c, c->dirs ? &c->dirs[d] : NULL);
	if (c->dist == DIST_PARETO) {
		if (!(c->pareto_h > 0 && c->pareto_h < 1))
			return err_set(e, EINVAL, "gen: pareto h %g (0 < h < 1)", c->pareto_h);
		s->pareto_pow = log(c->pareto_h) / log(1.0 - c->pareto_h);
	}
	/* fio's first request is a random one (checked with its iolog). */
	s->seq_left = 1;
	for (unsigned i = 0; i < g->ntargets; i++) {
		struct gen_starget *st = &s->t[i];
		const struct gen_target *t = &g->t[i];

		/* Random offsets range over the region; a sequential walk
		 * over the worker's slice (the whole region for one worker),
		 * as fio's numjobs each walk a file of their own. */
		if (job_rw_random(c->rw)) {
			st->lo = 0;
			st->len = t->len;
		} else {
			slice_of(c, t->len, &st->lo, &st->len);
			st->len -= st->lo;
		}
		pass += st->len;
		for (unsigned d = 0; d < 2; d++) {
			const struct gen_sdir *sd = &s->d[d];
			uint64_t room = t->len;

			/* fio's last_block: the smallest request fits after the last block. */
			if (sd->min_bs > sd->ba)
				room = room > sd->min_bs - sd->ba ? room - (sd->min_bs - sd->ba) : 0;
			st->lastb[d] = room / sd->ba;
			if (job_rw_random(c->rw) && !st->lastb[d])
				return err_set(e, EINVAL, "gen: target %u: %llu bytes hold no request of "
					       "%llu", i, (unsigned long long)t->len,
					       (unsigned long long)sd->min_bs);
			if (sd->zoned && c->dist == DIST_ZONED_ABS &&
			    sd->zhi[99] / sd->ba > st->lastb[d] && job_rw_random(c->rw))
				return err_set(e, EINVAL, "random_distribution=zoned_abs: the zones "
					       "(%llu bytes) exceed the region of %llu bytes (as fio "
					       "refuses)", (unsigned long long)sd->zhi[99],
					       (unsigned long long)t->len);
		}
		st->nranges = st->lastb[c->dir] ? st->lastb[c->dir] : 1;
		x = c->seed ^ 0x9a7e70ull ^ ((uint64_t)i << 32);
		st->rot = splitmix64(&x) >> 32;
		/* zipf ranks over the same blocks of ba as the others. */
		if (g->zipf)
			zipf_init((struct zipf *)g->zipf + i, st->nranges, c->zipf_theta,
				  c->seed ^ 0x5a1f5eedull ^ ((uint64_t)i << 32));
	}
	s->pass_bytes = pass;
	s->stop_bytes = g->endless ? 0 : pass * g->c.passes;
	return 0;
}

static void shape_free(struct gen *g)
{
	if (g->shape)
		free(g->shape->t);
	free(g->shape);
	g->shape = NULL;
}

/*
 * fio's scatter of pareto and normal ranks (lib/zipf.c, lib/gauss.c):
 * Knuth's multiplicative hash with the 64-bit golden ratio, plus a
 * rotation, modulo the ranks. It is not a bijection: several ranks may
 * share a block and others get none (about a third, as a random
 * function), which raises the hottest blocks' share; faultline scatters
 * the same way so that its hot shares are fio's.
 */
#define GOLDEN_RATIO_64 0x61C8864680B583EBull

static inline uint64_t fio_scatter(const struct gen_starget *st, uint64_t rank)
{
	return (rank * GOLDEN_RATIO_64 + st->rot) % st->nranges;
}

/* fio's rand_between(1, 100). */
static inline unsigned draw_pct(uint64_t *rng)
{
	return 1 + (unsigned)rng_below(rng, 100);
}

/* A block of [0, n) as fio's tausworthe path draws it: n * r / 2^32. */
static inline uint64_t draw_block(uint64_t *rng, uint64_t n)
{
	return rng_below(rng, n);
}

/*
 * A random block of target @st for direction @sd (in ba units), with
 * the job's distribution (fio's get_next_rand_offset and lib/).
 */
static uint64_t shape_block(struct gen *g, unsigned ti, const struct gen_sdir *sd, unsigned dir)
{
	struct gen_shape *s = g->shape;
	struct gen_starget *st = &s->t[ti];
	uint64_t lastb = st->lastb[dir], n = st->nranges, b;
	unsigned v;

	switch (g->c.dist) {
	case DIST_ZIPF: {
		const struct zipf *z = (const struct zipf *)g->zipf + ti;

		b = gen_perm_apply(&z->perm, zipf_rank(z, g->rng) - 1);
		break;
	}
	case DIST_PARETO: {
		/* fio's pareto_next: (n - 1) * u^(log h / log(1 - h)). */
		double u = rng_double(g->rng);

		b = (uint64_t)((double)(n - 1) * pow(u, s->pareto_pow));
		b = fio_scatter(st, b);
		break;
	}
	case DIST_GAUSS: {
		/* fio's gauss_next: the mean of 12 uniform draws over
		 * [0, n], plus a uniform deviation of width dev% of n. */
		uint64_t sum = 0, sd_w = 0;

		for (int i = 0; i < GAUSS_ITERS; i++)
			sum += rng_below(g->rng, n + 1);
		sum = (sum + GAUSS_ITERS - 1) / GAUSS_ITERS;
		if (g->c.gauss_dev > 0) {
			sd_w = (uint64_t)ceil((double)n * g->c.gauss_dev / 100.0);
			if (sd_w > n / 2)
				sd_w = n / 2;
		}
		if (sd_w) {
			int64_t dev = (int64_t)rng_below(g->rng, sd_w) - (int64_t)(sd_w / 2);

			while (dev > 0 && (uint64_t)dev + sum >= n)
				dev /= 2;
			if (dev < 0 && (uint64_t)-dev > sum)
				dev = -(int64_t)sum;
			sum += dev;
		}
		b = fio_scatter(st, sum);
		break;
	}
	case DIST_ZONED:
	case DIST_ZONED_ABS:
		if (sd->zoned) {
			v = draw_pct(g->rng) - 1;
			if (g->c.dist == DIST_ZONED) {
				/* fio: start = lo% of the blocks, span (hi-lo)%. */
				uint64_t start = sd->zlo[v] * lastb / 100;
				uint64_t span = lastb * (sd->zhi[v] - sd->zlo[v]) / 100;

				b = start + (span ? draw_block(g->rng, span) : 0);
			} else {
				uint64_t start = sd->zlo[v] / sd->ba, end = sd->zhi[v] / sd->ba;

				b = start + (end > start ? draw_block(g->rng, end - start) : 0);
			}
			break;
		}
		/* no zones for this direction: uniform, as fio */
		__attribute__((fallthrough));
	default:
		b = draw_block(g->rng, lastb);
		break;
	}
	return b < lastb ? b : lastb - 1;
}

/* fio's get_next_buflen: a size for a request with @room bytes before
 * the region's end; the short remainder when even the smallest does not
 * fit (faultline's last request of a region). */
static uint64_t shape_len(struct gen *g, const struct gen_sdir *sd, uint64_t room)
{
	uint64_t len = 0;

	if (sd->min_bs == sd->max_bs)
		return sd->max_bs <= room ? sd->max_bs : room;
	if (sd->min_bs > room)
		return room;
	do {
		uint64_t r = rng_next(g->rng) >> 32;

		if (!sd->nsplit) {
			len = sd->min_bs + (uint64_t)((double)sd->max_bs * ((double)r / (FRAND32_MAX + 1.0)));
		} else {
			unsigned perc = 0;

			for (unsigned i = 0; i < sd->nsplit; i++) {
				if (!sd->split_perc[i])
					continue;
				len = sd->split_bs[i];
				perc += sd->split_perc[i];
				if (r / perc <= FRAND32_MAX / 100 && len <= room)
					break;
			}
		}
		if (!g->c.bs_unaligned) {
			if ((sd->min_bs & (sd->min_bs - 1)) == 0)
				len &= ~(sd->min_bs - 1);
			else
				len -= len % sd->min_bs;
		}
		if (len > sd->max_bs)
			len = sd->max_bs;
	} while (len > room || !len);
	return len;
}

/* fio's get_next_seq_offset over the slice: the next offset (relative
 * to the slice), or false at its end when the pass may not wrap. */
static bool shape_seq(struct gen *g, struct gen_starget *st, unsigned dir, uint64_t *pos)
{
	uint64_t p = st->last_pos[dir];
	int64_t add = g->c.seq_add;

	if (p >= st->len) {
		if (!g->endless && !add && g->c.passes <= 1)
			return false;
		p = 0;
	}
	if (p && add) {
		p += (uint64_t)add;	/* a step back wraps through 2^64: past the end */
		if (p >= st->len) {
			if (add > 0)
				p = 0;
			else
				p = (int64_t)st->len + add > 0 ? st->len + (uint64_t)add : 0;
		}
	}
	*pos = p;
	return true;
}

static unsigned shape_target(struct gen *g)
{
	struct gen_shape *s = g->shape;
	unsigned ti = g->cur;

	if (g->ntargets == 1)
		return 0;
	/* sequential: the current target's bytes are used up, the next's turn */
	if (g->c.fst == FST_SEQUENTIAL && s->t[ti].visit >= s->t[ti].len) {
		s->t[ti].visit = 0;
		g->cur = next_index(g, ti);
	}
	return fst_next(g);
}

/*
 * zonemode=strided, before a request (fio's setup_strided_zone_mode):
 * once zone_size bytes went to this zone, the next zone starts
 * zone_range + zone_skip further on (the region's start past its end)
 * and the walk with it; a walk past the zone's range starts it again.
 */
static void zone_step(struct gen *g, struct gen_starget *st, unsigned dir)
{
	struct gen_shape *s = g->shape;

	if (s->zone_bytes >= g->c.zone_size) {
		s->zone_bytes = 0;
		st->zone_off += g->c.zone_range + g->c.zone_skip;
		if (st->zone_off >= st->len)
			st->zone_off = 0;
		st->last_pos[dir] = st->zone_off;
	}
	if (st->last_pos[dir] >= st->zone_off + g->c.zone_range)
		st->last_pos[dir] = st->zone_off;
}

/* A random offset in the zone: fio's last_block over zone_range. */
static uint64_t zone_block(struct gen *g, const struct gen_starget *st, const struct gen_sdir *sd,
			   unsigned dir)
{
	uint64_t room = g->c.zone_range, n;

	if (st->zone_off + room > st->len)
		room = st->len - st->zone_off;
	if (sd->min_bs > sd->ba)
		room = room > sd->min_bs - sd->ba ? room - (sd->min_bs - sd->ba) : 0;
	n = room / sd->ba;
	(void)dir;
	return st->zone_off + (n ? draw_block(g->rng, n) * sd->ba : 0);
}

/*
 * random_distribution=sequence (fio's __get_next_rand_offset_sequence):
 * the direction's k-th request goes to block seq[k % n] (of the smallest
 * size), plus (k / n) * n with random_sequence_stride. False when the
 * block lies past the region: the worker is done.
 */
static bool sequence_pos(struct gen *g, const struct gen_starget *st, const struct gen_sdir *sd,
			 unsigned dir, uint64_t *pos)
{
	struct gen_shape *s = g->shape;
	uint64_t k = s->dir_reqs[dir]++, b;
	unsigned i = (unsigned)(k % g->c.nseq);

	b = g->c.seq[i];
	if (g->c.seq_stride)
		b += (k / g->c.nseq) * g->c.nseq;
	if (b >= st->len / sd->min_bs)
		return false;
	*pos = b * sd->min_bs;
	return true;
}

static int next_shaped(struct gen *g, unsigned dir, unsigned *target, uint64_t *off,
		       uint32_t *len)
{
	struct gen_shape *s = g->shape;
	const struct gen_sdir *sd = &s->d[dir];
	struct gen_starget *st;
	bool random = false;
	uint64_t pos = 0, l, room;
	unsigned ti;

	if ((g->c.number_ios && g->reqs >= g->c.number_ios) ||
	    (s->stop_bytes && g->issued >= s->stop_bytes)) {
		g->done = true;
		return 0;
	}
	ti = shape_target(g);
	st = &s->t[ti];
	if (g->c.zone_size)
		zone_step(g, st, dir);
	if (g->c.nseq && job_rw_random(g->c.rw)) {
		if (!sequence_pos(g, st, sd, dir, &pos)) {
			g->done = true;
			return 0;
		}
	} else if (g->c.zone_size && job_rw_random(g->c.rw)) {
		pos = zone_block(g, st, sd, dir);
	} else if (job_rw_random(g->c.rw)) {
		/* fio's get_next_offset: every seq_nr-th request is one a
		 * random draw may take; the others follow rw_sequencer. */
		bool hit = true;

		if (g->c.seq_nr > 1 && --s->seq_left) {
			hit = false;
		} else {
			s->seq_left = g->c.seq_nr > 1 ? g->c.seq_nr : 1;
		}
		if (hit) {
			random = sd->perc_random >= 100 || draw_pct(g->rng) <= sd->perc_random;
			if (!random && !shape_seq(g, st, dir, &pos))
				random = true;
		} else if (g->c.rw_seq == RW_SEQ_IDENTICAL) {
			pos = st->started[dir] ? st->last_start[dir] : 0;
		} else if (!shape_seq(g, st, dir, &pos)) {
			random = true;
		}
		if (random)
			pos = shape_block(g, ti, sd, dir) * sd->ba;
	} else if (!shape_seq(g, st, dir, &pos)) {
		g->done = true;
		return 0;
	}
	room = st->len - pos;
	/* fio's random map cuts a request at the first block a pass has
	 * already done, so every pass of random requests moves exactly the
	 * region's bytes (and io_size equal to size, or loops, ends on a
	 * pass's end); here the request that would cross the end of a pass
	 * is cut to what the pass has left. A sequential walk ends at the
	 * region's end by itself; a time_based one counts no bytes. */
	if (s->pass_bytes && !g->c.wrap && s->pass_bytes - g->issued % s->pass_bytes < room)
		room = s->pass_bytes - g->issued % s->pass_bytes;
	l = shape_len(g, sd, room);
	s->zone_bytes += l;
	st->last_start[dir] = pos;
	st->last_pos[dir] = pos + l;
	st->started[dir] = true;
	st->visit += l;
	*target = ti;
	*off = g->t[ti].base + st->lo + pos;
	*len = (uint32_t)l;
	g->reqs++;
	g->issued += l;
	return 1;
}

/* ---- the hot path ---------------------------------------------------- */

static inline unsigned next_index(const struct gen *g, unsigned i)
{
	return i + 1 == g->ntargets ? 0 : i + 1;
}

/* file_service_type's target for the next request of several: round
 * robin moves on each time, random draws one, sequential stays on the
 * current one (its caller moves on when that one is used up). */
static inline unsigned fst_next(struct gen *g)
{
	unsigned ti = g->cur;

	switch (g->c.fst) {
	case FST_ROUNDROBIN:
		g->cur = next_index(g, ti);
		break;
	case FST_RANDOM:
		ti = (unsigned)rng_below(g->rng, g->ntargets);
		break;
	case FST_SEQUENTIAL:
		break;
	}
	return ti;
}

static int next_random(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len)
{
	struct gen_target *t;
	unsigned ti = 0;
	uint64_t b;

	if (!g->endless && g->reqs >= g->pass_reqs) {
		g->done = true;
		return 0;
	}
	if (g->ntargets > 1) {
		ti = fst_next(g);
		/* sequential: after a target's nblocks requests, the next's turn */
		if (g->c.fst == FST_SEQUENTIAL && ++g->t[ti].visit == g->t[ti].nblocks) {
			g->t[ti].visit = 0;
			g->cur = next_index(g, ti);
		}
	}
	t = &g->t[ti];
	if (g->zipf) {
		const struct zipf *z = (const struct zipf *)g->zipf + ti;

		b = gen_perm_apply(&z->perm, zipf_rank(z, g->rng) - 1);
	} else {
		b = rng_below(g->rng, t->nblocks);
	}
	*target = ti;
	*off = t->base + b * g->c.bs;
	*len = b + 1 == t->nblocks ? t->last_len : (uint32_t)g->c.bs;
	g->reqs++;
	g->issued += *len;
	return 1;
}

static void exhaust(struct gen *g, struct gen_target *t)
{
	t->exhausted = true;
	g->live--;
}

/*
 * Give @t a fresh piece (shared) or restart its slice (partitioned).
 * False when a one-pass worker has nothing left there.
 */
static bool seq_refill(struct gen *g, struct gen_target *t)
{
	uint64_t chunk = g->c.scan_chunk, piece;

	if (t->exhausted)
		return false;
	if (g->c.scan == SCAN_PARTITIONED) {
		if ((!g->endless && ++t->passes >= g->c.passes) || t->slice_start == t->end) {
			exhaust(g, t);
			return false;
		}
		t->pos = t->slice_start;
		t->pass_end = true;
		return true;
	}
	piece = __atomic_fetch_add(&t->cursor->next, chunk, __ATOMIC_RELAXED) / chunk;
	if (piece >= t->npieces) {
		if (!g->endless && piece >= t->npieces * g->c.passes) {
			exhaust(g, t);
			return false;
		}
		piece %= t->npieces;
	}
	t->pos = piece * chunk;
	t->end = t->len - t->pos < chunk ? t->len : t->pos + chunk;
	t->pass_end = piece + 1 == t->npieces;
	return true;
}

/* The next live target after @ti, or @ti itself when it is the only one. */
static unsigned next_live(const struct gen *g, unsigned ti)
{
	for (unsigned i = 0; i < g->ntargets; i++) {
		ti = next_index(g, ti);
		if (!g->t[ti].exhausted)
			break;
	}
	return ti;
}

static int next_seq(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len)
{
	struct gen_target *t;
	unsigned ti;
	uint64_t left;

	for (;;) {
		if (!g->live) {
			g->done = true;
			return 0;
		}
		ti = g->cur;
		if (g->ntargets > 1) {
			switch (g->c.fst) {
			case FST_ROUNDROBIN:
				if (g->t[ti].exhausted)
					ti = next_live(g, ti);
				g->cur = next_index(g, ti);
				break;
			case FST_RANDOM:
				ti = (unsigned)rng_below(g->rng, g->ntargets);
				if (g->t[ti].exhausted)
					ti = next_live(g, ti);
				break;
			case FST_SEQUENTIAL:
				t = &g->t[ti];
				if (t->exhausted || (t->pos == t->end && t->pass_end && g->endless)) {
					/* This target's pass is over: on to the next,
					 * which the refill below starts afresh. */
					ti = next_live(g, ti);
					g->cur = ti;
				}
				break;
			}
		}
		t = &g->t[ti];
		if (t->pos < t->end || seq_refill(g, t))
			break;
	}
	left = t->end - t->pos;
	*target = ti;
	*off = t->base + t->pos;
	*len = left < g->c.bs ? (uint32_t)left : (uint32_t)g->c.bs;
	t->pos += *len;
	g->issued += *len;
	return 1;
}

int gen_next_dir(struct gen *g, unsigned dir, unsigned *target, uint64_t *off, uint32_t *len)
{
	if (g->done)
		return 0;
	if (g->limit && g->issued >= g->limit) {
		g->done = true;
		return 0;
	}
	if (g->shape)
		return next_shaped(g, dir, target, off, len);
	if (g->c.rw == RW_RANDREAD)
		return next_random(g, target, off, len);
	return next_seq(g, target, off, len);
}

int gen_next(struct gen *g, unsigned *target, uint64_t *off, uint32_t *len)
{
	if (g->done)
		return 0;
	if (g->limit && g->issued >= g->limit) {
		g->done = true;
		return 0;
	}
	if (__builtin_expect(g->shape != NULL, 0))
		return next_shaped(g, g->c.dir, target, off, len);
	if (g->c.rw == RW_RANDREAD)
		return next_random(g, target, off, len);
	return next_seq(g, target, off, len);
}
