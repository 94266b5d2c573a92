/*
 * pool_span.c - a request across pool pages, page by page; see
 * pool_span.h.
 */
#include "engines/pool_span.h"

#include <string.h>

/* Bytes of the span in the page it is at: from @in_page to the page's
 * end, or what is left of it. */
static uint32_t part(const struct pool_span_ops *o, uint32_t in_page, uint32_t left)
{
	const uint32_t room = (uint32_t)((1ull << o->shift) - in_page);

	return room < left ? room : left;
}

int pool_span_read(const struct pool_span_ops *o, uint64_t page, uint32_t in_page, uint8_t *dst,
		   uint32_t len)
{
	for (uint32_t done = 0; done < len; page++, in_page = 0) {
		const uint32_t n = part(o, in_page, len - done);
		uint8_t *data;
		uint64_t ref;
		int ret = o->get(o->arg, page, false, false, &data, &ref);

		if (ret < 0)
			return ret;
		memcpy(dst + done, data + in_page, n);
		o->put(o->arg, page, ref, false);
		done += n;
	}
	return 0;
}

int pool_span_write(const struct pool_span_ops *o, uint64_t page, uint32_t in_page,
		    const uint8_t *src, uint32_t len)
{
	for (uint32_t done = 0; done < len; page++, in_page = 0) {
		const uint32_t n = part(o, in_page, len - done);
		uint8_t *data;
		uint64_t ref;
		int ret = o->get(o->arg, page, true, n == 1u << o->shift, &data, &ref);

		if (ret < 0)
			return ret;
		memcpy(data + in_page, src + done, n);
		o->put(o->arg, page, ref, true);
		done += n;
	}
	return 0;
}
