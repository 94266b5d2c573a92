/*
 * fuzz_procfs_scan_u64.c - the number scanner under every /proc and /sys
 * parser, checked against strtoull: same value, same overflow verdict,
 * and it stops exactly after the last digit.
 */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size), *digits;
	const char *p, *end, *d;
	unsigned long long want;
	uint64_t v = 0;
	int ret;

	if (!buf)
		return 0;
	p = buf;
	end = buf + size;
	ret = procfs_scan_u64(&p, end, &v);
	FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	d = buf;
	while (d < end && (*d == ' ' || *d == '\t'))
		d++;
	if (d == end || *d < '0' || *d > '9') {
		FUZZ_CHECK(ret == -EBADMSG);
		goto out;
	}
	/* strtoull would also take '-', '+' and more blanks: hand it digits only. */
	digits = fuzz_copy_str((const uint8_t *)d, (size_t)(end - d));
	if (!digits)
		goto out;
	for (size_t i = 0; digits[i]; i++)
		if (digits[i] < '0' || digits[i] > '9') {
			digits[i] = '\0';
			break;
		}
	errno = 0;
	want = strtoull(digits, NULL, 10);
	if (errno == ERANGE) {
		FUZZ_CHECK(ret == -EBADMSG);
	} else {
		FUZZ_CHECK(ret == 0 && v == want);
		FUZZ_CHECK(p == d + strlen(digits));
	}
	free(digits);
out:
	free(buf);
	return 0;
}
