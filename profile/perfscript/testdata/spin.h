// spin.h: the busy work of the C test programs (waker, chain).
#include <stdlib.h>
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

// round_args reads the two arguments both programs take first: the rounds,
// and the hold in milliseconds.
static void round_args(int argc, char **argv, int *rounds, long *hold_ns) {
	if (argc > 1)
		*rounds = atoi(argv[1]);
	if (argc > 2)
		*hold_ns = atol(argv[2]) * 1000000L;
}
