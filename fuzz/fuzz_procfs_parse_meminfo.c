/* fuzz_procfs_parse_meminfo.c - /proc/meminfo "Name:  NNN kB" lines. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct procfs_meminfo mi;
	int ret, k;

	if (!buf)
		return 0;
	ret = procfs_parse_meminfo(buf, size, &mi);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	if (ret == 0) {
		FUZZ_CHECK((mi.present >> PROCFS_MEM_NR) == 0);
		/* Every value was kB, so bytes are whole KiB (no overflow wrap). */
		for (k = 0; k < PROCFS_MEM_NR; k++)
			FUZZ_CHECK(procfs_mem_has(&mi, k) ? mi.bytes[k] % 1024 == 0
							  : mi.bytes[k] == 0);
	}
	free(buf);
	return 0;
}
