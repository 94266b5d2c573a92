/*
 * cappc.c - a buffered read's batches merged into one request; see
 * cappc.h.
 */
#include "capture/cappc.h"

#include <errno.h>
#include <stdlib.h>

static struct cappc_last *find(struct cappc *m, int tid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->t[i].tid == tid)
			return &m->t[i];
	return NULL;
}

int cappc_read(struct cappc *m, int tid, uint32_t dev, uint64_t ino, uint64_t first, uint64_t last)
{
	struct cappc_last *l = find(m, tid);

	if (l && l->dev == dev && l->ino == ino && l->last == last && first > l->first && first <= l->last) {
		l->first = first;
		return 0;
	}
	if (!l) {
		if (m->n == m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 16;
			struct cappc_last *t = realloc(m->t, cap * sizeof(*t));

			if (!t)
				return -ENOMEM;
			m->t = t;
			m->cap = cap;
		}
		l = &m->t[m->n++];
	}
	*l = (struct cappc_last){ .tid = tid, .dev = dev, .ino = ino, .first = first, .last = last };
	return 1;
}

void cappc_forget(struct cappc *m, int tid)
{
	struct cappc_last *l = find(m, tid);

	if (l)
		*l = m->t[--m->n];
}

void cappc_free(struct cappc *m)
{
	free(m->t);
	*m = (struct cappc){ 0 };
}
