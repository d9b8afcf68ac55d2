package gotrace

import (
	"bytes"
	"fmt"
	"runtime/trace"
	"sync"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/internal/benchgen"
)

// benchTrace records a runtime/trace of a busy program: 64 goroutines
// handed 200,000 items of work through a channel (a fixed amount, so that
// the trace's size does not depend on the machine's load), taking a contended mutex,
// sleeping and allocating, so that the trace holds every kind of
// goroutine transition the reader walks.
func benchTrace(b *testing.B) []byte {
	var buf bytes.Buffer
	if err := trace.Start(&buf); err != nil {
		b.Skip("tracing unavailable:", err)
	}
	var mu sync.Mutex
	shared := map[int][]byte{}
	work := make(chan int)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case n := <-work:
					mu.Lock()
					shared[n%97] = make([]byte, 64+n%512)
					mu.Unlock()
					if n%13 == g%13 {
						time.Sleep(50 * time.Microsecond) // the scenario: the traced goroutine sleeps
					}
					_ = fmt.Sprint(n)
				}
			}
		}()
	}
	for n := range 200_000 {
		work <- n
	}
	close(stop)
	wg.Wait()
	trace.Stop()
	return buf.Bytes()
}

// BenchmarkParse measures Parse on a trace recorded at benchmark time
// (see benchTrace; a few MB), beside the floor of counting its zero bytes.
//
//	go test ./profile/gotrace -run '^$' -bench Parse -cpu 1
func BenchmarkParse(b *testing.B) {
	data := benchTrace(b)
	b.Run("floor", func(b *testing.B) {
		benchgen.Loop(b, int64(len(data)), func() {
			bytes.Count(data, []byte{0})
		})
	})
	b.Run("parse", func(b *testing.B) {
		benchgen.Loop(b, int64(len(data)), func() {
			if _, _, err := Parse(data, Options{}); err != nil {
				b.Fatal(err)
			}
		})
	})
}
