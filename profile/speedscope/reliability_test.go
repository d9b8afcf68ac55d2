package speedscope

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/profdiff/profdiff/profile/internal/memtest"
)

// TestParseChild is the subprocess of parseInChild (see package
// memtest): it parses the file it is given and prints what it got. It
// does nothing in a normal run.
func TestParseChild(t *testing.T) {
	data, err := os.ReadFile(memtest.Args(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	memtest.Measure(func() {
		p, _, err := Parse(data)
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return
		}
		refs := 0
		for _, s := range p.Sample {
			refs += len(s.Location)
		}
		fmt.Printf("samples %d frame refs %d\n", len(p.Sample), refs)
	})
}

// parseInChild parses data in a re-executed test binary and returns what
// it printed, the time Parse took there and the child's peak RSS in bytes.
func parseInChild(t *testing.T, data string) (out string, took time.Duration, rss int64) {
	t.Helper()
	return memtest.Run(t, "TestParseChild", "x.speedscope.json", []byte(data))
}

// nestedEvents is an evented profile that opens frame 0 depth times, one
// time unit apart, then closes them all: every node of the one deep path
// has self time. pprof samples are whole stacks, so this used to cost
// depth²/2 frame references (60 million, 480 MB, for 660 KB of JSON).
func nestedEvents(depth int) string {
	var sb strings.Builder
	sb.WriteString(`{` + schema + `, "shared": {"frames": [{"name": "f"}]}, "profiles": [{"type": "evented", "name": "t", "unit": "none", "events": [`)
	for i := range 2 * depth {
		if i > 0 {
			sb.WriteByte(',')
		}
		typ := "O"
		if i >= depth {
			typ = "C"
		}
		fmt.Fprintf(&sb, `{"type":"%s","frame":0,"at":%d}`, typ, i)
	}
	sb.WriteString(`]}]}`)
	return sb.String()
}

func TestNestedEventsMemory(t *testing.T) {
	const depth = 11000
	js := nestedEvents(depth)
	out, took, rss := parseInChild(t, js)
	t.Logf("%d bytes, depth %d: %v, peak RSS %.1f MB; %s", len(js), depth, took, float64(rss)/1e6, strings.TrimSpace(out))
	// The depth samples share one array of depth references.
	if want := fmt.Sprintf("samples %d frame refs %d", depth, depth*(depth+1)/2); !strings.Contains(out, want) {
		t.Errorf("child printed %q, want %q", out, want)
	}
	if rss > 100<<20 && !memtest.Raced() {
		t.Errorf("peak RSS %d MB, want under 100 MB", rss>>20)
	}
}

// A deep path with many distinct leaves needs depth references per leaf
// in pprof's model, whatever the sharing: past 4 per byte of input it is
// refused, before the arrays are allocated.
func TestManyDeepLeavesRefused(t *testing.T) {
	js := deepLeaves(2000, 5000)
	_, _, err := Parse([]byte(js))
	want := fmt.Sprintf("profile too large: its stacks need more than %d frame references after merging identical stacks (the bound is 4 per byte of input, at most %d)", 4*len(js), MaxFrameRefs)
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// deepLeaves is an evented profile of one path depth frames deep with
// leaves distinct leaves under it.
func deepLeaves(depth, leaves int) string {
	var sb strings.Builder
	sb.WriteString(`{` + schema + `, "shared": {"frames": [{"name": "f"}`)
	for i := range leaves {
		fmt.Fprintf(&sb, `,{"name":"leaf%d"}`, i)
	}
	sb.WriteString(`]}, "profiles": [{"type": "evented", "name": "t", "unit": "none", "events": [`)
	for range depth {
		sb.WriteString(`{"type":"O","frame":0,"at":0},`)
	}
	for i := range leaves {
		fmt.Fprintf(&sb, `{"type":"O","frame":%d,"at":%d},{"type":"C","frame":%d,"at":%d},`, i+1, i, i+1, i+1)
	}
	for i := range depth {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"type":"C","frame":0,"at":%d}`, leaves)
	}
	sb.WriteString(`]}]}`)
	return sb.String()
}
