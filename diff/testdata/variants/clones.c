/* Functions gcc -O2 clones, for a profile whose frames are build variants
 * of one function: work.part.0 (partial inlining), sum.constprop.0.isra.0
 * (IPA-SRA) and check.cold (the unlikely part of a function, moved out).
 * The tests build it with gcc -O2 -fno-omit-frame-pointer
 * -fno-optimize-sibling-calls and record it with perf record -g; the
 * argument is how many seconds of CPU it runs. spin is always inlined, so that
 * the clones are the leaves the samples land in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct req { long pad[8]; long n; char buf[256]; };

static volatile long sink;
static long table[64];

static inline __attribute__((always_inline)) long spin(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i * 2654435761u) >> 7;
	return s;
}

/* A cheap early return and a long tail: gcc keeps the test in work and
 * moves the tail to work.part.0. */
long work(long n) {
	if (n < 2)
		return n;
	long s = 0;
	for (int k = 0; k < 64; k++) {
		table[k] = spin(n / 64 + k) ^ s;
		s += table[k] * (k | 1);
		if (s % 7 == 3)
			s = s * 31 + table[(k * 5) & 63];
	}
	return s;
}

/* Only r->n is used: IPA-SRA passes it alone, as sum.isra.0. */
static __attribute__((noinline)) long sum(struct req *r) {
	return spin(r->n) + 1;
}

/* Calling a cold function makes its branch cold: gcc moves the branch,
 * loop and all, out of check into check.cold. */
__attribute__((cold, noinline)) static void note(long n) { sink += n; }

__attribute__((noinline)) long check(long n, int flag) {
	if (flag) {
		note(n);
		return spin(n) * 3;
	}
	return n;
}

int main(int argc, char **argv) {
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct req r;
	memset(&r, 0, sizeof r);
	r.n = 20000;
	long (*volatile call)(long) = work; /* the out-of-line work, as a pointer calls it */
	clock_t end = (clock_t)(secs * CLOCKS_PER_SEC); /* CPU time: the process is busy throughout */
	while (clock() < end) {
		sink += work(r.n + (long)sink % 2);
		sink += call(r.n);
		sink += sum(&r);
		sink += check(r.n, 1);
	}
	return 0;
}
