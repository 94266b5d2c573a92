/* fuzz_procfs_parse_task_stat.c - /proc/PID/stat and .../task/TID/stat;
 * comm may hold spaces and ')'. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct procfs_task t;
	int ret;

	if (!buf)
		return 0;
	ret = procfs_parse_task_stat(buf, size, &t);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	free(buf);
	return 0;
}
