package result

import (
	"fmt"
	"strings"

	"github.com/profdiff/profdiff/profile/kind"
)

// By chooses which frame a sample's value is attributed to in the method
// table.
type By string

const (
	ByFrame   By = "frame"   // the sample's leaf (first non-skip frame)
	ByDecider By = "decider" // the frame that decided the sample's bucket
	// ByCaller charges a sample to the program's own code behind its
	// bucket: from the deciding frame towards the root, the first frame no
	// rule matches that is not in the Go standard library (the function
	// that called Lock, not the runtime's semaphore); failing that the
	// first rule-free frame outside package runtime (a goroutine all in
	// the standard library), then any rule-free frame, then the decider.
	ByCaller By = "caller"
)

// ParseBy reads an attribution, in any case: frame, decider or caller.
// "" is the default for the profile's kind (see Options.By and DefaultBy).
func ParseBy(s string) (By, error) {
	switch b := By(strings.ToLower(s)); b {
	case "", ByFrame, ByDecider, ByCaller:
		return b, nil
	}
	return "", fmt.Errorf("unknown attribution %q (want frame, decider or caller)", s)
}

// DefaultBy is the attribution Options.By "" picks for a kind: ByCaller
// for wall, goroutine, trace, block and mutex profiles, whose leaf frame
// is the scheduler or the lock's own code (runtime.gopark, Unlock), so the
// program's function behind it says more; ByFrame for cpu, heap and
// others, where the leaf is where the resource went.
func DefaultBy(k kind.Kind) By {
	switch k {
	case kind.Wall, kind.Goroutine, kind.Trace, kind.Block, kind.Mutex:
		return ByCaller
	}
	return ByFrame
}

// Side names the two sides of a comparison.
type Side int

const (
	Base Side = 0
	New  Side = 1
)

func (s Side) String() string {
	if s == Base {
		return "base"
	}
	return "new"
}
