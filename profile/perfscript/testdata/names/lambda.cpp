// lambda spins in a function of an anonymous namespace called from a
// lambda, so that perf records the frames `(anonymous namespace)::spin`
// and `drive(int)::{lambda(int)#1}::operator()`, whose parentheses are
// part of the name. The argument is the loop length (default 50000).
#include <cstdio>
#include <cstdlib>

namespace {
volatile unsigned long sink;

void spin(int n) {
	for (int i = 0; i < n; i++)
		sink += i * 7;
}
} // namespace

void drive(int n) {
	auto body = [](int k) { spin(k); };
	for (int i = 0; i < 400; i++)
		body(n);
}

int main(int argc, char **argv) {
	drive(argc > 1 ? atoi(argv[1]) : 50000);
	printf("%lu\n", (unsigned long)sink);
}
