// The corpus tests live in an external test package so that they can use
// profile.ParseFolded even once package profile imports perfscript.
package perfscript_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/diff"
	"github.com/profdiff/profdiff/diff/result"
	"github.com/profdiff/profdiff/diff/rules"
	"github.com/profdiff/profdiff/profile"
	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/internal/readertest"
	"github.com/profdiff/profdiff/profile/perfscript"
)

// corpusDir is the shared corpus folder; the test skips when it is absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpus.Need(t)
}

// corpusFiles lists index.tsv rows (file, format) under the given folders.
func corpusFiles(t *testing.T, dir string, folders ...string) map[string]string {
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 || cols[0] == "file" {
			continue
		}
		for _, folder := range folders {
			if strings.HasPrefix(cols[0], folder+"/") {
				out[cols[0]] = cols[1]
			}
		}
	}
	return out
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data := readertest.ReadFile(t, path)
	if !utf8.Valid(data) {
		t.Fatalf("%s: not UTF-8", path)
	}
	return strings.TrimPrefix(string(data), "\uFEFF")
}

// TestCorpusParses parses every perf-script-text file in the corpus: each
// either loads as a valid profile or fails with a line-numbered error.
func TestCorpusParses(t *testing.T) {
	dir := corpusDir(t)
	files := corpusFiles(t, dir, "flamegraph", "speedscope", "perfview")
	var names []string
	for name, format := range files {
		if format == "perf-script-text" {
			names = append(names, name)
		}
	}
	// test__perf-java-stacks-02 is indexed as text-other but is perf script
	// with unindented frames; read it too.
	names = append(names, "flamegraph/test__perf-java-stacks-02.txt")
	sort.Strings(names)
	if len(names) < 20 {
		t.Fatalf("only %d perf script files in the index", len(names))
	}
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			text := readText(t, filepath.Join(dir, name))
			if !perfscript.Looks(text) {
				t.Errorf("Looks = false")
			}
			p, warns, err := perfscript.Parse(text)
			if err != nil {
				if !regexp.MustCompile(`^perf script: (line \d+: |no samples)`).MatchString(err.Error()) {
					t.Errorf("unclear error: %v", err)
				}
				t.Logf("error: %v", err)
				return
			}
			if err := p.CheckValid(); err != nil {
				t.Fatalf("CheckValid: %v", err)
			}
			var types []string
			for _, st := range p.SampleType {
				types = append(types, st.Type+"/"+st.Unit)
			}
			t.Logf("%d samples, %d locations, types %v, default %s, kind %s, warnings %v", len(p.Sample), len(p.Location), types, p.DefaultSampleType, profile.DetectKind(p), warns)
		})
	}
}

// stacks returns root-first `a;b;c` stacks with the summed values of sample
// type idx. A location's mapping is not part of a frame's name, except for
// the folded twin where ParseFolded turned `module!func` into one.
func stacks(p *pprofile.Profile, idx int, moduleBang bool) map[string]int64 {
	out := map[string]int64{}
	var names []string
	for _, s := range p.Sample {
		names = names[:0]
		for i := len(s.Location) - 1; i >= 0; i-- {
			l := s.Location[i]
			for j := len(l.Line) - 1; j >= 0; j-- {
				n := l.Line[j].Function.Name
				if l.Line[j].Function.SystemName == "" {
					n = noSymbol
				}
				if moduleBang && l.Mapping != nil {
					n = l.Mapping.File + "!" + n
				}
				names = append(names, n)
			}
		}
		out[strings.Join(names, ";")] += s.Value[idx]
	}
	return out
}

// noSymbol stands for a frame printed without a symbol (`addr  (dso)`).
// stackcollapse-perf.pl names such a frame by the whitespace its regex
// captures (a blank frame, which ParseFolded would reject); Parse names it
// `[dso basename]` like an `[unknown]` symbol and keeps SystemName "". Both
// sides map it to this marker.
const noSymbol = "<no symbol>"

// markBlankFrames replaces blank frames of folded lines by noSymbol.
func markBlankFrames(data []byte) []byte {
	lines := strings.Split(string(data), "\n")
	for i, line := range lines {
		j := strings.LastIndexAny(line, " \t")
		if j < 0 {
			continue
		}
		frames := strings.Split(line[:j], ";")
		for k, f := range frames {
			if strings.TrimSpace(f) == "" {
				frames[k] = noSymbol
			}
		}
		lines[i] = strings.Join(frames, ";") + line[j:]
	}
	return []byte(strings.Join(lines, "\n"))
}

// annotRE matches the annotations stackcollapse-perf.pl --all appends to
// kernel (_[k]), JIT (_[j]) and inlined (_[i]) frames; Parse keeps that
// information in the mapping instead.
var annotRE = regexp.MustCompile(`_\[[kji]\]$`)

func stripAnnotations(m map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range m {
		f := strings.Split(k, ";")
		for i := range f {
			f[i] = annotRE.ReplaceAllString(f[i], "")
		}
		out[strings.Join(f, ";")] += v
	}
	return out
}

// TestCollapsedTwins checks the acceptance criterion: each perf script file
// in flamegraph/ and its `-collapsed-all` twin (stackcollapse-perf.pl --all
// output) hold the same stacks with the same weights.
//
// stackcollapse-perf.pl only records a sample at a blank line, so a file that
// does not end with one loses its last sample there; Parse keeps it. The test
// compares the file cut after its last blank line (and checks that the full
// parse adds exactly that one sample).
func TestCollapsedTwins(t *testing.T) {
	dir := corpusDir(t)
	twins, _ := filepath.Glob(filepath.Join(dir, "flamegraph", "test__results__perf-*-collapsed-all.txt"))
	if len(twins) == 0 {
		t.Skip("no collapsed-all twins")
	}
	for _, twin := range twins {
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(twin), "test__results__"), "-collapsed-all.txt")
		src := filepath.Join(dir, "flamegraph", "test__"+base+".txt")
		if _, err := os.Stat(src); err != nil {
			continue
		}
		t.Run(base, func(t *testing.T) {
			text := readText(t, src)
			full, _, err := perfscript.Parse(text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			cut := text
			if !strings.HasSuffix(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
				if i := strings.LastIndex(text, "\n\n"); i >= 0 {
					cut = text[:i+2]
				}
			}
			p, _, err := perfscript.Parse(cut)
			if err != nil {
				t.Fatalf("Parse (cut): %v", err)
			}
			tdata, err := os.ReadFile(twin)
			if err != nil {
				t.Fatal(err)
			}
			tp, twarns, err := profile.ParseFolded(markBlankFrames(tdata))
			if err != nil {
				t.Fatalf("ParseFolded(twin): %v", err)
			}
			if len(twarns) > 0 {
				t.Errorf("ParseFolded(twin) warnings: %v", twarns)
			}
			// stackcollapse-perf.pl keeps the first event only: compare it.
			idx := 0
			if p.DefaultSampleType != p.SampleType[0].Type {
				t.Fatalf("DefaultSampleType %q is not the first type %q", p.DefaultSampleType, p.SampleType[0].Type)
			}
			got := stacks(p, idx, false)
			want := stripAnnotations(stacks(tp, 0, true))
			var gotTotal, wantTotal, matched int64
			for _, v := range got {
				gotTotal += v
			}
			for k, v := range want {
				wantTotal += v
				matched += min(v, got[k])
			}
			if gotTotal != wantTotal {
				t.Errorf("total weight %d, twin %d", gotTotal, wantTotal)
			}
			pct := 100 * float64(matched) / float64(max(wantTotal, 1))
			t.Logf("%s: %d stacks, twin %d; total %d; %.2f%% of weight matches stack-for-stack", base, len(got), len(want), wantTotal, pct)
			if pct < 99 {
				t.Errorf("only %.2f%% of the weight matches", pct)
			}
			if pct < 100 || gotTotal != wantTotal {
				diffReport(t, got, want)
			}
			// The full parse differs from the cut one by the last sample only.
			if cut != text {
				var fullTotal int64
				for _, v := range stacks(full, idx, false) {
					fullTotal += v
				}
				if extra := fullTotal - gotTotal; extra <= 0 {
					t.Errorf("full parse total %d, cut %d: the last sample should add weight", fullTotal, gotTotal)
				} else {
					t.Logf("file has no final blank line: the full parse adds the last sample (weight %d) that stackcollapse-perf.pl drops", extra)
				}
			}
		})
	}
}

func diffReport(t *testing.T, got, want map[string]int64) {
	var lines []string
	for k, v := range want {
		if got[k] != v {
			lines = append(lines, fmt.Sprintf("  twin %d, parsed %d: %s", v, got[k], k))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, fmt.Sprintf("  twin 0, parsed %d: %s", v, k))
		}
	}
	sort.Strings(lines)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("  ... %d more", len(lines)-20))
	}
	t.Logf("residual differences:\n%s", strings.Join(lines, "\n"))
}

// labelCommRoots gives each sample of a -collapsed-all twin the comm label
// the perf script text gives it: stackcollapse-perf.pl writes the comm as
// every stack's root frame, so the root's name is the comm (with spaces as
// `_`). Both sides then tell the classifier the same facts, and a comm
// root (a process named sleep) decides no bucket on either side.
func labelCommRoots(p *pprofile.Profile) {
	for _, s := range p.Sample {
		if n := len(s.Location); n > 0 && len(s.Location[n-1].Line) == 1 && s.Location[n-1].Line[0].Function != nil {
			if s.Label == nil {
				s.Label = map[string][]string{}
			}
			s.Label["comm"] = []string{s.Location[n-1].Line[0].Function.Name}
		}
	}
}

// TestCommRootFrame holds the reader to what the classifier relies on (a
// comm decides no bucket): in every perf script text of the corpus, each
// sample's root frame is its comm label, spaces turned into `_`, and the
// frame's system name is the comm as perf printed it.
func TestCommRootFrame(t *testing.T) {
	dir := corpusDir(t)
	checked := 0
	for file, format := range corpusFiles(t, dir, "flamegraph", "perfview") {
		if format != "perf-script-text" {
			continue
		}
		p, _, err := perfscript.Parse(readText(t, filepath.Join(dir, file)))
		if err != nil {
			continue // TestCorpusParses reports what does not parse
		}
		for _, s := range p.Sample {
			comm := s.Label["comm"]
			if len(comm) != 1 || comm[0] == "" {
				continue
			}
			root := s.Location[len(s.Location)-1].Line
			if len(root) != 1 || root[0].Function.Name != strings.ReplaceAll(comm[0], " ", "_") || root[0].Function.SystemName != comm[0] {
				t.Fatalf("%s: a sample of comm %q has root frame %+v", file, comm[0], root)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no sample with a comm in the corpus's perf script texts")
	}
	t.Logf("%d samples: the root frame is the comm", checked)
}

// TestCollapsedTwinsDiffToNothing is `profdiff diff perf.txt twin.txt` on
// every perf-script file of the corpus and its -collapsed-all twin, through
// the loader and the diff engine: nothing moves, except by the one sample
// stackcollapse-perf.pl drops when a file does not end in a blank line, and
// by the frames it leaves blank (an address without a symbol, which the
// perf script reader names after its dso and the folded reader [blank]):
// the sum of |Δ| is at most twice the weight the twin lacks, as a share, and
// for methods twice the weight of its stacks with a blank frame besides.
func TestCollapsedTwinsDiffToNothing(t *testing.T) {
	dir := corpusDir(t)
	twins, _ := filepath.Glob(filepath.Join(dir, "flamegraph", "test__results__perf-*-collapsed-all.txt"))
	if len(twins) == 0 {
		t.Skip("no collapsed-all twins")
	}
	ctx := context.Background()
	for _, twin := range twins {
		base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(twin), "test__results__"), "-collapsed-all.txt")
		src := filepath.Join(dir, "flamegraph", "test__"+base+".txt")
		if _, err := os.Stat(src); err != nil {
			continue
		}
		t.Run(base, func(t *testing.T) {
			a := diff.NewAnalyzer(diff.Options{Top: -1})
			var totals [2]int64
			var blank int64 // the twin's weight in stacks with a [blank] frame
			for side, path := range []string{src, twin} {
				l, err := profile.Load(ctx, path, profile.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if want := []profile.Format{profile.FormatPerfScript, profile.FormatFolded}[side]; l.Format != want {
					t.Fatalf("%s loaded as %s, want %s", path, l.Format, want)
				}
				for _, s := range l.Profile.Sample {
					totals[side] += s.Value[0]
					for _, loc := range s.Location {
						if side == 1 && loc.Line[0].Function.Name == "[blank]" {
							blank += s.Value[0]
							break
						}
					}
				}
				if side == 1 {
					labelCommRoots(l.Profile)
				}
				if err := a.Add(result.Side(side), l); err != nil {
					t.Fatal(err)
				}
			}
			r := a.Diff()
			var buckets, methods float64
			for _, b := range r.Buckets {
				buckets += math.Abs(b.Delta)
			}
			for _, m := range r.Methods {
				methods += math.Abs(m.Delta)
			}
			if totals[0] < totals[1] {
				t.Fatalf("perf script total %d below its twin's %d", totals[0], totals[1])
			}
			limit := 2*float64(totals[0]-totals[1])/float64(totals[0]) + 1e-9
			methodLimit := limit + 2*float64(blank)/float64(totals[0])
			t.Logf("%s: Σ|Δ| buckets %.4f, methods %.4f (limits %.4f, %.4f)", base, buckets, methods, limit, methodLimit)
			if buckets > limit || methods > methodLimit {
				t.Errorf("the twins differ by more than one sample and the blank frames: Σ|Δ| buckets %.4f, methods %.4f, limits %.4f, %.4f", buckets, methods, limit, methodLimit)
			}
		})
	}
}

// TestCommDecidesNoBucket loads the corpus's page-fault recording in which
// a process is named sleep: its comm root frame `sleep` (which the wait
// rule `^_*u?sleep$` names) decides no bucket, so none of its samples is
// wait (its frames are the dynamic loader's and execve's: cpu).
func TestCommDecidesNoBucket(t *testing.T) {
	path := filepath.Join(corpusDir(t), "flamegraph", "test__perf-java-faults-01.txt")
	if _, err := os.Stat(path); err != nil {
		t.Skip("the corpus has no test__perf-java-faults-01.txt")
	}
	l, err := profile.Load(context.Background(), path, profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := diff.NewAnalyzer(diff.Options{Top: -1})
	var sleep, wait float64
	a.OnSample(func(s *diff.Sample) {
		if a.MethodName(s.Stack[len(s.Stack)-1]) == "sleep" {
			sleep += s.Value
			if s.Bucket == rules.Wait {
				wait += s.Value
			}
		}
	})
	if err := a.Add(result.Base, l); err != nil {
		t.Fatal(err)
	}
	t.Logf("comm sleep: %.0f of %.0f page faults wait", wait, sleep)
	if sleep == 0 || wait != 0 {
		t.Errorf("the process named sleep has %.0f of %.0f page faults in wait, want none", wait, sleep)
	}
}
