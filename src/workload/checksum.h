/*
 * checksum.h - fio's verify checksums over a written block (verify=crc64,
 * md5, sha256, ...), from the libraries Debian ships: ISA-L for the CRCs
 * it has (crc64 ECMA-182, crc32 IEEE, crc16 T10-DIF, crc32c), nettle for
 * md5, sha1, sha2 and sha3, libxxhash for xxhash (XXH32, as fio), and a
 * 256-entry table for crc7 (polynomial x^7 + x^3 + 1, as Linux's and
 * fio's). The digests are faultline's own block format's (blockdata.h),
 * not fio's: a block written by one tool is not checked by the other.
 */
#ifndef FAULTLINE_CHECKSUM_H
#define FAULTLINE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

/* The longest digest (sha512, sha3-512). */
#define CHECKSUM_MAX 64

/* fio's name of @m ("crc64", "sha3-256"), or NULL for VERIFY_NONE or
 * an unknown value. */
const char *checksum_name(enum verify_mode m);
/* The mode fio calls @name (crc32c-intel is crc32c), VERIFY_NONE for
 * "0"/"none", or -1 when unknown. */
int checksum_by_name(const char *name);
/* Bytes of @m's digest, 0 for an unknown mode. */
unsigned checksum_len(enum verify_mode m);
/* @m's digest of @n bytes at @p into @out (checksum_len bytes),
 * little-endian for the CRCs. */
void checksum(enum verify_mode m, const void *p, size_t n, uint8_t *out);

#endif
