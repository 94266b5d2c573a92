/*
 * notes.h - what a run says on stderr while it runs, worded here: a
 * warning (a source it cannot read, a job run without something it
 * asked for) and the progress of laying out a file. The run controller
 * hands them over; the layers below reach it through hooks
 * (engines/target.h's struct target_hooks).
 */
#ifndef FAULTLINE_NOTES_H
#define FAULTLINE_NOTES_H

#include <stddef.h>
#include <stdint.h>

/* "faultline: warning: ..." as one line. */
void notes_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "faultline: note: ...": how a figure is read, not a fault. */
void notes_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "faultline: ...": what the run does about something (it stops). */
void notes_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The status line (--status): @line over the last one, padded to
 * @prev_len so a shorter line leaves nothing of it; then, at the run's
 * end, the newline that keeps it. */
void notes_status(const char *line, size_t prev_len);
void notes_status_end(void);

/* Laying out @path: @done of @total bytes, on one line rewritten in
 * place, ended when done; only on a terminal, where it is read. */
void notes_layout(const char *path, uint64_t done, uint64_t total);

#endif
