/*
 * engine_filecreate.c - fio's filecreate: the time to create files, no
 * I/O to them.
 *
 * The job's files are filename='s list, or fio's scratch names
 * <directory>/<job>.<thread>.<file> for numjobs x nrfiles of them. The
 * controller does not open or lay them out (ENGINE_F_NO_TARGET): its one
 * virtual target holds a bs block per file (ENGINE_F_CREATES), so a
 * request at offset k x bs is file k, and one pass creates every file
 * once (rw=read, rw=write; random offsets may pick one twice, as any
 * random job). A request opens its file with O_CREAT | O_RDWR, as fio's
 * engine does, and closes it: its latency is the create (and the
 * close), its bytes fio's accounting of a block per file, nothing moved.
 * Files are left in place, as fio leaves them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines/engine.h"

struct fc {
	char **paths;
	unsigned n;
	uint64_t base;		/* the virtual target's offset */
	uint64_t bs;
};

static void fc_free(struct fc *f)
{
	for (unsigned i = 0; f->paths && i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	free(f);
}

unsigned engine_filecreate_files(const struct engine_job *ej)
{
	unsigned n = 1;

	if (!ej->filename)
		return ej->numjobs * ej->nrfiles;
	for (const char *p = ej->filename; *p; p++)
		n += *p == ':';
	return n;
}

static int fc_job_setup(struct engine_job *ej, struct err *e)
{
	struct fc *f = calloc(1, sizeof(*f));
	const char *p = ej->filename;

	if (!f)
		return err_set(e, ENOMEM, "filecreate: out of memory");
	f->n = engine_filecreate_files(ej);
	f->base = ej->targets[0].base;
	/* The virtual target holds a block of the requests' size per file
	 * (ENGINE_F_CREATES). */
	f->bs = f->n ? ej->targets[0].len / f->n : 0;
	if (!f->bs) {
		free(f);
		return err_set(e, EINVAL, "filecreate: no files to create");
	}
	f->paths = calloc(f->n, sizeof(*f->paths));
	if (!f->paths) {
		fc_free(f);
		return err_set(e, ENOMEM, "filecreate: out of memory");
	}
	for (unsigned i = 0; i < f->n; i++) {
		char path[4096];

		if (ej->filename) {
			size_t len = strcspn(p, ":");

			snprintf(path, sizeof(path), "%.*s", (int)len, p);
			p += len + (p[len] == ':');
		} else {
			snprintf(path, sizeof(path), "%s/%s.%u.%u", ej->directory ? ej->directory : ".",
				 ej->name, i / ej->nrfiles, i % ej->nrfiles);
		}
		f->paths[i] = strdup(path);
		if (!f->paths[i] || !*path) {
			fc_free(f);
			return err_set(e, path[0] ? ENOMEM : EINVAL, "filecreate: %s",
				       path[0] ? "out of memory" : "an empty name in filename=");
		}
	}
	ej->priv = f;
	return 0;
}

static void fc_job_teardown(struct engine_job *ej)
{
	if (ej->priv)
		fc_free(ej->priv);
	ej->priv = NULL;
}

static int fc_queue(struct engine_thread *et, struct io_req *r)
{
	const struct fc *f = et->ej->priv;
	uint64_t k = (r->off - f->base) / f->bs;
	int fd;

	r->data = NULL;		/* nothing to consume */
	if (r->op == IO_FLUSH || r->op == IO_TRIM) {
		r->res = r->op == IO_FLUSH ? 0 : r->len;
		return ENGINE_DONE;
	}
	if (k >= f->n) {
		r->res = -EINVAL;
		return ENGINE_DONE;
	}
	do
		fd = open(f->paths[k], O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		r->res = -errno;
		return ENGINE_DONE;
	}
	close(fd);
	r->res = r->len;
	return ENGINE_DONE;
}

const struct engine_ops engine_filecreate = {
	.name = "filecreate",
	.help = "fio's filecreate: each request creates one of the job's files (open O_CREAT, "
		"close), no I/O; its latency is the create",
	.flags = ENGINE_F_NO_TARGET | ENGINE_F_CREATES,
	.ops = ENGINE_OP(IO_READ) | ENGINE_OP(IO_WRITE),
	.job_setup = fc_job_setup,
	.job_teardown = fc_job_teardown,
	.queue = fc_queue,
};
