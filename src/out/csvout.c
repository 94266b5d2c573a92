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

int csvout_row(struct csvout *c, const char *line, size_t len)
{
	struct iovec iov[2] = {
		{ .iov_base = (void *)line, .iov_len = len },
		{ .iov_base = "\n", .iov_len = 1 },
	};
	ssize_t n;

	if (c->broken)
		return 0;
	do
		n = writev(c->fd, iov, 2);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)(len + 1)) {
		c->good += n;
		return 0;
	}
	c->broken = true;
	c->error = n < 0 ? errno : ENOSPC;	/* a short write to a file: out of room */
	/* Cut a partial row back off a regular file; a pipe keeps what
	 * its reader took. */
	if (n > 0 && !c->is_stdout) {
		struct stat st;

		if (fstat(c->fd, &st) == 0 && S_ISREG(st.st_mode))
			(void)!ftruncate(c->fd, c->good);
	}
	return -c->error;
}

void csvout_close(struct csvout *c)
{
	if (!c->is_stdout && c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
