/* fuzz_psi_parse.c - pressure files (/proc/pressure/memory, memory.pressure): some/full lines. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct psi_totals t;
	int ret;

	if (!buf)
		return 0;
	ret = psi_parse(buf, size, &t);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	/* A good file has its some line; a missing full line reads 0. */
	if (ret == 0)
		FUZZ_CHECK(t.some_ok && (t.full_ok || t.full_us == 0));
	free(buf);
	return 0;
}
