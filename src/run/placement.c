/* placement.c - CPU affinity and NUMA policy through libnuma; see placement.h. */
#include "run/placement.h"

#include <errno.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int placement_parse_cpus(const char *list, cpu_set_t *set, struct err *e)
{
	const char *p = list;

	CPU_ZERO(set);
	while (*p) {
		char *end;
		long lo, hi;

		lo = strtol(p, &end, 10);
		if (end == p || lo < 0)
			goto bad;
		hi = lo;
		if (*end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
			if (end == p || hi < lo)
				goto bad;
		}
		if (hi >= CPU_SETSIZE)
			return err_set(e, EINVAL, "CPU %ld in '%s' is beyond the %d CPUs this build supports",
				       hi, list, CPU_SETSIZE);
		for (long c = lo; c <= hi; c++)
			CPU_SET((int)c, set);
		if (*end == ',')
			end++;
		else if (*end)
			goto bad;
		p = end;
	}
	if (CPU_COUNT(set) == 0)
		goto bad;
	return 0;
bad:
	return err_set(e, EINVAL, "bad CPU list '%s' (expected e.g. 0-3,6)", list);
}

/* Parse "bind:N", "interleave:N-M", "prefer:N", "local", "default". */
static int parse_policy(const char *pol, char *mode, size_t mode_len, const char **nodes)
{
	const char *colon = strchr(pol, ':');
	size_t n = colon ? (size_t)(colon - pol) : strlen(pol);

	if (n >= mode_len)
		return -EINVAL;
	memcpy(mode, pol, n);
	mode[n] = '\0';
	*nodes = colon ? colon + 1 : NULL;
	return 0;
}

static int node_mask(const char *nodes, struct bitmask **out, struct err *e)
{
	struct bitmask *bm = numa_parse_nodestring(nodes);

	if (!bm)
		return err_set(e, EINVAL, "NUMA node list '%s' names nodes this host does not have (max node %d)",
			       nodes, numa_max_node());
	*out = bm;
	return 0;
}

static int first_node(const struct bitmask *bm)
{
	for (unsigned n = 0; n < bm->size; n++)
		if (numa_bitmask_isbitset(bm, n))
			return (int)n;
	return 0;
}

int placement_check(const struct job *j, struct err *e)
{
	struct bitmask *bm = NULL;
	cpu_set_t set;
	int ret;

	if (j->cpus_allowed) {
		ret = placement_parse_cpus(j->cpus_allowed, &set, e);
		if (ret)
			return ret;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set) && c >= (int)sysconf(_SC_NPROCESSORS_CONF))
				return err_set(e, EINVAL, "cpus_allowed=%s: CPU %d does not exist (this host has %ld)",
					       j->cpus_allowed, c, sysconf(_SC_NPROCESSORS_CONF));
	}
	if (!j->numa_cpu_nodes && !j->numa_mem_policy)
		return 0;
	if (numa_available() < 0)
		return err_set(e, ENOSYS, "NUMA placement asked for, but this kernel has no NUMA support (numa_available)");
	if (j->numa_cpu_nodes) {
		ret = node_mask(j->numa_cpu_nodes, &bm, e);
		if (ret)
			return ret;
		numa_bitmask_free(bm);
	}
	if (j->numa_mem_policy) {
		char mode[32];
		const char *nodes;

		if (parse_policy(j->numa_mem_policy, mode, sizeof(mode), &nodes))
			return err_set(e, EINVAL, "bad numa_mem_policy '%s'", j->numa_mem_policy);
		if (!strcmp(mode, "default") || !strcmp(mode, "local"))
			return 0;
		if (strcmp(mode, "bind") && strcmp(mode, "interleave") && strcmp(mode, "prefer"))
			return err_set(e, EINVAL, "numa_mem_policy '%s': expected default, local, bind:N, prefer:N or interleave:N-M",
				       j->numa_mem_policy);
		if (!nodes)
			return err_set(e, EINVAL, "numa_mem_policy '%s' needs a node list", j->numa_mem_policy);
		ret = node_mask(nodes, &bm, e);
		if (ret)
			return ret;
		numa_bitmask_free(bm);
	}
	return 0;
}

int placement_apply(const struct job *j, struct err *e)
{
	struct bitmask *bm = NULL;
	cpu_set_t set;
	int ret;

	if (j->cpus_allowed) {
		ret = placement_parse_cpus(j->cpus_allowed, &set, e);
		if (ret)
			return ret;
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			return err_set(e, errno, "sched_setaffinity(%s): %s", j->cpus_allowed, strerror(errno));
	}
	if (!j->numa_cpu_nodes && !j->numa_mem_policy)
		return 0;
	if (numa_available() < 0)
		return err_set(e, ENOSYS, "no NUMA support in this kernel");
	if (j->numa_cpu_nodes) {
		ret = node_mask(j->numa_cpu_nodes, &bm, e);
		if (ret)
			return ret;
		ret = numa_run_on_node_mask(bm);
		numa_bitmask_free(bm);
		if (ret < 0)
			return err_set(e, errno, "numa_run_on_node_mask(%s): %s", j->numa_cpu_nodes, strerror(errno));
	}
	if (j->numa_mem_policy) {
		char mode[32];
		const char *nodes;

		parse_policy(j->numa_mem_policy, mode, sizeof(mode), &nodes);
		if (!strcmp(mode, "local")) {
			numa_set_localalloc();
		} else if (!strcmp(mode, "default")) {
			/* leave the process policy as it is */
		} else {
			ret = node_mask(nodes, &bm, e);
			if (ret)
				return ret;
			if (!strcmp(mode, "bind"))
				numa_set_membind(bm);
			else if (!strcmp(mode, "interleave"))
				numa_set_interleave_mask(bm);
			else
				numa_set_preferred(first_node(bm));
			numa_bitmask_free(bm);
		}
	}
	return 0;
}
