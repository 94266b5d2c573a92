/*
 * capbpfdec.h - the bpf method's records (capbpfrec.h) decoded into
 * struct cap_event: pure, so tests/test_capbpfdec.c drives it with
 * made-up records.
 *
 * An open's event carries the file the kernel says the new descriptor
 * is (ev->fi: inode, device, whether a replay can read it) with the
 * path the program passed, which may be relative: ev->off is then the
 * descriptor it is relative to (AT_FDCWD: the task's working
 * directory), for the live side to resolve (capbpf.c).
 */
#ifndef FAULTLINE_CAPBPFDEC_H
#define FAULTLINE_CAPBPFDEC_H

#include <stddef.h>

#include "capture/capstream.h"

/*
 * Record @data (@len bytes, as the ring buffer gave it) into @ev: 1 when
 * it is an event (ev->fi, when set, is the caller's to free), 0 when it
 * is malformed (too short, of no known kind: counted in *bad), -ENOMEM.
 */
int capbpf_decode(const void *data, size_t len, struct cap_event *ev, uint64_t *bad);

#endif
