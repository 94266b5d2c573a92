/*
 * verify.c - reading written blocks back and checking them; see verify.h.
 */
#include "workload/verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workload/blockdata.h"
#include "engines/engine.h"
#include "engines/target.h"

/* faultline --verify reads this much per pread (whole blocks of it):
 * large enough that the system call vanishes next to the CRC, small
 * enough not to matter for memory. */
#define SCAN_CHUNK	(4u << 20)

int verify_map_init(struct verify_map *m, uint64_t nblocks)
{
	m->nblocks = nblocks;
	m->bits = calloc((size_t)((nblocks + 63) / 64) + 1, sizeof(*m->bits));
	return m->bits ? 0 : -ENOMEM;
}

void verify_map_free(struct verify_map *m)
{
	free(m->bits);
	m->bits = NULL;
	m->nblocks = 0;
}

uint64_t verify_map_count(const struct verify_map *m)
{
	uint64_t n = 0;

	for (uint64_t i = 0; m->bits && i < (m->nblocks + 63) / 64; i++)
		n += (uint64_t)__builtin_popcountll(m->bits[i]);
	return n;
}

const char *verify_code_name(int code)
{
	switch (code) {
	case 0:
		return "valid";
	case -ENOENT:
		return "no header (never written, or the write was lost)";
	case -EBADMSG:
		return "crc mismatch (torn or corrupted)";
	case -EFAULT:
		return "intact, but written for another offset (misdirected write)";
	case -EINVAL:
		return "intact, but written with another block size";
	case -EILSEQ:
		return "not the verify_pattern written there";
	default:
		return "unreadable";
	}
}

/* pread all of @n bytes at @off: 0, -errno, or -EIO at the end of the
 * target (it shrank). */
static int read_full(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		done += (size_t)r;
	}
	return 0;
}

int verify_block(const struct pattern *pat, const uint8_t *buf, uint32_t len, uint64_t off)
{
	if (pat)
		return pattern_check(pat, buf, len, off) ? 0 : -EILSEQ;
	return blockdata_check(buf, len, off, NULL);
}

static void tally_bad(struct verify_tally *t, unsigned target, uint64_t off, int code)
{
	if (!t->bad || target < t->first_target ||
	    (target == t->first_target && off < t->first_off)) {
		t->first_target = target;
		t->first_off = off;
		t->first_code = code;
	}
	t->bad++;
}

/* verify_dump: the bad block as read, for a look at what went wrong. A
 * dump that cannot be written is skipped: the verdict stands without it. */
static void dump_block(const char *path, uint64_t off, const uint8_t *buf, uint32_t bs)
{
	const char *slash = strrchr(path, '/');
	char name[4096];
	FILE *f;

	snprintf(name, sizeof(name), "%s.%llu.received", slash ? slash + 1 : path,
		 (unsigned long long)off);
	f = fopen(name, "w");
	if (!f)
		return;
	/* a partial dump is left as it is: the verdict stands without it */
	(void)!fwrite(buf, 1, bs, f);
	fclose(f);
}

int verify_readback(int fd, const struct verify_map *m, uint64_t base, uint32_t bs,
		    uint8_t *buf, unsigned target, const int *stop, struct verify_tally *t,
		    bool *complete, const struct verify_opts *o, struct err *e)
{
	unsigned dumps = 0;

	*complete = false;
	for (uint64_t w = 0; w < (m->nblocks + 63) / 64; w++) {
		uint64_t bits = m->bits[w];

		if (stop && __atomic_load_n(stop, __ATOMIC_RELAXED))
			return 0;
		while (bits) {
			uint64_t blk = w * 64 + (uint64_t)__builtin_ctzll(bits);
			uint64_t off = base + blk * bs;
			int ret;

			bits &= bits - 1;
			ret = read_full(fd, buf, bs, off);
			if (ret)
				return err_set(e, -ret, "verify: reading back offset %llu: %s",
					       (unsigned long long)off, strerror(-ret));
			t->blocks++;
			ret = verify_block(o ? o->pat : NULL, buf, bs, off);
			if (!ret)
				continue;
			tally_bad(t, target, off, ret);
			if (o && o->dump && dumps < VERIFY_DUMP_MAX) {
				dump_block(o->dump, off, buf, bs);
				dumps++;
			}
			if (o && o->fatal) {
				*complete = true;	/* as far as verify_fatal reads */
				return 0;
			}
		}
	}
	*complete = true;
	return 0;
}

/* ---- a read job's checks ------------------------------------------------ */

int verify_reads_init(struct verify_reads *v, unsigned ntargets, const struct verify_opts *o)
{
	memset(v, 0, sizeof(*v));
	v->t = calloc(ntargets ? ntargets : 1, sizeof(*v->t));
	if (!v->t)
		return -ENOMEM;
	v->ntargets = ntargets;
	if (o)
		v->o = *o;
	return 0;
}

void verify_reads_free(struct verify_reads *v)
{
	for (unsigned i = 0; v->t && i < v->ntargets; i++)
		verify_map_free(&v->t[i].map);
	free(v->t);
	v->t = NULL;
	v->ntargets = 0;
}

bool verify_read_check(struct verify_reads *v, unsigned t, unsigned target, const uint8_t *data,
		       uint32_t len, uint64_t off)
{
	const struct verify_read_target *rt = &v->t[t];
	int ret;

	if (rt->map.bits) {
		uint64_t rel = off - rt->base, blk = rel / rt->bs;

		if (off < rt->base || len != rt->bs || rel % rt->bs || blk >= rt->map.nblocks ||
		    !verify_map_test(&rt->map, blk))
			return true;
	}
	v->tally.blocks++;
	ret = verify_block(v->o.pat, data, len, off);
	if (!ret)
		return true;
	tally_bad(&v->tally, target, off, ret);
	if (v->o.dump && rt->path && v->dumps < VERIFY_DUMP_MAX) {
		dump_block(rt->path, off, data, len);
		v->dumps++;
	}
	return !v->o.fatal;
}

/* ---- faultline --verify ---------------------------------------------- */

static int add_target(struct verify_result *r, struct verify_target **out)
{
	struct verify_target *n = realloc(r->targets, (r->ntargets + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	r->targets = n;
	*out = &n[r->ntargets++];
	memset(*out, 0, sizeof(**out));
	return 0;
}

/* Every bs block of [base, base+len) of @path. */
static int scan_target(struct verify_target *vt, const char *path, uint64_t base, uint64_t len,
		       uint32_t bs, uint8_t *buf, size_t bufsz, const struct pattern *pat,
		       struct err *e)
{
	uint64_t dev_size, off;
	int fd, ret = 0;

	snprintf(vt->path, sizeof(vt->path), "%s", path);
	ret = target_probe_size(path, &dev_size, e);
	if (ret)
		return ret;
	if (!len)
		len = dev_size > base ? dev_size - base : 0;
	len -= len % bs;
	if (base + len > dev_size)
		return err_set(e, EINVAL, "verify: %s is %llu bytes, shorter than the job's region "
			       "(offset %llu + size %llu): was it truncated?", path,
			       (unsigned long long)dev_size, (unsigned long long)base,
			       (unsigned long long)len);
	vt->base = base;
	vt->len = len;
	/* Read-only, whatever the job did: verifying never writes. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, errno, "verify: open %s: %s", path, strerror(errno));
	for (off = 0; off < len;) {
		size_t n = len - off < bufsz ? (size_t)(len - off) : bufsz;

		ret = read_full(fd, buf, n, base + off);
		if (ret) {
			ret = err_set(e, -ret, "verify: %s: reading offset %llu: %s", path,
				      (unsigned long long)(base + off), strerror(-ret));
			break;
		}
		for (size_t b = 0; b < n; b += bs) {
			uint64_t at = base + off + b;
			int code = verify_block(pat, buf + b, bs, at);

			vt->blocks++;
			if (code == 0) {
				vt->valid++;
			} else if (code == -ENOENT) {
				vt->never++;
			} else {
				if (vt->nkept < VERIFY_KEEP_BAD)
					vt->kept[vt->nkept++] = (struct verify_bad){ at, code };
				vt->bad++;
			}
		}
		off += n;
	}
	close(fd);
	return ret;
}

int verify_job(const struct workload_job *wj, struct verify_result *r, struct err *e)
{
	const struct engine_ops *ops = engine_find(wj->ioengine);
	char path[4096];
	size_t bufsz = SCAN_CHUNK / wj->bs * wj->bs;
	struct pattern *pat = NULL;
	uint8_t *buf;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	if (!wj->writes || !ops || (ops->flags & ENGINE_F_NO_TARGET))
		return 0;
	if (wj->bs > UINT32_MAX || wj->bs < BLOCKDATA_HDR_SIZE)
		return err_set(e, EINVAL, "verify: bs=%llu: written blocks are %u bytes to 4 GiB",
			       (unsigned long long)wj->bs, BLOCKDATA_HDR_SIZE);
	if (!bufsz)
		bufsz = wj->bs;
	/* verify=pattern: the blocks are the pattern, not headers */
	if (wj->verify == VERIFY_PATTERN && wj->verify_pattern) {
		char why[300];

		pat = malloc(sizeof(*pat));
		if (!pat)
			return err_set(e, ENOMEM, "verify: out of memory");
		if (pattern_parse(wj->verify_pattern, pat, why, sizeof(why))) {
			free(pat);
			return err_set(e, EINVAL, "verify_pattern: %s", why);
		}
	}
	if (posix_memalign((void **)&buf, 4096, bufsz)) {
		free(pat);
		return err_set(e, ENOMEM, "verify: out of memory");
	}

	if (wj->filename) {
		const char *p = wj->filename;

		while (*p && !ret) {
			size_t l = strcspn(p, ":");
			struct verify_target *vt;
			uint64_t len = wj->size, dev_size;

			if (!l || l >= sizeof(path)) {
				ret = err_set(e, EINVAL, "filename: empty or overlong path in '%s'",
					      wj->filename);
				break;
			}
			memcpy(path, p, l);
			path[l] = '\0';
			p += l + (p[l] == ':');
			if (wj->size_pct) {
				ret = target_probe_size(path, &dev_size, e);
				if (ret)
					break;
				len = dev_size > wj->offset ? (dev_size - wj->offset) / 100 * wj->size_pct : 0;
			}
			ret = add_target(r, &vt);
			if (!ret)
				ret = scan_target(vt, path, wj->offset, len, (uint32_t)wj->bs, buf, bufsz, pat, e);
			else
				err_set(e, ENOMEM, "verify: out of memory");
		}
	} else {
		uint64_t fsize = wj->filesize ? wj->filesize : wj->size / wj->nrfiles;

		for (unsigned i = 0; i < wj->numjobs * wj->nrfiles && !ret; i++) {
			struct verify_target *vt;

			snprintf(path, sizeof(path), "%s/%s.%u.%u", wj->directory ? wj->directory : ".",
				 wj->name, i / wj->nrfiles, i % wj->nrfiles);
			ret = add_target(r, &vt);
			if (!ret)
				ret = scan_target(vt, path, wj->offset, fsize, (uint32_t)wj->bs, buf, bufsz, pat, e);
			else
				err_set(e, ENOMEM, "verify: out of memory");
		}
	}
	free(buf);
	if (pat)
		pattern_free(pat);
	free(pat);
	return ret;
}

void verify_result_free(struct verify_result *r)
{
	free(r->targets);
	r->targets = NULL;
	r->ntargets = 0;
}
