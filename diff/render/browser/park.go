package browser

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Park starts n goroutines that wait on a channel, so that a goroutine
// profile of the test process taken now is a real one with that many
// more goroutines (the pages' tests draw such profiles), and returns once
// all are parked, with the function that lets them go. The runtime offers
// no event for a goroutine having parked, so it checks the stacks between
// yields, a bounded number of times, for 10 s at most.
func Park(t testing.TB, n int) (release func()) {
	t.Helper()
	stop := make(chan struct{})
	for range n {
		go func() { <-stop }()
	}
	waitParked(t, "browser.Park.func", "chan receive", n)
	return func() { close(stop) }
}

// waitParked returns once n goroutines whose stacks hold frame are parked
// in state (as runtime.Stack's header names it: "chan receive").
func waitParked(t testing.TB, frame, state string, n int) {
	t.Helper()
	buf := make([]byte, 1<<16)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		k := runtime.Stack(buf, true)
		if k == len(buf) {
			buf = make([]byte, 2*len(buf))
			continue
		}
		got := 0
		for _, g := range strings.Split(string(buf[:k]), "\n\n") {
			if strings.Contains(g, frame) && strings.Contains(g, " ["+state) {
				got++
			}
		}
		if got >= n {
			return
		}
		if i == 1_000_000 || time.Now().After(deadline) {
			t.Fatalf("%d of %d goroutines in %s parked in %q after %d checks", got, n, frame, state, i+1)
		}
		runtime.Gosched()
	}
}
