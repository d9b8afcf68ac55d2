// A C++ program for the callgrind name tests: a const member function in
// a namespace and a function template, neither inlined.
namespace shapes {
struct Widget {
	__attribute__((noinline)) long frob(int n) const {
		long s = 0;
		for (int i = 0; i < n; i++)
			s += i * k;
		return s;
	}
	long k = 3;
};
} // namespace shapes

template <typename T> __attribute__((noinline)) T twice(T x) { return x * 2; }

int main() {
	shapes::Widget w;
	long s = 0;
	for (int i = 0; i < 300; i++)
		s += twice(w.frob(i));
	return s == 42;
}
