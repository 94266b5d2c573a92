/*
 * procfs.c - parsers and pread-based sources for /proc; see procfs.h.
 *
 * The parsers never trust the text: every scan is bounded by the buffer
 * length (the buffers are not NUL-terminated as far as the parsers know),
 * numbers are checked for overflow, and a malformed line gives -EBADMSG
 * rather than a guess. They are fuzzed.
 */
#include "telemetry/procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lib/readfile.h"

/* First buffer of a source: one page holds a small /proc file in one go;
 * larger files (interrupts on a big host is > 100 KiB) grow it once. */
#define PROCFS_SRC_INITIAL 4096

/* PF_KTHREAD from include/linux/sched.h: field 9 of /proc/PID/stat. */
#define PROCFS_PF_KTHREAD 0x00200000u

const char *procfs_root(void)
{
	const char *r = getenv("FAULTLINE_PROC");

	return r && *r ? r : "/proc";
}

long procfs_clk_tck(void)
{
	long hz = sysconf(_SC_CLK_TCK);

	/* USER_HZ has been 100 on every Linux architecture since 2.6. */
	return hz > 0 ? hz : 100;
}

/* ---- sources ---- */

int procfs_src_open(struct procfs_src *src, const char *root, const char *relpath)
{
	char path[PATH_MAX];
	int n;

	memset(src, 0, sizeof(*src));
	src->fd = -1;
	n = snprintf(path, sizeof(path), "%s/%s", root, relpath);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	src->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (src->fd < 0)
		return -errno;
	src->buf = malloc(PROCFS_SRC_INITIAL);
	if (!src->buf) {
		close(src->fd);
		src->fd = -1;
		return -ENOMEM;
	}
	src->cap = PROCFS_SRC_INITIAL;
	src->buf[0] = '\0';
	return 0;
}

int procfs_src_prealloc(struct procfs_src *src, size_t cap)
{
	memset(src, 0, sizeof(*src));
	src->fd = -1;
	src->buf = malloc(cap ? cap : 1);
	if (!src->buf)
		return -ENOMEM;
	/* Touched now, not at the first read. */
	memset(src->buf, 0, cap ? cap : 1);
	src->cap = cap ? cap : 1;
	return 0;
}

int procfs_src_attach(struct procfs_src *src, const char *root, const char *relpath)
{
	char path[PATH_MAX];
	int n;

	if (!src->buf)
		return procfs_src_open(src, root, relpath);
	if (src->fd >= 0)
		close(src->fd);
	src->fd = -1;
	n = snprintf(path, sizeof(path), "%s/%s", root, relpath);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	src->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (src->fd < 0)
		return -errno;
	src->buf[0] = '\0';
	src->len = 0;
	return 0;
}

/*
 * A seq_file read returns at most about one page (or one record) per
 * call even when more follows, so a short read does not mean the end:
 * keep reading at the growing offset until the kernel returns 0. Reading
 * in order keeps seq_file from re-walking the file for each piece.
 */
ssize_t procfs_src_read(struct procfs_src *src)
{
	size_t off = 0;
	ssize_t n;

	if (src->fd < 0)
		return -EBADF;
	for (;;) {
		if (src->cap - off < 2) {
			size_t cap = src->cap * 2;
			char *nb = realloc(src->buf, cap);

			if (!nb)
				return -ENOMEM;
			src->buf = nb;
			src->cap = cap;
		}
		n = pread(src->fd, src->buf + off, src->cap - 1 - off, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	src->buf[off] = '\0';
	src->len = off;
	return (ssize_t)off;
}

ssize_t procfs_src_read_record(struct procfs_src *src)
{
	ssize_t n;

	if (src->fd < 0)
		return -EBADF;
	if (src->cap < 2)
		return procfs_src_read(src);
	do
		n = pread(src->fd, src->buf, src->cap - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* A record that filled the buffer may go on: read it all. */
	if ((size_t)n == src->cap - 1)
		return procfs_src_read(src);
	src->buf[n] = '\0';
	src->len = (size_t)n;
	return n;
}

void procfs_src_close(struct procfs_src *src)
{
	if (src->fd >= 0)
		close(src->fd);
	free(src->buf);
	src->fd = -1;
	src->buf = NULL;
	src->cap = 0;
	src->len = 0;
}

/* ---- scanning helpers ---- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

int procfs_scan_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	while (s < end && is_blank(*s))
		s++;
	if (s >= end || !isdigit((unsigned char)*s))
		return -EBADMSG;
	while (s < end && isdigit((unsigned char)*s)) {
		unsigned d = (unsigned)(*s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -EBADMSG;
		x = x * 10 + d;
		s++;
	}
	*p = s;
	*v = x;
	return 0;
}

/* End of the line that starts at @p (the '\n' or @end). */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* Does [p, end) start with the word @w followed by a blank, ':' or end? */
static bool starts_with(const char *p, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - p) >= n && memcmp(p, w, n) == 0;
}

/* ---- /proc/interrupts ---- */

/* Header: blanks then "CPU0       CPU1 ..." (offline CPUs leave gaps in
 * the numbers, so count tokens, not the highest number). */
static int count_cpu_columns(const char *p, const char *end, unsigned *ncpu)
{
	unsigned n = 0;

	while (p < end) {
		p = skip_blanks(p, end);
		if (p >= end)
			break;
		if (!starts_with(p, end, "CPU"))
			return -EBADMSG;
		p += 3;
		if (p >= end || !isdigit((unsigned char)*p))
			return -EBADMSG;
		while (p < end && !is_blank(*p))
			p++;
		n++;
	}
	if (n == 0)
		return -EBADMSG;
	*ncpu = n;
	return 0;
}

int procfs_parse_tlb(const char *buf, size_t len, uint64_t *total, unsigned *ncpu)
{
	const char *end = buf + len, *p = buf, *le;
	unsigned cols, i;
	uint64_t sum = 0, v;
	int ret;

	if (len == 0)
		return -EBADMSG;
	le = line_end(p, end);
	ret = count_cpu_columns(p, le, &cols);
	if (ret)
		return ret;
	for (p = le + (le < end); p < end; p = le + (le < end)) {
		le = line_end(p, end);
		p = skip_blanks(p, le);
		if (!starts_with(p, le, "TLB:"))
			continue;
		p += 4;
		for (i = 0; i < cols; i++) {
			ret = procfs_scan_u64(&p, le, &v);
			if (ret)
				return ret;
			sum += v;
		}
		*total = sum;
		if (ncpu)
			*ncpu = cols;
		return 0;
	}
	return -ENOENT;
}

/* ---- "key value" files: vmstat, meminfo ---- */

/* Which of @names[0..@nr) is [s, s+n)? -1: none. */
static int name_index(const char *const *names, int nr, const char *s, size_t n)
{
	for (int i = 0; i < nr; i++)
		if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0)
			return i;
	return -1;
}

/* A table's name of @key, "?" past its end. */
static const char *name_of(const char *const *names, int nr, int key)
{
	return (unsigned)key < (unsigned)nr ? names[key] : "?";
}

static const char *const vm_names[PROCFS_VM_NR] = {
	[PROCFS_VM_PGSCAN_KSWAPD] = "pgscan_kswapd",
	[PROCFS_VM_PGSCAN_DIRECT] = "pgscan_direct",
	[PROCFS_VM_PGSTEAL_KSWAPD] = "pgsteal_kswapd",
	[PROCFS_VM_PGSTEAL_DIRECT] = "pgsteal_direct",
	[PROCFS_VM_PGMAJFAULT] = "pgmajfault",
	[PROCFS_VM_PGFAULT] = "pgfault",
	[PROCFS_VM_PGPGIN] = "pgpgin",
	[PROCFS_VM_WORKINGSET_REFAULT_FILE] = "workingset_refault_file",
	[PROCFS_VM_PGSCAN_ANON] = "pgscan_anon",
	[PROCFS_VM_PGSCAN_FILE] = "pgscan_file",
	[PROCFS_VM_PGSTEAL_ANON] = "pgsteal_anon",
	[PROCFS_VM_PGSTEAL_FILE] = "pgsteal_file",
};

const char *procfs_vm_name(enum procfs_vm_key key)
{
	return name_of(vm_names, PROCFS_VM_NR, (int)key);
}

/* Zone suffixes of the per-zone reclaim counters of kernels before 4.8
 * (mm/vmstat.c TEXTS_FOR_ZONES). Listing them, rather than accepting any
 * "pgscan_direct_*", keeps pgscan_direct_throttle out of the sum. */
static const char *const zone_suffixes[] = {
	"dma", "dma32", "normal", "high", "movable", "device",
};

static bool is_zone_suffix(const char *s, size_t n)
{
	return name_index(zone_suffixes, (int)(sizeof(zone_suffixes) / sizeof(zone_suffixes[0])), s, n) >= 0;
}

/* Which key does the name [s, s+n) count towards? -1: none. */
static int vm_key_of(const char *s, size_t n)
{
	int k;

	for (k = 0; k < PROCFS_VM_NR; k++) {
		size_t kl = strlen(vm_names[k]);

		if (n < kl || memcmp(s, vm_names[k], kl) != 0)
			continue;
		if (n == kl)
			return k;
		/* Only the reclaim counters were ever split by zone. */
		if (k <= PROCFS_VM_PGSTEAL_DIRECT && s[kl] == '_' &&
		    is_zone_suffix(s + kl + 1, n - kl - 1))
			return k;
	}
	return -1;
}

int procfs_parse_vmstat(const char *buf, size_t len, struct procfs_vmstat *out)
{
	const char *end = buf + len, *p, *le, *name;
	uint64_t v;
	int k, ret;

	memset(out, 0, sizeof(*out));
	for (p = buf; p < end; p = le + (le < end)) {
		le = line_end(p, end);
		name = p;
		while (p < le && !is_blank(*p))
			p++;
		k = vm_key_of(name, (size_t)(p - name));
		if (k < 0)
			continue;
		ret = procfs_scan_u64(&p, le, &v);
		if (ret)
			return ret;
		out->v[k] += v;
		out->present |= 1u << k;
	}
	return 0;
}

static const char *const mem_names[PROCFS_MEM_NR] = {
	[PROCFS_MEM_TOTAL] = "MemTotal",
	[PROCFS_MEM_FREE] = "MemFree",
	[PROCFS_MEM_AVAILABLE] = "MemAvailable",
	[PROCFS_MEM_BUFFERS] = "Buffers",
	[PROCFS_MEM_CACHED] = "Cached",
	[PROCFS_MEM_DIRTY] = "Dirty",
	[PROCFS_MEM_WRITEBACK] = "Writeback",
};

const char *procfs_mem_name(enum procfs_mem_key key)
{
	return name_of(mem_names, PROCFS_MEM_NR, (int)key);
}

int procfs_parse_meminfo(const char *buf, size_t len, struct procfs_meminfo *out)
{
	const char *end = buf + len, *p, *le, *colon;
	uint64_t v;
	int k, ret;

	memset(out, 0, sizeof(*out));
	for (p = buf; p < end; p = le + (le < end)) {
		le = line_end(p, end);
		colon = memchr(p, ':', (size_t)(le - p));
		if (!colon)
			continue;
		k = name_index(mem_names, PROCFS_MEM_NR, p, (size_t)(colon - p));
		if (k < 0)
			continue;
		p = colon + 1;
		ret = procfs_scan_u64(&p, le, &v);
		if (ret)
			return ret;
		/* Every line we read is "NNN kB"; a bare number would be a
		 * page count (HugePages_*), which we do not ask for. */
		p = skip_blanks(p, le);
		if (!starts_with(p, le, "kB") || v > UINT64_MAX / 1024)
			return -EBADMSG;
		out->bytes[k] = v * 1024;
		out->present |= 1u << k;
	}
	return 0;
}

/* ---- /proc/stat ---- */

int procfs_parse_stat(const char *buf, size_t len, struct procfs_cpu *out)
{
	const char *end = buf + len, *p, *le;
	uint64_t *f[] = { &out->user, &out->nice, &out->system, &out->idle,
			  &out->iowait, &out->irq, &out->softirq, &out->steal };
	bool found = false;
	unsigned i;
	int ret;

	memset(out, 0, sizeof(*out));
	for (p = buf; p < end; p = le + (le < end)) {
		le = line_end(p, end);
		if (!starts_with(p, le, "cpu"))
			continue;
		p += 3;
		if (p < le && isdigit((unsigned char)*p)) {
			out->ncpu++;
			continue;
		}
		if (found)
			return -EBADMSG;
		/* steal arrived in 2.6.11; older kernels are not supported. */
		for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			ret = procfs_scan_u64(&p, le, f[i]);
			if (ret)
				return ret;
		}
		found = true;
	}
	return found ? 0 : -ENOENT;
}

/* ---- task stat ---- */

int procfs_parse_starttime(const char *buf, size_t len, uint64_t *start)
{
	const char *end = buf + len, *p = memrchr(buf, ')', len);

	if (!p)
		return -EBADMSG;
	p++;
	/* Fields 3 (state) to 21 as tokens: some can be negative. */
	for (unsigned f = 3; f <= 21; f++) {
		p = skip_blanks(p, end);
		if (p >= end || *p == '\n')
			return -EBADMSG;
		while (p < end && !is_blank(*p) && *p != '\n')
			p++;
	}
	return procfs_scan_u64(&p, end, start);
}

int procfs_parse_task_stat(const char *buf, size_t len, struct procfs_task *out)
{
	const char *end = buf + len, *p;
	uint64_t v[13];	/* fields 3 (state) .. 15 (stime); [0] unused */
	unsigned i;
	int ret;

	/* The last ')' closes comm whatever comm holds. */
	p = memrchr(buf, ')', len);
	if (!p)
		return -EBADMSG;
	p++;
	p = skip_blanks(p, end);
	/* Field 3 is the one-letter state. */
	if (p >= end || !isalpha((unsigned char)*p))
		return -EBADMSG;
	p++;
	for (i = 1; i < sizeof(v) / sizeof(v[0]); i++) {
		/* Fields 4..8 (ppid, pgrp, session, tty_nr, tpgid) can be
		 * negative; skip them as tokens. */
		if (i <= 5) {
			p = skip_blanks(p, end);
			if (p >= end || *p == '\n')
				return -EBADMSG;
			while (p < end && !is_blank(*p) && *p != '\n')
				p++;
			continue;
		}
		ret = procfs_scan_u64(&p, end, &v[i]);
		if (ret)
			return ret;
	}
	/* v[i] holds field i + 3. */
	if (v[6] > UINT32_MAX)
		return -EBADMSG;
	out->flags = (unsigned)v[6];
	out->minflt = v[7];
	out->majflt = v[9];
	out->utime = v[11];
	out->stime = v[12];
	return 0;
}

/* A thread's @file under /proc: <pid>/task/<tid>/, or self/task/<tid>/
 * when @pid is 0; attached (procfs_src_attach) or opened. */
static int task_file(struct procfs_src *src, const char *root, pid_t pid, pid_t tid, const char *file,
		     bool attach)
{
	char rel[80];

	if (pid > 0)
		snprintf(rel, sizeof(rel), "%d/task/%d/%s", (int)pid, (int)tid, file);
	else
		snprintf(rel, sizeof(rel), "self/task/%d/%s", (int)tid, file);
	return attach ? procfs_src_attach(src, root, rel) : procfs_src_open(src, root, rel);
}

int procfs_task_open(struct procfs_src *src, const char *root, pid_t pid, pid_t tid)
{
	return task_file(src, root, pid, tid, "stat", false);
}

int procfs_parse_schedstat(const char *buf, size_t len, uint64_t *cpu_ns)
{
	const char *p = buf, *end = buf + len;
	uint64_t wait;

	if (procfs_scan_u64(&p, end, cpu_ns) < 0 || procfs_scan_u64(&p, end, &wait) < 0)
		return -EBADMSG;
	return 0;
}

int procfs_schedstat_open(struct procfs_src *src, const char *root, pid_t pid, pid_t tid)
{
	return task_file(src, root, pid, tid, "schedstat", false);
}

int procfs_fd_room(unsigned n)
{
	struct rlimit rl;
	int lo, top, fd, ret = 0;

	/* The lowest free descriptor; a duplicate at or above @lo + @n
	 * makes the table that large, and it never shrinks. */
	lo = open("/", O_PATH | O_CLOEXEC);
	if (lo < 0)
		return -errno;
	top = lo + (int)(n < INT_MAX / 2 ? n : INT_MAX / 2);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (rlim_t)top >= rl.rlim_cur)
		top = (int)rl.rlim_cur - 1;
	if (top > lo) {
		fd = fcntl(lo, F_DUPFD_CLOEXEC, top);
		if (fd < 0)
			ret = -errno;
		else
			close(fd);
	}
	close(lo);
	return ret;
}

int procfs_task_attach(struct procfs_src *src, const char *root, pid_t pid, pid_t tid, const char *file)
{
	return task_file(src, root, pid, tid, file, true);
}

int procfs_task_read(struct procfs_src *src, struct procfs_task *out)
{
	ssize_t n = procfs_src_read_record(src);

	if (n < 0)
		return (int)n;
	return procfs_parse_task_stat(src->buf, src->len, out);
}

/* ---- kswapd ---- */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Read a small file <root>/<rel> into @buf (NUL-terminated, trailing
 * newline dropped). */
int procfs_read_small(const char *root, const char *rel, char *buf, size_t cap)
{
	char path[PATH_MAX];
	int n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	n = readfile_small(path, buf, cap);
	if (n < 0)
		return n;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return 0;
}

/* kswapd2 before kswapd10: shorter name first, then by text. */
static int kswapd_cmp(const void *a, const void *b)
{
	const struct procfs_kswapd_thread *x = a, *y = b;
	size_t lx = strlen(x->name), ly = strlen(y->name);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Scan <root> for kswapd kernel threads into a sorted, allocated array
 * (sources not opened). */
static int kswapd_scan(const char *root, struct procfs_kswapd_thread **out, unsigned *nout)
{
	struct procfs_kswapd_thread *t = NULL, *nt;
	unsigned n = 0, cap = 0;
	/* Kernel threads may show names longer than TASK_COMM_LEN (6.x). */
	char rel[64], comm[64], stat[2048];
	struct procfs_task task;
	struct dirent *de;
	DIR *d;
	int ret = 0;

	d = opendir(root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!all_digits(de->d_name) || strlen(de->d_name) > 10)
			continue;
		snprintf(rel, sizeof(rel), "%.10s/comm", de->d_name);
		/* A process may exit between readdir and open: skip it. */
		if (procfs_read_small(root, rel, comm, sizeof(comm)) ||
		    strncmp(comm, "kswapd", 6) != 0)
			continue;
		snprintf(rel, sizeof(rel), "%.10s/stat", de->d_name);
		if (procfs_read_small(root, rel, stat, sizeof(stat)) ||
		    procfs_parse_task_stat(stat, strlen(stat), &task) ||
		    !(task.flags & PROCFS_PF_KTHREAD))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 4;
			nt = realloc(t, cap * sizeof(*t));
			if (!nt) {
				ret = -ENOMEM;
				goto out;
			}
			t = nt;
		}
		memset(&t[n], 0, sizeof(t[n]));
		t[n].pid = (pid_t)atoi(de->d_name);
		snprintf(t[n].name, sizeof(t[n].name), "%.15s", comm);
		t[n].ticks = task.utime + task.stime;
		t[n].src.fd = -1;
		n++;
	}
	if (n)
		qsort(t, n, sizeof(*t), kswapd_cmp);
out:
	closedir(d);
	if (ret) {
		free(t);
		return ret;
	}
	*out = t;
	*nout = n;
	return 0;
}

int procfs_kswapd_find(const char *root, pid_t *pids,
		       char (*names)[PROCFS_COMM_MAX], unsigned max)
{
	struct procfs_kswapd_thread *t;
	unsigned n, i;
	int ret;

	ret = kswapd_scan(root, &t, &n);
	if (ret)
		return ret;
	for (i = 0; i < n && i < max; i++) {
		if (pids)
			pids[i] = t[i].pid;
		if (names)
			memcpy(names[i], t[i].name, PROCFS_COMM_MAX);
	}
	free(t);
	return (int)n;
}

int procfs_kswapd_open(struct procfs_kswapd *k, const char *root)
{
	char rel[32];
	unsigned i;
	int ret;

	memset(k, 0, sizeof(*k));
	ret = kswapd_scan(root, &k->t, &k->n);
	if (ret)
		return ret;
	if (k->n == 0) {
		free(k->t);
		k->t = NULL;
		return -ENOENT;
	}
	for (i = 0; i < k->n; i++) {
		snprintf(rel, sizeof(rel), "%d/stat", (int)k->t[i].pid);
		ret = procfs_src_open(&k->t[i].src, root, rel);
		if (ret)
			goto out_close;
	}
	return 0;

out_close:
	procfs_kswapd_close(k);
	return ret;
}

int procfs_kswapd_read(struct procfs_kswapd *k, uint64_t *ticks)
{
	struct procfs_task task;
	uint64_t sum = 0;
	unsigned i;
	int ret;

	for (i = 0; i < k->n; i++) {
		ret = procfs_task_read(&k->t[i].src, &task);
		if (ret)
			return ret;
		k->t[i].ticks = task.utime + task.stime;
		sum += k->t[i].ticks;
	}
	*ticks = sum;
	return 0;
}

void procfs_kswapd_close(struct procfs_kswapd *k)
{
	unsigned i;

	for (i = 0; i < k->n; i++)
		procfs_src_close(&k->t[i].src);
	free(k->t);
	k->t = NULL;
	k->n = 0;
}

/* ---- probe ---- */

static void probe_fail(struct procfs_probe_src *s, int err, const char *fmt, const char *arg)
{
	s->err = err;
	snprintf(s->why, sizeof(s->why), fmt, arg, strerror(-err));
}

/* Open and read <root>/<rel> once into @src; on failure fill @s. */
static int probe_read(struct procfs_src *src, const char *root, const char *rel,
		      struct procfs_probe_src *s)
{
	char path[PATH_MAX];
	ssize_t n;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ret = procfs_src_open(src, root, rel);
	if (ret) {
		probe_fail(s, ret, "cannot open %s: %s", path);
		return ret;
	}
	n = procfs_src_read(src);
	if (n < 0) {
		probe_fail(s, (int)n, "cannot read %s: %s", path);
		procfs_src_close(src);
		return (int)n;
	}
	return 0;
}

static void probe_parsed(struct procfs_probe_src *s, int ret, const char *root, const char *rel)
{
	char path[PATH_MAX];

	if (!ret)
		return;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	probe_fail(s, ret, "%s is not in the expected format: %s", path);
}

int procfs_probe(const char *root, long hz, pid_t tid, struct procfs_probe *out)
{
	struct procfs_kswapd_thread *t = NULL;
	struct procfs_src src;
	char rel[64];
	unsigned n, i;
	int ret;

	memset(out, 0, sizeof(*out));

	if (!probe_read(&src, root, "interrupts", &out->tlb)) {
		ret = procfs_parse_tlb(src.buf, src.len, &out->tlb_total, &out->ncpu);
		if (ret == -ENOENT) {
			out->tlb.err = ret;
			snprintf(out->tlb.why, sizeof(out->tlb.why), "%s", PROCFS_TLB_ABSENT_WHY);
		} else {
			probe_parsed(&out->tlb, ret, root, "interrupts");
		}
		procfs_src_close(&src);
	}

	ret = kswapd_scan(root, &t, &n);
	if (ret) {
		probe_fail(&out->kswapd, ret, "cannot list %s: %s", root);
	} else if (n == 0) {
		out->kswapd.err = -ENOENT;
		snprintf(out->kswapd.why, sizeof(out->kswapd.why),
			 "no kswapd kernel thread found in %s (a container with its own "
			 "PID namespace does not see kernel threads)", root);
	} else {
		out->nkswapd = n;
		for (i = 0; i < n && i < PROCFS_PROBE_KSWAPD_MAX; i++) {
			out->kswapd_t[i].pid = t[i].pid;
			memcpy(out->kswapd_t[i].name, t[i].name, PROCFS_COMM_MAX);
			out->kswapd_t[i].cpu_s = (double)t[i].ticks / (double)(hz > 0 ? hz : 100);
		}
	}
	free(t);

	if (!probe_read(&src, root, "vmstat", &out->vmstat)) {
		probe_parsed(&out->vmstat, procfs_parse_vmstat(src.buf, src.len, &out->vm),
			     root, "vmstat");
		procfs_src_close(&src);
	}
	if (!probe_read(&src, root, "meminfo", &out->meminfo)) {
		probe_parsed(&out->meminfo, procfs_parse_meminfo(src.buf, src.len, &out->mem),
			     root, "meminfo");
		procfs_src_close(&src);
	}
	if (!probe_read(&src, root, "stat", &out->stat)) {
		probe_parsed(&out->stat, procfs_parse_stat(src.buf, src.len, &out->cpu),
			     root, "stat");
		procfs_src_close(&src);
	}
	snprintf(rel, sizeof(rel), "self/task/%d/stat", (int)tid);
	if (!probe_read(&src, root, rel, &out->task)) {
		probe_parsed(&out->task, procfs_parse_task_stat(src.buf, src.len, &out->self),
			     root, rel);
		procfs_src_close(&src);
	}
	return 0;
}
