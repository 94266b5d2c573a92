/*
 * readfile.c - a small file read whole; see readfile.h.
 */
#include "lib/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int readfile_small(const char *path, char *buf, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return (int)n;
}
