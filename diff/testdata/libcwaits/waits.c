// waits: four threads that each block in one libc wait, named so that a
// profile can tell them apart: "sleeper" (nanosleep), "locker" (a
// contended pthread mutex), "condwait" (pthread_cond_timedwait), "reader"
// (read on a pipe nobody writes to until the end) and "acceptor" (accept
// on a listening socket nobody connects to).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pipefd[2];
static int lfd;
static volatile int done;
static double seconds = 1.0;

static void nap(double s) {
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

static void *sleeper(void *arg) {
	pthread_setname_np(pthread_self(), "sleeper");
	while (!done) nap(0.01);
	return NULL;
}

static void *holder(void *arg) {
	pthread_setname_np(pthread_self(), "holder");
	while (!done) {
		pthread_mutex_lock(&mu);
		nap(0.02);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *locker(void *arg) {
	pthread_setname_np(pthread_self(), "locker");
	while (!done) {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *condwait(void *arg) {
	pthread_setname_np(pthread_self(), "condwait");
	pthread_mutex_lock(&cmu);
	while (!done) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10000000;
		if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
		pthread_cond_timedwait(&cv, &cmu, &ts);
	}
	pthread_mutex_unlock(&cmu);
	return NULL;
}

static void *reader(void *arg) {
	pthread_setname_np(pthread_self(), "reader");
	char b;
	read(pipefd[0], &b, 1);
	return NULL;
}

static void *acceptor(void *arg) {
	pthread_setname_np(pthread_self(), "acceptor");
	int c = accept(lfd, NULL, NULL);
	if (c >= 0) close(c);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc > 1) seconds = atof(argv[1]);
	if (pipe(pipefd) != 0) { perror("pipe"); return 1; }
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	if (bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0 || getsockname(lfd, (struct sockaddr *)&a, &al) != 0) { perror("socket"); return 1; }
	void *(*fns[])(void *) = {sleeper, holder, locker, condwait, reader, acceptor};
	pthread_t th[6];
	for (int i = 0; i < 6; i++) pthread_create(&th[i], NULL, fns[i], NULL);
	nap(seconds);
	done = 1;
	write(pipefd[1], "x", 1);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	connect(c, (struct sockaddr *)&a, sizeof a);
	for (int i = 0; i < 6; i++) pthread_join(th[i], NULL);
	close(c);
	return 0;
}
