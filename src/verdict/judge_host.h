/*
 * judge_host.h - the verdict's host facts (judge_host.c): what the host
 * alone says that bears on the answer, each with the number it rests on.
 */
#ifndef FAULTLINE_JUDGE_HOST_H
#define FAULTLINE_JUDGE_HOST_H

#include "verdict/judge_types.h"

/* Sentences about the host alone (THP, read_ahead_kb, CPUs, device,
 * virtualisation) that bear on the @nr results in @r. */
unsigned judge_host_facts(const struct judge_host *h, const struct judge_result *r, unsigned nr,
			  struct judge_sentence *out, unsigned max);

#endif
