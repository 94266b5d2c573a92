/*
 * test_blockdata.c - blockdata.c: CRC32C against published vectors and a
 * bitwise reference, chaining, and the written-block format: round trip,
 * every single-bit flip caught, misdirected and foreign blocks told
 * apart, fresh bytes for every write, an incompressible body.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "workload/blockdata.h"
#include "workload/checksum.h"

#define MAXLEN	65536u

static const uint32_t lens[] = { 512, 4096, 65536 };

/* The CRC32C definition, one bit at a time (reflected polynomial
 * 0x82F63B78): what the library must agree with. */
static uint32_t crc32c_ref(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);
	}
	return ~crc;
}

static uint8_t *block(uint32_t len, uint64_t seed)
{
	uint8_t *b = malloc(len);

	assert_non_null(b);
	blockdata_init(b, len, seed);
	return b;
}

/* ---- CRC32C ---- */

static void test_crc_check_value(void **state)
{
	(void)state;
	/* The "check" value of the CRC-32C catalogue entry (iSCSI). */
	assert_int_equal(blockdata_crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(blockdata_crc32c(0, "", 0), 0);
	assert_int_equal(blockdata_crc32c(0x12345678u, "", 0), 0x12345678u);
}

static void test_crc_rfc3720(void **state)
{
	/* RFC 3720 appendix B.4; the RFC prints each CRC as its bytes on the
	 * wire, least significant first ("aa 36 91 8a" for the zeros). */
	static const uint8_t read_pdu[48] = {
		0x01, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x14, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
		0x28, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t b[32];

	(void)state;
	memset(b, 0, sizeof(b));
	assert_int_equal(blockdata_crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xff, sizeof(b));
	assert_int_equal(blockdata_crc32c(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(blockdata_crc32c(0, b, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	assert_int_equal(blockdata_crc32c(0, b, 32), 0x113FDB5Cu);
	assert_int_equal(blockdata_crc32c(0, read_pdu, sizeof(read_pdu)), 0xD9963A56u);
}

/* Every length 0..300 at every alignment 0..7, and a few big ones: the
 * accelerated paths switch on both. */
static void test_crc_matches_reference(void **state)
{
	uint8_t *b = block(MAXLEN + 8, 42);

	(void)state;
	for (size_t a = 0; a < 8; a++)
		for (size_t n = 0; n <= 300; n++)
			assert_int_equal(blockdata_crc32c(7, b + a, n),
					 crc32c_ref(7, b + a, n));
	for (size_t n = 1000; n <= MAXLEN; n = n * 2 + 13)
		assert_int_equal(blockdata_crc32c(0, b + 3, n), crc32c_ref(0, b + 3, n));
	free(b);
}

static void test_crc_chains(void **state)
{
	uint8_t *b = block(4096, 7);
	uint32_t whole = blockdata_crc32c(0, b, 4096);

	(void)state;
	for (size_t cut = 0; cut <= 4096; cut += 111)
		assert_int_equal(blockdata_crc32c(blockdata_crc32c(0, b, cut),
						  b + cut, 4096 - cut), whole);
	assert_int_equal(blockdata_crc32c(blockdata_crc32c(0, "1234", 4), "56789", 5),
			 0xE3069283u);
	free(b);
}

/* ---- the block format ---- */

static void test_header_layout(void **state)
{
	uint8_t *b = block(4096, 1);
	uint8_t z[4096];
	uint32_t crc;

	(void)state;
	blockdata_stamp(b, 4096, 0x0102030405060708ull, 0x1112131415161718ull);
	assert_memory_equal(b, "FAULTLN1", 8);
	assert_int_equal(b[8], 0x08);	/* little-endian offset */
	assert_int_equal(b[15], 0x01);
	assert_int_equal(b[16], 0x18);	/* little-endian generation */
	assert_int_equal(b[23], 0x11);
	assert_int_equal(b[24] | b[25] << 8 | b[26] << 16 | b[27] << 24, 4096);
	/* The documented CRC: the whole block with the crc field zeroed. */
	crc = (uint32_t)b[28] | (uint32_t)b[29] << 8 | (uint32_t)b[30] << 16 |
	      (uint32_t)b[31] << 24;
	memcpy(z, b, sizeof(z));
	memset(z + 28, 0, 4);
	assert_int_equal(crc32c_ref(0, z, sizeof(z)), crc);
	free(b);
}

static void test_round_trip(void **state)
{
	static const uint64_t offs[] = { 0, 512, 4096, 1ull << 40, ~0ull - 65535 };
	static const uint64_t gens[] = { 0, 1, 2, 1000003, ~0ull };

	(void)state;
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		uint8_t *b = block(lens[l], l + 100);

		for (size_t o = 0; o < sizeof(offs) / sizeof(offs[0]); o++)
			for (size_t g = 0; g < sizeof(gens) / sizeof(gens[0]); g++) {
				uint64_t got = 12345;

				blockdata_stamp(b, lens[l], offs[o], gens[g]);
				assert_int_equal(blockdata_check(b, lens[l], offs[o], &got), 0);
				assert_true(got == gens[g]);
				assert_int_equal(blockdata_check(b, lens[l], offs[o], NULL), 0);
			}
		free(b);
	}
}

static void test_every_bit_flip_caught(void **state)
{
	(void)state;
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		uint32_t len = lens[l];
		uint8_t *b = block(len, l + 200);

		blockdata_stamp(b, len, 8192, 3);
		for (uint32_t bit = 0; bit < len * 8; bit++) {
			int r;

			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			r = blockdata_check(b, len, 8192, NULL);
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			/* A flip in the magic leaves no header at all. */
			if (bit < 64)
				assert_int_equal(r, -ENOENT);
			else if (r != -EBADMSG)
				fail_msg("len %u: flip of bit %u gave %d, not -EBADMSG",
					 len, bit, r);
		}
		assert_int_equal(blockdata_check(b, len, 8192, NULL), 0);
		free(b);
	}
}

static void test_torn_write(void **state)
{
	uint8_t *b = block(4096, 5), *old = block(4096, 5);

	(void)state;
	blockdata_stamp(old, 4096, 4096, 1);
	blockdata_stamp(b, 4096, 4096, 2);
	/* New first sector, old rest, and the other way round. */
	memcpy(b + 512, old + 512, 4096 - 512);
	assert_int_equal(blockdata_check(b, 4096, 4096, NULL), -EBADMSG);
	blockdata_stamp(b, 4096, 4096, 2);
	memcpy(b, old, 512);
	assert_int_equal(blockdata_check(b, 4096, 4096, NULL), -EBADMSG);
	free(b);
	free(old);
}

static void test_misdirected(void **state)
{
	uint8_t *b = block(4096, 9);
	uint64_t gen = 0;

	(void)state;
	blockdata_stamp(b, 4096, 40960, 77);
	assert_int_equal(blockdata_check(b, 4096, 40960 + 4096, &gen), -EFAULT);
	assert_true(gen == 77);
	assert_int_equal(blockdata_check(b, 4096, 0, NULL), -EFAULT);
	free(b);
}

static void test_never_written(void **state)
{
	uint8_t *b = block(4096, 11);

	(void)state;
	assert_int_equal(blockdata_check(b, 4096, 0, NULL), -ENOENT);
	memset(b, 0, 4096);
	assert_int_equal(blockdata_check(b, 4096, 0, NULL), -ENOENT);
	free(b);
}

static void test_length(void **state)
{
	uint8_t *b = block(8192, 13);
	uint64_t gen = 0;

	(void)state;
	/* Written with bs=4096, read back with bs=8192: intact, wrong size. */
	blockdata_stamp(b, 4096, 0, 5);
	assert_int_equal(blockdata_check(b, 8192, 0, &gen), -EINVAL);
	assert_true(gen == 5);
	/* Written with bs=8192, read back with bs=4096: cannot be verified. */
	blockdata_stamp(b, 8192, 0, 6);
	assert_int_equal(blockdata_check(b, 4096, 0, NULL), -EBADMSG);
	assert_int_equal(blockdata_check(b, 16, 0, NULL), -EINVAL);
	free(b);
}

static void test_each_write_differs(void **state)
{
	uint8_t *a = block(4096, 17), *b = malloc(4096);
	uint8_t *c = malloc(4096);

	(void)state;
	assert_non_null(b);
	assert_non_null(c);
	memcpy(b, a, 4096);
	blockdata_stamp(a, 4096, 4096, 1);
	blockdata_stamp(b, 4096, 4096, 2);
	/* Not just the header: every sector carries its own change. */
	for (uint32_t s = 0; s < 4096; s += 512)
		assert_memory_not_equal(a + s + BLOCKDATA_HDR_SIZE,
					b + s + BLOCKDATA_HDR_SIZE, 8);
	/* Neighbouring offsets, same generation. */
	memcpy(c, b, 4096);
	blockdata_stamp(c, 4096, 8192, 2);
	for (uint32_t s = 0; s < 4096; s += 512)
		assert_memory_not_equal(b + s + BLOCKDATA_HDR_SIZE,
					c + s + BLOCKDATA_HDR_SIZE, 8);
	/* No two sectors of one block alike (a deduplicating device). */
	for (uint32_t s = 512; s < 4096; s += 512)
		assert_memory_not_equal(a, a + s, 512);
	/* The stamp depends on (off, gen), not on earlier stamps. */
	blockdata_stamp(b, 4096, 4096, 1);
	assert_memory_equal(a, b, 4096);
	free(a);
	free(b);
	free(c);
}

/* A byte histogram as flat as random bytes' (chi-square over 255
 * degrees of freedom: mean 255, sd ~22.6; 400 is beyond 6 sd) and
 * bodies of two seeds unrelated: nothing a compressor could use. */
static void test_body_incompressible(void **state)
{
	uint8_t *a = block(MAXLEN, 21), *b = block(MAXLEN, 22);
	unsigned hist[256] = { 0 };
	double chi = 0, expect = MAXLEN / 256.0;
	size_t same = 0;

	(void)state;
	blockdata_stamp(a, MAXLEN, 0, 1);
	for (uint32_t i = 0; i < MAXLEN; i++)
		hist[a[i]]++;
	for (int v = 0; v < 256; v++)
		chi += (hist[v] - expect) * (hist[v] - expect) / expect;
	assert_true(chi < 400);
	for (uint32_t i = BLOCKDATA_HDR_SIZE; i < MAXLEN; i++)
		same += a[i] == b[i];
	assert_true(same < MAXLEN / 128);	/* ~1/256 by chance */
	/* Consecutive 4 KiB pieces of one body differ. */
	for (uint32_t i = 4096; i < MAXLEN; i += 4096)
		assert_memory_not_equal(a + i - 4096, a + i, 4096);
	free(a);
	free(b);
}


/* Known answers of the checksums from their libraries (the CRCs' check
 * value over "123456789": crc32 0xCBF43926, crc64 ECMA-182 reflected
 * (XZ) 0x995DC9BBDF1939FA, crc16 T10-DIF 0xD0DB, crc7 0x75, md5
 * 25f9e794323b453885f5181f1b624d0b). */
static void test_checksum_known(void **state)
{
	static const uint8_t md5[] = { 0x25, 0xf9, 0xe7, 0x94, 0x32, 0x3b, 0x45, 0x38,
				       0x85, 0xf5, 0x18, 0x1f, 0x1b, 0x62, 0x4d, 0x0b };
	static const struct {
		enum verify_mode m;
		const char *hex;
	} digests[] = {
		{ VERIFY_SHA1, "f7c3bc1d808e04732adf679965ccc34ca7ae3441" },
		{ VERIFY_SHA256, "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225" },
		{ VERIFY_SHA3_224, "5795c3d628fd638c9835a4c79a55809f265068c88729a1a3fcdf8522" },
	};
	uint8_t out[CHECKSUM_MAX];
	uint32_t v32;
	uint64_t v64;
	uint16_t v16;

	(void)state;
	checksum(VERIFY_CRC32, "123456789", 9, out);
	memcpy(&v32, out, 4);
	assert_int_equal(v32, 0xCBF43926u);
	checksum(VERIFY_CRC32C, "123456789", 9, out);
	memcpy(&v32, out, 4);
	assert_int_equal(v32, 0xE3069283u);
	checksum(VERIFY_CRC64, "123456789", 9, out);
	memcpy(&v64, out, 8);
	assert_true(v64 == 0x995DC9BBDF1939FAull);
	checksum(VERIFY_CRC16, "123456789", 9, out);
	memcpy(&v16, out, 2);
	assert_int_equal(v16, 0xD0DB);
	checksum(VERIFY_CRC7, "123456789", 9, out);
	assert_int_equal(out[0], 0x75);
	checksum(VERIFY_MD5, "123456789", 9, out);
	assert_memory_equal(out, md5, sizeof(md5));
	/* The digests nettle's table serves, against Python's hashlib. */
	for (size_t i = 0; i < sizeof(digests) / sizeof(digests[0]); i++) {
		char hex[2 * CHECKSUM_MAX + 1];
		unsigned len = checksum_len(digests[i].m);

		checksum(digests[i].m, "123456789", 9, out);
		for (unsigned k = 0; k < len; k++)
			snprintf(hex + 2 * k, 3, "%02x", out[k]);
		assert_string_equal(hex, digests[i].hex);
	}
	assert_int_equal(checksum_by_name("crc32c-intel"), VERIFY_CRC32C);
	assert_int_equal(checksum_by_name("sha3-512"), VERIFY_SHA3_512);
	assert_int_equal(checksum_by_name("pattern"), -1);
}

/* Every checksum: a stamped block checks, and a flipped bit anywhere
 * past the magic (body, header, digest) is caught; a block written for
 * another offset says so. */
static void test_checksums_catch_flips(void **state)
{
	(void)state;
	for (int m = VERIFY_CRC64; m < VERIFY_MODES; m++) {
		uint32_t len = 4096;
		uint8_t *b = block(len, (uint64_t)m);
		uint64_t g = 0;

		blockdata_stamp_sum(b, len, 8192, 7, m);
		assert_int_equal(blockdata_check(b, len, 8192, &g), 0);
		assert_true(g == 7);
		assert_int_equal(blockdata_check(b, len, 4096, NULL), -EFAULT);
		/* crc7 and crc16 miss some multi-bit errors by design; a
		 * single flip each catches (a sample of bits, all modes) */
		for (uint32_t bit = 64; bit < len * 8; bit += 61) {
			int r;

			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			r = blockdata_check(b, len, 8192, NULL);
			b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			if (r == 0)
				fail_msg("%s: flip of bit %u not caught", checksum_name(m), bit);
		}
		assert_int_equal(blockdata_check(b, len, 8192, NULL), 0);
		free(b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc_check_value),
		cmocka_unit_test(test_crc_rfc3720),
		cmocka_unit_test(test_crc_matches_reference),
		cmocka_unit_test(test_crc_chains),
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_bit_flip_caught),
		cmocka_unit_test(test_torn_write),
		cmocka_unit_test(test_misdirected),
		cmocka_unit_test(test_never_written),
		cmocka_unit_test(test_length),
		cmocka_unit_test(test_each_write_differs),
		cmocka_unit_test(test_body_incompressible),
		cmocka_unit_test(test_checksum_known),
		cmocka_unit_test(test_checksums_catch_flips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
