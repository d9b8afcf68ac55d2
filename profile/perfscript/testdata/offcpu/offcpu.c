// offcpu blocks in three ways for times it measures itself, so that a
// perf sched_switch recording of it can be checked against them:
//
//	wait: nanosleep (both threads) and pthread_join; with a second
//	      argument "sync" also sem_wait and pthread_cond_wait (perf's
//	      frame-pointer unwinding cannot get out of glibc there: record
//	      those with --call-graph dwarf)
//	      with "pause", sigsuspend until the other thread signals it
//	      (no frame rule names sigsuspend: its time is wait only by the
//	      fallback label of blocked off-CPU time)
//	lock: pthread_mutex_lock on a mutex the other thread holds (for
//	      "lock=K" steps, default 1), by main and by N more threads with
//	      "lockers=N" (their join is wait)
//	io:   recv on a socket the other thread writes to later
//
// It prints "wait N", "lock N" and "io N" lines, nanoseconds. The first
// argument is the length of each blocking step in ms (default 100); the
// others are the words above, in any order.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rcv = PTHREAD_COND_INITIALIZER;
static int round_no; // the round whose hold of mu has begun
static atomic_llong wait_ns;
static int sv[2];
static long step_ns = 100000000;
static int sync_mode, pause_mode, lock_steps = 1, lockers, rounds = 1;
static atomic_llong lock_ns;
static pthread_t main_th;
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
	for (int r = 1; r <= rounds; r++) {
		pthread_mutex_lock(&mu);
		pthread_mutex_lock(&rmu);
		round_no = r;
		pthread_cond_broadcast(&rcv);
		pthread_mutex_unlock(&rmu);
		for (int i = 0; i < lock_steps; i++)
			nap(); // main (and the lockers) block on mu meanwhile
		pthread_mutex_unlock(&mu);
		nap(); // main blocks in recv meanwhile
		if (send(sv[1], "x", 1, 0) != 1) {
			perror("send");
			exit(1);
		}
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
	if (pause_mode) {
		nap(); // main blocks in sigsuspend meanwhile
		pthread_kill(main_th, SIGUSR1);
	}
	return NULL;
}

// contend waits (wait) for the holder to take mu in round r, then blocks
// on it (lock).
static void contend(int r) {
	long long t0 = now();
	pthread_mutex_lock(&rmu);
	while (round_no < r)
		pthread_cond_wait(&rcv, &rmu);
	pthread_mutex_unlock(&rmu);
	atomic_fetch_add(&wait_ns, now() - t0);
	t0 = now();
	pthread_mutex_lock(&mu);
	atomic_fetch_add(&lock_ns, now() - t0);
	pthread_mutex_unlock(&mu);
}

static void *locker(void *arg) {
	(void)arg;
	for (int r = 1; r <= rounds; r++)
		contend(r);
	return NULL;
}

static void on_usr1(int sig) { (void)sig; }

// args reads the words after the step length.
static void args(int argc, char **argv) {
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "sync") == 0)
			sync_mode = 1;
		else if (strcmp(argv[i], "pause") == 0)
			pause_mode = 1;
		else if (strncmp(argv[i], "lock=", 5) == 0)
			lock_steps = atoi(argv[i] + 5);
		else if (strncmp(argv[i], "lockers=", 8) == 0)
			lockers = atoi(argv[i] + 8);
		else if (strncmp(argv[i], "rounds=", 7) == 0)
			rounds = atoi(argv[i] + 7);
		else {
			fprintf(stderr, "offcpu: unknown argument %s\n", argv[i]);
			exit(2);
		}
	}
}

// suspend waits in sigsuspend for the other thread's SIGUSR1, which is
// blocked until then (a signal sent early stays pending).
static void suspend(const sigset_t *old) {
	long long t0 = now();
	sigset_t wait = *old;
	sigdelset(&wait, SIGUSR1);
	sigsuspend(&wait);
	atomic_fetch_add(&wait_ns, now() - t0);
}

int main(int argc, char **argv) {
	if (argc > 1)
		step_ns = atol(argv[1]) * 1000000L;
	args(argc, argv);
	sem_init(&sem, 0, 0);
	main_th = pthread_self();
	signal(SIGUSR1, on_usr1);
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old); // the holder inherits it
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("socketpair");
		return 1;
	}
	pthread_t th, more[64];
	if (lockers > 64)
		lockers = 64;
	for (int i = 0; i < lockers; i++)
		pthread_create(&more[i], NULL, locker, NULL);
	pthread_create(&th, NULL, holder, NULL);
	long long io = 0;
	for (int r = 1; r <= rounds; r++) {
		contend(r);
		char c;
		long long t0 = now();
		if (recv(sv[0], &c, 1, 0) != 1) {
			perror("recv");
			return 1;
		}
		io += now() - t0;
	}
	long long t0 = now();
	for (int i = 0; i < lockers; i++)
		pthread_join(more[i], NULL);
	atomic_fetch_add(&wait_ns, now() - t0);
	if (sync_mode) {
		t0 = now();
		sem_wait(&sem);
		pthread_mutex_lock(&cmu);
		while (!signalled)
			pthread_cond_wait(&cv, &cmu);
		pthread_mutex_unlock(&cmu);
		atomic_fetch_add(&wait_ns, now() - t0);
	}
	if (pause_mode)
		suspend(&old);
	nap();
	t0 = now();
	pthread_join(th, NULL);
	atomic_fetch_add(&wait_ns, now() - t0);
	printf("wait %lld\nlock %lld\nio %lld\n", (long long)atomic_load(&wait_ns), (long long)atomic_load(&lock_ns), io);
	return 0;
}
