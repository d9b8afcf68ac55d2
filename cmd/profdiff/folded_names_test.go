package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/profdiff/profdiff/profile/producertest"
)

// topRows is what a top's JSON says: the total and each method row's
// value by name.
type topRows struct {
	Total   float64
	Methods map[string]float64
}

// topJSON runs top --format json --top 0 with args and reads its total
// and rows; warnings are allowed, a failure is not.
func topJSON(t *testing.T, args ...string) topRows {
	t.Helper()
	out, stderr, code := profdiff(t, "", append([]string{"top", "--format", "json", "--top", "0"}, args...)...)
	if code != 0 {
		t.Fatalf("top %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	var v struct {
		Total   float64
		Methods []struct {
			Name  string
			Value float64
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	r := topRows{Total: v.Total, Methods: map[string]float64{}}
	for _, m := range v.Methods {
		r.Methods[m.Name] += m.Value
	}
	return r
}

// foldedOf runs top --format folded with args.
func foldedOf(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, code := profdiff(t, "", append([]string{"top", "--format", "folded"}, args...)...)
	if code != 0 {
		t.Fatalf("top --format folded %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out
}

// checkFoldedRoundTrip writes file's folded stacks (top --format folded
// with args), loads them back with top, and wants the same total, the
// same method rows and the same folded stacks again: folded output is
// data, its frames are the input's and every sample is in it.
func checkFoldedRoundTrip(t *testing.T, file string, args ...string) string {
	t.Helper()
	folded := foldedOf(t, append(args, file)...)
	p := pictureFile(t, "roundtrip.folded", folded)
	orig, back := topJSON(t, append(args, file)...), topJSON(t, p)
	if orig.Total != back.Total || orig.Total == 0 {
		t.Errorf("%s: total %g, its folded stacks load back with %g", file, orig.Total, back.Total)
	}
	if o, b := rowsText(orig.Methods), rowsText(back.Methods); o != b {
		t.Errorf("%s: method rows differ once folded and loaded back:\n%s\nvs\n%s", file, o, b)
	}
	if again := foldedOf(t, p); again != folded {
		t.Errorf("%s: folded stacks loaded back and written again differ:\n%s\nvs\n%s", file, folded, again)
	}
	return folded
}

// rowsText lists rows sorted by name, one "name value" a line.
func rowsText(rows map[string]float64) string {
	var lines []string
	for n, v := range rows {
		lines = append(lines, fmt.Sprintf("%s %g", n, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// A Go heap profile's sample recorded without a stack (google/pprof's
// gobench.heap, written by Go's runtime, in the corpus: 7085 of its 83134
// allocated objects) is counted under the pseudo-frame [no stack]: in the
// method table, in the folded stacks, and back again when they are
// loaded.
func TestFoldedNoStack(t *testing.T) {
	heap := corpusFile(t, "google-pprof/profile__testdata__gobench.heap")
	folded := checkFoldedRoundTrip(t, heap, "--sample-index", "alloc_objects")
	if !strings.Contains(folded, "\n[no stack] 7085\n") && !strings.HasPrefix(folded, "[no stack] 7085\n") {
		t.Errorf("folded stacks lack the stackless sample as [no stack] 7085:\n%s", folded)
	}
	if rows := topJSON(t, "--sample-index", "alloc_objects", heap); rows.Methods["[no stack]"] != 7085 || rows.Total != 83134 {
		t.Errorf("top: [no stack] %g of %g, want 7085 of 83134", rows.Methods["[no stack]"], rows.Total)
	}
}

// recordVariants builds src (diff/testdata/variants) with the compiler and
// args given, records it running 0.3 s with perf record -g, and returns
// the binary and perf script's output (perf script --no-demangle piped
// through c++filt when filt is set: the FlameGraph way, which keeps
// Rust's ::h<hash> suffixes). It skips when a tool is missing or perf
// cannot record here.
func recordVariants(t *testing.T, src string, filt bool, compiler string, args ...string) (bin, script string) {
	t.Helper()
	tools := []string{compiler, "perf", "nm"}
	if filt {
		tools = append(tools, "c++filt")
	}
	for i, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil && tool == "rustc" {
			home, _ := os.UserHomeDir()
			p = filepath.Join(home, ".cargo", "bin", "rustc")
			_, err = os.Stat(p)
		}
		if err != nil {
			t.Skip(tool + " is not installed: no recording of build variants")
		}
		tools[i] = p
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	args = append(args, "-o", bin, filepath.Join("..", "..", "diff", "testdata", "variants", src))
	if out, err := exec.Command(tools[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", compiler, src, err, out)
	}
	data := filepath.Join(dir, "perf.data")
	var stderr bytes.Buffer
	rec := exec.Command(tools[1], producertest.PerfRecord(tools[1], "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, bin, "0.3")...)
	rec.Stderr = &stderr
	if err := rec.Run(); err != nil {
		t.Skipf("perf record cannot record here: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	sargs := []string{"script", "-i", data}
	if filt {
		sargs = append(sargs, "--no-demangle")
	}
	text, err := exec.Command(tools[1], sargs...).Output()
	if err != nil {
		t.Fatalf("perf script: %v", err)
	}
	if filt {
		cmd := exec.Command(tools[3])
		cmd.Stdin = bytes.NewReader(text)
		if text, err = cmd.Output(); err != nil {
			t.Fatalf("c++filt: %v", err)
		}
	}
	script = filepath.Join(dir, "script.txt")
	if err := os.WriteFile(script, text, 0o644); err != nil {
		t.Fatal(err)
	}
	return bin, script
}

// symbols lists the function symbols nm finds in bin, demangled by
// c++filt when demangle is set (as the recording's frames were).
func symbols(t *testing.T, bin string, demangle bool) map[string]bool {
	t.Helper()
	out, err := exec.Command("nm", "--defined-only", bin).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", bin, err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.SplitN(line, " ", 3); len(f) == 3 && strings.ContainsAny(f[1], "Tt") {
			names = append(names, f[2])
		}
	}
	if demangle {
		cmd := exec.Command("c++filt")
		cmd.Stdin = strings.NewReader(strings.Join(names, "\n"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("c++filt: %v", err)
		}
		names = strings.Split(string(out), "\n")
	}
	syms := map[string]bool{}
	for _, n := range names {
		syms[n] = true
	}
	return syms
}

// foldedFrames counts the frames of folded stacks by name.
func foldedFrames(folded string) map[string]int {
	n := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		stack := line[:strings.LastIndexByte(line, ' ')]
		for _, f := range strings.Split(stack, ";") {
			n[f]++
		}
	}
	return n
}

// topVariants reads top --format json's method rows: name → variants
// (0 for a row of one name).
func topVariants(t *testing.T, args ...string) map[string]int {
	t.Helper()
	out, stderr, code := profdiff(t, "", append([]string{"top", "--format", "json", "--top", "0"}, args...)...)
	if code != 0 {
		t.Fatalf("top: exit %d: %s", code, stderr)
	}
	var v struct {
		Methods []struct {
			Name     string
			Variants int
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, m := range v.Methods {
		rows[m.Name] = m.Variants
	}
	return rows
}

// gcc -O2 clones a function into build variants (work and work.part.0,
// check.cold, sum.constprop.0.isra.0) that profdiff merges into one
// method. Folded and difffolded output keep each frame's own name (the
// out-of-line work calling work.part.0 is `work;work.part.0`, never
// `work.part.0;work.part.0`), folded output loads back with the same
// totals, rows and stacks, and the merged row is named `work`, what its
// variants share, with their count.
func TestFoldedBuildVariants(t *testing.T) {
	t.Parallel() // compiles and records a program of its own; reads nothing of this process, measures no time
	bin, script := recordVariants(t, "clones.c", false, "gcc", "-O2", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls")
	syms := symbols(t, bin, false)
	if !syms["work.part.0"] {
		t.Skip("gcc made no work.part.0 clone here")
	}
	folded := checkFoldedRoundTrip(t, script)
	frames := foldedFrames(folded)
	for f := range frames {
		if base, _, _ := strings.Cut(f, "."); (base == "work" || base == "check" || base == "sum") && !syms[f] {
			t.Errorf("folded frame %q is no symbol of the program (it has %v)", f, syms)
		}
	}
	if frames["work.part.0"] == 0 {
		t.Fatalf("no sample in work.part.0:\n%s", folded)
	}
	diffFolded, stderr, code := profdiff(t, "", "diff", "--format", "difffolded", script, script)
	if code != 0 {
		t.Fatalf("diff --format difffolded: exit %d: %s", code, stderr)
	}
	for name, out := range map[string]string{"folded": folded, "difffolded": diffFolded} {
		if strings.Contains(out, "work.part.0;work.part.0") || strings.Contains(out, ";work;work ") || strings.Contains(out, ";work;work;") {
			t.Errorf("%s stacks name work's two variants alike:\n%s", name, out)
		}
		if frames["work"] > 0 && !strings.Contains(out, ";work;work.part.0") {
			t.Errorf("%s stacks lack the out-of-line work calling work.part.0:\n%s", name, out)
		}
	}
	rows := topVariants(t, script)
	if _, ok := rows["work.part.0"]; ok {
		t.Errorf("a row is named work.part.0, one of the variants it merges: %v", rows)
	}
	want := 1
	if frames["work"] > 0 {
		want = 2
	}
	if v, ok := rows["work"]; !ok || max(v, 1) != want {
		t.Errorf("row work: variants %d (present %v), want %d", v, ok, want)
	}
	if want == 2 && !strings.Contains(mustProfdiffTable(t, script), "work (2 variants)") {
		t.Error("the table does not label the merged row work (2 variants)")
	}
}

// rustc names each instance of a generic function crunch::h<hash>; the
// FlameGraph way of reading perf (perf script --no-demangle | c++filt)
// keeps the hashes. Folded output keeps each instance's hash, and the
// merged row, self or inclusive, is mono::crunch with the instances
// counted, not one instance's name for all of them.
func TestFoldedRustInstances(t *testing.T) {
	t.Parallel() // compiles and records a program of its own; reads nothing of this process, measures no time
	bin, script := recordVariants(t, "mono.rs", true, "rustc", "-O", "-C", "force-frame-pointers=yes")
	instances := map[string]bool{}
	for s := range symbols(t, bin, true) {
		if strings.HasPrefix(s, "mono::crunch::h") {
			instances[s] = true
		}
	}
	if len(instances) < 2 {
		t.Skipf("rustc made %d instances of crunch", len(instances))
	}
	folded := checkFoldedRoundTrip(t, script)
	seen := 0
	for f := range foldedFrames(folded) {
		if strings.HasPrefix(f, "mono::crunch") {
			if !instances[f] {
				t.Errorf("folded frame %q is no instance of crunch (%v)", f, instances)
			}
			seen++
		}
	}
	if seen < 2 {
		t.Fatalf("%d instances of crunch in the folded stacks, want several:\n%s", seen, folded)
	}
	for _, args := range [][]string{{script}, {"--cum", script}} {
		rows := topVariants(t, args...)
		if v := rows["mono::crunch"]; v != seen {
			t.Errorf("top %v: row mono::crunch has %d variants, want %d (rows %v)", args, v, seen, rows)
		}
		for name := range rows {
			if strings.HasPrefix(name, "mono::crunch::h") {
				t.Errorf("top %v: a row is named %s, one instance of those it merges", args, name)
			}
		}
	}
}

// mustProfdiffTable is top's table of file, warnings allowed.
func mustProfdiffTable(t *testing.T, file string) string {
	t.Helper()
	out, stderr, code := profdiff(t, "", "top", "--top", "0", file)
	if code != 0 {
		t.Fatalf("top %s: exit %d: %s", file, code, stderr)
	}
	return out
}
