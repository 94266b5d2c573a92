/* fuzz_perfev_parse_format.c - tracefs format and id files: fields, the
 * __print_symbolic values of tlb_flush's reasons; and group reads. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/perfev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const labels[] = { "remote IPI send", "local shootdown", "local MM shootdown",
					      "remote shootdown", "remote wrong CPU", "" };
	char *buf = fuzz_copy(data, size);
	struct perfev_plan p;
	struct perfev_values v;
	uint8_t memb[PERFEV_MAX_EVENTS];
	uint32_t id;
	long val;
	int ret;

	if (!buf)
		return 0;
	for (unsigned i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		ret = perfev_format_symbol(buf, size, "reason", labels[i], &val);
		FUZZ_CHECK(ret == 0 || ret == -ENOENT || ret == -EBADMSG);
	}
	perfev_format_has_field(buf, size, "order");
	perfev_format_has_field(buf, size, "");
	ret = perfev_parse_id(buf, size, &id);
	FUZZ_CHECK(ret == -EBADMSG || (ret == 0 && id > 0));

	/* The same bytes as a group read, against a plan of every counter. */
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
