/* fuzz_iolog_parse.c - fio's iolog (versions 2 and 3, blktrace) and the replay made of it. */
#include <errno.h>

#include "fuzz.h"
#include "workload/iolog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	const char *const names[] = { "fuzz.log" };
	struct replay_opts o = { .time_scale = 100 };
	struct replay_set s;
	struct iolog l;
	struct err e = { 0 };
	int ret;

	if (!buf)
		return 0;
	ret = iolog_parse(&l, buf, size, "fuzz.log", &e);
	FUZZ_CHECK(ret == 0 || ret == -EINVAL || ret == -ENOMEM);
	if (ret == 0) {
		FUZZ_CHECK(l.version == 2 || l.version == 3 || l.version == IOLOG_BLKTRACE);
		FUZZ_CHECK(l.n > 0 && l.nfiles > 0);
		for (size_t i = 0; i < l.n; i++) {
			FUZZ_CHECK(l.ent[i].file < l.nfiles);
			FUZZ_CHECK(l.ent[i].op < IOLOG_NOPS && l.ent[i].op != IOLOG_ADD);
		}
		/* As logged, then every file onto one, aligned and twice as fast. */
		for (int pass = 0; pass < 2; pass++) {
			if (pass) {
				o.redirect = "/x";
				o.align = 4096;
				o.time_scale = 200;
				o.writes = true;
			}
			if (replay_set_build(&s, &l, names, 1, &o, &e) == 0) {
				FUZZ_CHECK(s.nr == 1 && s.npaths > 0 && s.r[0].n > 0);
				for (size_t i = 0; i < s.r[0].n; i++) {
					const struct replay_req *q = &s.r[0].req[i];

					FUZZ_CHECK(q->target < s.npaths);
					FUZZ_CHECK(q->op <= IOLOG_DATASYNC && q->op != IOLOG_TRIM);
					if (q->op <= IOLOG_WRITE)
						FUZZ_CHECK(q->len <= s.max_len && q->off + q->len <= s.end[q->target]);
				}
				replay_set_free(&s);
			}
		}
		iolog_free(&l);
	}
	free(buf);
	return 0;
}
