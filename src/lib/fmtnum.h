/*
 * fmtnum.h - a number as printf's "%.*f" writes it, a tenth of the time.
 *
 * The sampler writes some 60 numbers per job per interval: at 2000 jobs
 * every 100 ms, snprintf's 200-300 ns a number was half of a sample's
 * cost (tests/bench/README.md, many-jobs). fmt_fixed scales the value to
 * an integer and writes its digits by hand; where that could round
 * differently from printf (a product within a few units in the last
 * place of a half, a value too large or not finite, a precision over
 * 9), it hands the number to snprintf, so its output is always
 * printf's, byte for byte. fmt_append is printf at the end of a text
 * growing in a fixed buffer (the verdict's job texts).
 */
#ifndef FAULTLINE_FMTNUM_H
#define FAULTLINE_FMTNUM_H

#include <stdbool.h>
#include <stddef.h>

/* Write @v with @prec decimals ("%.*f") into @buf of @cap bytes,
 * NUL-terminated; returns what snprintf would (the length it needed). */
int fmt_fixed(char *buf, size_t cap, double v, int prec);

/* printf @fmt at @buf + *@at (of @len bytes) and move *@at past it; the
 * text is cut at the end of @buf and *@at counts what it needed, so
 * *@at >= @len says the text did not fit. 0, or -1 when *@at was
 * already past the end. */
int fmt_append(char *buf, size_t len, size_t *at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* One CSV cell at *@p: ",v" when @ok, else "," (an empty cell). A cell
 * that does not fit before @end is left out, *@p unmoved. */
static inline void fmt_cell(char **p, char *end, bool ok, double v, int prec)
{
	size_t room = (size_t)(end - *p);
	int n;

	if (room < 2)
		return;
	**p = ',';
	n = ok ? fmt_fixed(*p + 1, room - 1, v, prec) : 0;
	if ((size_t)n + 1 < room)
		*p += n + 1;
}

#endif
