/*
 * taskstats.c - a thread's delay accounting over generic netlink
 * (taskstats.h). The protocol is the kernel's own client's,
 * tools/accounting/getdelays.c: look the "TASKSTATS" family up with
 * CTRL_CMD_GETFAMILY, then TASKSTATS_CMD_GET with a u32 pid attribute;
 * the answer nests the pid and the struct in TASKSTATS_TYPE_AGGR_PID.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/taskstats.h>

#include "telemetry/taskstats.h"

/* The struct grows at its end only (taskstats.h's versioning rule), so
 * a field sits at the same offset in every kernel that has it, and a
 * shorter struct from an older kernel lacks the last ones. */
static const size_t delay_off[TASKSTATS_NDELAYS] = {
	[TASKSTATS_RUNQ] = offsetof(struct taskstats, cpu_delay_total),
	[TASKSTATS_BLKIO] = offsetof(struct taskstats, blkio_delay_total),
	[TASKSTATS_SWAPIN] = offsetof(struct taskstats, swapin_delay_total),
	[TASKSTATS_RECLAIM] = offsetof(struct taskstats, freepages_delay_total),
	[TASKSTATS_THRASH] = offsetof(struct taskstats, thrashing_delay_total),
	[TASKSTATS_COMPACT] = offsetof(struct taskstats, compact_delay_total),
};

/* Walk the messages of @buf: the first error, or the attributes (after
 * the genl header) of the first message of @type, given to @cb. Type 0
 * is any family's: the taskstats family's id is the kernel's choice. */
static int walk(const void *buf, size_t len, uint16_t type, mnl_attr_cb_t cb, void *data)
{
	const struct nlmsghdr *nlh = buf;
	int left = (int)len;

	if (len > INT32_MAX)
		return -EBADMSG;
	/* mnl_nlmsg_ok compares the length as an int: one of 2 GiB or more
	 * would pass it and send mnl_nlmsg_next backwards (found by
	 * fuzz_taskstats_parse_reply). */
	for (; mnl_nlmsg_ok(nlh, left) && nlh->nlmsg_len <= (uint32_t)left; nlh = mnl_nlmsg_next(nlh, &left)) {
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);

			if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*err))
				return -EBADMSG;
			return err->error < 0 ? err->error : -EBADMSG;
		}
		if (type ? nlh->nlmsg_type != type : nlh->nlmsg_type < NLMSG_MIN_TYPE)
			continue;
		if (mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
			return -EBADMSG;
		return mnl_attr_parse(nlh, GENL_HDRLEN, cb, data) == MNL_CB_OK ? 0 : -EBADMSG;
	}
	return -EBADMSG;
}

struct family_found {
	bool ok;
	uint16_t id;
};

static int family_attr(const struct nlattr *a, void *data)
{
	struct family_found *f = data;

	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID) {
		if (mnl_attr_validate(a, MNL_TYPE_U16) < 0)
			return MNL_CB_ERROR;
		f->id = mnl_attr_get_u16(a);
		f->ok = true;
	}
	return MNL_CB_OK;
}

int taskstats_parse_family(const void *buf, size_t len, uint16_t *family)
{
	struct family_found f = { 0 };
	int ret = walk(buf, len, GENL_ID_CTRL, family_attr, &f);

	if (ret)
		return ret;
	if (!f.ok)
		return -EBADMSG;
	*family = f.id;
	return 0;
}

struct reply_found {
	bool pid_ok, stats_ok;
	uint32_t pid;
	const struct nlattr *stats;
};

static int aggr_attr(const struct nlattr *a, void *data)
{
	struct reply_found *r = data;

	switch (mnl_attr_get_type(a)) {
	case TASKSTATS_TYPE_PID:
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
			return MNL_CB_ERROR;
		r->pid = mnl_attr_get_u32(a);
		r->pid_ok = true;
		break;
	case TASKSTATS_TYPE_STATS:
		r->stats = a;
		r->stats_ok = true;
		break;
	}
	return MNL_CB_OK;
}

static int reply_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) != TASKSTATS_TYPE_AGGR_PID)
		return MNL_CB_OK;	/* TASKSTATS_TYPE_NULL pads the 64-bit fields */
	if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0)
		return MNL_CB_ERROR;
	return mnl_attr_parse_nested(a, aggr_attr, data);
}

int taskstats_parse_reply(const void *buf, size_t len, uint32_t pid, struct taskstats_delays *out)
{
	struct reply_found r = { 0 };
	const unsigned char *st;
	size_t n;
	uint16_t version;
	int ret = walk(buf, len, 0, reply_attr, &r);

	if (ret)
		return ret;
	if (!r.pid_ok || !r.stats_ok || r.pid != pid)
		return -EBADMSG;
	st = mnl_attr_get_payload(r.stats);
	n = mnl_attr_get_payload_len(r.stats);
	if (n < offsetof(struct taskstats, blkio_delay_total) + sizeof(uint64_t))
		return -EBADMSG;
	memset(out, 0, sizeof(*out));
	memcpy(&version, st + offsetof(struct taskstats, version), sizeof(version));
	out->version = version;
	/* Unknown age (a struct without it) bounds nothing. */
	out->age_ns = UINT64_MAX;
	if (offsetof(struct taskstats, ac_etime) + sizeof(uint64_t) <= n) {
		memcpy(&out->age_ns, st + offsetof(struct taskstats, ac_etime), sizeof(uint64_t));
		out->age_ns = out->age_ns > UINT64_MAX / 1000 ? UINT64_MAX : out->age_ns * 1000;
	}
	for (unsigned k = 0; k < TASKSTATS_NDELAYS; k++) {
		if (delay_off[k] + sizeof(uint64_t) > n)
			continue;
		memcpy(&out->ns[k], st + delay_off[k], sizeof(uint64_t));
		out->have |= 1u << k;
	}
	return 0;
}

/* One request, and its answer into s->buf; the answer's length. */
static int request(struct taskstats_sock *s, uint16_t type, uint8_t cmd, uint8_t version,
		   uint16_t attr, const void *val, size_t vlen)
{
	char req[128];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct genlmsghdr *g;
	ssize_t n;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++s->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	mnl_attr_put(nlh, attr, vlen, val);
	if (send(s->fd, req, nlh->nlmsg_len, 0) < 0)
		return -errno;
	do {
		n = recv(s->fd, s->buf, sizeof(s->buf), 0);
		/* An answer to an earlier request that timed out is not ours. */
	} while (n >= (ssize_t)sizeof(*nlh) && ((struct nlmsghdr *)s->buf)->nlmsg_seq != s->seq);
	if (n < 0)
		return -errno;
	return (int)n;
}

int taskstats_open(struct taskstats_sock *s, struct err *e)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int n;

	s->seq = 0;
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		return err_set(e, errno, "taskstats: netlink socket: %s", strerror(errno));
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		n = -errno;
		goto out_close;
	}
	n = request(s, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME,
		    sizeof(TASKSTATS_GENL_NAME));
	if (n >= 0)
		n = taskstats_parse_family(s->buf, (size_t)n, &s->family);
	if (!n)
		return 0;
out_close:
	close(s->fd);
	s->fd = -1;
	if (n == -ENOENT)
		return err_set(e, ENOENT, "taskstats: the kernel has no taskstats netlink family "
			       "(CONFIG_TASKSTATS off)");
	return err_set(e, -n, "taskstats: netlink: %s", strerror(-n));
}

int taskstats_query(struct taskstats_sock *s, pid_t tid, struct taskstats_delays *out)
{
	uint32_t pid = (uint32_t)tid;
	int n = request(s, s->family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION, TASKSTATS_CMD_ATTR_PID,
			&pid, sizeof(pid));

	if (n < 0)
		return n;
	return taskstats_parse_reply(s->buf, (size_t)n, pid, out);
}

void taskstats_close(struct taskstats_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
