package profile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/producertest"
	"github.com/profdiff/profdiff/symbolize"
)

// A perf recording of a stripped C binary names its frames `[unknown]`;
// loaded with --symbols naming the unstripped build, they get the names
// perf itself prints once the unstripped binary (same build ID: strip
// keeps the note) is where the recording says: at least 99% of the
// binary's sampled value has perf's function as its outermost frame.
func TestPerfScriptStrippedBinaryNamed(t *testing.T) {
	perf := nativeTool(t, "perf")
	dir := t.TempDir()
	run, syms := filepath.Join(dir, "run"), filepath.Join(dir, "syms")
	for _, d := range []string{run, syms} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	full := buildNative(t, filepath.Join(syms, "hot"), "gcc", "elf/hot.c", "-O2", "-g", "-fno-omit-frame-pointer")
	bin := filepath.Join(run, "hot")
	copyFile(t, full, bin)
	if out, err := exec.Command(nativeTool(t, "strip"), bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "perf.data")
	// perf keeps binaries by build ID under $HOME/.debug and names frames
	// from there: a home of its own, and no cache (-N, which
	// producertest.PerfRecord adds), so that it sees only the files here
	// (every build of hot.c has the same build ID).
	env := append(os.Environ(), "HOME="+dir)
	// 3,000,000 iterations: about 200 ms, 200 samples, so that an odd
	// sample in the PLT stays under the 1% the check below allows. perf
	// stretches the sizeless _init (in .init) to the next symbol, main,
	// over .plt, and calls it _init; the symbol table bounds _init by its
	// section and names nothing there. At 300,000 (22 samples) one such
	// sample was 4.5% and failed .ci/run once.
	rec := exec.Command(perf, producertest.PerfRecord(perf, "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, bin, "3000000")...)
	rec.Env = env
	if out, err := rec.CombinedOutput(); err != nil {
		t.Skipf("perf record cannot record here: %v: %s", err, out)
	}
	script := func(name string, syms ...string) *Loaded {
		cmd := exec.Command(perf, "script", "-i", data)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("perf script: %v", err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Load(t.Context(), path, Options{Symbols: symbolize.Options{Paths: syms}})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, loc := range script("stripped.txt").Profile.Location {
		if loc.Mapping != nil && loc.Mapping.File == bin && loc.Line[0].Function.Name != "[hot]" {
			t.Fatalf("perf named %s's frames itself (%s): nothing to test", bin, loc.Line[0].Function.Name)
		}
	}
	named := script("stripped.txt", syms)
	copyFile(t, bin, filepath.Join(dir, "stripped-copy"))
	copyFile(t, full, bin) // perf now finds the symbols itself
	ref := script("reference.txt", syms)

	want := outermostByStack(ref.Profile, bin)
	got := outermostByStack(named.Profile, bin)
	var total, same int64
	for stack, v := range want {
		total += v
		same += min(got[stack], v) // per sample: one odd frame costs one sample, not its stack
	}
	if total == 0 {
		t.Fatalf("no samples in %s", bin)
	}
	if float64(same) < 0.99*float64(total) {
		t.Errorf("%d of %d samples named as perf names them; reference %v, got %v", same, total, want, got)
	}
	if named.Symbols == nil || named.Symbols.Share > 0.01 {
		t.Errorf("symbols report %+v: want the binary served", named.Symbols)
	}

	// perf script prints no build ID, but the recorded binary is still at
	// its path: its build ID picks the symbol file, so the unstripped
	// copy serves under any name, and a rebuild of the same name is
	// refused.
	copyFile(t, filepath.Join(dir, "stripped-copy"), bin)
	other := filepath.Join(dir, "renamed")
	copyFile(t, full, other)
	if renamed := outermostByStack(script("stripped.txt", other).Profile, bin); !sameStacks(renamed, got) {
		t.Errorf("--symbols naming the unstripped build under another name: %v, want %v (as under its own name)", renamed, got)
	}
	rebuilt := filepath.Join(dir, "rebuilt")
	if err := os.Mkdir(rebuilt, 0o755); err != nil {
		t.Fatal(err)
	}
	buildNative(t, filepath.Join(rebuilt, "hot"), "gcc", "elf/hot.c", "-O1", "-g", "-fno-omit-frame-pointer")
	l := script("stripped.txt", rebuilt)
	for stack := range outermostByStack(l.Profile, bin) {
		if stack != "[hot];" && stack != "[hot];[hot];" && stack != "[hot];[hot];[hot];" {
			t.Errorf("a rebuilt binary of the same name named the frames: %s", stack)
			break
		}
	}
	if l.Symbols == nil || len(l.Symbols.Mappings) == 0 || !strings.Contains(fmt.Sprint(l.Symbols.Mappings), "refused for their build ID: "+filepath.Join(rebuilt, "hot")) {
		t.Errorf("report %+v: want the rebuild refused by build ID", l.Symbols)
	}
}

func sameStacks(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// outermostByStack sums sample values by the stack of the binary's frames,
// each named by its outermost (physical) function.
func outermostByStack(p *pprofile.Profile, bin string) map[string]int64 {
	out := map[string]int64{}
	for _, s := range p.Sample {
		key := ""
		for _, loc := range s.Location {
			if loc.Mapping == nil || loc.Mapping.File != bin || len(loc.Line) == 0 {
				continue
			}
			key += loc.Line[len(loc.Line)-1].Function.Name + ";"
		}
		if key != "" {
			out[key] += s.Value[0]
		}
	}
	return out
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
