/*
 * ranks.c - the MPI launch; see ranks.h.
 *
 * libmpi is opened with dlopen, not linked: faultline started without a
 * launcher must behave exactly as before, load nothing and need no MPI
 * library on the host. mpi.h (libopenmpi-dev) gives the prototypes at
 * build time; Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE,
 * ...) are the addresses of its global objects (ompi_mpi_comm_world,
 * ...), so they are looked up by name like the functions. That is Open
 * MPI's ABI (libmpi.so.40, Open MPI 3 to 5), the MPI SPEC 14 names.
 *
 * Only the controller (main) thread calls MPI: MPI_THREAD_FUNNELED.
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
	__typeof__(&MPI_Ibarrier) ibarrier;
	__typeof__(&MPI_Ibcast) ibcast;
	__typeof__(&MPI_Igather) igather;
	__typeof__(&MPI_Igatherv) igatherv;
	__typeof__(&MPI_Iallreduce) iallreduce;
	__typeof__(&MPI_Test) test;
	MPI_Comm world;
	MPI_Datatype t_byte, t_int;
	MPI_Op op_max;
} api;

static bool on, finalized;
static int my_rank, nranks;
static char hostname[256];
static uint64_t timeout_ns = 30000000000ull;	/* 30 s until told the interval */
static bool timeout_fixed;			/* FAULTLINE_MPI_TIMEOUT given */

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
	SYM(ibarrier, "MPI_Ibarrier");
	SYM(ibcast, "MPI_Ibcast");
	SYM(igather, "MPI_Igather");
	SYM(igatherv, "MPI_Igatherv");
	SYM(iallreduce, "MPI_Iallreduce");
	SYM(test, "MPI_Test");
	SYM(world, "ompi_mpi_comm_world");
	SYM(t_byte, "ompi_mpi_byte");
	SYM(t_int, "ompi_mpi_int");
	SYM(op_max, "ompi_mpi_op_max");
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

void ranks_finalize(void)
{
	if (on && !finalized) {
		finalized = true;
		api.finalize();
	}
}

/*
 * Poll @req to completion: 50 us sleeps growing to 1 ms keep a waiting
 * rank off the CPU without adding more than a millisecond. @deadline
 * false: wait as long as it takes (the launcher ends the wait if a rank
 * dies); true: past the timeout, abort the launch.
 */
static void wait_req(MPI_Request *req, bool deadline, const char *what)
{
	uint64_t start = now_ns();
	long nap = 50000;
	int done = 0;

	for (;;) {
		api.test(req, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		if (deadline && now_ns() - start > timeout_ns) {
			fprintf(stderr, "faultline: rank %d (%s): no answer from every rank within %.0f s "
				"while %s: a rank has stopped responding; ending the launch\n",
				my_rank, hostname, (double)timeout_ns / 1e9, what);
			ranks_abort(1);
		}
		nanosleep(&(struct timespec){ .tv_nsec = nap }, NULL);
		if (nap < 1000000)
			nap *= 2;
	}
}

/* One rank alone cannot leave a collective the others are in: past MPI's
 * int counts, the launch ends. */
static void too_big(size_t len)
{
	fprintf(stderr, "faultline: rank %d (%s): %zu bytes to send at once, more than MPI counts; "
		"ending the launch\n", my_rank, hostname, len);
	ranks_abort(1);
}

int ranks_barrier(struct err *e)
{
	MPI_Request req;

	(void)e;
	if (!on)
		return 0;
	api.ibarrier(api.world, &req);
	wait_req(&req, false, "starting a group");
	return 0;
}

int ranks_bcast(void *buf, size_t len, struct err *e)
{
	MPI_Request req;

	if (!on)
		return 0;
	(void)e;
	if (len > INT_MAX)
		too_big(len);
	api.ibcast(buf, (int)len, api.t_byte, 0, api.world, &req);
	wait_req(&req, true, "broadcasting");
	return 0;
}

int ranks_max(int *v, unsigned n, struct err *e)
{
	MPI_Request req;

	(void)e;
	if (!on)
		return 0;
	api.iallreduce(MPI_IN_PLACE, v, (int)n, api.t_int, api.op_max, api.world, &req);
	wait_req(&req, true, "agreeing with the other ranks");
	return 0;
}

int ranks_gather(const void *buf, size_t len, char **all, size_t *lens, struct err *e)
{
	MPI_Request req;
	int mine = (int)len, *counts = NULL, *displs = NULL;
	size_t total = 0;
	char *out = NULL;

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
	if (my_rank == 0) {
		counts = calloc((size_t)nranks, sizeof(int));
		displs = calloc((size_t)nranks, sizeof(int));
		if (!counts || !displs) {
			/* Out of memory at rank 0: nothing to wait for, the
			 * others would block in the gather. */
			fprintf(stderr, "faultline: rank 0: out of memory gathering the ranks' data\n");
			ranks_abort(1);
		}
	}
	api.igather(&mine, 1, api.t_int, counts, 1, api.t_int, 0, api.world, &req);
	wait_req(&req, true, "gathering sizes");
	if (my_rank == 0) {
		for (int r = 0; r < nranks; r++) {
			displs[r] = (int)total;
			lens[r] = (size_t)counts[r];
			total += (size_t)counts[r];
		}
		if (total > INT_MAX) {
			fprintf(stderr, "faultline: rank 0: the ranks sent %zu bytes at once, more than MPI counts\n",
				total);
			ranks_abort(1);
		}
		out = malloc(total ? total : 1);
		if (!out) {
			fprintf(stderr, "faultline: rank 0: out of memory gathering the ranks' data\n");
			ranks_abort(1);
		}
	}
	api.igatherv(buf, mine, api.t_byte, out, counts, displs, api.t_byte, 0, api.world, &req);
	wait_req(&req, true, "gathering rows");
	free(counts);
	free(displs);
	*all = out;
	return 0;
}
