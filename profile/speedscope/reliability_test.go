package speedscope

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv names the file a re-executed test binary parses (see
// TestParseChild); the parent measures that process's peak RSS.
const childEnv = "SPEEDSCOPE_TEST_PARSE_FILE"

// TestParseChild is the subprocess of parseInChild: it parses the file
// named by childEnv and prints what it got. It does nothing in a normal run.
func TestParseChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("only run as the subprocess of a memory test")
	}
	defer printHWM()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, _, err := Parse(data)
	fmt.Printf("parse %d ns\n", time.Since(start))
	if err != nil {
		fmt.Printf("error: %v\n", err)
		return
	}
	refs := 0
	for _, s := range p.Sample {
		refs += len(s.Location)
	}
	fmt.Printf("samples %d frame refs %d\n", len(p.Sample), refs)
}

// parseInChild parses data in a re-executed test binary and returns what
// it printed, the time Parse took there and the child's peak RSS in bytes.
func parseInChild(t *testing.T, data string) (out string, took time.Duration, rss int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.speedscope.json")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestParseChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stdout
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, stdout.String())
	}
	out = stdout.String()
	if i := strings.Index(out, "parse "); i >= 0 {
		var ns int64
		fmt.Sscan(out[i+len("parse "):], &ns)
		took = time.Duration(ns)
	}
	// The child's own high-water mark: its rusage Maxrss also counts the
	// test binary it was spawned from (Linux keeps the peak of the memory
	// image that exec replaced), which is large after other tests.
	if i := strings.Index(out, "vmhwm "); i >= 0 {
		var kb int64
		if _, err := fmt.Sscan(out[i+len("vmhwm "):], &kb); err == nil {
			return out, took, kb * 1024
		}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	return out, took, int64(ru.Maxrss) * 1024 // KiB on Linux
}

// raced reports whether the test runs under the race detector, whose
// shadow memory and slowdown (several times each) no bound here allows
// for: memory and time are then only logged.
func raced() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return true
			}
		}
	}
	return false
}

// printHWM prints the process's peak RSS in KiB (VmHWM) where /proc has it.
func printHWM() {
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Printf("vmhwm %s\n", strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
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
	if rss > 100<<20 && !raced() {
		t.Errorf("peak RSS %d MB, want under 100 MB", rss>>20)
	}
	if took > 2*time.Second && !raced() {
		t.Errorf("Parse took %v, want under 2 s", took)
	}
}

// A deep path with many distinct leaves needs depth references per leaf
// in pprof's model, whatever the sharing: past 4 per byte of input it is
// refused, before the arrays are allocated.
func TestManyDeepLeavesRefused(t *testing.T) {
	const depth, leaves = 2000, 5000
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
	js := sb.String()
	start := time.Now()
	_, _, err := Parse([]byte(js))
	want := fmt.Sprintf("profile too large: its stacks need more than %d frame references after merging identical stacks (the bound is 4 per byte of input, at most %d)", 4*len(js), MaxFrameRefs)
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if d := time.Since(start); d > time.Second && !raced() {
		t.Errorf("took %v", d)
	}
}
