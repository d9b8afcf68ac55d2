// Command goinl is the program of TestGoInlineToolchains, which builds it
// with old Go toolchains: its syntax is Go 1.12's. spin calls mix, which
// calls add twice; the compiler inlines add into mix and mix into spin
// (mid-stack inlining, Go 1.12 and later), so spin's code holds chains of
// two inlined calls.
package main

import (
	"fmt"
	"os"
)

type acc struct{ v uint64 }

func (a *acc) add(x uint64) {
	v := a.v*6364136223846793005 + x
	v ^= v >> 29
	a.v = v
}

func mix(a *acc, x uint64) {
	a.add(x)
	a.add(x ^ 0x55)
}

//go:noinline
func (a *acc) spin(n int) {
	for i := 0; i < n; i++ {
		mix(a, uint64(i))
	}
}

func main() {
	a := &acc{}
	a.spin(len(os.Args) * 1000)
	fmt.Println(a.v)
}
