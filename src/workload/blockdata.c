/*
 * blockdata.c - the written-block format and CRC32C; see blockdata.h.
 *
 * The CRC comes from Intel's ISA-L (crc32_iscsi: the SSE4.2 crc32
 * instruction interleaved with PCLMUL folding where the CPU has them, a
 * table otherwise), so the hot path costs a few dozen ns per 4 KiB.
 */
#include "workload/blockdata.h"
#include "workload/checksum.h"
#include "lib/rng.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

/* Header field offsets (see blockdata.h for the layout). */
#define HDR_MAGIC	0
#define HDR_OFFSET	8
#define HDR_GEN		16
#define HDR_LENGTH	24
#define HDR_CRC		28

/* ISA-L takes an int length; feed it at most this much per call. */
#define CRC_CHUNK	(1u << 30)

uint32_t blockdata_crc32c(uint32_t crc, const void *p, size_t n)
{
	/*
	 * ISA-L's crc32_iscsi neither inverts the initial value nor the
	 * result: the usual convention (init ~0, final xor ~0, chainable
	 * through the previous result) is the inversion on both sides.
	 */
	unsigned char *b = (unsigned char *)p;	/* ISA-L only reads it */
	uint32_t c = ~crc;

	while (n) {
		size_t k = n < CRC_CHUNK ? n : CRC_CHUNK;

		c = crc32_iscsi(b, (int)k, c);
		b += k;
		n -= k;
	}
	return ~c;
}

static inline void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

void blockdata_init(uint8_t *buf, uint32_t len, uint64_t seed)
{
	uint32_t i = 0;

	for (; i + 8 <= len; i += 8)
		put64(buf + i, splitmix64(&seed));
	if (i < len) {
		uint64_t w = htole64(splitmix64(&seed));

		memcpy(buf + i, &w, len - i);
	}
}

/*
 * The word stamped into a sector: the splitmix64 finalizer (a bijection
 * with full avalanche) of the sector's own byte offset and the
 * generation, so neighbouring sectors and successive generations get
 * unrelated words.
 */
static inline uint64_t sector_word(uint64_t soff, uint64_t gen)
{
	uint64_t z = soff ^ rotl64(gen * 0x9e3779b97f4a7c15ull, 32);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void seal1(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen);
static void seal2(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen, int m, unsigned dl);

void blockdata_stamp(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen)
{
	if (len < BLOCKDATA_HDR_SIZE)
		return;		/* no room for a header: the caller's bs is wrong */
	for (uint32_t s = 0; s + BLOCKDATA_HDR_SIZE + 8 <= len; s += BLOCKDATA_SECTOR)
		put64(buf + s + BLOCKDATA_HDR_SIZE, sector_word(off + s, gen));
	seal1(buf, len, off, gen);
}

/* The first form's header over the block as it is. */
static void seal1(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen)
{
	put64(buf + HDR_MAGIC, BLOCKDATA_MAGIC);
	put64(buf + HDR_OFFSET, off);
	put64(buf + HDR_GEN, gen);
	put32(buf + HDR_LENGTH, len);
	put32(buf + HDR_CRC, 0);
	put32(buf + HDR_CRC, blockdata_crc32c(0, buf, len));
}

/* CRC32C of the first @len bytes of @buf with the crc field read as 0,
 * without writing to @buf. */
static uint32_t block_crc(const uint8_t *buf, uint32_t len)
{
	uint8_t hdr[BLOCKDATA_HDR_SIZE];

	memcpy(hdr, buf, sizeof(hdr));
	put32(hdr + HDR_CRC, 0);
	return blockdata_crc32c(blockdata_crc32c(0, hdr, sizeof(hdr)),
				buf + sizeof(hdr), len - sizeof(hdr));
}

/* The second form's digest field, after the first 32 bytes. */
#define HDR_SUM_TYPE	28
#define HDR_DIGEST	BLOCKDATA_HDR_SIZE

void blockdata_stamp_sum(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen, int m)
{
	unsigned dl = checksum_len((enum verify_mode)m);

	if (m == VERIFY_CRC32C || !dl) {
		blockdata_stamp(buf, len, off, gen);
		return;
	}
	if (len < BLOCKDATA_HDR_SIZE + dl)
		return;		/* no room for a header: the caller's bs is wrong */
	for (uint32_t s = 0; s + BLOCKDATA_HDR_SIZE + 8 <= len; s += BLOCKDATA_SECTOR)
		put64(buf + s + BLOCKDATA_HDR_SIZE, sector_word(off + s, gen));
	seal2(buf, len, off, gen, m, dl);
}

void blockdata_seal(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen, int m)
{
	unsigned dl = checksum_len((enum verify_mode)m);

	if (m == VERIFY_CRC32C || !dl) {
		if (len >= BLOCKDATA_HDR_SIZE)
			seal1(buf, len, off, gen);
	} else if (len >= BLOCKDATA_HDR_SIZE + dl) {
		seal2(buf, len, off, gen, m, dl);
	}
}

/* The second form's header and digest over the block as it is. */
static void seal2(uint8_t *buf, uint32_t len, uint64_t off, uint64_t gen, int m, unsigned dl)
{
	put64(buf + HDR_MAGIC, BLOCKDATA_MAGIC2);
	put64(buf + HDR_OFFSET, off);
	put64(buf + HDR_GEN, gen);
	put32(buf + HDR_LENGTH, len);
	put32(buf + HDR_SUM_TYPE, (uint32_t)m);
	memset(buf + HDR_DIGEST, 0, dl);
	checksum((enum verify_mode)m, buf, len, buf + HDR_DIGEST);
}

/* Whether the first @len bytes of @buf match their digest (second form),
 * without writing to @buf: the digest taken with its field zero. */
static bool sum_ok(const uint8_t *buf, uint32_t len, enum verify_mode m, unsigned dl)
{
	uint8_t want[CHECKSUM_MAX], got[CHECKSUM_MAX];
	uint8_t *copy;
	bool ok;

	if (len < BLOCKDATA_HDR_SIZE + dl)
		return false;
	copy = malloc(len);
	if (!copy)
		return false;
	memcpy(want, buf + HDR_DIGEST, dl);
	memcpy(copy, buf, len);
	memset(copy + HDR_DIGEST, 0, dl);
	checksum(m, copy, len, got);
	ok = !memcmp(want, got, dl);
	free(copy);
	return ok;
}

/* blockdata_check for the second header form. */
static int check_sum(const uint8_t *buf, uint32_t len, uint64_t off, uint64_t *gen)
{
	uint32_t blen = get32(buf + HDR_LENGTH), t = get32(buf + HDR_SUM_TYPE);
	unsigned dl = t < VERIFY_MODES ? checksum_len((enum verify_mode)t) : 0;

	if (!dl || t == VERIFY_CRC32C)
		return -EBADMSG;	/* a damaged type field */
	if (!sum_ok(buf, len, (enum verify_mode)t, dl)) {
		if (blen != len && blen < len && blen % BLOCKDATA_SECTOR == 0 &&
		    sum_ok(buf, blen, (enum verify_mode)t, dl)) {
			if (gen)
				*gen = get64(buf + HDR_GEN);
			return -EINVAL;
		}
		return -EBADMSG;
	}
	if (gen)
		*gen = get64(buf + HDR_GEN);
	if (blen != len)
		return -EINVAL;
	return get64(buf + HDR_OFFSET) == off ? 0 : -EFAULT;
}

int blockdata_check(const uint8_t *buf, uint32_t len, uint64_t off, uint64_t *gen)
{
	uint32_t blen, crc;

	if (len < BLOCKDATA_HDR_SIZE)
		return -EINVAL;
	if (get64(buf + HDR_MAGIC) == BLOCKDATA_MAGIC2)
		return check_sum(buf, len, off, gen);
	if (get64(buf + HDR_MAGIC) != BLOCKDATA_MAGIC)
		return -ENOENT;
	blen = get32(buf + HDR_LENGTH);
	crc = get32(buf + HDR_CRC);
	if (block_crc(buf, len) != crc) {
		/*
		 * Before calling it damaged: an intact block written with a
		 * smaller block size than the caller reads with says so. A
		 * length field bigger than @len cannot be verified here, so
		 * it reads as damaged.
		 */
		if (blen != len && blen >= BLOCKDATA_HDR_SIZE && blen < len &&
		    blen % BLOCKDATA_SECTOR == 0 && block_crc(buf, blen) == crc)
			goto intact_other_length;
		return -EBADMSG;
	}
	if (blen != len)
		goto intact_other_length;
	if (gen)
		*gen = get64(buf + HDR_GEN);
	return get64(buf + HDR_OFFSET) == off ? 0 : -EFAULT;

intact_other_length:
	if (gen)
		*gen = get64(buf + HDR_GEN);
	return -EINVAL;
}
