// waker has one thread hold pthread mutexes in hold_work, spinning for a
// known time, while the other threads wait for them in wait_here, so that
// a perf recording of sched_switch and sched_waking names the waker of
// each wait: hold_work's pthread_mutex_unlock.
//
// Each waiter has a mutex of its own, which the holder takes with the
// others at the start of each round and gives back at its end: so every
// waiter is woken by the holder's unlock, never by another waiter's
// (with one shared mutex the waiters would wake each other in turn).
//
// A last thread naps in nap_here (nanosleep, 1 ms at a time) on the
// holder's CPU: the timer interrupt that ends each nap mostly stops the
// holder, so its wake-up is recorded on top of the holder's stack, and
// must be read as a timer's, not the holder's.
//
// Arguments: rounds (default 20), hold time per round in ms (default
// 5), waiters (default 3). It prints "hold N" (nanoseconds the holder
// held the mutexes) and "wait N" (nanoseconds the waiters spent in
// pthread_mutex_lock, all of them together).
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../spin.h"

#define MAXW 8

static pthread_mutex_t mu[MAXW];
static int waiters = 3, rounds = 20;
static long hold_ns = 5000000;
static atomic_int done;
static atomic_llong wait_total, hold_total;

// hold_work takes every waiter's mutex, works for ns and gives them back.
__attribute__((noinline)) void hold_work(long ns) {
	long t0 = now_ns();
	for (int i = 0; i < waiters; i++)
		pthread_mutex_lock(&mu[i]);
	spin(ns);
	for (int i = 0; i < waiters; i++)
		pthread_mutex_unlock(&mu[i]);
	atomic_fetch_add(&hold_total, now_ns() - t0);
	sink++;
}

// wait_here waits for mutex i and gives it back at once.
__attribute__((noinline)) void wait_here(int i) {
	long t0 = now_ns();
	pthread_mutex_lock(&mu[i]);
	atomic_fetch_add(&wait_total, now_ns() - t0);
	pthread_mutex_unlock(&mu[i]);
	sink++;
}

// nap_here sleeps 1 ms.
__attribute__((noinline)) void nap_here(void) {
	struct timespec ts = {0, 1000000};
	nanosleep(&ts, NULL);
	sink++;
}

static void *napper(void *arg) {
	while (!atomic_load(&done))
		nap_here();
	return NULL;
}

static void *holder(void *arg) {
	for (int r = 0; r < rounds; r++) {
		hold_work(hold_ns);
		spin(300000); // let the waiters run between rounds
	}
	atomic_store(&done, 1);
	return NULL;
}

static void *waiter(void *arg) {
	int i = (int)(long)arg;
	while (!atomic_load(&done)) {
		wait_here(i);
		spin(50000);
	}
	return NULL;
}

int main(int argc, char **argv) {
	round_args(argc, argv, &rounds, &hold_ns);
	if (argc > 3)
		waiters = atoi(argv[3]);
	if (waiters < 1 || waiters > MAXW) {
		fprintf(stderr, "waiters: 1 to %d\n", MAXW);
		return 2;
	}
	for (int i = 0; i < waiters; i++)
		pthread_mutex_init(&mu[i], NULL);
	// The holder and the napper share the first CPU the program may use.
	cpu_set_t all, one;
	pthread_attr_t pin;
	pthread_attr_init(&pin);
	CPU_ZERO(&one);
	if (sched_getaffinity(0, sizeof all, &all) == 0) {
		for (int c = 0; c < CPU_SETSIZE; c++) {
			if (CPU_ISSET(c, &all)) {
				CPU_SET(c, &one);
				pthread_attr_setaffinity_np(&pin, sizeof one, &one);
				break;
			}
		}
	}
	pthread_t h, n, w[MAXW];
	pthread_create(&h, &pin, holder, NULL);
	pthread_create(&n, &pin, napper, NULL);
	for (int i = 0; i < waiters; i++)
		pthread_create(&w[i], NULL, waiter, (void *)(long)i);
	pthread_join(h, NULL);
	pthread_join(n, NULL);
	for (int i = 0; i < waiters; i++)
		pthread_join(w[i], NULL);
	printf("hold %lld\nwait %lld\n", (long long)hold_total, (long long)wait_total);
	return 0;
}
