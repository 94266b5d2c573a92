/*
 * capout.c - capture.job and the capture's summary; see capout.h.
 */
#include "capture/capout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Files listed one by one in the summary; the rest are summed. */
#define SUMMARY_FILES 30

static bool live(const struct cap_stream *st)
{
	return !st->merged && st->requests;
}

static void job_text(FILE *f, const char *dir, const struct cap_state *s, const char *cmdline,
		     const char *method)
{
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&now, &tm));
	fprintf(f, "; Written by faultline --capture (%s), %s.\n", cmdline ? cmdline : "", when);
	fprintf(f, "; Traced by %s.\n", method);
	fprintf(f, ";\n"
		"; One job per traced thread (its stream, an fio iolog version 3 in this\n"
		"; directory): all jobs run together, each replaying its thread's requests\n"
		"; in its order and at its pace, on the files the thread used.\n"
		"; rw=randread replays the reads and leaves the writes and syncs out\n"
		"; (counted in a warning): the files are the traced program's own.\n"
		"; rw=randrw replays them too, writing those files: only on copies\n"
		"; (replay_redirect= sends a stream's requests to another file).\n"
		";\n"
		";   faultline %s/capture.job              replay it\n"
		";   faultline --verdict %s/capture.job    mmap or a buffer pool, for it\n",
		dir, dir);
	if (s->merged)
		fprintf(f, ";\n; The job 'merged' holds the requests of %u threads that made at most\n"
			"; %d each (under 1 %% of the capture), in time order.\n", s->merged, CAP_SMALL_STREAM);
	fprintf(f, "\n[global]\nrw=randread\nioengine=psync\n");
	for (unsigned i = 0; i < s->nstreams; i++) {
		const struct cap_stream *st = &s->streams[i];
		char file[64];

		if (!live(st))
			continue;
		cap_stream_file(st, file, sizeof(file));
		if (st->reads) {
			/* A replay counts a log from its first line, as fio's does:
			 * startdelay keeps a thread that began late as late. */
			fprintf(f, "\n; %s: %llu reads, %llu writes, %llu syncs\n[%s]\nstartdelay=%lluus\nread_iolog=%s/%s\n",
				st->tid ? "thread" : "threads", (unsigned long long)st->reads,
				(unsigned long long)st->writes, (unsigned long long)st->syncs, st->name,
				(unsigned long long)st->first_us, dir, file);
		} else {
			/* A read replay of it would have nothing to do. */
			fprintf(f, "\n; %s: no reads (%llu writes, %llu syncs): a job only where writes are "
				"replayed (rw=randrw)\n;[%s]\n;read_iolog=%s/%s\n", st->name,
				(unsigned long long)st->writes, (unsigned long long)st->syncs, st->name, dir, file);
		}
	}
}

int capout_job(int dirfd, const char *dir, const struct cap_state *s, const char *cmdline, const char *method,
	       struct err *e)
{
	int fd = openat(dirfd, "capture.job.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	FILE *f;
	int ret = 0;

	if (fd < 0)
		return err_set(e, errno, "%s/capture.job: %s", dir, strerror(errno));
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlinkat(dirfd, "capture.job.tmp", 0);
		return err_set(e, ENOMEM, "%s/capture.job: out of memory", dir);
	}
	job_text(f, dir, s, cmdline, method);
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0)
		ret = errno ? errno : EIO;
	if (fclose(f) != 0 && !ret)
		ret = errno ? errno : EIO;
	if (!ret && renameat(dirfd, "capture.job.tmp", dirfd, "capture.job") < 0)
		ret = errno;
	if (ret) {
		unlinkat(dirfd, "capture.job.tmp", 0);
		return err_set(e, ret, "%s/capture.job: %s", dir, strerror(ret));
	}
	return 0;
}

static double mib(uint64_t b)
{
	return (double)b / 1048576.0;
}

static void streams_table(FILE *out, const struct cap_state *s)
{
	fprintf(out, "  %-24s %10s %10s %8s %9s %9s\n", "stream", "reads", "writes", "syncs", "first_s", "last_s");
	for (unsigned i = 0; i < s->nstreams; i++) {
		const struct cap_stream *st = &s->streams[i];

		if (!live(st))
			continue;
		fprintf(out, "  %-24s %10llu %10llu %8llu %9.3f %9.3f\n", st->name, (unsigned long long)st->reads,
			(unsigned long long)st->writes, (unsigned long long)st->syncs, (double)st->first_us / 1e6,
			(double)st->last_us / 1e6);
	}
	if (s->merged) {
		fprintf(out, "  merged: the %u threads of at most %d requests each (under 1 %% of the capture):",
			s->merged, CAP_SMALL_STREAM);
		for (unsigned i = 0; i < s->nstreams; i++)
			if (s->streams[i].merged)
				fprintf(out, " %s", s->streams[i].name);
		fprintf(out, "\n");
	}
}

static int by_requests(const void *a, const void *b, void *arg)
{
	const struct cap_file *f = arg;
	const struct cap_file *x = &f[*(const unsigned *)a], *y = &f[*(const unsigned *)b];
	uint64_t nx = x->reads + x->writes + x->syncs, ny = y->reads + y->writes + y->syncs;

	return (nx < ny) - (nx > ny);
}

static void files_table(FILE *out, const struct cap_state *s)
{
	unsigned *order = malloc((s->nfiles ? s->nfiles : 1) * sizeof(*order)), shown = 0;
	uint64_t rest[5] = { 0 };

	if (!order)
		return;
	for (unsigned i = 0; i < s->nfiles; i++)
		order[i] = i;
	qsort_r(order, s->nfiles, sizeof(*order), by_requests, s->files);
	fprintf(out, "per file (pages added: page-cache misses the traced tasks caused, empty where none was seen):\n"
		"  %10s %10s %8s %10s %10s %8s  %s\n", "reads", "writes", "syncs", "read_MiB", "write_MiB",
		"pg_added", "file");
	for (unsigned k = 0; k < s->nfiles; k++) {
		const struct cap_file *f = &s->files[order[k]];
		char pg[24] = "";

		if (!f->reads && !f->writes && !f->syncs && !f->shared_maps)
			continue;
		if (shown++ >= SUMMARY_FILES) {
			rest[0] += f->reads;
			rest[1] += f->writes;
			rest[2] += f->syncs;
			rest[3] += f->read_bytes;
			rest[4] += f->written_bytes;
			continue;
		}
		if (f->pgadd_seen)
			snprintf(pg, sizeof(pg), "%llu", (unsigned long long)f->pgadd);
		fprintf(out, "  %10llu %10llu %8llu %10.1f %10.1f %8s  %s%s\n", (unsigned long long)f->reads,
			(unsigned long long)f->writes, (unsigned long long)f->syncs, mib(f->read_bytes),
			mib(f->written_bytes), pg, f->path, f->loggable ? "" : "  (not logged: a blank in its name)");
	}
	if (shown > SUMMARY_FILES)
		fprintf(out, "  %10llu %10llu %8llu %10.1f %10.1f %8s  (%u more files)\n",
			(unsigned long long)rest[0], (unsigned long long)rest[1], (unsigned long long)rest[2],
			mib(rest[3]), mib(rest[4]), "", shown - SUMMARY_FILES);
	free(order);
}

/* What the tracepoints cannot show, and what stands for it. */
static void unseen(FILE *out, const struct cap_state *s, uint64_t unpositioned)
{
	unsigned mapped = 0;

	fprintf(out, "not seen:\n");
	fprintf(out, "  io_uring: %llu io_uring_enter calls submitting %llu requests%s\n",
		(unsigned long long)s->uring_calls, (unsigned long long)s->uring_sqes,
		s->uring_calls ? ": NOT in the logs (no tracepoint carries an io_uring request's file and offset)"
			       : " (its requests would be missing: no tracepoint carries their offsets)");
	fprintf(out, "  libaio: %llu io_submit calls of %llu requests%s\n", (unsigned long long)s->aio_calls,
		(unsigned long long)s->aio_iocbs,
		s->aio_calls ? ": NOT in the logs (the tracepoint gives the iocbs' address, not their offsets)"
			     : " (their offsets would be missing too)");
	for (unsigned i = 0; i < s->nfiles; i++) {
		const struct cap_file *f = &s->files[i];

		if (!f->shared_maps)
			continue;
		if (!mapped++)
			fprintf(out, "  mmap: reads through a mapping are page faults, not system calls, and are "
				"in no log; files mapped shared:\n");
		fprintf(out, "    %s: %llu mappings, %.1f MiB mapped; %llu page faults on it (each a read through "
			"the mapping of a page not yet mapped), %llu pages added to the page cache (misses); "
			"the logs hold only its %llu reads by system call\n",
			f->path, (unsigned long long)f->shared_maps, mib(f->mapped_bytes),
			(unsigned long long)f->faults, (unsigned long long)f->pgadd, (unsigned long long)f->reads);
	}
	if (!mapped)
		fprintf(out, "  mmap: no file mapped shared (reads through a mapping would be page faults, in no log)\n");
	if (s->private_maps)
		fprintf(out, "  mmap: %llu private file mappings (programs and libraries, mostly), not listed\n",
			(unsigned long long)s->private_maps);
	if (s->pg_other)
		fprintf(out, "  page cache: %llu pages added of files no logged request named\n",
			(unsigned long long)s->pg_other);
	if (unpositioned)
		fprintf(out, "  %llu preadv2/pwritev2 calls at the file's own position (offset -1): not logged\n",
			(unsigned long long)unpositioned);
}

/* What the pagecache method cannot show: it sees no system call, so its
 * blind spots are other ones. */
static void unseen_pagecache(FILE *out, const struct cap_state *s, bool ext4)
{
	fprintf(out, "seen differently (pagecache method):\n"
		"  buffered reads: at page granularity (offsets rounded down, lengths up, to pages); one request "
		"per read, its page batches merged\n"
		"  mmap: reads through mappings ARE logged, as reads of the pages each fault mapped (fault-around "
		"maps up to 16 cached pages at once: more than the program touched)\n"
		"  O_DIRECT (through iomap: ext4, xfs, btrfs) and io_uring or libaio requests are logged, with "
		"their offsets\n");
	fprintf(out, "not seen:\n");
	if (ext4)
		fprintf(out, "  writes and syncs on filesystems other than ext4 (no generic tracepoint); ext4's "
			"buffered writes are logged one per page (or folio) copied\n");
	else
		fprintf(out, "  buffered writes and syncs (this kernel has no ext4 tracepoints, and no generic "
			"one exists)\n");
	fprintf(out, "  reads of tmpfs and shmem files (faults on their mappings are counted above, not "
		"logged), O_DIRECT on block devices, and reads on filesystems that bypass the page cache's read "
		"path\n");
	if (s->unnamed_ino)
		fprintf(out, "  %llu requests on files no traced process had open or mapped when /proc was asked: "
			"unnamed, not logged\n", (unsigned long long)s->unnamed_ino);
}

void capout_summary(FILE *out, const struct cap_state *s, const char *dir, double seconds, uint64_t lost,
		    uint64_t unpositioned, const char *method, bool pagecache, bool ext4)
{
	unsigned live_streams = 0;

	for (unsigned i = 0; i < s->nstreams; i++)
		live_streams += live(&s->streams[i]);
	fprintf(out, "capture: %llu requests in %u stream%s over %.1f s, in %s (replay them together: %s/capture.job)\n",
		(unsigned long long)s->requests, live_streams, live_streams == 1 ? "" : "s", seconds, dir, dir);
	fprintf(out, "method: %s\n", method);
	if (live_streams)
		streams_table(out, s);
	files_table(out, s);
	if (lost)
		fprintf(out, "lost: %llu records the ring buffers dropped (the reader fell behind): the logs miss "
			"them\n", (unsigned long long)lost);
	else
		fprintf(out, "lost: none (0 ring-buffer overruns or drops)\n");
	if (!pagecache && (s->unnamed || s->notfile || s->unloggable))
		fprintf(out, "not logged: %llu requests (%llu reads, %llu writes, %llu syncs) on descriptors "
			"closed or reused before they could be named (/proc), %llu on sockets, pipes, /proc and "
			"/sys files, %llu on files whose name has a blank or that were deleted\n",
			(unsigned long long)s->unnamed, (unsigned long long)s->unnamed_op[CAP_READ],
			(unsigned long long)s->unnamed_op[CAP_WRITE],
			(unsigned long long)(s->unnamed_op[CAP_SYNC] + s->unnamed_op[CAP_DATASYNC]),
			(unsigned long long)s->notfile, (unsigned long long)s->unloggable);
	if (pagecache && (s->notfile || s->unloggable))
		fprintf(out, "not logged: %llu requests on what is no data (/proc, /sys; tmpfs and shared "
			"memory; programs and libraries, mapped executable: code run, not data read), %llu on files "
			"whose name has a blank or that were deleted\n", (unsigned long long)s->notfile,
			(unsigned long long)s->unloggable);
	if (pagecache)
		unseen_pagecache(out, s, ext4);
	else
		unseen(out, s, unpositioned);
	if (s->err)
		fprintf(out, "error: a log could not be written: %s\n", strerror(-s->err));
	fflush(out);
}
