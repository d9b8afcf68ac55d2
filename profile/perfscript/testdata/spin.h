// spin.h: the busy work of the C test programs (waker, chain).
#include <time.h>

static volatile unsigned long sink;

static long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

// spin does ns nanoseconds of work on the CPU.
__attribute__((noinline)) static void spin(long ns) {
	long end = now_ns() + ns;
	while (now_ns() < end)
		sink++;
}
