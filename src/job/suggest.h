/*
 * suggest.h - "did you mean": of the names offered, the one nearest to a
 * misspelt name, when it is near enough to be a typo.
 *
 * Knows no option table: options.c offers its names and aliases.
 */
#ifndef FAULTLINE_SUGGEST_H
#define FAULTLINE_SUGGEST_H

#include <stddef.h>

/* Longer names are never suggested, and the distance table of two names
 * this long still fits comfortably on the stack. */
#define SUGGEST_LEN_MAX 64

struct suggest {
	const char *name;	/* as the user wrote it */
	unsigned best;		/* edit distance of the nearest so far */
	const char *best_name;	/* the nearest so far (not terminated), or NULL */
	size_t best_len;
};

void suggest_init(struct suggest *s, const char *name);
/* Offer the @len characters at @cand (one name of a list, say). The first
 * of equally near names is kept. */
void suggest_offer(struct suggest *s, const char *cand, size_t len);
/* The nearest name, copied into @buf, when it is within a typo of the
 * name and not the name itself; else NULL. */
const char *suggest_result(const struct suggest *s, char *buf, size_t len);

#endif
