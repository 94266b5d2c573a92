/*
 * psi.c - pressure stall information parser and sources; see psi.h.
 */
#include "telemetry/psi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "total=" of a line [p, end), which starts with "some " or "full ". */
static int line_total(const char *p, const char *end, uint64_t *total)
{
	static const char key[] = "total=";
	const size_t klen = sizeof(key) - 1;
	bool seen = false;

	/* Fields are "name=value", blank separated; only total is used,
	 * the averages are checked for shape by the kernel, not here. */
	while (p < end) {
		const char *f = p;

		while (p < end && *p != ' ' && *p != '\t')
			p++;
		if ((size_t)(p - f) > klen && !memcmp(f, key, klen)) {
			const char *v = f + klen;

			if (procfs_scan_u64(&v, p, total) < 0 || v != p)
				return -EBADMSG;
			seen = true;
		}
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
	}
	return seen ? 0 : -EBADMSG;
}

int psi_parse(const char *buf, size_t len, struct psi_totals *out)
{
	const char *p = buf, *end = buf + len;
	/* The two lines a pressure file holds, each at most once. */
	const struct {
		const char *key;	/* 5 bytes, the space included */
		bool *ok;
		uint64_t *us;
	} lines[] = { { "some ", &out->some_ok, &out->some_us }, { "full ", &out->full_ok, &out->full_us } };

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		unsigned k = 0;
		int ret;

		while (k < 2 && !(le - p >= 5 && !memcmp(p, lines[k].key, 5)))
			k++;
		if (k < 2) {
			if (*lines[k].ok)
				return -EBADMSG;
			ret = line_total(p + 5, le, lines[k].us);
			if (ret)
				return ret;
			*lines[k].ok = true;
		} else if (le != p) {
			return -EBADMSG;
		}
		p = nl ? nl + 1 : end;
	}
	return out->some_ok ? 0 : -EBADMSG;
}

int psi_open(struct procfs_src *src, const char *root, const char *rel)
{
	return procfs_src_open(src, root, rel);
}

int psi_read(struct procfs_src *src, struct psi_totals *out)
{
	ssize_t n = procfs_src_read(src);

	if (n < 0)
		return (int)n;
	return psi_parse(src->buf, (size_t)n, out);
}

void psi_why_absent(const char *proc_root, char *why, size_t cap)
{
	char path[4096];
	struct procfs_src src;
	struct psi_totals t;
	int ret;

	why[0] = '\0';
	ret = psi_open(&src, proc_root, "pressure/memory");
	if (ret == 0) {
		ret = psi_read(&src, &t);
		procfs_src_close(&src);
		if (ret == 0)
			return;
	}
	snprintf(path, sizeof(path), "%s/pressure", proc_root);
	if (ret == -ENOENT && access(path, F_OK) != 0)
		snprintf(why, cap, "no %s: the kernel has no pressure stall information "
			 "(CONFIG_PSI off, or booted with psi=0)", path);
	else if (ret == -EOPNOTSUPP)
		snprintf(why, cap, "%s/memory cannot be read: PSI is disabled (boot with psi=1)", path);
	else
		snprintf(why, cap, "%s/memory cannot be read: %s", path,
			 ret == -EBADMSG ? "not in the kernel's format" : strerror(-ret));
}
