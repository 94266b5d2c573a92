/*
 * sigbus.h - recovering from a SIGBUS in a thread that touches a mapping.
 *
 * An access to a MAP_SHARED mapping whose page cannot be read (the file
 * was truncated, the device returned an error) raises SIGBUS in the
 * accessing thread. A thread that expects it arms a sigjmp_buf; the
 * handler jumps there, and the thread reports the request as failed
 * instead of dying. A SIGBUS with nothing armed is a real bug and kills
 * the process as it would without the handler.
 */
#ifndef FAULTLINE_SIGBUS_H
#define FAULTLINE_SIGBUS_H

#include <setjmp.h>

/* Install the process-wide handler (idempotent, thread-safe). */
void sigbus_install(void);
/* Where a SIGBUS in the calling thread jumps (NULL: nowhere). After the
 * jump SIGBUS is still blocked in that thread (sigsetjmp(jb, 0)) or
 * restored by siglongjmp (sigsetjmp(jb, 1)). */
void sigbus_arm(sigjmp_buf *jb);
/* The faulting address of the calling thread's last SIGBUS. */
void *sigbus_addr(void);
/* Just after a sigsetjmp(jb, 0) returned from a SIGBUS: disarm and
 * unblock SIGBUS for the next access. */
void sigbus_recover(void);

#endif
