/*
 * iolog.h - fio's I/O logs: read one (text versions 2 and 3, and the
 * blktrace binary fio also replays), turn it into a job's replay, and
 * write version 3 for every request a worker issues.
 *
 * Formats as fio 3.33 reads and writes them (its HOWTO, "Trace file
 * format"): a first line "fio version 2 iolog" or "fio version 3
 * iolog", then one action per line, version 3 with a timestamp in
 * microseconds first:
 *
 *     [usec] FILE add|open|close
 *     [usec] FILE read|write|trim|sync|datasync OFFSET LENGTH
 *     FILE wait USEC 0                       (version 2 only)
 *
 * faultline is stricter than fio where fio drops a line with a message
 * and goes on: a malformed line is an error naming the log and line.
 * It is kinder where fio crashes: a request on a file no add line named
 * adds the file. A blktrace file (blkparse -d output) gives its queue
 * events: reads, writes, discards (trim) and flushes (sync), on the
 * device /dev/block/MAJ:MIN unless replay_redirect says otherwise.
 *
 * The parser is pure (text in, entries out) and fuzzed
 * (fuzz/fuzz_iolog_parse.c). The writer is per thread: requests are
 * formatted into a buffer that goes to the file in one write(2) per
 * IOLOG_WBUF bytes, so logging costs no system call per request.
 */
#ifndef FAULTLINE_IOLOG_H
#define FAULTLINE_IOLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* What a line asks for; IOLOG_READ..IOLOG_TRIM are fio's ddir order. */
enum iolog_op {
	IOLOG_READ,
	IOLOG_WRITE,
	IOLOG_TRIM,
	IOLOG_SYNC,
	IOLOG_DATASYNC,
	IOLOG_WAIT,		/* version 2: wait until USEC (see iolog.c) */
	IOLOG_ADD,
	IOLOG_OPEN,
	IOLOG_CLOSE,
	IOLOG_NOPS
};

/* fio's name of @op ("read", "datasync", ...). */
const char *iolog_op_name(enum iolog_op op);

/* The replay_skip bits: read, write, trim, sync (sync covers datasync). */
#define IOLOG_SKIP(op)	(1u << (op))

/* Format versions; IOLOG_BLKTRACE for a blktrace binary. */
#define IOLOG_BLKTRACE	100

struct iolog_entry {
	uint64_t t;		/* version 3 / blktrace: microseconds; wait: its value */
	uint64_t off;
	uint32_t len;
	uint32_t file;		/* index into iolog.files */
	uint32_t line;		/* 1-based line (blktrace: event number) */
	uint8_t op;		/* enum iolog_op */
};

struct iolog {
	int version;		/* 2, 3 or IOLOG_BLKTRACE */
	char **files;		/* as the log names them, in order of first use */
	unsigned nfiles;
	struct iolog_entry *ent;	/* requests and waits, in order (not add, open, close) */
	size_t n, cap;
	uint64_t t0;		/* the first line's timestamp: the replay's time 0 */
};

/*
 * Parse @len bytes of @buf (not NUL-terminated) as a log named @name in
 * messages ("trace.log:17: ..."). 0, or -EINVAL / -ENOMEM with @e
 * filled; @l is then freed. The log must hold at least one request.
 */
int iolog_parse(struct iolog *l, const char *buf, size_t len, const char *name, struct err *e);
/* Read and parse the file @path. */
int iolog_load(struct iolog *l, const char *path, struct err *e);
void iolog_free(struct iolog *l);

/* ---- replay --------------------------------------------------------- */

/* fio's replay options, as a job gives them. */
struct replay_opts {
	const char *redirect;	/* every request to this file, or NULL */
	unsigned skip;		/* IOLOG_SKIP bits */
	uint64_t align;		/* offsets rounded down to this power of two; 0 = off */
	uint64_t scale;		/* offsets divided by this; 0 or 1 = off */
	unsigned time_scale;	/* percent of the logged rate; 100 = as logged */
	bool no_stall;		/* as fast as possible, in order */
	bool writes;		/* the job may write: else writes are left out */
	uint64_t span_page;	/* a power of two: count the pages of it each read
				 * covers (replay_set.max_read_pages); 0 = off */
};

/* One request of a replay: issued no earlier than @due_ns after the start. */
struct replay_req {
	uint64_t due_ns;
	uint64_t off;
	uint32_t len;
	uint16_t target;	/* index into replay_set.paths */
	uint8_t op;		/* IOLOG_READ, IOLOG_WRITE, IOLOG_SYNC or IOLOG_DATASYNC */
};

/* The requests of one log, in its order. */
struct replay {
	struct replay_req *req;
	size_t n;
	bool timed;		/* some request has a due time after 0 */
	/* Lines not replayed, by op: skipped (replay_skip), writes of a job
	 * that does not write, trims (no engine trims). */
	size_t left_out[IOLOG_NOPS];
};

/*
 * A job's replays (one per log of read_iolog=a:b:..., given to its
 * workers in turn, as fio gives them to its clones) over one set of
 * targets: every file the logs name, or the one redirect.
 */
struct replay_set {
	struct replay *r;
	unsigned nr;
	char **paths;		/* the targets, in order of first use */
	uint64_t *end;		/* per target: the end of its furthest request */
	unsigned npaths;
	uint32_t max_len;	/* the longest request */
	uint64_t requests;	/* requests in all the replays */
	/* With replay_opts.span_page: the most pages of that size one read
	 * covers, and where that read is ("trace.log:17"). */
	uint64_t max_read_pages;
	char max_read_at[300];
};

/* Build @s from the logs @logs (a ':'-separated list of paths) with @o.
 * 0, or -errno with @e naming the log and line. Freed by replay_set_free
 * on any path. */
int replay_set_load(struct replay_set *s, const char *logs, const struct replay_opts *o,
		    struct err *e);
/* The same from logs already parsed (for the tests). */
int replay_set_build(struct replay_set *s, const struct iolog *logs, const char *const *names,
		     unsigned nlogs, const struct replay_opts *o, struct err *e);
void replay_set_free(struct replay_set *s);

/* Parse replay_skip's value ("write,trim") into IOLOG_SKIP bits. */
int replay_skip_parse(const char *val, unsigned *bits, struct err *e);

/* ---- writing -------------------------------------------------------- */

/* Bytes buffered per thread before a write(2): 1 MiB, about 20000
 * requests of a typical line. */
#define IOLOG_WBUF	(1u << 20)

struct iolog_writer {
	int fd;
	char *buf;
	size_t len;
	uint64_t t0_ns;		/* the close lines' time counts from here (CLOCK_MONOTONIC) */
	const char *const *paths;	/* the worker's targets, by index */
	size_t *plen;		/* their lengths */
	unsigned npaths;
	int err;		/* the first write error (-errno), 0 if none */
	char path[256];		/* the log, for messages */
};

/* Create (truncate) @path and write the header and an add and an open
 * line per target. The paths must outlive the writer. */
int iolog_writer_open(struct iolog_writer *w, const char *path, const char *const *paths,
		      unsigned npaths, uint64_t t0_ns, struct err *e);
/* Write out the buffer (a worker's loop calls it through iolog_add). */
void iolog_writer_flush(struct iolog_writer *w);
/* One request on target @target, @us microseconds after the start (the
 * caller's clock: the worker's is the cheap latency clock). Whole lines
 * are buffered; a write error is kept for close and stops the logging. */
void iolog_add(struct iolog_writer *w, uint64_t us, unsigned target, enum iolog_op op,
	       uint64_t off, uint32_t len);
/* Close lines, the last write, close. 0 or the first error, with @e filled. */
int iolog_writer_close(struct iolog_writer *w, uint64_t now_ns, struct err *e);

#endif
