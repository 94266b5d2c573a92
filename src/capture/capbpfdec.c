/*
 * capbpfdec.c - the bpf method's records to events; see capbpfdec.h.
 */
#include "capture/capbpfdec.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/capbpfrec.h"

/* What an open's record says the descriptor is: NULL when it says
 * nothing (the kernel's side unread, no path), and /proc is asked. */
static int open_info(const void *data, size_t len, struct cap_fdinfo **out)
{
	struct capbpf_open o;
	size_t n = len - offsetof(struct capbpf_open, path);
	struct cap_fdinfo *fi;

	*out = NULL;
	memcpy(&o, data, offsetof(struct capbpf_open, path));
	if (!o.mode || !n || !((const char *)data)[offsetof(struct capbpf_open, path)])
		return 0;
	fi = calloc(1, sizeof(*fi));
	if (!fi)
		return -ENOMEM;
	if (n >= sizeof(fi->path))
		n = sizeof(fi->path) - 1;
	memcpy(fi->path, (const char *)data + offsetof(struct capbpf_open, path), n);
	fi->path[n] = '\0';
	fi->ino = o.h.off;
	fi->dev = o.h.len;
	fi->file = (S_ISREG(o.mode) || S_ISBLK(o.mode)) && !cap_pseudo_fs((unsigned long)o.magic);
	*out = fi;
	return 0;
}

/* The record kinds as events. */
static const uint8_t kinds[CAPBPF_NKINDS] = {
	[CAPBPF_READ] = CAP_READ,	[CAPBPF_WRITE] = CAP_WRITE,	[CAPBPF_SYNC] = CAP_SYNC,
	[CAPBPF_DATASYNC] = CAP_DATASYNC, [CAPBPF_OPEN] = CAP_OPEN,	[CAPBPF_DUP] = CAP_OPEN,
	[CAPBPF_CLOSE] = CAP_CLOSE,	[CAPBPF_NEWTASK] = CAP_NEWTASK, [CAPBPF_EXIT] = CAP_EXIT,
	[CAPBPF_EXEC] = CAP_EXEC,	[CAPBPF_MMAP] = CAP_MMAP,	[CAPBPF_URING] = CAP_URING,
	[CAPBPF_AIO] = CAP_AIO,		[CAPBPF_PGADD] = CAP_PGADD,	[CAPBPF_FAULT] = CAP_FAULT,
	[CAPBPF_PC_READ] = CAP_READ,	[CAPBPF_PC_MAP] = CAP_READ,	[CAPBPF_INO_READ] = CAP_READ,
	[CAPBPF_INO_WRITE] = CAP_WRITE, [CAPBPF_INO_SYNC] = CAP_SYNC,	[CAPBPF_INO_DATASYNC] = CAP_DATASYNC,
};

/* The pagecache method's records name a file by inode; a page range
 * (first to last page, inclusive) becomes bytes. */
static int decode_ino(const void *data, size_t len, const struct capbpf_rec *r, struct cap_event *ev,
		      uint64_t *bad)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct capbpf_inorec o;

	if (len < sizeof(o)) {
		(*bad)++;
		return 0;
	}
	memcpy(&o, data, sizeof(o));
	*ev = (struct cap_event){ .ts = r->ts, .off = r->off, .len = r->len, .tid = r->tid, .fd = CAP_FD_INODE,
				  .ino = o.ino, .dev = (uint32_t)r->fd, .kind = kinds[r->kind] };
	if (r->kind == CAPBPF_PC_READ || r->kind == CAPBPF_PC_MAP) {
		if (r->len < r->off) {
			(*bad)++;
			return 0;
		}
		ev->off = r->off * page;
		ev->len = (r->len - r->off + 1) * page;
	}
	return 1;
}

int capbpf_decode(const void *data, size_t len, struct cap_event *ev, uint64_t *bad)
{
	struct capbpf_rec r;

	if (len < sizeof(r)) {
		(*bad)++;
		return 0;
	}
	memcpy(&r, data, sizeof(r));
	if (r.kind < CAPBPF_READ || r.kind >= CAPBPF_NKINDS ||
	    (r.kind == CAPBPF_OPEN && len <= offsetof(struct capbpf_open, path))) {
		(*bad)++;
		return 0;
	}
	if (r.kind >= CAPBPF_PC_READ)
		return decode_ino(data, len, &r, ev, bad);
	*ev = (struct cap_event){ .ts = r.ts, .off = r.off, .len = r.len, .tid = r.tid, .fd = r.fd,
				  .kind = kinds[r.kind] };
	/* The scheduler's fork carries no clone flags: whether the child is
	 * a thread of its process is what capstream asks of them. */
	if (r.kind == CAPBPF_NEWTASK)
		ev->len = r.len ? CLONE_THREAD : 0;
	if (r.kind == CAPBPF_OPEN) {
		int32_t dfd;

		memcpy(&dfd, (const char *)data + offsetof(struct capbpf_open, dfd), sizeof(dfd));
		ev->off = (uint64_t)(int64_t)dfd;
		ev->len = 0;
		if (open_info(data, len, &ev->fi) < 0)
			return -ENOMEM;
	}
	if (r.kind == CAPBPF_DUP)
		ev->off = ev->len = 0;
	return 1;
}
