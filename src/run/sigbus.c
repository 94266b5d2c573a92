/*
 * sigbus.c - see sigbus.h. One handler for the process; where it jumps
 * is per thread, so workers and their helpers each arm their own.
 */
#include "run/sigbus.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

static __thread sigjmp_buf *bus_jmp;
static __thread void *bus_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!bus_jmp) {
		/* Not inside an armed access: a real bug, die loudly. */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	bus_addr = si->si_addr;
	siglongjmp(*bus_jmp, 1);
}

static void install_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void sigbus_install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install_once);
}

void sigbus_arm(sigjmp_buf *jb)
{
	bus_jmp = jb;
}

void *sigbus_addr(void)
{
	return bus_addr;
}

void sigbus_recover(void)
{
	sigset_t s;

	bus_jmp = NULL;
	sigemptyset(&s);
	sigaddset(&s, SIGBUS);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
}
