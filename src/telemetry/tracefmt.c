/*
 * tracefmt.c - tracefs and format files through libtracefs and
 * libtraceevent; see tracefmt.h.
 */
#include "telemetry/tracefmt.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
