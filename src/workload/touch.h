/*
 * touch.h - how a request's bytes are consumed, the same for every
 * engine (the `touch` option). For mmap this is where the page faults
 * happen; for psync/io_uring the bytes already sit in the buffer.
 */
#ifndef FAULTLINE_TOUCH_H
#define FAULTLINE_TOUCH_H

#include <stddef.h>
#include <stdint.h>

#include "workload/workload.h"

/* Page size the `page` mode steps by: the paper's benchmark reads one
 * byte of each 4 KiB page. */
#define TOUCH_PAGE_SIZE 4096

/*
 * Consume @len bytes at @data: copy into @copybuf (which holds at least
 * @len bytes), read one byte per page, every @stride-th byte, or
 * checksum every byte. Returns a value derived from the bytes read so
 * the compiler cannot drop the reads.
 */
uint64_t touch_consume(enum touch_mode m, uint64_t stride, const uint8_t *data,
		       size_t len, uint8_t *copybuf);

#endif
