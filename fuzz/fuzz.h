/*
 * fuzz.h - what every harness in fuzz/ shares.
 *
 * libFuzzer's own buffer may sit inside a larger allocation, so each
 * harness copies the input into a heap block of exactly the bytes the
 * parser is allowed to read: one byte past the end is then an ASan
 * report, not a silent read of the fuzzer's memory.
 */
#ifndef FAULTLINE_FUZZ_H
#define FAULTLINE_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);	/* optional */

/*
 * @size bytes, no terminator (the /proc and /sys parsers take a length).
 * ASan's malloc(0) gives a unique pointer with no readable byte, so even
 * the empty input is checked; NULL (out of memory) means skip the input.
 */
static inline char *fuzz_copy(const uint8_t *data, size_t size)
{
	char *buf = malloc(size);

	if (buf && size)
		memcpy(buf, data, size);
	return buf;
}

/* @size bytes and a NUL (parsers of C strings). */
static inline char *fuzz_copy_str(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1);

	if (buf) {
		if (size)
			memcpy(buf, data, size);
		buf[size] = '\0';
	}
	return buf;
}

/* A property the parser promises broke: make it a crash libFuzzer saves. */
#define FUZZ_CHECK(cond) do { if (!(cond)) abort(); } while (0)

#endif
