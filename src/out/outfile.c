/* outfile.c - whole-or-absent output files; see outfile.h. */
#include "out/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == path)
		return strdup("/");
	if (slash)
		return strndup(path, (size_t)(slash - path));
	return strdup(".");
}

/* The mode a new file would get (0666 & ~umask), or the old file's. */
static mode_t output_mode(const char *path)
{
	struct stat st;
	mode_t mask;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return st.st_mode & 07777;
	/* umask can only be read by setting it; outputs are written after
	 * the workers, when nothing else creates files. */
	mask = umask(022);
	umask(mask);
	return 0666 & ~mask;
}

int outfile_check(const char *path, const char *what, struct err *e)
{
	const char *base = strrchr(path, '/');
	struct stat st;
	char *dir;
	int ret = 0;

	base = base ? base + 1 : path;
	if (!*base)
		return err_set(e, EISDIR, "%s=%s: not a file name", what, path);
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return err_set(e, EISDIR, "%s=%s: is a directory", what, path);
		if (access(path, W_OK) < 0)
			return err_set(e, errno, "%s=%s: %s", what, path, strerror(errno));
	}
	dir = dir_of(path);
	if (!dir)
		return err_set(e, ENOMEM, "%s=%s: out of memory", what, path);
	/* A regular file is replaced by a rename, so its directory must
	 * take a new entry; a device or pipe (/dev/null) is written in place. */
	if ((stat(path, &st) < 0 || S_ISREG(st.st_mode)) && access(dir, W_OK | X_OK) < 0)
		ret = err_set(e, errno, "%s=%s: directory %s: %s", what, path, dir, strerror(errno));
	free(dir);
	return ret;
}

static void release(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	free(o->path);
	free(o->dir);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

int outfile_open(struct outfile *o, const char *path, struct err *e)
{
	const char *base = strrchr(path, '/');
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	base = base ? base + 1 : path;
	if (!*base)
		return err_set(e, EISDIR, "%s: not a file name", path);
	o->path = strdup(path);
	o->dir = dir_of(path);
	if (!o->path || !o->dir)
		goto out_nomem;
	/* Not a regular file (/dev/null, a FIFO): nothing to replace,
	 * write it in place. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "w");
		if (!o->f) {
			int err = errno;

			release(o);
			return err_set(e, err, "%s: %s", path, strerror(err));
		}
		return 0;
	}
	if (asprintf(&o->tmp, "%s/.%s.XXXXXX", o->dir, base) < 0) {
		o->tmp = NULL;
		goto out_nomem;
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		err_set(e, err, "%s: cannot create a temporary file in %s: %s", path, o->dir,
			strerror(err));
		free(o->tmp);
		o->tmp = NULL;
		release(o);
		return -err;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		goto out_nomem;
	}
	return 0;
out_nomem:
	if (o->tmp)
		unlink(o->tmp);
	release(o);
	return err_set(e, ENOMEM, "%s: out of memory", path);
}

int outfile_commit(struct outfile *o, struct err *e)
{
	int err = 0, dfd;

	if (fflush(o->f) != 0 || ferror(o->f))
		err = errno ? errno : EIO;
	if (!err && o->tmp && fchmod(fileno(o->f), output_mode(o->path)) < 0)
		err = errno;
	if (!err && o->tmp && fsync(fileno(o->f)) < 0)
		err = errno;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (err) {
		err_set(e, err, "%s: %s", o->path, strerror(err));
		outfile_abort(o);
		return -err;
	}
	if (!o->tmp) {
		release(o);
		return 0;
	}
	if (rename(o->tmp, o->path) < 0) {
		err = errno;
		err_set(e, err, "%s: rename from %s: %s", o->path, o->tmp, strerror(err));
		outfile_abort(o);
		return -err;
	}
	/* Make the rename itself durable; a filesystem that cannot fsync a
	 * directory has nothing more to offer, so that is not an error. */
	dfd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	release(o);
	return 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}
