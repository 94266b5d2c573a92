/* fuzz_procfs_parse_vmstat.c - /proc/vmstat "name value" lines. */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	struct procfs_vmstat vm;
	int ret, k;

	if (!buf)
		return 0;
	ret = procfs_parse_vmstat(buf, size, &vm);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	if (ret == 0) {
		FUZZ_CHECK((vm.present >> PROCFS_VM_NR) == 0);
		/* A key that was not found reads as zero, never stale. */
		for (k = 0; k < PROCFS_VM_NR; k++)
			FUZZ_CHECK(procfs_vm_has(&vm, k) || vm.v[k] == 0);
	}
	free(buf);
	return 0;
}
