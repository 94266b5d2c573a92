/* vstate.c - the verify state file; see vstate.h. */
#include "workload/vstate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload/blockdata.h"

#define VSTATE_MAGIC	"FLVSTAT1"
#define VSTATE_VERSION	1u
/* A path or job name longer than this is no state file of ours. */
#define VSTATE_STR_MAX	4096u

void vstate_file(char *buf, size_t len, const char *job, unsigned thread)
{
	snprintf(buf, len, "local-%s-%u-verify.state", job, thread);
}

/* ---- writing: the bytes go through one CRC as they go out ---------------- */

struct vw {
	FILE *f;
	uint32_t crc;
	int err;
};

static void put(struct vw *w, const void *p, size_t n)
{
	if (w->err)
		return;
	w->crc = blockdata_crc32c(w->crc, p, n);
	if (fwrite(p, 1, n, w->f) != n)
		w->err = errno ? errno : EIO;
}

static void put32(struct vw *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	put(w, b, sizeof(b));
}

static void put64(struct vw *w, uint64_t v)
{
	put32(w, (uint32_t)v);
	put32(w, (uint32_t)(v >> 32));
}

static void putstr(struct vw *w, const char *s)
{
	put32(w, (uint32_t)strlen(s));
	put(w, s, strlen(s));
}

int vstate_save(const char *file, const struct vstate *vs, struct err *e)
{
	struct vw w = { .crc = 0 };
	uint32_t crc;

	w.f = fopen(file, "w");
	if (!w.f)
		return err_set(e, errno, "verify_state_save: %s: %s", file, strerror(errno));
	put(&w, VSTATE_MAGIC, 8);
	put32(&w, VSTATE_VERSION);
	put32(&w, (uint32_t)vs->verify);
	putstr(&w, vs->name);
	put32(&w, vs->ntargets);
	for (unsigned i = 0; i < vs->ntargets; i++) {
		const struct vstate_target *t = &vs->t[i];

		putstr(&w, t->path);
		put64(&w, t->base);
		put64(&w, t->map.nblocks);
		put32(&w, t->bs);
		for (uint64_t b = 0; b < (t->map.nblocks + 63) / 64; b++)
			put64(&w, t->map.bits[b]);
	}
	crc = w.crc;
	put32(&w, crc);
	if (fclose(w.f) && !w.err)
		w.err = errno;
	if (w.err)
		return err_set(e, w.err, "verify_state_save: writing %s: %s", file, strerror(w.err));
	return 0;
}

/* ---- reading: the whole file, then parsed from memory --------------------- */

struct vr {
	const uint8_t *p;
	size_t n, at;
	bool bad;
};

static uint32_t get32(struct vr *r)
{
	uint32_t v = 0;

	if (r->n - r->at < 4) {
		r->bad = true;
		return 0;
	}
	for (int i = 3; i >= 0; i--)
		v = v << 8 | r->p[r->at + (size_t)i];
	r->at += 4;
	return v;
}

static uint64_t get64(struct vr *r)
{
	uint64_t lo = get32(r);

	return lo | (uint64_t)get32(r) << 32;
}

static char *getstr(struct vr *r)
{
	uint32_t len = get32(r);
	char *s;

	if (r->bad || len > VSTATE_STR_MAX || r->n - r->at < len) {
		r->bad = true;
		return NULL;
	}
	s = strndup((const char *)r->p + r->at, len);
	r->at += len;
	if (!s)
		r->bad = true;
	return s;
}

static int parse(struct vr *r, struct vstate *vs)
{
	uint32_t n;

	if (r->n < 12 || memcmp(r->p, VSTATE_MAGIC, 8))
		return -EINVAL;
	r->at = 8;
	if (get32(r) != VSTATE_VERSION)
		return -EINVAL;
	vs->verify = (int)get32(r);
	vs->name = getstr(r);
	n = get32(r);
	if (r->bad || n > VSTATE_STR_MAX)
		return -EINVAL;
	vs->t = calloc(n ? n : 1, sizeof(*vs->t));
	if (!vs->t)
		return -ENOMEM;
	vs->ntargets = n;
	for (unsigned i = 0; i < n && !r->bad; i++) {
		struct vstate_target *t = &vs->t[i];
		uint64_t nb;

		t->path = getstr(r);
		t->base = get64(r);
		nb = get64(r);
		t->bs = get32(r);
		if (r->bad || !t->bs || nb / 64 > (r->n - r->at) / 8)
			return -EINVAL;
		if (verify_map_init(&t->map, nb))
			return -ENOMEM;
		for (uint64_t b = 0; b < (nb + 63) / 64; b++)
			t->map.bits[b] = get64(r);
	}
	return r->bad ? -EINVAL : 0;
}

int vstate_load(const char *file, struct vstate *vs, struct err *e)
{
	FILE *f = fopen(file, "r");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;
	struct vr r;
	int ret;

	memset(vs, 0, sizeof(*vs));
	if (!f)
		return err_set(e, errno, "verify_state_load: %s: %s%s", file, strerror(errno),
			       errno == ENOENT ? " (no earlier run with verify_state_save=1 left it "
			       "in the current directory)" : "");
	for (;;) {
		size_t got;

		if (n == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!nb) {
				fclose(f);
				free(buf);
				return err_set(e, ENOMEM, "verify_state_load: out of memory");
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (!got)
			break;
	}
	fclose(f);
	r = (struct vr){ .p = buf, .n = n };
	ret = n >= 4 && blockdata_crc32c(0, buf, n - 4) ==
				(uint32_t)(buf[n - 4] | buf[n - 3] << 8 | buf[n - 2] << 16 |
					   (uint32_t)buf[n - 1] << 24)
		      ? 0 : -EINVAL;
	if (!ret) {
		r.n = n - 4;
		ret = parse(&r, vs);
	}
	free(buf);
	if (ret) {
		vstate_free(vs);
		return err_set(e, -ret, "verify_state_load: %s is not a faultline verify state "
			       "file%s", file, ret == -ENOMEM ? " (out of memory)" :
			       " (wrong magic, version or checksum: another tool's, or damaged)");
	}
	return 0;
}

void vstate_free(struct vstate *vs)
{
	for (unsigned i = 0; vs->t && i < vs->ntargets; i++) {
		free(vs->t[i].path);
		verify_map_free(&vs->t[i].map);
	}
	free(vs->t);
	free(vs->name);
	memset(vs, 0, sizeof(*vs));
}
