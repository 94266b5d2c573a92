/* fuzz_procfs_parse_tlb.c - /proc/interrupts: the TLB: line summed over CPU columns. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	uint64_t total = 0;
	unsigned ncpu = 0;
	int ret;

	if (!buf)
		return 0;
	ret = procfs_parse_tlb(buf, size, &total, &ncpu);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG || ret == -ENOENT);
	/* A header without a single CPUn column is not /proc/interrupts. */
	FUZZ_CHECK(ret != 0 || ncpu > 0);
	/* @ncpu may be NULL. */
	procfs_parse_tlb(buf, size, &total, NULL);
	free(buf);
	return 0;
}
