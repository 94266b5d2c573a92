/*
 * fuzz_jobfile_parse_text.c - the job-file parser, then validation and
 * --parse-only printing of whatever jobs it accepted.
 *
 * ${VAR} expands from the harness's environment and $mb_memory/$ncpus
 * from this host, which is what a user's job file gets too.
 */
#include <stdio.h>

#include "fuzz.h"
#include "job/jobfile.h"
#include "out/jobtext.h"

static FILE *devnull;

static void no_warn(const char *msg)
{
	(void)msg;
}

/* Once, before the first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	jobfile_set_warn(no_warn);
	devnull = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct joblist jl = { 0 };
	struct err e = { 0 };
	char *text = fuzz_copy_str(data, size);
	unsigned i;

	if (!text)
		return 0;
	if (jobfile_parse_text(&jl, "fuzz.job", text, &e) == 0) {
		for (i = 0; i < jl.n; i++) {
			struct err ve = { 0 };

			job_validate(jl.jobs[i], no_warn, &ve);
			if (devnull)
				jobtext_job(devnull, jl.jobs[i]);
		}
	}
	/* Whatever the parser kept on failure must still be freeable. */
	joblist_free(&jl);
	free(text);
	return 0;
}
