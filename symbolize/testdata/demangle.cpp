// Built by symbolize's demangle tests (g++ -O0): overloads, a template, a
// namespace and a lambda, each kept out of line so that nm lists it.
#include <cstdio>
#include <string>
#include <vector>

namespace shapes {
struct Widget {
	int frob(const std::string &s, std::vector<int> &v);
	int frob(int n) const;
};
int Widget::frob(const std::string &s, std::vector<int> &v) {
	v.push_back(int(s.size()));
	return int(v.size());
}
int Widget::frob(int n) const { return n * 2; }
} // namespace shapes

template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }

__attribute__((noinline)) long spin(long n) { return n + 1; }
__attribute__((noinline)) long spin(double d) { return long(d); }

int main(int argc, char **) {
	shapes::Widget w;
	std::vector<int> v;
	auto add = [&](int k) { return w.frob(k) + argc; };
	long r = w.frob(std::string("abc"), v) + add(3) + twice<int>(argc) + long(twice<double>(1.5)) + spin(2L) + spin(2.5);
	// With an argument it runs for a while, for perf record to sample.
	for (long i = 0; argc > 1 && i < 10000000; i++)
		r += w.frob(int(i)) + twice<int>(int(i)) + spin(i) + add(int(i));
	std::printf("%ld\n", r);
	return 0;
}
