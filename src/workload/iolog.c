/*
 * iolog.c - fio's I/O logs, read, replayed and written; see iolog.h.
 *
 * The formats and their meanings follow fio 3.33 (iolog.c, blktrace.c
 * and the HOWTO of its source), checked against fio's own replay of
 * the same logs in tests/e2e/replay.sh. Where fio's behaviour and its
 * documentation differ, fio's behaviour wins, and the man page says so:
 * a version 2 "wait N" waits until N milliseconds after the job's start
 * (the HOWTO says microseconds since the previous wait; fio compares N
 * with the milliseconds since it started).
 */
#include "workload/iolog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/grow.h"

static const char *const op_names[IOLOG_NOPS] = {
	[IOLOG_READ] = "read",	   [IOLOG_WRITE] = "write", [IOLOG_TRIM] = "trim",
	[IOLOG_SYNC] = "sync",	   [IOLOG_DATASYNC] = "datasync", [IOLOG_WAIT] = "wait",
	[IOLOG_ADD] = "add",	   [IOLOG_OPEN] = "open",   [IOLOG_CLOSE] = "close",
};

const char *iolog_op_name(enum iolog_op op)
{
	return (unsigned)op < IOLOG_NOPS ? op_names[op] : "invalid";
}

/* A file name in a log: at most this long (fio's own limit is 256). */
#define IOLOG_NAME_MAX 4095

static const char hdr2[] = "fio version 2 iolog";
static const char hdr3[] = "fio version 3 iolog";

void iolog_free(struct iolog *l)
{
	for (unsigned i = 0; i < l->nfiles; i++)
		free(l->files[i]);
	free(l->files);
	free(l->ent);
	memset(l, 0, sizeof(*l));
}

/* The index of file @name (@n bytes), added when new. */
static int file_index(struct iolog *l, const char *name, size_t n, uint32_t *idx)
{
	char **files;

	for (unsigned i = l->nfiles; i-- > 0;)
		if (strlen(l->files[i]) == n && !memcmp(l->files[i], name, n)) {
			*idx = i;
			return 0;
		}
	files = realloc(l->files, (l->nfiles + 1) * sizeof(*files));
	if (!files)
		return -ENOMEM;
	l->files = files;
	l->files[l->nfiles] = strndup(name, n);
	if (!l->files[l->nfiles])
		return -ENOMEM;
	*idx = l->nfiles++;
	return 0;
}

static int push(struct iolog *l, const struct iolog_entry *en)
{
	if (grow_one(l->ent, l->n, l->cap, 1024))
		return -ENOMEM;
	l->ent[l->n++] = *en;
	return 0;
}

/* ---- text: versions 2 and 3 --------------------------------------------- */

struct tok {
	const char *p;
	size_t n;
};

/* Up to @max whitespace-separated tokens of [p, end); how many there
 * were (max + 1 when there are more). */
static unsigned split(const char *p, const char *end, struct tok *t, unsigned max)
{
	unsigned n = 0;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p == end)
			return n;
		if (n == max)
			return max + 1;
		t[n].p = p;
		while (p < end && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		t[n].n = (size_t)(p - t[n].p);
		n++;
	}
}

/* A decimal number that fits @max. */
static bool num(const struct tok *t, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (t->n == 0 || t->n > 20)
		return false;
	for (size_t i = 0; i < t->n; i++) {
		unsigned d = (unsigned)(t->p[i] - '0');

		if (d > 9 || x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool tok_is(const struct tok *t, const char *s)
{
	return strlen(s) == t->n && !memcmp(t->p, s, t->n);
}

static int bad(struct err *e, const char *name, unsigned line, const char *why, const struct tok *t)
{
	if (t)
		return err_set(e, EINVAL, "%s:%u: %s '%.*s'", name, line, why,
			       (int)(t->n > 64 ? 64 : t->n), t->p);
	return err_set(e, EINVAL, "%s:%u: %s", name, line, why);
}

/* One line after the header: @t its tokens (the timestamp taken off). */
static int text_line(struct iolog *l, struct tok *t, unsigned nt, uint64_t ts, unsigned line,
		     const char *name, struct err *e)
{
	struct iolog_entry en = { .t = ts, .line = line };
	unsigned op;
	uint64_t v;
	int ret;

	if (nt < 2 || nt == 3 || nt > 4)
		return bad(e, name, line, l->version == 3
			   ? "expected 'TIME FILE ACTION' or 'TIME FILE ACTION OFFSET LENGTH'"
			   : "expected 'FILE ACTION' or 'FILE ACTION OFFSET LENGTH'", NULL);
	for (op = 0; op < IOLOG_NOPS && !tok_is(&t[1], op_names[op]); op++)
		;
	if (op == IOLOG_NOPS)
		return bad(e, name, line, "unknown action (read, write, trim, sync, datasync, wait, add, open, close)", &t[1]);
	if (op == IOLOG_WAIT && l->version == 3)
		return bad(e, name, line, "'wait' is not allowed in a version 3 log (its timestamps say when)", NULL);
	if (t[0].n > IOLOG_NAME_MAX)
		return bad(e, name, line, "file name too long", NULL);
	if (nt == 2) {
		/* File actions; a sync may come without numbers too. */
		if (op != IOLOG_ADD && op != IOLOG_OPEN && op != IOLOG_CLOSE && op != IOLOG_SYNC &&
		    op != IOLOG_DATASYNC)
			return bad(e, name, line, "this action needs an offset and a length:", &t[1]);
	} else {
		if (op == IOLOG_ADD || op == IOLOG_OPEN || op == IOLOG_CLOSE)
			return bad(e, name, line, "a file action takes no offset or length:", &t[1]);
		if (!num(&t[2], UINT64_MAX, &en.off))
			return bad(e, name, line, "offset is not a decimal number:", &t[2]);
		if (!num(&t[3], UINT32_MAX, &v))
			return bad(e, name, line, "length is not a decimal number below 2^32:", &t[3]);
		en.len = (uint32_t)v;
		if ((op == IOLOG_READ || op == IOLOG_WRITE || op == IOLOG_TRIM) && en.len == 0)
			return bad(e, name, line, "a request of length 0", NULL);
		if (en.len && en.off > UINT64_MAX - en.len)
			return bad(e, name, line, "offset + length passes 2^64", NULL);
		if (op == IOLOG_WAIT) {
			en.t = en.off;	/* its value */
			en.off = 0;
			en.len = 0;
		}
	}
	if (op == IOLOG_SYNC || op == IOLOG_DATASYNC)
		en.off = en.len = 0;
	ret = file_index(l, t[0].p, t[0].n, &en.file);
	if (ret)
		return err_set(e, -ret, "%s:%u: out of memory", name, line);
	if (op == IOLOG_ADD)
		return 0;
	en.op = (uint8_t)op;
	ret = push(l, &en);
	return ret ? err_set(e, -ret, "%s:%u: out of memory", name, line) : 0;
}

static int parse_text(struct iolog *l, const char *buf, size_t len, const char *name, struct err *e)
{
	const char *p = buf, *end = buf + len;
	unsigned line = 0;
	bool first = true;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct tok t[6];
		unsigned nt;
		uint64_t ts = 0;
		int ret;

		line++;
		if (line == 1) {
			size_t n = (size_t)(eol - p);

			if (n >= sizeof(hdr3) - 1 && !memcmp(p, hdr3, sizeof(hdr3) - 1))
				l->version = 3;
			else if (n >= sizeof(hdr2) - 1 && !memcmp(p, hdr2, sizeof(hdr2) - 1))
				l->version = 2;
			else
				return err_set(e, EINVAL, "%s:1: not an fio iolog: the first line must be '%s' or '%s' "
					       "(version 1 is not read, as fio does not), or a blktrace file",
					       name, hdr2, hdr3);
			if (split(p + sizeof(hdr3) - 1, eol, t, 0) != 0)
				return err_set(e, EINVAL, "%s:1: text after '%s'", name,
					       l->version == 3 ? hdr3 : hdr2);
			p = nl ? nl + 1 : end;
			continue;
		}
		nt = split(p, eol, t, 5);
		p = nl ? nl + 1 : end;
		if (nt == 0)
			continue;	/* a blank line */
		if (memchr(t[0].p, '\0', (size_t)(eol - t[0].p)))
			return bad(e, name, line, "a NUL byte in the line", NULL);
		if (l->version == 3) {
			if (!num(&t[0], UINT64_MAX, &ts))
				return bad(e, name, line, "the timestamp (microseconds) is not a decimal number:", &t[0]);
			if (first)
				l->t0 = ts;
			first = false;
			ret = text_line(l, t + 1, nt - 1, ts, line, name, e);
		} else {
			ret = text_line(l, t, nt > 5 ? 5 : nt, 0, line, name, e);
		}
		if (ret)
			return ret;
	}
	if (line == 0)
		return err_set(e, EINVAL, "%s: empty log", name);
	return 0;
}

/* ---- blktrace: blkparse -d output ---------------------------------------- */

/* The kernel's struct blk_io_trace (include/uapi/linux/blktrace_api.h),
 * 48 bytes in the byte order of the machine that traced. */
struct bt_event {
	uint32_t magic, sequence;
	uint64_t time, sector;
	uint32_t bytes, action, pid, device, cpu;
	uint16_t error, pdu_len;
};
_Static_assert(sizeof(struct bt_event) == 48, "blk_io_trace is 48 bytes");

#define BT_MAGIC	0x65617400u
#define BT_VERSION	0x07u
#define BT_TA_QUEUE	1u		/* the action of a request entering the queue */
#define BT_TC(bit)	(1u << ((bit) + 16))	/* categories live in the high half */
#define BT_TC_WRITE	BT_TC(1)
#define BT_TC_FLUSH	BT_TC(2)
#define BT_TC_NOTIFY	BT_TC(10)
#define BT_TC_DISCARD	BT_TC(13)
#define BT_MINORBITS	20		/* blktrace's dev_t: major << 20 | minor */

static bool is_blktrace(const char *buf, size_t len, bool *swap)
{
	uint32_t m;

	if (len < sizeof(struct bt_event))
		return false;
	memcpy(&m, buf, sizeof(m));
	if ((m & 0xffffff00u) == BT_MAGIC) {
		*swap = false;
		return true;
	}
	if ((__builtin_bswap32(m) & 0xffffff00u) == BT_MAGIC) {
		*swap = true;
		return true;
	}
	return false;
}

static void bt_swap(struct bt_event *t)
{
	t->magic = __builtin_bswap32(t->magic);
	t->sequence = __builtin_bswap32(t->sequence);
	t->time = __builtin_bswap64(t->time);
	t->sector = __builtin_bswap64(t->sector);
	t->bytes = __builtin_bswap32(t->bytes);
	t->action = __builtin_bswap32(t->action);
	t->pid = __builtin_bswap32(t->pid);
	t->device = __builtin_bswap32(t->device);
	t->cpu = __builtin_bswap32(t->cpu);
	t->error = __builtin_bswap16(t->error);
	t->pdu_len = __builtin_bswap16(t->pdu_len);
}

/*
 * Queue events only, as fio replays them (the others are the block
 * layer's own doings): a discard is a trim, a flush a sync, else a read
 * or a write; a zero-byte read or write is dropped, as fio drops it.
 */
static int parse_blktrace(struct iolog *l, const char *buf, size_t len, bool swap, const char *name,
			  struct err *e)
{
	size_t pos = 0;
	unsigned ev = 0;
	bool first = true;

	l->version = IOLOG_BLKTRACE;
	while (pos < len) {
		struct bt_event t;
		struct iolog_entry en = { 0 };
		char dev[48];
		int ret;

		ev++;
		if (len - pos < sizeof(t))
			return err_set(e, EINVAL, "%s: blktrace event %u: cut short (%zu of %zu bytes)", name, ev,
				       len - pos, sizeof(t));
		memcpy(&t, buf + pos, sizeof(t));
		if (swap)
			bt_swap(&t);
		if ((t.magic & 0xffffff00u) != BT_MAGIC)
			return err_set(e, EINVAL, "%s: blktrace event %u: bad magic %#x", name, ev, t.magic);
		if ((t.magic & 0xffu) != BT_VERSION)
			return err_set(e, EINVAL, "%s: blktrace event %u: version %u, not %u", name, ev,
				       t.magic & 0xffu, BT_VERSION);
		pos += sizeof(t);
		if (t.pdu_len > len - pos)
			return err_set(e, EINVAL, "%s: blktrace event %u: its %u bytes of payload pass the end",
				       name, ev, t.pdu_len);
		pos += t.pdu_len;
		if ((t.action & 0xffffu) != BT_TA_QUEUE || (t.action & BT_TC_NOTIFY))
			continue;
		if (t.action & BT_TC_DISCARD)
			en.op = IOLOG_TRIM;
		else if (t.action & BT_TC_FLUSH)
			en.op = IOLOG_SYNC;
		else
			en.op = (t.action & BT_TC_WRITE) ? IOLOG_WRITE : IOLOG_READ;
		if (en.op != IOLOG_SYNC && t.bytes == 0)
			continue;
		if (t.sector > UINT64_MAX / 512 || t.sector * 512 > UINT64_MAX - t.bytes)
			return err_set(e, EINVAL, "%s: blktrace event %u: sector %llu passes 2^64 bytes", name, ev,
				       (unsigned long long)t.sector);
		if (en.op != IOLOG_SYNC) {
			en.off = t.sector * 512;
			en.len = t.bytes;
		}
		en.t = t.time / 1000;
		en.line = ev;
		if (first)
			l->t0 = en.t;
		first = false;
		snprintf(dev, sizeof(dev), "/dev/block/%u:%u", t.device >> BT_MINORBITS,
			 t.device & ((1u << BT_MINORBITS) - 1));
		ret = file_index(l, dev, strlen(dev), &en.file);
		if (!ret)
			ret = push(l, &en);
		if (ret)
			return err_set(e, -ret, "%s: out of memory", name);
	}
	return 0;
}

int iolog_parse(struct iolog *l, const char *buf, size_t len, const char *name, struct err *e)
{
	bool swap;
	int ret;

	memset(l, 0, sizeof(*l));
	if (is_blktrace(buf, len, &swap))
		ret = parse_blktrace(l, buf, len, swap, name, e);
	else
		ret = parse_text(l, buf, len, name, e);
	if (!ret) {
		size_t io = 0;

		for (size_t i = 0; i < l->n; i++)
			io += l->ent[i].op <= IOLOG_DATASYNC;
		if (!io)
			ret = err_set(e, EINVAL, "%s: no request in the log", name);
	}
	if (ret)
		iolog_free(l);
	return ret;
}

/* Logs are read whole (a trace of a million requests is about 50 MB of
 * text and 32 MB of entries), through zlib, which reads a gzip'd log
 * (the bundled trace is one) and a plain one alike. */
int iolog_load(struct iolog *l, const char *path, struct err *e)
{
	char *buf = NULL;
	size_t got = 0, cap = 1u << 20;
	gzFile gz;
	int ret;

	errno = 0;
	gz = gzopen(path, "rb");
	if (!gz) {
		ret = errno ? errno : ENOMEM;
		return err_set(e, ret, "read_iolog: %s: %s", path, strerror(ret));
	}
	for (;;) {
		int n;

		if (!buf || got == cap) {
			char *nb = realloc(buf, buf ? cap *= 2 : cap);

			if (!nb) {
				ret = err_set(e, ENOMEM, "read_iolog: %s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
		n = gzread(gz, buf + got, (unsigned)(cap - got > (1u << 30) ? 1u << 30 : cap - got));
		if (n < 0) {
			int zerr;
			const char *msg = gzerror(gz, &zerr);

			ret = err_set(e, zerr == Z_ERRNO ? errno : EIO, "read_iolog: %s: %s", path,
				      zerr == Z_ERRNO ? strerror(errno) : msg);
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	ret = iolog_parse(l, buf, got, path, e);
out:
	free(buf);
	gzclose(gz);
	return ret;
}

/* ---- replay ---------------------------------------------------------------- */

void replay_set_free(struct replay_set *s)
{
	for (unsigned i = 0; i < s->nr; i++)
		free(s->r[i].req);
	free(s->r);
	for (unsigned i = 0; i < s->npaths; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->end);
	memset(s, 0, sizeof(*s));
}

int replay_skip_parse(const char *val, unsigned *bits, struct err *e)
{
	static const enum iolog_op ops[] = { IOLOG_READ, IOLOG_WRITE, IOLOG_TRIM, IOLOG_SYNC };
	const char *p = val;

	*bits = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned i;

		for (i = 0; i < 4; i++)
			if (strlen(op_names[ops[i]]) == n && !memcmp(p, op_names[ops[i]], n))
				break;
		if (i == 4)
			return err_set(e, EINVAL, "replay_skip: '%.*s' is not one of read, write, trim, sync",
				       (int)n, p);
		*bits |= IOLOG_SKIP(ops[i]);
		if (ops[i] == IOLOG_SYNC)
			*bits |= IOLOG_SKIP(IOLOG_DATASYNC);
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* The target index of @path, added when new. */
static int set_target(struct replay_set *s, const char *path, uint16_t *idx)
{
	char **paths;
	uint64_t *end;

	for (unsigned i = 0; i < s->npaths; i++)
		if (!strcmp(s->paths[i], path)) {
			*idx = (uint16_t)i;
			return 0;
		}
	if (s->npaths == UINT16_MAX)
		return -E2BIG;
	paths = realloc(s->paths, (s->npaths + 1) * sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	s->paths = paths;
	end = realloc(s->end, (s->npaths + 1) * sizeof(*end));
	if (!end)
		return -ENOMEM;
	s->end = end;
	s->paths[s->npaths] = strdup(path);
	if (!s->paths[s->npaths])
		return -ENOMEM;
	s->end[s->npaths] = 0;
	*idx = (uint16_t)s->npaths++;
	return 0;
}

/* Microseconds of the log to nanoseconds of the replay, at @scale % of
 * the logged rate (200: twice as fast). */
static uint64_t scaled_ns(uint64_t us, unsigned scale)
{
	unsigned __int128 ns = (unsigned __int128)us * 1000u * 100u / (scale ? scale : 100);

	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

static bool left_out(const struct replay_opts *o, enum iolog_op op)
{
	if (o->skip & IOLOG_SKIP(op))
		return true;
	switch (op) {
	case IOLOG_READ:
		return false;
	case IOLOG_WRITE:
	case IOLOG_SYNC:
	case IOLOG_DATASYNC:
		return !o->writes;
	default:
		return true;	/* trims: no engine here trims */
	}
}

static int build_one(struct replay_set *s, struct replay *r, const struct iolog *l, const char *name,
		     const struct replay_opts *o, struct err *e)
{
	uint64_t wait_due = 0;
	uint16_t *map;
	int ret = 0;

	map = calloc(l->nfiles ? l->nfiles : 1, sizeof(*map));
	r->req = calloc(l->n, sizeof(*r->req));
	if (!map || !r->req) {
		free(map);
		return err_set(e, ENOMEM, "read_iolog: %s: out of memory", name);
	}
	for (unsigned i = 0; i < l->nfiles && !ret; i++)
		ret = set_target(s, o->redirect ? o->redirect : l->files[i], &map[i]);
	if (ret) {
		free(map);
		return err_set(e, -ret, "read_iolog: %s: %s", name,
			       ret == -E2BIG ? "more than 65535 files" : "out of memory");
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct iolog_entry *en = &l->ent[i];
		struct replay_req *q = &r->req[r->n];
		uint64_t off = en->off, len = en->len;

		if (en->op == IOLOG_WAIT) {
			if (!o->no_stall)
				wait_due = scaled_ns(en->t * 1000u, o->time_scale);
			continue;
		}
		if (en->op > IOLOG_DATASYNC)
			continue;	/* open, close: the targets stay open */
		if (left_out(o, en->op)) {
			r->left_out[en->op]++;
			continue;
		}
		if (o->scale > 1)
			off /= o->scale;
		if (o->align) {
			off &= ~(o->align - 1);
			/* fio rounds a blktrace request's length up too. */
			if (l->version == IOLOG_BLKTRACE && en->op <= IOLOG_WRITE)
				len = (len + o->align - 1) & ~(o->align - 1);
			if (len > UINT32_MAX || off > UINT64_MAX - len) {
				free(map);
				return err_set(e, EINVAL, "read_iolog: %s:%u: replay_align makes the request longer than 4 GiB",
					       name, en->line);
			}
		}
		q->op = en->op;
		q->off = off;
		q->len = (uint32_t)len;
		q->target = map[en->file];
		if (o->no_stall)
			q->due_ns = 0;
		else if (l->version == 2)
			q->due_ns = wait_due;
		else
			q->due_ns = en->t > l->t0 ? scaled_ns(en->t - l->t0, o->time_scale) : 0;
		r->timed |= q->due_ns != 0;
		if (q->op <= IOLOG_WRITE) {
			if (off + len > s->end[q->target])
				s->end[q->target] = off + len;
			if (q->len > s->max_len)
				s->max_len = q->len;
		}
		if (q->op == IOLOG_READ && o->span_page && q->len) {
			const uint64_t pg = o->span_page;
			uint64_t pages = ((off & (pg - 1)) + len + pg - 1) / pg;

			if (pages > s->max_read_pages) {
				s->max_read_pages = pages;
				snprintf(s->max_read_at, sizeof(s->max_read_at), "%s:%u", name, en->line);
			}
		}
		r->n++;
	}
	free(map);
	s->requests += r->n;
	if (!r->n) {
		char why[200];
		int w = 0;

		why[0] = '\0';
		for (unsigned op = 0; op <= IOLOG_DATASYNC; op++)
			if (r->left_out[op] && w < (int)sizeof(why))
				w += snprintf(why + w, sizeof(why) - (size_t)w, "%s%zu %s", w ? ", " : "",
					      r->left_out[op], op_names[op]);
		return err_set(e, EINVAL, "read_iolog: %s: nothing to replay (left out: %s%s)", name, why,
			       o->writes ? "" : "; a job with a read rw= replays only reads");
	}
	return 0;
}

int replay_set_build(struct replay_set *s, const struct iolog *logs, const char *const *names,
		     unsigned nlogs, const struct replay_opts *o, struct err *e)
{
	memset(s, 0, sizeof(*s));
	if (o->align & (o->align - 1))
		return err_set(e, EINVAL, "replay_align=%llu: not a power of two", (unsigned long long)o->align);
	if (o->span_page & (o->span_page - 1))
		return err_set(e, EINVAL, "replay: page size %llu: not a power of two",
			       (unsigned long long)o->span_page);
	s->r = calloc(nlogs ? nlogs : 1, sizeof(*s->r));
	if (!s->r)
		return err_set(e, ENOMEM, "out of memory");
	s->nr = nlogs;
	for (unsigned i = 0; i < nlogs; i++) {
		int ret = build_one(s, &s->r[i], &logs[i], names[i], o, e);

		if (ret) {
			replay_set_free(s);
			return ret;
		}
	}
	return 0;
}

int replay_set_load(struct replay_set *s, const char *logs, const struct replay_opts *o, struct err *e)
{
	struct iolog *l = NULL;
	char **names = NULL;
	unsigned n = 1, got = 0;
	const char *p = logs;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	for (const char *q = logs; *q; q++)
		n += *q == ':';
	l = calloc(n, sizeof(*l));
	names = calloc(n, sizeof(*names));
	if (!l || !names) {
		ret = err_set(e, ENOMEM, "out of memory");
		goto out;
	}
	for (; got < n; got++) {
		size_t len = strcspn(p, ":");

		if (len == 0) {
			ret = err_set(e, EINVAL, "read_iolog: an empty name in '%s'", logs);
			goto out;
		}
		names[got] = strndup(p, len);
		if (!names[got]) {
			ret = err_set(e, ENOMEM, "out of memory");
			goto out;
		}
		ret = iolog_load(&l[got], names[got], e);
		if (ret) {
			free(names[got]);
			goto out;
		}
		p += len + (p[len] == ':');
	}
	ret = replay_set_build(s, l, (const char *const *)names, n, o, e);
out:
	for (unsigned i = 0; i < got; i++) {
		iolog_free(&l[i]);
		free(names[i]);
	}
	free(l);
	free(names);
	return ret;
}

/* ---- writing ------------------------------------------------------------ */

/* The longest line iolog_add writes besides the path: a timestamp, an
 * action, an offset and a length, with spaces and the newline. */
#define LINE_MAX_FIXED (20 + 1 + 8 + 1 + 20 + 1 + 10 + 2)

static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	unsigned n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

void iolog_writer_flush(struct iolog_writer *w)
{
	size_t done = 0;

	while (done < w->len && !w->err) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->err = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	w->len = 0;
}

static void line(struct iolog_writer *w, uint64_t us, unsigned target, enum iolog_op op, bool io,
		 uint64_t off, uint32_t len)
{
	const size_t plen = w->plen[target];
	char *p;

	if (w->err)
		return;
	if (w->len + plen + LINE_MAX_FIXED > IOLOG_WBUF)
		iolog_writer_flush(w);
	p = w->buf + w->len;
	p = put_u64(p, us);
	*p++ = ' ';
	p = put_str(p, w->paths[target], plen);
	*p++ = ' ';
	p = put_str(p, op_names[op], strlen(op_names[op]));
	if (io) {
		*p++ = ' ';
		p = put_u64(p, off);
		*p++ = ' ';
		p = put_u64(p, len);
	}
	*p++ = '\n';
	w->len = (size_t)(p - w->buf);
}

void iolog_add(struct iolog_writer *w, uint64_t us, unsigned target, enum iolog_op op,
	       uint64_t off, uint32_t len)
{
	if (target < w->npaths)
		line(w, us, target, op, true, off, len);
}

int iolog_writer_open(struct iolog_writer *w, const char *path, const char *const *paths,
		      unsigned npaths, uint64_t t0_ns, struct err *e)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	for (unsigned i = 0; i < npaths; i++)
		if (strlen(paths[i]) > IOLOG_NAME_MAX || strpbrk(paths[i], " \t\r\n"))
			return err_set(e, EINVAL, "write_iolog: target '%s' cannot be named in an fio iolog "
				       "(a blank in it, or longer than %d bytes)", paths[i], IOLOG_NAME_MAX);
	w->buf = malloc(IOLOG_WBUF);
	w->plen = calloc(npaths ? npaths : 1, sizeof(*w->plen));
	if (!w->buf || !w->plen) {
		free(w->buf);
		free(w->plen);
		w->buf = NULL;
		w->plen = NULL;
		return err_set(e, ENOMEM, "write_iolog: out of memory");
	}
	for (unsigned i = 0; i < npaths; i++)
		w->plen[i] = strlen(paths[i]);
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		int err = errno;

		free(w->buf);
		free(w->plen);
		w->buf = NULL;
		w->plen = NULL;
		return err_set(e, err, "write_iolog: %s: %s", path, strerror(err));
	}
	w->paths = paths;
	w->npaths = npaths;
	w->t0_ns = t0_ns;
	memcpy(w->buf, hdr3, sizeof(hdr3) - 1);
	w->buf[sizeof(hdr3) - 1] = '\n';
	w->len = sizeof(hdr3);
	for (unsigned i = 0; i < npaths; i++)
		line(w, 0, i, IOLOG_ADD, false, 0, 0);
	for (unsigned i = 0; i < npaths; i++)
		line(w, 0, i, IOLOG_OPEN, false, 0, 0);
	return 0;
}

int iolog_writer_close(struct iolog_writer *w, uint64_t now_ns, struct err *e)
{
	int ret;

	if (!w->buf)
		return 0;
	for (unsigned i = 0; i < w->npaths; i++)
		line(w, now_ns > w->t0_ns ? (now_ns - w->t0_ns) / 1000 : 0, i, IOLOG_CLOSE, false, 0, 0);
	iolog_writer_flush(w);
	if (close(w->fd) < 0 && !w->err)
		w->err = -errno;
	ret = w->err;
	free(w->buf);
	free(w->plen);
	w->buf = NULL;
	w->plen = NULL;
	w->fd = -1;
	if (ret)
		return err_set(e, -ret, "write_iolog: %s: %s", w->path, strerror(-ret));
	return 0;
}
