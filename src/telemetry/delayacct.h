/*
 * delayacct.h - the kernel's delay accounting switched on for a run
 * (kernel.task_delayacct, off by default: it costs a clock read at each
 * wait), and back as it was when the run ends.
 *
 * Several faultline runs may hold it at once (a verdict beside a test
 * suite): the first to turn it on records the value it found, each run
 * holds a shared lock while it runs, and the last to let go puts the
 * recorded value back. The record survives a run killed with SIGKILL,
 * so the next run that turns it on restores the value found before that
 * one. Both files live in /run (tmpfs: gone at boot, with the setting).
 */
#ifndef FAULTLINE_DELAYACCT_H
#define FAULTLINE_DELAYACCT_H

#include <stddef.h>

#include "lib/err.h"

/* Where the sysctl lives under the proc root. */
#define DELAYACCT_SYSCTL "sys/kernel/task_delayacct"

/* 1 when the kernel accounts delays now, 0 when not (@why says why,
 * and what would turn it on), -ENOENT where it cannot (CONFIG_TASK_DELAY_ACCT
 * off) or -errno. @proc_root: procfs_root(). */
int delayacct_state(const char *proc_root, char *why, size_t cap);

/* Turn it on until delayacct_restore (root; 0 or -errno). */
int delayacct_enable(struct err *e);

/* Put it back as found when this process is the last run holding it.
 * Async-signal-safe (plain system calls) and idempotent: for atexit and
 * a signal handler that ends the process at once. */
void delayacct_restore(void);

#endif
