/* hot.c: a C program for the ELF/DWARF reader tests. leaf_mul, middle and
   other_path are never inlined; scale is a static inline helper that -O2
   inlines into middle and other_path, so their addresses have a two-deep
   inline chain. */
#include <stdio.h>
#include <stdlib.h>

static inline unsigned long scale(unsigned long x, unsigned long k)
{
	unsigned long r = x * k + (x >> 3);
	return r ^ (r >> 7);
}

__attribute__((noinline)) unsigned long leaf_mul(unsigned long a, unsigned long b)
{
	unsigned long r = 0;
	for (unsigned long i = 0; i < b; i++)
		r += a * i + (r >> 5);
	return r;
}

__attribute__((noinline)) unsigned long middle(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += scale(leaf_mul(i, 64), i | 1);
	return s;
}

__attribute__((noinline)) unsigned long other_path(unsigned long n)
{
	unsigned long s = 1;
	for (unsigned long i = 1; i < n; i++)
		s = scale(s, i) + i;
	return s;
}

/* unused is never called: with -ffunction-sections -Wl,--gc-sections the
   linker drops it, and its DWARF stays behind at address 0. */
__attribute__((noinline)) unsigned long unused(unsigned long n)
{
	return scale(n, 3) + leaf_mul(n, 2);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	printf("%lu\n", middle(n) + other_path(n));
	return 0;
}
