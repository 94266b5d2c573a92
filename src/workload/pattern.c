/* pattern.c - fio's buffer pattern syntax; see pattern.h. */
#include "workload/pattern.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool hex_start(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2]);
}

/* Room for @n more bytes. */
static int room(struct pattern *p, size_t n)
{
	size_t cap = p->cap ? p->cap : 64;
	uint8_t *nb;

	if (n > PATTERN_MAX - p->len)
		return -EINVAL;
	if (p->len + n <= p->cap)
		return 0;
	while (cap < p->len + n)
		cap *= 2;
	nb = realloc(p->bytes, cap);
	if (!nb)
		return -ENOMEM;
	p->bytes = nb;
	p->cap = (unsigned)cap;
	return 0;
}

static int put(struct pattern *p, const void *b, size_t n)
{
	if (room(p, n))
		return -EINVAL;
	memcpy(p->bytes + p->len, b, n);
	p->len += (unsigned)n;
	return 0;
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/* 0xHEX at *@s. */
static int parse_hex(struct pattern *p, const char **s)
{
	const char *d = *s + 2, *end = d;
	size_t n;

	while (isxdigit((unsigned char)*end))
		end++;
	/* "0xff0x14": the run's last 0 starts the next number */
	if (end - d > 1 && end[-1] == '0' && (end[0] == 'x' || end[0] == 'X') &&
	    isxdigit((unsigned char)end[1]))
		end--;
	n = (size_t)(end - d);
	if (n & 1) {
		uint8_t b = (uint8_t)hexval(*d++);

		if (put(p, &b, 1))
			return -EINVAL;
		n--;
	}
	for (; n; n -= 2, d += 2) {
		uint8_t b = (uint8_t)(hexval(d[0]) << 4 | hexval(d[1]));

		if (put(p, &b, 1))
			return -EINVAL;
	}
	*s = end;
	return 0;
}

/* A decimal at *@s, up to the next "0x". */
static int parse_dec(struct pattern *p, const char **s)
{
	const char *q = *s, *stop = NULL;
	char num[24];
	long long v;
	char *end;
	uint32_t u;

	for (const char *x = q; *x; x++)
		if (hex_start(x) && x > q) {
			stop = x;
			break;
		}
	if (stop && (size_t)(stop - q) >= sizeof(num))
		return -EINVAL;
	snprintf(num, sizeof(num), "%.*s", stop ? (int)(stop - q) : (int)sizeof(num) - 1, q);
	errno = 0;
	v = strtoll(num, &end, 10);
	if (end == num || errno || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	*s = q + (end - num);
	u = (uint32_t)(int32_t)v;
	if (!u)
		return put(p, "", 1);
	for (; u; u >>= 8) {
		uint8_t b = (uint8_t)u;

		if (put(p, &b, 1))
			return -EINVAL;
	}
	return 0;
}

/* 'FILE': as much of it as fits. */
static int parse_file(struct pattern *p, const char **s, char *why, size_t whylen)
{
	const char *q = strchr(*s + 1, '\'');
	char path[4096];
	ssize_t got = 0, n;
	struct stat st;
	int fd;

	if (!q || (size_t)(q - *s - 1) >= sizeof(path)) {
		snprintf(why, whylen, "a file name in '' is not closed");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%.*s", (int)(q - *s - 1), *s + 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "pattern file %s: %s", path, strerror(errno));
		return -EINVAL;
	}
	/* as much as fits: fio reads no more than its limit either */
	if (fstat(fd, &st) || room(p, st.st_size > 0 && (uint64_t)st.st_size < PATTERN_MAX - p->len
				       ? (size_t)st.st_size : PATTERN_MAX - p->len)) {
		snprintf(why, whylen, "pattern file %s: %s", path, strerror(errno ? errno : ENOMEM));
		close(fd);
		return -EINVAL;
	}
	while (p->len + (size_t)got < p->cap &&
	       (n = read(fd, p->bytes + p->len + got, p->cap - p->len - (size_t)got)) > 0)
		got += n;
	close(fd);
	if (got <= 0) {
		snprintf(why, whylen, "pattern file %s: %s", path, got ? strerror(errno) : "empty");
		return -EINVAL;
	}
	p->len += (unsigned)got;
	*s = q + 1;
	return 0;
}

int pattern_parse(const char *text, struct pattern *p, char *why, size_t whylen)
{
	const char *s = text;

	memset(p, 0, sizeof(*p));
	snprintf(why, whylen, "more than %u bytes", PATTERN_MAX);
	if (!s || !*s) {
		snprintf(why, whylen, "an empty pattern");
		return -EINVAL;
	}
	while (*s) {
		int ret;

		if (*s == '"') {
			const char *q = strchr(s + 1, '"');

			if (!q) {
				snprintf(why, whylen, "a string in \"\" is not closed");
				goto fail;
			}
			ret = put(p, s + 1, (size_t)(q - s - 1));
			s = q + 1;
		} else if (*s == '\'') {
			ret = parse_file(p, &s, why, whylen);
		} else if (s[0] == '%' && s[1] == 'o') {
			static const uint8_t zero[8];

			if (p->noff == PATTERN_FMT_MAX) {
				snprintf(why, whylen, "more than %d %%o", PATTERN_FMT_MAX);
				goto fail;
			}
			p->off_at[p->noff++] = p->len;
			ret = put(p, zero, sizeof(zero));
			s += 2;
		} else if (hex_start(s)) {
			ret = parse_hex(p, &s);
		} else if (isdigit((unsigned char)*s) || ((*s == '-' || *s == '+') &&
							  isdigit((unsigned char)s[1]))) {
			ret = parse_dec(p, &s);
			if (ret)
				snprintf(why, whylen, "a decimal outside -2147483648..2147483647, "
					 "or more than %d bytes", PATTERN_MAX);
		} else {
			snprintf(why, whylen, "'%c' at '%s': expected 0xHEX, a decimal, \"text\", "
				 "'file' or %%o", *s, s);
			goto fail;
		}
		if (ret)
			goto fail;
	}
	if (p->len)
		return 0;
	snprintf(why, whylen, "an empty pattern");
fail:
	pattern_free(p);
	return -EINVAL;
}

void pattern_free(struct pattern *p)
{
	free(p->bytes);
	p->bytes = NULL;
	p->len = p->cap = 0;
}

/* Block @off's %o fields into the repetition at @rep (@n of its bytes
 * in the block). */
static void paste(const struct pattern *p, uint8_t *rep, uint32_t n, uint64_t off)
{
	for (unsigned i = 0; i < p->noff; i++)
		for (unsigned b = 0; b < 8 && p->off_at[i] + b < n; b++)
			rep[p->off_at[i] + b] = (uint8_t)(off >> (8 * b));
}

void pattern_fill(const struct pattern *p, uint8_t *buf, uint32_t len, uint64_t off)
{
	for (uint32_t done = 0; done < len;) {
		uint32_t n = len - done < p->len ? len - done : p->len;

		memcpy(buf + done, p->bytes, n);
		paste(p, buf + done, n, off);
		done += n;
	}
}

/* Whether byte @i of a repetition lies in a %o field. */
static bool in_field(const struct pattern *p, uint32_t i, uint64_t off, uint8_t *want)
{
	for (unsigned f = 0; f < p->noff; f++)
		if (i >= p->off_at[f] && i < p->off_at[f] + 8) {
			*want = (uint8_t)(off >> (8 * (i - p->off_at[f])));
			return true;
		}
	return false;
}

bool pattern_check(const struct pattern *p, const uint8_t *buf, uint32_t len, uint64_t off)
{
	for (uint32_t done = 0; done < len;) {
		uint32_t n = len - done < p->len ? len - done : p->len;

		if (!p->noff && memcmp(buf + done, p->bytes, n))
			return false;
		for (uint32_t i = 0; p->noff && i < n; i++) {
			uint8_t want = p->bytes[i];

			in_field(p, i, off, &want);
			if (buf[done + i] != want)
				return false;
		}
		done += n;
	}
	return true;
}
