package symbolize

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A map the test writes as a JIT would: later lines win where ranges
// overlap, addresses may carry 0x or not, names keep their spaces.
func TestPerfMapOverlaps(t *testing.T) {
	text := "1000 100 old one\n" + // [0x1000, 0x1100)
		"0x1080 0x10 newer (reused)\n" + // [0x1080, 0x1090) wins over "old one"
		"\n" +
		"2000 0 empty\n" +
		"0x1000 0x40 newest[OptimizedTier1]\n" // [0x1000, 0x1040)
	pm, err := ReadPerfMap("test.map", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pc   uint64
		want string
	}{
		{0xfff, ""}, {0x1000, "newest[OptimizedTier1]"}, {0x103f, "newest[OptimizedTier1]"},
		{0x1040, "old one"}, {0x1080, "newer (reused)"}, {0x108f, "newer (reused)"},
		{0x1090, "old one"}, {0x10ff, "old one"}, {0x1100, ""}, {0x2000, ""},
	} {
		got := ""
		if f := pm.Frames(nil, tc.pc); len(f) == 1 {
			got = f[0].Name
			if f[0].SystemName != got {
				t.Errorf("%#x: SystemName %q, Name %q", tc.pc, f[0].SystemName, got)
			}
		}
		if got != tc.want {
			t.Errorf("Frames(%#x) = %q, want %q", tc.pc, got, tc.want)
		}
	}
	if pm.Len() != 4 {
		t.Errorf("%d segments, want 4 (newest, old one, newer, old one)", pm.Len())
	}
}

func TestPerfMapErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"1000 10 ok\nzz 10 bad\n", "m.map:2: bad start address \"zz\""},
		{"1000 xyz name\n", "m.map:1: bad size \"xyz\""},
		{"1000 10\n", "m.map:1: no name"},
		{"ffffffffffffffff 10 wraps\n", "m.map:1: range"},
		{"1000 10 " + strings.Repeat("x", MaxPerfMapLine) + "\n", "m.map: a line longer than"},
	} {
		_, err := ReadPerfMap("m.map", strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadPerfMap(%.40q): %v, want %q", tc.text, err, tc.want)
		}
	}
	if _, err := OpenPerfMap(filepath.Join(t.TempDir(), "perf-1.map")); err == nil {
		t.Error("OpenPerfMap of a missing file: no error")
	}
}

// checkRealMap reads the map a runtime wrote and checks that a name the
// program defines is found at the last range that names it (the last line
// wins, so its range is the name's own).
func checkRealMap(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the runtime wrote no perf map: %v", err)
	}
	pm, err := ReadPerfMap(path, strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	var start uint64
	var name string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(line, want) {
			e, err := parsePerfMapLine(line)
			if err != nil {
				t.Fatal(err)
			}
			start, name = e.start, e.name
		}
	}
	if name == "" {
		t.Fatalf("%s names no %s (%d lines)", path, want, strings.Count(string(data), "\n"))
	}
	f := pm.Frames(nil, start)
	if len(f) != 1 || f[0].Name != name {
		t.Errorf("Frames(%#x) = %v, want %q", start, f, name)
	}
	t.Logf("%s: %d ranges; %#x is %q", path, pm.Len(), start, name)
}

// JDK 17 writes /tmp/perf-PID.map at exit with -XX:+DumpPerfMapAtExit:
// `0x<start> 0x<size> <rettype> <Class.method(args)>`.
func TestPerfMapJVM(t *testing.T) {
	t.Parallel()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java to write a perf map")
	}
	src := filepath.Join(t.TempDir(), "Workload.java")
	prog := `public class Workload {
	static long compute(long n) { long s = 0; for (long i = 0; i < n; i++) s += i % 7; return s; }
	public static void main(String[] a) { long s = 0; for (int i = 0; i < 2000; i++) s += compute(20000); System.out.println(s); }
}`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit", src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("java: %v: %s", err, out)
	}
	path := fmt.Sprintf("/tmp/perf-%d.map", cmd.Process.Pid)
	defer os.Remove(path)
	checkRealMap(t, path, "Workload.compute(long)")
}

// Node's --perf-basic-prof writes /tmp/perf-PID.map as code is compiled:
// `START SIZE JS:~name file:line:col`.
func TestPerfMapNode(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node to write a perf map")
	}
	cmd := exec.Command(node, "--perf-basic-prof", "-e",
		"function hotLoop(n){let s=0;for(let i=0;i<n;i++)s+=i%7;return s} let t=0; for(let i=0;i<3000;i++) t+=hotLoop(10000); console.log(t)")
	cmd.Dir = t.TempDir() // V8 writes its isolate-*-v8.log here
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node: %v: %s", err, out)
	}
	path := fmt.Sprintf("/tmp/perf-%d.map", cmd.Process.Pid)
	defer os.Remove(path)
	checkRealMap(t, path, "hotLoop")
}
