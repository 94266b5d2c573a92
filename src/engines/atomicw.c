/*
 * atomicw.c - whether a target takes RWF_ATOMIC writes; see atomicw.h.
 */
#include "engines/atomicw.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* linux/stat.h (6.11): the mask bit, and where struct statx keeps the
 * atomic write unit sizes (a raw buffer, as glibc's struct may be older). */
#define STATX_WRITE_ATOMIC_BIT	0x00010000u
#define STATX_SIZE		256
#define STATX_OFF_MASK		0x00
#define STATX_OFF_AWU_MIN	0xa8
#define STATX_OFF_AWU_MAX	0xac

static uint32_t u32_at(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

bool atomicw_probe(int fd, uint64_t bs, char *why, size_t len)
{
	unsigned char buf[STATX_SIZE] = { 0 };
	uint32_t lo, hi;

	if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_WRITE_ATOMIC_BIT, buf) < 0) {
		snprintf(why, len, "statx: %s", strerror(errno));
		return false;
	}
	if (!(u32_at(buf, STATX_OFF_MASK) & STATX_WRITE_ATOMIC_BIT)) {
		snprintf(why, len, "the kernel reports no atomic write sizes (STATX_WRITE_ATOMIC, Linux 6.11)");
		return false;
	}
	lo = u32_at(buf, STATX_OFF_AWU_MIN);
	hi = u32_at(buf, STATX_OFF_AWU_MAX);
	if (!hi || bs < lo || bs > hi || (bs & (bs - 1))) {
		snprintf(why, len, "it takes atomic writes of %u..%u bytes, not %llu (statx)", lo, hi,
			 (unsigned long long)bs);
		return false;
	}
	return true;
}
