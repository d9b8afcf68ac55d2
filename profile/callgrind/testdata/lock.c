/* Four threads take one pthread mutex in turn and do work while they
   hold it: held_work runs 200*HOLD iterations (argv[1], default 1) per
   hold. The callgrind tests run it with HOLD 1 and 2. */
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static int hold = 1;

__attribute__((noinline)) static void held_work(void) {
	for (int i = 0; i < 200 * hold; i++)
		sink += i * 7;
}

static void *worker(void *arg) {
	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&mu);
		held_work();
		pthread_mutex_unlock(&mu);
	}
	return arg;
}

int main(int argc, char **argv) {
	pthread_t t[4];
	if (argc > 1)
		hold = atoi(argv[1]);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], 0, worker, 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], 0);
	return 0;
}
