/*
 * jsonbuild.h - what the JSON writers (json_out.c, json_fio.c) build
 * their documents with: a value set or appended, and the numbers as
 * fio writes them.
 *
 * Building never stops half-way on a failed allocation: put and push
 * count the failure in the writer's own build_failures (one per file
 * that includes this, per thread), and the writer gives up at the end.
 */
#ifndef FAULTLINE_JSONBUILD_H
#define FAULTLINE_JSONBUILD_H

#include <math.h>
#include <stdint.h>

#include <jansson.h>

static _Thread_local unsigned build_failures;

/* @v into @o as @key; a NULL @o or @v, or a failed set, is counted. */
static inline void put(json_t *o, const char *key, json_t *v)
{
	if (!o || !v || json_object_set_new(o, key, v))
		build_failures++;
}

static inline void push(json_t *a, json_t *v)
{
	if (!a || !v || json_array_append_new(a, v))
		build_failures++;
}

/* A count: an integer while jansson's json_int_t holds it, else a real. */
static inline json_t *ju64(uint64_t v)
{
	if (v > (uint64_t)INT64_MAX)
		return json_real((double)v);
	return json_integer((json_int_t)v);
}

/* JSON has no NaN or infinity: null. */
static inline json_t *jdbl(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

#endif
