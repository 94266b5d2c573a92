/*
 * record.c - a worker's replay and recording; see record.h.
 */
#include "run/record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engines/target.h"

bool record_wait(const struct record *rc, uint64_t due)
{
	uint64_t now = now_ns();

	while (now < due) {
		uint64_t left = due - now;
		struct timespec ts;

		if (__atomic_load_n(rc->stop, __ATOMIC_RELAXED) ||
		    __atomic_load_n(rc->job_stop, __ATOMIC_RELAXED) || now >= rc->deadline_ns)
			return false;
		if (left > 50000000ull)
			left = 50000000ull;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left;
		nanosleep(&ts, NULL);
		now = now_ns();
	}
	return true;
}

/*
 * write_iolog=FILE writes FILE, or FILE.N for worker N when the job has
 * several: each needs its own log (fio's clones would share one and mix
 * their lines).
 */
int record_setup(struct record *rc, const struct job *job, unsigned id, const struct replay_set *set,
		 const struct target *targets, unsigned tfirst, unsigned tcount, bool null,
		 const int *stop, const int *job_stop, struct err *e)
{
	char path[4096];
	int ret;

	memset(rc, 0, sizeof(*rc));
	rc->stop = stop;
	rc->job_stop = job_stop;
	rc->deadline_ns = UINT64_MAX;
	rc->tfirst = tfirst;
	if (set && set->nr)
		rc->rp = &set->r[id % set->nr];
	if (!job->write_iolog)
		return 0;
	rc->log = calloc(1, sizeof(*rc->log));
	rc->paths = calloc(tcount ? tcount : 1, sizeof(*rc->paths));
	if (!rc->log || !rc->paths)
		return err_set(e, ENOMEM, "write_iolog: out of memory");
	for (unsigned i = 0; i < tcount; i++)
		rc->paths[i] = null ? "null" : targets[tfirst + i].path;
	if (job->numjobs > 1)
		snprintf(path, sizeof(path), "%s.%u", job->write_iolog, id);
	else
		snprintf(path, sizeof(path), "%s", job->write_iolog);
	ret = iolog_writer_open(rc->log, path, rc->paths, tcount, 0, e);
	if (ret) {
		free(rc->log);
		rc->log = NULL;
	}
	return ret;
}

int record_close(struct record *rc, struct err *e)
{
	int ret;

	if (!rc->log)
		return 0;
	ret = iolog_writer_close(rc->log, now_ns(), e);
	free(rc->log);
	rc->log = NULL;
	return ret;
}

void record_free(struct record *rc)
{
	struct err e;

	record_close(rc, &e);
	free(rc->paths);
	rc->paths = NULL;
}
