/* csvout.c - whole-row CSV writing; see csvout.h. */
#include "out/csvout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int csvout_open(struct csvout *c, const char *path, struct err *e)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	if (!strcmp(path, "-")) {
		c->fd = STDOUT_FILENO;
		c->is_stdout = true;
		return 0;
	}
	c->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (c->fd < 0)
		return err_set(e, errno, "--csv=%s: %s", path, strerror(errno));
	return 0;
}

/* @iov's @n parts, @total bytes of whole rows, in one write. */
static int write_rows(struct csvout *c, const struct iovec *iov, int n, size_t total)
{
	ssize_t w;

	if (c->broken)
		return 0;
	do
		w = writev(c->fd, iov, n);
	while (w < 0 && errno == EINTR);
	if (w == (ssize_t)total) {
		c->good += w;
		return 0;
	}
	c->broken = true;
	c->error = w < 0 ? errno : ENOSPC;	/* a short write to a file: out of room */
	/* Cut a partial row back off a regular file; a pipe keeps what
	 * its reader took. */
	if (w > 0 && !c->is_stdout) {
		struct stat st;

		if (fstat(c->fd, &st) == 0 && S_ISREG(st.st_mode))
			(void)!ftruncate(c->fd, c->good);
	}
	return -c->error;
}

int csvout_flush(struct csvout *c)
{
	struct iovec iov = { .iov_base = c->buf, .iov_len = c->len };
	size_t len = c->len;

	if (!len)
		return 0;
	c->len = 0;
	return write_rows(c, &iov, 1, len);
}

int csvout_row(struct csvout *c, const char *line, size_t len)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)line, .iov_len = len },
		{ .iov_base = "\n", .iov_len = 1 },
	};
	int ret;

	if (c->broken)
		return 0;
	if (c->buf && c->len + len + 1 > c->cap) {
		ret = csvout_flush(c);
		if (ret)
			return ret;
	}
	if (!c->buf || len + 1 > c->cap)
		return write_rows(c, iov, 2, len + 1);
	memcpy(c->buf + c->len, line, len);
	c->buf[c->len + len] = '\n';
	c->len += len + 1;
	return 0;
}

int csvout_buffer(struct csvout *c, size_t cap)
{
	c->buf = malloc(cap);
	if (!c->buf)
		return -ENOMEM;
	c->cap = cap;
	c->len = 0;
	return 0;
}

void csvout_close(struct csvout *c)
{
	if (c->fd >= 0)
		csvout_flush(c);
	free(c->buf);
	c->buf = NULL;
	if (!c->is_stdout && c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
