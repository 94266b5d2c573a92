/*
 * blockdata.h - what every block faultline writes looks like, and the
 * check of a block read back (verify=crc32c, --verify).
 *
 * A written block is incompressible random data whose first
 * BLOCKDATA_HDR_SIZE bytes are a header, all fields little-endian:
 *
 *   byte  0  u64  magic       BLOCKDATA_MAGIC, the ASCII bytes "FAULTLN1"
 *   byte  8  u64  offset      byte offset of the block in the target
 *   byte 16  u64  generation  the writer's count, so a rewrite differs
 *   byte 24  u32  length      bytes in the block (a multiple of 512)
 *   byte 28  u32  crc32c      CRC32C of all @length bytes of the block,
 *                             computed with these 4 bytes taken as zero
 *
 * With another of fio's checksums (verify=crc64, md5, sha256, ...;
 * checksum.h) the header is the second form, magic "FAULTLN2": the same
 * offset, generation and length, then
 *
 *   byte 28  u8   checksum    enum verify_mode of the digest
 *   byte 29  3 bytes 0
 *   byte 32  the digest       checksum_len bytes, of all @length bytes of
 *                             the block computed with these bytes zero
 *
 * The check needs nothing but the block and where it was read from:
 * no record of what was written, so a crash can be checked afterwards.
 */
#ifndef FAULTLINE_BLOCKDATA_H
#define FAULTLINE_BLOCKDATA_H

#include <stddef.h>
#include <stdint.h>

#define BLOCKDATA_HDR_SIZE	32	/* bytes at the start of every written block */
/* "FAULTLN1" read as a little-endian u64: a hex dump of a written block
 * starts with the name of the tool that wrote it. */
#define BLOCKDATA_MAGIC		0x314e4c544c554146ull
/* "FAULTLN2": the header of a block with another checksum. */
#define BLOCKDATA_MAGIC2	0x324e4c544c554146ull
/* The granularity of the per-write change: a sector, the smallest unit a
 * device may deduplicate or tear a write at. */
#define BLOCKDATA_SECTOR	512u

/* Fill @buf (@len bytes, a multiple of 512, >= BLOCKDATA_HDR_SIZE) once with
 * incompressible random bytes from @seed: the body that later writes stamp. */
void blockdata_init(uint8_t *buf, uint32_t len, uint64_t seed);

/*
 * Make @buf the block for a write of @len bytes at byte offset @off,
 * generation @gen: the header, and in every 512-byte sector the 64-bit
 * word at sector offset BLOCKDATA_HDR_SIZE set to a hash of the sector's
 * own offset and @gen, so no two writes (nor two sectors) carry the same
 * bytes. The result depends only on the body from blockdata_init and
 * (@off, @gen, @len), not on earlier stamps. Runs once per write on the
 * hot path: one CRC32C pass over the block and a word per sector.
 */
void blockdata_stamp(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen);

/* blockdata_stamp with checksum @m (enum verify_mode) in the second
 * header form; crc32c (or none) is blockdata_stamp's. */
void blockdata_stamp_sum(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen, int m);

/* The header of checksum @m (either form) over @buf as it is, without
 * the per-sector words: for a block whose body is the job's own
 * (verify_pattern, buffer_pattern), which the words would break. */
void blockdata_seal(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen, int m);
/*
 * Check a block of @len bytes read back from byte offset @off, in
 * either header form (the block says which checksum it carries).
 *   0        a valid block written at @off (its generation in *@gen)
 *   -ENOENT  no header: never written by faultline
 *   -EBADMSG header magic present but the CRC does not match: torn or
 *            corrupted (a damaged length field lands here too)
 *   -EFAULT  a valid block that was written for another offset
 *            (misdirected write); *@gen is filled
 *   -EINVAL  a valid block whose length field is not @len (written with
 *            another block size; *@gen is filled), or @len itself is less
 *            than BLOCKDATA_HDR_SIZE
 * @gen may be NULL.
 */
int blockdata_check(const uint8_t *buf, uint32_t len, uint64_t off, uint64_t *gen);

/* CRC32C (Castagnoli, as iSCSI/ext4/btrfs use): init ~0 and final xor,
 * so blockdata_crc32c(0, "123456789", 9) == 0xE3069283; chainable (pass
 * the previous result as @crc). */
uint32_t blockdata_crc32c(uint32_t crc, const void *p, size_t n);

#endif
