/*
 * taskstats.h - one task's delay accounting, asked of the kernel over
 * generic netlink (Documentation/accounting/taskstats.rst and
 * delay-accounting.rst): TASKSTATS_CMD_GET with TASKSTATS_CMD_ATTR_PID
 * names a thread, and the reply carries its struct taskstats, whose
 * *_delay_total fields are the nanoseconds it spent waiting for a CPU,
 * for block I/O, for swap-in, in direct reclaim, thrashing and
 * compaction since it began. The kernel fills them only while
 * kernel.task_delayacct is 1 (delayacct.h switches it).
 *
 * Two layers, as procfs.h: the parsers are pure functions on a reply
 * (buf, len), tested on a recorded one; the socket is opened once and
 * each query is one send and one receive into a buffer of its own, so
 * the sampler neither allocates nor grows its stack per query. libmnl
 * (Debian's libmnl-dev) walks the messages and attributes: it allocates
 * nothing per message, which libnl's callbacks do.
 *
 * Functions return 0 or -errno: -ESRCH for a task that has exited,
 * -EPERM without CAP_NET_ADMIN (the kernel asks it of every query),
 * -ENOENT where the kernel has no taskstats family, -EBADMSG for a reply
 * not in the kernel's format.
 */
#ifndef FAULTLINE_TASKSTATS_H
#define FAULTLINE_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/* The delays faultline reads, in nanoseconds since the task began. */
enum taskstats_delay {
	TASKSTATS_RUNQ,		/* runnable, waiting for a CPU (cpu_delay_total) */
	TASKSTATS_BLKIO,	/* asleep in io_schedule: block I/O, a fault's read */
	TASKSTATS_SWAPIN,	/* reading a page back from swap */
	TASKSTATS_RECLAIM,	/* direct reclaim ("freepages") */
	TASKSTATS_THRASH,	/* waiting for a recently evicted page (since 4.20) */
	TASKSTATS_COMPACT,	/* direct compaction (since 5.x) */
	TASKSTATS_NDELAYS
};

struct taskstats_delays {
	uint64_t ns[TASKSTATS_NDELAYS];
	uint64_t age_ns;		/* since the task began (ac_etime, in us);
					 * UINT64_MAX when the struct lacks it */
	uint32_t have;			/* bit per delay the kernel's struct carries */
	uint16_t version;		/* of the kernel's struct taskstats */
};

/* The generic netlink family id in a CTRL_CMD_GETFAMILY reply. */
int taskstats_parse_family(const void *buf, size_t len, uint16_t *family);

/* The delays of task @pid in a TASKSTATS_CMD_GET reply (an error
 * message gives its -errno). */
int taskstats_parse_reply(const void *buf, size_t len, uint32_t pid, struct taskstats_delays *out);

/* Room for a reply: struct taskstats is about 500 bytes in 6.x. */
#define TASKSTATS_BUF 4096

struct taskstats_sock {
	int fd;
	uint16_t family;
	uint32_t seq;
	unsigned char buf[TASKSTATS_BUF];
};

/* Open the socket and look up the family (s->fd is -1 on error). */
int taskstats_open(struct taskstats_sock *s, struct err *e);
/* Thread @tid's delays now. */
int taskstats_query(struct taskstats_sock *s, pid_t tid, struct taskstats_delays *out);
/* Safe on a closed or never opened socket. */
void taskstats_close(struct taskstats_sock *s);

#endif
