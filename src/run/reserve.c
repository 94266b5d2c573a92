/* reserve.c - locked anonymous memory for reserve_mem; see reserve.h. */
#include "run/reserve.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/latclock.h"
#include "telemetry/procfs.h"

int reserve_check(uint64_t len, uint64_t needs, struct err *e)
{
	struct procfs_src src;
	struct procfs_meminfo mi;
	struct rlimit rl;
	uint64_t avail;
	ssize_t n;

	if (procfs_src_open(&src, procfs_root(), "meminfo") < 0)
		return err_set(e, ENOENT, "reserve_mem: cannot read %s/meminfo to check MemAvailable",
			       procfs_root());
	n = procfs_src_read(&src);
	if (n < 0 || procfs_parse_meminfo(src.buf, (size_t)n, &mi) < 0 ||
	    !procfs_mem_has(&mi, PROCFS_MEM_AVAILABLE)) {
		procfs_src_close(&src);
		return err_set(e, ENOENT, "reserve_mem: no MemAvailable in %s/meminfo", procfs_root());
	}
	procfs_src_close(&src);
	avail = mi.bytes[PROCFS_MEM_AVAILABLE];
	if (len + RESERVE_HEADROOM + needs > avail)
		return err_set(e, ENOMEM,
			       "reserve_mem=%lluMiB would leave less than 1GiB plus the jobs' own %lluMiB of the %lluMiB available (MemAvailable)",
			       (unsigned long long)(len >> 20), (unsigned long long)(needs >> 20),
			       (unsigned long long)(avail >> 20));
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < len &&
	    geteuid() != 0)
		return err_set(e, EPERM,
			       "reserve_mem=%lluMiB exceeds the locked-memory limit of %lluMiB (ulimit -l; or run as root)",
			       (unsigned long long)(len >> 20), (unsigned long long)(rl.rlim_cur >> 20));
	return 0;
}

int reserve_take(struct reserve *r, uint64_t len, struct err *e)
{
	uint64_t t0 = now_ns();
	void *p;

	memset(r, 0, sizeof(*r));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return err_set(e, errno, "reserve_mem: mmap %lluMiB: %s", (unsigned long long)(len >> 20),
			       strerror(errno));
	/* mlock populates and pins: the memory can be neither swapped nor
	 * reclaimed, so the page cache is what must give. The system call
	 * itself, because AddressSanitizer replaces mlock() with a no-op
	 * that returns 0: a sanitized build would reserve nothing. */
	if (syscall(SYS_mlock, p, (size_t)len) < 0) {
		int err = errno;

		munmap(p, len);
		return err_set(e, err, "reserve_mem: mlock %lluMiB: %s", (unsigned long long)(len >> 20),
			       strerror(err));
	}
	r->p = p;
	r->len = len;
	r->populate_ns = now_ns() - t0;
	return 0;
}

void reserve_release(struct reserve *r)
{
	if (r->p)
		munmap(r->p, r->len);
	r->p = NULL;
	r->len = 0;
}
