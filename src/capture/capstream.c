/*
 * capstream.c - events to per-thread iolog streams; see capstream.h.
 */
#include "capture/capstream.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A descriptor whose file must be asked again (after an open, a close
 * or an exec); -1 is "not a file". */
#define FD_UNKNOWN (-2)
/* The fds map key of a process's exec: no descriptor is this. */
#define FD_EXEC (-1)

static const char hdr[] = "fio version 3 iolog\n";

/* ---- a small open-addressing map, uint64 -> int64; key 0 is empty ---- */

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static int64_t *map_slot(const struct cap_map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = mix(key) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == key)
			return &m->val[i];
	return NULL;
}

static int map_put(struct cap_map *m, uint64_t key, int64_t val)
{
	int64_t *v = map_slot(m, key);
	size_t i;

	if (v) {
		*v = val;
		return 0;
	}
	if ((m->n + 1) * 4 > m->cap * 3) {
		struct cap_map g = { 0 };

		g.cap = m->cap ? m->cap * 2 : 256;
		g.key = calloc(g.cap, sizeof(*g.key));
		g.val = calloc(g.cap, sizeof(*g.val));
		if (!g.key || !g.val) {
			free(g.key);
			free(g.val);
			return -ENOMEM;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->key[j])
				map_put(&g, m->key[j], m->val[j]);
		free(m->key);
		free(m->val);
		*m = g;
	}
	for (i = mix(key) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1))
		;
	m->key[i] = key;
	m->val[i] = val;
	m->n++;
	return 0;
}

static void map_free(struct cap_map *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

static uint64_t fd_key(int tgid, int fd)
{
	return ((uint64_t)(uint32_t)tgid << 32 | (uint32_t)fd) + 1;
}

/* The device in the top 24 bits, 40 of the inode: inodes past 2^40
 * could share a key, which would only mix two files' page counts. */
static uint64_t pg_key(uint64_t dev, uint64_t ino)
{
	return (dev << 40 | (ino & ((1ull << 40) - 1))) | 1ull << 63;
}

/* ---- lines ---------------------------------------------------------- */

static const char *action(enum cap_kind op)
{
	switch (op) {
	case CAP_READ:
		return "read";
	case CAP_WRITE:
		return "write";
	case CAP_SYNC:
		return "sync";
	default:
		return "datasync";
	}
}

/* @v in decimal at @p: its length. */
static size_t put_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* By hand rather than snprintf: a busy capture formats a line per
 * request, and printf's machinery was the reader's largest cost. */
size_t cap_line(char *buf, size_t cap, uint64_t us, const char *path, enum cap_kind op, uint64_t off,
		uint64_t len)
{
	const char *a = action(op);
	size_t lp = strlen(path), la = strlen(a), n = 0;

	/* A sync as fio writes one, "sync 0 0". */
	if (op == CAP_SYNC || op == CAP_DATASYNC)
		off = len = 0;
	if (3 * 20 + lp + la + 5 > cap)
		return 0;
	n += put_u64(buf + n, us);
	buf[n++] = ' ';
	memcpy(buf + n, path, lp);
	n += lp;
	buf[n++] = ' ';
	memcpy(buf + n, a, la);
	n += la;
	buf[n++] = ' ';
	n += put_u64(buf + n, off);
	buf[n++] = ' ';
	n += put_u64(buf + n, len);
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

void cap_stream_file(const struct cap_stream *st, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s.iolog", st->name);
}

int cap_event_push(struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq, const struct cap_event *e)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		struct cap_event *p = realloc(*ev, c * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*ev = p;
		*cap = c;
	}
	(*ev)[*n] = *e;
	(*ev)[(*n)++].seq = (*seq)++;
	return 0;
}

void cap_event_release(struct cap_event *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(ev[i].fi);
		ev[i].fi = NULL;
	}
}

bool cap_pseudo_fs(unsigned long magic)
{
	static const unsigned long pseudo[] = {
		0x9fa0,		/* proc */
		0x62656572,	/* sysfs */
		0x63677270,	/* cgroup2 */
		0x27e0eb,	/* cgroup */
		0x74726163,	/* tracefs */
		0x64626720,	/* debugfs */
		0x73636673,	/* securityfs */
		0xcafe4a11,	/* bpf */
	};

	for (unsigned i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if (magic == pseudo[i])
			return true;
	return false;
}

void capstate_init(struct cap_state *s, uint64_t t0, const struct cap_env *env)
{
	memset(s, 0, sizeof(*s));
	s->t0 = t0;
	s->env = *env;
}

void capstate_free(struct cap_state *s)
{
	for (unsigned i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	for (unsigned i = 0; i < s->nstreams; i++) {
		free(s->streams[i].files);
		free(s->streams[i].buf);
		free(s->streams[i].small);
	}
	free(s->files);
	free(s->streams);
	free(s->task);
	map_free(&s->tasks);
	map_free(&s->fds);
	map_free(&s->pg);
	map_free(&s->flt);
	map_free(&s->inodes);
	memset(s, 0, sizeof(*s));
}

static int grow(void **p, unsigned *cap, unsigned need, size_t size)
{
	void *q;
	unsigned c;

	if (need <= *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	q = realloc(*p, (size_t)c * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- tasks ----------------------------------------------------------- */

/* Task @tid, known or asked of the environment (a task already gone is
 * its own process, named "?"). NULL only when out of memory. */
static struct cap_task *task_of(struct cap_state *s, int tid)
{
	int64_t *v = map_slot(&s->tasks, (uint64_t)(uint32_t)tid + 1);
	struct cap_task *t;

	if (v && *v >= 0)
		return &s->task[*v];
	if (s->ntask == s->captask) {
		size_t cap = s->captask ? s->captask * 2 : 64;
		struct cap_task *p = realloc(s->task, cap * sizeof(*p));

		if (!p)
			return NULL;
		s->task = p;
		s->captask = cap;
	}
	t = &s->task[s->ntask];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->stream = -1;
	if (s->env.task_info(s->env.arg, tid, &t->tgid, t->comm) < 0) {
		t->tgid = tid;
		snprintf(t->comm, sizeof(t->comm), "?");
	}
	if (map_put(&s->tasks, (uint64_t)(uint32_t)tid + 1, (int64_t)s->ntask) < 0)
		return NULL;
	return &s->task[s->ntask++];
}

/* A new task: a thread shares its process's descriptors, a child
 * process starts with a copy of its parent's. */
static int new_task(struct cap_state *s, const struct cap_event *e)
{
	struct cap_task *parent = task_of(s, e->tid), *child;
	int ptgid, ctid = e->fd;
	uint64_t *keys;
	int64_t *vals;
	size_t n = 0;
	char comm[16];
	int ret = 0;

	if (!parent)
		return -ENOMEM;
	ptgid = parent->tgid;
	memcpy(comm, parent->comm, sizeof(comm));
	if (map_put(&s->tasks, (uint64_t)(uint32_t)ctid + 1, -1) < 0 || !(child = task_of(s, ctid)))
		return -ENOMEM;
	child->tgid = (e->len & CLONE_THREAD) ? ptgid : ctid;
	if (!strcmp(child->comm, "?"))
		memcpy(child->comm, comm, sizeof(comm));
	if ((e->len & CLONE_THREAD) || !s->fds.n)
		return 0;
	/* The copy, taken aside first: adding to the map may rebuild it. */
	keys = malloc(s->fds.n * sizeof(*keys));
	vals = malloc(s->fds.n * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->fds.cap; i++) {
		uint64_t k = s->fds.key[i] - 1;

		if (s->fds.key[i] && (int)(uint32_t)(k >> 32) == ptgid && (int32_t)(uint32_t)k != FD_EXEC) {
			keys[n] = fd_key(ctid, (int32_t)(uint32_t)k);
			vals[n++] = s->fds.val[i];
		}
	}
	for (size_t i = 0; i < n && !ret; i++)
		ret = map_put(&s->fds, keys[i], vals[i]);
	free(keys);
	free(vals);
	return ret;
}

static void forget_process(struct cap_state *s, int tgid)
{
	for (size_t i = 0; i < s->fds.cap; i++)
		if (s->fds.key[i] && (int)(uint32_t)((s->fds.key[i] - 1) >> 32) == tgid)
			s->fds.val[i] = FD_UNKNOWN;
}

/* ---- files ------------------------------------------------------------ */

static int file_of(struct cap_state *s, const struct cap_fdinfo *fi, uint32_t *idx)
{
	struct cap_file *f;

	for (unsigned i = s->nfiles; i-- > 0;)
		if (!strcmp(s->files[i].path, fi->path)) {
			*idx = i;
			return 0;
		}
	if (grow((void **)&s->files, &s->capfiles, s->nfiles + 1, sizeof(*s->files)) < 0)
		return -ENOMEM;
	f = &s->files[s->nfiles];
	memset(f, 0, sizeof(*f));
	f->path = strdup(fi->path);
	if (!f->path)
		return -ENOMEM;
	f->dev = fi->dev;
	f->ino = fi->ino;
	f->loggable = !strpbrk(fi->path, " \t\r\n") && fi->path[0];
	*idx = s->nfiles++;
	return 0;
}

/*
 * The file @fd of @tid's process: 1 with @idx, 0 when it is no file or
 * cannot be named (counted by the caller), -ENOMEM. @changed: the
 * descriptor is opened, closed or dropped by an exec later in the
 * events read, so what it is now is not what it was.
 */
static int name_fd(struct cap_state *s, struct cap_task *t, int fd, bool changed, uint32_t *idx,
		   bool *notfile)
{
	int64_t *v = map_slot(&s->fds, fd_key(t->tgid, fd));
	struct cap_fdinfo fi;

	*notfile = false;
	if (v && *v >= 0) {
		*idx = (uint32_t)*v;
		return 1;
	}
	if (v && *v == -1) {
		*notfile = true;
		return 0;
	}
	if (changed || s->env.fd_info(s->env.arg, t->tid, t->tgid, fd, &fi) < 0)
		return 0;
	if (!fi.file) {
		*notfile = true;
		return map_put(&s->fds, fd_key(t->tgid, fd), -1);
	}
	if (file_of(s, &fi, idx) < 0 || map_put(&s->fds, fd_key(t->tgid, fd), (int64_t)*idx) < 0)
		return -ENOMEM;
	return 1;
}

/* A request that named its file by inode: 1 with @idx when a CAP_NAME
 * said which file it is, else 0 (counted by the caller). */
static int name_inode(struct cap_state *s, const struct cap_event *e, uint32_t *idx, bool *notfile)
{
	int64_t *v = map_slot(&s->inodes, pg_key(e->dev, e->ino));

	*notfile = false;
	if (v && *v >= 0) {
		*idx = (uint32_t)*v;
		return 1;
	}
	if (v)
		*notfile = true;
	else
		s->unnamed_ino++;
	return 0;
}

/* ---- streams ------------------------------------------------------------ */

static int append(struct cap_stream *st, const char *text, size_t n)
{
	if (st->len + n > st->cap) {
		size_t cap = st->cap ? st->cap : CAP_STREAM_BUF;
		char *b;

		while (cap < st->len + n)
			cap *= 2;
		b = realloc(st->buf, cap);
		if (!b)
			return -ENOMEM;
		st->buf = b;
		st->cap = cap;
	}
	memcpy(st->buf + st->len, text, n);
	st->len += n;
	return 0;
}

static struct cap_stream *new_stream(struct cap_state *s, const char *comm, int tid, int tgid)
{
	struct cap_stream *st;
	char name[48], base[40];
	unsigned k = 1;

	if (grow((void **)&s->streams, &s->capstreams, s->nstreams + 1, sizeof(*s->streams)) < 0)
		return NULL;
	/* The name becomes a file name: no '/' or blanks, and unique (a
	 * tid may come back in a long capture). */
	snprintf(name, sizeof(name), tid ? "%s-%d" : "%s", comm, tid);
	for (char *p = name; *p; p++)
		if (*p == '/' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '.' || *p == ';' ||
		    *p == '[' || *p == ']' || *p == '=' || *p == ':')
			*p = '_';
	snprintf(base, sizeof(base), "%s", name);
	for (unsigned i = 0; i < s->nstreams; i++)
		if (!strcmp(s->streams[i].name, name)) {
			snprintf(name, sizeof(name), "%s~%u", base, ++k);
			i = (unsigned)-1;	/* again, from the first */
		}
	st = &s->streams[s->nstreams];
	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "%s", name);
	st->tid = tid;
	st->tgid = tgid;
	if (append(st, hdr, sizeof(hdr) - 1) < 0)
		return NULL;
	s->nstreams++;
	return st;
}

static int flush_stream(struct cap_state *s, struct cap_stream *st)
{
	char file[64];
	int ret;

	if (!st->len)
		return 0;
	cap_stream_file(st, file, sizeof(file));
	ret = s->env.write(s->env.arg, file, st->buf, st->len);
	if (ret < 0 && !s->err)
		s->err = ret;
	st->len = 0;
	st->flushed = true;
	return ret;
}

/* One request into a stream: the file's add and open lines first. */
static int stream_add(struct cap_state *s, struct cap_stream *st, uint64_t us, uint32_t file, uint8_t op,
		      uint64_t off, uint64_t len)
{
	const char *path = s->files[file].path;
	char line[4200];
	size_t n;
	bool seen = false;

	if (us < st->last_us)
		us = st->last_us;	/* the events are in order; a tie stays one */
	for (unsigned i = 0; i < st->nfiles && !seen; i++)
		seen = st->files[i] == file;
	if (!seen) {
		if (grow((void **)&st->files, &st->capfiles, st->nfiles + 1, sizeof(*st->files)) < 0)
			return -ENOMEM;
		st->files[st->nfiles++] = file;
		n = (size_t)snprintf(line, sizeof(line), "%llu %s add\n%llu %s open\n", (unsigned long long)us,
				     path, (unsigned long long)us, path);
		if (n >= sizeof(line) || append(st, line, n) < 0)
			return -ENOMEM;
	}
	n = cap_line(line, sizeof(line), us, path, op, off, len);
	if (!n || append(st, line, n) < 0)
		return -ENOMEM;
	if (!st->requests)
		st->first_us = us;
	st->last_us = us;
	st->requests++;
	st->reads += op == CAP_READ;
	st->writes += op == CAP_WRITE;
	st->syncs += op == CAP_SYNC || op == CAP_DATASYNC;
	if (st->requests <= CAP_SMALL_STREAM) {
		struct cap_req *r = realloc(st->small, st->requests * sizeof(*r));

		if (!r)
			return -ENOMEM;
		st->small = r;
		r[st->nsmall++] = (struct cap_req){ .us = us, .off = off, .len = len, .file = file, .op = op };
	} else if (st->small) {
		free(st->small);
		st->small = NULL;
		st->nsmall = 0;
	}
	if (st->len >= CAP_STREAM_BUF && st->requests > CAP_SMALL_STREAM)
		flush_stream(s, st);
	return 0;
}

static int request(struct cap_state *s, const struct cap_event *e, bool changed)
{
	struct cap_task *t = task_of(s, e->tid);
	struct cap_stream *st;
	struct cap_file *f;
	uint32_t idx;
	bool notfile;
	int ret;

	if (!t)
		return -ENOMEM;
	if (e->fd == CAP_FD_INODE)
		ret = name_inode(s, e, &idx, &notfile);
	else
		ret = name_fd(s, t, e->fd, changed, &idx, &notfile);
	if (ret <= 0) {
		if (!ret && notfile)
			s->notfile++;
		else if (!ret) {
			s->unnamed++;
			s->unnamed_op[e->kind]++;
		}
		return ret;
	}
	f = &s->files[idx];
	if (e->kind == CAP_READ) {
		f->reads++;
		f->read_bytes += e->len;
	} else if (e->kind == CAP_WRITE) {
		f->writes++;
		f->written_bytes += e->len;
	} else {
		f->syncs++;
	}
	if (!f->loggable) {
		s->unloggable++;
		return 0;
	}
	if (t->stream < 0) {
		/* Named when it first asks: its name now, after any exec. */
		char comm[16];
		int tgid;

		if (s->env.task_info(s->env.arg, t->tid, &tgid, comm) == 0)
			memcpy(t->comm, comm, sizeof(comm));
		st = new_stream(s, t->comm, t->tid, t->tgid);
		if (!st)
			return -ENOMEM;
		t->stream = (int)(st - s->streams);
	}
	st = &s->streams[t->stream];
	s->requests++;
	return stream_add(s, st, e->ts > s->t0 ? (e->ts - s->t0) / 1000 : 0, idx, e->kind, e->off, e->len);
}

static int mapping(struct cap_state *s, const struct cap_event *e, bool changed)
{
	struct cap_task *t = task_of(s, e->tid);
	uint32_t idx;
	bool notfile;
	int ret;

	if (!t)
		return -ENOMEM;
	ret = name_fd(s, t, e->fd, changed, &idx, &notfile);
	if (ret <= 0)
		return ret;
	/* MAP_SHARED is 0x01 on every Linux architecture. */
	if (e->off & 0x01) {
		s->files[idx].shared_maps++;
		s->files[idx].mapped_bytes += e->len;
	} else {
		s->private_maps++;
	}
	return 0;
}

/* Page-cache additions or faults, per (device, inode) until the end. */
static int per_inode(struct cap_map *m, const struct cap_event *e)
{
	uint64_t k = pg_key((uint64_t)(uint32_t)e->fd, e->off);
	int64_t *v = map_slot(m, k);

	if (v) {
		*v += (int64_t)e->len;
		return 0;
	}
	return map_put(m, k, (int64_t)e->len);
}

/* ---- feeding ------------------------------------------------------------- */

/* An open that says what it opened: the descriptor is named now, so a
 * file opened and closed between two reads of the trace (gone from /proc
 * when its requests are taken) is still logged. */
static int named_open(struct cap_state *s, const struct cap_task *t, const struct cap_event *e)
{
	uint32_t idx;

	if (!e->fi->file)
		return map_put(&s->fds, fd_key(t->tgid, e->fd), -1);
	if (file_of(s, e->fi, &idx) < 0)
		return -ENOMEM;
	return map_put(&s->fds, fd_key(t->tgid, e->fd), (int64_t)idx);
}

static int named_inode(struct cap_state *s, const struct cap_event *e)
{
	uint32_t idx;

	if (file_of(s, e->fi, &idx) < 0)
		return -ENOMEM;
	return map_put(&s->inodes, pg_key(e->dev, e->ino), (int64_t)idx);
}

static bool is_request(uint8_t k)
{
	return k <= CAP_DATASYNC;
}

/* For each descriptor (and each process's exec), the index of the last
 * event in @ev[0..n) that changes it. */
static int last_changes(struct cap_state *s, const struct cap_event *ev, size_t n, struct cap_map *chg)
{
	for (size_t i = 0; i < n; i++) {
		struct cap_task *t;
		int fd;

		if (ev[i].kind != CAP_OPEN && ev[i].kind != CAP_CLOSE && ev[i].kind != CAP_EXEC)
			continue;
		t = task_of(s, ev[i].tid);
		if (!t)
			return -ENOMEM;
		fd = ev[i].kind == CAP_EXEC ? FD_EXEC : ev[i].fd;
		if (map_put(chg, fd_key(t->tgid, fd), (int64_t)i) < 0)
			return -ENOMEM;
	}
	return 0;
}

static bool changed_after(struct cap_state *s, const struct cap_map *chg, const struct cap_event *e, size_t i)
{
	struct cap_task *t;
	int64_t *v;

	if (!chg->n || !(t = task_of(s, e->tid)))
		return false;
	v = map_slot(chg, fd_key(t->tgid, e->fd));
	if (v && (size_t)*v > i)
		return true;
	v = map_slot(chg, fd_key(t->tgid, FD_EXEC));
	return v && (size_t)*v > i;
}

static int feed_one(struct cap_state *s, const struct cap_event *e, bool changed)
{
	struct cap_task *t;

	switch (e->kind) {
	case CAP_READ:
	case CAP_WRITE:
	case CAP_SYNC:
	case CAP_DATASYNC:
		return request(s, e, changed);
	case CAP_OPEN:
	case CAP_CLOSE:
		t = task_of(s, e->tid);
		if (!t)
			return -ENOMEM;
		if (e->kind == CAP_OPEN && e->fi)
			return named_open(s, t, e);
		if (map_slot(&s->fds, fd_key(t->tgid, e->fd)))
			return map_put(&s->fds, fd_key(t->tgid, e->fd), FD_UNKNOWN);
		return 0;
	case CAP_NEWTASK:
		return new_task(s, e);
	case CAP_EXIT: {
		int64_t *v = map_slot(&s->tasks, (uint64_t)(uint32_t)e->tid + 1);

		/* A later task with this tid is another one; a process whose
		 * leader ended takes its descriptors along (a new process
		 * may get its pid). */
		if (v && *v >= 0 && s->task[*v].tid == s->task[*v].tgid)
			forget_process(s, s->task[*v].tgid);
		if (v)
			*v = -1;
		return 0;
	}
	case CAP_EXEC:
		t = task_of(s, e->tid);
		if (!t)
			return -ENOMEM;
		forget_process(s, t->tgid);
		return 0;
	case CAP_MMAP:
		return mapping(s, e, changed);
	case CAP_URING:
		s->uring_calls++;
		s->uring_sqes += e->len;
		return 0;
	case CAP_AIO:
		s->aio_calls++;
		s->aio_iocbs += e->len;
		return 0;
	case CAP_PGADD:
		return per_inode(&s->pg, e);
	case CAP_FAULT:
		return per_inode(&s->flt, e);
	case CAP_NAME:
		if (!e->fi)
			return 0;
		if (!e->fi->file)
			return map_put(&s->inodes, pg_key(e->dev, e->ino), -1);
		return named_inode(s, e);
	default:
		return 0;
	}
}

int capstate_feed(struct cap_state *s, const struct cap_event *ev, size_t n, size_t nemit)
{
	struct cap_map chg = { 0 };
	int ret = last_changes(s, ev, n, &chg);

	for (size_t i = 0; !ret && i < nemit; i++)
		ret = feed_one(s, &ev[i], (is_request(ev[i].kind) || ev[i].kind == CAP_MMAP) &&
			       changed_after(s, &chg, &ev[i], i));
	map_free(&chg);
	return ret;
}

/* ---- the end --------------------------------------------------------------- */

static int req_cmp(const void *a, const void *b)
{
	const struct cap_req *x = a, *y = b;

	if (x->us != y->us)
		return x->us < y->us ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static bool small(const struct cap_state *s, const struct cap_stream *st)
{
	return !st->flushed && st->small && st->requests <= CAP_SMALL_STREAM && st->requests * 100 < s->requests;
}

/* Small streams into one: their requests in time order. */
static int merge_small(struct cap_state *s)
{
	unsigned nsmall = 0, n = s->nstreams;
	struct cap_req *all;
	size_t nall = 0;
	struct cap_stream *m;

	for (unsigned i = 0; i < n; i++)
		nsmall += small(s, &s->streams[i]);
	if (nsmall < 2)
		return 0;
	all = malloc((size_t)nsmall * CAP_SMALL_STREAM * sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		struct cap_stream *st = &s->streams[i];

		if (!small(s, st))
			continue;
		memcpy(all + nall, st->small, st->nsmall * sizeof(*all));
		nall += st->nsmall;
		st->merged = true;
		st->len = 0;
	}
	/* Each stream's own order stands where times are equal. */
	for (size_t i = 0; i < nall; i++)
		all[i].seq = (uint32_t)i;
	qsort(all, nall, sizeof(*all), req_cmp);
	m = new_stream(s, "merged", 0, 0);
	if (!m) {
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nall; i++)
		if (stream_add(s, m, all[i].us, all[i].file, all[i].op, all[i].off, all[i].len) < 0) {
			free(all);
			return -ENOMEM;
		}
	s->merged = nsmall;
	free(all);
	return 0;
}

/* @m's counts onto the files of their device and inode; the rest to
 * *other. Faults count only on files mapped shared (a program's own
 * text and libraries fault too, privately). */
static void match_inodes(struct cap_state *s, const struct cap_map *m, bool faults, uint64_t *other)
{
	for (size_t i = 0; i < m->cap; i++) {
		bool found = false;

		if (!m->key[i])
			continue;
		for (unsigned f = 0; f < s->nfiles && !found; f++) {
			struct cap_file *cf = &s->files[f];

			if (!cf->ino || pg_key(cf->dev, cf->ino) != m->key[i] || (faults && !cf->shared_maps))
				continue;
			if (faults) {
				cf->faults += (uint64_t)m->val[i];
			} else {
				cf->pgadd += (uint64_t)m->val[i];
				cf->pgadd_seen = true;
			}
			found = true;
		}
		if (!found)
			*other += (uint64_t)m->val[i];
	}
}

int capstate_finish(struct cap_state *s)
{
	int ret = merge_small(s);

	if (ret)
		return ret;
	for (unsigned i = 0; i < s->nstreams; i++) {
		struct cap_stream *st = &s->streams[i];

		if (st->merged || !st->requests)
			continue;
		for (unsigned f = 0; f < st->nfiles; f++) {
			char line[4200];
			int n = snprintf(line, sizeof(line), "%llu %s close\n", (unsigned long long)st->last_us,
					 s->files[st->files[f]].path);

			if (n < 0 || (size_t)n >= sizeof(line) || append(st, line, (size_t)n) < 0)
				return -ENOMEM;
		}
		flush_stream(s, st);
	}
	match_inodes(s, &s->pg, false, &s->pg_other);
	match_inodes(s, &s->flt, true, &s->flt_other);
	return s->err;
}
