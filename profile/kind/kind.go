// Package kind names what a profile's samples measure: cpu, wall,
// mutex, block, goroutine, trace, heap or unknown. It imports nothing, so
// a package that only reports results (diff/result) names kinds without
// linking a profile reader; package profile detects them.
package kind

import (
	"fmt"
	"strings"
)

// Kind says what a profile's samples measure. The names are part of the JSON
// output (`"kind"`).
type Kind string

const (
	CPU       Kind = "cpu"       // on-CPU samples (SIGPROF, perf cycles)
	Wall      Kind = "wall"      // wall-clock samples of every thread/goroutine (fgprof)
	Mutex     Kind = "mutex"     // lock hold delay recorded at the unlocker
	Block     Kind = "block"     // off-CPU time recorded at the blocked caller
	Goroutine Kind = "goroutine" // a snapshot count of goroutines per stack
	Trace     Kind = "trace"     // derived from an execution trace
	Heap      Kind = "heap"      // allocations; buckets are not meaningful
	Unknown   Kind = "unknown"   // folded stacks and others that say nothing
)

// Kinds lists every kind in a fixed order, for flag help and validation.
var Kinds = []Kind{CPU, Wall, Mutex, Block, Goroutine, Trace, Heap, Unknown}

// Parse reads a kind by its name, in any case.
func Parse(s string) (Kind, error) {
	for _, k := range Kinds {
		if strings.EqualFold(string(k), s) {
			return k, nil
		}
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("unknown profile kind %q (want one of %s)", s, strings.Join(names, ", "))
}
