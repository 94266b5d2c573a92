/*
 * engines.c - the engine table. The core never names an engine; it asks
 * this table. Adding an engine: one source file and one line below.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>

#include "engines/engine.h"

extern const struct engine_ops engine_psync;
extern const struct engine_ops engine_mmap;
extern const struct engine_ops engine_io_uring;
extern const struct engine_ops engine_libaio;
extern const struct engine_ops engine_posixaio;
extern const struct engine_ops engine_null;
extern const struct engine_ops engine_filecreate;
extern const struct engine_ops engine_bufpool;
extern const struct engine_ops engine_vmcache;

static const struct engine_ops *const engines[] = {
	&engine_psync,
	&engine_mmap,
	&engine_io_uring,
	&engine_libaio,
	&engine_posixaio,
	&engine_null,
	&engine_filecreate,
	&engine_bufpool,
	&engine_vmcache,
	NULL,
};

/* fio's names for the same engine. */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "pread", "psync" },
	{ "sync", "psync" },
};

const char *engine_canonical(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].alias))
			return aliases[i].name;
	for (size_t i = 0; engines[i]; i++)
		if (!strcmp(name, engines[i]->name))
			return engines[i]->name;
	return NULL;
}

const struct engine_ops *engine_find(const char *name)
{
	const char *canon = engine_canonical(name);

	for (size_t i = 0; canon && engines[i]; i++)
		if (!strcmp(canon, engines[i]->name))
			return engines[i];
	return NULL;
}

const struct engine_ops *const *engine_list(void)
{
	return engines;
}

static const char *const op_names[IO_NOPS] = {
	[IO_READ] = "reads",
	[IO_WRITE] = "writes",
	[IO_FLUSH] = "flushes",
	[IO_TRIM] = "trims",
};

/* A hole punched in a file (the size stays, the page cache's pages of
 * the range go), BLKDISCARD on a block device; EOPNOTSUPP where the
 * filesystem or device has no such thing. */
int engine_trim(const struct target *t, struct io_req *r)
{
	uint64_t range[2] = { r->off, r->len };
	int ret = t->is_blkdev ? ioctl(t->fd, BLKDISCARD, range)
			       : fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					   (off_t)r->off, (off_t)r->len);

	if (ret < 0)
		ret = -errno;
	r->res = ret < 0 ? ret : (int64_t)r->len;
	r->data = NULL;
	return ENGINE_DONE;
}

int engine_check_ops(const struct engine_ops *ops, unsigned need, struct err *e)
{
	unsigned missing = need & ~ops->ops;

	for (unsigned op = 0; op < IO_NOPS; op++)
		if (missing & ENGINE_OP(op))
			return err_set(e, EINVAL, "ioengine=%s does not do %s, which this job issues",
				       ops->name, op_names[op]);
	return 0;
}
