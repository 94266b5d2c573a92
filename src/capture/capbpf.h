/*
 * capbpf.h - the capture's kernel side by BPF (capture.bpf.c): programs
 * on the raw system-call tracepoints and the scheduler's task events,
 * filtered by call and by task in the kernel, records through a BPF
 * ring buffer, decoded by capbpfdec.c. The same verbs as captrace.h, which is the
 * fallback where this cannot load.
 *
 * Functions return 0 or -errno (with @e) and never print.
 */
#ifndef FAULTLINE_CAPBPF_H
#define FAULTLINE_CAPBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capstream.h"
#include "lib/err.h"

struct capbpf;

/* The programs loaded (checked by the kernel's verifier), not yet
 * attached. Errors: -ENOTSUP built without BPF, or what libbpf or the
 * kernel said (no BTF, no CAP_BPF, a verifier refusal), with @e saying
 * which. */
/* What the programs hook: the system calls (the bpf method), or only
 * the file I/O path (the pagecache method: tracepoints in the page
 * cache, iomap's O_DIRECT and ext4's writes and syncs). */
enum capbpf_mode {
	CAPBPF_SYSCALLS,
	CAPBPF_PAGECACHE,
};

int capbpf_open(struct capbpf **out, enum capbpf_mode mode, struct err *e);
int capbpf_follow(struct capbpf *t, const int *tids, unsigned n, struct err *e);
int capbpf_comm(struct capbpf *t, const char *comm, struct err *e);
/* Attach: recording from now. */
int capbpf_start(struct capbpf *t, struct err *e);
/* Detach; what is in the ring buffer can still be read. */
void capbpf_stop(struct capbpf *t);
int capbpf_read(struct capbpf *t, struct cap_event **ev, size_t *n, size_t *cap, uint32_t *seq);
/* Records the ring buffer had no room for, and records that could not
 * be decoded. */
uint64_t capbpf_lost(struct capbpf *t);
/* preadv2/pwritev2 calls at the file's own position (offset -1). */
uint64_t capbpf_unpositioned(const struct capbpf *t);
/* The pagecache method: whether ext4's writes and syncs are hooked
 * (this kernel has those tracepoints). */
bool capbpf_ext4(const struct capbpf *t);
void capbpf_close(struct capbpf *t);

#endif
