/*
 * grow.h - room for more at the end of an array that grows by doubling,
 * as the lists built once and read after (a log's requests, a job's
 * rows, the regions whose residency is read) do.
 */
#ifndef FAULTLINE_GROW_H
#define FAULTLINE_GROW_H

#include <errno.h>
#include <stdlib.h>

/* @p, @*cap elements of @size bytes each, all used: the array with twice
 * the room (@first when it has none yet), *@cap updated; NULL when out
 * of memory (or the size would overflow), @p then untouched. */
static inline void *grow_array(void *p, size_t size, size_t *cap, size_t first)
{
	size_t c = *cap ? *cap * 2 : first;
	void *n = c > *cap ? reallocarray(p, c, size) : NULL;

	if (n)
		*cap = c;
	return n;
}

/* Room for one more at @arr[@n] (of @cap): 0, or -ENOMEM with @arr and
 * @cap untouched. @arr and @cap are lvalues, set when it grows. */
#define grow_one(arr, n, cap, first)                                                   \
	({                                                                             \
		int ret_ = 0;                                                          \
		if ((n) == (cap)) {                                                    \
			void *p_ = grow_array((arr), sizeof(*(arr)), &(cap), (first)); \
			if (p_)                                                        \
				(arr) = p_;                                            \
			else                                                           \
				ret_ = -ENOMEM;                                        \
		}                                                                      \
		ret_;                                                                  \
	})

#endif
