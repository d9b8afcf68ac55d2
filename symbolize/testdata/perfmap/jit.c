// jit.c: a tiny JIT for the symbolize tests. It copies a leaf function
// into executable memory twice, names the copies in /tmp/perf-PID.map as
// a JIT runtime does (tools/perf/Documentation/jit-interface.txt), prints
// its pid and runs them for SECONDS: jit_spin_A twice as often as
// jit_spin_B[OptimizedTier1].
//
// Build: gcc -O2 -fno-toplevel-reorder -fno-omit-frame-pointer -o jit jit.c
// Usage: jit SECONDS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

// spin is copied byte for byte: it must not call or address anything.
// spin_end follows it (-fno-toplevel-reorder keeps the order), so the
// copy is spin_end - spin bytes.
__attribute__((noinline, section(".text.jitsrc"))) long spin(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}
__attribute__((noinline, section(".text.jitsrc"))) void spin_end(void) {}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	size_t size = (char *)spin_end - (char *)spin;
	char *mem = mmap(NULL, 0x2000, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED || size == 0 || size > 0x1000) {
		perror("jit: mmap");
		return 1;
	}
	memcpy(mem, (void *)spin, size);
	memcpy(mem + 0x1000, (void *)spin, size);
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_spin_A\n", (unsigned long)mem, size);
	fprintf(f, "0x%lx 0x%zx jit_spin_B[OptimizedTier1]\n", (unsigned long)(mem + 0x1000), size);
	fclose(f);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	long (*a)(long) = (long (*)(long))mem, (*b)(long) = (long (*)(long))(mem + 0x1000);
	volatile long sink = 0;
	for (double end = now() + secs; now() < end;) {
		sink += a(200000);
		sink += a(200000);
		sink += b(200000);
	}
	return sink == 42;
}
