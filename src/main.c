/*
 * main.c - the command line. The only place that prints errors
 * and decides the exit status:
 *   0  every job ran
 *   1  a job failed at run time, or the run was interrupted
 *   2  bad command line or job file, or a feature unavailable here;
 *      nothing was run
 * --verify JOBFILE... checks what write jobs left: 0 no mismatch, 1 a
 * mismatch, 2 a target that cannot be read (or a bad job file).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "lib/latclock.h"
#include "telemetry/cgroup.h"
#include "out/checksys_out.h"
#include "telemetry/delayacct.h"
#include "job/jobfile.h"
#include "out/jobtext.h"
#include "out/json_out.h"
#include "job/options.h"
#include "out/outfile.h"
#include "telemetry/perfev.h"
#include "telemetry/tracefmt.h"
#include "mpi/rankresult.h"
#include "mpi/ranks.h"
#include "lib/datadir.h"
#include "out/report.h"
#include "run/run.h"
#include "verdict/verdict.h"
#include "job/workloadcfg.h"
#include "workload/verify.h"

/* FAULTLINE_VERSION and FAULTLINE_COMMIT, written by the Makefile into
 * $(BUILD)/version.h (the project's version, and the git commit built). */
#include "version.h"

/* The embedded default job (jobs/demo.job, generated at build time). */
extern const char demo_job_text[];

/* The sampling period's default and floor (the man page's --interval). */
#define INTERVAL_DEFAULT_NS 1000000000ull
#define INTERVAL_MIN_NS 100000000ull

enum { EXIT_RAN = 0, EXIT_JOB_FAILED = 1, EXIT_INVALID = 2 };

struct cli {
	const char *output;
	bool fmt_normal, fmt_json;
	unsigned json_flags;		/* JSON_OUT_PLUS for json+ */
	const char *csv;
	uint64_t interval_ns;
	uint64_t stop_grace_ns;		/* --stop-grace; 0: run/stuck.h's default */
	bool quiet;
	bool parse_only;
	bool verify;			/* --verify: check what write jobs wrote, run nothing */
	bool demo;
	const char *demo_json;		/* --demo: JSON written here as well */
	const char *demo_scratch;	/* --demo: its scratch file, kept for the next run */
	bool check_system;
	bool verdict;			/* --verdict: the matrix of engines and memory */
	uint64_t budget_ns;
	bool write_probe;
	const char *target;
	bool mount_tracefs;		/* --mount-tracefs */
	bool delayacct;			/* --delayacct: every job's delayacct=1 */
	int njobargs;
	char **jobargs;		/* fio-style job options, in order */
	int nfiles;
	char **files;
	unsigned nsections;
	const char **sections;	/* --section=NAME: only the jobs so named */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: faultline [OPTIONS] JOBFILE...\n"
		"       faultline [OPTIONS] --name=NAME --OPT=VAL ...\n"
		"       faultline --demo\n"
		"       faultline --check-system [--target=PATH]\n"
		"       faultline --verdict [--directory=DIR | --filename=PATH] [--budget=DURATION]\n"
		"                 [--write-probe] [--output=DIR] [--csv=FILE] [JOBFILE...]\n"
		"                 mmap or a buffer pool, here: a fixed matrix, or the jobs of JOBFILE\n"
		"       faultline --parse-only JOBFILE...\n"
		"       faultline --verify JOBFILE...      check every block write jobs wrote\n"
		"       faultline --capture=DIR (--pid=PID[,PID...] | --comm=NAME | [--runtime=T] -- COMMAND...)\n"
		"                 [--capture_method=auto|pagecache|bpf|tracepoint]: what programs read and write,\n"
		"                 one fio iolog per thread, and DIR/capture.job, which replays them together\n"
		"       faultline --cmdhelp[=OPTION]\n"
		"       faultline --help | --version\n"
		"\n"
		"job options beside job files (fio's): --OPT=VAL before any --name applies to every\n"
		"  job file's jobs, beneath each file's own [global] and job sections;\n"
		"  --section=NAME (repeatable) runs only the jobs so named\n"
		"\n"
		"output options:\n"
		"  --output=FILE                 summary to FILE (default stdout)\n"
		"  --output-format=normal|json|json+|normal,json\n"
		"  --csv=FILE                    per-interval time series ('-' = stdout)\n"
		"  --interval=DURATION           sampling period (default 1s, minimum 100ms)\n"
		"  --quiet                       no live status line\n"
		"  --stop-grace=DURATION         after SIGTERM or Ctrl-C, how long a job may take to\n"
		"                                stop before it is given up as stuck (default 10s)\n"
		"  --mount-tracefs               mount tracefs for the per-job kernel counters if it is\n"
		"                                not mounted (root), and unmount it at the end\n"
		"  --delayacct                   where each job's threads' time went (the kernel's delay\n"
		"                                accounting, turned on for the run as root)\n"
		"\n"
		"See faultline(1) for job options, engines, CSV columns and JSON fields.\n");
}

/* "100ms", "1s", "2", "0.5s": a bare number is seconds, as in fio. */
static int parse_interval(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	double mult = 1e9;

	if (end == s || v < 0)
		return -EINVAL;
	if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "s") || !*end)
		mult = 1e9;
	else if (!strcmp(end, "m"))
		mult = 60e9;
	else
		return -EINVAL;
	*ns = (uint64_t)(v * mult + 0.5);
	return 0;
}

static bool is(const char *arg, const char *opt, const char **val)
{
	size_t n = strlen(opt);

	if (strncmp(arg, opt, n))
		return false;
	if (arg[n] == '\0') {
		*val = NULL;
		return true;
	}
	if (arg[n] == '=') {
		*val = arg + n + 1;
		return true;
	}
	return false;
}

/* Returns -1 to go on, or an exit status. */
static int parse_cli(struct cli *c, int argc, char **argv)
{
	c->fmt_normal = true;
	c->interval_ns = INTERVAL_DEFAULT_NS;
	c->jobargs = calloc((size_t)argc, sizeof(char *));
	c->files = calloc((size_t)argc, sizeof(char *));
	c->sections = calloc((size_t)argc, sizeof(char *));
	if (!c->jobargs || !c->files || !c->sections)
		return EXIT_INVALID;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (is(a, "--help", &v) || !strcmp(a, "-h")) {
			usage(stdout);
			return EXIT_RAN;
		} else if (is(a, "--version", &v)) {
			printf("faultline %s (commit %s)\n", FAULTLINE_VERSION, FAULTLINE_COMMIT);
			return EXIT_RAN;
		} else if (is(a, "--cmdhelp", &v)) {
			if (jobtext_cmdhelp(stdout, v && *v ? v : NULL) < 0) {
				fprintf(stderr, "faultline: --cmdhelp: no option named '%s'\n", v);
				return EXIT_INVALID;
			}
			return EXIT_RAN;
		} else if (is(a, "--output", &v) && v) {
			c->output = v;
		} else if (is(a, "--output-format", &v) && v) {
			c->fmt_normal = strstr(v, "normal") != NULL;
			c->fmt_json = strstr(v, "json") != NULL;
			/* fio's json+: json with the latency histograms' bins. */
			c->json_flags = strstr(v, "json+") ? JSON_OUT_PLUS : 0;
			for (const char *p = v; *p;) {
				size_t n = strcspn(p, ",");

				if (!((n == 6 && !strncmp(p, "normal", 6)) || (n == 4 && !strncmp(p, "json", 4)) ||
				      (n == 5 && !strncmp(p, "json+", 5)))) {
					fprintf(stderr, "faultline: --output-format=%s: expected normal, json, json+ "
						"or a comma-separated list of them\n", v);
					return EXIT_INVALID;
				}
				p += n + (p[n] == ',');
			}
		} else if (is(a, "--csv", &v) && v) {
			c->csv = v;
		} else if (is(a, "--interval", &v) && v) {
			if (parse_interval(v, &c->interval_ns) < 0) {
				fprintf(stderr, "faultline: --interval=%s: expected a duration such as 100ms or 1s\n", v);
				return EXIT_INVALID;
			}
			if (c->interval_ns < INTERVAL_MIN_NS) {
				fprintf(stderr, "faultline: --interval=%s is below the minimum of 100ms\n", v);
				return EXIT_INVALID;
			}
		} else if (is(a, "--stop-grace", &v) && v) {
			if (parse_interval(v, &c->stop_grace_ns) < 0 || !c->stop_grace_ns) {
				fprintf(stderr, "faultline: --stop-grace=%s: expected a duration above 0, "
					"such as 500ms or 10s\n", v);
				return EXIT_INVALID;
			}
		} else if (is(a, "--quiet", &v)) {
			c->quiet = true;
		} else if (is(a, "--parse-only", &v)) {
			c->parse_only = true;
		} else if (is(a, "--verify", &v) && !v) {
			c->verify = true;
		} else if (is(a, "--demo", &v)) {
			c->demo = true;
		} else if (is(a, "--verdict", &v) && !v) {
			c->verdict = true;
		} else if (is(a, "--budget", &v) && v) {
			if (parse_interval(v, &c->budget_ns) < 0 || c->budget_ns < 1000000000ull) {
				fprintf(stderr, "faultline: --budget=%s: expected a duration such as 90s or 5m\n", v);
				return EXIT_INVALID;
			}
		} else if (is(a, "--write-probe", &v) && !v) {
			c->write_probe = true;
		} else if (is(a, "--check-system", &v)) {
			c->check_system = true;
		} else if (is(a, "--target", &v) && v) {
			c->target = v;
		} else if (is(a, "--mount-tracefs", &v) && !v) {
			c->mount_tracefs = true;
		} else if (is(a, "--section", &v)) {
			if (!v || !*v) {
				fprintf(stderr, "faultline: --section needs a job's name: --section=NAME\n");
				return EXIT_INVALID;
			}
			c->sections[c->nsections++] = v;
		} else if (is(a, "--delayacct", &v) && !v) {
			c->delayacct = true;
		} else if (!strncmp(a, "--", 2)) {
			c->jobargs[c->njobargs++] = argv[i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "faultline: unknown option '%s' (see --help)\n", a);
			return EXIT_INVALID;
		} else {
			c->files[c->nfiles++] = argv[i];
		}
	}
	return -1;
}

static struct run *the_run;
static volatile sig_atomic_t signals_seen;
static struct timespec first_signal;	/* written by the handler alone */

/*
 * One request to stop can arrive twice: timeout(1) signals the command
 * and then its process group, and so does any kill of a group that
 * names the process too. Those come microseconds apart; a person's
 * second Ctrl-C, meant as "now", does not. A signal this soon after the
 * first is the first one again.
 */
#define SECOND_SIGNAL_NS 250000000ll

static void on_signal(int sig)
{
	struct timespec now;

	(void)sig;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (signals_seen) {
		if ((now.tv_sec - first_signal.tv_sec) * 1000000000ll + (now.tv_nsec - first_signal.tv_nsec) >=
		    SECOND_SIGNAL_NS) {
			/* Second Ctrl-C: at once, the host's settings as found. */
			delayacct_restore();
			_exit(EXIT_JOB_FAILED);
		}
		return;
	}
	first_signal = now;
	signals_seen = 1;
	if (the_run)
		run_request_stop(the_run);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* Neither interrupts the other's handler half way. */
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed --csv=- reader is an EPIPE the sampler handles, not a
	 * death that loses the summary. */
	signal(SIGPIPE, SIG_IGN);
}

/*
 * The kernel's delay accounting on for a run (--delayacct, a job's
 * delayacct=1, --verdict), before any worker exists: the kernel gives a
 * task its delay record only when it is made while the accounting is on.
 * Back as found on every way out: atexit for every return and exit, and
 * the second Ctrl-C restores it itself before _exit. As nobody nothing
 * is tried: the sampler says why the time_*_pct cells stay empty.
 */
static void delayacct_for_run(void)
{
	static bool registered;
	struct err e = { 0 };

	if (geteuid())
		return;
	if (!registered && atexit(delayacct_restore) == 0)
		registered = true;
	if (registered && delayacct_enable(&e))
		fprintf(stderr, "faultline: warning: --delayacct: %s; the time_*_pct cells stay empty\n", e.msg);
}

/* Thousands of jobs or targets need thousands of descriptors: take the
 * hard limit, as the soft default (1024) is an accident of history. Each
 * job's kernel counters hold about 20 more (perfev.h), so root, which
 * may, raises the hard limit to the kernel's own (fs.nr_open). */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	unsigned long long nr_open = 0;

	if (f) {
		if (fscanf(f, "%llu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (nr_open > rl.rlim_max) {
		struct rlimit up = { .rlim_cur = nr_open, .rlim_max = nr_open };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void print_warning(const char *msg)
{
	fprintf(stderr, "faultline: warning: %s\n", msg);
}

static void say_warning(void *arg, const char *msg)
{
	(void)arg;
	print_warning(msg);
}

/* The demo's jobs, the job files' and the command line's, as fio
 * orders them (jobfile_parse_cmdline). */
static int load_jobs(struct cli *c, struct joblist *jl, struct err *e)
{
	struct jobfile_src *src = calloc((size_t)c->nfiles + 1, sizeof(*src));
	bool *found = calloc(c->nsections + 1, sizeof(*found));
	struct jobfile_select sel = { .n = c->nsections, .names = c->sections, .found = found };
	unsigned n = 0;
	int ret;

	if (!src || !found) {
		free(src);
		free(found);
		return err_set(e, ENOMEM, "out of memory");
	}
	if (c->demo)
		src[n++] = (struct jobfile_src){ "jobs/demo.job (embedded)", demo_job_text };
	for (int i = 0; i < c->nfiles; i++)
		src[n++] = (struct jobfile_src){ c->files[i], NULL };
	ret = jobfile_parse_cmdline(jl, c->njobargs, c->jobargs, n, src, &sel, e);
	free(src);
	free(found);
	return ret;
}

/* Where the demo's outputs go unless the user chose: the current
 * directory, where `make demo` draws the plot from them. */
#define DEMO_CSV "faultline-demo.csv"
#define DEMO_JSON "faultline-demo.json"

/*
 * The demo runs anywhere: where no memory cgroup can be made it runs
 * without mem_limit and says what that changes. It writes its CSV and
 * JSON next to the summary unless told otherwise.
 */
static void demo_adapt(struct cli *c, struct joblist *jl)
{
	struct cgroup_info ci;
	bool limited = false;

	for (unsigned i = 0; i < jl->n; i++)
		limited |= jl->jobs[i]->mem_limit != 0;
	if (limited) {
		cgroup_probe(&ci, true);
		if (!ci.can_create) {
			fprintf(stderr,
				"faultline: demo: no memory cgroup can be made here (%s);\n"
				"faultline: demo: running without mem_limit, so the file fits in the page cache:\n"
				"faultline: demo: mmap will look better than in a larger-than-memory database.\n",
				ci.why);
			for (unsigned i = 0; i < jl->n; i++)
				jl->jobs[i]->mem_limit = 0;
		}
	}
	if (!c->csv)
		c->csv = DEMO_CSV;
	if (!c->fmt_json && !c->output)
		c->demo_json = DEMO_JSON;
	if (jl->n)
		c->demo_scratch = jl->jobs[0]->filename;
}

/*
 * --verify: every bs block of every write job's regions, checked as a
 * run of the job would lay them out. A mismatch names its target and
 * offset; read jobs are skipped, said so.
 */
static int verify_jobs(const struct joblist *jl)
{
	int status = EXIT_RAN;

	for (unsigned i = 0; i < jl->n; i++) {
		const struct job *j = jl->jobs[i];
		struct workload_job wj;
		struct verify_result vr;
		struct err e = { 0 };
		int ret;

		if (!job_writes(j)) {
			printf("verify: job '%s': reads only (rw=%s), nothing to check\n", j->name,
			       j->rw == RW_READ ? "read" : "randread");
			continue;
		}
		workloadcfg_resolve(&wj, j);
		ret = verify_job(&wj, &vr, &e);
		for (unsigned t = 0; t < vr.ntargets; t++) {
			const struct verify_target *vt = &vr.targets[t];

			printf("verify: job '%s': %s [%llu, %llu), bs=%llu: %llu blocks: %llu valid, "
			       "%llu mismatches, %llu never written\n", j->name, vt->path,
			       (unsigned long long)vt->base, (unsigned long long)(vt->base + vt->len),
			       (unsigned long long)j->bs, (unsigned long long)vt->blocks,
			       (unsigned long long)vt->valid, (unsigned long long)vt->bad,
			       (unsigned long long)vt->never);
			for (unsigned k = 0; k < vt->nkept; k++)
				printf("  mismatch: %s offset %llu: %s\n", vt->path,
				       (unsigned long long)vt->kept[k].off,
				       verify_code_name(vt->kept[k].code));
			if (vt->bad > vt->nkept)
				printf("  ... and %llu more mismatches in %s\n",
				       (unsigned long long)(vt->bad - vt->nkept), vt->path);
			if (vt->bad && status == EXIT_RAN)
				status = EXIT_JOB_FAILED;
		}
		if (!vr.ntargets && !ret)
			printf("verify: job '%s': ioengine=%s writes no target, nothing to check\n",
			       j->name, j->ioengine);
		verify_result_free(&vr);
		if (ret) {
			fprintf(stderr, "faultline: job '%s': %s\n", j->name, e.msg);
			status = EXIT_INVALID;
		}
	}
	fflush(stdout);
	return status;
}

/*
 * The summary and JSON, whole or not at all: a file goes
 * through a temporary file renamed into place (outfile.c); stdout is
 * checked, so a full disk or a closed pipe there is an error too.
 */
static int write_outputs(const struct cli *c, const struct run_result *res,
			 const struct rank_outputs *ro, struct err *e)
{
	bool to_file = c->output && strcmp(c->output, "-");
	struct outfile o = { 0 };
	FILE *out = stdout;
	json_t *doc = NULL;
	int ret = 0;

	/* Under MPI, rank 0 writes every rank's results and the aggregate. */
	if (ro && (c->fmt_json || c->demo_json)) {
		doc = rankout_json(ro);
		if (!doc)
			return err_set(e, ENOMEM, "JSON output: out of memory");
	}
	if (to_file) {
		if (c->fmt_json && !c->fmt_normal) {
			ret = doc ? json_out_write_doc(doc, c->output, e)
				  : json_out_write_file(res, c->output, c->json_flags, e);
			json_decref(doc);
			return ret;
		}
		ret = outfile_open(&o, c->output, e);
		if (ret) {
			json_decref(doc);
			return err_wrap(e, "--output");
		}
		out = o.f;
	}
	if (c->fmt_normal) {
		if (ro)
			rankout_report(out, ro);
		else
			report_normal(out, res);
	}
	if (c->fmt_json)
		ret = doc ? json_out_dump_doc(out, doc, e) : json_out_dump(out, res, c->json_flags, e);
	if (!ret && c->demo_json) {
		ret = doc ? json_out_write_doc(doc, c->demo_json, e)
			  : json_out_write_file(res, c->demo_json, c->json_flags, e);
		if (!ret) {
			char pd[4096];
			bool installed;

			datadir_plot(pd, sizeof(pd), &installed);
			fprintf(out, "\ndemo: time series in %s, results as JSON in %s%s%s%s\n", c->csv,
				c->demo_json, getenv("FAULTLINE_DEMO_PLOT") ? "" : "; draw them with ",
				getenv("FAULTLINE_DEMO_PLOT") ? "" : installed ? "faultline-plot" : "plot/faultline-plot",
				getenv("FAULTLINE_DEMO_PLOT") ? "" : " " DEMO_CSV " -o faultline-demo.png");
		}
		if (!ret && c->demo_scratch)
			fprintf(out, "demo: the scratch file %s is kept, so the next demo need not "
				"lay it out again; remove it when done\n", c->demo_scratch);
	}
	json_decref(doc);
	if (to_file) {
		if (ret) {
			outfile_abort(&o);
			return ret;
		}
		ret = outfile_commit(&o, e);
		return ret ? err_wrap(e, "--output") : 0;
	}
	if ((fflush(stdout) != 0 || ferror(stdout)) && !ret)
		ret = err_set(e, errno ? errno : EIO, "writing the summary to standard output: %s",
			      strerror(errno ? errno : EIO));
	return ret;
}

/*
 * --verdict: --directory= and --filename= say where; any other job
 * option is refused, since the matrix is fixed; job files are the user's
 * workloads instead of the matrix. --output names the directory of
 * verdict.json and verdict.html.
 */
static int run_verdict(struct cli *c, int argc, char **argv)
{
	struct verdict_opts vo = { 0 };
	struct err e = { 0 };
	char cmd[4096];
	size_t at = 0;
	int ret;

	for (int i = 0; i < argc && at < sizeof(cmd) - 1; i++)
		at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, "%s%s", i ? " " : "", argv[i]);
	for (int i = 0; i < c->njobargs; i++) {
		const char *a = c->jobargs[i];

		if (!strncmp(a, "--directory=", 12))
			vo.directory = a + 12;
		else if (!strncmp(a, "--filename=", 11))
			vo.filename = a + 11;
		else {
			fprintf(stderr, "faultline: --verdict runs a fixed matrix: '%s' is not one of its "
				"options (--directory, --filename, --budget, --write-probe, --output, --csv)\n", a);
			return EXIT_INVALID;
		}
	}
	/* Job files: the user's workloads instead of the fixed matrix. */
	if (c->nfiles && vo.filename) {
		fprintf(stderr, "faultline: --verdict: a job file names its own targets (filename=), "
			"not --filename\n");
		return EXIT_INVALID;
	}
	vo.jobfiles = c->files;
	vo.njobfiles = (unsigned)c->nfiles;
	if (vo.directory && vo.filename) {
		fprintf(stderr, "faultline: --verdict: --directory or --filename, not both\n");
		return EXIT_INVALID;
	}
	vo.budget_ns = c->budget_ns ? c->budget_ns : 600000000000ull;
	vo.write_probe = c->write_probe;
	vo.outdir = c->output;
	vo.csv = c->csv;
	vo.cmdline = cmd;
	vo.status_line = !c->quiet && isatty(2);
	vo.current = &the_run;
	vo.stop = &signals_seen;
	cgroup_reap_stale(say_warning, NULL);
	jobfile_set_warn(print_warning);
	install_signals();
	raise_fd_limit();
	latclock_init();
	/* Where the time went is evidence: every cell's job measures it. */
	delayacct_for_run();
	ret = verdict_main(&vo, stdout, &e);
	if (ret) {
		fprintf(stderr, "faultline: %s\n", e.msg);
		return vo.write_failed ? EXIT_JOB_FAILED : EXIT_INVALID;
	}
	if (vo.unanswered) {
		fprintf(stderr, "faultline: verdict: %u workload%s got no result from any engine "
			"(every run failed; the reasons are in the verdict above)\n", vo.unanswered,
			vo.unanswered == 1 ? "" : "s");
		return EXIT_JOB_FAILED;
	}
	return signals_seen ? EXIT_JOB_FAILED : EXIT_RAN;
}

/*
 * Under MPI: did every rank get through the step whose result is @ret?
 * A job file or target error on any rank stops all ranks before anything
 * runs (exit 2 everywhere), reported once by rank 0: each distinct
 * message with the ranks and hosts that gave it. Without MPI, @ret.
 */
static int ranks_agree(int ret, const struct err *e)
{
	char mine[sizeof(e->msg) + 300], *all = NULL;
	size_t lens[ranks_size()], off[ranks_size()];
	int bad = ret != 0, n = ranks_size();
	struct err ge = { 0 };

	if (!ranks_on())
		return ret;
	/* "host\tmessage", or "" for a rank that got through. */
	snprintf(mine, sizeof(mine), "%s%s%s", ret ? ranks_host() : "", ret ? "\t" : "", ret ? e->msg : "");
	/* First a wait without a deadline: another rank may still be laying
	 * out a large file, and the gather's deadline would take it for lost. */
	if (ranks_barrier(&ge) || ranks_gather(mine, strlen(mine) + 1, &all, lens, &ge) || ranks_max(&bad, 1, &ge)) {
		free(all);
		return ret ? ret : -EIO;
	}
	for (int r = 0; all && r < n; r++)
		off[r] = r ? off[r - 1] + lens[r - 1] : 0;
	for (int r = 0; all && r < n; r++) {
		const char *m = strchr(all + off[r], '\t');
		int same = 0;
		bool seen = false;

		if (!m)
			continue;
		for (int k = 0; k < n; k++) {
			const char *o = strchr(all + off[k], '\t');

			if (o && !strcmp(o, m)) {
				seen |= k < r;
				same++;
			}
		}
		if (seen)
			continue;
		if (same == n) {
			fprintf(stderr, "faultline: %s\n", m + 1);
			continue;
		}
		fprintf(stderr, "faultline: rank");
		for (int k = 0; k < n; k++) {
			const char *o = strchr(all + off[k], '\t');

			if (o && !strcmp(o, m))
				fprintf(stderr, " %d (%.*s)", k, (int)(o - (all + off[k])), all + off[k]);
		}
		fprintf(stderr, " of %d: %s\n", n, m + 1);
	}
	if (all && bad)
		fprintf(stderr, "faultline: nothing was run on any of the %d ranks\n", n);
	free(all);
	if (bad && !ret)
		return -ECANCELED;
	return ret;
}

static int faultline_main(int argc, char **argv);

/*
 * faultline --capture=DIR: its own options (--pid, --comm, --runtime,
 * --capture_method, and a command after --); anything else is refused. Bad input exits 2
 * with nothing made; a capture that started exits 0, or 1 when a log or
 * the trace failed.
 */
static int capture_cli(int argc, char **argv)
{
	struct capture_opts o = { 0 };
	struct capture_result res;
	struct err e = { 0 };
	int *pids = NULL, status = EXIT_INVALID, ret;
	char cmd[4096];
	size_t at = 0;

	for (int i = 0; i < argc && at < sizeof(cmd) - 1; i++)
		at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, "%s%s", i ? " " : "", argv[i]);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				o.argv = argv + i + 1;
			break;
		}
		if (is(a, "--capture", &v) && v && *v) {
			o.dir = v;
		} else if (is(a, "--pid", &v) && v) {
			if (pids || capture_parse_pids(v, &pids, &o.npids) < 0) {
				fprintf(stderr, "faultline: --pid=%s: expected process ids, comma-separated (once)\n", v);
				goto out;
			}
			o.pids = pids;
		} else if (is(a, "--comm", &v) && v && *v) {
			o.comm = v;
		} else if (is(a, "--capture_method", &v) && v) {
			o.method = v;
		} else if (is(a, "--runtime", &v) && v) {
			if (parse_interval(v, &o.runtime_ns) < 0 || !o.runtime_ns) {
				fprintf(stderr, "faultline: --runtime=%s: expected a duration such as 30s or 5m\n", v);
				goto out;
			}
		} else {
			fprintf(stderr, "faultline: --capture takes --pid=, --comm=, --runtime=, --capture_method= and "
				"-- COMMAND; not '%s'\n", a);
			goto out;
		}
	}
	if (!o.dir || (!!o.npids + !!o.comm + !!o.argv) != 1) {
		fprintf(stderr, "faultline: --capture=DIR needs one of --pid=PID[,PID...], --comm=NAME or "
			"-- COMMAND [ARGS]\n");
		goto out;
	}
	o.stop = &signals_seen;
	o.cmdline = cmd;
	install_signals();
	ret = capture_run(&o, stdout, &res, &e);
	if (ret) {
		fprintf(stderr, "faultline: %s\n", e.msg);
		status = res.started ? EXIT_JOB_FAILED : EXIT_INVALID;
		goto out;
	}
	if (res.cmd_status >= 0 && WIFEXITED(res.cmd_status) && WEXITSTATUS(res.cmd_status))
		fprintf(stderr, "faultline: --capture: %s exited with status %d\n", o.argv[0],
			WEXITSTATUS(res.cmd_status));
	else if (res.cmd_status >= 0 && WIFSIGNALED(res.cmd_status))
		fprintf(stderr, "faultline: --capture: %s was killed by signal %d\n", o.argv[0],
			WTERMSIG(res.cmd_status));
	else if (res.cmd_pid && res.cmd_status < 0)
		fprintf(stderr, "faultline: --capture: stopped before %s ended: it goes on (pid %d)\n", o.argv[0],
			res.cmd_pid);
	status = res.write_err ? EXIT_JOB_FAILED : EXIT_RAN;
out:
	free(pids);
	return status;
}

static bool wants_capture(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--capture=", 10) || !strcmp(argv[i], "--capture"))
			return true;
	return false;
}

/* Under an MPI launcher, MPI is initialised before anything else (the
 * job files read ${RANK}) and finalised on every way out, as mpirun
 * takes a rank that exits without MPI_Finalize for a failure. */
/* What the ranks' exchanges have to say, on stderr as it happens. */
static void rank_note(const struct rank_note *n)
{
	rankout_note(stderr, n);
}

int main(int argc, char **argv)
{
	struct err e = { 0 };
	int status;

	ranks_set_notes(rank_note);
	if (ranks_init(&e)) {
		fprintf(stderr, "faultline: %s\n", e.msg);
		return EXIT_INVALID;
	}
	status = wants_capture(argc, argv) ? capture_cli(argc, argv) : faultline_main(argc, argv);
	/* mpirun ends the whole launch when a rank exits non-zero: none may
	 * leave before rank 0 has written everything. */
	if (ranks_on())
		ranks_barrier(&e);
	ranks_finalize(status);
	return status;
}

/* A run's outcome: its exit status, the outputs written (by rank 0 of
 * an MPI launch, from every rank's results), each failed job named. */
static int finish_run(const struct cli *c, struct run *run, int ret, const struct err *e)
{
	struct err we = { 0 };
	char who[300] = "";
	int status = ret ? EXIT_JOB_FAILED : EXIT_RAN;

	if (ret)
		fprintf(stderr, "faultline: %s\n", e->msg);
	run->res.version = FAULTLINE_VERSION;
	for (unsigned i = 0; i < run->res.njobs; i++)
		if (run->res.jobs[i].error)
			status = EXIT_JOB_FAILED;
	if (run->res.interrupted)
		status = EXIT_JOB_FAILED;
	if (run->res.csv_error) {
		fprintf(stderr, "faultline: the CSV %s is incomplete (it ends at the last whole row): %s\n",
			c->csv, strerror(run->res.csv_error));
		status = EXIT_JOB_FAILED;
	}
	if (ranks_on()) {
		struct rank_outputs ro_all;

		/* Every rank's results to rank 0, which alone writes. */
		if (rankresult_gather(&run->res, c->fmt_normal, c->fmt_json || c->demo_json, c->json_flags,
				      &ro_all, &we)) {
			fprintf(stderr, "faultline: rank %d: %s\n", ranks_rank(), we.msg);
			status = EXIT_JOB_FAILED;
		} else if (ranks_rank() == 0 && write_outputs(c, &run->res, &ro_all, &we)) {
			fprintf(stderr, "faultline: %s\n", we.msg);
			status = EXIT_JOB_FAILED;
		}
		rankout_free(&ro_all);
		snprintf(who, sizeof(who), "rank %d (%s): ", ranks_rank(), ranks_host());
	} else if (write_outputs(c, &run->res, NULL, &we)) {
		fprintf(stderr, "faultline: %s\n", we.msg);
		status = EXIT_JOB_FAILED;
	}
	report_failures(stderr, &run->res, who);
	return status;
}

/* The jobs run: prepared together, executed, their outcome. */
static int run_jobs(struct cli *c, struct joblist *jl, bool *left_running)
{
	/* Zeroed: a signal may reach on_signal before run_prepare fills it. */
	struct run run = { 0 };
	struct run_opts ro;
	struct err e = { 0 };
	bool any = false;
	int status, ret;

	for (unsigned i = 0; i < jl->n; i++) {
		jl->jobs[i]->delayacct |= c->delayacct;
		any |= jl->jobs[i]->delayacct;
	}
	if (any)
		delayacct_for_run();
	ro.interval_ns = c->interval_ns;
	ro.stop_grace_ns = c->stop_grace_ns;
	ro.csv_path = c->csv;
	ro.status_line = !c->quiet && isatty(2);
	/* Fail before the run, not after it, and create nothing yet. */
	if (c->output && strcmp(c->output, "-") && outfile_check(c->output, "--output", &e) < 0) {
		fprintf(stderr, "faultline: %s\n", e.msg);
		return EXIT_INVALID;
	}

	/* What a run killed by SIGKILL left behind, before making more. */
	cgroup_reap_stale(say_warning, NULL);
	the_run = &run;
	install_signals();
	raise_fd_limit();
	/* Before any worker: they read the latency clock it sets up. */
	latclock_init();
	ret = run_prepare(&run, jl, &ro, &e);
	if (ranks_on())
		ret = ranks_agree(ret, &e);
	else if (ret)
		fprintf(stderr, "faultline: %s\n", e.msg);
	if (ret) {
		/* The handler no longer reaches the run before run_destroy
		 * unmaps its stop flag (a signal in between wrote to it). */
		the_run = NULL;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		run_destroy(&run);
		/* Stopped while laying out a file: a Ctrl-C, exit 1. */
		return signals_seen ? EXIT_JOB_FAILED : EXIT_INVALID;
	}
	/* A signal before run_prepare made its stop flag had nowhere to go. */
	if (signals_seen)
		run_request_stop(&run);
	ret = run_execute(&run, &e);
	status = finish_run(c, &run, ret, &e);
	the_run = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* A stuck job's threads still read its job (run_destroy keeps the
	 * rest): they end with the process. */
	*left_running = run.nabandoned > 0;
	run_destroy(&run);
	return status;
}

static int faultline_main(int argc, char **argv)
{
	struct cli c = { 0 };
	struct joblist jl = { 0 };
	struct err e = { 0 };
	bool mounted_tracefs = false, left_running = false;
	int status, ret;

	status = parse_cli(&c, argc, argv);
	if (status >= 0)
		goto out_cli;
	status = EXIT_INVALID;

	/* Only when asked: mounting changes the host. */
	if (c.mount_tracefs) {
		ret = tracefmt_mount(&e);
		if (ret < 0) {
			fprintf(stderr, "faultline: %s\n", e.msg);
			goto out_cli;
		}
		mounted_tracefs = ret == 1;
	}

	if (c.check_system) {
		ret = checksys_out(stdout, c.target, c.fmt_json, &e);
		status = ret ? EXIT_INVALID : EXIT_RAN;
		if (ret)
			fprintf(stderr, "faultline: %s\n", e.msg);
		goto out_cli;
	}

	if (c.verdict && c.nsections) {
		fprintf(stderr, "faultline: --verdict runs every job of its job files, not --section's\n");
		status = EXIT_INVALID;
		goto out_cli;
	}
	if (c.verdict) {
		status = run_verdict(&c, argc, argv);
		goto out_cli;
	}

	jobfile_set_warn(print_warning);
	ret = load_jobs(&c, &jl, &e);
	if (ranks_on() && !c.parse_only && !c.verify)
		ret = ranks_agree(ret, &e);
	else if (ret)
		fprintf(stderr, "faultline: %s\n", e.msg);
	if (ret)
		goto out_jobs;
	if (c.demo)
		demo_adapt(&c, &jl);
	if (c.parse_only) {
		for (unsigned i = 0; i < jl.n; i++)
			jobtext_job(stdout, jl.jobs[i]);
		status = EXIT_RAN;
		goto out_jobs;
	}
	if (c.verify) {
		status = verify_jobs(&jl);
		goto out_jobs;
	}

	status = run_jobs(&c, &jl, &left_running);
out_jobs:
	if (!left_running)
		joblist_free(&jl);
out_cli:
	if (mounted_tracefs)
		tracefmt_umount();
	free(c.jobargs);
	free(c.sections);
	free(c.files);
	return status;
}
