package profile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	pprofile "github.com/google/pprof/profile"

	"github.com/profdiff/profdiff/profile/internal/corpus"
	"github.com/profdiff/profdiff/profile/perfscript"
	"github.com/profdiff/profdiff/symbolize"
)

// corpusDir is the shared corpus folder; the test skips when it is absent.
func corpusDir(t *testing.T) string {
	t.Helper()
	return corpus.Need(t)
}

type corpusEntry struct {
	file, format, runtime, kind, origPath string
}

func readCorpusIndex(t *testing.T, dir string) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	header := true
	for sc.Scan() {
		if header {
			header = false
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 7 || cols[0] == "" {
			continue
		}
		out = append(out, corpusEntry{file: cols[0], format: cols[1], runtime: cols[2], kind: cols[3], origPath: cols[6]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// corpusLoads lists the index formats profdiff reads; every other format
// must fail with an "unknown format" error.
var corpusLoads = map[string]bool{
	"pprof-protobuf":          true,
	"pprof-legacy-binary":     true,
	"pprof-legacy-text":       true,
	"folded-stacks":           true,
	"go-exec-trace-binary":    true,
	"speedscope-json":         true,
	"perf-script-text":        true,
	"text-other":              true, // the one such file is perf script text
	"dotnet-nettrace":         true,
	"jfr":                     true,
	"chrome-trace-event-json": true,
	"chrome-cpuprofile-json":  true,
	"callgrind":               true,
	"ruby-stackprof-json":     true,
	"firefox-legacy-json":     true,
}

// corpusFormats maps a supported index format to profdiff's Loaded.Format
// and to what the errors of its broken files must name.
var corpusFormats = map[string]struct {
	format Format
	name   string
}{
	"folded-stacks":           {"folded", ""},
	"pprof-legacy-binary":     {"pprof-legacy", ""},
	"pprof-legacy-text":       {"pprof-legacy", ""},
	"go-exec-trace-binary":    {"go-trace", "Go execution trace"},
	"speedscope-json":         {"speedscope", "speedscope JSON"},
	"perf-script-text":        {"perf-script", "perf script"},
	"text-other":              {"perf-script", "perf script"},
	"dotnet-nettrace":         {"nettrace", ".NET EventPipe trace (.nettrace)"},
	"jfr":                     {"jfr", "Java Flight Recorder"},
	"chrome-trace-event-json": {"chrome-trace", "Chrome trace-event JSON"},
	"chrome-cpuprofile-json":  {"v8-cpuprofile", "V8 CPU profile"},
	"callgrind":               {"callgrind", "callgrind profile"},
	"ruby-stackprof-json":     {"stackprof", "stackprof"},
	"firefox-legacy-json":     {"gecko", "Gecko profile"},
}

// corpusNames maps an unsupported index format to what its error must name.
var corpusNames = map[string]string{
	"chrome-heapprofile-json": "JSON",
	"ghc-prof-json":           "JSON",
	"perf-script-text":        "perf script",
	"go-exec-trace-binary":    "Go execution trace",
	"go-exec-trace-text":      "Go execution trace",
	"dotnet-nettrace":         ".NET EventPipe trace",
	"v8-log-text":             "V8 --prof log (isolate-*.log of `node --prof`), raw ticks that only V8 can resolve (record with `node --cpu-prof` instead",
}

// corpusKinds maps the index's kind column to the kind DetectKind must find
// in profiles that load.
var corpusKinds = map[string][]Kind{
	"cpu":                       {KindCPU},
	"cpu (sampled)":             {KindUnknown, KindCPU}, // folded stacks say nothing; perf script names its event
	"page faults":               {KindUnknown},
	"heap/alloc":                {KindHeap},
	"contention":                {KindMutex, KindBlock},
	"threads":                   {KindGoroutine},
	"wall (fgprof: on+off CPU)": {KindWall},
	"execution trace":           {KindTrace},
	"EventPipe trace (cpu samples + runtime events)": {KindWall},
}

// misfiled maps corpus files whose index format is wrong to their real one:
// node 10's example.cpuprofile is listed as a heap profile but is a CPU
// profile of the older shape (a head tree, samples and timestamps).
var misfiled = map[string]string{
	"speedscope/sample__profiles__node__10.11.0__example.cpuprofile": "chrome-cpuprofile-json",
}

// baseFormatOf is baseFormat of e's format, corrected for misfiled files.
func baseFormatOf(e corpusEntry) string {
	if f, ok := misfiled[e.file]; ok {
		return f
	}
	return baseFormat(e.format)
}

// baseFormat strips the index's annotations: "dotnet-nettrace (zip)" is a
// dotnet-nettrace.
func baseFormat(f string) string {
	if i := strings.Index(f, " ("); i > 0 {
		return f[:i]
	}
	return f
}

// mustFailInCorpus lists the files that must not load: invalid speedscope
// files, the two traces the Go team wrote to fail parsing, and two valid
// traces without a single goroutine (nothing to compare; `go tool trace
// -pprof` fails on them too).
func mustFailInCorpus(e corpusEntry) bool {
	return strings.Contains(e.origPath, "speedscope/invalid/") ||
		// PerfView's parser tests: events, but no SampleProfiler samples.
		strings.Contains(e.file, "dotnetcore5.0-win-x64-arraytypes") ||
		strings.Contains(e.file, "dotnetcore6.0-win-x64-executioncheckpoints") ||
		strings.Contains(e.file, "go122-create-syscall-with-p") ||
		strings.Contains(e.file, "go122-fail-first-gen-first") ||
		baseFormat(e.format) == "go-exec-trace-binary" && (strings.Contains(e.file, "go123-sync.") || strings.Contains(e.file, "go125-sync."))
}

// traceFailure is what a trace that must fail says: why, not "unknown
// format".
func traceFailure(e corpusEntry, msg string) bool {
	if baseFormat(e.format) != "go-exec-trace-binary" {
		return false
	}
	if strings.Contains(e.file, "-sync.") {
		return strings.Contains(msg, "holds no goroutine time")
	}
	// fail-first-gen-first's last batch runs past its end: the cut is
	// named first (gotrace's TestCorpus checks the wording).
	return (strings.Contains(msg, "corrupt Go execution trace (go 1.22) after ") || strings.Contains(msg, "Go execution trace (go 1.22) cut short: ")) &&
		strings.Contains(msg, "expected a proc but didn't have one")
}

// TestCorpus loads every file of the shared corpus: supported formats must
// load into valid profiles of the expected kind, everything else must fail
// with a one-line *Error that names the file and says the format is unknown.
// Nothing may panic.
func TestCorpus(t *testing.T) {
	dir := corpusDir(t)
	if dir == "" {
		t.Skip("../shared/corpus not found")
	}
	entries := readCorpusIndex(t, dir)
	if len(entries) == 0 {
		t.Fatal("index.tsv lists no files")
	}
	type counts struct{ loaded, failed int }
	summary := map[string]*counts{}
	var heapSeries []*pprofile.Profile
	for _, e := range entries {
		format := baseFormatOf(e)
		c := summary[e.format]
		if c == nil {
			c = &counts{}
			summary[e.format] = c
		}
		path := filepath.Join(dir, filepath.FromSlash(e.file))
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s: listed in index.tsv but %v", e.file, err)
			continue
		}
		l, err := loadRecovered(path, Options{})
		if err != nil {
			c.failed++
			var pe *Error
			msg := err.Error()
			switch {
			case strings.HasPrefix(msg, "panic:"):
				t.Errorf("%s: %s", e.file, msg)
				continue
			case !errors.As(err, &pe):
				t.Errorf("%s: error %q is a %T, not a *profile.Error", e.file, msg, err)
			case pe.Source != path || !strings.HasPrefix(msg, path+": "):
				t.Errorf("%s: error %q does not name the file", e.file, msg)
			}
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("%s: error spans lines: %q", e.file, msg)
			}
			if corpusLoads[format] && !mustFailInCorpus(e) {
				t.Errorf("%s (%s): %v", e.file, e.format, err)
				continue
			}
			if format == "go-exec-trace-binary" {
				if !traceFailure(e, msg) {
					t.Errorf("%s (%s): unexpected error: %v", e.file, e.format, err)
				}
				continue
			}
			if corpusLoads[format] {
				// A broken file of a format profdiff reads: the error says
				// what is wrong in that format's terms.
				if want := corpusFormats[format].name; want != "" && !strings.Contains(msg, want) {
					t.Errorf("%s (%s): error does not name %q: %v", e.file, e.format, want, err)
				}
				continue
			}
			if !strings.Contains(msg, "unknown format") && !strings.Contains(msg, "unknown binary format") {
				t.Errorf("%s (%s): error does not say the format is unknown: %v", e.file, e.format, err)
			}
			if want := corpusNames[format]; want != "" && !strings.Contains(msg, want) {
				t.Errorf("%s (%s): error does not name %q: %v", e.file, e.format, want, err)
			}
			if testing.Verbose() {
				t.Logf("%-28s %s", e.format, strings.TrimPrefix(msg, dir+string(filepath.Separator)))
			}
			continue
		}
		c.loaded++
		switch {
		case mustFailInCorpus(e):
			t.Errorf("%s: meant to fail, loaded as %s (%d samples)", e.file, l.Format, len(l.Profile.Sample))
			continue
		case !corpusLoads[format]:
			t.Errorf("%s: %s is not supported, yet it loaded as %s (%d samples, warnings %q)", e.file, e.format, l.Format, len(l.Profile.Sample), l.Warnings)
			continue
		}
		checkCorpusProfile(t, e, path, l)
		if strings.Contains(e.file, "pkg__query__testdata__many__") {
			heapSeries = append(heapSeries, l.Profile)
		}
	}

	// The heap series of one process diffs cleanly, first against last.
	if n := len(heapSeries); n >= 2 {
		d, err := DiffProfile(heapSeries[:1], []int{1}, heapSeries[n-1:], []int{1})
		if err != nil {
			t.Errorf("diff of the parca heap series: %v", err)
		} else if err := d.CheckValid(); err != nil {
			t.Errorf("diff of the parca heap series: %v", err)
		}
	}

	formats := make([]string, 0, len(summary))
	for f := range summary {
		formats = append(formats, f)
	}
	sort.Strings(formats)
	var b strings.Builder
	fmt.Fprintf(&b, "%-45s %6s %6s\n", "format", "loaded", "failed")
	var tl, tf int
	for _, f := range formats {
		c := summary[f]
		fmt.Fprintf(&b, "%-45s %6d %6d\n", f, c.loaded, c.failed)
		tl += c.loaded
		tf += c.failed
	}
	fmt.Fprintf(&b, "%-45s %6d %6d", "total", tl, tf)
	t.Logf("corpus %s:\n%s", dir, b.String())
}

// loadRecovered loads path, turning a panic into an error starting "panic:".
func loadRecovered(path string, opts Options) (l *Loaded, err error) {
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return Load(context.Background(), path, opts)
}

func checkCorpusProfile(t *testing.T, e corpusEntry, path string, l *Loaded) {
	t.Helper()
	p := l.Profile
	if err := p.CheckValid(); err != nil {
		t.Errorf("%s: CheckValid: %v", e.file, err)
	}
	if len(p.Sample) == 0 {
		t.Errorf("%s: no samples", e.file)
	}
	format := baseFormatOf(e)
	if want, ok := corpusFormats[format]; ok && l.Format != want.format ||
		format == "pprof-protobuf" && !strings.HasPrefix(string(l.Format), "pprof") {
		t.Errorf("%s (%s): loaded as %s", e.file, e.format, l.Format)
	}
	if e.kind == "cpu (sampled)" {
		// Folded stacks say nothing; perf script names its event (PerfView's
		// test dumps use a placeholder event name).
		want := KindUnknown
		if l.Format == "perf-script" && perfscript.OnCPUEvent(p.PeriodType.Type) {
			want = KindCPU
		}
		if l.Kind != want {
			t.Errorf("%s (%s, %s): kind %q, want %q", e.file, e.kind, l.Format, l.Kind, want)
		}
	}
	if kinds, ok := corpusKinds[e.kind]; ok {
		found := false
		for _, k := range kinds {
			found = found || l.Kind == k
		}
		if !found {
			t.Errorf("%s (%s): kind %q, want one of %q", e.file, e.kind, l.Kind, kinds)
		}
	}
	for _, w := range l.Warnings {
		if !strings.HasPrefix(w, path+": ") || strings.ContainsAny(w, "\r\n") {
			t.Errorf("%s: malformed warning %q", e.file, w)
		}
	}
	// Every location shows as at least one named frame: a function name or,
	// unsymbolized, its address.
	var frames []symbolize.Frame
	for _, loc := range p.Location {
		frames = symbolize.LocationFrames(frames[:0], loc)
		if len(frames) == 0 || frames[0].Name == "" {
			t.Errorf("%s: location %d has no frame name", e.file, loc.ID)
			break
		}
	}
	// The loaded profile survives a write and a reload.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Errorf("%s: Write: %v", e.file, err)
		return
	}
	back, err := Parse(path, buf.Bytes(), 0)
	if err != nil {
		t.Errorf("%s: reloading the written profile: %v", e.file, err)
	} else if len(back.Profile.Sample) != len(p.Sample) || back.Kind != l.Kind {
		t.Errorf("%s: reloaded %d samples of kind %s, want %d of %s", e.file, len(back.Profile.Sample), back.Kind, len(p.Sample), l.Kind)
	}
}

// TestCorpusCutShort cuts files of the corpus that load (three of each
// format, their content after any gzip layer) in half: each still loads,
// or fails as a broken file of its format (ErrCorrupt or ErrEmpty, one
// line naming the file), never as an unknown format. A recording cut
// short, as a killed profiler leaves it, is a file of its format.
func TestCorpusCutShort(t *testing.T) {
	dir := corpusDir(t)
	if dir == "" {
		t.Skip("../shared/corpus not found")
	}
	perFormat := map[string]int{}
	for _, e := range readCorpusIndex(t, dir) {
		format := baseFormatOf(e)
		if !corpusLoads[format] || mustFailInCorpus(e) || perFormat[format] == 3 {
			continue
		}
		perFormat[format]++
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.file)))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = Decompress(data, 0); err != nil {
			t.Fatalf("%s: %v", e.file, err)
		}
		name := filepath.Base(e.file) + ".cut"
		_, err = Parse(name, data[:len(data)/2], 0)
		if err == nil {
			continue
		}
		msg := err.Error()
		var pe *Error
		switch {
		case !errors.As(err, &pe) || !strings.HasPrefix(msg, name+": ") || strings.ContainsAny(msg, "\r\n"):
			t.Errorf("%s cut in half: not a one-line error naming the file: %q", e.file, msg)
		case !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrEmpty):
			t.Errorf("%s (%s) cut in half: %v; want a broken file of its format (ErrCorrupt or ErrEmpty)", e.file, format, err)
		case strings.Contains(msg, "unknown format") || strings.Contains(msg, "unknown binary format"):
			t.Errorf("%s (%s) cut in half: %v", e.file, format, err)
		}
	}
	if len(perFormat) < 10 {
		t.Errorf("only %d formats of the corpus were cut", len(perFormat))
	}
}
