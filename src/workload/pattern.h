/*
 * pattern.h - fio's buffer pattern syntax (buffer_pattern,
 * verify_pattern) and filling and checking blocks with one.
 *
 * A pattern is a sequence, without separators, of
 *   0xHEX      bytes in the order written; an odd digit count makes the
 *              first digit a byte of its own (0xaaa is 0a aa); a hex run
 *              ends where "0x" starts another (0xff0x14 is ff 14)
 *   DECIMAL    an int (-2^31..2^31-1) in the fewest little-endian bytes
 *              of its 32-bit value (66 is 42, -12 is f4 ff ff ff, 0 is
 *              00); it ends where a "0x" begins, so "-120xab" is -12, ab
 *   "TEXT"     the bytes between the double quotes (no escapes)
 *   'FILE'     the contents of FILE, read when the option is parsed
 *   %o         8 bytes: the block's byte offset, little-endian
 * as fio's lib/pattern.c reads them, up to PATTERN_MAX bytes. A block
 * is the pattern repeated from its first byte, every %o holding that
 * block's offset.
 *
 * Pure functions but for memory; pattern_parse reads a quoted file and
 * nothing else. pattern_free undoes pattern_parse.
 */
#ifndef FAULTLINE_PATTERN_H
#define FAULTLINE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fio's MAX_PATTERN_SIZE (lib/pattern.h; 512 bytes before fio 3.36): a
 * pattern file as large as a block must fill it whole (its t0027). */
#define PATTERN_MAX	(128u << 20)
/* %o fields in one pattern (fio's verify_fmt holds 8). */
#define PATTERN_FMT_MAX	8

struct pattern {
	uint8_t *bytes;
	unsigned len, cap;
	unsigned noff;			/* %o fields */
	unsigned off_at[PATTERN_FMT_MAX];	/* where each starts in bytes[] */
};

/* Parse @text into @p. 0, or -EINVAL with what is wrong in @why (a
 * file that cannot be read: its errno, negated). */
int pattern_parse(const char *text, struct pattern *p, char *why, size_t whylen);
void pattern_free(struct pattern *p);

/* @buf (@len bytes) as block @off of the pattern. */
void pattern_fill(const struct pattern *p, uint8_t *buf, uint32_t len, uint64_t off);

/* Whether @buf (@len bytes, read at @off) is the pattern's block there. */
bool pattern_check(const struct pattern *p, const uint8_t *buf, uint32_t len, uint64_t off);

#endif
