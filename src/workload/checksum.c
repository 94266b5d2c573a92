/*
 * checksum.c - fio's verify checksums; see checksum.h.
 */
#include "workload/checksum.h"

#include <endian.h>
#include <string.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>
#include <nettle/md5.h>
#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>
#include <xxhash.h>

static const char *const names[VERIFY_MODES] = {
	[VERIFY_CRC32C] = "crc32c", [VERIFY_CRC64] = "crc64", [VERIFY_CRC32] = "crc32",
	[VERIFY_CRC16] = "crc16", [VERIFY_CRC7] = "crc7", [VERIFY_MD5] = "md5",
	[VERIFY_SHA1] = "sha1", [VERIFY_SHA256] = "sha256", [VERIFY_SHA512] = "sha512",
	[VERIFY_SHA3_224] = "sha3-224", [VERIFY_SHA3_256] = "sha3-256",
	[VERIFY_SHA3_384] = "sha3-384", [VERIFY_SHA3_512] = "sha3-512",
	[VERIFY_XXHASH] = "xxhash",
};

static const unsigned lens[VERIFY_MODES] = {
	[VERIFY_CRC32C] = 4, [VERIFY_CRC64] = 8, [VERIFY_CRC32] = 4, [VERIFY_CRC16] = 2,
	[VERIFY_CRC7] = 1, [VERIFY_MD5] = MD5_DIGEST_SIZE, [VERIFY_SHA1] = SHA1_DIGEST_SIZE,
	[VERIFY_SHA256] = SHA256_DIGEST_SIZE, [VERIFY_SHA512] = SHA512_DIGEST_SIZE,
	[VERIFY_SHA3_224] = SHA3_224_DIGEST_SIZE, [VERIFY_SHA3_256] = SHA3_256_DIGEST_SIZE,
	[VERIFY_SHA3_384] = SHA3_384_DIGEST_SIZE, [VERIFY_SHA3_512] = SHA3_512_DIGEST_SIZE,
	[VERIFY_XXHASH] = 4,
};

_Static_assert(SHA512_DIGEST_SIZE <= CHECKSUM_MAX && SHA3_512_DIGEST_SIZE <= CHECKSUM_MAX,
	       "CHECKSUM_MAX holds every digest");

const char *checksum_name(enum verify_mode m)
{
	if (m == VERIFY_PATTERN)
		return "pattern";
	return (unsigned)m < VERIFY_MODES ? names[m] : NULL;
}

int checksum_by_name(const char *name)
{
	if (!strcmp(name, "0") || !strcmp(name, "none"))
		return VERIFY_NONE;
	/* fio's crc32c-intel is crc32c with the CPU's instruction, which
	 * ISA-L always uses where the CPU has it */
	if (!strcmp(name, "crc32c-intel"))
		return VERIFY_CRC32C;
	for (int i = 1; i < VERIFY_MODES; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

unsigned checksum_len(enum verify_mode m)
{
	return (unsigned)m < VERIFY_MODES ? lens[m] : 0;
}

/* crc7 (x^7 + x^3 + 1), the register kept in the top 7 bits of a byte
 * as Linux's crc7_be: one table lookup per byte. */
static uint8_t crc7_table[256];

__attribute__((constructor)) static void crc7_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint8_t c = (uint8_t)i;

		for (int k = 0; k < 8; k++)
			c = (uint8_t)(c & 0x80 ? (c << 1) ^ (0x09 << 1) : c << 1);
		crc7_table[i] = c;
	}
}

static uint8_t crc7(const uint8_t *p, size_t n)
{
	uint8_t c = 0;

	while (n--)
		c = crc7_table[c ^ *p++];
	return c >> 1;
}

/* ISA-L's crc32_iscsi takes an int length (its other CRCs a 64-bit one);
 * feed it at most this much per call. */
#define ISAL_CHUNK (1u << 30)

/* The cryptographic digests, through nettle's own table of each one's
 * init, update and digest. */
static const struct nettle_hash *const hashes[VERIFY_MODES] = {
	[VERIFY_MD5] = &nettle_md5, [VERIFY_SHA1] = &nettle_sha1,
	[VERIFY_SHA256] = &nettle_sha256, [VERIFY_SHA512] = &nettle_sha512,
	[VERIFY_SHA3_224] = &nettle_sha3_224, [VERIFY_SHA3_256] = &nettle_sha3_256,
	[VERIFY_SHA3_384] = &nettle_sha3_384, [VERIFY_SHA3_512] = &nettle_sha3_512,
};

/* Room for the state of any of them. */
union hash_ctx {
	struct md5_ctx md5;
	struct sha1_ctx sha1;
	struct sha256_ctx sha256;
	struct sha512_ctx sha512;
	struct sha3_224_ctx sha3_224;
	struct sha3_256_ctx sha3_256;
	struct sha3_384_ctx sha3_384;
	struct sha3_512_ctx sha3_512;
};

void checksum(enum verify_mode m, const void *p, size_t n, uint8_t *out)
{
	unsigned char *b = (unsigned char *)p;	/* ISA-L and nettle only read it */

	if ((unsigned)m < VERIFY_MODES && hashes[m]) {
		const struct nettle_hash *h = hashes[m];
		union hash_ctx c;

		h->init(&c);
		h->update(&c, n, b);
		h->digest(&c, h->digest_size, out);
		return;
	}
	switch (m) {
	case VERIFY_CRC32C: {
		/* init ~0, final xor, as blockdata_crc32c */
		uint32_t c = ~0u;

		for (size_t k; n; b += k, n -= k) {
			k = n < ISAL_CHUNK ? n : ISAL_CHUNK;
			c = crc32_iscsi(b, (int)k, c);
		}
		c = htole32(~c);
		memcpy(out, &c, 4);
		break;
	}
	case VERIFY_CRC64: {
		uint64_t c = htole64(crc64_ecma_refl(0, b, n));

		memcpy(out, &c, 8);
		break;
	}
	case VERIFY_CRC32: {
		uint32_t c = htole32(crc32_gzip_refl(0, b, n));

		memcpy(out, &c, 4);
		break;
	}
	case VERIFY_CRC16: {
		uint16_t c = htole16(crc16_t10dif(0, b, n));

		memcpy(out, &c, 2);
		break;
	}
	case VERIFY_CRC7:
		out[0] = crc7(b, n);
		break;
	case VERIFY_XXHASH: {
		uint32_t h = htole32(XXH32(b, n, 0));

		memcpy(out, &h, 4);
		break;
	}
	default:
		break;
	}
}
