// spawn starts `true` 20 times with posix_spawnp, whose vfork parks the
// parent in an uninterruptible (D) completion wait until the child execs,
// and waits for each child.
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

int main(void) {
	for (int i = 0; i < 20; i++) {
		pid_t p;
		char *argv[] = {"true", 0};
		if (posix_spawnp(&p, "true", 0, 0, argv, environ) != 0)
			return 1;
		waitpid(p, 0, 0);
	}
	return 0;
}
