/*
 * pool_hit.c - nanoseconds per warm hit of the two pools' inline hit
 * paths (bufpool_pin + bufpool_release, vmcache_read + vmcache_done),
 * beside the plain load of a byte of a page that an mmap hit is, each
 * over the same number of resident 4 KiB pages picked at random. A
 * benchmark, not a test: it prints and never fails.
 *
 *   make build/libfaultline.a
 *   gcc -std=gnu11 -O2 -D_GNU_SOURCE -Isrc -o build/pool_hit tests/bench/pool_hit.c \
 *       build/libfaultline.a -lm -pthread
 *   build/pool_hit [MiB [hits [FILE]]]
 *
 * "anon" is an anonymous region advised MADV_HUGEPAGE and filled (what
 * an mmap hit on a file mapped in 2 MiB folios costs at best); "mmap"
 * (with FILE, which must hold MiB bytes and be in the page cache) maps
 * FILE shared and reads it, as ioengine=mmap does. "key" is the loop's
 * own cost: the random page number and the sum, no memory touched. Each
 * figure is the best of nine passes, so a neighbour on a shared host
 * inflates it less; the order of the engines rotates from pass to pass.
 * Each pool is there twice: with light readers (pool_pin_light, as a
 * job that never writes has them) and fenced (a write job's). bufpool
 * is there twice more, light and told of the keys to come as the
 * request core's prefetch hook tells the engine: "ahead 1" the next
 * key's bucket, "ahead 2" what engine_bufpool.c does (the bucket two
 * keys ahead, the page one ahead, the pin through the guess).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engines/bufpool.h"
#include "engines/vmcache.h"

#include "poolbench.h"
#define RUNS 9


/* xorshift64: a page number below @n (a power of two). */
static inline uint64_t next(uint64_t *x, uint64_t n)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x & (n - 1);
}

enum kind { K_KEY, K_ANON, K_MMAP, K_BUFPOOL, K_VMCACHE, K_BUFPOOL_F, K_VMCACHE_F, K_BUFPOOL_P1,
	    K_BUFPOOL_P2, K_N };
static const char *const kname[K_N] = { "key", "anon", "mmap", "bufpool", "vmcache",
					 "bufpool (fenced)", "vmcache (fenced)", "bufpool ahead 1",
					 "bufpool ahead 2" };

/* A pool of each kind, its readers light (pool_pin_light) or fenced. */
struct pools {
	struct bufpool *bp;
	struct pool_reader *bprd;
	struct vmcache *vc;
	struct pool_reader *vmrd;
};

struct ctx {
	uint64_t npages, hits;
	uint8_t *anon, *map;
	struct pools light, fenced;
	struct bufpool_io bio;
	struct vmcache_io vio;
	struct pool_counters c;
};

static void bufpool_hit(struct ctx *x, const struct pools *p, uint64_t key, uint64_t *sum)
{
	uint32_t ref;
	uint8_t *d;

	if (bufpool_pin(p->bp, p->bprd, 0, (uint32_t)key, &x->bio, &x->c, &ref, &d))
		abort();
	*sum += d[0];
	bufpool_release(p->bp, p->bprd, 0, ref);
}

static void vmcache_hit(struct ctx *x, const struct pools *p, uint64_t pid, uint64_t *sum)
{
	uint64_t ref;
	uint8_t *d;

	if (vmcache_read(p->vc, p->vmrd, 0, pid, &x->vio, &x->c, &d, &ref))
		abort();
	*sum += d[0];
	vmcache_done(p->vc, p->vmrd, 0, ref);
}

static uint64_t sink;

/*
 * bufpool's hits told of the requests to come, as the request core's
 * prefetch hook tells the engine (engine_bufpool.c's bp_prefetch):
 * @ahead 1, the next key's bucket line on its way during this hit; 2,
 * the bucket two keys ahead, and the page of the next one (its bucket
 * line asked for a hit earlier), whose entry is then pinned as a guess
 * (bufpool_pin_guess), as the engine does.
 */
static double pass_ahead(struct ctx *x, unsigned ahead)
{
	uint64_t r = 88172645463325252ull, sum = 0, t0;
	uint64_t k0, k1, k2;
	uint32_t g0 = BUFPOOL_NONE, g1 = BUFPOOL_NONE;
	struct bufpool *bp = x->light.bp;

	k1 = next(&r, x->npages);
	k2 = next(&r, x->npages);
	t0 = now();
	for (uint64_t i = 0; i < x->hits; i++) {
		uint32_t ref;
		uint8_t *d;

		k0 = k1;
		k1 = k2;
		k2 = next(&r, x->npages);
		if (ahead == 1) {
			bufpool_prefetch_bucket(bp, (uint32_t)k1);
			g0 = BUFPOOL_NONE;
		} else {
			bufpool_prefetch_bucket(bp, (uint32_t)k2);
			g0 = g1;
			g1 = bufpool_prefetch_page(bp, (uint32_t)k1);
		}
		if (bufpool_pin_guess(bp, x->light.bprd, 0, (uint32_t)k0, g0, &x->bio, &x->c, &ref, &d))
			abort();
		sum += d[0];
		bufpool_release(bp, x->light.bprd, 0, ref);
	}
	sink += sum;
	return (double)(now() - t0) / (double)x->hits;
}

static double pass(struct ctx *x, enum kind k)
{
	uint64_t r = 88172645463325252ull, sum = 0, t0 = now();

	if (k >= K_BUFPOOL_P1)
		return pass_ahead(x, k == K_BUFPOOL_P1 ? 1 : 2);
	for (uint64_t i = 0; i < x->hits; i++) {
		const uint64_t p = next(&r, x->npages);

		switch (k) {
		case K_KEY:
			sum += p;
			break;
		case K_ANON:
			sum += x->anon[p * PAGE];
			break;
		case K_MMAP:
			sum += x->map[p * PAGE];
			break;
		case K_BUFPOOL:
			bufpool_hit(x, &x->light, p, &sum);
			break;
		case K_VMCACHE:
			vmcache_hit(x, &x->light, p, &sum);
			break;
		case K_BUFPOOL_F:
			bufpool_hit(x, &x->fenced, p, &sum);
			break;
		case K_VMCACHE_F:
			vmcache_hit(x, &x->fenced, p, &sum);
			break;
		default:
			break;
		}
	}
	sink += sum;
	return (double)(now() - t0) / (double)x->hits;
}

/* Pools larger than the region by a quarter, as the engines' hit
 * benches make them, filled in order as prewarm=1 does. */
static void pools_new(struct ctx *x, struct pools *p, bool light)
{
	const uint64_t n = x->npages;
	struct err e;
	uint8_t *d;

	if (bufpool_create(&p->bp, (n + n / 4) * PAGE, PAGE, n, &e) ||
	    vmcache_create(&p->vc, n, PAGE, n + n / 4, 64, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		exit(1);
	}
	if (light && (pool_pin_light(&p->bp->pins) || pool_pin_light(&p->vc->pins))) {
		fprintf(stderr, "membarrier(2) refused: no light readers\n");
		exit(1);
	}
	p->bprd = bufpool_reader_new(p->bp);
	p->vmrd = vmcache_reader_new(p->vc);
	for (uint64_t k = 0; k < n; k++) {
		uint32_t ref;

		if (bufpool_get(p->bp, (uint32_t)k, BUFPOOL_SHARED, &x->bio, &x->c, &ref, &d))
			exit(1);
		bufpool_unpin(p->bp, ref);
		if (vmcache_get(p->vc, k, VMCACHE_SHARED, &x->vio, &x->c, &d))
			exit(1);
		vmcache_unpin(p->vc, k);
	}
}

static void setup(struct ctx *x, uint64_t mib, const char *file)
{
	x->npages = (mib << 20) / PAGE;
	x->anon = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->anon == MAP_FAILED)
		exit(1);
	madvise(x->anon, mib << 20, MADV_HUGEPAGE);
	for (uint64_t p = 0; p < x->npages; p++)
		memset(x->anon + p * PAGE, (int)(p & 0xff), PAGE);
	if (file) {
		int fd = open(file, O_RDONLY);

		x->map = fd < 0 ? MAP_FAILED : mmap(NULL, mib << 20, PROT_READ, MAP_SHARED, fd, 0);
		if (x->map == MAP_FAILED) {
			perror(file);
			exit(1);
		}
		madvise(x->map, mib << 20, MADV_RANDOM);
		for (uint64_t p = 0; p < x->npages; p++)
			sink += x->map[p * PAGE];
		close(fd);
	}
	x->bio = (struct bufpool_io){ .read = fill_bp, .write = no_write_bp };
	x->vio = (struct vmcache_io){ .read = fill_vm, .write = no_write_vm };
	pools_new(x, &x->light, true);
	pools_new(x, &x->fenced, false);
}

int main(int argc, char **argv)
{
	const uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 0) : 256;
	struct ctx x = { .hits = argc > 2 ? strtoull(argv[2], NULL, 0) : 1u << 24 };
	double best[K_N];

	if (mib == 0 || (mib & (mib - 1))) {
		fprintf(stderr, "MiB: a power of two\n");
		return 2;
	}
	setup(&x, mib, argc > 3 ? argv[3] : NULL);
	for (int k = 0; k < K_N; k++)
		best[k] = 1e9;
	for (int run = 0; run < RUNS; run++)
		for (int i = 0; i < K_N; i++) {
			const enum kind k = (enum kind)((i + run) % K_N);
			double ns;

			if (k == K_MMAP && !x.map)
				continue;
			ns = pass(&x, k);
			if (ns < best[k])
				best[k] = ns;
		}
	printf("%llu MiB, %llu random hits a pass, best of %d (ns per hit; bufpool %s)\n",
	       (unsigned long long)mib, (unsigned long long)x.hits, RUNS,
	       x.light.bp->mem == BUFPOOL_MEM_HUGETLB ? "hugetlb" :
	       x.light.bp->mem == BUFPOOL_MEM_THP ? "THP" : "base pages");
	for (int k = 0; k < K_N; k++)
		if (k != K_MMAP || x.map)
			printf("%-17s %7.1f\n", kname[k], best[k]);
	return (int)(sink & 0);
}
