// chain is a wait chain of three threads for the critical-path test: C
// waits on a condition variable that B signals, and B, before it signals,
// waits for a mutex that A holds in a_work, spinning for a known time. So
// C's blocked time is A's work, which B only passes on: the critical path
// of C charges it to a_work (through B's wake-up of C and A's unlock that
// woke B), not to B.
//
// Arguments: rounds (default 10), A's hold time per round in ms (default
// 3). It prints "hold N" (nanoseconds A held the mutex) and "cwait N"
// (nanoseconds C waited on the condition variable).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../spin.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; // A holds it, B waits
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; // B signals C
static pthread_barrier_t start; // each round: A has the mutex, B and C wait
static int rounds = 10, ready;
static long hold_ns = 3000000;
static long hold_total, cwait_total;

// a_work holds the mutex (taken before the round's barrier) for ns.
__attribute__((noinline)) void a_work(long ns) {
	long t0 = now_ns();
	spin(ns);
	pthread_mutex_unlock(&mu);
	hold_total += now_ns() - t0;
}

// b_pass waits for A's mutex, then wakes C.
__attribute__((noinline)) void b_pass(void) {
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
	pthread_mutex_lock(&cmu);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cmu);
}

// c_wait waits for B's signal.
__attribute__((noinline)) void c_wait(void) {
	long t0 = now_ns();
	pthread_mutex_lock(&cmu);
	while (!ready)
		pthread_cond_wait(&cv, &cmu);
	ready = 0;
	pthread_mutex_unlock(&cmu);
	cwait_total += now_ns() - t0;
}

static void *thread_a(void *arg) {
	for (int r = 0; r < rounds; r++) {
		pthread_mutex_lock(&mu);
		pthread_barrier_wait(&start);
		a_work(hold_ns);
		pthread_barrier_wait(&start); // the round's end
	}
	return NULL;
}

// follower runs B's or C's part (arg) in each round.
static void *follower(void *arg) {
	void (*part)(void) = (void (*)(void))arg;
	for (int r = 0; r < rounds; r++) {
		pthread_barrier_wait(&start);
		part();
		pthread_barrier_wait(&start);
	}
	return NULL;
}

int main(int argc, char **argv) {
	round_args(argc, argv, &rounds, &hold_ns);
	pthread_barrier_init(&start, NULL, 3);
	pthread_t a, b, c;
	pthread_create(&c, NULL, follower, (void *)c_wait);
	pthread_create(&b, NULL, follower, (void *)b_pass);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	printf("hold %ld\ncwait %ld\n", hold_total, cwait_total);
	return 0;
}
