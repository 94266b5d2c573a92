/*
 * ranks.c - the MPI launch; see ranks.h.
 *
 * libmpi is opened with dlopen, not linked: faultline started without a
 * launcher must behave exactly as before, load nothing and need no MPI
 * library on the host. mpi.h (libopenmpi-dev) gives the prototypes at
 * build time; Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE,
 * ...) are the addresses of its global objects (ompi_mpi_comm_world,
 * ...), so they are looked up by name like the functions. That is Open
 * MPI's ABI (libmpi.so.40, Open MPI 3 to 5), the MPI functions faultline names.
 *
 * Only the controller (main) thread calls MPI: MPI_THREAD_FUNNELED.
 *
 * Every exchange is rank 0 hearing from each other rank, then answering
 * each, point to point: a rank that stops answering is one rank 0 can
 * name, and leave out from then on (MPI's collectives would hang, or
 * fail without saying whom they missed). Each answer carries how many
 * ranks rank 0 has lost, so the others stop their jobs too.
 */
#include "mpi/ranks.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "lib/latclock.h"

/* Open MPI's library, by soname first (what the runtime package ships),
 * then the development link. */
static const char *const libmpi_names[] = { "libmpi.so.40", "libmpi.so" };

static struct {
	__typeof__(&MPI_Init_thread) init_thread;
	__typeof__(&MPI_Finalize) finalize;
	__typeof__(&MPI_Abort) abort;
	__typeof__(&MPI_Comm_rank) comm_rank;
	__typeof__(&MPI_Comm_size) comm_size;
	__typeof__(&MPI_Isend) isend;
	__typeof__(&MPI_Irecv) irecv;
	__typeof__(&MPI_Test) test;
	__typeof__(&MPI_Cancel) cancel;
	__typeof__(&MPI_Request_free) request_free;
	MPI_Comm world;
	MPI_Datatype t_byte;
} api;

/* One tag per kind of message; every rank makes the same calls in the
 * same order, and MPI keeps one sender's messages of a tag in order. */
enum { TAG_HOST = 0x464c, TAG_LEN, TAG_DATA, TAG_MAX, TAG_ANSWER, TAG_BARRIER };
static bool on, finalized;
static int my_rank, nranks;
static char hostname[256];
/* Rank 0: each rank's host name (for naming a lost one). lost[r]: rank 0
 * stopped waiting for rank r, for good. nlost: how many, at rank 0; at
 * the others, as rank 0's last answer said (or 1: rank 0 is lost). */
static char (*hosts)[256];
static bool *lost;
static int nlost;

/* Who hears what the exchanges have to say (ranks_set_notes). */
static void (*note_fn)(const struct rank_note *n);

static void share_hosts(void);
static uint64_t timeout_ns = 30000000000ull;	/* 30 s until told the interval */
static bool timeout_fixed;			/* FAULTLINE_MPI_TIMEOUT given */

void ranks_set_notes(void (*fn)(const struct rank_note *n))
{
	note_fn = fn;
}

void ranks_note(const struct rank_note *n)
{
	if (note_fn)
		note_fn(n);
}

bool ranks_detect(void)
{
	const char *off = getenv("FAULTLINE_MPI");

	if (off && !strcmp(off, "0"))
		return false;
	/* mpirun/orterun/prterun of Open MPI, or a PMIx launcher (srun --mpi=pmix). */
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

bool ranks_on(void)
{
	return on;
}

int ranks_rank(void)
{
	return my_rank;
}

int ranks_size(void)
{
	return on ? nranks : 1;
}

const char *ranks_host(void)
{
	return hostname;
}

void ranks_set_interval(uint64_t interval_ns)
{
	/* Ranks tick on one grid: a wait for the others normally ends
	 * within an interval. Ten intervals, and never under 30 s, leaves
	 * room for a host that is busy, not for one that is gone. */
	if (!timeout_fixed && interval_ns * 10 > timeout_ns)
		timeout_ns = interval_ns * 10;
}

static int load(struct err *e)
{
	void *h = NULL;
	const char *why = "";

	for (size_t i = 0; i < sizeof(libmpi_names) / sizeof(libmpi_names[0]) && !h; i++) {
		/* RTLD_GLOBAL: Open MPI's own plugins resolve libmpi's symbols. */
		h = dlopen(libmpi_names[i], RTLD_NOW | RTLD_GLOBAL);
		if (!h)
			why = dlerror();
	}
	if (!h)
		return err_set(e, ENOENT, "started by an MPI launcher, but Open MPI's libmpi cannot be "
			       "loaded (%s); install openmpi-bin, or set FAULTLINE_MPI=0 to run alone", why);
#define SYM(field, name)                                                                          \
	do {                                                                                      \
		*(void **)&api.field = dlsym(h, name);                                           \
		if (!api.field)                                                                   \
			return err_set(e, ENOENT, "libmpi has no %s: not Open MPI's ABI", name); \
	} while (0)
	SYM(init_thread, "MPI_Init_thread");
	SYM(finalize, "MPI_Finalize");
	SYM(abort, "MPI_Abort");
	SYM(comm_rank, "MPI_Comm_rank");
	SYM(comm_size, "MPI_Comm_size");
	SYM(isend, "MPI_Isend");
	SYM(irecv, "MPI_Irecv");
	SYM(test, "MPI_Test");
	SYM(cancel, "MPI_Cancel");
	SYM(request_free, "MPI_Request_free");
	SYM(world, "ompi_mpi_comm_world");
	SYM(t_byte, "ompi_mpi_byte");
#undef SYM
	return 0;
}

int ranks_init(struct err *e)
{
	const char *t = getenv("FAULTLINE_MPI_TIMEOUT");
	char num[32];
	int provided = 0, ret;

	if (on || !ranks_detect())
		return 0;
	ret = load(e);
	if (ret)
		return ret;
	if (api.init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
		return err_set(e, EIO, "MPI_Init_thread failed");
	on = true;
	api.comm_rank(api.world, &my_rank);
	api.comm_size(api.world, &nranks);
	if (gethostname(hostname, sizeof(hostname)) < 0)
		snprintf(hostname, sizeof(hostname), "?");
	lost = calloc((size_t)nranks, sizeof(*lost));
	hosts = my_rank == 0 ? calloc((size_t)nranks, sizeof(*hosts)) : NULL;
	if (!lost || (my_rank == 0 && !hosts))
		return err_set(e, ENOMEM, "out of memory");
	share_hosts();
	if (t && atof(t) > 0) {
		timeout_ns = (uint64_t)(atof(t) * 1e9);
		timeout_fixed = true;
	}
	/* ${RANK}, ${NRANKS}, ${HOSTNAME} in job files (jobfile.c reads the
	 * environment). */
	snprintf(num, sizeof(num), "%d", my_rank);
	setenv("RANK", num, 1);
	snprintf(num, sizeof(num), "%d", nranks);
	setenv("NRANKS", num, 1);
	setenv("HOSTNAME", hostname, 1);
	return 0;
}

void ranks_abort(int code)
{
	fflush(stdout);
	fflush(stderr);
	if (on)
		api.abort(api.world, code);
	_exit(code);
}

void ranks_finalize(int status)
{
	if (!on || finalized)
		return;
	finalized = true;
	/* MPI_Finalize waits for every rank, the lost ones too: forever. */
	if (nlost)
		ranks_abort(status ? status : 1);
	api.finalize();
}

int ranks_lost(void)
{
	return nlost;
}

bool ranks_is_lost(int rank)
{
	return on && rank >= 0 && rank < nranks && lost[rank];
}

const char *ranks_host_of(int rank)
{
	return hosts && rank >= 0 && rank < nranks ? hosts[rank] : "?";
}

/*
 * Poll the @n requests of @req not yet @done until they are: 50 us
 * sleeps growing to 1 ms keep a waiting rank off the CPU without adding
 * more than a millisecond. @limit 0: as long as it takes (the launcher
 * ends the wait if a rank dies); else false past @limit ns, with the
 * requests still open left undone.
 */
static bool wait_all(MPI_Request *req, bool *done, int n, uint64_t limit)
{
	uint64_t start = now_ns();
	long nap = 50000;

	for (;;) {
		bool all = true;

		for (int i = 0; i < n; i++) {
			int d = 0;

			if (done[i])
				continue;
			api.test(&req[i], &d, MPI_STATUS_IGNORE);
			done[i] = d != 0;
			all &= done[i];
		}
		if (all)
			return true;
		if (limit && now_ns() - start > limit)
			return false;
		nanosleep(&(struct timespec){ .tv_nsec = nap }, NULL);
		if (nap < 1000000)
			nap *= 2;
	}
}

/*
 * Rank 0, past the deadline: every rank whose request is still open is
 * lost, named once, and never waited for again. Its request is given up
 * (a receive cancelled) and freed; the caller then never frees the
 * buffer it named, as a message that comes after all may still land in
 * it or be read from it.
 */
static void lose(MPI_Request *req, const bool *done, bool recv, const char *what)
{
	for (int r = 1; r < nranks; r++) {
		if (done[r] || lost[r])
			continue;
		if (recv)
			api.cancel(&req[r]);
		api.request_free(&req[r]);
		lost[r] = true;
		nlost++;
		ranks_note(&(struct rank_note){ .kind = RANK_NOTE_LOST, .rank = r, .host = hosts[r],
						.what = what, .secs = (double)timeout_ns / 1e9 });
	}
}

/* Rank 0: from every rank still answering, @len[r] bytes (tag @tag)
 * into @buf[r]. True when a rank was lost on the way. */
static bool root_recv(char *const *buf, const size_t *len, int tag, bool deadline, const char *what)
{
	MPI_Request req[nranks];
	bool done[nranks];

	for (int r = 0; r < nranks; r++) {
		done[r] = r == 0 || lost[r];
		if (!done[r])
			api.irecv(buf[r], (int)len[r], api.t_byte, r, tag, api.world, &req[r]);
	}
	if (wait_all(req, done, nranks, deadline ? timeout_ns : 0))
		return false;
	lose(req, done, true, what);
	return true;
}

/* Rank 0: @len bytes of @buf to every rank still answering. True when a
 * rank was lost on the way (@buf must then stay allocated). */
static bool root_send(const void *buf, size_t len, int tag, bool deadline, const char *what)
{
	MPI_Request req[nranks];
	bool done[nranks];

	for (int r = 0; r < nranks; r++) {
		done[r] = r == 0 || lost[r];
		if (!done[r])
			api.isend(buf, (int)len, api.t_byte, r, tag, api.world, &req[r]);
	}
	if (wait_all(req, done, nranks, deadline ? timeout_ns : 0))
		return false;
	lose(req, done, false, what);
	return true;
}

/*
 * Any other rank that hears nothing from rank 0 in time: this host is
 * cut off, or rank 0 stopped, or rank 0 took this rank for lost and goes
 * on without it. It says so and ends, but only after one more timeout:
 * rank 0, in the last case, writes the outputs meanwhile, and an abort
 * that reached mpirun sooner would end rank 0 with the launch.
 */
static void root_gone(const char *what) __attribute__((noreturn));
static void root_gone(const char *what)
{
	uint64_t t = timeout_ns;

	ranks_note(&(struct rank_note){ .kind = RANK_NOTE_ROOT_GONE, .rank = my_rank,
					.host = hostname, .what = what, .secs = 4 * (double)t / 1e9,
					.end_secs = (double)t / 1e9 });
	nlost = 1;
	nanosleep(&(struct timespec){ .tv_sec = (time_t)(t / 1000000000u),
				      .tv_nsec = (long)(t % 1000000000u) }, NULL);
	ranks_abort(1);
}

/* A rank but 0: send @slen bytes of @s (tag @stag; nothing when @stag
 * is -1) and take rank 0's answer, @alen bytes into @a (tag TAG_ANSWER;
 * none when @a is NULL). */
static void ask_root(const void *s, size_t slen, int stag, void *a, size_t alen, bool deadline,
		     const char *what)
{
	MPI_Request req[2];
	bool done[2] = { stag < 0, a == NULL };

	if (stag >= 0)
		api.isend(s, (int)slen, api.t_byte, 0, stag, api.world, &req[0]);
	if (a)
		api.irecv(a, (int)alen, api.t_byte, 0, TAG_ANSWER, api.world, &req[1]);
	/* Rank 0 may first wait out the timeout of a lost rank once per
	 * step of an exchange (sizes, rows, flags) before it answers. */
	if (!wait_all(req, done, 2, deadline ? 4 * timeout_ns : 0))
		root_gone(what);
}

/* One rank alone cannot leave an exchange the others are in: past MPI's
 * int counts, the launch ends. */
static void too_big(size_t len)
{
	ranks_note(&(struct rank_note){ .kind = RANK_NOTE_TOO_BIG, .rank = my_rank,
					.host = hostname, .bytes = len });
	ranks_abort(1);
}

/* Rank 0 learns every rank's host name, to name a lost one. */
static void share_hosts(void)
{
	if (my_rank == 0) {
		char *buf[nranks];
		size_t len[nranks];

		for (int r = 0; r < nranks; r++) {
			buf[r] = hosts[r];
			len[r] = sizeof(hosts[r]);
		}
		memcpy(hosts[0], hostname, sizeof(hostname));
		root_recv(buf, len, TAG_HOST, false, "starting");
		for (int r = 0; r < nranks; r++)
			hosts[r][sizeof(hosts[r]) - 1] = '\0';
	} else {
		ask_root(hostname, sizeof(hostname), TAG_HOST, NULL, 0, false, "starting");
	}
}

int ranks_barrier(struct err *e)
{
	int answer = 0;

	(void)e;
	if (!on)
		return 0;
	if (my_rank == 0) {
		char *buf[nranks];
		size_t len[nranks];

		memset(buf, 0, sizeof(buf));
		memset(len, 0, sizeof(len));
		root_recv(buf, len, TAG_BARRIER, false, "starting a group");
		answer = nlost;
		root_send(&answer, sizeof(answer), TAG_ANSWER, false, "starting a group");
	} else {
		ask_root(NULL, 0, TAG_BARRIER, &answer, sizeof(answer), false, "starting a group");
		if (answer > nlost)
			nlost = answer;
	}
	return 0;
}

int ranks_bcast(void *buf, size_t len, struct err *e)
{
	char *m;

	if (!on)
		return 0;
	if (len > INT_MAX - sizeof(int))
		too_big(len);
	m = malloc(len + sizeof(int));
	if (!m)
		return err_set(e, ENOMEM, "out of memory");
	if (my_rank == 0) {
		memcpy(m, buf, len);
		memcpy(m + len, &nlost, sizeof(int));
		if (root_send(m, len + sizeof(int), TAG_ANSWER, true, "broadcasting"))
			return 0;	/* m stays: a lost rank's send may still read it */
	} else {
		int n;

		ask_root(NULL, 0, -1, m, len + sizeof(int), true, "broadcasting");
		memcpy(buf, m, len);
		memcpy(&n, m + len, sizeof(int));
		if (n > nlost)
			nlost = n;
	}
	free(m);
	return 0;
}

int ranks_max(int *v, unsigned n, struct err *e)
{
	size_t sz = n * sizeof(int);
	int *in, *answer;

	if (!on)
		return 0;
	in = calloc((size_t)nranks * n + 1, sizeof(int));
	answer = calloc(n + 1, sizeof(int));
	if (!in || !answer) {
		free(in);
		free(answer);
		return err_set(e, ENOMEM, "out of memory");
	}
	if (my_rank == 0) {
		char *buf[nranks];
		size_t len[nranks];
		bool gone;

		for (int r = 0; r < nranks; r++) {
			buf[r] = (char *)(in + (size_t)r * n);
			len[r] = sz;
		}
		gone = root_recv(buf, len, TAG_MAX, true, "agreeing with the other ranks");
		for (int r = 1; r < nranks; r++)
			for (unsigned i = 0; i < n && !lost[r]; i++)
				if (in[(size_t)r * n + i] > v[i])
					v[i] = in[(size_t)r * n + i];
		memcpy(answer, v, sz);
		answer[n] = nlost;
		gone |= root_send(answer, sz + sizeof(int), TAG_ANSWER, true, "agreeing with the other ranks");
		if (gone)
			return 0;	/* in and answer stay: see lose() */
	} else {
		ask_root(v, sz, TAG_MAX, answer, sz + sizeof(int), true, "agreeing with the other ranks");
		memcpy(v, answer, sz);
		if (answer[n] > nlost)
			nlost = answer[n];
	}
	free(in);
	free(answer);
	return 0;
}

/* Rank 0's side of ranks_gather: @lens[0] = @len bytes of its own. */
static int root_gather(const void *buf, size_t len, char **all, size_t *lens, struct err *e)
{
	uint64_t *n = calloc((size_t)nranks, sizeof(uint64_t));
	char *cnt[nranks], *at[nranks], *out, *packed;
	size_t szs[nranks], total = 0, off = 0;
	bool keep;

	if (!n)
		return err_set(e, ENOMEM, "out of memory");
	for (int r = 0; r < nranks; r++) {
		cnt[r] = (char *)&n[r];
		szs[r] = sizeof(uint64_t);
	}
	n[0] = len;
	keep = root_recv(cnt, szs, TAG_LEN, true, "gathering sizes");
	for (int r = 0; r < nranks; r++) {
		lens[r] = lost[r] ? 0 : (size_t)n[r];
		if (lens[r] > INT_MAX || total + lens[r] > INT_MAX) {
			ranks_note(&(struct rank_note){ .kind = RANK_NOTE_ROOT_TOO_BIG,
							.bytes = total + lens[r] });
			ranks_abort(1);
		}
		total += lens[r];
	}
	if (!keep)	/* else left to a late message: see lose() */
		free(n);
	out = malloc(total ? total : 1);
	if (!out)
		return err_set(e, ENOMEM, "out of memory");
	for (int r = 0; r < nranks; r++) {
		at[r] = out + off;
		off += lens[r];
	}
	memcpy(out, buf, len);
	if (!root_recv(at, lens, TAG_DATA, true, "gathering rows")) {
		*all = out;
		return 0;
	}
	/* A rank lost between its size and its bytes: the others' bytes,
	 * packed, in a new buffer (out stays, see lose()). */
	packed = malloc(total ? total : 1);
	if (!packed)
		return err_set(e, ENOMEM, "out of memory");
	off = 0;
	for (int r = 0; r < nranks; r++) {
		if (lost[r])
			lens[r] = 0;
		memcpy(packed + off, at[r], lens[r]);
		off += lens[r];
	}
	*all = packed;
	return 0;
}

int ranks_gather(const void *buf, size_t len, char **all, size_t *lens, struct err *e)
{
	uint64_t mine = len;

	*all = NULL;
	if (!on) {
		lens[0] = len;
		*all = malloc(len ? len : 1);
		if (!*all)
			return err_set(e, ENOMEM, "out of memory");
		memcpy(*all, buf, len);
		return 0;
	}
	if (len > INT_MAX)
		too_big(len);
	if (my_rank == 0)
		return root_gather(buf, len, all, lens, e);
	ask_root(&mine, sizeof(mine), TAG_LEN, NULL, 0, true, "gathering sizes");
	ask_root(buf, len, TAG_DATA, NULL, 0, true, "gathering rows");
	return 0;
}
