/*
 * uncached.c - is RWF_DONTCACHE there for a target; see uncached.h.
 */
#include "engines/uncached.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/utsname.h>

int uncached_explain(int err, const char *release, const char *path, struct err *e)
{
	switch (err) {
	case 0:
		return 0;
	case -EINVAL:
		return err_set(e, EINVAL, "uncached=1: the kernel (Linux %s) does not know RWF_DONTCACHE: "
			       "uncached buffered reads need Linux 6.14 or later; use direct=1 for O_DIRECT, "
			       "or uncached=0", release);
	case -EOPNOTSUPP:
		return err_set(e, EOPNOTSUPP, "uncached=1: %s: its filesystem does not support "
			       "RWF_DONTCACHE on this kernel (Linux %s; xfs, ext4 and btrfs have it in "
			       "recent kernels, tmpfs does not); use direct=1 for O_DIRECT, or uncached=0",
			       path, release);
	default:
		return err_set(e, -err, "uncached=1: %s: a test read with RWF_DONTCACHE failed: %s",
			       path, strerror(-err));
	}
}

int uncached_probe(int fd, uint64_t off, const char *path, struct err *e)
{
	struct utsname u;
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	ssize_t n;

	do
		n = preadv2(fd, &iov, 1, (off_t)off, UNCACHED_RWF_DONTCACHE);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return 0;
	if (uname(&u) < 0)
		strcpy(u.release, "?");
	return uncached_explain(-errno, u.release, path, e);
}
