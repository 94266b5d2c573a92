/* fuzz_devinfo_parse_block_stat.c - /sys/block/DEV/stat (11, 15 or 17 fields). */
#include <errno.h>

#include "telemetry/devinfo.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct devinfo_blkstat st;
	int ret;

	if (!buf)
		return 0;
	ret = devinfo_parse_block_stat(buf, size, &st);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	FUZZ_CHECK(ret != 0 || (st.nfields >= 11 && st.nfields <= 17));
	free(buf);
	return 0;
}
