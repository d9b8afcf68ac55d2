// offcpu blocks in three ways for times it measures itself, so that a
// perf sched_switch recording of it can be checked against them:
//
//	wait: nanosleep (both threads) and pthread_join; with a second
//	      argument "sync" also sem_wait and pthread_cond_wait (perf's
//	      frame-pointer unwinding cannot get out of glibc there: record
//	      those with --call-graph dwarf)
//	lock: pthread_mutex_lock on a mutex the other thread holds
//	io:   recv on a socket the other thread writes to later
//
// It prints "wait N", "lock N" and "io N" lines, nanoseconds. The first
// argument is the length of each blocking step in ms (default 100).
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int held;
static atomic_llong wait_ns;
static int sv[2];
static long step_ns = 100000000;
static int sync_mode;
static sem_t sem;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int signalled;

static long long now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void nap(void) {
	struct timespec t = {step_ns / 1000000000L, step_ns % 1000000000L};
	long long t0 = now();
	nanosleep(&t, NULL);
	atomic_fetch_add(&wait_ns, now() - t0);
}

static void *holder(void *arg) {
	(void)arg;
	pthread_mutex_lock(&mu);
	atomic_store(&held, 1);
	nap(); // main blocks on mu meanwhile
	pthread_mutex_unlock(&mu);
	nap(); // main blocks in recv meanwhile
	if (send(sv[1], "x", 1, 0) != 1) {
		perror("send");
		exit(1);
	}
	if (sync_mode) {
		nap(); // main blocks in sem_wait meanwhile
		sem_post(&sem);
		nap(); // main blocks in pthread_cond_wait meanwhile
		pthread_mutex_lock(&cmu);
		signalled = 1;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&cmu);
	}
	return NULL;
}

int main(int argc, char **argv) {
	if (argc > 1)
		step_ns = atol(argv[1]) * 1000000L;
	sync_mode = argc > 2 && strcmp(argv[2], "sync") == 0;
	sem_init(&sem, 0, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		return 1;
	}
	pthread_t th;
	pthread_create(&th, NULL, holder, NULL);
	while (!atomic_load(&held))
		;
	long long t0 = now();
	pthread_mutex_lock(&mu);
	long long lock = now() - t0;
	pthread_mutex_unlock(&mu);
	char c;
	t0 = now();
	if (recv(sv[0], &c, 1, 0) != 1) {
		perror("recv");
		return 1;
	}
	long long io = now() - t0;
	if (sync_mode) {
		t0 = now();
		sem_wait(&sem);
		pthread_mutex_lock(&cmu);
		while (!signalled)
			pthread_cond_wait(&cv, &cmu);
		pthread_mutex_unlock(&cmu);
		atomic_fetch_add(&wait_ns, now() - t0);
	}
	nap();
	t0 = now();
	pthread_join(th, NULL);
	atomic_fetch_add(&wait_ns, now() - t0);
	printf("wait %lld\nlock %lld\nio %lld\n", (long long)atomic_load(&wait_ns), lock, io);
	return 0;
}
