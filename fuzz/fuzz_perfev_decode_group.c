/* fuzz_perfev_decode_group.c - perf group reads (PERF_FORMAT_GROUP with
 * the enabled and running times) against a plan of every counter. The
 * format files perfev reads are libtraceevent's to parse (tracefmt.c). */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/perfev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct perfev_plan p;
	struct perfev_values v;
	uint8_t memb[PERFEV_MAX_EVENTS];
	int ret;

	if (!buf)
		return 0;
	memset(&p, 0, sizeof(p));
	p.nev = PERFEV_MAX_EVENTS;
	for (unsigned i = 0; i < PERFEV_MAX_EVENTS; i++) {
		p.ev[i].counter = (uint8_t)(i % PERFEV_NR);
		p.ev[i].shift = (uint8_t)(i % 12);
		memb[i] = (uint8_t)i;
	}
	memset(&v, 0, sizeof(v));
	ret = perfev_decode_group(buf, size, &p, memb, size >= 8 ? (unsigned)(data[0] % (PERFEV_MAX_EVENTS + 1)) : 0, &v);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	free(buf);
	return 0;
}
