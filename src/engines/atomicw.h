/*
 * atomicw.h - fio's atomic=1: writes issued with RWF_ATOMIC (Linux 6.11),
 * which the kernel completes whole or not at all, where the target takes
 * them: statx(STATX_WRITE_ATOMIC) gives the unit sizes a file or device
 * can write untorn, and RWF_ATOMIC needs O_DIRECT and a request of a
 * power-of-two size within them.
 */
#ifndef FAULTLINE_ATOMICW_H
#define FAULTLINE_ATOMICW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* linux/fs.h's, which this system's headers may predate. */
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif

/*
 * Whether writes of @bs bytes to @fd (opened O_DIRECT) can carry
 * RWF_ATOMIC. When not, @why says why ("statx offers atomic writes of
 * 0..0 bytes", "kernel without STATX_WRITE_ATOMIC").
 */
bool atomicw_probe(int fd, uint64_t bs, char *why, size_t len);

#endif
