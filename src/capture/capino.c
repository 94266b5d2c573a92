/*
 * capino.c - inodes to paths from /proc; see capino.h.
 */
#include "capture/capino.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/capstream.h"

struct capino_ent *capino_find(const struct capino *c, uint32_t dev, uint64_t ino)
{
	for (size_t i = c->n; i-- > 0;)
		if (c->e[i].ino == ino && c->e[i].dev == dev)
			return &c->e[i];
	return NULL;
}

static uint32_t kdev(dev_t d)
{
	return (uint32_t)(major(d) << 20 | (minor(d) & 0xfffff));
}

static int room(struct capino *c)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct capino_ent *e = realloc(c->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->e = e;
		c->cap = cap;
	}
	return 0;
}

int capino_unnamed(struct capino *c, uint32_t dev, uint64_t ino)
{
	if (room(c) < 0)
		return -ENOMEM;
	c->e[c->n++] = (struct capino_ent){ .ino = ino, .dev = dev };
	return 0;
}

/* tmpfs (and the shmem behind /dev/shm and memfds): what a task maps
 * from it is shared memory (PostgreSQL's dynamic shared memory), not
 * file I/O, and its reads bypass the tracepoints; a replay of the
 * faults on it would read another program's memory. */
#define TMPFS_MAGIC_ 0x01021994UL

static bool data_file(const char *path, const struct stat *st)
{
	struct statfs fs;

	if (!S_ISREG(st->st_mode))
		return false;
	if (statfs(path, &fs) < 0)
		return true;
	return !cap_pseudo_fs((unsigned long)fs.f_type) && (unsigned long)fs.f_type != TMPFS_MAGIC_;
}

/* @path (as /proc shows it) is inode @st: listed once. */
static int add(struct capino *c, const char *path, const struct stat *st)
{
	struct capino_ent *known = capino_find(c, kdev(st->st_dev), (uint64_t)st->st_ino);
	char *p;

	if (known && known->path)
		return 0;
	if (!known && room(c) < 0)
		return -ENOMEM;
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	if (!known)
		known = &c->e[c->n++];
	*known = (struct capino_ent){
		.ino = (uint64_t)st->st_ino, .dev = kdev(st->st_dev), .path = p,
		.file = data_file(path, st),
	};
	return 0;
}

static int scan_fds(struct capino *c, int pid)
{
	char dir[64], link[320], path[PATH_MAX];
	struct dirent *d;
	struct stat st;
	int ret = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	dp = opendir(dir);
	if (!dp)
		return -errno;
	while (!ret && (d = readdir(dp))) {
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, path, sizeof(path) - 1);
		/* stat through the link: the file the descriptor is, even
		 * when its path is now another's. */
		if (n <= 0 || path[0] != '/' || stat(link, &st) < 0)
			continue;
		path[n] = '\0';
		ret = add(c, path, &st);
	}
	closedir(dp);
	return ret;
}

/* Mappings: a file read through a mapping may have no descriptor left. */
static int scan_maps(struct capino *c, int pid)
{
	char name[64], line[PATH_MAX + 128];
	struct stat st;
	FILE *f;
	int ret = 0;

	snprintf(name, sizeof(name), "/proc/%d/maps", pid);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/'), perms[8];
		struct capino_ent *e;
		unsigned long long ino;
		unsigned maj, min;

		if (!path || sscanf(line, "%*s %7s %*s %x:%x %llu", perms, &maj, &min, &ino) != 4 || !ino)
			continue;
		path[strcspn(path, "\n")] = '\0';
		if (stat(path, &st) < 0 || (uint64_t)st.st_ino != ino || major(st.st_dev) != maj ||
		    minor(st.st_dev) != min)
			continue;
		ret = add(c, path, &st);
		/* Mapped executable: a program or a library, whose page
		 * faults are its code being run, not data being read. */
		if (!ret && perms[2] == 'x' && (e = capino_find(c, kdev(st.st_dev), (uint64_t)st.st_ino)))
			e->file = false;
	}
	fclose(f);
	return ret;
}

int capino_scan(struct capino *c, int pid)
{
	int ret = scan_fds(c, pid);

	if (ret == -ENOMEM)
		return ret;
	if (scan_maps(c, pid) == -ENOMEM)
		return -ENOMEM;
	return ret;
}

void capino_free(struct capino *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->e[i].path);
	free(c->e);
	*c = (struct capino){ 0 };
}
