/* fuzz_taskstats_parse_reply.c - a taskstats netlink answer (messages, nested attributes, the struct). */
#include <errno.h>

#include "fuzz.h"
#include "telemetry/taskstats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly @size bytes: a read past it is caught. */
	char *buf = fuzz_copy(data, size);
	struct taskstats_delays d;
	uint16_t family;
	int ret;

	if (!buf)
		return 0;
	ret = taskstats_parse_reply(buf, size, 29145, &d);
	/* A good answer has at least the block-I/O delay (version 1). */
	if (ret == 0)
		FUZZ_CHECK(d.have & (1u << TASKSTATS_BLKIO));
	else
		FUZZ_CHECK(ret < 0);
	ret = taskstats_parse_family(buf, size, &family);
	FUZZ_CHECK(ret <= 0);
	free(buf);
	return 0;
}
