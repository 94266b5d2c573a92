/*
 * fuzz_devinfo_parse_diskstats.c - the line of one device in /proc/diskstats.
 *
 * The device name is not taken from the input, so the seeds stay plain
 * diskstats files: each input is searched for the names the fixtures use
 * (whole disk, partition, md, dm, loop, virtio) and for "", the name no
 * line can carry.
 */
#include <errno.h>

#include "telemetry/devinfo.h"
#include "fuzz.h"

static const char *const names[] = {
	"sda", "sda2", "nvme0n1", "md0", "md0p1", "dm-0", "loop0", "vda", "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct devinfo_blkstat st;
	size_t i;
	int ret;

	if (!buf)
		return 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		ret = devinfo_parse_diskstats(buf, size, names[i], &st);
		FUZZ_CHECK(ret == 0 || ret == -EBADMSG || ret == -ENOENT);
		FUZZ_CHECK(ret != 0 || (st.nfields >= 11 && st.nfields <= 17));
	}
	free(buf);
	return 0;
}
