/*
 * tracefmt.c - tracefs and format files through libtracefs and
 * libtraceevent; see tracefmt.h.
 */
#include "telemetry/tracefmt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <tracefs/tracefs.h>

/* Where libtracefs mounts tracefs (its TRACEFS_PATH). */
#define TRACEFS_MOUNTPOINT "/sys/kernel/tracing"
/* A format file with the kernel's big __print_flags tables is ~5 KiB. */
#define FORMAT_MAX 65536

enum tracefmt_state tracefmt_find(const char *sysroot, char *dir, size_t cap)
{
	static const char *const where[] = { "kernel/tracing", "kernel/debug/tracing" };
	const char *mounted = NULL;

	if (!strcmp(sysroot, "/sys")) {
		if (tracefs_tracing_dir_is_mounted(false, &mounted) > 0 && mounted) {
			snprintf(dir, cap, "%s/events", mounted);
			/* Mounted tracefs is root's alone (mode 0700). */
			return access(dir, R_OK | X_OK) == 0 ? TRACEFMT_OK : TRACEFMT_DENIED;
		}
		snprintf(dir, cap, "%s", TRACEFS_MOUNTPOINT);
		return access(dir, F_OK) == 0 ? TRACEFMT_UNMOUNTED : TRACEFMT_ABSENT;
	}
	for (unsigned i = 0; i < 2; i++) {
		snprintf(dir, cap, "%s/%s/events", sysroot, where[i]);
		if (access(dir, R_OK | X_OK) == 0)
			return TRACEFMT_OK;
		if (i == 0 && errno == EACCES)
			return TRACEFMT_DENIED;
	}
	snprintf(dir, cap, "%s/kernel/tracing", sysroot);
	return access(dir, F_OK) == 0 ? TRACEFMT_UNMOUNTED : TRACEFMT_ABSENT;
}

int tracefmt_load(struct tep_handle *tep, const char *events, const char *sys, const char *name,
		  struct tep_event **ev)
{
	char path[PATH_MAX], *buf;
	size_t len = 0;
	ssize_t n;
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s/%s/format", events, sys, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(FORMAT_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < FORMAT_MAX && (n = read(fd, buf + len, FORMAT_MAX - len)) > 0)
		len += (size_t)n;
	close(fd);
	*ev = NULL;
	/* libtraceevent is lenient: an id that is no number parses as 0.
	 * A print format it cannot follow (TEP_EVENT_FL_FAILED) leaves the
	 * fields and id good, and only tracefmt_symbol without an answer. */
	if (!len || len == FORMAT_MAX || tep_parse_format(tep, ev, buf, len, sys) != TEP_ERRNO__SUCCESS ||
	    !*ev || (*ev)->id <= 0)
		ret = -EBADMSG;
	free(buf);
	return ret;
}

int tracefmt_symbol(const struct tep_event *ev, const char *field, const char *label, long *value)
{
	for (struct tep_print_arg *a = ev->print_fmt.args; a; a = a->next) {
		struct tep_print_arg *f;

		if (a->type != TEP_PRINT_SYMBOL)
			continue;
		f = a->symbol.field;
		while (f && f->type == TEP_PRINT_TYPE)
			f = f->typecast.item;
		if (!f || f->type != TEP_PRINT_FIELD || strcmp(f->field.name, field))
			continue;
		for (struct tep_print_flag_sym *s = a->symbol.symbols; s; s = s->next) {
			char *end;
			long v;

			if (strcasecmp(s->str, label))
				continue;
			v = strtol(s->value, &end, 0);
			if (*end)
				return -ENOENT;
			*value = v;
			return 0;
		}
	}
	return -ENOENT;
}

int tracefmt_tep(const char *events, struct tep_handle **out, struct err *e)
{
	enum tep_endian en = tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN;
	struct tep_handle *tep = tep_alloc();
	char *hp;
	int size = 0;

	*out = NULL;
	if (!tep)
		return err_set(e, ENOMEM, "out of memory");
	tep_set_file_bigendian(tep, en);
	tep_set_local_bigendian(tep, en);
	tep_set_long_size(tep, (int)sizeof(long));
	tep_set_page_size(tep, (int)sysconf(_SC_PAGESIZE));
	errno = 0;
	hp = tracefs_instance_file_read(NULL, "events/header_page", &size);
	if (!hp || size <= 0 || tep_parse_header_page(tep, hp, (unsigned long)size, (int)sizeof(long))) {
		int ret = err_set(e, hp ? EBADMSG : (errno ? errno : ENOENT),
				  "reading the ring buffer's page header (%s/header_page) failed", events);

		free(hp);
		tep_free(tep);
		return ret;
	}
	free(hp);
	*out = tep;
	return 0;
}

void tracefmt_remove_stale(const char *prefix)
{
	char re[96], **names;
	size_t plen = strlen(prefix);

	snprintf(re, sizeof(re), "^%s[0-9][0-9]*$", prefix);
	names = tracefs_instances(re);
	for (unsigned i = 0; names && names[i]; i++) {
		long pid = strtol(names[i] + plen, NULL, 10);
		struct tracefs_instance *in;

		if (pid <= 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		in = tracefs_instance_alloc(NULL, names[i]);
		if (in) {
			tracefs_instance_destroy(in);
			tracefs_instance_free(in);
		}
	}
	tracefs_list_free(names);
}

uint64_t tracefmt_lost(struct tracefs_instance *inst, int ncpus)
{
	uint64_t sum = 0;

	for (int c = 0; c < ncpus; c++) {
		char file[64], *buf, *p;
		unsigned long long v;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", c);
		buf = tracefs_instance_file_read(inst, file, NULL);
		if (!buf)
			continue;
		if ((p = strstr(buf, "overrun: ")) && sscanf(p + 9, "%llu", &v) == 1)
			sum += v;
		if ((p = strstr(buf, "dropped events: ")) && sscanf(p + 16, "%llu", &v) == 1)
			sum += v;
		free(buf);
	}
	return sum;
}

int tracefmt_mount(struct err *e)
{
	const char *path = NULL;

	if (tracefs_tracing_dir_is_mounted(false, &path) > 0)
		return 0;
	errno = 0;
	if (tracefs_tracing_dir_is_mounted(true, &path) > 0 || access(TRACEFS_MOUNTPOINT "/events", F_OK) == 0)
		return 1;
	return err_set(e, errno ? errno : EIO, "--mount-tracefs: mount -t tracefs nodev %s: %s%s",
		       TRACEFS_MOUNTPOINT, strerror(errno ? errno : EIO),
		       errno == EPERM ? " (it needs root)" : "");
}

void tracefmt_umount(void)
{
	/* Lazily: an open perf event does not hold the mount, but a reader
	 * somewhere else might. */
	umount2(TRACEFS_MOUNTPOINT, MNT_DETACH);
}
