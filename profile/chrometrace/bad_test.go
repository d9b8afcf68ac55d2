package chrometrace

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestBadInput checks that broken traces fail with an error that says
// where, and that a trace deeper than MaxDepth is refused, not built.
func TestBadInput(t *testing.T) {
	deep := func(n int) string {
		var b strings.Builder
		b.WriteString("[")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `{"ph":"B","name":"f%d","ts":%d,"pid":1,"tid":1},`, i, i)
		}
		fmt.Fprintf(&b, `{"ph":"E","ts":%d,"pid":1,"tid":1}]`, n)
		return b.String()
	}
	for _, tc := range []struct{ name, data, want string }{
		{"syntax error inside", `[{"ph":"X","name":"a","ts":1,"dur":2},{"ph":"X",,}, {"ph":"X"}]`, "traceEvents[1] (byte"},
		{"NaN time stamp", `[{"ph":"X","name":"a","ts":"NaN","dur":2}]`, "not a finite number"},
		{"traceEvents not an array", `{"traceEvents": 3}`, "traceEvents at byte"},
		{"V8 nodes in a cycle", `{"traceEvents":[{"ph":"P","name":"ProfileChunk","id":"0x1","pid":1,"tid":1,"ts":0,"args":{"data":{"cpuProfile":{"nodes":[{"id":1,"parent":2,"callFrame":{"functionName":"a"}},{"id":2,"parent":1,"callFrame":{"functionName":"b"}}],"samples":[1]},"timeDeltas":[1]}}}]}`, "node 1: stack deeper than 65536 frames, or its parents form a cycle"},
		{"stackFrames sample names no frame", `{"traceEvents":[],"samples":[{"pid":1,"tid":1,"ts":1,"sf":7}],"stackFrames":{}}`, `samples[0]: stackFrames has no frame "7"`},
		{"cut inside the first event", `[{"name":"RunTask","cat":"toplevel","ph":"X","ts":1`, "the file ends at byte 51 inside its event array, before its first event is complete"},
		{"cut inside the first traceEvents event", `{"traceEvents":[{"pid":1,"ph":"X","ts":3`, "the file ends at byte 40 inside its event array"},
		{"events nested past MaxDepth", deep(MaxDepth + 1), "stack deeper than 65536 frames"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWarningsOnce checks that warnings of one kind come once, with a
// count: a trace cut off with many events open says so in one line.
func TestWarningsOnce(t *testing.T) {
	_, warns, err := Parse([]byte(`[{"ph":"B","name":"a","ts":1,"pid":1,"tid":1},{"ph":"B","name":"b","ts":2,"pid":1,"tid":1},{"ph":"B","name":"c","ts":3,"pid":1,"tid":1},{"ph":"X","name":"d","ts":3,"dur":4,"pid":1,"tid":1},`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the file ends inside its event array after 4 events (tracing stopped early?); read them",
		`a begin event ("a") never ends; it ends at the track's last time stamp (and 2 more like it)`,
	}
	if !slices.Equal(warns, want) {
		t.Errorf("warnings %q, want %q", warns, want)
	}
}
