/* fuzz_procfs_parse_stat.c - /proc/stat: the aggregate cpu line and cpuN count. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct procfs_cpu cpu;
	int ret;

	if (!buf)
		return 0;
	ret = procfs_parse_stat(buf, size, &cpu);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG || ret == -ENOENT);
	free(buf);
	return 0;
}
